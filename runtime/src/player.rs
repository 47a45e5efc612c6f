//! [`Player`]: the one way to play a clip. Bind a clip (the player sizes
//! what it keeps from the clip), seek or advance, then decode a
//! [`Request`] (the whole pose, a set of joints, or a mask) into a
//! caller-supplied slice. Decoding never allocates.
//!
//! Inside, a player keeps the clip's static pose (every track that is not
//! animated), a playback cursor that remembers the segments it decoded,
//! and a track cache (each animated track's reconstruction for the
//! segment being played, so that the poses after the first in a segment
//! read only their sample rows). Which decode loop runs (the instruction
//! set, the index for joint requests, whole pose or per joint for a mask)
//! is chosen inside; every choice gives the bits of [`Clip::sample`].
//!
//! Adapted ideas: Nicholas Frechette, Animation Compression Library,
//! `decompression_context` (`initialize`, `seek`, `decompress_tracks`,
//! `decompress_track`); Guillaume Blanc, ozz-animation, `SamplingJob` with
//! its caller-owned context. No code taken.

use crate::codec::vbr::{CachedTrack, TrackCache};
use crate::context::DecodeContext;
use crate::math::Transform;
use crate::package::Clip;
#[cfg(doc)]
use crate::package::Package;

/// What a [`Player`] decodes at its current time.
#[derive(Clone, Copy, Debug)]
pub enum Request<'r> {
    /// Every joint: `out[j]` is joint `j` (`out.len()` = joint count).
    Pose,
    /// `out[k]` is joint `joints[k]` (`out.len()` = `joints.len()`; any
    /// order; the cost grows with the joints asked for).
    Joints(&'r [u32]),
    /// Every joint `j` whose bit `j % 64` of `mask[j / 64]` is set gets its
    /// value in the pose-sized `out`; other slots are left as they were,
    /// or hold their own decoded value when the mask covers enough of the
    /// skeleton that one walk over every joint is cheaper. `mask` has
    /// `ceil(joints / 64)` words and no bit past the last joint.
    Mask(&'r [u64]),
}

/// Why a decode wrote nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    /// A slice does not have the length the request needs.
    #[error("{what} holds {found} entries, the request needs {expected}")]
    Length {
        what: &'static str,
        expected: usize,
        found: usize,
    },
    /// A requested joint is not in the clip's skeleton.
    #[error("joint {joint} is out of range (the clip has {joint_count} joints)")]
    Joint { joint: u32, joint_count: usize },
    /// A mask sets a bit past the last joint.
    #[error("the mask sets a bit past the last joint")]
    Mask,
    /// The time maps to no sample (not finite, or the clip has none).
    #[error("the time maps to no sample")]
    Time,
}

/// A playing instance of one clip (see the module documentation). One per
/// playing clip; two players share nothing mutable.
#[derive(Clone, Debug)]
pub struct Player<'c, 'a> {
    ctx: DecodeContext<'c, 'a>,
    static_pose: Vec<Transform>,
    tracks: TrackCache<'a>,
}

impl<'c, 'a> Player<'c, 'a> {
    /// A player of `clip` at time 0, over `defaults`: the values of the
    /// tracks the clip does not store ([`Package::sample_defaults`]: the
    /// skeleton's rest pose, or the additive identity for an additive
    /// clip). Allocates the static pose and the track cache; nothing
    /// after this does.
    pub fn new(clip: &'c Clip<'a>, defaults: &[Transform]) -> Result<Self, DecodeError> {
        let mut player = Player {
            ctx: DecodeContext::new(clip),
            static_pose: Vec::new(),
            tracks: clip.track_cache(),
        };
        player.fill(clip, defaults)?;
        Ok(player)
    }

    /// Play another clip from time 0 (`defaults` as for [`Player::new`]),
    /// reusing this player's memory where it is large enough.
    pub fn bind(&mut self, clip: &'c Clip<'a>, defaults: &[Transform]) -> Result<(), DecodeError> {
        self.ctx.bind(clip);
        let empty = clip.track_cache_in(Vec::new());
        let mut entries = std::mem::replace(&mut self.tracks, empty).into_entries();
        entries.clear();
        entries.resize(clip.track_cache_len(), CachedTrack::EMPTY);
        self.tracks = clip.track_cache_in(entries);
        self.fill(clip, defaults)
    }

    fn fill(&mut self, clip: &Clip<'a>, defaults: &[Transform]) -> Result<(), DecodeError> {
        self.static_pose.clear();
        self.static_pose
            .resize(clip.joint_count, Transform::IDENTITY);
        if clip.static_pose(defaults, &mut self.static_pose) {
            Ok(())
        } else {
            Err(DecodeError::Length {
                what: "defaults",
                expected: clip.joint_count,
                found: defaults.len(),
            })
        }
    }

    /// The bound clip.
    pub fn clip(&self) -> &'c Clip<'a> {
        self.ctx.clip()
    }

    /// Move to clip-local time `t` (forward or back; the clip's loop mode
    /// applies).
    #[inline]
    pub fn seek(&mut self, t: f32) {
        self.ctx.seek(t);
    }

    /// Move by `dt` seconds (negative plays backwards).
    #[inline]
    pub fn advance(&mut self, dt: f32) {
        self.ctx.advance(dt);
    }

    /// The current time, as given to [`Player::seek`] and moved by
    /// [`Player::advance`].
    pub fn time(&self) -> f32 {
        self.ctx.time()
    }

    /// Decode `request` at the current time into `out`. Nothing is written
    /// on an error. Same bits as [`Clip::sample`] for every joint written.
    #[inline]
    pub fn decode(
        &mut self,
        request: Request<'_>,
        out: &mut [Transform],
    ) -> Result<(), DecodeError> {
        let ok = match request {
            Request::Pose => {
                self.ctx
                    .sample_static_cached(&mut self.tracks, &self.static_pose, out)
            }
            Request::Joints(joints) => {
                self.ctx
                    .sample_joints_static(&self.static_pose, joints, out)
            }
            Request::Mask(mask) => self.ctx.sample_masked(&self.static_pose, mask, out),
        };
        if ok {
            Ok(())
        } else {
            Err(self.diagnose(request, out.len()))
        }
    }

    /// Why the decode of `request` into `out_len` slots refused.
    #[cold]
    fn diagnose(&self, request: Request<'_>, out_len: usize) -> DecodeError {
        let joint_count = self.static_pose.len();
        let length = |what, expected| DecodeError::Length {
            what,
            expected,
            found: out_len,
        };
        match request {
            Request::Pose if out_len != joint_count => length("out", joint_count),
            Request::Joints(j) if out_len != j.len() => length("out", j.len()),
            Request::Mask(_) if out_len != joint_count => length("out", joint_count),
            Request::Mask(m) if m.len() != joint_count.div_ceil(64) => DecodeError::Length {
                what: "mask",
                expected: joint_count.div_ceil(64),
                found: m.len(),
            },
            Request::Mask(m) if mask_overflows(m, joint_count) => DecodeError::Mask,
            Request::Mask(_) => DecodeError::Time,
            Request::Joints(j) => match j.iter().find(|&&k| k as usize >= joint_count) {
                Some(&joint) => DecodeError::Joint { joint, joint_count },
                None => DecodeError::Time,
            },
            Request::Pose => DecodeError::Time,
        }
    }
}

/// Whether `mask` sets a bit past joint `joint_count - 1`.
fn mask_overflows(mask: &[u64], joint_count: usize) -> bool {
    let tail = joint_count % 64;
    tail != 0 && mask.last().is_some_and(|w| w >> tail != 0)
}
