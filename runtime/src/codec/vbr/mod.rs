//! Variable-bit-rate clip codec: the decoder, and the bit-exact
//! reconstruction helpers the encoder (`ludus-anim-compress`) reuses so
//! that what it measures is exactly what the runtime produces.
//!
//! Files: `format` (layout constants, rate bytes, reconstruction
//! formulas), `parse` (validation of a blob into a [`VbrClip`]), `tracks`
//! (reading one track's samples), `decode` (the one decode loop, over an
//! output policy), `batch` (deferred rotation blends), `playback` (a
//! playing instance's cache of its segment's track reconstructions),
//! `isa` (the loop
//! compiled per instruction-set level, chosen at run time) and `simd`
//! (the data path's `unsafe` blocks: bounded unaligned loads, prefetches
//! and the SSE2 lane code, each with its safety argument).
//!
//! The layout is specified in `schemas/codec-vbr.md`. In short: per joint a
//! type byte (default / constant / animated per rotation, translation and
//! scale track), full-precision constants, a per-clip range for every
//! animated track (16-bit codes for rotations, f32 for vectors), a segment
//! table (fields as narrow as the clip needs), then per segment one
//! bit-rate byte per animated track, the sample-major bit-packed samples,
//! and the segment ranges of the tracks that use one. The blob ends there:
//! the bounded loads read bytes past its end as zero (`simd`).
//!
//! Adapted ideas (Nicholas Frechette, Animation Compression Library and his
//! "Animation Compression" blog series): uniform sampling, constant and
//! default track stripping, uniform segmenting, clip and segment range
//! reduction, per-track variable bit rates from a fixed table, rotations
//! stored as a quaternion with w >= 0 and w dropped, and prefetching the
//! lines a pose needs before decoding (ACL's decoder prefetches its
//! per-segment data). The byte layout is ours; it is not ACL's and is not
//! compatible with it.

mod batch;
mod decode;
mod index;
#[allow(unsafe_code)]
mod isa;
mod parse;
mod playback;
#[allow(unsafe_code)]
mod simd;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_random;
mod tracks;

pub(crate) use index::{IndexView, VbrIndex};
pub(crate) use isa::SupportedIsa;
use ludus_anim_format::vbr as format;
pub(crate) use playback::CacheView;
pub(crate) use playback::{CachedTrack, TrackCache};
pub(crate) use tracks::SegmentCache;

#[cfg(doc)]
use crate::math::nlerp_shortest;
use crate::math::Transform;
use crate::timing::SamplePosition;
use decode::{FullPose, JointSubset, StaticFill};

/// What a decode context decodes ([`VbrClip::decode_viewed`]), always
/// from the clip's static pose ([`VbrClip::static_pose`]).
#[derive(Clone, Copy, Debug)]
pub(crate) enum VbrRequest<'r> {
    /// Every joint: only the animated tracks are decoded.
    Pose,
    /// `out[k]` = joint `joints[k]`.
    Joints(&'r [u32]),
    /// `out[j]` for each listed joint `j`; the other slots of the
    /// pose-sized `out` are not written.
    JointsInPose(&'r [u32]),
}

/// A validated VBR blob. Every offset it uses was checked by [`VbrClip::parse`].
///
/// `repr(C)`, counts first: a decode's validation reads them before any
/// section, and in a [`crate::DecodeContext`] they then share a cache
/// line with the time and the index.
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub(crate) struct VbrClip<'a> {
    joint_count: usize,
    num_samples: u32,
    /// Animated tracks (at most 3 per joint: u32 keeps the view, and so
    /// a `Clip`'s decode fields, within two cache lines).
    animated: u32,
    segments: u32,
    /// Samples in the short segments (`num_samples / segments`).
    seg_len: u32,
    /// Number of leading segments holding one more sample.
    seg_long: u32,
    /// Bytes of a segment table entry's block offset (1..=4; 0 without segments).
    off_w: u8,
    /// Bytes of a segment table entry's sample bits (1..=4; 0 without segments).
    bits_w: u8,
    types: &'a [u8],
    constants: &'a [u8],
    ranges: &'a [u8],
    table: &'a [u8],
    /// Segment blocks followed by the padding.
    data: &'a [u8],
}

impl<'a> VbrClip<'a> {
    /// Segments of the clip's data.
    #[cfg(test)]
    pub(crate) fn segment_count(&self) -> u32 {
        self.segments
    }
    pub(crate) fn animated_track_count(&self) -> usize {
        self.animated as usize
    }

