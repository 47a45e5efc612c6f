//! What varies between the procedural retarget test rigs (`rigs`): rest
//! pose, bone frames, units, root placement, motion, names, proportions;
//! and the walk's timing. Shared by the rig builder and its motion.

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RestPose {
    T,
    /// Upper arms 45 degrees down from the T-pose.
    A,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoneAxes {
    /// Joint frames aligned with the component axes at rest.
    Identity,
    /// Blender: local +Y along the bone, +Z rolled towards forward.
    Blender,
    /// Maya: local +X along the bone, +Y rolled towards up.
    Maya,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Units {
    Meters,
    Centimeters,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RootPlacement {
    /// A `Root` joint on the ground carries root motion; the hips below it.
    AtFeet,
    /// The hips are the skeleton root.
    AtPelvis,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Motion {
    InPlace,
    RootMotion,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Naming {
    /// `LeftUpLeg`, `Spine1`.
    Mixamo,
    /// `thigh_l`, `spine_01`.
    Unreal,
    /// `thigh.L`, `spine.001`.
    Rigify,
    /// `LeftHip`, `LeftKnee`, `LeftAnkle`, `LeftCollar`, `LeftShoulder`,
    /// `LeftElbow`, `LeftWrist` (many BVH and mocap exports).
    HipKnee,
    /// 3ds Max Biped: `Bip01 L Thigh`, `Bip01 Pelvis`.
    Biped,
    /// No names: `node0`..`nodeN` (glTF exports without joint names).
    Unnamed,
    /// French: `bassin`, `cuisse gauche`, `jambe_droit`, `tête`,
    /// `épaule gauche` (the ufbx Blender barbarian's language).
    French,
}

/// Where the character faces at rest (and walks).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Facing {
    /// The seed's convention.
    PlusZ,
    /// Turned 180 degrees about up (many DCC exports, MotionBuilder mocap).
    MinusZ,
    /// Turned 90 degrees about up.
    PlusX,
}

impl Facing {
    /// Yaw about +Y (radians) taking +Z to this facing.
    pub fn yaw(self) -> f64 {
        match self {
            Facing::PlusZ => 0.0,
            Facing::MinusZ => std::f64::consts::PI,
            Facing::PlusX => std::f64::consts::FRAC_PI_2,
        }
    }
}

/// One rig variant.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigSpec {
    pub rest: RestPose,
    pub leg_scale: f64,
    pub arm_scale: f64,
    /// Joints between the hips and the neck (3 or 5 in the matrix).
    pub spine_joints: usize,
    pub twist_joints: bool,
    pub axes: BoneAxes,
    pub units: Units,
    pub root: RootPlacement,
    pub motion: Motion,
    pub naming: Naming,
    pub facing: Facing,
}

impl Default for RigSpec {
    fn default() -> Self {
        RigSpec {
            rest: RestPose::T,
            leg_scale: 1.0,
            arm_scale: 1.0,
            spine_joints: 3,
            twist_joints: false,
            axes: BoneAxes::Identity,
            units: Units::Meters,
            root: RootPlacement::AtFeet,
            motion: Motion::RootMotion,
            naming: Naming::Mixamo,
            facing: Facing::PlusZ,
        }
    }
}

/// Walk cycle length (seconds) and key rate of the rigs' clips.
pub const WALK_S: f64 = 1.0;
pub const KEY_HZ: f64 = 30.0;
/// Ankle height above the floor at rest (meters).
pub const ANKLE_M: f64 = 0.08;
