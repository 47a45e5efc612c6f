//! [`DecodeContext`]: a playback cursor over one clip, the runtime's
//! counterpart of ACL's decompression context and ozz's sampling context.
//!
//! A context is bound to a clip, seeks to a time, and then decodes any
//! request at that time: a whole pose, a joint subset, a masked pose. It
//! keeps the last position and the segments it decoded (where their data
//! starts), so playing forward or backward, or sampling several requests
//! at one time, does not locate segments again. It is a plain value owned
//! by the caller (one per playing clip instance); it never allocates, and
//! two contexts share nothing mutable (the clip is only read).
//!
//! A [`crate::Player`] keeps one beside a [`TrackCache`] (from
//! [`Clip::track_cache`], 32 bytes per animated track) and asks for its
//! whole poses through it (`sample_static_cached`): the first pose in a
//! segment stores each animated track's reconstruction for that segment,
//! and the poses that follow in it read only the segment's sample rows.
//! Same bits either way.
//!
//! Adapted ideas: Nicholas Frechette, Animation Compression Library,
//! `decompression_context` (bind once, `seek`, then decompress a pose or a
//! track); Guillaume Blanc, ozz-animation, `SamplingJob::Context` (a
//! caller-owned cache of the previous sampling's position). No code taken.

use crate::codec::vbr::{
    CacheView, CachedTrack, IndexView, SegmentCache, SupportedIsa, TrackCache, VbrRequest,
};
use crate::codec::ClipCodec;
use crate::math::Transform;
use crate::package::Clip;
use crate::package::Timing;
use crate::timing::SamplePosition;

/// Masks with at least this many joints in 16 of the skeleton decode the
/// whole pose instead of seeking each joint (measured, see
/// `schemas/codec-vbr.md`: below it seeking is cheaper).
pub(crate) const DENSE_MASK_SIXTEENTHS: usize = 5;

/// Joints a masked decode seeks per call of the subset decode.
const MASK_CHUNK: usize = 32;

/// A playback context over one clip (see the module documentation).
///
/// It holds a copy of what every decode reads from the clip (the codec
/// view, the index reference, the timing fields): under many playing
/// instances the clip's own struct is as cold as its data, and reading
/// the view through the clip put one more dependent miss (context, then
/// clip, then segment table, then data) before any data load could
/// start. The copy's lines sit next to the context's, so they are fetched
/// together. Adapted idea: ACL's decompression context caches the clip's
/// header fields and section offsets at `initialize` for the same reason.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub(crate) struct DecodeContext<'c, 'a> {
    // Field order is the layout (`repr(C)`): what every request reads
    // comes first, so that a one-joint request touches the first two
    // lines only (the time, the position, the timing, the index's joint
    // entries, then the view's counts); the view's sections, the
    // segment cache and the clip follow.
    time: f32,
    pos: SamplePosition,
    timing: Timing,
    /// The clip's index tables, checked against the clip at bind.
    index: Option<IndexView<'c>>,
    codec: ClipCodec<'a>,
    segments: SegmentCache,
    clip: &'c Clip<'a>,
    /// The instruction-set level whole poses decode at.
    isa: SupportedIsa,
}

impl<'c, 'a> DecodeContext<'c, 'a> {
    /// A context bound to `clip`, at time 0.
    pub(crate) fn new(clip: &'c Clip<'a>) -> Self {
        let timing = clip.timing();
        DecodeContext {
            codec: clip.codec,
            pos: timing.position(0.0),
            time: 0.0,
            index: match (&clip.codec, &clip.index) {
                (ClipCodec::Vbr(c), Some(i)) if i.fits(c) => Some(i.view()),
                _ => None,
            },
            isa: SupportedIsa::best(),
            segments: SegmentCache::default(),
            timing,
            clip,
        }
    }

    /// Bind another clip (a clip switch): forgets every cached segment.
    pub(crate) fn bind(&mut self, clip: &'c Clip<'a>) {
        *self = DecodeContext::new(clip);
    }

    /// The bound clip.
    pub(crate) fn clip(&self) -> &'c Clip<'a> {
        self.clip
    }

    /// Move to clip-local time `t` (any time, forward or back; the clip's
    /// loop mode applies). Cached segments stay valid for any time.
    #[inline]
    pub(crate) fn seek(&mut self, t: f32) {
        self.time = t;
        self.pos = self.timing.position(t);
    }

    /// Move by `dt` seconds (negative plays backwards).
    #[inline]
    pub(crate) fn advance(&mut self, dt: f32) {
        self.seek(self.time + dt);
    }

    /// The current time, as given to [`DecodeContext::seek`].
    pub(crate) fn time(&self) -> f32 {
        self.time
    }

    #[inline(always)]
    fn run(&mut self, request: VbrRequest<'_>, base: &[Transform], out: &mut [Transform]) -> bool {
        self.run_with(request, None, base, out)
    }

    /// A whole pose through a track cache, whose entries are prefetched
    /// before anything else if it holds the pose's segment.
    #[inline(always)]
    fn run_cached(
        &mut self,
        request: VbrRequest<'_>,
        tracks: &mut CacheView<'_, '_>,
        base: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        if let ClipCodec::Vbr(c) = &self.codec {
            c.prefetch_held(tracks, self.pos.i0);
        }
        self.run_with(request, Some(tracks), base, out)
    }

