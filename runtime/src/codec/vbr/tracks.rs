//! Reading one track: where a sample's bits and ranges are, a track's
//! reconstruction parameters in a segment, and its sample values. The
//! decode loop (`decode`) walks the joints with these.

use super::format::*;
use super::playback::{CachedTrack, TrackParams};
use super::simd::{
    fields3, fields3_uniform, fields3_uniform2, load_f32x3, prefetch, u16x3, u8x3, Loads,
    PendingRotation,
};
use super::VbrClip;
use crate::math::{Quat, Vec3, Vec3A};
use std::cell::Cell;

/// What decoding needs of a rate byte, looked up rather than branched on
/// (the rates of a track change from segment to segment, so branches on
/// them mispredict under random access). Eight bytes: one load per track.
#[derive(Clone, Copy, Debug)]
#[repr(C, align(8))]
struct RateInfo {
    /// `1 / (2^field - 1)` (`INV_BITS`; 0 for 0 or 32 bits).
    inv: f32,
    /// Bits per component: 0 (segment constant), 3..=19, or 32 (raw).
    bits: u8,
    /// `bits` capped at 19: the field width of a quantized component.
    field: u8,
    /// Bytes of the track's segment range entry: 6, or 0 if it has none.
    range_bytes: u8,
    /// Segment constant: the range entry holds the value as three u16 codes.
    constant: bool,
}

/// [`RateInfo`] of every 6-bit rate byte (validated bytes have bits 6-7 clear).
const RATE_INFO: [RateInfo; 64] = {
    let mut t = [RateInfo {
        inv: 0.0,
        bits: 0,
        field: 0,
        range_bytes: 0,
        constant: false,
    }; 64];
    let mut r = 0;
    while r < 64 {
        let id = r & RATE_ID_MASK as usize;
        let unranged = r & RATE_UNRANGED as usize != 0;
        let (bits, range_bytes, constant) = if id == RATE_CONSTANT as usize {
            (0, SEGMENT_RANGE_BYTES as u8, true)
        } else if id >= RATE_RAW as usize {
            (32, 0, false)
        } else {
            let ranged = if unranged {
                0
            } else {
                SEGMENT_RANGE_BYTES as u8
            };
            (RATE_BITS[id] as u8, ranged, false)
        };
        t[r] = RateInfo {
            inv: INV_BITS[bits as usize],
            bits,
            field: if bits > 19 { 19 } else { bits },
            range_bytes,
            constant,
        };
        r += 1;
    }
    t
};
/// `bits` (<= 32) bits at absolute bit position `pos` of `b`.
#[inline]
fn read_bits<L: Loads>(l: L, b: &[u8], pos: usize, bits: u32) -> u32 {
    let v = l.u64(b, pos >> 3) >> (pos & 7);
    (v & ((1u64 << bits) - 1)) as u32
}
/// Where a sample lives inside `data`.
#[derive(Clone, Copy, Debug)]
pub(super) struct SampleRef {
    /// The segment.
    pub(super) segment: u32,
    /// Byte offset of the segment's rate bytes.
    pub(super) rates: usize,
    /// Byte offset of the segment's first range entry.
    pub(super) ranges: usize,
    /// Absolute bit position of the sample's first track.
    pub(super) bit: usize,
    /// Bits of one sample row of the segment.
    pub(super) row_bits: usize,
}

/// One segment a [`SegmentCache`] holds: its samples `start..end` and its
/// first sample's [`SampleRef`].
#[derive(Clone, Copy, Debug)]
struct CachedSegment {
    start: u32,
    end: u32,
    first: SampleRef,
}

/// The segments a playback context decoded last (at most two: the samples
/// of a blend may straddle a boundary), so that playing on, back or
/// seeking within them does not locate them again. Belongs to one clip
/// (a `DecodeContext` owns it and resets it when rebound); empty at first.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SegmentCache {
    slots: [CachedSegment; 2],
    next: u8,
}

impl Default for SegmentCache {
    fn default() -> Self {
        let empty = CachedSegment {
            start: 0,
            end: 0,
            first: SampleRef {
                segment: 0,
                rates: 0,
                ranges: 0,
                bit: 0,
                row_bits: 0,
            },
        };
        SegmentCache {
            slots: [empty; 2],
            next: 0,
        }
    }
}

