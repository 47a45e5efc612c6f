//! Retarget poses: the pose of each side that means "no motion" (rest, a
//! clip frame, plus per-joint rotation overrides). The seed keeps this
//! distinct from the rest, bind and additive reference poses.

use crate::error::RetargetError;
use crate::profile::{PoseKind, PoseSpec, Profile};
use crate::rig::{sample_clip, PoseFk};
use crate::suggestion::hint;
use ludus_anim_format::math::{Quat, Transform};
use ludus_anim_model::SourceClip;
use ludus_anim_runtime::Skeleton;

/// The two resolved retarget poses (local transforms in skeleton order).
#[derive(Clone, Debug, PartialEq)]
pub struct RetargetPoses {
    pub source: Vec<Transform>,
    pub target: Vec<Transform>,
}

impl RetargetPoses {
    /// Both rest poses.
    pub fn rest(source: &Skeleton, target: &Skeleton) -> RetargetPoses {
        RetargetPoses {
            source: source.rest_pose().to_vec(),
            target: target.rest_pose().to_vec(),
        }
    }

    /// Resolve the profile's pose declarations. `target_clips` are the
    /// clips of the target skeleton's own file (for a `clip_frame` pose).
    pub fn resolve(
        profile: &Profile,
        source: &Skeleton,
        source_clips: &[SourceClip],
        target: &Skeleton,
        target_clips: &[SourceClip],
    ) -> Result<RetargetPoses, RetargetError> {
        Ok(RetargetPoses {
            source: resolve_side("source", &profile.source.pose, source, source_clips)?,
            target: resolve_side("target", &profile.target.pose, target, target_clips)?,
        })
    }
}

fn resolve_side(
    side: &'static str,
    spec: &PoseSpec,
    skeleton: &Skeleton,
    clips: &[SourceClip],
) -> Result<Vec<Transform>, RetargetError> {
    let mut local = skeleton.rest_pose().to_vec();
    if spec.kind == PoseKind::ClipFrame {
        let name = spec.clip.as_deref().unwrap_or_default();
        let clip = clips
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| RetargetError::BadPose {
                side,
                message: format!(
                    "{side}.pose.clip: clip '{name}' not found{}; the {side} file's clips: {}",
                    hint(name, clips.iter().map(|c| c.name.as_str())),
                    clip_list(clips)
                ),
            })?;
        if let Some(tr) = clip
            .tracks
            .iter()
            .find(|t| t.joint >= skeleton.joint_count())
        {
            return Err(RetargetError::BadTrack {
                clip: clip.name.clone(),
                joint: tr.joint,
            });
        }
        sample_clip(skeleton, clip, spec.time_s.unwrap_or(0.0), &mut local);
    }
    for o in &spec.overrides {
        let j = skeleton
            .find_by_name(&o.joint)
            .ok_or_else(|| RetargetError::BadPose {
                side,
                message: format!(
                    "{side}.pose.overrides: joint '{}' not found{}",
                    o.joint,
                    hint(&o.joint, skeleton.names().iter().map(String::as_str))
                ),
            })?;
        if let Some([x, y, z, w]) = o.rotation {
            let q = Quat::from_xyzw(x, y, z, w);
            if !q.is_finite() || q.length_squared() < 1e-8 {
                return Err(RetargetError::BadPose {
                    side,
                    message: format!("override '{}': rotation cannot be normalized", o.joint),
                });
            }
            local[j].rotation = q.normalize();
        }
        if let Some(deg) = o.rotate_deg {
            let fk = PoseFk::new(skeleton, local.clone());
            let r = euler_deg(deg);
            let mut fk = fk;
            fk.set_global_rotation(skeleton, j, r * fk.rot[j]);
            local[j].rotation = fk.local[j].rotation;
        }
    }
    Ok(local)
}

/// The clips' names, quoted, the first 20 and how many more (or "none").
fn clip_list(clips: &[SourceClip]) -> String {
    if clips.is_empty() {
        return "none".to_string();
    }
    let mut out: Vec<String> = clips
        .iter()
        .take(20)
        .map(|c| format!("'{}'", c.name))
        .collect();
    if clips.len() > 20 {
        out.push(format!("and {} more", clips.len() - 20));
    }
    out.join(", ")
}

/// `Rz * Ry * Rx` from degrees (x applied first).
pub fn euler_deg(d: [f32; 3]) -> Quat {
    let [x, y, z] = d.map(f32::to_radians);
    Quat::from_rotation_z(z) * Quat::from_rotation_y(y) * Quat::from_rotation_x(x)
}
