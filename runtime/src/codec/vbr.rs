//! Variable-bit-rate clip codec: the decoder, and the bit-exact
//! reconstruction helpers the encoder (`ludus-anim-compress`) reuses so
//! that what it measures is exactly what the runtime produces.
//!
//! The layout is specified in `schemas/codec-vbr.md`. In short: per joint a
//! type byte (default / constant / animated per rotation, translation and
//! scale track), full-precision constants, a per-clip range for every
//! animated track (16-bit codes for rotations, f32 for vectors), a segment
//! table, then per segment one bit-rate byte per animated track, the
//! sample-major bit-packed samples, and the segment ranges of the tracks
//! that use one. Eight zero bytes of padding end the blob so that every
//! 64-bit load inside the sample data is in bounds.
//!
//! Adapted ideas (Nicholas Frechette, Animation Compression Library and his
//! "Animation Compression" blog series): uniform sampling, constant and
//! default track stripping, uniform segmenting, clip and segment range
//! reduction, per-track variable bit rates from a fixed table, rotations
//! stored as a quaternion with w >= 0 and w dropped, and prefetching the
//! lines a pose needs before decoding (ACL's decoder prefetches its
//! per-segment data). The byte layout is ours; it is not ACL's and is not
//! compatible with it.

use super::CodecError;
use crate::math::{nlerp_shortest, Quat, Transform, Vec3, Vec3A};
use crate::timing::SamplePosition;

/// Layout version. 2: 16-bit rotation clip ranges, per track and segment
/// "no segment range" flag in the rate byte, no range bytes for raw
/// tracks, segment ranges after the samples.
pub const VERSION: u16 = 2;

/// Bytes of the fixed header.
pub const HEADER_BYTES: usize = 16;
/// Zero bytes after the last segment so 64-bit loads never run past the end.
pub const PADDING_BYTES: usize = 8;
/// Bytes of the clip range of an animated rotation (u16 min xyz, u16 extent xyz).
pub const ROTATION_CLIP_RANGE_BYTES: usize = 12;
/// Bytes of the clip range of an animated translation or scale (f32 min xyz, f32 extent xyz).
pub const VECTOR_CLIP_RANGE_BYTES: usize = 24;
/// Bytes of one segment table entry (u32 block offset, u32 sample bits).
pub const SEGMENT_ENTRY_BYTES: usize = 8;
/// Bytes of one per-segment range entry of an animated track.
pub const SEGMENT_RANGE_BYTES: usize = 6;

/// Track kinds (two bits each in a joint's type byte).
pub const KIND_DEFAULT: u8 = 0;
pub const KIND_CONSTANT: u8 = 1;
pub const KIND_ANIMATED: u8 = 2;
/// Rotation only: constant stored as four floats (x, y, z, w).
pub const KIND_CONSTANT_FULL: u8 = 3;

/// Bits per component of each bit-rate id. Id 0 stores no sample bits (the
/// value is in the segment range entry); the last id stores raw f32.
pub const RATE_BITS: [u32; 19] = [
    0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 32,
];
pub const NUM_RATES: u8 = RATE_BITS.len() as u8;
/// Segment-constant rate: value = the 3 x u16 stored in the range entry.
pub const RATE_CONSTANT: u8 = 0;
/// Raw rate: f32 bit patterns (rotations keep all four components).
pub const RATE_RAW: u8 = NUM_RATES - 1;
/// Rate byte flag (quantized ids only): the track has no segment range in
/// this segment; it is quantized over its whole clip range. Saves the six
/// range bytes where range reduction does not pay for them.
pub const RATE_UNRANGED: u8 = 0x20;
/// Mask of the rate id in a rate byte.
pub const RATE_ID_MASK: u8 = 0x1f;
/// The segment range an unranged track uses (min 0, extent 255 per component).
pub const FULL_SEGMENT_RANGE: [u8; 6] = [0, 0, 0, 255, 255, 255];

/// Rate id of a rate byte.
#[inline]
pub fn rate_id(rate: u8) -> u8 {
    rate & RATE_ID_MASK
}

/// Whether a (valid) rate byte stores a segment range entry.
#[inline]
pub fn has_segment_range(rate: u8) -> bool {
    let id = rate_id(rate);
    id == RATE_CONSTANT || (id < RATE_RAW && rate & RATE_UNRANGED == 0)
}

/// Whether a rate byte is valid: id in range, reserved bits clear, the
/// unranged flag only on quantized ids.
#[inline]
pub fn rate_is_valid(rate: u8) -> bool {
    let id = rate_id(rate);
    rate >> 6 == 0
        && id < NUM_RATES
        && (rate & RATE_UNRANGED == 0 || (id != RATE_CONSTANT && id != RATE_RAW))
}

/// Sample bits one animated track uses at rate byte `rate` (rotation raw keeps w).
#[inline]
pub fn track_sample_bits(rate: u8, is_rotation: bool) -> u32 {
    let id = rate_id(rate);
    if id == RATE_RAW {
        if is_rotation {
            128
        } else {
            96
        }
    } else {
        RATE_BITS.get(id as usize).copied().unwrap_or(0) * 3
    }
}