/// What a cached walk would use past the cache's end (never: see
/// `track_params`): a segment constant at zero, at the row's start.
const NO_PARAMS: (TrackParams, usize) = (
    TrackParams {
        bits: 0,
        field: 0,
        stored: 0,
        bias: Vec3A::ZERO,
        scale: Vec3A::ZERO,
        inv: 0.0,
    },
    0,
);

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

/// [`Pair`] as const generic parameters of the decode loop, so that the
/// inner loop carries no test of it.
pub(super) const PAIR_ONE: u8 = 0;
pub(super) const PAIR_SAME_SEGMENT: u8 = 1;
pub(super) const PAIR_TWO_SEGMENTS: u8 = 2;
/// Flag on [`PAIR_ONE`] or [`PAIR_SAME_SEGMENT`]: the tracks' parameters
/// and row offsets come from [`Samples::cache`] (whole poses only).
pub(super) const PAIR_CACHED: u8 = 4;
/// Flag on [`PAIR_ONE`] or [`PAIR_SAME_SEGMENT`]: the walk decodes as
/// usual and writes each track's entry of [`Samples::cache`] for `s0`'s
/// segment.
pub(super) const PAIR_FILL: u8 = 8;

/// The [`Pair`] of a `PAIR` parameter, without [`PAIR_CACHED`].
pub(super) const fn pair_kind(pair: u8) -> u8 {
    pair & 3
}

/// The two samples a decode blends (`s1` is `s0` when only one is read)
/// and the blend factor.
#[derive(Clone, Copy, Debug)]
pub(super) struct Samples<'t> {
    pub(super) s0: SampleRef,
    pub(super) s1: SampleRef,
    pub(super) pair: Pair,
    pub(super) alpha: f32,
    /// The instance's cached track parameters for `s0`'s segment (read
    /// only by walks whose `PAIR` has [`PAIR_CACHED`]), else empty.
    pub(super) cache: &'t [Cell<CachedTrack>],
}

/// Walk state over joints: byte offsets into the constants and the clip
/// ranges, the animated track index, and per sample the running segment
/// range offset and bit position.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cursor {
    pub(super) joint: usize,
    /// The joint's type byte when a seek (through the index) made the
    /// cursor; a walk reads the type bytes instead.
    pub(super) kinds: u8,
    pub(super) constant: usize,
    pub(super) clip_range: usize,
    pub(super) track: usize,
    pub(super) range0: usize,
    pub(super) range1: usize,
    pub(super) bit0: usize,
    pub(super) bit1: usize,
}

impl Samples<'_> {
    /// No sample (a request whose joints have no animated track reads
    /// none): only sample 0, at offset 0 of segment 0.
    #[inline(always)]
    pub(super) fn unlocated() -> Samples<'static> {
        let s = SampleRef {
            segment: 0,
            rates: 0,
            ranges: 0,
            bit: 0,
            row_bits: 0,
        };
        Samples {
            s0: s,
            s1: s,
            pair: Pair::One,
            alpha: 0.0,
            cache: &[],
        }
    }
}

impl Cursor {
    /// At joint 0, at the first track of both samples.
    #[inline(always)]
    pub(super) fn new(s: &Samples) -> Cursor {
        Cursor {
            joint: 0,
            kinds: 0,
            constant: 0,
            clip_range: 0,
            track: 0,
            range0: s.s0.ranges,
            range1: s.s1.ranges,
            bit0: s.s0.bit,
            bit1: s.s1.bit,
        }
    }
}

impl<'a> VbrClip<'a> {
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
    pub(super) fn sample_ref(&self, sample: u32) -> SampleRef {
        if self.segments == 0 {
            return SampleRef {
                segment: 0,
                rates: 0,
                ranges: 0,
                bit: 0,
                row_bits: 0,
            };
        }
        let s = self.segment_of(sample).min(self.segments - 1);
        let (block, row_bits) = self.segment_entry(s);
        let start = self.segment_start(s);
        let len = (self.segment_start(s + 1) - start) as usize;
        let local = sample.saturating_sub(start) as usize;
        let samples = block + self.animated as usize;
        SampleRef {
            segment: s,
            rates: block,
            ranges: samples + (len * row_bits).div_ceil(8),
            bit: samples * 8 + local * row_bits,
            row_bits,
        }
    }