    #[inline(always)]
    fn run_with(
        &mut self,
        request: VbrRequest<'_>,
        tracks: Option<&mut CacheView<'_, '_>>,
        base: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        match &self.codec {
            // The view checks `base` against its joint count (the clip's
            // `joint_count` lies on a colder line of the clip).
            ClipCodec::Vbr(c) => c.decode_viewed(
                self.isa,
                request,
                self.index,
                &mut self.segments,
                tracks,
                self.pos,
                base,
                out,
            ),
            ClipCodec::Reference(_) if base.len() != self.clip.joint_count => false,
            ClipCodec::Reference(c) => match request {
                VbrRequest::Pose => c.decode_pose(self.pos, out),
                VbrRequest::Joints(j) => c.decode_joints(self.pos, j, out),
                VbrRequest::JointsInPose(j) => {
                    out.len() == base.len() && reference_in_pose(c, self.pos, j, out)
                }
            },
        }
    }

    /// The pose at the current time from the clip's static pose
    /// ([`Clip::static_pose`]): the bits of [`Clip::sample`].
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn sample_static(
        &mut self,
        static_pose: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        self.run(VbrRequest::Pose, static_pose, out)
    }

    /// [`DecodeContext::sample_static`] through an instance's
    /// [`TrackCache`] (from [`Clip::track_cache`] of this clip): the same
    /// bits; a pose in the segment the cache holds reads only its sample
    /// rows of the segment data. A cache of another clip is not used
    /// (the pose is decoded without it).
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn sample_static_cached<S: AsMut<[CachedTrack]>>(
        &mut self,
        tracks: &mut TrackCache<'_, S>,
        static_pose: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        self.run_cached(VbrRequest::Pose, &mut tracks.view(), static_pose, out)
    }

    /// `out[k]` = joint `joints[k]` from the static pose, with the bits
    /// of [`Clip::sample`] for those joints.
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn sample_joints_static(
        &mut self,
        static_pose: &[Transform],
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        self.run(VbrRequest::Joints(joints), static_pose, out)
    }

    /// Mask-aware pose decode: every joint `j` whose bit `j % 64` of
    /// `mask[j / 64]` is set gets exactly its [`Clip::sample`]
    /// value in the pose-sized `out`. Other slots are left as they were
    /// when the mask is sparse, or hold their decoded value when it is
    /// dense (at least [`DENSE_MASK_SIXTEENTHS`] / 16 of the joints: one
    /// walk over every joint is then cheaper than seeking each). False if
    /// a length is wrong (`mask` must have `ceil(joints / 64)` words, with
    /// no bit set past the last joint).
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn sample_masked(
        &mut self,
        static_pose: &[Transform],
        mask: &[u64],
        out: &mut [Transform],
    ) -> bool {
        let joints = self.clip.joint_count;
        if mask.len() != joints.div_ceil(64) || out.len() != joints {
            return false;
        }
        let tail = joints % 64;
        if tail != 0 && mask.last().is_some_and(|w| w >> tail != 0) {
            return false;
        }
        let set: usize = mask.iter().map(|w| w.count_ones() as usize).sum();
        if set * 16 >= joints * DENSE_MASK_SIXTEENTHS {
            return self.sample_static(static_pose, out);
        }
        let mut chunk = [0u32; MASK_CHUNK];
        let mut n = 0;
        let mut ok = true;
        for (w, &word) in mask.iter().enumerate() {
            let mut bits = word;
            while bits != 0 {
                if let Some(c) = chunk.get_mut(n) {
                    *c = (w * 64) as u32 + bits.trailing_zeros();
                    n += 1;
                }
                bits &= bits - 1;
                if n == MASK_CHUNK {
                    ok &= self.run(VbrRequest::JointsInPose(&chunk), static_pose, out);
                    n = 0;
                }
            }
        }
        if let Some(rest) = chunk.get(..n).filter(|r| !r.is_empty()) {
            ok &= self.run(VbrRequest::JointsInPose(rest), static_pose, out);
        }
        ok
    }
}

/// The reference codec's joints written at their own index of `out`.
fn reference_in_pose(
    c: &crate::codec::reference::ReferenceClip<'_>,
    pos: SamplePosition,
    joints: &[u32],
    out: &mut [Transform],
) -> bool {
    for &j in joints {
        let Some(o) = out.get_mut(j as usize) else {
            return false;
        };
        if !c.decode_joints(pos, &[j], std::slice::from_mut(o)) {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod layout {
    use super::DecodeContext as D;
    use std::mem::offset_of;

    /// What a one-joint request reads of its context (the time, position
    /// and timing, the index's joint entries, the view's counts) lies in
    /// its first two cache lines.
    #[test]
    fn a_joint_request_reads_the_first_two_lines() {
        assert!(
            offset_of!(D, time) < 64
                && offset_of!(D, pos) + std::mem::size_of::<super::SamplePosition>() <= 64
        );
        assert!(offset_of!(D, timing) + std::mem::size_of::<super::Timing>() <= 64);
        // The index view's first field is its joint entries.
        assert!(offset_of!(D, index) + 16 <= 64);
        assert!(offset_of!(D, codec) + crate::codec::vbr::VIEW_COUNTS_END <= 128);
        assert_eq!(std::mem::align_of::<D>(), 64);
    }
}
