//! [`VbrClip::parse`]: the complete validation of a blob. After it, every
//! offset the decoder derives is in bounds.

use super::format::*;
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
    /// bounds afterwards. Does not allocate. The joint and sample counts
    /// are the package's (the blob does not repeat them).
    pub(crate) fn parse(
        blob: &'a [u8],
        joint_count: usize,
        num_samples: u32,
    ) -> Result<VbrClip<'a>, CodecError> {
        if num_samples == 0 {
            return Err(invalid("vbr clip has no samples"));
        }
        let mut at = 0;
        let segments = read_varint(blob, &mut at)?;
        let (off_w, bits_w) = if segments == 0 {
            (0, 0)
        } else {
            let w = *take(blob, &mut at, 1, "vbr width byte")?
                .first()
                .ok_or(truncated("vbr width byte"))?;
            if w & WIDTH_RESERVED != 0 {
                return Err(invalid("vbr width byte has reserved bits set"));
            }
            table_widths(w)
        };
        let types = take(blob, &mut at, joint_count, "vbr track types")?;
        let counts = count_tracks(types)?;
        let animated = counts.animated;
        if (animated == 0) != (segments == 0) {
            return Err(invalid(
                "vbr segment count inconsistent with animated tracks",
            ));
        }
        if segments > num_samples {
            return Err(invalid("vbr has more segments than samples"));
        }
        let constants = take(blob, &mut at, counts.constant_bytes, "vbr constants")?;
        check_finite(constants, "vbr constant is not finite")?;
        let ranges_at = at;
        let ranges = take(blob, &mut at, counts.range_bytes, "vbr clip ranges")?;
        check_vector_ranges(types, ranges)?;
        // The view's clip ranges run 4 bytes past the last entry: the
        // whole-pose walk loads an entry's last 12 bytes as 16. A blob with
        // entries has them (its segment table, data and padding follow).
        let ranges = if ranges.is_empty() {
            ranges
        } else {
            blob.get(ranges_at..at + CLIP_RANGE_SLACK)
                .ok_or(truncated("vbr clip ranges"))?
        };
        let table_bytes = (segments as usize)
            .checked_mul(off_w + bits_w)
            .ok_or(invalid("vbr size overflows"))?;
        let table = take(blob, &mut at, table_bytes, "vbr segment table")?;
        let data = blob.get(at..).unwrap_or(&[]);
        let clip = VbrClip {
            types,
            constants,
            ranges,
            table,
            data,
            joint_count,
            num_samples,
            animated: u32::try_from(animated)
                .map_err(|_| invalid("vbr has too many animated tracks"))?,
            segments,
            seg_len: num_samples.checked_div(segments).unwrap_or(0),
            seg_long: num_samples.checked_rem(segments).unwrap_or(0),
            off_w: off_w as u8,
            bits_w: bits_w as u8,
        };
        clip.check_segments()?;
        Ok(clip)
    }

    /// Walk the segments: offsets must be contiguous, rate bytes valid,
    /// the declared sample bits equal to what the rates imply, and the
    /// last segment must end the blob.
    fn check_segments(&self) -> Result<(), CodecError> {
        let mut off = 0usize;
        for s in 0..self.segments {
            let (block, sample_bits) = self.segment_entry(s);
            if block != off {
                return Err(invalid("vbr segment offset is not contiguous"));
            }
            let rates_end = block
                .checked_add(self.animated as usize)
                .ok_or(invalid("vbr size overflows"))?;
            let rates = self
                .data
                .get(block..rates_end)
                .ok_or(truncated("vbr segment rates"))?;
            let (bits, ranged) = segment_rates(self.types, self.ranges, rates)?;
            if bits != sample_bits {
                return Err(invalid("vbr segment sample bits differ from its rates"));
            }
            let n = (self.seg_len + u32::from(s < self.seg_long)) as usize;
            let sample_bytes = n
                .checked_mul(sample_bits)
                .map(|b| b.div_ceil(8))
                .ok_or(invalid("vbr size overflows"))?;
            off = ranged
                .checked_mul(SEGMENT_RANGE_BYTES)
                .and_then(|h| h.checked_add(rates_end))
                .and_then(|h| h.checked_add(sample_bytes))
                .ok_or(invalid("vbr size overflows"))?;
            if off > self.data.len() {
                return Err(truncated("vbr segment data"));
            }
        }
        let padding = if self.segments == 0 {
            0
        } else {
            SEGMENT_PADDING
        };
        // `off <= len`: checked per segment above.
        let rest = self.data.get(off..).unwrap_or(&[]);
        if rest.len() > padding {
            Err(invalid("vbr blob has trailing bytes"))
        } else if rest.len() < padding {
            Err(truncated("vbr segment padding"))
        } else if rest.iter().any(|&b| b != 0) {
            Err(invalid("vbr segment padding is not zero"))
        } else {
            Ok(())
        }
    }
}

