//! The decode loops: locating samples, reading track parameters and
//! samples, and walking the joints.

use super::batch::{PendingRotation, RotationBatch};
use super::format::*;
use super::simd::{
    fields3, load_f32x3, load_u64, prefetch, prefetch_transforms, read_u32, rotation_codes, u16x3,
    u8x3,
};
use super::VbrClip;
#[cfg(doc)]
use crate::math::nlerp_shortest;
use crate::math::{Quat, Transform, Vec3, Vec3A};
use crate::timing::SamplePosition;

/// What decoding needs of a rate byte, looked up rather than branched on
/// (the rates of a track change from segment to segment, so branches on
/// them mispredict under random access).
#[derive(Clone, Copy, Debug)]
struct RateInfo {
    /// Bits per component: 0 (segment constant), 3..=19, or 32 (raw).
    bits: u8,
    /// Bytes of the track's segment range entry: 6, or 0 if it has none.
    range_bytes: u8,
    /// Segment constant: the range entry holds the value as three u16 codes.
    constant: bool,
}

/// Per type byte (6 bits): bit k set if track k (rotation, translation,
/// scale) is animated. The static-pose decode skips joints where it is 0.
const ANIMATED_TRACKS: [u8; 64] = {
    let mut t = [0u8; 64];
    let mut b = 0;
    while b < 64 {
        let mut k = 0;
        while k < 3 {
            if (b >> (2 * k)) & 3 == KIND_ANIMATED as usize {
                t[b] |= 1 << k;
            }
            k += 1;
        }
        b += 1;
    }
    t
};

/// [`RateInfo`] of every 6-bit rate byte (validated bytes have bits 6-7 clear).
const RATE_INFO: [RateInfo; 64] = {
    let mut t = [RateInfo {
        bits: 0,
        range_bytes: 0,
        constant: false,
    }; 64];
    let mut r = 0;
    while r < 64 {
        let id = r & RATE_ID_MASK as usize;
        let unranged = r & RATE_UNRANGED as usize != 0;
        t[r] = if id == RATE_CONSTANT as usize {
            RateInfo {
                bits: 0,
                range_bytes: SEGMENT_RANGE_BYTES as u8,
                constant: true,
            }
        } else if id >= RATE_RAW as usize {
            RateInfo {
                bits: 32,
                range_bytes: 0,
                constant: false,
            }
        } else {
            RateInfo {
                bits: RATE_BITS[id] as u8,
                range_bytes: if unranged {
                    0
                } else {
                    SEGMENT_RANGE_BYTES as u8
                },
                constant: false,
            }
        };
        r += 1;
    }
    t
};
/// `bits` (<= 32) bits at absolute bit position `pos` of `b`.
#[inline]
fn read_bits(b: &[u8], pos: usize, bits: u32) -> u32 {
    let v = load_u64(b, pos >> 3) >> (pos & 7);
    (v & ((1u64 << bits) - 1)) as u32
}
/// Where a sample lives inside `data`.
#[derive(Clone, Copy, Debug)]
pub(super) struct SampleRef {
    /// Byte offset of the segment's rate bytes.
    rates: usize,
    /// Byte offset of the segment's first range entry.
    ranges: usize,
    /// Absolute bit position of the sample's first track.
    bit: usize,
    /// Bits of one sample row of the segment.
    row_bits: usize,
}

/// Reconstruction parameters of one animated track in one segment.
#[derive(Clone, Copy, Debug)]
struct TrackParams {
    /// 0 (segment constant: `bias`), 3..=19, or 32 (raw).
    bits: u32,
    bias: Vec3A,
    scale: Vec3A,
    /// `1 / (2^bits - 1)`.
    inv: f32,
}
/// Walk state over joints: byte offsets into the constants and the clip
/// ranges, the animated track index, and per sample the running segment
/// range offset and bit position.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cursor {
    joint: usize,
    constant: usize,
    clip_range: usize,
    track: usize,
    range0: usize,
    range1: usize,
    bit0: usize,
    bit1: usize,
}

/// [`Pair`] as const generic parameters of the decode loops.
pub(super) const PAIR_ONE: u8 = 0;
pub(super) const PAIR_SAME_SEGMENT: u8 = 1;
pub(super) const PAIR_TWO_SEGMENTS: u8 = 2;

/// How the second sample relates to the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Pair {
    /// Only sample 0 is decoded.
    One,
    /// Both samples, in the same segment (parameters shared).
    SameSegment,
    /// Both samples, in different segments.
    TwoSegments,
}

