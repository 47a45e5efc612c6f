//! [`VbrIndex`]: what makes any joint's data directly addressable, built
//! once at load from a validated [`VbrClip`] (the only allocation; nothing
//! is stored in the blob, so the format and its bytes are unchanged).
//!
//! Without it, reaching joint `j` walks the type bytes of every joint
//! before it and, per sample, the rate bytes of every animated track
//! before it, so the last joint costs more than the first. The index holds
//! per joint the offsets the walk would have reached (constants, clip
//! ranges, first animated track), and per segment a checkpoint every
//! [`CHECKPOINT`] animated tracks (the track's bit offset in a sample row
//! and its range entry offset); a seek reads one joint entry, one
//! checkpoint and at most `CHECKPOINT - 1` rate bytes, a fixed amount of
//! work whatever the joint.
//!
//! Memory: 12 bytes per joint, 1 per animated track and 8 per segment and
//! group of [`CHECKPOINT`] tracks (2 bytes per track and segment, where
//! the blob holds about 60: a few percent of the blob; a checkpoint per
//! track would cost 4x that to save three table steps per seek).

use super::format::{
    has_animated, has_segment_range, stored_components, track_sample_bits, KIND_ANIMATED,
    KIND_CONSTANT, KIND_CONSTANT_FULL, ROTATION_CLIP_RANGE_BYTES, SEGMENT_RANGE_BYTES,
    VECTOR_CLIP_RANGE_BYTES,
};
use super::simd::read_u32;
use super::VbrClip;
use crate::codec::CodecError;

/// Animated tracks per checkpoint.
pub(super) const CHECKPOINT: usize = 4;

/// Where a joint's data starts, segment-independent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct JointEntry {
    /// Byte offset of its first constant in the constants.
    constant: u32,
    /// Byte offset of its first clip range.
    clip_range: u32,
    /// Index of its first animated track (bits 0-23) and its type byte as
    /// in the blob (bits 24-31), so that a seek learns whether the joint
    /// has an animated track, and a subset decode its kinds, without
    /// reading the blob: a static joint's request then touches only the
    /// index and its base (or constants), not the blob's type bytes.
    track: u32,
}

/// Bits of [`JointEntry::track`] holding the track index.
const TRACK_BITS: u32 = 24;

/// A track's offsets inside one segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct TrackOffset {
    /// Bits from the start of a sample row.
    pub(super) bit: u32,
    /// Bytes from the segment's first range entry.
    pub(super) range: u32,
}

/// A track's class in the index: stored components (0..=3, the clip
/// range's nonzero extents) plus 4 for a rotation (raw rotations keep w).
/// [`KEEP`] marks a track not to skip.
const KEEP: u32 = 8;

/// Per `class << 6 | rate` (class 0..=8, rate 6 bits): the bits a track's
/// sample takes (`track_sample_bits`) in the low half and its range entry
/// bytes (`has_segment_range`) in the high half, so that one lookup and
/// one add skip a track. The [`KEEP`] row is 0.
const SKIP: [u32; 9 * 64] = {
    let mut t = [0u32; 9 * 64];
    let mut i = 0;
    while i < 8 * 64 {
        let rate = (i & 63) as u8;
        let class = i >> 6;
        let (rotation, stored) = (class >= 4, (class & 3) as u32);
        let id = rate & super::format::RATE_ID_MASK;
        let bits = if id as usize >= super::format::RATE_BITS.len() {
            0
        } else if id == super::format::RATE_RAW {
            if rotation {
                128
            } else {
                96
            }
        } else {
            super::format::RATE_BITS[id as usize] * stored
        };
        let ranged = id == super::format::RATE_CONSTANT
            || (id < super::format::RATE_RAW && rate & super::format::RATE_UNRANGED == 0);
        let range = if ranged {
            SEGMENT_RANGE_BYTES as u32
        } else {
            0
        };
        t[i] = bits | range << 16;
        i += 1;
    }
    t
};

/// The index of one clip (see the module documentation). Owned by the
/// clip it was built for; `VbrIndex::fits` ties it to that clip's shape,
/// and every offset it yields is still bounds-checked when read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct VbrIndex {
    shape: (usize, usize, u32, usize),
    joints: Vec<JointEntry>,
    /// Per animated track its class (stored components, plus 4 for a
    /// rotation); then `CHECKPOINT - 1` zeros so that a group's classes
    /// are one 32-bit load.
    class: Vec<u8>,
    /// Per segment, `groups` checkpoints.
    checkpoints: Vec<TrackOffset>,
    groups: usize,
}

fn too_large() -> CodecError {
    CodecError::Invalid {
        what: "vbr clip too large to index",
    }
}

fn track_and_kinds(track: usize, kinds: u8) -> Result<u32, CodecError> {
    let track = to_u32(track)?;
    if track >> TRACK_BITS != 0 {
        return Err(too_large());
    }
    Ok(track | u32::from(kinds) << TRACK_BITS)
}

fn to_u32(v: usize) -> Result<u32, CodecError> {
    u32::try_from(v).map_err(|_| too_large())
}