/// Reciprocal of the largest integer of each quantized width.
const INV_MAX: [f32; 20] = {
    let mut t = [0.0f32; 20];
    let mut b = 1;
    while b < 20 {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};
const INV_255: f32 = 1.0 / 255.0;
const INV_65535: f32 = 1.0 / 65535.0;

/// `INV_MAX` indexed by any 6-bit width: zero outside 1..=19, so a
/// segment-constant track (0 bits) dequantizes its zero fields to zero.
const INV_BITS: [f32; 64] = {
    let mut t = [0.0f32; 64];
    let mut b = 1;
    while b < 20 {
        t[b] = INV_MAX[b];
        b += 1;
    }
    t
};

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
/// Step of a 16-bit rotation clip range code: `[-1, 1]` in 65535 steps.
pub const ROTATION_RANGE_STEP: f32 = 2.0 / 65535.0;

/// Clip range (min, extent) of one rotation component from its 16-bit
/// codes: `min = m * step - 1`, `extent = e * step`. Rotation components
/// lie in [-1, 1], so 16 bits lose at most 1/32768 of the range bounds
/// while halving the clip range bytes.
#[inline]
pub fn rotation_clip_range(code_min: u16, code_ext: u16) -> (f32, f32) {
    (
        code_min as f32 * ROTATION_RANGE_STEP - 1.0,
        code_ext as f32 * ROTATION_RANGE_STEP,
    )
}

/// Reconstruction of a quantized component is `bias + scale * (q / (2^bits - 1))`
/// with `bias` and `scale` fixed per segment and track. This gives them
/// from the 8-bit segment range and the clip range; the encoder calls it
/// and [`dequantize`] so it measures exactly what the decoder makes.
#[inline]
pub fn segment_bias_scale(seg_min: u8, seg_ext: u8, clip_min: f32, clip_ext: f32) -> (f32, f32) {
    (
        clip_min + clip_ext * (seg_min as f32 * INV_255),
        clip_ext * (seg_ext as f32 * INV_255),
    )
}

/// Dequantize one component at a quantized rate (`bits` in 3..=19).
#[inline]
pub fn dequantize(q: u32, bits: u32, bias: f32, scale: f32) -> f32 {
    bias + scale * (q as f32 * INV_MAX[(bits as usize).min(19)])
}

/// Dequantize one component of a segment-constant (rate 0) track.
#[inline]
pub fn dequantize_constant(v: u16, clip_min: f32, clip_ext: f32) -> f32 {
    clip_min + clip_ext * (v as f32 * INV_65535)
}

/// Rotation from its stored x, y, z with w >= 0 rebuilt as
/// `sqrt(max(0, 1 - x^2 - y^2 - z^2))`. Not normalized: the blend
/// ([`nlerp_shortest`]) normalizes.
#[inline]
pub fn rotation_from_xyz(x: f32, y: f32, z: f32) -> Quat {
    let w2 = 1.0 - (x * x + y * y + z * z);
    Quat::from_xyzw(x, y, z, w2.max(0.0).sqrt())
}

/// The rotation the decoder outputs for a single stored value (what a blend
/// at alpha 0 gives).
#[inline]
pub fn finish_rotation(q: Quat) -> Quat {
    nlerp_shortest(q, q, 0.0)
}

#[inline(always)]
fn read_u32(b: &[u8], at: usize) -> u32 {
    if at < b.len().saturating_sub(3) {
        // SAFETY: `at + 4 <= b.len()`: the four bytes are inside the slice.
        u32::from_le(unsafe { core::ptr::read_unaligned(b.as_ptr().add(at) as *const u32) })
    } else {
        0
    }
}

/// Little-endian 64-bit load; zero if out of bounds (never on a validated
/// view, where padding keeps every load inside the blob). One compare per
/// load: this is the decoder's most frequent check.
#[inline(always)]
fn load_u64(b: &[u8], at: usize) -> u64 {
    if at < b.len().saturating_sub(7) {
        // SAFETY: `at + 8 <= b.len()`: the eight bytes are inside the slice.
        u64::from_le(unsafe { core::ptr::read_unaligned(b.as_ptr().add(at) as *const u64) })
    } else {
        0
    }
}

/// Three little-endian f32 at `at` (lane w unspecified); zeros if out of bounds.
#[inline(always)]
fn load_f32x3(b: &[u8], at: usize) -> Vec3A {
    #[cfg(target_arch = "x86_64")]
    {
        if at < b.len().saturating_sub(15) {
            // SAFETY: `at + 16 <= b.len()`: the unaligned 16-byte load is
            // inside the slice. SSE is part of the x86_64 baseline.
            return Vec3A::from(unsafe {
                core::arch::x86_64::_mm_loadu_ps(b.as_ptr().add(at) as *const f32)
            });
        }
    }
    let f = |i: usize| f32::from_bits(read_u32(b, at + i));
    Vec3A::new(f(0), f(4), f(8))
}

/// `bits` (<= 32) bits at absolute bit position `pos` of `b`.
#[inline]
fn read_bits(b: &[u8], pos: usize, bits: u32) -> u32 {
    let v = load_u64(b, pos >> 3) >> (pos & 7);
    (v & ((1u64 << bits) - 1)) as u32
}

/// Lanes x, y, z: the bytes 0, 1 and 2 of `w` as f32 (exact).
#[inline(always)]
fn u8x3(w: u64) -> Vec3A {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; register-only ops.
        unsafe {
            let z = _mm_setzero_si128();
            let v = _mm_cvtsi64_si128(w as i64);
            let v = _mm_unpacklo_epi16(_mm_unpacklo_epi8(v, z), z);
            Vec3A::from(_mm_cvtepi32_ps(v))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec3A::new(
            (w & 0xff) as f32,
            ((w >> 8) & 0xff) as f32,
            ((w >> 16) & 0xff) as f32,
        )
    }
}

/// Lanes x, y, z: the little-endian u16 at bytes 0, 2 and 4 of `w` as f32 (exact).
#[inline(always)]
fn u16x3(w: u64) -> Vec3A {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; register-only ops.
        unsafe {
            let v = _mm_cvtsi64_si128(w as i64);
            let v = _mm_unpacklo_epi16(v, _mm_setzero_si128());
            Vec3A::from(_mm_cvtepi32_ps(v))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec3A::new(
            (w & 0xffff) as f32,
            ((w >> 16) & 0xffff) as f32,
            ((w >> 32) & 0xffff) as f32,
        )
    }
}

/// Lanes x, y, z: three consecutive `b`-bit fields (b <= 19) of `w` as f32 (exact).
#[inline(always)]
fn fields3(w: u64, b: usize) -> Vec3A {
    let mask = (1u64 << b) - 1;
    let (x, y, z) = (
        (w & mask) as i32,
        ((w >> b) & mask) as i32,
        ((w >> (2 * b)) & mask) as i32,
    );
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; register-only ops.
        unsafe { Vec3A::from(_mm_cvtepi32_ps(_mm_setr_epi32(x, y, z, 0))) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        Vec3A::new(x as f32, y as f32, z as f32)
    }
}

/// The 16-bit min and extent codes (x, y, z lanes as f32, exact) of the
/// rotation clip range entry at `at`: one 16-byte load where the slice
/// allows it, else two 8-byte loads inside the 12-byte entry.
#[inline(always)]
fn rotation_codes(r: &[u8], at: usize) -> (Vec3A, Vec3A) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        if at < r.len().saturating_sub(15) {
            // SAFETY: `at + 16 <= r.len()`: the unaligned load is inside
            // the slice; the rest are SSE2 register operations (x86_64
            // baseline).
            unsafe {
                let v = _mm_loadu_si128(r.as_ptr().add(at) as *const __m128i);
                let z = _mm_setzero_si128();
                let m = _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, z));
                let e = _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_srli_si128::<6>(v), z));
                return (Vec3A::from(m), Vec3A::from(e));
            }
        }
    }
    (u16x3(load_u64(r, at)), u16x3(load_u64(r, at + 4) >> 16))
}

/// Cache line size the prefetches step by.
const LINE: usize = 64;