impl<'a> VbrClip<'a> {
    /// First sample of segment `s` (`s <= segments`).
    #[inline]
    pub fn segment_start(&self, s: u32) -> u32 {
        s * self.seg_len + s.min(self.seg_long)
    }

    /// Segment holding `sample` (< num_samples, and at least one segment).
    #[inline]
    pub(super) fn segment_of(&self, sample: u32) -> u32 {
        let long_end = self.seg_long * (self.seg_len + 1);
        if sample < long_end {
            sample / (self.seg_len + 1)
        } else {
            self.seg_long + (sample - long_end) / self.seg_len.max(1)
        }
    }

    #[inline]
    fn sample_ref(&self, sample: u32) -> SampleRef {
        if self.segments == 0 {
            return SampleRef {
                rates: 0,
                ranges: 0,
                bit: 0,
                row_bits: 0,
            };
        }
        let s = self.segment_of(sample).min(self.segments - 1);
        let e = s as usize * SEGMENT_ENTRY_BYTES;
        let block = read_u32(self.table, e) as usize;
        let row_bits = read_u32(self.table, e + 4) as usize;
        let start = self.segment_start(s);
        let len = (self.segment_start(s + 1) - start) as usize;
        let local = sample.saturating_sub(start) as usize;
        let samples = block + self.animated;
        SampleRef {
            rates: block,
            ranges: samples + (len * row_bits).div_ceil(8),
            bit: samples * 8 + local * row_bits,
            row_bits,
        }
    }

    /// Issue prefetches for every line decoding `s0` (and `s1`) touches in
    /// the segment data: the rate bytes, the sample rows and the range
    /// entries (at most one per animated track).
    #[inline(always)]
    fn prefetch_segment(&self, s: &SampleRef) {
        let d = self.data;
        prefetch(d, s.rates, self.animated);
        prefetch(d, s.bit >> 3, s.row_bits.div_ceil(8) + 1);
        prefetch(d, s.ranges, self.animated * SEGMENT_RANGE_BYTES);
    }

    /// Clip range (min, extent) of the animated track whose entry starts at
    /// `at` in the clip ranges (advanced past it).
    #[inline(always)]
    fn clip_range(&self, rotation: bool, at: &mut usize) -> (Vec3A, Vec3A) {
        let r = self.ranges;
        if rotation {
            let (m, e) = rotation_codes(r, *at);
            *at += ROTATION_CLIP_RANGE_BYTES;
            // Lane-wise exactly `rotation_clip_range`.
            (
                m * ROTATION_RANGE_STEP - Vec3A::ONE,
                e * ROTATION_RANGE_STEP,
            )
        } else {
            let v = (load_f32x3(r, *at), load_f32x3(r, *at + 12));
            *at += VECTOR_CLIP_RANGE_BYTES;
            v
        }
    }

    /// Reconstruction parameters of an animated track with rate byte `rate`
    /// and clip range `(cmin, cext)`; `range` is the segment's range
    /// cursor (advanced past the track's entry if it has one). The three
    /// cases share one formula, `bias = cmin + cext * (lo * k)` and
    /// `scale = cext * (hi * (1/255))`: ranged tracks read `lo`, `hi` from
    /// their 8-bit entry (k = 1/255), unranged ones use 0 and 255, and a
    /// segment constant reads its 16-bit value as `lo` (k = 1/65535) with
    /// `hi = 0`; those are exactly the specified operations.
    #[inline(always)]
    fn params(&self, rate: u8, cmin: Vec3A, cext: Vec3A, range: &mut usize) -> TrackParams {
        let info = RATE_INFO[(rate & 63) as usize];
        // Every range entry is followed by at least 8 bytes (more data or
        // the padding), and a cursor without an entry sits at most at the
        // padding, so the load stays in bounds.
        let w = load_u64(self.data, *range);
        *range += info.range_bytes as usize;
        let (lo, k, hi) = if info.constant {
            (u16x3(w), INV_65535, Vec3A::ZERO)
        } else if info.range_bytes == 0 {
            (Vec3A::ZERO, INV_255, Vec3A::splat(255.0))
        } else {
            (u8x3(w), INV_255, u8x3(w >> 24))
        };
        TrackParams {
            bits: info.bits as u32,
            bias: cmin + cext * (lo * k),
            scale: cext * (hi * INV_255),
            inv: INV_BITS[(info.bits & 63) as usize],
        }
    }