impl VbrIndex {
    /// Build the index of a validated clip. Allocates (once, at load).
    pub(crate) fn build(clip: &VbrClip<'_>) -> Result<VbrIndex, CodecError> {
        let mut joints = Vec::with_capacity(clip.types.len());
        let mut class = Vec::with_capacity(clip.animated_track_count());
        let (mut constant, mut range) = (0usize, 0usize);
        for &t in clip.types {
            joints.push(JointEntry {
                constant: to_u32(constant)?,
                clip_range: to_u32(range)?,
                track: track_and_kinds(class.len(), t)?,
            });
            for k in 0..3 {
                match (t >> (2 * k)) & 3 {
                    KIND_CONSTANT => constant += 12,
                    KIND_CONSTANT_FULL => constant += 16,
                    KIND_ANIMATED => {
                        let stored = stored_components(clip.ranges, range, k == 0);
                        class.push(stored as u8 + if k == 0 { 4 } else { 0 });
                        range += if k == 0 {
                            ROTATION_CLIP_RANGE_BYTES
                        } else {
                            VECTOR_CLIP_RANGE_BYTES
                        };
                    }
                    _ => {}
                }
            }
        }
        let tracks = class.len();
        class.resize(tracks + CHECKPOINT - 1, 0);
        let groups = clip.animated_track_count().div_ceil(CHECKPOINT);
        let segments = clip.segments as usize;
        let mut checkpoints = Vec::with_capacity(groups.saturating_mul(segments));
        for s in 0..segments {
            let (block, _) = clip.segment_entry(s as u32);
            let (mut bit, mut ranged) = (0usize, 0usize);
            for (t, &cls) in class.iter().take(tracks).enumerate() {
                if t % CHECKPOINT == 0 {
                    checkpoints.push(TrackOffset {
                        bit: to_u32(bit)?,
                        range: to_u32(ranged)?,
                    });
                }
                let rate = clip.data.get(block + t).copied().unwrap_or(0);
                bit += track_sample_bits(rate, cls >= 4, u32::from(cls & 3)) as usize;
                ranged += usize::from(has_segment_range(rate)) * SEGMENT_RANGE_BYTES;
            }
        }
        Ok(VbrIndex {
            shape: shape(clip),
            joints,
            class,
            checkpoints,
            groups,
        })
    }

    /// Whether the index was built for a clip of this shape.
    #[inline(always)]
    pub(crate) fn fits(&self, clip: &VbrClip<'_>) -> bool {
        self.shape == shape(clip)
    }

    /// The index's tables by reference, for a decode context to keep (so
    /// that a seek reads the joint's entry straight from the context's
    /// copy instead of through this struct: one dependent miss fewer).
    #[inline(always)]
    pub(crate) fn view(&self) -> IndexView<'_> {
        IndexView {
            joints: &self.joints,
            class: &self.class,
            checkpoints: &self.checkpoints,
            groups: self.groups,
        }
    }
}

/// A [`VbrIndex`]'s tables by reference: what a seek reads. Made by
/// [`VbrIndex::view`]; a decode context takes it once it has checked the
/// index against its clip (`VbrIndex::fits`), and every offset it
/// yields is still bounds-checked when read.
///
/// `repr(C)`, joint entries first: the only field a request for a joint
/// without animated tracks reads (see `DecodeContext`'s layout).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct IndexView<'i> {
    joints: &'i [JointEntry],
    class: &'i [u8],
    checkpoints: &'i [TrackOffset],
    groups: usize,
}

impl IndexView<'_> {
    /// Joint `j`'s (constant offset, clip range offset, first track, type
    /// byte).
    #[inline(always)]
    pub(super) fn joint(&self, j: usize) -> (usize, usize, usize, u8) {
        let e = self.joints.get(j).copied().unwrap_or_default();
        (
            e.constant as usize,
            e.clip_range as usize,
            (e.track & ((1 << TRACK_BITS) - 1)) as usize,
            (e.track >> TRACK_BITS) as u8,
        )
    }

    /// Whether joint `j` has no animated track (its value is its
    /// constants or its base, whatever the time).
    #[inline(always)]
    pub(super) fn is_static(&self, j: usize) -> bool {
        !has_animated(self.joint(j).3)
    }

    /// Offsets of animated track `track` in segment `segment`, whose rate
    /// bytes are `rates` (the segment's, from its first track on): the
    /// checkpoint, then the `CHECKPOINT - 1` rate bytes after it, read as
    /// one word each from the rates and the rotation flags, those past
    /// `track` marked not to be skipped; no branch, no loop.
    #[inline(always)]
    pub(super) fn track_offset(&self, segment: usize, rates: &[u8], track: usize) -> TrackOffset {
        let g = track / CHECKPOINT;
        let first = g * CHECKPOINT;
        let o = self
            .checkpoints
            .get(segment * self.groups + g)
            .copied()
            .unwrap_or_default();
        // Bytes 0..n are the tracks to skip; the others get class KEEP (SKIP 0).
        let n = track - first;
        let keep = (1u32 << (8 * n)) - 1;
        let rates = read_u32(rates, first) & 0x3f3f_3f3f;
        let classes = read_u32(self.class, first) & keep | (KEEP * 0x0101_0101) & !keep;
        let mut skip = 0u32;
        for k in 0..CHECKPOINT - 1 {
            let (r, c) = (rates >> (8 * k) & 63, (classes >> (8 * k) & 0xff).min(KEEP));
            skip += SKIP[(c << 6 | r) as usize];
        }
        TrackOffset {
            bit: o.bit + (skip & 0xffff),
            range: o.range + (skip >> 16),
        }
    }
}

pub(super) fn shape(clip: &VbrClip<'_>) -> (usize, usize, u32, usize) {
    (
        clip.joint_count,
        clip.animated_track_count(),
        clip.segments,
        clip.data.len(),
    )
}