/// The LEB128 u32 at `at` (advanced past it): at most
/// [`MAX_VARINT_BYTES`], no bits beyond 32, and canonical (no final zero
/// byte after the first), so that a count has one encoding.
fn read_varint(blob: &[u8], at: &mut usize) -> Result<u32, CodecError> {
    let mut v = 0u64;
    for k in 0..MAX_VARINT_BYTES {
        let b = *blob.get(*at + k).ok_or(truncated("vbr segment count"))?;
        v |= u64::from(b & 0x7f) << (7 * k);
        if b & 0x80 == 0 {
            if k > 0 && b == 0 {
                return Err(invalid("vbr segment count is not canonical"));
            }
            *at += k + 1;
            return u32::try_from(v).map_err(|_| invalid("vbr segment count overflows"));
        }
    }
    Err(invalid("vbr segment count overflows"))
}

/// The next `len` bytes of `blob` at `at` (advanced past them).
fn take<'a>(
    blob: &'a [u8],
    at: &mut usize,
    len: usize,
    what: &'static str,
) -> Result<&'a [u8], CodecError> {
    let end = at.checked_add(len).ok_or(invalid("vbr size overflows"))?;
    let bytes = blob.get(*at..end).ok_or(truncated(what))?;
    *at = end;
    Ok(bytes)
}

/// What the type bytes imply for the sizes that follow them.
struct TrackCounts {
    constant_bytes: usize,
    animated: usize,
    range_bytes: usize,
}

/// Check every type byte (reserved bits clear, full constants only on
/// rotations) and count constants, animated tracks and clip range bytes.
fn count_tracks(types: &[u8]) -> Result<TrackCounts, CodecError> {
    let mut n = TrackCounts {
        constant_bytes: 0,
        animated: 0,
        range_bytes: 0,
    };
    for &t in types {
        if t >> 6 != 0 {
            return Err(invalid("vbr type byte has reserved bits set"));
        }
        for k in 0..3 {
            match (t >> (2 * k)) & 3 {
                KIND_DEFAULT => {}
                KIND_CONSTANT => n.constant_bytes += 12,
                KIND_ANIMATED => {
                    n.animated += 1;
                    n.range_bytes += if k == 0 {
                        ROTATION_CLIP_RANGE_BYTES
                    } else {
                        VECTOR_CLIP_RANGE_BYTES
                    };
                }
                _ if k != 0 => {
                    return Err(invalid("vbr full constant on a non-rotation track"));
                }
                _ => n.constant_bytes += 16,
            }
        }
    }
    Ok(n)
}

/// Every little-endian f32 of `bytes` is finite.
fn check_finite(bytes: &[u8], what: &'static str) -> Result<(), CodecError> {
    for c in bytes.chunks_exact(4) {
        if !f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite() {
            return Err(invalid(what));
        }
    }
    Ok(())
}

/// Vector clip ranges are f32 and must be finite (16-bit rotation codes
/// are always valid).
fn check_vector_ranges(types: &[u8], ranges: &[u8]) -> Result<(), CodecError> {
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
            check_finite(entry, "vbr clip range is not finite")?;
            r += VECTOR_CLIP_RANGE_BYTES;
        }
    }
    Ok(())
}

/// Check a segment's rate bytes (one per animated track, in track order)
/// and return the sample bits per row they imply (with the stored
/// components of each track's clip range in `ranges`) and how many tracks have
/// a segment range entry.
fn segment_rates(types: &[u8], ranges: &[u8], rates: &[u8]) -> Result<(usize, usize), CodecError> {
    let (mut bits, mut ranged, mut track, mut at) = (0usize, 0usize, 0usize, 0usize);
    for &t in types {
        for k in 0..3 {
            if (t >> (2 * k)) & 3 != KIND_ANIMATED {
                continue;
            }
            let r = *rates.get(track).ok_or(truncated("vbr segment rates"))?;
            if !rate_is_valid(r) {
                return Err(invalid("vbr rate byte invalid"));
            }
            let stored = stored_components(ranges, at, k == 0);
            at += if k == 0 {
                ROTATION_CLIP_RANGE_BYTES
            } else {
                VECTOR_CLIP_RANGE_BYTES
            };
            bits += track_sample_bits(r, k == 0, stored) as usize;
            ranged += usize::from(has_segment_range(r));
            track += 1;
        }
    }
    Ok((bits, ranged))
}
