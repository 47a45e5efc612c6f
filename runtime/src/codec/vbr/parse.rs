//! [`VbrClip::parse`]: the complete validation of a blob. After it, every
//! offset the decoder derives is in bounds.

use super::format::*;
use super::simd::read_u32;
use super::VbrClip;
use crate::codec::CodecError;

fn truncated(what: &'static str) -> CodecError {
    CodecError::Truncated { what }
}
fn invalid(what: &'static str) -> CodecError {
    CodecError::Invalid { what }
}
impl<'a> VbrClip<'a> {
    /// Validate `blob` completely. Any byte string gives a valid view or a
    /// typed error; nothing here or in decoding can panic or read out of
    /// bounds afterwards. Does not allocate.
    pub fn parse(
        blob: &'a [u8],
        joint_count: usize,
        num_samples: u32,
    ) -> Result<VbrClip<'a>, CodecError> {
        if blob.len() < HEADER_BYTES {
            return Err(truncated("vbr header"));
        }
        let jc = read_u32(blob, 0) as usize;
        let ns = read_u32(blob, 4);
        let animated = read_u32(blob, 8) as usize;
        let segments = read_u32(blob, 12);
        if jc != joint_count {
            return Err(invalid("vbr joint count differs from the skeleton"));
        }
        if ns != num_samples {
            return Err(invalid("vbr sample count differs from the clip"));
        }
        if ns == 0 {
            return Err(invalid("vbr clip has no samples"));
        }
        let mut at = HEADER_BYTES;
        let types = blob
            .get(at..at.checked_add(jc).ok_or(invalid("vbr size overflows"))?)
            .ok_or(truncated("vbr track types"))?;
        at += jc;
        // Count constants, animated tracks and clip range bytes.
        let mut constant_bytes = 0usize;
        let mut anim_count = 0usize;
        let mut range_bytes = 0usize;
        for &t in types {
            if t >> 6 != 0 {
                return Err(invalid("vbr type byte has reserved bits set"));
            }
            for k in 0..3 {
                let kind = (t >> (2 * k)) & 3;
                match kind {
                    KIND_DEFAULT => {}
                    KIND_CONSTANT => constant_bytes += 12,
                    KIND_ANIMATED => {
                        anim_count += 1;
                        range_bytes += if k == 0 {
                            ROTATION_CLIP_RANGE_BYTES
                        } else {
                            VECTOR_CLIP_RANGE_BYTES
                        };
                    }
                    _ => {
                        if k != 0 {
                            return Err(invalid("vbr full constant on a non-rotation track"));
                        }
                        constant_bytes += 16;
                    }
                }
            }
        }
        if anim_count != animated {
            return Err(invalid(
                "vbr animated track count differs from the type bytes",
            ));
        }
        if (animated == 0) != (segments == 0) {
            return Err(invalid(
                "vbr segment count inconsistent with animated tracks",
            ));
        }
        if segments > ns {
            return Err(invalid("vbr has more segments than samples"));
        }
        let end = at
            .checked_add(constant_bytes)
            .ok_or(invalid("vbr size overflows"))?;
        let constants = blob.get(at..end).ok_or(truncated("vbr constants"))?;
        at = end;
        for c in constants.chunks_exact(4) {
            if !f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite() {
                return Err(invalid("vbr constant is not finite"));
            }
        }
        let end = at
            .checked_add(range_bytes)
            .ok_or(invalid("vbr size overflows"))?;
        let ranges = blob.get(at..end).ok_or(truncated("vbr clip ranges"))?;
        at = end;
        // Vector clip ranges are f32 and must be finite (16-bit rotation
        // codes are always valid).
        let mut r = 0usize;
        for &t in types {
            for k in 0..3 {
                if (t >> (2 * k)) & 3 != KIND_ANIMATED {
                    continue;
                }
                if k == 0 {
                    r += ROTATION_CLIP_RANGE_BYTES;
                    continue;
                }
                let entry = ranges
                    .get(r..r + VECTOR_CLIP_RANGE_BYTES)
                    .ok_or(truncated("vbr clip ranges"))?;
                for c in entry.chunks_exact(4) {
                    if !f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite() {
                        return Err(invalid("vbr clip range is not finite"));
                    }
                }
                r += VECTOR_CLIP_RANGE_BYTES;
            }
        }
        let end = (segments as usize)
            .checked_mul(SEGMENT_ENTRY_BYTES)
            .and_then(|n| n.checked_add(at))
            .ok_or(invalid("vbr size overflows"))?;
        let table = blob.get(at..end).ok_or(truncated("vbr segment table"))?;
        at = end;
        let data = blob.get(at..).unwrap_or(&[]);

        let seg_len = ns.checked_div(segments).unwrap_or(0);
        let seg_long = ns.checked_rem(segments).unwrap_or(0);
        // Walk the segments: offsets must be contiguous, rate bytes valid
        // and the declared sample bits equal to what the ids imply.
        let mut off = 0usize;
        for s in 0..segments {
            let e = s as usize * SEGMENT_ENTRY_BYTES;
            let block = read_u32(table, e) as usize;
            let sample_bits = read_u32(table, e + 4) as usize;
            if block != off {
                return Err(invalid("vbr segment offset is not contiguous"));
            }
            let rates_end = block
                .checked_add(animated)
                .ok_or(invalid("vbr size overflows"))?;
            let rates = data
                .get(block..rates_end)
                .ok_or(truncated("vbr segment rates"))?;
            let mut bits = 0usize;
            let mut ranged = 0usize;
            let mut track = 0usize;
            for &t in types {
                for k in 0..3 {
                    if (t >> (2 * k)) & 3 == KIND_ANIMATED {
                        let r = rates[track];
                        if !rate_is_valid(r) {
                            return Err(invalid("vbr rate byte invalid"));
                        }
                        bits += track_sample_bits(r, k == 0) as usize;
                        ranged += usize::from(has_segment_range(r));
                        track += 1;
                    }
                }
            }
            if bits != sample_bits {
                return Err(invalid("vbr segment sample bits differ from its rates"));
            }
            let n = (seg_len + u32::from(s < seg_long)) as usize;
            let sample_bytes = n
                .checked_mul(sample_bits)
                .map(|b| b.div_ceil(8))
                .ok_or(invalid("vbr size overflows"))?;
            off = ranged
                .checked_mul(SEGMENT_RANGE_BYTES)
                .and_then(|h| h.checked_add(rates_end))
                .and_then(|h| h.checked_add(sample_bytes))
                .ok_or(invalid("vbr size overflows"))?;
            if off > data.len() {
                return Err(truncated("vbr segment data"));
            }
        }
        let total = off
            .checked_add(PADDING_BYTES)
            .ok_or(invalid("vbr size overflows"))?;
        if data.len() < total {
            return Err(truncated("vbr padding"));
        }
        if data.len() > total {
            return Err(invalid("vbr blob has trailing bytes"));
        }
        Ok(VbrClip {
            types,
            constants,
            ranges,
            table,
            data,
            joint_count: jc,
            num_samples: ns,
            animated,
            segments,
            seg_len,
            seg_long,
        })
    }
}
