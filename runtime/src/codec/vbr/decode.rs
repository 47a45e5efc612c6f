//! The decode loop: one walk over the joints, generic over an output
//! policy that says which joint each output slot receives and which
//! tracks are already in the base pose.
//!
//! Adapted idea (Nicholas Frechette, Animation Compression Library): ACL
//! decompresses through a caller-supplied `track_writer` that decides the
//! output layout and which default sub-tracks to skip, so one decode loop
//! serves full poses, sparse requests and custom layouts. Here the three
//! requests the runtime offers (a full pose, a pose over a static pose, a
//! joint subset) are [`OutputPolicy`] types whose choices are associated
//! constants; the loop is monomorphized per policy and per sample pairing,
//! so a choice costs no test at run time.

use super::batch::RotationBatch;
use super::format::{
    has_animated, stored_components, ROTATION_CLIP_RANGE_BYTES, VECTOR_CLIP_RANGE_BYTES,
};
use super::format::{KIND_ANIMATED, KIND_CONSTANT, KIND_CONSTANT_FULL, KIND_DEFAULT};
use super::index::IndexView;
use super::playback::{row_fits, CacheView};
use super::simd::PendingRotation;
use super::simd::{
    load_f32x3, prefetch, prefetch_small, prefetch_transform, prefetch_transforms, read_u32,
    Checked, Loads, Unchecked,
};
use super::tracks::{
    pair_kind, Cursor, Pair, Samples, SegmentCache, PAIR_CACHED, PAIR_FILL, PAIR_ONE,
    PAIR_SAME_SEGMENT, PAIR_TWO_SEGMENTS,
};
use super::VbrClip;
use crate::math::{Quat, Transform, Vec3A};
use crate::timing::SamplePosition;

/// What a decode writes where. Implementations are the three requests of
/// [`VbrClip`]; the loop reads only these constants and methods.
pub(super) trait OutputPolicy {
    /// Output slot `k` receives joint `k`, for every joint in order: the
    /// walk never seeks, and the output is prefetched.
    const EVERY_JOINT: bool;
    /// The base pose already holds every track that is not animated (a
    /// static pose): default and constant tracks are skipped.
    const ANIMATED_ONLY: bool;
    /// Number of output slots, given the clip's joint count.
    fn slots(&self, joint_count: usize) -> usize;
    /// The joint output slot `slot` receives.
    fn joint(&self, slot: usize) -> usize;
    /// Whether every joint the policy names is below `joint_count`.
    fn joints_valid(&self, joint_count: usize) -> bool;
    /// Length `out` must have (the slot count unless overridden).
    #[inline(always)]
    fn out_len(&self, joint_count: usize) -> usize {
        self.slots(joint_count)
    }
    /// Where in `out` slot `slot` (joint `joint`) is written.
    #[inline(always)]
    fn out_slot(&self, slot: usize, _joint: usize) -> usize {
        slot
    }
    /// The index that lets a subset seek each joint directly (None: walk).
    #[inline(always)]
    fn index(&self) -> Option<IndexView<'_>> {
        None
    }
}

/// Every joint, from the rest pose (or any defaults).
pub(super) struct FullPose;

/// Every joint, from the clip's static pose: only animated tracks decoded.
pub(super) struct StaticFill;

/// The listed joints (any order, repeats allowed), from the defaults or,
/// with `ANIMATED`, from the static pose; seeking each joint through the
/// index when there is one, else walking to it. Joint `joints[k]` goes to
/// `out[k]`, or with `POSE` to `out[joints[k]]` (a pose-sized output).
pub(super) struct JointSubset<'j, const ANIMATED: bool, const POSE: bool> {
    pub(super) joints: &'j [u32],
    pub(super) index: Option<IndexView<'j>>,
}

/// The dense policies: every joint, slot `k` is joint `k`; they differ
/// only in what a slot starts from.
macro_rules! dense_policy {
    ($policy:ty, animated_only: $animated:expr) => {
        impl OutputPolicy for $policy {
            const EVERY_JOINT: bool = true;
            const ANIMATED_ONLY: bool = $animated;
            #[inline(always)]
            fn slots(&self, joint_count: usize) -> usize {
                joint_count
            }
            #[inline(always)]
            fn joint(&self, slot: usize) -> usize {
                slot
            }
            #[inline(always)]
            fn joints_valid(&self, _: usize) -> bool {
                true
            }
        }
    };
}

