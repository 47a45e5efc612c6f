//! Test-only reader of the bit rates a cooked package stores, following
//! `schemas/package-format.md` (section table, CLIP records) and
//! `schemas/codec-vbr.md` (track types, segment rate bytes). The runtime
//! keeps these private (it only decodes); the cook will fill the sidecar's
//! bit rates from the encoder instead. Any inconsistency gives `None`.

use ludus_anim_report::packed::Packed;
use ludus_anim_report::sidecar::{BitRates, BITS_CONSTANT, BITS_DEFAULT, BITS_RAW};

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}
fn u64_at(b: &[u8], at: usize) -> Option<usize> {
    usize::try_from(u64::from_le_bytes(b.get(at..at + 8)?.try_into().ok()?)).ok()
}
fn u16_at(b: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_le_bytes(b.get(at..at + 2)?.try_into().ok()?))
}

fn section(pkg: &[u8], fourcc: &[u8; 4]) -> Option<usize> {
    let count = u32_at(pkg, 24)? as usize;
    let want = u32::from_le_bytes(*fourcc);
    (0..count)
        .map(|i| 64 + 24 * i)
        .find(|&e| u32_at(pkg, e) == Some(want))
        .and_then(|e| u64_at(pkg, e + 8))
}

/// Bit rates of every clip, in package order.
pub fn clip_bit_rates(pkg: &[u8], joints: usize) -> Vec<Option<BitRates>> {
    let (Some(clips), Some(data)) = (section(pkg, b"CLIP"), section(pkg, b"DATA")) else {
        return Vec::new();
    };
    let count = u32_at(pkg, clips).unwrap_or(0) as usize;
    (0..count)
        .map(|i| {
            let rec = clips + 16 + 176 * i;
            let codec = u16_at(pkg, rec + 22)?;
            let samples = u32_at(pkg, rec + 16)?;
            let off = data + u64_at(pkg, rec + 32)?;
            let blob = pkg.get(off..off + u64_at(pkg, rec + 40)?)?;
            match codec {
                0 => Some(reference(joints, samples)),
                1 => vbr(blob, joints),
                _ => None,
            }
        })
        .collect()
}

fn reference(joints: usize, samples: u32) -> BitRates {
    BitRates {
        segment_starts: vec![0],
        samples,
        bits: Packed(vec![BITS_RAW; joints * 3]),
    }
}

fn vbr(blob: &[u8], joints: usize) -> Option<BitRates> {
    let (j, n, a, s) = (
        u32_at(blob, 0)? as usize,
        u32_at(blob, 4)?,
        u32_at(blob, 8)? as usize,
        u32_at(blob, 12)? as usize,
    );
    if j != joints {
        return None;
    }
    let types = blob.get(16..16 + j)?;
    let kind = |jj: usize, k: usize| (types[jj] >> (2 * k)) & 3;
    let mut at = 16 + j;
    for jj in 0..j {
        for k in 0..3 {
            at += match kind(jj, k) {
                1 => 12,
                3 => 16,
                _ => 0,
            };
        }
    }
    for jj in 0..j {
        for k in 0..3 {
            if kind(jj, k) == 2 {
                at += if k == 0 { 12 } else { 24 };
            }
        }
    }
    let table = at;
    let blocks = table + 8 * s;
    let segs = s.max(1);
    let mut bits = vec![BITS_DEFAULT; j * 3 * segs];
    for seg in 0..s {
        let rates = blocks + u32_at(blob, table + 8 * seg)? as usize;
        let mut animated = 0;
        for jj in 0..j {
            for k in 0..3 {
                let idx = (jj * 3 + k) * segs + seg;
                bits[idx] = match kind(jj, k) {
                    0 => BITS_DEFAULT,
                    2 => {
                        let id = blob.get(rates + animated)? & 0x1f;
                        animated += 1;
                        match id {
                            0 => 0,
                            18 => BITS_RAW,
                            id => id + 2,
                        }
                    }
                    _ => BITS_CONSTANT,
                };
            }
        }
        if animated != a {
            return None;
        }
    }
    if s == 0 {
        for jj in 0..j {
            for k in 0..3 {
                bits[jj * 3 + k] = if kind(jj, k) == 0 {
                    BITS_DEFAULT
                } else {
                    BITS_CONSTANT
                };
            }
        }
    }
    let (len, long) = (n / segs as u32, n % segs as u32);
    let starts = (0..segs as u32).map(|x| x * len + x.min(long)).collect();
    Some(BitRates {
        segment_starts: starts,
        samples: n,
        bits: Packed(bits),
    })
}
