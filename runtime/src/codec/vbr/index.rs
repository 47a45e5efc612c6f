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
    has_segment_range, track_sample_bits, KIND_ANIMATED, KIND_CONSTANT, KIND_CONSTANT_FULL,
    ROTATION_CLIP_RANGE_BYTES, SEGMENT_ENTRY_BYTES, SEGMENT_RANGE_BYTES, VECTOR_CLIP_RANGE_BYTES,
};
use super::simd::read_u32;
use super::VbrClip;
use crate::codec::CodecError;

/// Animated tracks per checkpoint.
pub const CHECKPOINT: usize = 4;

/// Where a joint's data starts, segment-independent.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct JointEntry {
    /// Byte offset of its first constant in the constants.
    constant: u32,
    /// Byte offset of its first clip range.
    clip_range: u32,
    /// Index of its first animated track.
    track: u32,
}

/// A track's offsets inside one segment.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct TrackOffset {
    /// Bits from the start of a sample row.
    pub(super) bit: u32,
    /// Bytes from the segment's first range entry.
    pub(super) range: u32,
}

/// Bits a track's sample takes (`track_sample_bits`) by `rate | rot << 6`.
const SKIP_BITS: [u8; 128] = {
    let mut t = [0u8; 128];
    let mut i = 0;
    while i < 128 {
        let rate = (i & 63) as u8;
        let id = rate & super::format::RATE_ID_MASK;
        t[i] = if id as usize >= super::format::RATE_BITS.len() {
            0
        } else if id == super::format::RATE_RAW {
            if i >= 64 {
                128
            } else {
                96
            }
        } else {
            (super::format::RATE_BITS[id as usize] * 3) as u8
        };
        i += 1;
    }
    t
};

/// Range entry bytes by rate byte (`has_segment_range`).
const SKIP_RANGE: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut r = 0;
    while r < 64 {
        let id = (r as u8) & super::format::RATE_ID_MASK;
        let ranged = id == super::format::RATE_CONSTANT
            || (id < super::format::RATE_RAW && (r as u8) & super::format::RATE_UNRANGED == 0);
        t[r] = if ranged { SEGMENT_RANGE_BYTES as u8 } else { 0 };
        r += 1;
    }
    t
};

/// The index of one clip (see the module documentation). Owned by the
/// clip it was built for; [`VbrIndex::fits`] ties it to that clip's shape,
/// and every offset it yields is still bounds-checked when read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VbrIndex {
    shape: (usize, usize, u32, usize),
    joints: Vec<JointEntry>,
    /// Per animated track: 1 for a rotation (raw rotations keep w).
    rotation: Vec<u8>,
    /// Per segment, `groups` checkpoints.
    checkpoints: Vec<TrackOffset>,
    groups: usize,
}

fn too_large() -> CodecError {
    CodecError::Invalid {
        what: "vbr clip too large to index",
    }
}

fn to_u32(v: usize) -> Result<u32, CodecError> {
    u32::try_from(v).map_err(|_| too_large())
}

impl VbrIndex {
    /// Build the index of a validated clip. Allocates (once, at load).
    pub fn build(clip: &VbrClip<'_>) -> Result<VbrIndex, CodecError> {
        let mut joints = Vec::with_capacity(clip.types.len());
        let mut rotation = Vec::with_capacity(clip.animated);
        let (mut constant, mut range) = (0usize, 0usize);
        for &t in clip.types {
            joints.push(JointEntry {
                constant: to_u32(constant)?,
                clip_range: to_u32(range)?,
                track: to_u32(rotation.len())?,
            });
            for k in 0..3 {
                match (t >> (2 * k)) & 3 {
                    KIND_CONSTANT => constant += 12,
                    KIND_CONSTANT_FULL => constant += 16,
                    KIND_ANIMATED => {
                        rotation.push(u8::from(k == 0));
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
        let groups = clip.animated.div_ceil(CHECKPOINT);
        let segments = clip.segments as usize;
        let mut checkpoints = Vec::with_capacity(groups.saturating_mul(segments));
        for s in 0..segments {
            let block = read_u32(clip.table, s * SEGMENT_ENTRY_BYTES) as usize;
            let (mut bit, mut ranged) = (0usize, 0usize);
            for (t, &rot) in rotation.iter().enumerate() {
                if t % CHECKPOINT == 0 {
                    checkpoints.push(TrackOffset {
                        bit: to_u32(bit)?,
                        range: to_u32(ranged)?,
                    });
                }
                let rate = clip.data.get(block + t).copied().unwrap_or(0);
                bit += track_sample_bits(rate, rot != 0) as usize;
                ranged += usize::from(has_segment_range(rate)) * SEGMENT_RANGE_BYTES;
            }
        }
        Ok(VbrIndex {
            shape: shape(clip),
            joints,
            rotation,
            checkpoints,
            groups,
        })
    }

    /// Whether the index was built for a clip of this shape.
    #[inline(always)]
    pub(super) fn fits(&self, clip: &VbrClip<'_>) -> bool {
        self.shape == shape(clip)
    }

    /// Bytes the index holds.
    pub fn heap_bytes(&self) -> usize {
        self.joints.len() * core::mem::size_of::<JointEntry>()
            + self.rotation.len()
            + self.checkpoints.len() * core::mem::size_of::<TrackOffset>()
    }

    /// Joint `j`'s (constant offset, clip range offset, first track).
    #[inline(always)]
    pub(super) fn joint(&self, j: usize) -> (usize, usize, usize) {
        let e = self.joints.get(j).copied().unwrap_or_default();
        (e.constant as usize, e.clip_range as usize, e.track as usize)
    }

    /// Offsets of animated track `track` in segment `segment`, whose rate
    /// bytes are `rates` (the segment's, from its first track on): the
    /// checkpoint, then the rate bytes after it, a fixed loop of `CHECKPOINT - 1` steps.
    #[inline(always)]
    pub(super) fn track_offset(&self, segment: usize, rates: &[u8], track: usize) -> TrackOffset {
        let g = track / CHECKPOINT;
        let first = g * CHECKPOINT;
        let mut o = self
            .checkpoints
            .get(segment * self.groups + g)
            .copied()
            .unwrap_or_default();
        let rates = rates.get(first..).unwrap_or(&[]);
        let rot = self.rotation.get(first..).unwrap_or(&[]);
        let n = track - first;
        for k in 0..CHECKPOINT - 1 {
            let r = rates.get(k).copied().unwrap_or(0) & 63;
            let q = rot.get(k).copied().unwrap_or(0) & 1;
            let m = u32::from(k < n);
            o.bit += m * u32::from(SKIP_BITS[(r | q << 6) as usize]);
            o.range += m * u32::from(SKIP_RANGE[r as usize]);
        }
        o
    }
}

fn shape(clip: &VbrClip<'_>) -> (usize, usize, u32, usize) {
    (
        clip.joint_count,
        clip.animated,
        clip.segments,
        clip.data.len(),
    )
}
