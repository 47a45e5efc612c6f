//! The `unsafe` blocks of the runtime's data path: bounded unaligned
//! loads, cache prefetches and the SSE2 lane arithmetic of the decoder.
//! Each block states why it is sound; the only other code allowed
//! `unsafe` is `isa` (the calls into the AVX2 build of the loop) and
//! `decode`'s `dense_loads` (which vouches for the whole-pose walk's
//! unchecked loads), and the rest of the crate is `deny(unsafe_code)`.
//! Every function here has a portable fallback (other targets) with the
//! same results, and the lane code performs exactly the scalar operations
//! in the same order (tests: `batch_matches_scalar`,
//! `normalize_batch_matches_scalar`).

use super::format::rotation_from_xyz;
#[cfg(any(doc, not(target_arch = "x86_64")))]
use crate::math::nlerp_shortest;
use crate::math::{Quat, Transform, Vec3A};

#[inline(always)]
pub(super) fn read_u32(b: &[u8], at: usize) -> u32 {
    if at < b.len().saturating_sub(3) {
        // SAFETY: `at + 4 <= b.len()`: the four bytes are inside the slice.
        u32::from_le(unsafe { core::ptr::read_unaligned(b.as_ptr().add(at) as *const u32) })
    } else {
        load_tail(b, at, 4) as u32
    }
}

/// The `len` (<= 8) bytes at `at` as a little-endian integer, bytes past
/// the end of `b` read as zero: the side of the bounded loads where fewer
/// than `len` bytes are left. A blob has no padding (version 3), so the
/// loads of the last range entries and rows of its last segment come
/// here on every decode that reads that segment: one load of the slice's
/// last eight bytes, shifted, rather than a byte loop (which only slices
/// under eight bytes take).
#[cold]
#[inline(never)]
fn load_tail(b: &[u8], at: usize, len: usize) -> u64 {
    let n = b.len();
    let keep = if len >= 8 {
        u64::MAX
    } else {
        (1u64 << (8 * len)) - 1
    };
    if at >= n {
        return 0;
    }
    if n >= 8 {
        // SAFETY: `n >= 8`: the eight bytes ending at the slice's end are
        // inside it. `at > n - 8` (the caller's in-bounds test failed and
        // `at < n`), so the shift is 8..=56 bits.
        let w =
            u64::from_le(unsafe { core::ptr::read_unaligned(b.as_ptr().add(n - 8) as *const u64) });
        return (w >> (8 * (at + 8 - n))) & keep;
    }
    let tail = b.get(at..).unwrap_or(&[]);
    tail.iter()
        .take(len.min(8))
        .enumerate()
        .fold(0u64, |v, (k, &x)| v | u64::from(x) << (8 * k))
}

/// Little-endian 64-bit load; bytes past the end of `b` read as zero
/// (the last few loads of a blob, which has no padding). One compare per
/// load on the hot side: this is the decoder's most frequent check.
#[inline(always)]
pub(super) fn load_u64(b: &[u8], at: usize) -> u64 {
    if at < b.len().saturating_sub(7) {
        // SAFETY: `at + 8 <= b.len()`: the eight bytes are inside the slice.
        u64::from_le(unsafe { core::ptr::read_unaligned(b.as_ptr().add(at) as *const u64) })
    } else {
        load_tail(b, at, 8)
    }
}

/// How a decode loads from a clip's segment data (a sample word or a
/// range entry, 8 bytes; a rate byte) and from its clip ranges (an
/// entry's 12-byte fields, loaded as 16). The whole-pose walk loads without a
/// bounds check ([`Unchecked`]); every other request checks each load
/// ([`Checked`]). Both read the same bytes of a validated blob, so they
/// give the same bits.
pub(super) trait Loads: Copy {
    /// The little-endian u64 at `at` of `b`.
    fn u64(self, b: &[u8], at: usize) -> u64;
    /// The byte at `at` of `b`.
    fn byte(self, b: &[u8], at: usize) -> u8;
    /// The codes of the rotation clip range entry at `at` of `r`
    /// ([`rotation_codes`]).
    fn rotation_codes(self, r: &[u8], at: usize) -> (Vec3A, Vec3A);
    /// Three f32 at `at` of `b`, lane w unspecified ([`load_f32x3`]).
    fn f32x3(self, b: &[u8], at: usize) -> Vec3A;
}