    /// [`VbrClip::sample_ref`] through a playback cache: a sample in one of
    /// the two segments it holds costs no division and no segment table
    /// read; otherwise the segment is located and replaces the older one.
    #[inline(always)]
    pub(super) fn sample_ref_cached(&self, cache: &mut SegmentCache, sample: u32) -> SampleRef {
        for slot in &cache.slots {
            if sample >= slot.start && sample < slot.end {
                let mut r = slot.first;
                r.bit += (sample - slot.start) as usize * r.row_bits;
                return r;
            }
        }
        let r = self.sample_ref(sample);
        if self.segments == 0 {
            return r;
        }
        let start = self.segment_start(r.segment);
        let first = SampleRef {
            bit: r.bit - (sample.saturating_sub(start) as usize) * r.row_bits,
            ..r
        };
        let k = usize::from(cache.next & 1);
        if let Some(slot) = cache.slots.get_mut(k) {
            *slot = CachedSegment {
                start,
                end: self.segment_start(r.segment + 1),
                first,
            };
        }
        cache.next ^= 1;
        r
    }

    /// Issue prefetches for every line decoding `s0` (and `s1`) touches in
    /// the segment data: the rate bytes, the sample rows and the range
    /// entries (at most one per animated track).
    #[inline(always)]
    pub(super) fn prefetch_segment(&self, s: &SampleRef) {
        let d = self.data;
        prefetch(d, s.rates, self.animated as usize);
        prefetch(d, s.bit >> 3, s.row_bits.div_ceil(8) + 1);
        prefetch(d, s.ranges, self.animated as usize * SEGMENT_RANGE_BYTES);
    }

