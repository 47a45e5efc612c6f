//! Root-motion extraction: the motion joint's component transform per
//! sample becomes a full-f32 trajectory and is removed from the visual
//! pose exactly once (the seed's `R_char(t) = reference_offset * R(t)`).

use super::{PrepareError, RootMotionSettings};
use ludus_anim_format::math::{Affine3A, Transform};
use ludus_anim_format::package::RootMotionPolicy;
use ludus_anim_format::rigid::RigidTransform;
use ludus_anim_format::trajectory::{extract_planar, normalize_trajectory};
use ludus_anim_format::trajectory::{trajectory_key_count, Trajectory, TrajectoryError};
use ludus_anim_model::{suggest, Decision, Diagnostic, ResampledClip};
use ludus_anim_runtime::Skeleton;
use serde::{Deserialize, Serialize};

/// The extracted, normalized root trajectory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreparedTrajectory {
    pub joint: String,
    pub joint_index: usize,
    pub policy: RootMotionPolicy,
    pub sample_rate_hz: f32,
    pub duration_s: f32,
    /// `trajectory_key_count(duration, rate)` keys; key 0 is the identity
    /// and the last key sits at exactly the duration.
    #[serde(with = "serde_rigid_vec")]
    pub keys: Vec<RigidTransform>,
    /// The removed first key: `R_char(t) = reference_offset * R(t)`.
    #[serde(with = "serde_rigid")]
    pub reference_offset: RigidTransform,
    /// Looping clips: position error of composing per-tick (30 Hz) deltas
    /// over 100 loops against `C^100`.
    pub drift_100_loops_m: Option<f32>,
}

impl PreparedTrajectory {
    /// The runtime view of the keys.
    pub fn trajectory(&self) -> Result<Trajectory<'_>, TrajectoryError> {
        Trajectory::new(&self.keys, self.sample_rate_hz, self.duration_s)
    }

    /// `R_char(t) = reference_offset * R(t)`, `t` clamped to the clip.
    pub fn character_at(&self, t: f32) -> RigidTransform {
        let r = self.trajectory().map(|tr| tr.sample(t)).unwrap_or_default();
        self.reference_offset.compose(&r)
    }

    /// Remove the trajectory at time `t` from an authored local pose the
    /// way the stage removed it from the samples (e.g. to compare a
    /// decoded clip with its source between samples). Returns false if
    /// the pose is too short.
    pub fn remove_from_pose(&self, skeleton: &Skeleton, t: f32, pose: &mut [Transform]) -> bool {
        if pose.len() != skeleton.joint_count() || self.joint_index >= pose.len() {
            return false;
        }
        remove_motion(skeleton, self.joint_index, &self.character_at(t), pose);
        true
    }
}

