//! Procedural retarget test rigs: one humanoid layout, many variations.
//!
//! Every variant plays the same *physical* motion (a looping walk whose
//! stance feet are exactly still in the world, solved by sagittal two-bone
//! IK from planned foot paths, plus a forearm-twist clip), so a retarget
//! between two variants of equal proportions has a ground truth: the
//! target variant's own clip. Variations change only how the motion is
//! expressed: rest pose (T or A), bone frames (identity, Blender-style +Y
//! bones, Maya-style +X bones with another roll), units (m or cm), root
//! placement, root motion, joint count and names. Leg and arm scale change
//! proportions (and the gait's stride, so feet still plant).

use crate::rigs_motion::{canonical_pose, Layout};
use glam::{DMat3, DQuat, DVec3};
use ludus_anim_model::{
    AxisSystem, Curve, Diagnostics, Interpolation, JointTracks, Quat, SourceAsset, SourceClip,
    SourceJoint, SourceSkeleton, Transform, Vec3,
};

pub use crate::rigs_spec::*;

/// Rest bone frame of joint `j`: columns are the local axes in component
/// space (T-pose).
fn frame(axes: BoneAxes, bone: DVec3) -> DQuat {
    let b = bone.try_normalize().unwrap_or(DVec3::Y);
    let (primary, hint) = match axes {
        BoneAxes::Identity => return DQuat::IDENTITY,
        BoneAxes::Blender => (b, DVec3::Z),
        BoneAxes::Maya => (b, DVec3::Y),
    };
    let hint = if primary.dot(hint).abs() > 0.9 {
        DVec3::X
    } else {
        hint
    };
    let second = (hint - primary * primary.dot(hint)).normalize();
    let m = match axes {
        BoneAxes::Blender => DMat3::from_cols(primary.cross(second), primary, second),
        _ => DMat3::from_cols(primary, second, primary.cross(second)),
    };
    DQuat::from_mat3(&m).normalize()
}

fn to_f32(v: DVec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

fn q32(q: DQuat) -> Quat {
    Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32).normalize()
}

/// The rig as a source asset (what an importer would produce): skeleton,
/// a looping `walk` and a 2 s `twist` clip (the left hand turns 200
/// degrees about the forearm).
pub fn build(spec: &RigSpec) -> SourceAsset {
    let layout = Layout::new(spec);
    let unit = match spec.units {
        Units::Meters => 1.0,
        Units::Centimeters => 100.0,
    };
    let frames: Vec<DQuat> = layout
        .joints
        .iter()
        .map(|j| frame(spec.axes, j.bone))
        .collect();
    let rest_pose = layout.rest_rotations(spec.rest);
    // The facing turns the skeleton root (rest and motion) about up, so
    // the whole character and its travel face that way.
    let yaw = DQuat::from_rotation_y(spec.facing.yaw());
    let parent_frame = |j: usize| {
        layout.joints[j]
            .parent
            .map_or(yaw.conjugate(), |p| frames[p])
    };
    let local_rot = |j: usize, canon: &[DQuat]| parent_frame(j).conjugate() * canon[j] * frames[j];
    let local_tr = |j: usize, v: DVec3| to_f32(parent_frame(j).conjugate() * v * unit);
    let joints = layout
        .joints
        .iter()
        .enumerate()
        .map(|(j, cj)| SourceJoint {
            name: cj.name.clone(),
            parent: cj.parent,
            rest: Transform::new(
                local_tr(j, cj.offset),
                q32(local_rot(j, &rest_pose)),
                Vec3::ONE,
            ),
        })
        .collect();
    let clip = |name: &str, duration: f64, twist: bool| {
        let n = (duration * KEY_HZ).round() as usize;
        let times: Vec<f32> = (0..=n).map(|i| (i as f64 / KEY_HZ) as f32).collect();
        let poses: Vec<_> = (0..=n)
            .map(|i| canonical_pose(&layout, spec, i as f64 / KEY_HZ, twist))
            .collect();
        let tracks = (0..layout.joints.len())
            .map(|j| {
                let mut tr = JointTracks::new(j);
                let rots: Vec<Quat> = poses
                    .iter()
                    .map(|p| q32(local_rot(j, &p.rotations)))
                    .collect();
                tr.rotation = Some(Curve::from_values(
                    Interpolation::Linear,
                    &times,
                    &continuous(rots),
                ));
                if let Some(ts) = poses
                    .iter()
                    .map(|p| p.translations[j])
                    .collect::<Option<Vec<_>>>()
                {
                    let ts: Vec<Vec3> = ts.into_iter().map(|v| local_tr(j, v)).collect();
                    tr.translation = Some(Curve::from_values(Interpolation::Linear, &times, &ts));
                }
                tr
            })
            .collect();
        let mut c = SourceClip {
            name: name.into(),
            duration_s: duration as f32,
            tracks,
            curves: vec![],
            frame_rate_hz: Some(KEY_HZ as f32),
            key_times: vec![],
            markers: vec![],
        };
        c.collect_key_times();
        c
    };
    SourceAsset {
        path: format!("rig-{spec:?}.generated"),
        // Keyed curves with authored interpolation, as glTF carries them.
        format: ludus_anim_model::SourceFormat::Gltf,
        skeleton: SourceSkeleton { joints },
        clips: vec![clip("walk", WALK_S, false), clip("twist", 2.0, true)],
        unit_scale_m: (1.0 / unit) as f32,
        source_axes: AxisSystem {
            description: "+Y up, +Z front, right-handed".into(),
        },
        joint_shell_distance: None,
        diagnostics: Diagnostics::default(),
        decisions: vec![],
        companions: vec![],
        skins: Vec::new(),
        sockets: Vec::new(),
    }
}

fn continuous(mut q: Vec<Quat>) -> Vec<Quat> {
    for i in 1..q.len() {
        if q[i - 1].dot(q[i]) < 0.0 {
            q[i] = -q[i];
        }
    }
    q
}

/// Joint name of a layout key in a naming style (public for tests that
/// look joints up).
pub use crate::rigs_motion::{joint_name, Key, Sd};