dense_policy!(FullPose, animated_only: false);
dense_policy!(StaticFill, animated_only: true);

impl<const ANIMATED: bool, const POSE: bool> OutputPolicy for JointSubset<'_, ANIMATED, POSE> {
    const EVERY_JOINT: bool = false;
    const ANIMATED_ONLY: bool = ANIMATED;
    #[inline(always)]
    fn slots(&self, _: usize) -> usize {
        self.joints.len()
    }
    #[inline(always)]
    fn out_len(&self, joint_count: usize) -> usize {
        if POSE {
            joint_count
        } else {
            self.joints.len()
        }
    }
    #[inline(always)]
    fn out_slot(&self, slot: usize, joint: usize) -> usize {
        if POSE {
            joint
        } else {
            slot
        }
    }
    #[inline(always)]
    fn joint(&self, slot: usize) -> usize {
        self.joints.get(slot).map_or(0, |&j| j as usize)
    }
    fn joints_valid(&self, joint_count: usize) -> bool {
        self.joints.iter().all(|&j| (j as usize) < joint_count)
    }
    #[inline(always)]
    fn index(&self) -> Option<IndexView<'_>> {
        self.index
    }
}

/// Per type byte (6 bits): the same byte with every track kind that is not
/// animated cleared to default, which is how [`OutputPolicy::ANIMATED_ONLY`]
/// walks see a joint (a joint without animated tracks reads as 0).
const ANIMATED_ONLY_TYPE: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut b = 0;
    while b < 64 {
        let mut k = 0;
        while k < 3 {
            if (b >> (2 * k)) & 3 == KIND_ANIMATED as usize {
                t[b] |= KIND_ANIMATED << (2 * k);
            }
            k += 1;
        }
        b += 1;
    }
    t
};

/// Joints an indexed subset seeks (and keeps the cursors of) before
/// decoding them: a fixed stack array, so larger subsets go in chunks.
const SEEK_CHUNK: usize = 16;

/// The rotation queues of a walk: blends of animated rotations, and
/// constant rotations (which only need normalizing).
struct Walk {
    blend: RotationBatch,
    constant: RotationBatch,
}

/// The two rotation queues of a walk: blends of animated rotations, and
/// constant rotations (which only need normalizing; unused under
/// [`OutputPolicy::ANIMATED_ONLY`]).
struct Rotations<'r> {
    blend: &'r mut RotationBatch,
    constant: &'r mut RotationBatch,
}

impl<'a> VbrClip<'a> {
    /// Decode `pos` into `out` through `policy`, starting every slot from
    /// `base[policy.joint(slot)]`, with the samples located through
    /// `cache` (a playback context's cached segments) if there is one, else by
    /// [`VbrClip::sample_ref`]. A cache, not a closure: the closure was
    /// compiled out of line (a call and a returned struct per sample).
    /// The same body is compiled for every instruction-set level
    /// (`isa`).
    #[inline(always)]
    pub(super) fn decode_body<P: OutputPolicy>(
        &self,
        policy: &P,
        pos: SamplePosition,
        base: &[Transform],
        out: &mut [Transform],
        cache: Option<&mut SegmentCache>,
        tracks: Option<&mut CacheView<'_, '_>>,
    ) -> bool {
        if base.len() != self.joint_count
            || out.len() != policy.out_len(self.joint_count)
            || !policy.joints_valid(self.joint_count)
        {
            return false;
        }
        if let (false, Some(index)) = (P::EVERY_JOINT, policy.index()) {
            if policy.slots(self.joint_count) == 1 && index.is_static(policy.joint(0)) {
                // One static joint (a socket): its value needs no sample,
                // so none is located. Even unused, the segment table read
                // was a cold load the decode waited for before it returned.
                if pos.i0 >= self.num_samples || pos.i1 >= self.num_samples {
                    return false;
                }
                if P::ANIMATED_ONLY {
                    // From the static pose: the joint's value is its entry.
                    let j = policy.joint(0);
                    return match (out.get_mut(policy.out_slot(0, j)), base.get(j)) {
                        (Some(o), Some(b)) => {
                            *o = *b;
                            true
                        }
                        _ => false,
                    };
                }
                self.walk::<P, PAIR_ONE>(policy, &Samples::unlocated(), base, out);
                return true;
            }
        }
        // Indexed subsets prefetch per joint (in `walk`), not the whole clip.
        let bulk = P::EVERY_JOINT || policy.index().is_none();
        // An instance's track cache (whole poses only; the caller checked
        // that it fits this clip).
        let tracks = tracks.filter(|_| P::EVERY_JOINT);
        let held = tracks.as_deref().and_then(|t| t.held());
        let Some(s) = self.start(pos, base, !P::ANIMATED_ONLY, bulk, cache, held) else {
            return false;
        };
        if let Some(t) = tracks {
            if self.walk_through_cache(policy, &s, base, out, t) {
                return true;
            }
        }
        match s.pair {
            Pair::One => self.walk::<P, PAIR_ONE>(policy, &s, base, out),
            Pair::SameSegment => self.walk::<P, PAIR_SAME_SEGMENT>(policy, &s, base, out),
            Pair::TwoSegments => self.walk::<P, PAIR_TWO_SEGMENTS>(policy, &s, base, out),
        };
        true
    }

