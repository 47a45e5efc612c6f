//! Layout and physical motion of the retarget test rigs (see `rigs`).
//! Plain f64 std math: these rigs are generated at test time and never
//! committed, so libm differences across platforms do not matter here.

use crate::rigs_spec::{Motion, Naming, RestPose, RigSpec, RootPlacement, ANKLE_M, WALK_S};
use glam::{DQuat, DVec3};
use std::f64::consts::{PI, TAU};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sd {
    C,
    L,
    R,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Key {
    Root,
    Hips,
    Spine(usize),
    Neck,
    Head,
    Clavicle,
    UpperArm,
    ForeArm,
    Twist,
    Hand,
    Thigh,
    Calf,
    Foot,
    Toe,
}

pub struct LayoutJoint {
    pub key: Key,
    pub side: Sd,
    pub name: String,
    pub parent: Option<usize>,
    /// T-pose offset from the parent, canonical axes, meters.
    pub offset: DVec3,
    /// Direction of the bone this joint starts (rest, T-pose).
    pub bone: DVec3,
}

pub struct Layout {
    pub joints: Vec<LayoutJoint>,
    pub hip_height: f64,
    pub leg: f64,
}

/// Name of a joint in a naming style.
/// `Unnamed` rigs are named by joint index in [`Layout::new`].
pub fn joint_name(naming: Naming, key: Key, side: Sd) -> String {
    match naming {
        Naming::HipKnee => return hip_knee_name(key, side),
        Naming::Biped => return biped_name(key, side),
        Naming::French => return french_name(key, side),
        _ => {}
    }
    let (l, r) = match naming {
        Naming::Unreal => ("_l", "_r"),
        Naming::Rigify => (".L", ".R"),
        _ => ("Left", "Right"),
    };
    let base = |m: &str, u: &str, g: &str| match naming {
        Naming::Unreal => u.to_string(),
        Naming::Rigify => g.to_string(),
        _ => m.to_string(),
    };
    let b = match key {
        Key::Root => base("Root", "root", "root"),
        Key::Hips => base("Hips", "pelvis", "pelvis"),
        Key::Spine(0) => base("Spine", "spine_01", "spine.001"),
        Key::Spine(k) => match naming {
            Naming::Unreal => format!("spine_0{}", k + 1),
            Naming::Rigify => format!("spine.00{}", k + 1),
            _ => format!("Spine{k}"),
        },
        Key::Neck => base("Neck", "neck_01", "neck"),
        Key::Head => base("Head", "head", "head"),
        Key::Clavicle => base("Shoulder", "clavicle", "shoulder"),
        Key::UpperArm => base("Arm", "upperarm", "upper_arm"),
        Key::ForeArm => base("ForeArm", "lowerarm", "forearm"),
        Key::Twist => base("ForeArmTwist", "lowerarm_twist_01", "forearm_twist"),
        Key::Hand => base("Hand", "hand", "hand"),
        Key::Thigh => base("UpLeg", "thigh", "thigh"),
        Key::Calf => base("Leg", "calf", "shin"),
        Key::Foot => base("Foot", "foot", "foot"),
        Key::Toe => base("ToeBase", "ball", "toe"),
    };
    match (side, naming) {
        (Sd::C, _) => b,
        (Sd::L, Naming::Unreal | Naming::Rigify) => format!("{b}{l}"),
        (Sd::R, Naming::Unreal | Naming::Rigify) => format!("{b}{r}"),
        (Sd::L, _) => format!("{l}{b}"),
        (Sd::R, _) => format!("{r}{b}"),
    }
}

/// Hip/Knee/Ankle, Collar/Shoulder/Elbow/Wrist.
fn hip_knee_name(key: Key, side: Sd) -> String {
    let b = match key {
        Key::Root => "Root".to_string(),
        Key::Hips => "Hips".to_string(),
        Key::Spine(k) => format!("Chest{}", k + 1),
        Key::Neck => "Neck".to_string(),
        Key::Head => "Head".to_string(),
        Key::Clavicle => "Collar".to_string(),
        Key::UpperArm => "Shoulder".to_string(),
        Key::ForeArm => "Elbow".to_string(),
        Key::Twist => "ElbowTwist".to_string(),
        Key::Hand => "Wrist".to_string(),
        Key::Thigh => "Hip".to_string(),
        Key::Calf => "Knee".to_string(),
        Key::Foot => "Ankle".to_string(),
        Key::Toe => "Toe".to_string(),
    };
    match side {
        Sd::C => b,
        Sd::L => format!("Left{b}"),
        Sd::R => format!("Right{b}"),
    }
}

/// French, accents and spaces as Blender users write them: `jambe gauche`,
/// `épaule_d`, `tête`.
fn french_name(key: Key, side: Sd) -> String {
    let b = match key {
        Key::Root => "racine".to_string(),
        Key::Hips => "bassin".to_string(),
        Key::Spine(k) => format!("colonne.{:03}", k + 1),
        Key::Neck => "cou".to_string(),
        Key::Head => "tête".to_string(),
        Key::Clavicle => "épaule".to_string(),
        Key::UpperArm => "bras".to_string(),
        Key::ForeArm => "avant-bras".to_string(),
        Key::Twist => "avant-bras torsion".to_string(),
        Key::Hand => "main".to_string(),
        Key::Thigh => "cuisse".to_string(),
        Key::Calf => "jambe".to_string(),
        Key::Foot => "pied".to_string(),
        Key::Toe => "orteil".to_string(),
    };
    match side {
        Sd::C => b,
        Sd::L => format!("{b} gauche"),
        Sd::R => format!("{b}_droit"),
    }
}

/// 3ds Max Biped.
fn biped_name(key: Key, side: Sd) -> String {
    let b = match key {
        Key::Root => return "Bip01".to_string(),
        Key::Hips => "Pelvis".to_string(),
        Key::Spine(0) => "Spine".to_string(),
        Key::Spine(k) => format!("Spine{k}"),
        Key::Neck => "Neck".to_string(),
        Key::Head => "Head".to_string(),
        Key::Clavicle => "Clavicle".to_string(),
        Key::UpperArm => "UpperArm".to_string(),
        Key::ForeArm => "Forearm".to_string(),
        Key::Twist => "ForeTwist".to_string(),
        Key::Hand => "Hand".to_string(),
        Key::Thigh => "Thigh".to_string(),
        Key::Calf => "Calf".to_string(),
        Key::Foot => "Foot".to_string(),
        Key::Toe => "Toe0".to_string(),
    };
    match side {
        Sd::C => format!("Bip01 {b}"),
        Sd::L => format!("Bip01 L {b}"),
        Sd::R => format!("Bip01 R {b}"),
    }
}

impl Layout {
    pub fn new(spec: &RigSpec) -> Layout {
        let (ls, asc) = (spec.leg_scale, spec.arm_scale);
        let leg = 0.42 * ls;
        let hip_height = ANKLE_M + 2.0 * leg + 0.05;
        let mut joints: Vec<LayoutJoint> = Vec::new();
        let mut add = |key, side, parent: Option<usize>, offset: DVec3| {
            joints.push(LayoutJoint {
                key,
                side,
                name: if spec.naming == Naming::Unnamed {
                    format!("node{}", joints.len())
                } else {
                    joint_name(spec.naming, key, side)
                },
                parent,
                offset,
                bone: DVec3::ZERO,
            });
            joints.len() - 1
        };
        let root =
            (spec.root == RootPlacement::AtFeet).then(|| add(Key::Root, Sd::C, None, DVec3::ZERO));
        let hips = add(Key::Hips, Sd::C, root, DVec3::new(0.0, hip_height, 0.0));
        let n = spec.spine_joints.max(1);
        let mut top = hips;
        for k in 0..n {
            let h = if k == 0 {
                0.10
            } else {
                0.35 / (n - 1).max(1) as f64
            };
            top = add(Key::Spine(k), Sd::C, Some(top), DVec3::new(0.0, h, 0.0));
        }
        let neck = add(Key::Neck, Sd::C, Some(top), DVec3::new(0.0, 0.12, 0.0));
        add(Key::Head, Sd::C, Some(neck), DVec3::new(0.0, 0.10, 0.0));
        for (side, s) in [(Sd::L, 1.0), (Sd::R, -1.0)] {
            let c = add(
                Key::Clavicle,
                side,
                Some(top),
                DVec3::new(0.03 * s, 0.08, 0.0),
            );
            let u = add(Key::UpperArm, side, Some(c), DVec3::new(0.14 * s, 0.0, 0.0));
            let f = add(
                Key::ForeArm,
                side,
                Some(u),
                DVec3::new(0.28 * asc * s, 0.0, 0.0),
            );
            if spec.twist_joints {
                add(
                    Key::Twist,
                    side,
                    Some(f),
                    DVec3::new(0.125 * asc * s, 0.0, 0.0),
                );
            }
            add(
                Key::Hand,
                side,
                Some(f),
                DVec3::new(0.25 * asc * s, 0.0, 0.0),
            );
        }
        for (side, s) in [(Sd::L, 1.0), (Sd::R, -1.0)] {
            let t = add(
                Key::Thigh,
                side,
                Some(hips),
                DVec3::new(0.09 * s, -0.05, 0.0),
            );
            let c = add(Key::Calf, side, Some(t), DVec3::new(0.0, -leg, 0.0));
            let f = add(Key::Foot, side, Some(c), DVec3::new(0.0, -leg, 0.0));
            add(Key::Toe, side, Some(f), DVec3::new(0.0, -0.06, 0.13));
        }
        for j in 0..joints.len() {
            let child = (j + 1..joints.len())
                .find(|&c| joints[c].parent == Some(j) && joints[c].key != Key::Twist);
            joints[j].bone = match child {
                Some(c) => joints[c].offset,
                None if joints[j].key == Key::Root => DVec3::Y,
                None => joints[j].offset,
            };
        }
        Layout {
            joints,
            hip_height,
            leg,
        }
    }

    /// Canonical local rest rotations: identity (T-pose), upper arms 45
    /// degrees down for the A-pose.
    pub fn rest_rotations(&self, rest: RestPose) -> Vec<DQuat> {
        self.joints
            .iter()
            .map(|j| match (rest, j.key, j.side) {
                (RestPose::A, Key::UpperArm, Sd::L) => DQuat::from_rotation_z(-PI / 4.0),
                (RestPose::A, Key::UpperArm, Sd::R) => DQuat::from_rotation_z(PI / 4.0),
                _ => DQuat::IDENTITY,
            })
            .collect()
    }
}

/// Canonical local rotations, and translations of the joints that carry
/// motion (root and hips).
pub struct CanonPose {
    pub rotations: Vec<DQuat>,
    pub translations: Vec<Option<DVec3>>,
}

fn smooth(s: f64) -> f64 {
    s * s * (3.0 - 2.0 * s)
}

/// World ankle position (y, z) of a foot whose cycle is offset by `off`.
fn foot_path(t: f64, off: f64, stride: f64, lift: f64) -> (f64, f64) {
    let u = t / WALK_S + off;
    let k = u.floor();
    let phi = u - k;
    let base = k - off + 0.3;
    if phi < 0.6 {
        (ANKLE_M, base * stride)
    } else {
        let s = (phi - 0.6) / 0.4;
        (ANKLE_M + lift * (PI * s).sin(), (base + smooth(s)) * stride)
    }
}

/// Sagittal two-bone IK: thigh and shin angles about X (rest: down).
fn leg_angles(hip: (f64, f64), ankle: (f64, f64), a: f64) -> (f64, f64) {
    let (dy, dz) = (ankle.0 - hip.0, ankle.1 - hip.1);
    let c = (dy * dy + dz * dz).sqrt().clamp(1e-9, 2.0 * a * 0.999_999);
    let (uy, uz) = (dy / c, dz / c);
    let x = c / 2.0;
    let h = (a * a - x * x).max(0.0).sqrt();
    // Knee forward (+Z): the perpendicular (uz, -uy) has positive z.
    let (ky, kz) = (hip.0 + uy * x + uz * h, hip.1 + uz * x - uy * h);
    let a1 = (-(kz - hip.1)).atan2(-(ky - hip.0));
    let a2 = (-(ankle.1 - kz)).atan2(-(ankle.0 - ky));
    (a1, a2)
}

pub fn canonical_pose(layout: &Layout, spec: &RigSpec, t: f64, twist_clip: bool) -> CanonPose {
    let ls = spec.leg_scale;
    let stride = 0.8 * ls;
    let u = t / WALK_S;
    let travel = if spec.motion == Motion::RootMotion {
        stride * u
    } else {
        0.0
    };
    let pelvis_y = layout.hip_height - 0.05 * ls - 0.01 * ls * (2.0 * TAU * u).cos();
    let hand_twist = if twist_clip {
        (200.0f64).to_radians() * t / 2.0
    } else {
        0.3 * (TAU * u).sin()
    };
    let n = spec.spine_joints.max(1) as f64;
    let mut legs = [(0.0, 0.0); 2];
    for (i, off) in [0.0, 0.5].into_iter().enumerate() {
        let (fy, fz) = foot_path(t, off, stride, 0.06 * ls);
        legs[i] = leg_angles((pelvis_y - 0.05, stride * u), (fy, fz), layout.leg);
    }
    let mirror = |q: DQuat| DQuat::from_xyzw(q.x, -q.y, -q.z, q.w);
    let mut rotations = Vec::with_capacity(layout.joints.len());
    let mut translations = Vec::with_capacity(layout.joints.len());
    for j in &layout.joints {
        let phase = if j.side == Sd::R { PI } else { 0.0 };
        let (a1, a2) = legs[usize::from(j.side == Sd::R)];
        let swing = 0.35 * (TAU * u + phase).sin();
        let left = match j.key {
            Key::Root | Key::Hips | Key::Clavicle | Key::Toe => DQuat::IDENTITY,
            Key::Spine(_) => {
                DQuat::from_rotation_x(0.06 / n)
                    * DQuat::from_rotation_y(0.12 * (TAU * u).sin() / n)
            }
            Key::Neck => DQuat::from_rotation_x(-0.03),
            Key::Head => DQuat::from_rotation_y(-0.05 * (TAU * u).sin()),
            Key::UpperArm => DQuat::from_rotation_x(swing) * DQuat::from_rotation_z(-1.3),
            Key::ForeArm => DQuat::from_rotation_y(-0.5),
            Key::Twist => DQuat::from_rotation_x(0.5 * hand_twist),
            Key::Hand => DQuat::from_rotation_x(hand_twist) * DQuat::from_rotation_z(-0.1),
            Key::Thigh => DQuat::from_rotation_x(a1),
            Key::Calf => DQuat::from_rotation_x(a2 - a1),
            Key::Foot => DQuat::from_rotation_x(-a2),
        };
        rotations.push(
            if j.side == Sd::R && j.key != Key::Thigh && j.key != Key::Calf && j.key != Key::Foot {
                mirror(left)
            } else {
                left
            },
        );
        translations.push(match (j.key, spec.root) {
            (Key::Root, _) => Some(DVec3::new(0.0, 0.0, travel)),
            (Key::Hips, RootPlacement::AtFeet) => Some(DVec3::new(0.0, pelvis_y, 0.0)),
            (Key::Hips, RootPlacement::AtPelvis) => Some(DVec3::new(0.0, pelvis_y, travel)),
            _ => None,
        });
    }
    CanonPose {
        rotations,
        translations,
    }
}
