//! Cook-side reading of a VBR blob's structure (`schemas/codec-vbr.md`):
//! segment count, track kinds and each segment's rate bytes, for reports
//! and dashboards. It trusts nothing and checks only what it reads; the
//! runtime's parser is the validation.

use crate::vbr::{
    rate_id, table_widths, KIND_ANIMATED, KIND_CONSTANT, KIND_DEFAULT, MAX_VARINT_BYTES, RATE_BITS,
    ROTATION_CLIP_RANGE_BYTES, VECTOR_CLIP_RANGE_BYTES,
};

/// The structure of one VBR blob.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout<'a> {
    /// Segments (0 when no track is animated).
    pub segments: u32,
    /// One type byte per joint: two bits per track (rotation, translation,
    /// scale), `KIND_*`.
    pub types: &'a [u8],
    animated: usize,
    table: &'a [u8],
    widths: (usize, usize),
    data: &'a [u8],
}

impl<'a> Layout<'a> {
    /// The structure of `blob` for `joint_count` joints; `None` where a
    /// field it reads is missing or malformed.
    pub fn read(blob: &'a [u8], joint_count: usize) -> Option<Layout<'a>> {
        let mut at = 0;
        let segments = read_varint(blob, &mut at)?;
        let widths = if segments == 0 {
            (0, 0)
        } else {
            at += 1;
            table_widths(*blob.get(at - 1)?)
        };
        let types = blob.get(at..at.checked_add(joint_count)?)?;
        at += joint_count;
        let (constant_bytes, animated, range_bytes) = sizes(types);
        at = at.checked_add(constant_bytes)?.checked_add(range_bytes)?;
        let table_len = (segments as usize).checked_mul(widths.0 + widths.1)?;
        let table = blob.get(at..at.checked_add(table_len)?)?;
        let data = blob.get(at + table_len..)?;
        Some(Layout {
            segments,
            types,
            animated,
            table,
            widths,
            data,
        })
    }

    /// How joint `joint`'s track `k` (0 rotation, 1 translation, 2 scale)
    /// is stored (`KIND_*`); `None` out of range.
    pub fn track_kind(&self, joint: usize, k: usize) -> Option<u8> {
        let t = *self.types.get(joint)?;
        (k < 3).then_some((t >> (2 * k)) & 3)
    }

    /// First sample of segment `s` of a clip of `num_samples` samples:
    /// uniform segments, the leading `num_samples % segments` one sample
    /// longer.
    pub fn segment_start(&self, s: u32, num_samples: u32) -> u32 {
        let len = num_samples.checked_div(self.segments).unwrap_or(0);
        let long = num_samples.checked_rem(self.segments).unwrap_or(0);
        s * len + s.min(long)
    }

    /// Bits per component of animated track `a` (in animated track order)
    /// in segment `s`: 0 segment-constant, 3..=19 quantized, 32 raw f32;
    /// `None` out of range.
    pub fn animated_bits(&self, s: u32, a: usize) -> Option<u8> {
        if s >= self.segments || a >= self.animated {
            return None;
        }
        let (ow, bw) = self.widths;
        let entry = self.table.get(s as usize * (ow + bw)..)?;
        let block = entry
            .get(..ow)?
            .iter()
            .rev()
            .fold(0usize, |v, &b| v << 8 | usize::from(b));
        let rate = *self.data.get(block.checked_add(a)?)?;
        RATE_BITS.get(rate_id(rate) as usize).map(|&b| b as u8)
    }
}

/// (constant bytes, animated tracks, clip range bytes) of the type bytes.
fn sizes(types: &[u8]) -> (usize, usize, usize) {
    let (mut constants, mut animated, mut ranges) = (0, 0, 0);
    for &t in types {
        for k in 0..3 {
            match (t >> (2 * k)) & 3 {
                KIND_DEFAULT => {}
                KIND_CONSTANT => constants += 12,
                KIND_ANIMATED => {
                    animated += 1;
                    ranges += if k == 0 {
                        ROTATION_CLIP_RANGE_BYTES
                    } else {
                        VECTOR_CLIP_RANGE_BYTES
                    };
                }
                _ => constants += 16,
            }
        }
    }
    (constants, animated, ranges)
}

/// The LEB128 segment count at `at` (advanced past it).
fn read_varint(blob: &[u8], at: &mut usize) -> Option<u32> {
    let mut v = 0u64;
    for k in 0..MAX_VARINT_BYTES {
        let b = *blob.get(*at + k)?;
        v |= u64::from(b & 0x7f) << (7 * k);
        if b & 0x80 == 0 {
            *at += k + 1;
            return u32::try_from(v).ok();
        }
    }
    None
}