    /// A whole pose through an instance's track cache: read if it holds
    /// the pose's segment, filled if the pose is in a segment next to the
    /// one it holds, in the segment the previous pose was in, or if it
    /// holds none. False (nothing written) otherwise, and for a blend
    /// across a segment boundary: the caller then decodes without it.
    ///
    /// The fill policy is for playback: forward or backward play moves to
    /// a neighbouring segment, a loop's wrap lands twice in a row in its
    /// new segment, while a decode that jumps (a seek, a benchmark's pass
    /// over a long clip) would fill entries it does not come back to, at
    /// the cost of writing them.
    #[inline(always)]
    fn walk_through_cache<P: OutputPolicy>(
        &self,
        policy: &P,
        s: &Samples<'_>,
        base: &[Transform],
        out: &mut [Transform],
        t: &mut CacheView<'_, '_>,
    ) -> bool {
        let segment = s.s0.segment;
        let previous = t.note_segment(segment);
        if s.pair == Pair::TwoSegments {
            return false;
        }
        let held = t.held();
        if held == Some(segment) {
            let s = Samples {
                cache: t.entries(false),
                ..*s
            };
            match s.pair {
                Pair::One => self.walk::<P, { PAIR_ONE | PAIR_CACHED }>(policy, &s, base, out),
                _ => self.walk::<P, { PAIR_SAME_SEGMENT | PAIR_CACHED }>(policy, &s, base, out),
            };
            return true;
        }
        let near = held.is_none_or(|h| h.abs_diff(segment) <= 1) || previous == segment;
        if !near || !row_fits(s.s0.row_bits) {
            return false;
        }
        let s = Samples {
            cache: t.entries(true),
            ..*s
        };
        let done = match s.pair {
            Pair::One => self.walk::<P, { PAIR_ONE | PAIR_FILL }>(policy, &s, base, out),
            _ => self.walk::<P, { PAIR_SAME_SEGMENT | PAIR_FILL }>(policy, &s, base, out),
        };
        if done {
            t.set_held(segment);
        }
        true
    }