/// Hint the CPU to start loading `len` bytes of `bytes` from `from`
/// (clamped to the slice). A pure performance hint: results never depend
/// on it. Cold decodes are bound by memory latency; issuing every line a
/// pose needs up front lets the misses overlap instead of queueing behind
/// the dependent reads of the decode loop.
#[inline(always)]
fn prefetch(bytes: &[u8], from: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let end = from.saturating_add(len).min(bytes.len());
        let mut at = from;
        while at < end {
            // SAFETY: `at < bytes.len()`, so the pointer is inside the
            // slice; a prefetch never faults and does not access memory
            // architecturally.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(at) as *const i8) };
            at += LINE;
        }
        if end > from {
            // The last line, when `from` is not line aligned.
            // SAFETY: as above, `end - 1 < bytes.len()`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(end - 1) as *const i8) };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (bytes, from, len);
    }
}

/// [`prefetch`] a slice of transforms (the defaults read, the output written).
#[inline(always)]
fn prefetch_transforms(t: &[Transform]) {
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = core::mem::size_of_val(t);
        let base = t.as_ptr() as *const u8;
        let mut at = 0;
        while at < bytes {
            // SAFETY: `at < size_of_val(t)`: inside the slice's memory.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    base.add(at) as *const i8,
                )
            };
            at += LINE;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = t;
    }
}

/// A validated VBR blob. Every offset it uses was checked by [`VbrClip::parse`].
#[derive(Clone, Copy, Debug)]
pub struct VbrClip<'a> {
    types: &'a [u8],
    constants: &'a [u8],
    ranges: &'a [u8],
    table: &'a [u8],
    /// Segment blocks followed by the padding.
    data: &'a [u8],
    joint_count: usize,
    num_samples: u32,
    animated: usize,
    segments: u32,
    /// Samples in the short segments (`num_samples / segments`).
    seg_len: u32,
    /// Number of leading segments holding one more sample.
    seg_long: u32,
}

fn truncated(what: &'static str) -> CodecError {
    CodecError::Truncated { what }
}
fn invalid(what: &'static str) -> CodecError {
    CodecError::Invalid { what }
}

/// Where a sample lives inside `data`.
#[derive(Clone, Copy, Debug)]
struct SampleRef {
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

/// A rotation waiting in a [`RotationBatch`]: x, y, z, w, with w still to
/// be rebuilt from x, y, z (as [`rotation_from_xyz`]) when `rebuild`.
#[derive(Clone, Copy, Debug)]
struct PendingRotation {
    /// x, y, z and, unless `rebuild`, w (else w is ignored).
    q: Quat,
    rebuild: bool,
}

impl PendingRotation {
    /// Stored x, y, z; w rebuilt in the batch.
    #[inline(always)]
    fn xyz(v: Vec3A) -> Self {
        #[cfg(target_arch = "x86_64")]
        let q = Quat::from_vec4(glam::Vec4::from(core::arch::x86_64::__m128::from(v)));
        #[cfg(not(target_arch = "x86_64"))]
        let q = Quat::from_xyzw(v.x, v.y, v.z, 0.0);
        PendingRotation { q, rebuild: true }
    }
    /// All four components stored.
    #[inline(always)]
    fn full(q: Quat) -> Self {
        PendingRotation { q, rebuild: false }
    }
    /// The rotation [`rotation_from_xyz`] gives (scalar path and tests).
    #[cfg_attr(target_arch = "x86_64", allow(dead_code))]
    #[inline(always)]
    fn quat(&self) -> Quat {
        if self.rebuild {
            rotation_from_xyz(self.q.x, self.q.y, self.q.z)
        } else {
            self.q
        }
    }
}

/// Rotation reconstructions and blends deferred and done four at a time:
/// the w square roots and the normalizing square roots and divisions of
/// neighbouring joints run in SIMD lanes instead of one long scalar
/// dependency chain (they were a fifth of a warm decode). Results are bit
/// for bit [`rotation_from_xyz`] then [`nlerp_shortest`] (same operations
/// in the same order per lane; see the `batch_matches_scalar` test).
struct RotationBatch {
    alpha: f32,
    len: usize,
    index: [usize; ROTATION_BATCH],
    a: [Quat; ROTATION_BATCH],
    b: [Quat; ROTATION_BATCH],
    /// Bit k: entry k of `a` (of `b`) has its w rebuilt.
    rebuild_a: u32,
    rebuild_b: u32,
}

/// Entries per batch: a multiple of 4 (the SIMD width), small because the
/// arrays are initialized on every decode.
const ROTATION_BATCH: usize = 8;

impl RotationBatch {
    #[inline(always)]
    fn new(alpha: f32) -> Self {
        RotationBatch {
            alpha,
            len: 0,
            index: [0; ROTATION_BATCH],
            a: [Quat::IDENTITY; ROTATION_BATCH],
            b: [Quat::IDENTITY; ROTATION_BATCH],
            rebuild_a: 0,
            rebuild_b: 0,
        }
    }

    /// Whether the batch must be flushed before the next push.
    #[inline(always)]
    fn full(&self) -> bool {
        self.len >= ROTATION_BATCH
    }

    /// Queue a blend; the caller flushes when [`RotationBatch::full`]
    /// (a push into a full batch is dropped).
    #[inline(always)]
    fn push(&mut self, index: usize, a: PendingRotation, b: PendingRotation) {
        if let (Some(i), Some(x), Some(y)) = (
            self.index.get_mut(self.len),
            self.a.get_mut(self.len),
            self.b.get_mut(self.len),
        ) {
            *i = index;
            *x = a.q;
            *y = b.q;
            self.rebuild_a |= u32::from(a.rebuild) << self.len;
            self.rebuild_b |= u32::from(b.rebuild) << self.len;
            self.len += 1;
        }
    }

    /// [`RotationBatch::flush`] for a batch of constant rotations, whose
    /// blend with themselves is just the normalization: the same
    /// operations minus the ones whose result is known (`q + (q - q) * t`
    /// is `q`, and `q . q` is never negative), so the results are those of
    /// [`nlerp_shortest`]`(q, q, t)` (up to the sign of zero components).
    #[inline(always)]
    fn flush_normalize(&mut self, out: &mut [Transform]) {
        let n = self.len.min(ROTATION_BATCH);
        let mut k = 0;
        while k < n {
            let Some(a) = self.a.get(k..k + 4) else {
                break;
            };
            let Ok(a) = <&[Quat; 4]>::try_from(a) else {
                break;
            };
            let q = normalize4(a, (self.rebuild_a >> k) & 15);
            let m = (n - k).min(4);
            for (l, q) in q.iter().enumerate().take(m) {
                if let Some(o) = self.index.get(k + l).and_then(|&i| out.get_mut(i)) {
                    o.rotation = *q;
                }
            }
            k += 4;
        }
        self.len = 0;
        self.rebuild_a = 0;
        self.rebuild_b = 0;
    }