/// Loads checked against the slice: bytes past its end read as zero.
#[derive(Clone, Copy)]
pub(super) struct Checked;

impl Loads for Checked {
    #[inline(always)]
    fn u64(self, b: &[u8], at: usize) -> u64 {
        load_u64(b, at)
    }
    #[inline(always)]
    fn byte(self, b: &[u8], at: usize) -> u8 {
        b.get(at).copied().unwrap_or(0)
    }
    #[inline(always)]
    fn rotation_codes(self, r: &[u8], at: usize) -> (Vec3A, Vec3A) {
        rotation_codes(r, at)
    }
    #[inline(always)]
    fn f32x3(self, b: &[u8], at: usize) -> Vec3A {
        load_f32x3(b, at)
    }
}

/// Loads without a bounds check: 8-10% of a whole pose's instructions
/// (#17, `schemas/codec-vbr.md`, measured in
/// `docs/perf/vbr-decode-history.md`). Made only by [`Unchecked::new`],
/// whose caller vouches for every load made through the value.
#[derive(Clone, Copy)]
pub(super) struct Unchecked(());

impl Unchecked {
    /// # Safety
    /// Every load made through the value must lie inside its slice: for
    /// [`Loads::u64`], `at + 8 <= b.len()`; for [`Loads::byte`],
    /// `at < b.len()`; for [`Loads::rotation_codes`] and
    /// [`Loads::f32x3`], `at + 16 <= b.len()`. (Debug builds assert it.)
    #[inline(always)]
    pub(super) unsafe fn new() -> Unchecked {
        Unchecked(())
    }
}