    /// One vector sample at bit position `bit` (advanced). A segment
    /// constant (0 bits) reads zero fields and gives `bias + 0`.
    #[inline(always)]
    fn vec_sample(&self, p: &TrackParams, bit: &mut usize) -> Vec3A {
        if p.bits == 32 {
            let d = self.data;
            let v = Vec3A::new(
                f32::from_bits(read_bits(d, *bit, 32)),
                f32::from_bits(read_bits(d, *bit + 32, 32)),
                f32::from_bits(read_bits(d, *bit + 64, 32)),
            );
            *bit += 96;
            return v;
        }
        // 3 * 19 bits + 7 bits of shift fit one 64-bit load.
        let word = load_u64(self.data, *bit >> 3) >> (*bit & 7);
        let b = (p.bits as usize).min(19);
        let q = fields3(word, b);
        *bit += 3 * b;
        p.bias + p.scale * (q * p.inv)
    }

    /// One rotation sample (w rebuilt later by the batch) at bit position
    /// `bit` (advanced).
    #[inline(always)]
    fn rot_sample(&self, p: &TrackParams, bit: &mut usize) -> PendingRotation {
        if p.bits == 32 {
            let d = self.data;
            let q = Quat::from_xyzw(
                f32::from_bits(read_bits(d, *bit, 32)),
                f32::from_bits(read_bits(d, *bit + 32, 32)),
                f32::from_bits(read_bits(d, *bit + 64, 32)),
                f32::from_bits(read_bits(d, *bit + 96, 32)),
            );
            *bit += 128;
            return PendingRotation::full(q);
        }
        PendingRotation::xyz(self.vec_sample(p, bit))
    }

    /// Advance the cursor past one animated track of one sample.
    #[inline]
    fn skip_track(
        &self,
        rates: usize,
        track: usize,
        rot: bool,
        range: &mut usize,
        bit: &mut usize,
    ) {
        let rate = self.data.get(rates + track).copied().unwrap_or(0);
        *bit += track_sample_bits(rate, rot) as usize;
        if has_segment_range(rate) {
            *range += SEGMENT_RANGE_BYTES;
        }
    }

    #[inline(always)]
    fn read_vec3(&self, at: &mut usize) -> Vec3 {
        let v = load_f32x3(self.constants, *at);
        *at += 12;
        Vec3::from(v)
    }

    /// Parameters of the animated track at the cursor for both samples
    /// (advancing the clip range and segment range cursors).
    #[inline(always)]
    fn track_params<const PAIR: u8>(
        &self,
        c: &mut Cursor,
        s0: &SampleRef,
        s1: &SampleRef,
        rotation: bool,
    ) -> (TrackParams, TrackParams) {
        let (cmin, cext) = self.clip_range(rotation, &mut c.clip_range);
        let r0 = self.data.get(s0.rates + c.track).copied().unwrap_or(0);
        let p0 = self.params(r0, cmin, cext, &mut c.range0);
        let p1 = if PAIR == PAIR_TWO_SEGMENTS {
            let r1 = self.data.get(s1.rates + c.track).copied().unwrap_or(0);
            self.params(r1, cmin, cext, &mut c.range1)
        } else {
            p0
        };
        c.track += 1;
        (p0, p1)
    }

    /// The animated rotation track at the cursor: its two samples, w still
    /// to be rebuilt by the blend batch (the second is the first when only
    /// one sample is decoded).
    #[inline(always)]
    fn animated_rotation<const PAIR: u8>(
        &self,
        c: &mut Cursor,
        s0: &SampleRef,
        s1: &SampleRef,
    ) -> (PendingRotation, PendingRotation) {
        let (p0, p1) = self.track_params::<PAIR>(c, s0, s1, true);
        let qa = self.rot_sample(&p0, &mut c.bit0);
        let qb = if PAIR == PAIR_ONE {
            qa
        } else {
            self.rot_sample(&p1, &mut c.bit1)
        };
        (qa, qb)
    }

    /// A translation or scale track of kind `kind` (constant or animated)
    /// at the cursor.
    #[inline(always)]
    fn decode_vector<const PAIR: u8>(
        &self,
        c: &mut Cursor,
        s0: &SampleRef,
        s1: &SampleRef,
        alpha: f32,
        kind: u8,
    ) -> Vec3 {
        if kind == KIND_ANIMATED {
            let (p0, p1) = self.track_params::<PAIR>(c, s0, s1, false);
            let va = self.vec_sample(&p0, &mut c.bit0);
            if PAIR == PAIR_ONE {
                Vec3::from(va)
            } else {
                Vec3::from(va.lerp(self.vec_sample(&p1, &mut c.bit1), alpha))
            }
        } else {
            self.read_vec3(&mut c.constant)
        }
    }