    /// Segment `s`'s table entry: (block offset in the segment data, bits
    /// of one sample row). Zeros past the table (never on a validated view
    /// for `s < segments`).
    #[inline(always)]
    pub(super) fn segment_entry(&self, s: u32) -> (usize, usize) {
        let (ow, bw) = (usize::from(self.off_w), usize::from(self.bits_w));
        let e = s as usize * (ow + bw);
        (
            simd::read_uint(self.table, e, ow),
            simd::read_uint(self.table, e + ow, bw),
        )
    }

    /// First sample of segment `s` (`s <= segments`).
    #[inline]
    pub(crate) fn segment_start(&self, s: u32) -> u32 {
        s * self.seg_len + s.min(self.seg_long)
    }

    /// Decode every joint at `pos` into `out` (rotation by
    /// [`nlerp_shortest`], translation and scale by lerp). `defaults` is the
    /// skeleton rest pose. Returns false and leaves `out` untouched if a
    /// buffer has the wrong length or the position is out of range.
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn decode_pose(
        &self,
        pos: SamplePosition,
        defaults: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        self.decode_apart(
            SupportedIsa::best(),
            &FullPose,
            pos,
            defaults,
            out,
            None,
            None,
        )
    }

    /// The clip's static pose: what [`VbrClip::decode_pose`] outputs for
    /// every track that is not animated (defaults from `defaults`,
    /// constants, constant rotations normalized). Compute it once per clip
    /// and `defaults` (e.g. when a clip is bound to a skeleton) and decode
    /// from it ([`VbrRequest`]), which then touches only the animated
    /// tracks. Slots of animated tracks hold sample 0 (they are
    /// overwritten by every decode). False if a length is wrong.
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn static_pose(&self, defaults: &[Transform], out: &mut [Transform]) -> bool {
        self.decode_sample(0, defaults, out)
    }

    /// [`VbrClip::decode_pose`] from the clip's static pose
    /// ([`VbrClip::static_pose`] of the same defaults): only the animated
    /// tracks are decoded; the same bits.
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn decode_from_static(
        &self,
        pos: SamplePosition,
        static_pose: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        self.decode_apart(
            SupportedIsa::best(),
            &StaticFill,
            pos,
            static_pose,
            out,
            None,
            None,
        )
    }

    /// Any request through a playback [`SegmentCache`] (which must only
    /// ever have been used with this clip): the one entry point of a
    /// decode context. Joint requests seek through `index` when given
    /// (which must be this clip's), else walk. Same output bits as
    /// [`VbrClip::decode_pose`]; false (writing nothing) if a length, a
    /// joint or the position is out of range.
    ///
    /// Test-only: a cache is trusted to belong to its clip (the
    /// whole-pose walk loads without bounds checks at its offsets), so
    /// outside the tests only a [`crate::DecodeContext`] holds one.
    #[cfg(test)]
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn decode_cached(
        &self,
        request: VbrRequest<'_>,
        index: Option<&VbrIndex>,
        cache: &mut SegmentCache,
        pos: SamplePosition,
        base: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        if index.is_some_and(|i| !i.fits(self)) {
            return false;
        }
        self.decode_viewed(
            SupportedIsa::best(),
            request,
            index.map(VbrIndex::view),
            cache,
            None,
            pos,
            base,
            out,
        )
    }

    /// Prefetch a track cache's entries if it holds the segment of
    /// sample `i0`: called first by a cached pose, since their address
    /// depends on no load, so their misses overlap the segment table's
    /// chain instead of following it. (In `decode_viewed`, which every
    /// request shares, the test cost joint requests 12 instructions.)
    #[inline(always)]
    pub(crate) fn prefetch_held(&self, tracks: &CacheView<'_, '_>, i0: u32) {
        if self.segments != 0 && tracks.held() == Some(self.segment_of(i0)) {
            simd::prefetch_values(tracks.tracks());
        }
    }

    /// [`VbrClip::decode_cached`] with the index as a view that the
    /// caller has checked against this clip (`VbrIndex::fits`) once,
    /// when it took it (a decode context, at bind): no check of the
    /// index's struct per decode, so a seek's first read is the joint's
    /// entry.
    /// Whole poses decode at `isa`; joint requests at the baseline (see
    /// `isa`).
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn decode_viewed(
        &self,
        isa: SupportedIsa,
        request: VbrRequest<'_>,
        index: Option<IndexView<'_>>,
        cache: &mut SegmentCache,
        tracks: Option<&mut CacheView<'_, '_>>,
        pos: SamplePosition,
        base: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        let locate = Some(cache);
        // Only a cache made for this clip's very sections is used (tested
        // in the pose arms alone: joint requests take none).
        match request {
            VbrRequest::Pose => {
                let tracks = tracks.filter(|t| t.fits(self));
                self.decode_apart(isa, &StaticFill, pos, base, out, locate, tracks)
            }
            VbrRequest::Joints(joints) => {
                let p = JointSubset::<true, false> { joints, index };
                self.decode_subset(&p, pos, base, out, locate)
            }
            VbrRequest::JointsInPose(joints) => {
                let p = JointSubset::<true, true> { joints, index };
                self.decode_subset(&p, pos, base, out, locate)
            }
        }
    }