    /// Locate both samples and issue the prefetches (the type bytes, the
    /// constants when `constants`, the clip ranges, `base` and the segment
    /// data the samples use). None if the position is out of range.
    ///
    /// The output is not prefetched: its stores wait in the store buffer,
    /// not in the loop, and prefetching it cost a pose 2-3% of its
    /// instructions for no measured gain, whether the output was warm or
    /// as cold as the clip.
    #[inline(always)]
    fn start(
        &self,
        pos: SamplePosition,
        base: &[Transform],
        constants: bool,
        bulk: bool,
        mut cache: Option<&mut SegmentCache>,
        held: Option<u32>,
    ) -> Option<Samples<'static>> {
        if pos.i0 >= self.num_samples || pos.i1 >= self.num_samples {
            return None;
        }
        // The segment table read and the segment data it locates are the
        // decode's longest chain of dependent misses: start it first, and
        // its prefetches before the bulk ones, which would otherwise fill
        // the miss buffers (a static pose is up to dozens of lines) ahead
        // of the lines the walk needs first.
        let mut locate = |i: u32| match cache.as_deref_mut() {
            Some(c) => self.sample_ref_cached(c, i),
            None => self.sample_ref(i),
        };
        let s0 = locate(pos.i0);
        let two = pos.i1 != pos.i0 && pos.alpha != 0.0;
        let s1 = if two { locate(pos.i1) } else { s0 };
        let pair = if !two {
            Pair::One
        } else if s0.rates == s1.rates {
            Pair::SameSegment
        } else {
            Pair::TwoSegments
        };
        // A segment whose tracks an instance's cache holds needs only its
        // sample rows: no rate bytes, range entries or clip ranges.
        let light = held == Some(s0.segment) && pair != Pair::TwoSegments;
        if light {
            // The cached entries were prefetched before the segment was
            // located (`VbrClip::prefetch_held`, from the context).
            prefetch(self.data, s0.bit >> 3, s0.row_bits.div_ceil(8) + 1);
            if pair == Pair::SameSegment {
                prefetch(self.data, s1.bit >> 3, s1.row_bits.div_ceil(8) + 1);
            }
        } else if self.segments != 0 && bulk {
            self.prefetch_segment(&s0);
            if pair == Pair::TwoSegments {
                self.prefetch_segment(&s1);
            } else if pair == Pair::SameSegment {
                prefetch(self.data, s1.bit >> 3, s1.row_bits.div_ceil(8) + 1);
            }
        }
        if bulk {
            prefetch(self.types, 0, self.types.len());
            if constants {
                prefetch(self.constants, 0, self.constants.len());
            }
            if !light {
                prefetch(self.ranges, 0, self.ranges.len());
            }
            prefetch_transforms(base);
        }
        let alpha = if pair == Pair::One { 0.0 } else { pos.alpha };
        Some(Samples {
            s0,
            s1,
            pair,
            alpha,
            cache: &[],
        })
    }

    /// The loop: each slot's joint is copied from `base`, then its tracks
    /// (all that are not default, or only the animated ones) are decoded
    /// over it. The copy is interleaved with the decoding (not one copy up
    /// front) so that a cold base pose and cold segment data are waited
    /// for together rather than one after the other; and one 40-byte copy
    /// is cheaper than a branch per default track.
    #[inline(always)]
    fn walk<P: OutputPolicy, const PAIR: u8>(
        &self,
        policy: &P,
        s: &Samples,
        base: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        let mut w = Walk {
            blend: RotationBatch::new(s.alpha),
            constant: RotationBatch::new(s.alpha),
        };
        // Every-joint walks index three slices by the slot: cut them to the
        // slot count so that the bounds checks fold away.
        let slots = policy.slots(self.joint_count);
        let seen = if P::EVERY_JOINT {
            slots
        } else {
            self.joint_count
        };
        let (Some(types), Some(base)) = (self.types.get(..seen), base.get(..seen)) else {
            return false;
        };
        let done = if let (false, Some(index)) = (P::EVERY_JOINT, policy.index()) {
            self.walk_indexed::<P, PAIR>(policy, index, s, (types, base), out, &mut w);
            true
        } else if P::EVERY_JOINT {
            let l = self.dense_loads();
            self.walk_joints::<P, PAIR, _>(l, policy, s, (types, base), out, &mut w)
        } else {
            self.walk_joints::<P, PAIR, _>(Checked, policy, s, (types, base), out, &mut w)
        };
        w.blend.flush(out);
        if !P::ANIMATED_ONLY {
            w.constant.flush_normalize(out);
        }
        done
    }

    /// The loads of a walk over every joint in order ([`FullPose`],
    /// [`StaticFill`]): unchecked.
    ///
    /// Why every load stays in the slice: the view was made by
    /// [`VbrClip::parse`], which checked that each segment block holds
    /// one rate byte per animated track, then sample rows of exactly the
    /// bits those rates imply (the segment table's sample bits equal their
    /// sum), then one 6-byte range entry per ranged track, and that
    /// [`super::format::SEGMENT_PADDING`] (8) bytes follow the last block.
    /// The samples come from `sample_ref` over this view, or from a
    /// [`SegmentCache`] only this view filled (outside the tests only a
    /// decode context holds one, and it resets it when it binds another
    /// clip). The walk visits the `animated` tracks of the type
    /// bytes once each, in order: it reads rate byte `rates + track`, inside
    /// the block; it advances the bit cursor by the bits the rate implies
    /// for the track's kind and stored components (the same function of
    /// the same bytes as the check), so each sample word starts inside its
    /// row or at its end (a 0-bit track); and it advances the range cursor past the track's entry, so
    /// each entry starts inside the block's entries. An 8-byte load from
    /// inside a block ends at most 8 bytes past it. The clip range cursor
    /// moves by 12 bytes a rotation and 24 a vector, as the type bytes say
    /// (whose kinds fixed the ranges' length), and the view's ranges hold
    /// [`super::format::CLIP_RANGE_SLACK`] bytes more: an entry's 16-byte
    /// loads stay inside them. A cached walk
    /// (`PAIR_CACHED`) sets each track's bit positions from a
    /// [`TrackCache`] entry instead: the row start of its sample plus the
    /// offset the bit cursor had at that track when a filling walk
    /// (`PAIR_FILL`) wrote the entry, over the same segment of a view with
    /// the very same sections, counts and segment table shape (a cache is
    /// used only for the clip it was made for, `TrackCache::fits`, and only
    /// for the segment it holds, set after a filling walk that visited every
    /// track). The positions are the ones the cursor above would reach.
    #[allow(unsafe_code)]
    #[inline(always)]
    fn dense_loads(&self) -> Unchecked {
        // SAFETY: as above, every load of the walk is inside `self.data`.
        unsafe { Unchecked::new() }
    }

    /// The walk over `policy`'s slots from the first joint, seeking
    /// forwards (or restarting) for a subset, with loads `l`.
    #[inline(always)]
    fn walk_joints<P: OutputPolicy, const PAIR: u8, L: Loads>(
        &self,
        l: L,
        policy: &P,
        s: &Samples,
        (types, base): (&[u8], &[Transform]),
        out: &mut [Transform],
        w: &mut Walk,
    ) -> bool {
        let start = Cursor::new(s);
        let mut c = start;
        for slot in 0..policy.slots(self.joint_count) {
            let j = policy.joint(slot);
            if !P::EVERY_JOINT {
                if j < c.joint {
                    c = start;
                }
                while c.joint < j {
                    self.skip_joint::<PAIR>(&mut c, s);
                }
                c.joint += 1;
            }
            if !self.emit::<P, PAIR, L>(l, policy, slot, j, &mut c, false, s, (types, base), out, w)
            {
                return false;
            }
        }
        true
    }

    /// An indexed subset, [`SEEK_CHUNK`] slots at a time: every joint of a
    /// chunk is sought once, its lines prefetched and its cursor kept, then
    /// the chunk is decoded from the kept cursors, so that the misses of
    /// all the joints overlap instead of following one another and no
    /// joint is sought twice. One joint alone is neither kept nor
    /// prefetched: its loads are independent once sought, and the
    /// out-of-order core overlaps them.
    #[inline(always)]
    fn walk_indexed<P: OutputPolicy, const PAIR: u8>(
        &self,
        policy: &P,
        index: IndexView<'_>,
        s: &Samples,
        (types, base): (&[u8], &[Transform]),
        out: &mut [Transform],
        w: &mut Walk,
    ) {
        let slots = policy.slots(self.joint_count);
        if slots == 1 {
            let j = policy.joint(0);
            let mut c = self.seek::<PAIR>(&index, j, s);
            self.emit::<P, PAIR, _>(
                Checked,
                policy,
                0,
                j,
                &mut c,
                true,
                s,
                (types, base),
                out,
                w,
            );
            return;
        }
        let mut cursors = [Cursor::new(s); SEEK_CHUNK];
        let mut first = 0;
        while first < slots {
            let n = (slots - first).min(SEEK_CHUNK);
            for (k, c) in cursors.iter_mut().enumerate().take(n) {
                let j = policy.joint(first + k);
                *c = self.seek::<PAIR>(&index, j, s);
                self.prefetch_joint::<P, PAIR>(c, base.get(j));
            }
            for (k, c) in cursors.iter_mut().enumerate().take(n) {
                let slot = first + k;
                let j = policy.joint(slot);
                if !self.emit::<P, PAIR, _>(
                    Checked,
                    policy,
                    slot,
                    j,
                    c,
                    true,
                    s,
                    (types, base),
                    out,
                    w,
                ) {
                    return;
                }
            }
            first += n;
        }
    }

    /// Output slot `slot` (joint `j`, its tracks at cursor `c`, `sought`
    /// through the index): the base transform, then the joint's tracks
    /// over it, rotations queued in `w`. False if a slot is out of range
    /// (never, once validated).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn emit<P: OutputPolicy, const PAIR: u8, L: Loads>(
        &self,
        l: L,
        policy: &P,
        slot: usize,
        j: usize,
        c: &mut Cursor,
        sought: bool,
        s: &Samples,
        (types, base): (&[u8], &[Transform]),
        out: &mut [Transform],
        w: &mut Walk,
    ) -> bool {
        let o_slot = policy.out_slot(slot, j);
        // A sought cursor carries the joint's type byte (the index's copy).
        let t = if sought { Some(&c.kinds) } else { types.get(j) };
        let (Some(o), Some(&t)) = (out.get_mut(o_slot), t) else {
            return false;
        };
        if let Some(b) = base.get(j) {
            *o = *b;
        } else {
            return false;
        }
        let t = if P::ANIMATED_ONLY {
            ANIMATED_ONLY_TYPE[(t & 63) as usize]
        } else {
            t
        };
        if t == 0 {
            return true;
        }
        let mut rot = Rotations {
            blend: &mut w.blend,
            constant: &mut w.constant,
        };
        self.decode_joint::<P, PAIR, L>(l, c, s, t, o, &mut rot, o_slot);
        if w.blend.full() {
            w.blend.flush(out);
        }
        if !P::ANIMATED_ONLY && w.constant.full() {
            w.constant.flush_normalize(out);
        }
        true
    }

    /// Decode the tracks of a joint with (effective) type byte `t` over
    /// `out`, which holds its base value, and advance the cursor past them.
    /// Rotations are queued in `rot` for output slot `slot`.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn decode_joint<P: OutputPolicy, const PAIR: u8, L: Loads>(
        &self,
        l: L,
        c: &mut Cursor,
        s: &Samples,
        t: u8,
        out: &mut Transform,
        rot: &mut Rotations<'_>,
        slot: usize,
    ) {
        // Under ANIMATED_ONLY every kind that is not default is animated.
        match t & 3 {
            KIND_DEFAULT => {}
            k if P::ANIMATED_ONLY || k == KIND_ANIMATED => {
                let (qa, qb) = self.animated_rotation::<L, PAIR>(l, c, s);
                rot.blend.push(slot, qa, qb, out);
            }
            KIND_CONSTANT => {
                let v = PendingRotation::xyz(Vec3A::from(self.read_vec3(&mut c.constant))).q;
                rot.constant.push_xyz(slot, v, v);
            }
            _ => {
                let v = load_f32x3(self.constants, c.constant);
                let w = f32::from_bits(read_u32(self.constants, c.constant + 12));
                c.constant += 16;
                out.rotation = Quat::from_xyzw(v.x, v.y, v.z, w);
            }
        }
        let kind = (t >> 2) & 3;
        if kind != KIND_DEFAULT {
            out.translation = if P::ANIMATED_ONLY || kind == KIND_ANIMATED {
                self.animated_vector::<L, PAIR>(l, c, s)
            } else {
                self.read_vec3(&mut c.constant)
            };
        }
        let kind = t >> 4;
        if kind != KIND_DEFAULT {
            out.scale = if P::ANIMATED_ONLY || kind == KIND_ANIMATED {
                self.animated_vector::<L, PAIR>(l, c, s)
            } else {
                self.read_vec3(&mut c.constant)
            };
        }
    }

    /// Prefetch the lines joint `c` of an indexed subset will read: its
    /// base transform (`base`, one entry), clip ranges, constants, sample
    /// bits and range entries.
    #[inline(always)]
    fn prefetch_joint<P: OutputPolicy, const PAIR: u8>(
        &self,
        c: &Cursor,
        base: Option<&Transform>,
    ) {
        if let Some(b) = base {
            prefetch_transform(b);
        }
        prefetch_small(self.ranges, c.clip_range, 2 * VECTOR_CLIP_RANGE_BYTES + 12);
        if !P::ANIMATED_ONLY {
            prefetch_small(self.constants, c.constant, 40);
        }
        prefetch_small(self.data, c.bit0 >> 3, 48);
        prefetch_small(self.data, c.range0, 18);
        if pair_kind(PAIR) != PAIR_ONE {
            prefetch_small(self.data, c.bit1 >> 3, 48);
            prefetch_small(self.data, c.range1, 18);
        }
    }

    /// The cursor at joint `j` (subset decodes with an index): its entry,
    /// then, if the joint has an animated track, per segment one
    /// checkpoint and the rate bytes after it. A joint without one (whose
    /// value is its constants or its base) reads no segment data at all:
    /// that saves the seek's two dependent reads, the costliest part of a
    /// cold request for a static joint such as a socket.
    #[inline(always)]
    fn seek<const PAIR: u8>(&self, index: &IndexView<'_>, j: usize, s: &Samples) -> Cursor {
        let (constant, clip_range, track, kinds) = index.joint(j);
        if !has_animated(kinds) {
            return Cursor {
                joint: j + 1,
                kinds,
                constant,
                clip_range,
                track,
                ..Cursor::new(s)
            };
        }
        let rates0 = self.data.get(s.s0.rates..).unwrap_or(&[]);
        let o0 = index.track_offset(s.s0.segment as usize, rates0, track);
        let (range0, bit0) = (s.s0.ranges + o0.range as usize, s.s0.bit + o0.bit as usize);
        let (range1, bit1) = if pair_kind(PAIR) == PAIR_TWO_SEGMENTS {
            let rates1 = self.data.get(s.s1.rates..).unwrap_or(&[]);
            let o1 = index.track_offset(s.s1.segment as usize, rates1, track);
            (s.s1.ranges + o1.range as usize, s.s1.bit + o1.bit as usize)
        } else {
            // Same segment (or one sample): the row offset is shared.
            (range0, s.s1.bit + o0.bit as usize)
        };
        Cursor {
            joint: j + 1,
            kinds,
            constant,
            clip_range,
            track,
            range0,
            range1,
            bit0,
            bit1,
        }
    }

    /// Advance the cursor past one joint without decoding it (subset walks).
    #[inline]
    fn skip_joint<const PAIR: u8>(&self, c: &mut Cursor, s: &Samples) {
        let t = self.types.get(c.joint).copied().unwrap_or(0);
        for k in 0..3 {
            match (t >> (2 * k)) & 3 {
                KIND_CONSTANT => c.constant += 12,
                KIND_CONSTANT_FULL => c.constant += 16,
                KIND_ANIMATED => {
                    let rot = k == 0;
                    let track = (
                        c.track,
                        rot,
                        stored_components(self.ranges, c.clip_range, rot),
                    );
                    c.clip_range += if rot {
                        ROTATION_CLIP_RANGE_BYTES
                    } else {
                        VECTOR_CLIP_RANGE_BYTES
                    };
                    self.skip_track(s.s0.rates, track, &mut c.range0, &mut c.bit0);
                    if pair_kind(PAIR) != PAIR_ONE {
                        // Same segment: sample 1 shares sample 0's ranges.
                        let mut range1 = c.range1;
                        self.skip_track(s.s1.rates, track, &mut range1, &mut c.bit1);
                        if pair_kind(PAIR) == PAIR_TWO_SEGMENTS {
                            c.range1 = range1;
                        }
                    }
                    c.track += 1;
                }
                _ => {}
            }
        }
        c.joint += 1;
    }
}
