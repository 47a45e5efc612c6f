//! Additive deltas, cook side: the delta that turns a reference pose into
//! an authored one (the runtime applies it; see its `additive` module for
//! the convention), and the additive identity both sides fill missing
//! tracks with.

use crate::math::{Quat, Transform, Vec3};

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