    #[inline(always)]
    fn flush(&mut self, out: &mut [Transform]) {
        let n = self.len.min(ROTATION_BATCH);
        // Groups of four straight from the arrays (no copies); lanes past
        // `n` hold stale but valid entries whose results are dropped.
        let mut k = 0;
        while k < n {
            let (Some(a), Some(b)) = (self.a.get(k..k + 4), self.b.get(k..k + 4)) else {
                break;
            };
            let (Ok(a), Ok(b)) = (<&[Quat; 4]>::try_from(a), <&[Quat; 4]>::try_from(b)) else {
                break;
            };
            let ra = (self.rebuild_a >> k) & 15;
            let rb = (self.rebuild_b >> k) & 15;
            let q = blend4(a, b, ra, rb, self.alpha);
            let m = (n - k).min(4);
            for (l, q) in q.iter().enumerate().take(m) {
                if let Some(o) = self.index.get(k + l).and_then(|&i| out.get_mut(i)) {
                    o.rotation = *q;
                }
            }
            k += 4;
        }
        self.len = 0;
        self.rebuild_a = 0;
        self.rebuild_b = 0;
    }
}

/// `nlerp_shortest(q, q, _)` of four rotations, w rebuilt (as
/// [`rotation_from_xyz`]) for the lanes whose bit is set in `rebuild`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn normalize4(a: &[Quat; 4], rebuild: u32) -> [Quat; 4] {
    core::array::from_fn(|l| {
        let q = PendingRotation {
            q: a[l],
            rebuild: (rebuild >> l) & 1 != 0,
        }
        .quat();
        nlerp_shortest(q, q, 0.0)
    })
}

/// `nlerp_shortest(q, q, _)` of four rotations in SSE2 lanes, w rebuilt
/// (as [`rotation_from_xyz`]) for the lanes whose bit is set in
/// `rebuild`: the same lane operations as [`blend4`] without the lerp,
/// which is the identity when both ends are equal.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn normalize4(a: &[Quat; 4], rebuild: u32) -> [Quat; 4] {
    let q = rebuild_w4(a, rebuild);
    aos4(normalize_lanes(q, q))
}

/// Four rotations as x, y, z, w lanes, w rebuilt where `bits` has the
/// lane's bit set: `sqrt(max(1 - ((x*x + y*y) + z*z), 0))`, as
/// [`rotation_from_xyz`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rebuild_w4(p: &[Quat; 4], bits: u32) -> [core::arch::x86_64::__m128; 4] {
    use core::arch::x86_64::*;
    let [x, y, z, w] = soa4(p);
    // SAFETY: SSE and SSE2 are part of the x86_64 baseline; register-only
    // operations.
    unsafe {
        let s = _mm_add_ps(
            _mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)),
            _mm_mul_ps(z, z),
        );
        let w2 = _mm_sub_ps(_mm_set1_ps(1.0), s);
        let rebuilt = _mm_sqrt_ps(_mm_max_ps(w2, _mm_setzero_ps()));
        let f = |i: u32| -(((bits >> i) & 1) as i32);
        let mask = _mm_castsi128_ps(_mm_setr_epi32(f(0), f(1), f(2), f(3)));
        [x, y, z, select_ps(mask, rebuilt, w)]
    }
}

/// glam's SSE2 quaternion dot product, lane-wise: `(x*x' + z*z') + (y*y' + w*w')`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn dot4(
    p: [core::arch::x86_64::__m128; 4],
    q: [core::arch::x86_64::__m128; 4],
) -> core::arch::x86_64::__m128 {
    use core::arch::x86_64::*;
    // SAFETY: SSE is part of the x86_64 baseline; register-only operations.
    unsafe {
        _mm_add_ps(
            _mm_add_ps(_mm_mul_ps(p[0], q[0]), _mm_mul_ps(p[2], q[2])),
            _mm_add_ps(_mm_mul_ps(p[1], q[1]), _mm_mul_ps(p[3], q[3])),
        )
    }
}

/// The normalizing tail of [`nlerp_shortest`], lane-wise: `q / |q|`, or
/// `fallback` where `|q|^2` is not in `(1e-12, f32::MAX]`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn normalize_lanes(
    q: [core::arch::x86_64::__m128; 4],
    fallback: [core::arch::x86_64::__m128; 4],
) -> [core::arch::x86_64::__m128; 4] {
    use core::arch::x86_64::*;
    // SAFETY: SSE is part of the x86_64 baseline; register-only operations.
    unsafe {
        let len2 = dot4(q, q);
        let ok = _mm_and_ps(
            _mm_cmpgt_ps(len2, _mm_set1_ps(1e-12)),
            _mm_cmple_ps(len2, _mm_set1_ps(f32::MAX)),
        );
        let r = _mm_div_ps(_mm_set1_ps(1.0), _mm_sqrt_ps(len2));
        core::array::from_fn(|i| select_ps(ok, _mm_mul_ps(q[i], r), fallback[i]))
    }
}

/// Lanes of `yes` where `mask` is set, else of `no`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn select_ps(
    mask: core::arch::x86_64::__m128,
    yes: core::arch::x86_64::__m128,
    no: core::arch::x86_64::__m128,
) -> core::arch::x86_64::__m128 {
    use core::arch::x86_64::*;
    // SAFETY: SSE is part of the x86_64 baseline; register-only operations.
    unsafe { _mm_or_ps(_mm_and_ps(mask, yes), _mm_andnot_ps(mask, no)) }
}

/// Four xyzw rows as x, y, z, w lanes.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn soa4(p: &[Quat; 4]) -> [core::arch::x86_64::__m128; 4] {
    use core::arch::x86_64::*;
    let (r0, r1, r2, r3) = (
        __m128::from(p[0]),
        __m128::from(p[1]),
        __m128::from(p[2]),
        __m128::from(p[3]),
    );
    // SAFETY: SSE is part of the x86_64 baseline; register-only operations.
    unsafe {
        let t0 = _mm_unpacklo_ps(r0, r1);
        let t1 = _mm_unpacklo_ps(r2, r3);
        let t2 = _mm_unpackhi_ps(r0, r1);
        let t3 = _mm_unpackhi_ps(r2, r3);
        [
            _mm_movelh_ps(t0, t1),
            _mm_movehl_ps(t1, t0),
            _mm_movelh_ps(t2, t3),
            _mm_movehl_ps(t3, t2),
        ]
    }
}

/// Inverse of [`soa4`]: x, y, z, w lanes back to four rotations.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn aos4(o: [core::arch::x86_64::__m128; 4]) -> [Quat; 4] {
    let rows = soa4(&o.map(|v| Quat::from_vec4(glam::Vec4::from(v))));
    rows.map(|r| Quat::from_vec4(glam::Vec4::from(r)))
}

