//! Additive deltas in the Ludus convention (seed: "Additive convention",
//! binding exactly):
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
//! [`ADDITIVE_IDENTITY`] = `(0, identity, 1)`; a decoder fills a track
//! missing from an additive clip with it, never with the rest pose.
//!
//! The rotation delta is `inverse(qR) * qA` (reference on the left), so it
//! is applied on the right of the base (`qBase * deltaQ`): a joint-local
//! additive. Here: the delta's construction (cook side), the per-joint
//! application both sides use (the runtime's `apply_additive_pose`, the
//! cooker's verification), and the identity. The formulas are the seed's
//! verbatim; no external code was adapted here.

use crate::math::{slerp_shortest, Quat, Transform, Vec3};

/// `(0, identity, 1)`: the delta that leaves any base pose unchanged.
pub const ADDITIVE_IDENTITY: Transform = Transform {
    rotation: Quat::IDENTITY,
    translation: Vec3::ZERO,
    scale: Vec3::ONE,
};

/// The delta that turns `reference` into `authored`.
///
/// Scales are required to be strictly positive (the [`Transform`]
/// invariant). A reference scale component that is not strictly positive
/// and finite would make the ratio meaningless; that component's ratio is
/// set to 1 instead so the result stays finite (the cooker validates
/// scales before it gets here).
pub fn make_additive(authored: &Transform, reference: &Transform) -> Transform {
    let ratio = |a: f32, r: f32| {
        if r > 0.0 && r.is_finite() {
            a / r
        } else {
            1.0
        }
    };
    Transform {
        translation: authored.translation - reference.translation,
        rotation: reference.rotation.conjugate() * authored.rotation,
        scale: Vec3::new(
            ratio(authored.scale.x, reference.scale.x),
            ratio(authored.scale.y, reference.scale.y),
            ratio(authored.scale.z, reference.scale.z),
        ),
    }
}

/// `out[i] = make_additive(authored[i], reference[i])`.
/// Returns `false` and writes nothing if the slice lengths differ.
#[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
pub fn make_additive_pose(
    authored: &[Transform],
    reference: &[Transform],
    out: &mut [Transform],
) -> bool {
    if authored.len() != reference.len() || authored.len() != out.len() {
        return false;
    }
    for ((o, a), r) in out.iter_mut().zip(authored).zip(reference) {
        *o = make_additive(a, r);
    }
    true
}

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