impl Loads for Unchecked {
    #[inline(always)]
    fn u64(self, b: &[u8], at: usize) -> u64 {
        debug_assert!(at.checked_add(8).is_some_and(|e| e <= b.len()));
        // SAFETY: `at + 8 <= b.len()`, by the contract of `Unchecked::new`.
        u64::from_le(unsafe { core::ptr::read_unaligned(b.as_ptr().add(at) as *const u64) })
    }
    #[inline(always)]
    fn byte(self, b: &[u8], at: usize) -> u8 {
        debug_assert!(at < b.len());
        // SAFETY: `at < b.len()`, by the contract of `Unchecked::new`.
        unsafe { *b.get_unchecked(at) }
    }
    #[inline(always)]
    fn rotation_codes(self, r: &[u8], at: usize) -> (Vec3A, Vec3A) {
        #[cfg(target_arch = "x86_64")]
        {
            debug_assert!(at.checked_add(16).is_some_and(|e| e <= r.len()));
            // SAFETY: `at + 16 <= r.len()`, by the contract of
            // `Unchecked::new`; SSE2 is part of the x86_64 baseline.
            unsafe {
                use core::arch::x86_64::*;
                codes_of(_mm_loadu_si128(r.as_ptr().add(at) as *const __m128i))
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        rotation_codes(r, at)
    }
    #[inline(always)]
    fn f32x3(self, b: &[u8], at: usize) -> Vec3A {
        #[cfg(target_arch = "x86_64")]
        {
            debug_assert!(at.checked_add(16).is_some_and(|e| e <= b.len()));
            // SAFETY: `at + 16 <= b.len()`, by the contract of
            // `Unchecked::new`; SSE is part of the x86_64 baseline.
            Vec3A::from(unsafe {
                core::arch::x86_64::_mm_loadu_ps(b.as_ptr().add(at) as *const f32)
            })
        }
        #[cfg(not(target_arch = "x86_64"))]
        load_f32x3(b, at)
    }
}

/// The `width` (1..=4) byte little-endian unsigned integer at `at`
/// (segment table fields); bytes past the end read as zero.
#[inline(always)]
pub(super) fn read_uint(b: &[u8], at: usize, width: usize) -> usize {
    let mask = (1u64 << (8 * width.min(4))) - 1;
    (u64::from(read_u32(b, at)) & mask) as usize
}

/// Three little-endian f32 at `at` (lane w unspecified); zeros if out of bounds.
#[inline(always)]
pub(super) fn load_f32x3(b: &[u8], at: usize) -> Vec3A {
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
/// Lanes x, y, z: the bytes 0, 1 and 2 of `w` as f32 (exact).
#[inline(always)]
pub(super) fn u8x3(w: u64) -> Vec3A {
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
pub(super) fn u16x3(w: u64) -> Vec3A {
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

/// Lanes x, y, z: three consecutive fields of `w` of `bx`, `by` and `bz`
/// bits (each <= 19; a 0-bit field is lane 0) as f32 (exact).
#[inline(always)]
pub(super) fn fields3(w: u64, bx: usize, by: usize, bz: usize) -> Vec3A {
    int3(
        (w & ((1u64 << bx) - 1)) as i32,
        ((w >> bx) & ((1u64 << by) - 1)) as i32,
        ((w >> (bx + by)) & ((1u64 << bz) - 1)) as i32,
    )
}

/// [`fields3`] with three fields of `b` bits each: the common case (every
/// component stored). In SSE2 lanes: the word shifted by `b` and `2 * b`
/// as 64-bit lanes, the three low halves gathered and masked together
/// (lane w unspecified), instead of three scalar extractions and three
/// moves into the vector.
#[inline(always)]
pub(super) fn fields3_uniform(w: u64, b: usize) -> Vec3A {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; register-only ops.
        unsafe {
            let v = _mm_cvtsi64_si128(w as i64);
            let count = _mm_cvtsi32_si128(b as i32);
            let y = _mm_srl_epi64(v, count);
            let z = _mm_srl_epi64(y, count);
            let xyz = _mm_unpacklo_epi64(_mm_unpacklo_epi32(v, y), z);
            let mask = _mm_set1_epi32(((1u32 << b) - 1) as i32);
            Vec3A::from(_mm_cvtepi32_ps(_mm_and_si128(xyz, mask)))
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let mask = (1u64 << b) - 1;
        int3(
            (w & mask) as i32,
            ((w >> b) & mask) as i32,
            ((w >> (2 * b)) & mask) as i32,
        )
    }
}

/// [`fields3_uniform`] of two words with the same field width `b` (the
/// two samples of a track in one segment, which share its parameters):
/// both words in one register, shifted together, their fields gathered
/// into two vectors, so that the pair costs one set of lane operations
/// instead of two. Lane w of each is unspecified, as there.
#[inline(always)]
pub(super) fn fields3_uniform2(w0: u64, w1: u64, b: usize) -> (Vec3A, Vec3A) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        // SAFETY: SSE2 is part of the x86_64 baseline; register-only ops.
        unsafe {
            // 32-bit lanes: w0 low, w0 high, w1 low, w1 high.
            let v = _mm_unpacklo_epi64(_mm_cvtsi64_si128(w0 as i64), _mm_cvtsi64_si128(w1 as i64));
            let count = _mm_cvtsi32_si128(b as i32);
            let y = _mm_srl_epi64(v, count);
            let z = _mm_srl_epi64(y, count);
            let q0 = _mm_unpacklo_epi64(_mm_unpacklo_epi32(v, y), z);
            let q1 = _mm_unpacklo_epi64(_mm_unpackhi_epi32(v, y), _mm_unpackhi_epi64(z, z));
            let mask = _mm_set1_epi32(((1u32 << b) - 1) as i32);
            (
                Vec3A::from(_mm_cvtepi32_ps(_mm_and_si128(q0, mask))),
                Vec3A::from(_mm_cvtepi32_ps(_mm_and_si128(q1, mask))),
            )
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        (fields3_uniform(w0, b), fields3_uniform(w1, b))
    }
}

/// Lanes x, y, z as f32 (exact for these field widths).
#[inline(always)]
fn int3(x: i32, y: i32, z: i32) -> Vec3A {
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
pub(super) fn rotation_codes(r: &[u8], at: usize) -> (Vec3A, Vec3A) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::*;
        if at < r.len().saturating_sub(15) {
            // SAFETY: `at + 16 <= r.len()`: the unaligned load is inside
            // the slice; the rest are SSE2 register operations (x86_64
            // baseline).
            return unsafe { codes_of(_mm_loadu_si128(r.as_ptr().add(at) as *const __m128i)) };
        }
    }
    (u16x3(load_u64(r, at)), u16x3(load_u64(r, at + 4) >> 16))
}

/// The min and extent codes (lanes x, y, z as f32) of a rotation clip
/// range entry in the low 12 bytes of `v`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn codes_of(v: core::arch::x86_64::__m128i) -> (Vec3A, Vec3A) {
    use core::arch::x86_64::*;
    // SAFETY: SSE2 is part of the x86_64 baseline; register-only ops.
    unsafe {
        let z = _mm_setzero_si128();
        let m = _mm_cvtepi32_ps(_mm_unpacklo_epi16(v, z));
        let e = _mm_cvtepi32_ps(_mm_unpacklo_epi16(_mm_srli_si128::<6>(v), z));
        (Vec3A::from(m), Vec3A::from(e))
    }
}

/// Cache line size the prefetches step by.
const LINE: usize = 64;

/// Hint the CPU to start loading `len` bytes of `bytes` from `from`
/// (clamped to the slice). A pure performance hint: results never depend
/// on it. Cold decodes are bound by memory latency; issuing every line a
/// pose needs up front lets the misses overlap instead of queueing behind
/// the dependent reads of the decode loop.
#[inline(always)]
pub(super) fn prefetch(bytes: &[u8], from: usize, len: usize) {
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

/// [`prefetch`] of at most one line's worth (`len <= 64`): the lines of
/// the first and the last byte, with no loop (the per-joint prefetches of
/// an indexed subset).
#[inline(always)]
pub(super) fn prefetch_small(bytes: &[u8], from: usize, len: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        if from < bytes.len() {
            let last = from
                .saturating_add(len.saturating_sub(1))
                .min(bytes.len() - 1);
            // SAFETY: `from` and `last` are both below `bytes.len()`: the
            // pointers are inside the slice; a prefetch never faults and
            // does not access memory architecturally.
            unsafe {
                _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(from) as *const i8);
                _mm_prefetch::<_MM_HINT_T0>(bytes.as_ptr().add(last) as *const i8);
            }
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = (bytes, from, len);
    }
}

/// Prefetch both lines one transform may span.
#[inline(always)]
pub(super) fn prefetch_transform(t: &Transform) {
    #[cfg(target_arch = "x86_64")]
    {
        let p = t as *const Transform as *const u8;
        // SAFETY: both pointers are inside the transform's memory (its
        // first and last byte); a prefetch never faults.
        unsafe {
            use core::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            _mm_prefetch::<_MM_HINT_T0>(p as *const i8);
            _mm_prefetch::<_MM_HINT_T0>(p.add(core::mem::size_of::<Transform>() - 1) as *const i8);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = t;
    }
}

/// [`prefetch`] a slice of transforms (the defaults or static pose a decode reads).
#[inline(always)]
pub(super) fn prefetch_transforms(t: &[Transform]) {
    prefetch_values(t);
}

/// [`prefetch`] the memory of a slice of values (transforms, a track
/// cache's entries).
#[inline(always)]
pub(super) fn prefetch_values<T>(t: &[T]) {
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
        if bytes > 0 {
            // The last line, when the slice does not start a line.
            // SAFETY: `bytes - 1 < size_of_val(t)`: inside the slice's memory.
            unsafe {
                core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                    base.add(bytes - 1) as *const i8,
                )
            };
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = t;
    }
}

/// `nlerp_shortest(q, q, _)` of four rotations, w rebuilt (as
/// [`rotation_from_xyz`]) for the lanes whose bit is set in `rebuild`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn normalize4(a: &[Quat; 4], rebuild: u32) -> [Quat; 4] {
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
pub(super) fn normalize4(a: &[Quat; 4], rebuild: u32) -> [Quat; 4] {
    let q = rebuild_w4(a, rebuild);
    aos4(normalize_lanes(q, q))
}

/// Per 4-bit lane set: all-ones in the lanes whose bit is set (one load
/// instead of building the mask from four computed lanes).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy, Default)]
#[repr(C, align(16))]
struct LaneMask([i32; 4]);

#[cfg(target_arch = "x86_64")]
const LANE_MASKS: [LaneMask; 16] = {
    let mut t = [LaneMask([0; 4]); 16];
    let mut b = 0;
    while b < 16 {
        let mut l = 0;
        while l < 4 {
            t[b].0[l] = -(((b >> l) & 1) as i32);
            l += 1;
        }
        b += 1;
    }
    t
};

/// Four rotations as x, y, z, w lanes, w rebuilt where `bits` has the
/// lane's bit set: `sqrt(max(1 - ((x*x + y*y) + z*z), 0))`, as
/// [`rotation_from_xyz`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn rebuild_w4(p: &[Quat; 4], bits: u32) -> [core::arch::x86_64::__m128; 4] {
    use core::arch::x86_64::*;
    let [x, y, z, w] = soa4(p);
    // SAFETY: SSE and SSE2 are part of the x86_64 baseline; register
    // operations, and one 16-byte load of a `LaneMask` (16 bytes).
    unsafe {
        let s = _mm_add_ps(
            _mm_add_ps(_mm_mul_ps(x, x), _mm_mul_ps(y, y)),
            _mm_mul_ps(z, z),
        );
        let w2 = _mm_sub_ps(_mm_set1_ps(1.0), s);
        let rebuilt = _mm_sqrt_ps(_mm_max_ps(w2, _mm_setzero_ps()));
        let m = LANE_MASKS
            .get((bits & 15) as usize)
            .copied()
            .unwrap_or_default();
        let mask = _mm_castsi128_ps(_mm_loadu_si128(m.0.as_ptr() as *const __m128i));
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
        // Written out lane by lane: `array::from_fn` is not always inlined
        // here, and a call per flush costs more than the lanes.
        let f = |i: usize| select_ps(ok, _mm_mul_ps(q[i], r), fallback[i]);
        [f(0), f(1), f(2), f(3)]
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
    let q = |v: core::arch::x86_64::__m128| Quat::from_vec4(glam::Vec4::from(v));
    let rows = soa4(&[q(o[0]), q(o[1]), q(o[2]), q(o[3])]);
    [q(rows[0]), q(rows[1]), q(rows[2]), q(rows[3])]
}

/// `nlerp_shortest` of four pairs, w rebuilt (as [`rotation_from_xyz`])
/// for the lanes whose bit is set in `rebuild_a` / `rebuild_b`.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub(super) fn blend4(
    a: &[Quat; 4],
    b: &[Quat; 4],
    rebuild_a: u32,
    rebuild_b: u32,
    alpha: f32,
) -> [Quat; 4] {
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
pub(super) fn blend4(
    a: &[Quat; 4],
    b: &[Quat; 4],
    rebuild_a: u32,
    rebuild_b: u32,
    alpha: f32,
) -> [Quat; 4] {
    use core::arch::x86_64::*;
    // SAFETY: SSE is part of the x86_64 baseline; register-only operations.
    unsafe {
        let qa = rebuild_w4(a, rebuild_a);
        let qb = rebuild_w4(b, rebuild_b);
        // `-b` where the dot product is negative: glam negates a rotation
        // by flipping the sign bits, so the lanes do the same (one xor).
        let neg = _mm_cmplt_ps(dot4(qa, qb), _mm_setzero_ps());
        let flip = _mm_and_ps(neg, _mm_set1_ps(-0.0));
        let t = _mm_set1_ps(alpha);
        let lerp = |i: usize| {
            let bi = _mm_xor_ps(qb[i], flip);
            _mm_add_ps(qa[i], _mm_mul_ps(_mm_sub_ps(bi, qa[i]), t))
        };
        let q = [lerp(0), lerp(1), lerp(2), lerp(3)];
        aos4(normalize_lanes(q, qa))
    }
}

/// A rotation waiting in a [`RotationBatch`]: x, y, z, w, with w still to
/// be rebuilt from x, y, z (as [`rotation_from_xyz`]) when `rebuild`.
#[derive(Clone, Copy, Debug)]
pub(super) struct PendingRotation {
    /// x, y, z and, unless `rebuild`, w (else w is ignored).
    pub(super) q: Quat,
    pub(super) rebuild: bool,
}

impl PendingRotation {
    /// Stored x, y, z; w rebuilt in the batch.
    #[inline(always)]
    pub(super) fn xyz(v: Vec3A) -> Self {
        #[cfg(target_arch = "x86_64")]
        let q = Quat::from_vec4(glam::Vec4::from(core::arch::x86_64::__m128::from(v)));
        #[cfg(not(target_arch = "x86_64"))]
        let q = Quat::from_xyzw(v.x, v.y, v.z, 0.0);
        PendingRotation { q, rebuild: true }
    }
    /// All four components stored.
    #[inline(always)]
    pub(super) fn full(q: Quat) -> Self {
        PendingRotation { q, rebuild: false }
    }
    /// The rotation [`rotation_from_xyz`] gives (scalar path, raw samples
    /// and tests).
    #[inline(always)]
    pub(super) fn quat(&self) -> Quat {
        if self.rebuild {
            rotation_from_xyz(self.q.x, self.q.y, self.q.z)
        } else {
            self.q
        }
    }
}