/// `nlerp_shortest` of four pairs, w rebuilt (as [`rotation_from_xyz`])
/// for the lanes whose bit is set in `rebuild_a` / `rebuild_b`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn blend4(a: &[Quat; 4], b: &[Quat; 4], rebuild_a: u32, rebuild_b: u32, alpha: f32) -> [Quat; 4] {
    let get = |q: &[Quat; 4], bits: u32, l: usize| {
        PendingRotation {
            q: q[l],
            rebuild: (bits >> l) & 1 != 0,
        }
        .quat()
    };
    core::array::from_fn(|l| nlerp_shortest(get(a, rebuild_a, l), get(b, rebuild_b, l), alpha))
}

/// `nlerp_shortest` of four pairs, w rebuilt (as [`rotation_from_xyz`])
/// for the lanes whose bit is set in `rebuild_a` / `rebuild_b`, one pair
/// per SSE2 lane. Every lane performs exactly the scalar operations (glam's
/// SSE2 4-component dot product sums `(x*x' + z*z') + (y*y' + w*w')`, which
/// is reproduced here), so the results are bit-identical.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn blend4(a: &[Quat; 4], b: &[Quat; 4], rebuild_a: u32, rebuild_b: u32, alpha: f32) -> [Quat; 4] {
    use core::arch::x86_64::*;
    // SAFETY: SSE is part of the x86_64 baseline; register-only operations.
    unsafe {
        let qa = rebuild_w4(a, rebuild_a);
        let qb = rebuild_w4(b, rebuild_b);
        let neg = _mm_cmplt_ps(dot4(qa, qb), _mm_setzero_ps());
        let m1 = _mm_set1_ps(-1.0);
        let t = _mm_set1_ps(alpha);
        let q: [__m128; 4] = core::array::from_fn(|i| {
            let bi = select_ps(neg, _mm_mul_ps(qb[i], m1), qb[i]);
            _mm_add_ps(qa[i], _mm_mul_ps(_mm_sub_ps(bi, qa[i]), t))
        });
        aos4(normalize_lanes(q, qa))
    }
}

/// Walk state over joints: byte offsets into the constants and the clip
/// ranges, the animated track index, and per sample the running segment
/// range offset and bit position.
#[derive(Clone, Copy, Debug)]
struct Cursor {
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
const PAIR_ONE: u8 = 0;
const PAIR_SAME_SEGMENT: u8 = 1;
const PAIR_TWO_SEGMENTS: u8 = 2;

/// How the second sample relates to the first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pair {
    /// Only sample 0 is decoded.
    One,
    /// Both samples, in the same segment (parameters shared).
    SameSegment,
    /// Both samples, in different segments.
    TwoSegments,
}