    /// Clip range (min, extent) of the animated track whose entry starts at
    /// `at` in the clip ranges (advanced past it).
    #[inline(always)]
    pub(super) fn clip_range<L: Loads>(
        &self,
        l: L,
        rotation: bool,
        at: &mut usize,
    ) -> (Vec3A, Vec3A) {
        let r = self.ranges;
        if rotation {
            let (m, e) = l.rotation_codes(r, *at);
            *at += ROTATION_CLIP_RANGE_BYTES;
            // Lane-wise exactly `rotation_clip_range`.
            (
                (m - Vec3A::splat(ROTATION_RANGE_ZERO)) * ROTATION_RANGE_STEP,
                e * ROTATION_RANGE_STEP,
            )
        } else {
            let v = (l.f32x3(r, *at), l.f32x3(r, *at + 12));
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
    pub(super) fn params<L: Loads>(
        &self,
        l: L,
        rate: u8,
        (cmin, cext): (Vec3A, Vec3A),
        range: &mut usize,
    ) -> TrackParams {
        let info = RATE_INFO[(rate & 63) as usize];
        // Components with a zero clip extent store no bits (`component_stored`).
        let stored = cext.cmpne(Vec3A::ZERO).bitmask();
        // Only a track with a range entry loads one: an unranged track's
        // cursor may sit at the end of the data (the segment ranges come
        // last), where a load takes the slow tail side. The last entries of
        // the last segment still do; bytes past the end read as zero.
        let (lo, k, hi) = if info.range_bytes == 0 {
            (Vec3A::ZERO, INV_255, Vec3A::splat(255.0))
        } else {
            let w = l.u64(self.data, *range);
            *range += info.range_bytes as usize;
            if info.constant {
                (u16x3(w), INV_65535, Vec3A::ZERO)
            } else {
                (u8x3(w), INV_255, u8x3(w >> 24))
            }
        };
        TrackParams {
            bits: info.bits as u32,
            field: u32::from(info.field),
            stored,
            bias: cmin + cext * (lo * k),
            scale: cext * (hi * INV_255),
            inv: info.inv,
        }
    }

    /// One vector sample at bit position `bit` (advanced). A segment
    /// constant (0 bits) reads zero fields and gives `bias + 0`. `UNIFORM`:
    /// every component is stored (`p.stored == 7`), the common case, which
    /// the track tests once for both of its samples.
    #[inline(always)]
    fn vec_sample<L: Loads, const UNIFORM: bool>(
        &self,
        l: L,
        p: &TrackParams,
        bit: &mut usize,
    ) -> Vec3A {
        if p.bits == 32 {
            let d = self.data;
            let v = Vec3A::new(
                f32::from_bits(read_bits(l, d, *bit, 32)),
                f32::from_bits(read_bits(l, d, *bit + 32, 32)),
                f32::from_bits(read_bits(l, d, *bit + 64, 32)),
            );
            *bit += 96;
            return v;
        }
        let word = self.sample_word(l, *bit);
        let b = p.field as usize;
        let q = if UNIFORM {
            *bit += 3 * b;
            fields3_uniform(word, b)
        } else {
            let w = |k: u32| b * ((p.stored >> k) & 1) as usize;
            let (bx, by, bz) = (w(0), w(1), w(2));
            *bit += bx + by + bz;
            fields3(word, bx, by, bz)
        };
        p.bias + p.scale * (q * p.inv)
    }

    /// The sample bits at bit position `bit`, in the low bits of a word:
    /// 3 * 19 bits + 7 bits of shift fit one 64-bit load.
    #[inline(always)]
    fn sample_word<L: Loads>(&self, l: L, bit: usize) -> u64 {
        l.u64(self.data, bit >> 3) >> (bit & 7)
    }

    /// Both samples of a track in one segment, every component stored
    /// and quantized (not raw: the caller tests `p.bits != 32`): the two
    /// words extracted together ([`fields3_uniform2`]); the same values
    /// as two [`VbrClip::vec_sample`] calls.
    #[inline(always)]
    fn vec_samples_shared<L: Loads>(
        &self,
        l: L,
        p: &TrackParams,
        bit0: &mut usize,
        bit1: &mut usize,
    ) -> (Vec3A, Vec3A) {
        let (w0, w1) = (self.sample_word(l, *bit0), self.sample_word(l, *bit1));
        let b = p.field as usize;
        *bit0 += 3 * b;
        *bit1 += 3 * b;
        let (q0, q1) = fields3_uniform2(w0, w1, b);
        (
            p.bias + p.scale * (q0 * p.inv),
            p.bias + p.scale * (q1 * p.inv),
        )
    }

    /// One rotation sample (w rebuilt later by the batch) at bit position
    /// `bit` (advanced).
    #[inline(always)]
    fn rot_sample<L: Loads, const UNIFORM: bool>(
        &self,
        l: L,
        p: &TrackParams,
        bit: &mut usize,
    ) -> PendingRotation {
        if p.bits == 32 {
            let d = self.data;
            let q = Quat::from_xyzw(
                f32::from_bits(read_bits(l, d, *bit, 32)),
                f32::from_bits(read_bits(l, d, *bit + 32, 32)),
                f32::from_bits(read_bits(l, d, *bit + 64, 32)),
                f32::from_bits(read_bits(l, d, *bit + 96, 32)),
            );
            *bit += 128;
            return PendingRotation::full(q);
        }
        PendingRotation::xyz(self.vec_sample::<L, UNIFORM>(l, p, bit))
    }

    /// Advance the cursor past one animated track of one sample (`stored`:
    /// its components with sample bits, `stored_components`).
    #[inline]
    pub(super) fn skip_track(
        &self,
        rates: usize,
        (track, rot, stored): (usize, bool, u32),
        range: &mut usize,
        bit: &mut usize,
    ) {
        let rate = self.data.get(rates + track).copied().unwrap_or(0);
        *bit += track_sample_bits(rate, rot, stored) as usize;
        if has_segment_range(rate) {
            *range += SEGMENT_RANGE_BYTES;
        }
    }

    #[inline(always)]
    pub(super) fn read_vec3(&self, at: &mut usize) -> Vec3 {
        let v = load_f32x3(self.constants, *at);
        *at += 12;
        Vec3::from(v)
    }

    /// Parameters of the animated track at the cursor for both samples
    /// (advancing the clip range and segment range cursors).
    #[inline(always)]
    fn track_params<L: Loads, const PAIR: u8>(
        &self,
        l: L,
        c: &mut Cursor,
        s: &Samples,
        rotation: bool,
    ) -> (TrackParams, TrackParams) {
        if PAIR & PAIR_CACHED != 0 {
            // The walk visits the animated tracks in order, one entry each:
            // `c.track` < the cache's length (the clip's animated count).
            let (p, off) = s.cache.get(c.track).map_or(NO_PARAMS, |e| e.get().params());
            c.bit0 = s.s0.bit + off;
            c.bit1 = s.s1.bit + off;
            c.track += 1;
            return (p, p);
        }
        let clip = self.clip_range(l, rotation, &mut c.clip_range);
        let r0 = l.byte(self.data, s.s0.rates + c.track);
        let p0 = self.params(l, r0, clip, &mut c.range0);
        if PAIR & PAIR_FILL != 0 {
            if let Some(e) = s.cache.get(c.track) {
                e.set(CachedTrack::new(&p0, c.bit0 - s.s0.bit));
            }
        }
        let p1 = if pair_kind(PAIR) == PAIR_TWO_SEGMENTS {
            let r1 = l.byte(self.data, s.s1.rates + c.track);
            self.params(l, r1, clip, &mut c.range1)
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
    pub(super) fn animated_rotation<L: Loads, const PAIR: u8>(
        &self,
        l: L,
        c: &mut Cursor,
        s: &Samples,
    ) -> (PendingRotation, PendingRotation) {
        let (p0, p1) = self.track_params::<L, PAIR>(l, c, s, true);
        // Both samples share the clip range, hence `stored`: one test.
        if p0.stored == 7 {
            self.rotation_pair::<L, PAIR, true>(l, c, (&p0, &p1))
        } else {
            self.rotation_pair::<L, PAIR, false>(l, c, (&p0, &p1))
        }
    }

    #[inline(always)]
    fn rotation_pair<L: Loads, const PAIR: u8, const UNIFORM: bool>(
        &self,
        l: L,
        c: &mut Cursor,
        (p0, p1): (&TrackParams, &TrackParams),
    ) -> (PendingRotation, PendingRotation) {
        if pair_kind(PAIR) == PAIR_SAME_SEGMENT && UNIFORM && p0.bits != 32 {
            let (a, b) = self.vec_samples_shared(l, p0, &mut c.bit0, &mut c.bit1);
            return (PendingRotation::xyz(a), PendingRotation::xyz(b));
        }
        let qa = self.rot_sample::<L, UNIFORM>(l, p0, &mut c.bit0);
        let qb = if pair_kind(PAIR) == PAIR_ONE {
            qa
        } else {
            self.rot_sample::<L, UNIFORM>(l, p1, &mut c.bit1)
        };
        (qa, qb)
    }

    /// The animated translation or scale track at the cursor, blended.
    #[inline(always)]
    pub(super) fn animated_vector<L: Loads, const PAIR: u8>(
        &self,
        l: L,
        c: &mut Cursor,
        s: &Samples,
    ) -> Vec3 {
        let (p0, p1) = self.track_params::<L, PAIR>(l, c, s, false);
        if p0.stored == 7 {
            self.vector_pair::<L, PAIR, true>(l, c, s.alpha, (&p0, &p1))
        } else {
            self.vector_pair::<L, PAIR, false>(l, c, s.alpha, (&p0, &p1))
        }
    }

    #[inline(always)]
    fn vector_pair<L: Loads, const PAIR: u8, const UNIFORM: bool>(
        &self,
        l: L,
        c: &mut Cursor,
        alpha: f32,
        (p0, p1): (&TrackParams, &TrackParams),
    ) -> Vec3 {
        if pair_kind(PAIR) == PAIR_SAME_SEGMENT && UNIFORM && p0.bits != 32 {
            let (a, b) = self.vec_samples_shared(l, p0, &mut c.bit0, &mut c.bit1);
            return Vec3::from(a.lerp(b, alpha));
        }
        let va = self.vec_sample::<L, UNIFORM>(l, p0, &mut c.bit0);
        if pair_kind(PAIR) == PAIR_ONE {
            Vec3::from(va)
        } else {
            Vec3::from(va.lerp(self.vec_sample::<L, UNIFORM>(l, p1, &mut c.bit1), alpha))
        }
    }
}
