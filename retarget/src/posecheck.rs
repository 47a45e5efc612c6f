//! T-pose vs A-pose: the most common retarget failure users report. For
//! every mapped pair of arm chains the arm-to-spine angle of the two
//! retarget poses is compared: the angle between the upper arm (first
//! bone of the arm chain) and the spine pointing down (its end towards its
//! start; -up without a spine chain). About 90 degrees is a T-pose, about
//! 45 an A-pose, near 0 arms down.

use crate::error::RetargetError;
use crate::plan::Chain;
use crate::profile::{MismatchPolicy, Profile, Role};
use crate::side::Side;
use ludus_anim_format::math::Vec3;
use ludus_anim_model::Diagnostic;

/// Name of the rest kind an arm-to-spine angle suggests.
pub fn pose_kind(deg: f32) -> &'static str {
    if deg > 70.0 {
        "T-pose"
    } else if deg > 25.0 {
        "A-pose"
    } else {
        "arms down"
    }
}

/// Arm-to-spine angle (degrees) of an arm chain in a side's retarget pose.
pub(crate) fn arm_angle(side: &Side, chains: &[Chain], arm: &Chain) -> Option<f32> {
    let (&a0, a1) = (
        arm.joints.first()?,
        arm.joints.get(1).or(arm.joints.last())?,
    );
    let arm_dir = side
        .canon(side.pose.position(*a1) - side.pose.position(a0))
        .try_normalize()?;
    let down = chains
        .iter()
        .find(|c| c.role == Role::Spine)
        .and_then(|c| {
            let (s, e) = (*c.joints.first()?, *c.joints.last()?);
            side.canon(side.pose.position(s) - side.pose.position(e))
                .try_normalize()
        })
        .unwrap_or(-Vec3::Y);
    Some(arm_dir.dot(down).clamp(-1.0, 1.0).acos().to_degrees())
}

/// Check every mapped arm pair; a mismatch is an error or a warning by
/// `pose_check.on_mismatch`.
pub(crate) fn check(
    profile: &Profile,
    s: &Side,
    t: &Side,
    src_chains: &[Chain],
    tgt_chains: &[Chain],
) -> Result<Vec<Diagnostic>, RetargetError> {
    let mut warnings = Vec::new();
    for m in &profile.maps {
        let sc = src_chains.iter().find(|c| c.name == m.source);
        let tc = tgt_chains.iter().find(|c| c.name == m.target);
        let (Some(sc), Some(tc)) = (sc, tc) else {
            continue;
        };
        if !(sc.role.is_arm() && tc.role.is_arm()) {
            continue;
        }
        let (Some(sa), Some(ta)) = (arm_angle(s, src_chains, sc), arm_angle(t, tgt_chains, tc))
        else {
            continue;
        };
        if (sa - ta).abs() <= profile.pose_check.tolerance_deg {
            continue;
        }
        let err = RetargetError::PoseMismatch {
            chain: tc.name.clone(),
            joint: t.skel.name(tc.joints[0]).to_string(),
            source_deg: sa,
            target_deg: ta,
            source_kind: pose_kind(sa),
            target_kind: pose_kind(ta),
        };
        match profile.pose_check.on_mismatch {
            MismatchPolicy::Error => return Err(err),
            MismatchPolicy::Warn => warnings.push(
                Diagnostic::warning("retarget_pose_mismatch", err.to_string())
                    .joint(t.skel.name(tc.joints[0])),
            ),
        }
    }
    Ok(warnings)
}
