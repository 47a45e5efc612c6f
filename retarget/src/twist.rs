//! Twist distribution.
//!
//! The source joint's rotation relative to its retarget pose, expressed in
//! its parent's frame (`d = q(t) * q_pose^-1`), is split into swing and
//! twist about the bone that ends in the joint (the direction of its
//! retarget-pose translation); the twist angle `2 atan2(d.xyz . a, d.w)`
//! is wrapped into (-pi, pi] and then unwrapped over the whole clip, so a
//! forearm that turns past 180 degrees keeps turning instead of flipping
//! (an offline advantage: a runtime solver sees one frame). Each target
//! twist joint then turns about the same physical axis by `weight * angle`
//! on top of its transferred rotation.

use crate::error::RetargetError;
use crate::plan::joint;
use crate::profile::Profile;
use crate::side::Side;
use ludus_anim_format::math::{Quat, Transform, Vec3};
use std::f32::consts::{PI, TAU};

/// One source joint's twist, carried to its target joints.
pub(crate) struct TwistPlan {
    pub source: usize,
    /// Bone axis in the source parent's rotation frame.
    pub axis_parent: Vec3,
    /// (target joint, axis in the joint's own local frame, weight).
    pub targets: Vec<(usize, Vec3, f32)>,
}

pub(crate) fn plan(
    profile: &Profile,
    s: &Side,
    t: &Side,
    a: Quat,
) -> Result<Vec<TwistPlan>, RetargetError> {
    let mut out = Vec::new();
    for spec in &profile.twists {
        let bad = |message: String| RetargetError::BadTwist {
            joint: spec.source.clone(),
            message,
        };
        let source = joint(s, "twist", &spec.source)?;
        let parent = s
            .skel
            .parent(source)
            .ok_or_else(|| bad("the root joint has no bone to twist about".into()))?;
        let bone = s.pose.local[source].translation;
        if bone.length() < 1e-5 * s.height {
            return Err(bad(format!(
                "has no bone length from '{}' (zero translation): the twist axis is undefined",
                s.skel.name(parent)
            )));
        }
        let axis_parent = bone.normalize();
        let axis_target = a * (s.pose.rot[parent] * axis_parent);
        let mut targets = Vec::new();
        for tt in &spec.targets {
            let k = joint(t, "twist", &tt.joint)?;
            if !tt.weight.is_finite() {
                return Err(bad(format!("weight of '{}' is not a number", tt.joint)));
            }
            targets.push((k, t.pose.rot[k].conjugate() * axis_target, tt.weight));
        }
        out.push(TwistPlan {
            source,
            axis_parent,
            targets,
        });
    }
    Ok(out)
}

/// Twist angle of `local` relative to `pose` about `axis` (parent frame),
/// wrapped into (-pi, pi].
pub(crate) fn twist_angle(local: &Transform, pose: &Transform, axis: Vec3) -> f32 {
    let d = local.rotation * pose.rotation.conjugate();
    let s = d.x * axis.x + d.y * axis.y + d.z * axis.z;
    wrap(2.0 * s.atan2(d.w))
}

pub(crate) fn wrap(a: f32) -> f32 {
    let r = (a + PI).rem_euclid(TAU) - PI;
    if r <= -PI {
        r + TAU
    } else {
        r
    }
}

/// Remove 2*pi jumps between consecutive samples, in place.
pub(crate) fn unwrap(angles: &mut [f32]) {
    for i in 1..angles.len() {
        let step = angles[i] - angles[i - 1];
        angles[i] -= TAU * (step / TAU).round();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_format::math::Vec3;

    #[test]
    fn twist_is_measured_about_the_axis_and_unwrapped() {
        let pose = Transform::IDENTITY;
        let axis = Vec3::X;
        let mut angles: Vec<f32> = (0..40)
            .map(|i| {
                let a = i as f32 * 0.1; // 0 .. 3.9 rad, past pi
                let mut l = pose;
                l.rotation = Quat::from_rotation_x(a) * Quat::from_rotation_z(0.3);
                twist_angle(&l, &pose, axis)
            })
            .collect();
        assert!(angles.iter().any(|a| *a < 0.0), "wrapped before unwrapping");
        unwrap(&mut angles);
        for (i, a) in angles.iter().enumerate() {
            // Swing about Z applied first (local) does not add twist about X.
            assert!((a - i as f32 * 0.1).abs() < 1e-4, "{i}: {a}");
        }
    }
}
