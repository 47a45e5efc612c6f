//! Rotations whose reconstruction and blend are deferred and done four at
//! a time in SIMD lanes (`simd::blend4`, `simd::normalize4`).

use super::simd::{blend4, normalize4, PendingRotation};
use crate::math::{nlerp_shortest, Quat, Transform};

/// Rotation reconstructions and blends deferred and done four at a time:
/// the w square roots and the normalizing square roots and divisions of
/// neighbouring joints run in SIMD lanes instead of one long scalar
/// dependency chain (they were a fifth of a warm decode). Results are bit
/// for bit [`rotation_from_xyz`] then [`nlerp_shortest`] (same operations
/// in the same order per lane; see the `batch_matches_scalar` test).
pub(super) struct RotationBatch {
    alpha: f32,
    len: usize,
    index: [usize; ROTATION_BATCH],
    /// x, y, z of each entry's two rotations, w to be rebuilt (a
    /// rotation stored with its w, a raw sample, is not queued: see
    /// [`RotationBatch::push`]).
    a: [Quat; ROTATION_BATCH],
    b: [Quat; ROTATION_BATCH],
}

/// Entries per batch: a multiple of 4 (the SIMD width), small because the
/// arrays are initialized on every decode. One group: 8 entries cost more
/// to initialize (two batches, 640 bytes in all per decode, most of a
/// one-joint decode's stores) than the extra flushes of 4 save.
const ROTATION_BATCH: usize = 4;

impl RotationBatch {
    #[inline(always)]
    pub(super) fn new(alpha: f32) -> Self {
        RotationBatch {
            alpha,
            len: 0,
            index: [0; ROTATION_BATCH],
            a: [Quat::IDENTITY; ROTATION_BATCH],
            b: [Quat::IDENTITY; ROTATION_BATCH],
        }
    }

    /// Whether the batch must be flushed before the next push.
    #[inline(always)]
    pub(super) fn full(&self) -> bool {
        self.len >= ROTATION_BATCH
    }

    /// Queue the blend of `a` and `b` into `out`'s rotation (slot
    /// `index`); the caller flushes when [`RotationBatch::full`] (a push
    /// into a full batch is dropped). A pair with a rotation stored whole
    /// (a raw sample, rare) is blended at once by the scalar
    /// [`nlerp_shortest`], whose results the lanes reproduce bit for bit:
    /// so every queued rotation has its w rebuilt, and the queue carries
    /// no per-entry flags.
    #[inline(always)]
    pub(super) fn push(
        &mut self,
        index: usize,
        a: PendingRotation,
        b: PendingRotation,
        out: &mut Transform,
    ) {
        if !(a.rebuild && b.rebuild) {
            out.rotation = nlerp_shortest(a.quat(), b.quat(), self.alpha);
            return;
        }
        self.push_xyz(index, a.q, b.q);
    }

    /// Queue a blend of two rotations whose w is to be rebuilt.
    #[inline(always)]
    pub(super) fn push_xyz(&mut self, index: usize, a: Quat, b: Quat) {
        if let (Some(i), Some(x), Some(y)) = (
            self.index.get_mut(self.len),
            self.a.get_mut(self.len),
            self.b.get_mut(self.len),
        ) {
            *i = index;
            *x = a;
            *y = b;
            self.len += 1;
        }
    }

    /// [`RotationBatch::flush`] for a batch of constant rotations, whose
    /// blend with themselves is just the normalization: the same
    /// operations minus the ones whose result is known (`q + (q - q) * t`
    /// is `q`, and `q . q` is never negative), so the results are those of
    /// [`nlerp_shortest`]`(q, q, t)` (up to the sign of zero components).
    #[inline(always)]
    pub(super) fn flush_normalize(&mut self, out: &mut [Transform]) {
        let n = self.len.min(ROTATION_BATCH);
        let mut k = 0;
        while k < n {
            let Some(a) = self.a.get(k..k + 4) else {
                break;
            };
            let Ok(a) = <&[Quat; 4]>::try_from(a) else {
                break;
            };
            let q = normalize4(a, 15);
            let m = (n - k).min(4);
            for (l, q) in q.iter().enumerate().take(m) {
                if let Some(o) = self.index.get(k + l).and_then(|&i| out.get_mut(i)) {
                    o.rotation = *q;
                }
            }
            k += 4;
        }
        self.len = 0;
    }

    #[inline(always)]
    pub(super) fn flush(&mut self, out: &mut [Transform]) {
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
            let q = blend4(a, b, 15, 15, self.alpha);
            let m = (n - k).min(4);
            for (l, q) in q.iter().enumerate().take(m) {
                if let Some(o) = self.index.get(k + l).and_then(|&i| out.get_mut(i)) {
                    o.rotation = *q;
                }
            }
            k += 4;
        }
        self.len = 0;
    }
}
