//! Serialization in the layout of `schemas/codec-vbr.md` (little-endian).

use crate::classify::{Plan, Track};
use crate::prep::Prep;
use crate::quantize::{quantize, seg_range};
use crate::search::Segment;
use crate::verify::ErrorReport;
use crate::{EncodeError, EncodeStats};
use ludus_anim_format::vbr::{
    has_segment_range, rate_id, table_widths, track_sample_bits, varint, width_byte, KIND_ANIMATED,
    KIND_CONSTANT, KIND_CONSTANT_FULL, KIND_DEFAULT, RATE_BITS, RATE_CONSTANT, RATE_RAW,
    ROTATION_CLIP_RANGE_BYTES, SEGMENT_PADDING, SEGMENT_RANGE_BYTES, VECTOR_CLIP_RANGE_BYTES,
};

/// Appends values LSB-first to a little-endian bit stream.
struct BitWriter {
    bytes: Vec<u8>,
    /// Bits not yet flushed to `bytes` (the low `pending` bits).
    acc: u64,
    pending: u32,
}

impl BitWriter {
    fn new() -> BitWriter {
        BitWriter {
            bytes: Vec::new(),
            acc: 0,
            pending: 0,
        }
    }

    /// Append the low `width` (at most 32) bits of `v`.
    fn put(&mut self, v: u64, width: u32) {
        let v = v & ((1u64 << width) - 1);
        self.acc |= v << self.pending;
        self.pending += width;
        while self.pending >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.pending -= 8;
        }
    }

    /// The stream, its last byte zero-padded.
    fn finish(mut self) -> Vec<u8> {
        if self.pending > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes
    }
}

fn u32_of(v: usize) -> Result<u32, EncodeError> {
    u32::try_from(v).map_err(|_| EncodeError::TooLarge)
}

/// Per segment (block bytes, bits of one sample row), in segment order:
/// what the segment table describes.
fn segment_sizes(plan: &Plan, segments: &[Segment], rates: &[Vec<u8>]) -> Vec<(usize, usize)> {
    if plan.anim.is_empty() {
        return Vec::new();
    }
    let a = plan.anim.len();
    segments
        .iter()
        .zip(rates)
        .map(|(seg, seg_rates)| {
            let bits: usize = plan
                .anim
                .iter()
                .zip(seg_rates)
                .map(|(t, &r)| track_sample_bits(r, t.is_rotation(), t.stored()) as usize)
                .sum();
            let ranged = seg_rates.iter().filter(|&&r| has_segment_range(r)).count();
            let bytes =
                a + ranged * SEGMENT_RANGE_BYTES + ((seg.end - seg.start) * bits).div_ceil(8);
            (bytes, bits)
        })
        .collect()
}

/// The segment table of `sizes`: the width byte (each field as narrow as
/// its largest value allows) and the entries' bytes.
fn segment_table(sizes: &[(usize, usize)]) -> Result<(u8, Vec<u8>), EncodeError> {
    let mut offsets = Vec::with_capacity(sizes.len());
    let mut off = 0usize;
    for (bytes, _) in sizes {
        offsets.push(off);
        off = off.checked_add(*bytes).ok_or(EncodeError::TooLarge)?;
    }
    let last = offsets.last().copied().unwrap_or(0);
    let bits = sizes.iter().map(|s| s.1).max().unwrap_or(0);
    let width = width_byte(last, bits).ok_or(EncodeError::TooLarge)?;
    let (ow, bw) = table_widths(width);
    let mut table = Vec::with_capacity(sizes.len() * (ow + bw));
    for (o, (_, b)) in offsets.iter().zip(sizes) {
        table.extend_from_slice(&(*o as u64).to_le_bytes()[..ow]);
        table.extend_from_slice(&(*b as u64).to_le_bytes()[..bw]);
    }
    Ok((width, table))
}

/// Header (segment count, width byte), type bytes, constants and clip
/// ranges.
fn write_tracks(plan: &Plan, seg_count: usize, width: u8) -> Result<Vec<u8>, EncodeError> {
    let mut b = varint(u32_of(seg_count)?);
    if seg_count > 0 {
        b.push(width);
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
    for t in plan.tracks.iter().flatten() {
        match t {
            Track::Constant(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
            Track::ConstantFull(v) => v.iter().for_each(|x| b.extend_from_slice(&x.to_le_bytes())),
            _ => {}
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
    Ok(b)
}

/// One segment block: rates, then the sample rows, then the range entries
/// of the tracks that have one.
fn write_segment(plan: &Plan, seg: &Segment, seg_rates: &[u8], data: &mut Vec<u8>) {
    data.extend_from_slice(seg_rates);
    let mut ranges = Vec::with_capacity(plan.anim.len() * SEGMENT_RANGE_BYTES);
    let mut quantized = Vec::with_capacity(plan.anim.len());
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
    let mut bw = BitWriter::new();
    for s in 0..seg.end - seg.start {
        for ((t, &r), q) in plan.anim.iter().zip(seg_rates).zip(&quantized) {
            let id = rate_id(r);
            if id == RATE_CONSTANT {
                continue;
            }
            let (width, comps) = if id == RATE_RAW {
                (32, if t.is_rotation() { 4 } else { 3 })
            } else {
                (RATE_BITS[id as usize], 3)
            };
            for (c, &v) in q[s].iter().enumerate().take(comps) {
                // Zero-extent components store no bits at quantized rates.
                if id == RATE_RAW || t.stores(c) {
                    bw.put(v as u64, width);
                }
            }
        }
    }
    data.extend_from_slice(&bw.finish());
    data.extend_from_slice(&ranges);
}

pub(crate) fn write(
    plan: &Plan,
    segments: &[Segment],
    rates: &[Vec<u8>],
) -> Result<Vec<u8>, EncodeError> {
    let sizes = segment_sizes(plan, segments, rates);
    let (width, table) = segment_table(&sizes)?;
    let mut b = write_tracks(plan, sizes.len(), width)?;
    b.extend_from_slice(&table);
    for (seg, seg_rates) in segments.iter().zip(rates).take(sizes.len()) {
        write_segment(plan, seg, seg_rates, &mut b);
    }
    if !sizes.is_empty() {
        b.resize(b.len() + SEGMENT_PADDING, 0);
    }
    Ok(b)
}

/// Size in bytes [`write`] would produce, without writing.
pub(crate) fn size(prep: &Prep, plan: &Plan, segments: &[Segment], rates: &[Vec<u8>]) -> usize {
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
    let sizes = segment_sizes(plan, segments, rates);
    let count = u32::try_from(sizes.len()).unwrap_or(u32::MAX);
    let header = varint(count).len() + usize::from(!sizes.is_empty());
    // An oversized table makes `write` fail; the size is then moot.
    let table = segment_table(&sizes).map_or(0, |t| t.1.len());
    let blocks: usize = sizes.iter().map(|s| s.0).sum();
    let padding = if sizes.is_empty() { 0 } else { SEGMENT_PADDING };
    header + prep.j + constants + clip_ranges + table + blocks + padding
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
            bits += len * track_sample_bits(r, t.is_rotation(), t.stored()) as u64;
            comps += len
                * match (rate_id(r) == RATE_RAW, t.is_rotation()) {
                    (true, true) => 4,
                    (true, false) => 3,
                    _ => u64::from(t.stored()),
                };
        }
    }
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
        floor_m: prep.floor,
    }
}
