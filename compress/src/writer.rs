//! Serialization in the layout of `schemas/codec-vbr.md` (little-endian).

use crate::classify::{Plan, Track};
use crate::prep::Prep;
use crate::quantize::{quantize, seg_range};
use crate::search::Segment;
use crate::verify::ErrorReport;
use crate::{EncodeError, EncodeStats};
use ludus_anim_runtime::codec::vbr::format::{
    has_segment_range, rate_id, track_sample_bits, HEADER_BYTES, KIND_ANIMATED, KIND_CONSTANT,
    KIND_CONSTANT_FULL, KIND_DEFAULT, PADDING_BYTES, RATE_BITS, RATE_CONSTANT, RATE_RAW,
    ROTATION_CLIP_RANGE_BYTES, SEGMENT_ENTRY_BYTES, SEGMENT_RANGE_BYTES, VECTOR_CLIP_RANGE_BYTES,
};

/// Appends values LSB-first to a little-endian bit stream.
struct BitWriter {
    bytes: Vec<u8>,
    bit: usize,
}

impl BitWriter {
    fn put(&mut self, mut v: u64, mut width: u32) {
        while width > 0 {
            let byte = self.bit / 8;
            if byte == self.bytes.len() {
                self.bytes.push(0);
            }
            let shift = (self.bit % 8) as u32;
            let take = (8 - shift).min(width);
            let mask = (1u64 << take) - 1;
            self.bytes[byte] |= ((v & mask) as u8) << shift;
            v >>= take;
            width -= take;
            self.bit += take as usize;
        }
    }
}

fn u32_of(v: usize) -> Result<u32, EncodeError> {
    u32::try_from(v).map_err(|_| EncodeError::TooLarge)
}