    /// A joint request: one joint inlined here, specialized for one slot
    /// (a call would cost it 4-11% more instructions), several through a
    /// function of their own, whose register allocation the pose dispatch
    /// around it cannot disturb (inlined, 10 joints took 6-8% more).
    #[inline(always)]
    fn decode_subset<P: decode::OutputPolicy>(
        &self,
        policy: &P,
        pos: SamplePosition,
        base: &[Transform],
        out: &mut [Transform],
        cache: Option<&mut SegmentCache>,
    ) -> bool {
        if policy.slots(self.joint_count) == 1 {
            self.decode_body(policy, pos, base, out, cache, None)
        } else {
            self.decode_subset_apart(policy, pos, base, out, cache)
        }
    }

    /// [`VbrClip::decode_body`] for a request of several joints, not
    /// inlined (see [`VbrClip::decode_subset`]).
    #[inline(never)]
    fn decode_subset_apart<P: decode::OutputPolicy>(
        &self,
        policy: &P,
        pos: SamplePosition,
        base: &[Transform],
        out: &mut [Transform],
        cache: Option<&mut SegmentCache>,
    ) -> bool {
        self.decode_body(policy, pos, base, out, cache, None)
    }

    /// A whole-pose request, compiled on its own per request and at the
    /// instruction-set level `isa` (`isa`): each pose loop gets a
    /// function, and so its register allocation, to itself, which saves
    /// 2% of a pose's instructions (cachegrind, on every anchor clip) for
    /// one call. Joint requests run the baseline level
    /// ([`VbrClip::decode_subset`]).
    #[inline(never)]
    // One parameter list through the inlining and `target_feature`
    // boundaries: a struct of them cost poses 2-3% (see `isa`).
    #[allow(clippy::too_many_arguments)]
    fn decode_apart<P: decode::OutputPolicy>(
        &self,
        isa: SupportedIsa,
        policy: &P,
        pos: SamplePosition,
        base: &[Transform],
        out: &mut [Transform],
        cache: Option<&mut SegmentCache>,
        tracks: Option<&mut CacheView<'_, '_>>,
    ) -> bool {
        self.decode_on(isa, policy, pos, base, out, cache, tracks)
    }

    /// Decode the stored sample `sample` exactly (no blend).
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn decode_sample(
        &self,
        sample: u32,
        defaults: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        self.decode_pose(
            SamplePosition {
                i0: sample,
                i1: sample,
                alpha: 0.0,
            },
            defaults,
            out,
        )
    }
}

/// The live requests from the tests' arguments: a decode context always
/// decodes from the clip's static pose, through [`VbrClip::decode_viewed`].
#[cfg(test)]
impl VbrClip<'_> {
    /// Joints `joints` as a context decodes them from the static pose of
    /// `defaults`, seeking through `index` when given (false if it is
    /// another clip's), else walking.
    #[must_use]
    pub(crate) fn joints_for_test(
        &self,
        index: Option<&VbrIndex>,
        pos: SamplePosition,
        defaults: &[Transform],
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        let mut stat = vec![Transform::IDENTITY; self.joint_count];
        self.static_pose(defaults, &mut stat)
            && self.static_for_test(index, VbrRequest::Joints(joints), pos, &stat, out)
    }

    /// `request` from the static pose `stat`, through a fresh segment
    /// cache.
    #[must_use]
    pub(crate) fn static_for_test(
        &self,
        index: Option<&VbrIndex>,
        request: VbrRequest<'_>,
        pos: SamplePosition,
        stat: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        let mut cache = SegmentCache::default();
        self.decode_cached(request, index, &mut cache, pos, stat, out)
    }
}

/// Where a view's counts end and its sections begin (the layout test of
/// `DecodeContext` places them).
#[cfg(test)]
pub(crate) const VIEW_COUNTS_END: usize = std::mem::offset_of!(VbrClip<'static>, types);