/// Serde for the runtime's `RigidTransform` (the runtime links no serde
/// for it): seven f32, rotation xyzw then translation xyz — the package's
/// key layout. The stage cache stores [`Prepared`] through these.
mod serde_rigid {
    use ludus_anim_format::math::{Quat, Vec3};
    use ludus_anim_format::rigid::RigidTransform;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn to_array(r: &RigidTransform) -> [f32; 7] {
        let (q, t) = (r.rotation, r.translation);
        [q.x, q.y, q.z, q.w, t.x, t.y, t.z]
    }
    pub fn from_array(a: [f32; 7]) -> RigidTransform {
        RigidTransform::new(
            Quat::from_xyzw(a[0], a[1], a[2], a[3]),
            Vec3::new(a[4], a[5], a[6]),
        )
    }
    pub fn serialize<S: Serializer>(r: &RigidTransform, s: S) -> Result<S::Ok, S::Error> {
        to_array(r).serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RigidTransform, D::Error> {
        Ok(from_array(<[f32; 7]>::deserialize(d)?))
    }
}

mod serde_rigid_vec {
    use super::serde_rigid::{from_array, to_array};
    use ludus_anim_format::rigid::RigidTransform;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &[RigidTransform], s: S) -> Result<S::Ok, S::Error> {
        v.iter().map(to_array).collect::<Vec<_>>().serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RigidTransform>, D::Error> {
        Ok(Vec::<[f32; 7]>::deserialize(d)?
            .into_iter()
            .map(from_array)
            .collect())
    }
}

/// Component transform of `joint`'s parent in `pose` (identity for the
/// root), by walking the ancestor chain: no allocation.
pub(super) fn parent_component(skeleton: &Skeleton, pose: &[Transform], joint: usize) -> Affine3A {
    let mut m = Affine3A::IDENTITY;
    let mut a = skeleton.parent(joint);
    while let Some(p) = a {
        m = pose[p].to_affine() * m;
        a = skeleton.parent(p);
    }
    m
}

/// The rigid part (rotation, translation) of an affine component
/// transform: scale (and any shear) is not locomotion.
pub(super) fn rigid_of(m: &Affine3A) -> RigidTransform {
    let (_, r, t) = m.to_scale_rotation_translation();
    RigidTransform::new(r.normalize(), t)
}

/// Whether an affine transform's scale is uniform (then `P^-1 K^-1 P` is
/// rigid and the removal is exact).
fn uniform_scale(m: &Affine3A) -> bool {
    let (s, _, _) = m.to_scale_rotation_translation();
    let (lo, hi) = (s.min_element().abs(), s.max_element().abs());
    hi > 0.0 && (hi - lo) <= 1e-4 * hi
}

/// Set `joint`'s local transform so that its component transform becomes
/// `inverse(k) * C` (C its current component transform), leaving the
/// parent chain unchanged: `L' = M * L` with `M = P^-1 * k^-1 * P`, whose
/// rigid part is applied to `L`'s translation and rotation (exact when the
/// parent's scale is uniform; the stage warns otherwise). Scale is kept.
/// Returns whether the parent's scale was uniform.
pub(super) fn remove_motion(
    skeleton: &Skeleton,
    joint: usize,
    k: &RigidTransform,
    pose: &mut [Transform],
) -> bool {
    let p = parent_component(skeleton, pose, joint);
    let kinv = k.inverse();
    let kinv = Affine3A::from_rotation_translation(kinv.rotation, kinv.translation);
    let m = rigid_of(&(p.inverse() * kinv * p));
    let l = pose[joint];
    pose[joint] = Transform {
        rotation: (m.rotation * l.rotation).normalize(),
        translation: m.rotation * l.translation + m.translation,
        scale: l.scale,
    };
    uniform_scale(&p)
}

/// Keep each joint's rotation samples in one hemisphere (as resampling
/// did) after a stage rewrote them, so shortest-path nlerp and the encoder
/// see continuous data.
pub(super) fn hemisphere_continuity(clip: &mut ResampledClip) {
    let j = clip.joint_count;
    for i in 1..clip.num_samples as usize {
        for k in 0..j {
            let prev = clip.samples[(i - 1) * j + k].rotation;
            let q = &mut clip.samples[i * j + k].rotation;
            if prev.dot(*q) < 0.0 {
                *q = -*q;
            }
        }
    }
}

pub(super) fn extract_root_motion(
    skeleton: &Skeleton,
    clip: &mut ResampledClip,
    rm: &RootMotionSettings,
    decisions: &mut Vec<Decision>,
    warnings: &mut Vec<Diagnostic>,
) -> Result<PreparedTrajectory, PrepareError> {
    let name = clip.name.clone();
    let joint = skeleton
        .find_by_name(&rm.joint)
        .ok_or_else(|| PrepareError::UnknownJoint {
            clip: name.clone(),
            joint: rm.joint.clone(),
            near: suggest::near_matches(&rm.joint, skeleton.names().iter().map(String::as_str)),
        })?;
    let joints = clip.joint_count;
    let n = clip.num_samples as usize;
    let rate = clip.sample_rate_hz;
    let duration = clip.duration_s;
    let count = trajectory_key_count(duration, rate).ok_or_else(|| PrepareError::RootMotion {
        clip: name.clone(),
        joint: rm.joint.clone(),
        time_s: duration,
        what: format!("no trajectory for duration {duration} s at {rate} Hz"),
    })?;

    let raw = character_transforms(skeleton, clip, joint, rm)?;

    // Keys: sample i for every grid point before the duration, and the
    // pose at the duration last. The resampled grid's last sample is the
    // pose at the duration (resampling clamps), so this is sample n - 1
    // whether or not the duration is on the grid.
    let mut keys: Vec<RigidTransform> = (0..count)
        .map(|i| raw[if i + 1 == count { n - 1 } else { i.min(n - 1) }])
        .collect();
    let reference_offset = normalize_trajectory(&mut keys);

    // Remove R_char(t) = raw key from the visual pose, exactly once.
    let mut nonuniform = false;
    for (i, k) in raw.iter().enumerate() {
        let pose = &mut clip.samples[i * joints..(i + 1) * joints];
        nonuniform |= !remove_motion(skeleton, joint, k, pose);
    }
    hemisphere_continuity(clip);
    if nonuniform {
        warnings.push(
            Diagnostic::warning(
                "root_motion_nonuniform_scale",
                "the root-motion joint has a parent with non-uniform scale; the removal keeps only the rigid part",
            )
            .clip(&name)
            .joint(&rm.joint),
        );
    }
    if let Some(w) = animated_ancestor(skeleton, clip, joint) {
        warnings.push(w.clip(&name).joint(&rm.joint));
    }
    let traj = PreparedTrajectory {
        joint: rm.joint.clone(),
        joint_index: joint,
        policy: rm.policy,
        sample_rate_hz: rate,
        duration_s: duration,
        keys,
        reference_offset,
        drift_100_loops_m: None,
    };
    let tr = traj.trajectory().map_err(|e| PrepareError::RootMotion {
        clip: name.clone(),
        joint: rm.joint.clone(),
        time_s: 0.0,
        what: format!("trajectory invalid: {e}"),
    })?;
    let c = tr.cycle();
    decisions.push(Decision::new(
        "root_motion_extracted",
        format!(
            "clip '{name}': {} root motion of joint '{}' extracted ({} keys at {rate} Hz, full f32); whole clip moves {:.4} m and turns {:.2} deg; reference offset t=({:.4}, {:.4}, {:.4})",
            rm.policy.as_str(),
            rm.joint,
            traj.keys.len(),
            c.translation.length(),
            (2.0 * c.rotation.xyz().length().atan2(c.rotation.w.abs())).to_degrees(),
            reference_offset.translation.x,
            reference_offset.translation.y,
            reference_offset.translation.z,
        ),
    ));
    Ok(traj)
}

/// The character transform at every sample: the policy's part of the
/// motion joint's component transform.
fn character_transforms(
    skeleton: &Skeleton,
    clip: &ResampledClip,
    joint: usize,
    rm: &RootMotionSettings,
) -> Result<Vec<RigidTransform>, PrepareError> {
    let joints = clip.joint_count;
    let n = clip.num_samples as usize;
    let rate = clip.sample_rate_hz;
    let mut comp = vec![Affine3A::IDENTITY; joints];
    let mut raw = Vec::with_capacity(n);
    for i in 0..n {
        let pose = &clip.samples[i * joints..(i + 1) * joints];
        skeleton.local_to_component(pose, &mut comp);
        let c = rigid_of(&comp[joint]);
        let k = match rm.policy {
            RootMotionPolicy::Planar => extract_planar(c),
            RootMotionPolicy::Full => c,
        };
        if !k.is_finite() {
            return Err(PrepareError::RootMotion {
                clip: clip.name.clone(),
                joint: rm.joint.clone(),
                time_s: i as f32 / rate,
                what: "component transform is not finite".into(),
            });
        }
        raw.push(k);
    }
    Ok(raw)
}

/// Per-tick (30 Hz) composition of `Trajectory::delta` over 100 loops
/// against the cycle transform's power `C^100`, as the runtime's own
/// property test measures it: the position error (meters) of a game that
/// accumulates root motion every frame in f32, after 100 loops.
pub fn drift_100_loops(tr: &Trajectory<'_>) -> f32 {
    drift_figures(tr).0
}

/// (f32 accumulation error, f64-accumulated position error): the second
/// separates the stored keys' error from f32 world-position rounding.
pub(super) fn drift_figures(tr: &Trajectory<'_>) -> (f32, f64) {
    let d = tr.duration_s() as f64;
    if d <= 0.0 {
        return (0.0, 0.0);
    }
    let total = 100.0 * d;
    let dt = 1.0 / 30.0;
    let mut acc = RigidTransform::IDENTITY;
    let mut pos64 = [0.0f64; 3];
    let mut t = 0.0f64;
    let mut i = 0u64;
    while t < total {
        i += 1;
        let next = (i as f64 * dt).min(total);
        let step = tr.delta(t, next, true);
        let v = acc.rotation * step.translation;
        pos64[0] += v.x as f64;
        pos64[1] += v.y as f64;
        pos64[2] += v.z as f64;
        acc = acc * step;
        t = next;
    }
    let exact = tr.cycle().pow(100).translation;
    let e64 = ((pos64[0] - exact.x as f64).powi(2)
        + (pos64[1] - exact.y as f64).powi(2)
        + (pos64[2] - exact.z as f64).powi(2))
    .sqrt();
    ((acc.translation - exact).length(), e64)
}

/// How far an ancestor's local translation may travel over the clip before
/// it is reported as motion the extraction leaves behind.
const ANCESTOR_TRAVEL_M: f32 = 0.01;

/// The root-motion joint's highest ancestor whose translation travels over
/// the clip: its motion is not extracted and stays in the pose (the loop
/// then pops by that distance), usually because the motion root was meant.
fn animated_ancestor(
    skeleton: &Skeleton,
    clip: &ResampledClip,
    joint: usize,
) -> Option<Diagnostic> {
    let joints = clip.joint_count;
    let n = clip.num_samples as usize;
    let mut found = None;
    let mut a = skeleton.parent(joint);
    while let Some(j) = a {
        let first = clip.samples.get(j)?.translation;
        let travel = (0..n)
            .filter_map(|i| clip.samples.get(i * joints + j))
            .map(|t| (t.translation - first).length())
            .fold(0.0f32, f32::max);
        if travel > ANCESTOR_TRAVEL_M {
            found = Some((j, travel));
        }
        a = skeleton.parent(j);
    }
    let (j, travel) = found?;
    Some(Diagnostic::warning(
        "root_motion_ancestor_animated",
        format!(
            "'{}', an ancestor of the root-motion joint, travels {:.3} m over the clip; that motion is not extracted and stays in the pose (did you mean root_motion.joint = '{}'?)",
            skeleton.name(j),
            travel,
            skeleton.name(j)
        ),
    ))
}
