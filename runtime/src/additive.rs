//! Additive animation in the Ludus convention (seed: "Additive
//! convention", binding exactly):
//!
//! ```text
//! deltaT = tA - tR; deltaQ = inverse(qR) * qA; ratioS = sA / sR   (componentwise; positive scales)
//! w in [0, 1]
//! tOut = tBase + w * deltaT
//! qOut = normalize(qBase * SlerpShortest(identity, deltaQ, w))
//! sOut = sBase * LERP((1,1,1), ratioS, w)
//! ```
//!
//! A delta is stored in a [`Transform`]: `translation = deltaT`,
//! `rotation = deltaQ`, `scale = ratioS`. The additive identity is
//! [`ADDITIVE_IDENTITY`] = `(0, identity, 1)`; a decoder must fill a track
//! missing from an additive clip with it, never with the rest pose.
//!
//! Weights: the seed forbids passing out-of-range weights into `[0, 1]`
//! APIs. [`apply_additive`] (the per-joint primitive) clamps `w` into
//! `[0, 1]` and treats NaN as 0; the pose functions refuse (return `false`
//! and write nothing) when `w` is outside `[0, 1]` or not finite, so a bad
//! weight reaches the caller as a rejected call rather than a silent clamp.
//!
//! The rotation delta is `inverse(qR) * qA` (reference on the left), so it
//! is applied on the right of the base (`qBase * deltaQ`): a joint-local
//! additive. The formulas are the seed's verbatim; no external code was
//! adapted here.

use crate::math::{slerp_shortest, Quat, Transform, Vec3};

pub use ludus_anim_format::additive::ADDITIVE_IDENTITY;

/// Apply `delta` onto `base` with weight `w` (clamped into `[0, 1]`; NaN
/// counts as 0). `w = 0` returns `base` exactly.
#[inline]
pub fn apply_additive(base: &Transform, delta: &Transform, w: f32) -> Transform {
    let w = if w.is_nan() { 0.0 } else { w.clamp(0.0, 1.0) };
    if w == 0.0 {
        return *base;
    }
    let q = base.rotation * slerp_shortest(Quat::IDENTITY, delta.rotation, w);
    let len2 = q.length_squared();
    let rotation = if len2 > 1e-12 && len2.is_finite() {
        q * len2.sqrt().recip()
    } else {
        base.rotation
    };
    Transform {
        translation: base.translation + delta.translation * w,
        rotation,
        scale: base.scale * Vec3::ONE.lerp(delta.scale, w),
    }
}

#[inline]
fn weight_ok(w: f32) -> bool {
    (0.0..=1.0).contains(&w)
}

/// `out[i] = apply_additive(base[i], delta[i], w)`. Returns `false` and
/// writes nothing if the three slices differ in length or `w` is not in
/// `[0, 1]` (NaN included). Never allocates.
#[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
pub fn apply_additive_pose(
    base: &[Transform],
    delta: &[Transform],
    w: f32,
    out: &mut [Transform],
) -> bool {
    if base.len() != delta.len() || base.len() != out.len() || !weight_ok(w) {
        return false;
    }
    for ((o, b), d) in out.iter_mut().zip(base).zip(delta) {
        *o = apply_additive(b, d, w);
    }
    true
}

/// In-place variant of [`apply_additive_pose`]: `pose[i]` is the base and
/// receives the result. Same refusal rules.
#[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
pub fn apply_additive_pose_in_place(pose: &mut [Transform], delta: &[Transform], w: f32) -> bool {
    if pose.len() != delta.len() || !weight_ok(w) {
        return false;
    }
    for (p, d) in pose.iter_mut().zip(delta) {
        *p = apply_additive(p, d, w);
    }
    true
}