    /// Decode the joint at the cursor into `out` and advance the cursor.
    /// Rotations that need the blend go to `batch`, constant ones (which
    /// only need normalizing) to `constants` (output slot `slot`). Returns
    /// whether a rotation was queued (only then can a batch be full).
    #[allow(clippy::too_many_arguments)]
    #[inline(always)]
    fn decode_joint<const PAIR: u8>(
        &self,
        c: &mut Cursor,
        s0: &SampleRef,
        s1: &SampleRef,
        alpha: f32,
        default: &Transform,
        out: &mut Transform,
        batch: &mut RotationBatch,
        constants: &mut RotationBatch,
        slot: usize,
    ) -> bool {
        let t = self.types.get(c.joint).copied().unwrap_or(0);
        c.joint += 1;
        // The rest pose first, then the tracks that are not default: most
        // joints of most clips have default or constant tracks only, and
        // one 40-byte copy is cheaper than a branch per default track.
        *out = *default;
        if t == 0 {
            return false;
        }
        let queued = match t & 3 {
            KIND_DEFAULT => false,
            KIND_CONSTANT => {
                let v = PendingRotation::xyz(Vec3A::from(self.read_vec3(&mut c.constant)));
                constants.push(slot, v, v);
                true
            }
            KIND_ANIMATED => {
                let (qa, qb) = self.animated_rotation::<PAIR>(c, s0, s1);
                batch.push(slot, qa, qb);
                true
            }
            _ => {
                let v = load_f32x3(self.constants, c.constant);
                let w = f32::from_bits(read_u32(self.constants, c.constant + 12));
                c.constant += 16;
                out.rotation = Quat::from_xyzw(v.x, v.y, v.z, w);
                false
            }
        };
        let kind = (t >> 2) & 3;
        if kind != KIND_DEFAULT {
            out.translation = self.decode_vector::<PAIR>(c, s0, s1, alpha, kind);
        }
        let kind = t >> 4;
        if kind != KIND_DEFAULT {
            out.scale = self.decode_vector::<PAIR>(c, s0, s1, alpha, kind);
        }
        queued
    }