impl<'a> VbrClip<'a> {
    /// Validate `blob` completely. Any byte string gives a valid view or a
    /// typed error; nothing here or in decoding can panic or read out of
    /// bounds afterwards. Does not allocate.
    pub fn parse(
        blob: &'a [u8],
        joint_count: usize,
        num_samples: u32,
    ) -> Result<VbrClip<'a>, CodecError> {
        if blob.len() < HEADER_BYTES {
            return Err(truncated("vbr header"));
        }
        let jc = read_u32(blob, 0) as usize;
        let ns = read_u32(blob, 4);
        let animated = read_u32(blob, 8) as usize;
        let segments = read_u32(blob, 12);
        if jc != joint_count {
            return Err(invalid("vbr joint count differs from the skeleton"));
        }
        if ns != num_samples {
            return Err(invalid("vbr sample count differs from the clip"));
        }
        if ns == 0 {
            return Err(invalid("vbr clip has no samples"));
        }
        let mut at = HEADER_BYTES;
        let types = blob
            .get(at..at.checked_add(jc).ok_or(invalid("vbr size overflows"))?)
            .ok_or(truncated("vbr track types"))?;
        at += jc;
        // Count constants, animated tracks and clip range bytes.
        let mut constant_bytes = 0usize;
        let mut anim_count = 0usize;
        let mut range_bytes = 0usize;
        for &t in types {
            if t >> 6 != 0 {
                return Err(invalid("vbr type byte has reserved bits set"));
            }
            for k in 0..3 {
                let kind = (t >> (2 * k)) & 3;
                match kind {
                    KIND_DEFAULT => {}
                    KIND_CONSTANT => constant_bytes += 12,
                    KIND_ANIMATED => {
                        anim_count += 1;
                        range_bytes += if k == 0 {
                            ROTATION_CLIP_RANGE_BYTES
                        } else {
                            VECTOR_CLIP_RANGE_BYTES
                        };
                    }
                    _ => {
                        if k != 0 {
                            return Err(invalid("vbr full constant on a non-rotation track"));
                        }
                        constant_bytes += 16;
                    }
                }
            }
        }
        if anim_count != animated {
            return Err(invalid(
                "vbr animated track count differs from the type bytes",
            ));
        }
        if (animated == 0) != (segments == 0) {
            return Err(invalid(
                "vbr segment count inconsistent with animated tracks",
            ));
        }
        if segments > ns {
            return Err(invalid("vbr has more segments than samples"));
        }
        let end = at
            .checked_add(constant_bytes)
            .ok_or(invalid("vbr size overflows"))?;
        let constants = blob.get(at..end).ok_or(truncated("vbr constants"))?;
        at = end;
        for c in constants.chunks_exact(4) {
            if !f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite() {
                return Err(invalid("vbr constant is not finite"));
            }
        }
        let end = at
            .checked_add(range_bytes)
            .ok_or(invalid("vbr size overflows"))?;
        let ranges = blob.get(at..end).ok_or(truncated("vbr clip ranges"))?;
        at = end;
        // Vector clip ranges are f32 and must be finite (16-bit rotation
        // codes are always valid).
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
                for c in entry.chunks_exact(4) {
                    if !f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite() {
                        return Err(invalid("vbr clip range is not finite"));
                    }
                }
                r += VECTOR_CLIP_RANGE_BYTES;
            }
        }
        let end = (segments as usize)
            .checked_mul(SEGMENT_ENTRY_BYTES)
            .and_then(|n| n.checked_add(at))
            .ok_or(invalid("vbr size overflows"))?;
        let table = blob.get(at..end).ok_or(truncated("vbr segment table"))?;
        at = end;
        let data = blob.get(at..).unwrap_or(&[]);

        let seg_len = ns.checked_div(segments).unwrap_or(0);
        let seg_long = ns.checked_rem(segments).unwrap_or(0);
        // Walk the segments: offsets must be contiguous, rate bytes valid
        // and the declared sample bits equal to what the ids imply.
        let mut off = 0usize;
        for s in 0..segments {
            let e = s as usize * SEGMENT_ENTRY_BYTES;
            let block = read_u32(table, e) as usize;
            let sample_bits = read_u32(table, e + 4) as usize;
            if block != off {
                return Err(invalid("vbr segment offset is not contiguous"));
            }
            let rates_end = block
                .checked_add(animated)
                .ok_or(invalid("vbr size overflows"))?;
            let rates = data
                .get(block..rates_end)
                .ok_or(truncated("vbr segment rates"))?;
            let mut bits = 0usize;
            let mut ranged = 0usize;
            let mut track = 0usize;
            for &t in types {
                for k in 0..3 {
                    if (t >> (2 * k)) & 3 == KIND_ANIMATED {
                        let r = rates[track];
                        if !rate_is_valid(r) {
                            return Err(invalid("vbr rate byte invalid"));
                        }
                        bits += track_sample_bits(r, k == 0) as usize;
                        ranged += usize::from(has_segment_range(r));
                        track += 1;
                    }
                }
            }
            if bits != sample_bits {
                return Err(invalid("vbr segment sample bits differ from its rates"));
            }
            let n = (seg_len + u32::from(s < seg_long)) as usize;
            let sample_bytes = n
                .checked_mul(sample_bits)
                .map(|b| b.div_ceil(8))
                .ok_or(invalid("vbr size overflows"))?;
            off = ranged
                .checked_mul(SEGMENT_RANGE_BYTES)
                .and_then(|h| h.checked_add(rates_end))
                .and_then(|h| h.checked_add(sample_bytes))
                .ok_or(invalid("vbr size overflows"))?;
            if off > data.len() {
                return Err(truncated("vbr segment data"));
            }
        }
        let total = off
            .checked_add(PADDING_BYTES)
            .ok_or(invalid("vbr size overflows"))?;
        if data.len() < total {
            return Err(truncated("vbr padding"));
        }
        if data.len() > total {
            return Err(invalid("vbr blob has trailing bytes"));
        }
        Ok(VbrClip {
            types,
            constants,
            ranges,
            table,
            data,
            joint_count: jc,
            num_samples: ns,
            animated,
            segments,
            seg_len,
            seg_long,
        })
    }

    pub fn joint_count(&self) -> usize {
        self.joint_count
    }
    pub fn num_samples(&self) -> u32 {
        self.num_samples
    }
    pub fn segment_count(&self) -> u32 {
        self.segments
    }
    pub fn animated_track_count(&self) -> usize {
        self.animated
    }

    /// First sample of segment `s` (`s <= segments`).
    #[inline]
    pub fn segment_start(&self, s: u32) -> u32 {
        s * self.seg_len + s.min(self.seg_long)
    }

    /// Segment holding `sample` (< num_samples, and at least one segment).
    #[inline]
    fn segment_of(&self, sample: u32) -> u32 {
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
    fn start(
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

    /// Decode every joint at `pos` into `out` (rotation by
    /// [`nlerp_shortest`], translation and scale by lerp). `defaults` is the
    /// skeleton rest pose. Returns false and leaves `out` untouched if a
    /// buffer has the wrong length or the position is out of range.
    pub fn decode_pose(
        &self,
        pos: SamplePosition,
        defaults: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        if out.len() != self.joint_count || defaults.len() != self.joint_count {
            return false;
        }
        let Some((s0, s1, pair, c)) = self.start(pos, defaults, out, true) else {
            return false;
        };
        // One loop per pairing, so the inner loop carries no test of it.
        match pair {
            Pair::One => self.pose_loop::<PAIR_ONE>(c, &s0, &s1, 0.0, defaults, out),
            Pair::SameSegment => {
                self.pose_loop::<PAIR_SAME_SEGMENT>(c, &s0, &s1, pos.alpha, defaults, out)
            }
            Pair::TwoSegments => {
                self.pose_loop::<PAIR_TWO_SEGMENTS>(c, &s0, &s1, pos.alpha, defaults, out)
            }
        }
        true
    }

    #[inline(always)]
    fn pose_loop<const PAIR: u8>(
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

    /// The clip's static pose: what [`VbrClip::decode_pose`] outputs for
    /// every track that is not animated (defaults from `defaults`,
    /// constants, constant rotations normalized). Compute it once per clip
    /// and `defaults` (e.g. when a clip is bound to a skeleton) and decode
    /// with [`VbrClip::decode_pose_static`], which then touches only the
    /// animated tracks. Slots of animated tracks hold sample 0 (they are
    /// overwritten by every decode). False if a length is wrong.
    pub fn static_pose(&self, defaults: &[Transform], out: &mut [Transform]) -> bool {
        self.decode_sample(0, defaults, out)
    }

    /// [`VbrClip::decode_pose`] from a pose made by
    /// [`VbrClip::static_pose`]: copies it, then decodes the animated
    /// tracks only, so a joint without one costs a table lookup rather
    /// than a walk over its tracks. The output bits are those of
    /// [`VbrClip::decode_pose`]. False (writing nothing) if a length is
    /// wrong or the position is out of range.
    pub fn decode_pose_static(
        &self,
        pos: SamplePosition,
        static_pose: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        if out.len() != self.joint_count || static_pose.len() != self.joint_count {
            return false;
        }
        let Some((s0, s1, pair, c)) = self.start(pos, static_pose, out, false) else {
            return false;
        };
        match pair {
            Pair::One => self.animated_loop::<PAIR_ONE>(c, &s0, &s1, 0.0, static_pose, out),
            Pair::SameSegment => {
                self.animated_loop::<PAIR_SAME_SEGMENT>(c, &s0, &s1, pos.alpha, static_pose, out)
            }
            Pair::TwoSegments => {
                self.animated_loop::<PAIR_TWO_SEGMENTS>(c, &s0, &s1, pos.alpha, static_pose, out)
            }
        }
        true
    }

    /// Every joint: its static pose, with its animated tracks decoded over
    /// it. The constants cursor is not used: constants are in the static
    /// pose. The copy is interleaved with the decoding (not one copy up
    /// front) so that a cold static pose and cold segment data are waited
    /// for together rather than one after the other.
    #[inline(always)]
    fn animated_loop<const PAIR: u8>(
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

    /// Decode the joints listed in `joints` (any order, repeats allowed)
    /// into `out` (same length). Ascending lists cost one walk over the
    /// type bytes; others restart the walk when they step back.
    pub fn decode_joints(
        &self,
        pos: SamplePosition,
        defaults: &[Transform],
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        if out.len() != joints.len() || defaults.len() != self.joint_count {
            return false;
        }
        if joints.iter().any(|&j| j as usize >= self.joint_count) {
            return false;
        }
        let Some((s0, s1, pair, c)) = self.start(pos, defaults, &[], true) else {
            return false;
        };
        match pair {
            Pair::One => self.joints_loop::<PAIR_ONE>(c, &s0, &s1, 0.0, defaults, joints, out),
            Pair::SameSegment => {
                self.joints_loop::<PAIR_SAME_SEGMENT>(c, &s0, &s1, pos.alpha, defaults, joints, out)
            }
            Pair::TwoSegments => {
                self.joints_loop::<PAIR_TWO_SEGMENTS>(c, &s0, &s1, pos.alpha, defaults, joints, out)
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn joints_loop<const PAIR: u8>(
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

    /// Decode the stored sample `sample` exactly (no blend).
    pub fn decode_sample(
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

#[cfg(test)]
mod tests {
    use super::*;

    fn put_u32(b: &mut Vec<u8>, v: u32) {
        b.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f32(b: &mut Vec<u8>, v: f32) {
        b.extend_from_slice(&v.to_le_bytes());
    }

    fn put_u16(b: &mut Vec<u8>, v: u16) {
        b.extend_from_slice(&v.to_le_bytes());
    }

    /// Hand-built blob: joint 0 constant translation, animated rotation at
    /// 8 bits then segment-constant; joint 1 default; 3 samples in 2
    /// segments.
    fn tiny_blob() -> Vec<u8> {
        let mut b = Vec::new();
        put_u32(&mut b, 2);
        put_u32(&mut b, 3);
        put_u32(&mut b, 1);
        put_u32(&mut b, 2);
        b.push(KIND_ANIMATED | (KIND_CONSTANT << 2));
        b.push(0);
        for v in [1.0, 2.0, 3.0] {
            put_f32(&mut b, v);
        }
        // Clip range of the rotation: min about 0 on every axis, extent 0
        // on x and y, z up to about 0.5.
        for v in [32767, 32767, 32767, 0, 0, 16384] {
            put_u16(&mut b, v);
        }
        // Segment 0: 2 samples at rate id 6 (8 bits), segment 1: 1 sample at rate 0.
        let seg0 = 1 + 6 + 6;
        put_u32(&mut b, 0);
        put_u32(&mut b, 24);
        put_u32(&mut b, seg0 as u32);
        put_u32(&mut b, 0);
        b.push(6);
        // Samples: (0, 0, 0) then (0, 0, 255).
        b.extend_from_slice(&[0, 0, 0, 0, 0, 255]);
        // Segment range: z spans the whole clip range.
        b.extend_from_slice(&[0, 0, 0, 0, 0, 255]);
        b.push(RATE_CONSTANT);
        b.extend_from_slice(&[0, 0, 0, 0, 0xff, 0xff]);
        b.extend_from_slice(&[0; PADDING_BYTES]);
        b
    }

    /// Like [`tiny_blob`] with segment 0 unranged at 8 bits and segment 1
    /// raw (no range bytes in either).
    fn tiny_blob_unranged_raw() -> Vec<u8> {
        let mut b = tiny_blob();
        let table = HEADER_BYTES + 2 + 12 + 12;
        let data = table + 2 * SEGMENT_ENTRY_BYTES;
        b.truncate(data);
        // Segment 0: rate byte, samples (no range); segment 1: raw w..
        b[table + 8..table + 12].copy_from_slice(&7u32.to_le_bytes());
        b[table + 12..table + 16].copy_from_slice(&128u32.to_le_bytes());
        b.push(6 | RATE_UNRANGED);
        b.extend_from_slice(&[0, 0, 0, 0, 0, 255]);
        b.push(RATE_RAW);
        for v in [0.0f32, 0.0, 0.6, 0.8] {
            put_f32(&mut b, v);
        }
        b.extend_from_slice(&[0; PADDING_BYTES]);
        b
    }

    #[test]
    fn tiny_blob_decodes() {
        let blob = tiny_blob();
        let clip = VbrClip::parse(&blob, 2, 3).expect("valid");
        let defaults = [
            Transform::IDENTITY,
            Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE),
        ];
        let mut out = [Transform::IDENTITY; 2];
        assert!(clip.decode_sample(0, &defaults, &mut out));
        assert_eq!(out[0].translation, Vec3::new(1.0, 2.0, 3.0));
        assert!(out[0].rotation.abs_diff_eq(Quat::IDENTITY, 1e-4));
        assert_eq!(out[1], defaults[1]);
        assert!(clip.decode_sample(1, &defaults, &mut out));
        assert!((out[0].rotation.z - 0.5).abs() < 1e-4);
        assert!(clip.decode_sample(2, &defaults, &mut out));
        assert!((out[0].rotation.z - 0.5).abs() < 1e-4);
        let pos = SamplePosition {
            i0: 0,
            i1: 1,
            alpha: 0.5,
        };
        assert!(clip.decode_pose(pos, &defaults, &mut out));
        let mut sub = [Transform::IDENTITY; 3];
        assert!(clip.decode_joints(pos, &defaults, &[1, 0, 0], &mut sub));
        assert_eq!(sub[1], out[0]);
        assert_eq!(sub[2], out[0]);
        assert_eq!(sub[0], out[1]);
        // Across the segment boundary, and joints-only decoding agrees.
        let pos = SamplePosition {
            i0: 1,
            i1: 2,
            alpha: 0.25,
        };
        assert!(clip.decode_pose(pos, &defaults, &mut out));
        assert!(clip.decode_joints(pos, &defaults, &[1, 0], &mut sub[..2]));
        assert_eq!(sub[1], out[0]);
        assert_eq!(sub[0], out[1]);
    }

    /// The batched SIMD blend equals `rotation_from_xyz` + `nlerp_shortest`
    /// bit for bit, over rebuilt and full rotations, both signs and many
    /// blend factors.
    #[test]
    fn batch_matches_scalar() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        for round in 0..20_000 {
            let mut p = || {
                let q = Quat::from_xyzw(next(), next(), next(), next());
                let q = if round % 7 == 0 {
                    q * 1e-7
                } else {
                    q.normalize()
                };
                if round % 3 == 0 {
                    PendingRotation::full(q)
                } else {
                    PendingRotation::xyz(Vec3A::new(q.x, q.y, q.z) * 0.9)
                }
            };
            let a: [PendingRotation; 4] = core::array::from_fn(|_| p());
            let b: [PendingRotation; 4] = core::array::from_fn(|_| p());
            let alpha = if round % 5 == 0 { 0.0 } else { next().abs() };
            let bits = |p: &[PendingRotation; 4]| {
                (0..4).fold(0u32, |m, l| m | (u32::from(p[l].rebuild) << l))
            };
            let got = blend4(&a.map(|p| p.q), &b.map(|p| p.q), bits(&a), bits(&b), alpha);
            for l in 0..4 {
                let want = nlerp_shortest(a[l].quat(), b[l].quat(), alpha);
                assert_eq!(
                    got[l].to_array().map(f32::to_bits),
                    want.to_array().map(f32::to_bits),
                    "round {round} lane {l}"
                );
            }
        }
    }

    #[test]
    fn static_pose_decode_matches_direct_decode() {
        for (blob, joints, samples) in [(tiny_blob(), 2, 3), (tiny_blob_unranged_raw(), 2, 3)] {
            let clip = VbrClip::parse(&blob, joints, samples).expect("valid");
            let defaults = [
                Transform::new(Vec3::Y, Quat::from_rotation_x(0.3), Vec3::splat(2.0)),
                Transform::new(Vec3::X, Quat::from_rotation_z(-0.7), Vec3::ONE),
            ];
            let mut base = [Transform::IDENTITY; 2];
            assert!(clip.static_pose(&defaults, &mut base));
            let (mut direct, mut fast) = ([Transform::IDENTITY; 2], [Transform::IDENTITY; 2]);
            for i0 in 0..samples {
                for i1 in i0..samples {
                    for alpha in [0.0, 0.25, 0.5, 0.9] {
                        let pos = SamplePosition { i0, i1, alpha };
                        assert!(clip.decode_pose(pos, &defaults, &mut direct));
                        assert!(clip.decode_pose_static(pos, &base, &mut fast));
                        let bits = |p: &[Transform; 2]| p.map(|t| t.to_array().map(f32::to_bits));
                        assert_eq!(bits(&direct), bits(&fast), "{i0} {i1} {alpha}");
                    }
                }
            }
            // Wrong lengths and positions write nothing.
            let before = fast;
            let pos = SamplePosition {
                i0: samples,
                i1: 0,
                alpha: 0.0,
            };
            assert!(!clip.decode_pose_static(pos, &base, &mut fast));
            let pos = SamplePosition {
                i0: 0,
                i1: 0,
                alpha: 0.0,
            };
            assert!(!clip.decode_pose_static(pos, &base[..1], &mut fast));
            assert!(!clip.static_pose(&defaults[..1], &mut base));
            assert_eq!(fast, before);
        }
    }

    #[test]
    fn normalize_batch_matches_scalar() {
        let mut seed = 0x51_7cc1_b727_220au64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
        };
        for round in 0..20_000 {
            let mut p = || {
                let q = Quat::from_xyzw(next(), next(), next(), next());
                let q = match round % 7 {
                    0 => q * 1e-7,
                    1 => Quat::from_xyzw(0.0, -0.0, q.z, q.w),
                    _ => q.normalize(),
                };
                if round % 3 == 0 {
                    PendingRotation::full(q)
                } else {
                    PendingRotation::xyz(Vec3A::new(q.x, q.y, q.z) * 0.9)
                }
            };
            let a: [PendingRotation; 4] = core::array::from_fn(|_| p());
            let bits = (0..4).fold(0u32, |m, l| m | (u32::from(a[l].rebuild) << l));
            let alpha = if round % 5 == 0 { 0.0 } else { next().abs() };
            let got = normalize4(&a.map(|p| p.q), bits);
            for l in 0..4 {
                let q = a[l].quat();
                let want = nlerp_shortest(q, q, alpha);
                // Equal as numbers (+0 and -0 alike), and so bit for bit
                // once zeros are folded.
                assert_eq!(
                    got[l].to_array().map(|v| (v + 0.0).to_bits()),
                    want.to_array().map(|v| (v + 0.0).to_bits()),
                    "round {round} lane {l}"
                );
            }
        }
    }

    #[test]
    fn unranged_and_raw_decode() {
        let blob = tiny_blob_unranged_raw();
        let clip = VbrClip::parse(&blob, 2, 3).expect("valid");
        let defaults = [Transform::IDENTITY; 2];
        let mut out = [Transform::IDENTITY; 2];
        assert!(clip.decode_sample(1, &defaults, &mut out));
        assert!((out[0].rotation.z - 0.5).abs() < 1e-4);
        assert!(clip.decode_sample(2, &defaults, &mut out));
        assert_eq!(out[0].rotation, Quat::from_xyzw(0.0, 0.0, 0.6, 0.8));
        // The unranged flag is invalid on the segment-constant and raw ids.
        let mut bad = blob.clone();
        let data = HEADER_BYTES + 2 + 12 + 12 + 2 * SEGMENT_ENTRY_BYTES;
        bad[data + 7] = RATE_RAW | RATE_UNRANGED;
        assert!(VbrClip::parse(&bad, 2, 3).is_err());
    }

    #[test]
    fn rejects_every_truncation_and_bad_counts() {
        let blob = tiny_blob();
        for n in 0..blob.len() {
            assert!(
                VbrClip::parse(&blob[..n], 2, 3).is_err(),
                "truncated to {n}"
            );
        }
        assert!(VbrClip::parse(&blob, 3, 3).is_err());
        assert!(VbrClip::parse(&blob, 2, 4).is_err());
        let mut longer = blob.clone();
        longer.push(0);
        assert!(VbrClip::parse(&longer, 2, 3).is_err());
    }

    #[test]
    fn corrupted_bytes_never_panic() {
        for blob in [tiny_blob(), tiny_blob_unranged_raw()] {
            corrupt_all(&blob);
        }
    }

    fn corrupt_all(blob: &[u8]) {
        let defaults = [Transform::IDENTITY; 2];
        let mut out = [Transform::IDENTITY; 2];
        for i in 0..blob.len() {
            for v in [0u8, 1, 3, 7, 0x12, 0x20, 0x26, 0x32, 0x40, 0x80, 0xff] {
                let mut b = blob.to_vec();
                b[i] = v;
                if let Ok(c) = VbrClip::parse(&b, 2, 3) {
                    for s in 0..3 {
                        let _ = c.decode_sample(s, &defaults, &mut out);
                        let pos = SamplePosition {
                            i0: s,
                            i1: (s + 1).min(2),
                            alpha: 0.5,
                        };
                        let _ = c.decode_pose(pos, &defaults, &mut out);
                        let _ = c.decode_joints(pos, &defaults, &[1, 0], &mut out);
                    }
                }
            }
        }
    }

    #[test]
    fn segment_lookup_covers_all_samples() {
        for ns in 1..60u32 {
            for segs in 1..=ns.min(9) {
                let clip = VbrClip {
                    types: &[],
                    constants: &[],
                    ranges: &[],
                    table: &[],
                    data: &[],
                    joint_count: 0,
                    num_samples: ns,
                    animated: 1,
                    segments: segs,
                    seg_len: ns / segs,
                    seg_long: ns % segs,
                };
                assert_eq!(clip.segment_start(segs), ns);
                for i in 0..ns {
                    let s = clip.segment_of(i);
                    assert!(s < segs);
                    assert!(clip.segment_start(s) <= i && i < clip.segment_start(s + 1));
                }
            }
        }
    }
}