pub(crate) fn write(
    prep: &Prep,
    plan: &Plan,
    segments: &[Segment],
    rates: &[Vec<u8>],
) -> Result<Vec<u8>, EncodeError> {
    let a_count = plan.anim.len();
    let seg_count = if a_count == 0 { 0 } else { segments.len() };
    let mut b = Vec::new();
    for v in [prep.j, prep.n, a_count, seg_count] {
        b.extend_from_slice(&u32_of(v)?.to_le_bytes());
    }
    for tracks in &plan.tracks {
        let mut byte = 0u8;
        for (k, t) in tracks.iter().enumerate() {
            let kind = match t {
                Track::Default => KIND_DEFAULT,
                Track::Constant(_) => KIND_CONSTANT,
                Track::ConstantFull(_) => KIND_CONSTANT_FULL,
                Track::Animated(_) => KIND_ANIMATED,
            };
            byte |= kind << (2 * k);
        }
        b.push(byte);
    }
    for tracks in &plan.tracks {
        for t in tracks {
            match t {
                Track::Constant(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
                Track::ConstantFull(v) => {
                    v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes()))
                }
                _ => {}
            }
        }
    }
    for t in &plan.anim {
        if t.is_rotation() {
            for x in t.rot_codes {
                b.extend_from_slice(&x.to_le_bytes());
            }
        } else {
            for x in t.clip_min.iter().chain(t.clip_ext.iter()) {
                b.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    if seg_count == 0 {
        b.extend_from_slice(&[0; PADDING_BYTES]);
        return Ok(b);
    }
    // Segment blocks first (into their own buffer), then the table.
    let mut data = Vec::new();
    let mut table = Vec::with_capacity(seg_count * 8);
    for (seg, seg_rates) in segments.iter().zip(rates) {
        let sample_bits: usize = plan
            .anim
            .iter()
            .zip(seg_rates)
            .map(|(t, &r)| track_sample_bits(r, t.is_rotation()) as usize)
            .sum();
        table.extend_from_slice(&u32_of(data.len())?.to_le_bytes());
        table.extend_from_slice(&u32_of(sample_bits)?.to_le_bytes());
        // Rates, then the sample rows, then the range entries of the
        // tracks that have one.
        data.extend_from_slice(seg_rates);
        let mut ranges = Vec::with_capacity(a_count * SEGMENT_RANGE_BYTES);
        let mut quantized = Vec::with_capacity(a_count);
        for (t, &r) in plan.anim.iter().zip(seg_rates) {
            let sr = seg_range(t, seg.start, seg.end);
            if has_segment_range(r) {
                if r == RATE_CONSTANT {
                    for c in sr.constant {
                        ranges.extend_from_slice(&c.to_le_bytes());
                    }
                } else {
                    ranges.extend_from_slice(&sr.range);
                }
            }
            quantized.push(quantize(t, &sr, seg.start, seg.end, r));
        }
        let mut bw = BitWriter {
            bytes: Vec::new(),
            bit: 0,
        };
        for s in 0..seg.end - seg.start {
            for ((t, &r), q) in plan.anim.iter().zip(seg_rates).zip(&quantized) {
                let v = q.q[s];
                let id = rate_id(r);
                if id == RATE_CONSTANT {
                    continue;
                }
                let (width, comps) = if id == RATE_RAW {
                    (32, if t.is_rotation() { 4 } else { 3 })
                } else {
                    (RATE_BITS[id as usize], 3)
                };
                for &c in v.iter().take(comps) {
                    bw.put(c as u64, width);
                }
            }
        }
        data.extend_from_slice(&bw.bytes);
        data.extend_from_slice(&ranges);
    }
    b.extend_from_slice(&table);
    b.extend_from_slice(&data);
    b.extend_from_slice(&[0; PADDING_BYTES]);
    Ok(b)
}

/// Size in bytes [`write`] would produce, without writing.
pub(crate) fn size(prep: &Prep, plan: &Plan, segments: &[Segment], rates: &[Vec<u8>]) -> usize {
    let a = plan.anim.len();
    let constants: usize = plan
        .tracks
        .iter()
        .flat_map(|t| t.iter())
        .map(|t| match t {
            Track::Constant(_) => 12,
            Track::ConstantFull(_) => 16,
            _ => 0,
        })
        .sum();
    let clip_ranges: usize = plan
        .anim
        .iter()
        .map(|t| {
            if t.is_rotation() {
                ROTATION_CLIP_RANGE_BYTES
            } else {
                VECTOR_CLIP_RANGE_BYTES
            }
        })
        .sum();
    let mut total = HEADER_BYTES + prep.j + constants + clip_ranges + PADDING_BYTES;
    if a > 0 {
        for (seg, seg_rates) in segments.iter().zip(rates) {
            let bits: usize = plan
                .anim
                .iter()
                .zip(seg_rates)
                .map(|(t, &r)| track_sample_bits(r, t.is_rotation()) as usize)
                .sum();
            let ranged = seg_rates.iter().filter(|&&r| has_segment_range(r)).count();
            total += SEGMENT_ENTRY_BYTES
                + a
                + ranged * SEGMENT_RANGE_BYTES
                + ((seg.end - seg.start) * bits).div_ceil(8);
        }
    }
    total
}

pub(crate) fn stats(
    prep: &Prep,
    plan: &Plan,
    segments: &[Segment],
    rates: &[Vec<u8>],
    blob: &[u8],
    report: &ErrorReport,
    fixups: usize,
) -> EncodeStats {
    let mut bits = 0u64;
    let mut comps = 0u64;
    for (seg, seg_rates) in segments.iter().zip(rates) {
        let len = (seg.end - seg.start) as u64;
        for (t, &r) in plan.anim.iter().zip(seg_rates) {
            bits += len * track_sample_bits(r, t.is_rotation()) as u64;
            comps += len
                * if rate_id(r) == RATE_RAW && t.is_rotation() {
                    4
                } else {
                    3
                };
        }
    }
    let _ = prep;
    EncodeStats {
        default_tracks: plan.count(|t| matches!(t, Track::Default)),
        constant_tracks: plan.count(|t| matches!(t, Track::Constant(_) | Track::ConstantFull(_))),
        animated_tracks: plan.anim.len(),
        segment_count: if plan.anim.is_empty() {
            0
        } else {
            segments.len()
        },
        avg_bits_per_animated_component: if comps == 0 {
            0.0
        } else {
            bits as f32 / comps as f32
        },
        max_error_m: report.max_error_m,
        worst_joint: report.worst_joint,
        worst_error_ratio: report.worst_ratio,
        blob_bytes: blob.len(),
        verify_fixups: fixups,
        budget_exhausted_segments: 0,
    }
}