    /// Advance the cursor past one joint without decoding it.
    #[inline]
    fn skip_joint(&self, c: &mut Cursor, s0: &SampleRef, s1: &SampleRef, pair: Pair) {
        let t = self.types.get(c.joint).copied().unwrap_or(0);
        for k in 0..3 {
            match (t >> (2 * k)) & 3 {
                KIND_CONSTANT => c.constant += 12,
                KIND_CONSTANT_FULL => c.constant += 16,
                KIND_ANIMATED => {
                    let rot = k == 0;
                    c.clip_range += if rot {
                        ROTATION_CLIP_RANGE_BYTES
                    } else {
                        VECTOR_CLIP_RANGE_BYTES
                    };
                    self.skip_track(s0.rates, c.track, rot, &mut c.range0, &mut c.bit0);
                    if pair != Pair::One {
                        let mut range1 = c.range1;
                        self.skip_track(s1.rates, c.track, rot, &mut range1, &mut c.bit1);
                        if pair == Pair::TwoSegments {
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

    /// Locate both samples, issue the prefetches and set up the cursor.
    #[inline(always)]
    pub(super) fn start(
        &self,
        pos: SamplePosition,
        defaults: &[Transform],
        out: &[Transform],
        constants: bool,
    ) -> Option<(SampleRef, SampleRef, Pair, Cursor)> {
        if pos.i0 >= self.num_samples || pos.i1 >= self.num_samples {
            return None;
        }
        // Independent of the segment table: start these loads first.
        prefetch(self.types, 0, self.types.len());
        if constants {
            prefetch(self.constants, 0, self.constants.len());
        }
        prefetch(self.ranges, 0, self.ranges.len());
        prefetch_transforms(defaults);
        prefetch_transforms(out);
        let s0 = self.sample_ref(pos.i0);
        let two = pos.i1 != pos.i0 && pos.alpha != 0.0;
        let s1 = if two { self.sample_ref(pos.i1) } else { s0 };
        let pair = if !two {
            Pair::One
        } else if s0.rates == s1.rates {
            Pair::SameSegment
        } else {
            Pair::TwoSegments
        };
        if self.segments != 0 {
            self.prefetch_segment(&s0);
            if pair == Pair::TwoSegments {
                self.prefetch_segment(&s1);
            } else if pair == Pair::SameSegment {
                prefetch(self.data, s1.bit >> 3, s1.row_bits.div_ceil(8) + 1);
            }
        }
        let c = Cursor {
            joint: 0,
            constant: 0,
            clip_range: 0,
            track: 0,
            range0: s0.ranges,
            range1: s1.ranges,
            bit0: s0.bit,
            bit1: s1.bit,
        };
        Some((s0, s1, pair, c))
    }
    #[inline(always)]
    pub(super) fn pose_loop<const PAIR: u8>(
        &self,
        mut c: Cursor,
        s0: &SampleRef,
        s1: &SampleRef,
        alpha: f32,
        defaults: &[Transform],
        out: &mut [Transform],
    ) {
        let mut batch = RotationBatch::new(alpha);
        let mut constants = RotationBatch::new(alpha);
        for i in 0..out.len() {
            let (Some(o), Some(d)) = (out.get_mut(i), defaults.get(i)) else {
                break;
            };
            if self.decode_joint::<PAIR>(&mut c, s0, s1, alpha, d, o, &mut batch, &mut constants, i)
            {
                if batch.full() {
                    batch.flush(out);
                }
                if constants.full() {
                    constants.flush_normalize(out);
                }
            }
        }
        batch.flush(out);
        constants.flush_normalize(out);
    }
    /// Every joint: its static pose, with its animated tracks decoded over
    /// it. The constants cursor is not used: constants are in the static
    /// pose. The copy is interleaved with the decoding (not one copy up
    /// front) so that a cold static pose and cold segment data are waited
    /// for together rather than one after the other.
    #[inline(always)]
    pub(super) fn animated_loop<const PAIR: u8>(
        &self,
        mut c: Cursor,
        s0: &SampleRef,
        s1: &SampleRef,
        alpha: f32,
        static_pose: &[Transform],
        out: &mut [Transform],
    ) {
        let mut batch = RotationBatch::new(alpha);
        for (i, &t) in self.types.iter().enumerate() {
            let (Some(o), Some(p)) = (out.get_mut(i), static_pose.get(i)) else {
                break;
            };
            *o = *p;
            let animated = ANIMATED_TRACKS[(t & 63) as usize];
            if animated == 0 {
                continue;
            }
            if animated & 1 != 0 {
                let (qa, qb) = self.animated_rotation::<PAIR>(&mut c, s0, s1);
                batch.push(i, qa, qb);
            }
            if animated & 2 != 0 {
                o.translation = self.decode_vector::<PAIR>(&mut c, s0, s1, alpha, KIND_ANIMATED);
            }
            if animated & 4 != 0 {
                o.scale = self.decode_vector::<PAIR>(&mut c, s0, s1, alpha, KIND_ANIMATED);
            }
            if batch.full() {
                batch.flush(out);
            }
        }
        batch.flush(out);
    }
    #[allow(clippy::too_many_arguments)]
    pub(super) fn joints_loop<const PAIR: u8>(
        &self,
        c0: Cursor,
        s0: &SampleRef,
        s1: &SampleRef,
        alpha: f32,
        defaults: &[Transform],
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        let pair = match PAIR {
            PAIR_ONE => Pair::One,
            PAIR_SAME_SEGMENT => Pair::SameSegment,
            _ => Pair::TwoSegments,
        };
        let mut batch = RotationBatch::new(alpha);
        let mut constants = RotationBatch::new(alpha);
        let mut c = c0;
        for (i, &j) in joints.iter().enumerate() {
            let j = j as usize;
            if j < c.joint {
                c = c0;
            }
            while c.joint < j {
                self.skip_joint(&mut c, s0, s1, pair);
            }
            let (Some(d), Some(o)) = (defaults.get(j), out.get_mut(i)) else {
                return false;
            };
            if self.decode_joint::<PAIR>(&mut c, s0, s1, alpha, d, o, &mut batch, &mut constants, i)
            {
                if batch.full() {
                    batch.flush(out);
                }
                if constants.full() {
                    constants.flush_normalize(out);
                }
            }
        }
        batch.flush(out);
        constants.flush_normalize(out);
        true
    }
}
