//! The retarget profile (`*.toml`, schema `schemas/retarget-profile.schema.json`,
//! documented in `schemas/retarget.md`). Unknown keys are rejected with a
//! "did you mean" hint: a typo must never fall back to a default silently.
//!
//! The profile is plain data; [`crate::plan`] resolves it against the two
//! skeletons.

use crate::error::ProfileError;
use crate::suggestion::with_suggestion;
use serde::{Deserialize, Serialize};

/// The unit vector of an axis name (`+y`, `-z`, ...), as `up` and
/// `forward` are written.
pub use crate::basis::axis as axis_vector;

/// Profile format version this crate reads and writes.
pub const PROFILE_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default = "version")]
    pub version: u32,
    pub source: SideSpec,
    pub target: SideSpec,
    /// Chain map: which source chain drives which target chain, and how.
    #[serde(default, rename = "map")]
    pub maps: Vec<ChainMap>,
    #[serde(default)]
    pub root: RootSpec,
    #[serde(default, rename = "twist")]
    pub twists: Vec<TwistSpec>,
    #[serde(default)]
    pub contacts: ContactSpec,
    #[serde(default)]
    pub pose_check: PoseCheck,
    #[serde(default)]
    pub budgets: Budgets,
    #[serde(default)]
    pub bake: BakeSpec,
}

/// f32 values written as the shortest decimal that reads back to the same
/// f32 (`0.1`, not the f64 widening `0.10000000149011612`).
mod short {
    use serde::Serializer;

    fn shortest(v: f32) -> f64 {
        // f32's Display is its shortest round-trip form.
        v.to_string().parse().unwrap_or(f64::from(v))
    }
    pub fn one<S: Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_f64(shortest(*v))
    }
    pub fn opt<S: Serializer>(v: &Option<f32>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(x) => s.serialize_some(&shortest(*x)),
            None => s.serialize_none(),
        }
    }
    pub fn opt_arr<S: Serializer, const N: usize>(
        v: &Option<[f32; N]>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match v {
            Some(a) => s.collect_seq(a.iter().map(|x| shortest(*x))),
            None => s.serialize_none(),
        }
    }
}

fn version() -> u32 {
    PROFILE_VERSION
}

/// One side (source or target) of the retarget.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SideSpec {
    /// File the skeleton comes from (any importer); the cooker resolves it
    /// relative to the profile.
    pub skeleton: String,
    /// Skeleton compatibility identity (32 hex digits) the profile was
    /// written for; checked when present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identity: Option<String>,
    /// The rig's rest-pose size as the profile was written for it
    /// (meters: the diagonal of the box around its joints). When the
    /// identity does not match, the ratio to the rig's present size tells
    /// a units mismatch (a factor such as 100 for cm read as m) from a
    /// changed rig.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size_m: Option<f32>,
    /// Component-space axis that points up (`+y`, `-z`, ...).
    #[serde(default = "plus_y")]
    pub up: String,
    /// Component-space axis the character faces.
    #[serde(default = "plus_z")]
    pub forward: String,
    /// Up coordinate of the ground plane (meters, component space).
    #[serde(default)]
    #[serde(serialize_with = "short::one")]
    pub floor: f32,
    /// Informational: the rest kind `suggest` detected (T-pose, A-pose).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rest_kind: Option<String>,
    #[serde(default)]
    pub pose: PoseSpec,
    #[serde(default, rename = "chain")]
    pub chains: Vec<ChainSpec>,
}

fn plus_y() -> String {
    "+y".into()
}
fn plus_z() -> String {
    "+z".into()
}

/// The retarget pose: what "no motion" means for this side.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseSpec {
    #[serde(default)]
    pub kind: PoseKind,
    /// For `clip_frame`: the clip and the time sampled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clip: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "short::opt"
    )]
    pub time_s: Option<f32>,
    /// Applied on top of the rest or clip frame, in order.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub overrides: Vec<PoseOverride>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PoseKind {
    #[default]
    Rest,
    ClipFrame,
}

/// A per-joint rotation override: `rotation` replaces the local rotation
/// (x, y, z, w); `rotate_deg` turns the joint (and its subtree) in
/// component space by Euler angles in degrees, `Rz * Ry * Rx`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseOverride {
    pub joint: String,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "short::opt_arr"
    )]
    pub rotation: Option<[f32; 4]>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "short::opt_arr"
    )]
    pub rotate_deg: Option<[f32; 3]>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    Spine,
    Neck,
    Head,
    ClavicleL,
    ClavicleR,
    ArmL,
    ArmR,
    LegL,
    LegR,
    FootL,
    FootR,
    FingerL,
    FingerR,
    Tail,
    Custom,
}

impl Role {
    /// Target chains with these roles must be mapped unless `required = false`.
    pub fn required_by_default(self) -> bool {
        matches!(
            self,
            Role::Spine | Role::Head | Role::ArmL | Role::ArmR | Role::LegL | Role::LegR
        )
    }
    pub fn is_arm(self) -> bool {
        matches!(self, Role::ArmL | Role::ArmR)
    }
    pub fn is_leg(self) -> bool {
        matches!(self, Role::LegL | Role::LegR)
    }
    pub fn name(self) -> &'static str {
        match self {
            Role::Spine => "spine",
            Role::Neck => "neck",
            Role::Head => "head",
            Role::ClavicleL => "clavicle_l",
            Role::ClavicleR => "clavicle_r",
            Role::ArmL => "arm_l",
            Role::ArmR => "arm_r",
            Role::LegL => "leg_l",
            Role::LegR => "leg_r",
            Role::FootL => "foot_l",
            Role::FootR => "foot_r",
            Role::FingerL => "finger_l",
            Role::FingerR => "finger_r",
            Role::Tail => "tail",
            Role::Custom => "custom",
        }
    }
}

/// A chain: `start` is an ancestor of (or equal to) `end`; its joints are
/// the path between them, parent first.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainSpec {
    pub name: String,
    pub role: Role,
    pub start: String,
    pub end: String,
    /// Target only: whether the chain must be mapped (default by role).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<bool>,
    /// Target only: keep the chain's position rigidly attached to this
    /// joint as in the retarget pose. For IK controls (feet, hands) that a
    /// rig parents outside the limb they end.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub follow: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RotationMode {
    /// Sample the source chain at each target joint's normalized length
    /// (Unreal IK Retargeter's default FK mode).
    #[default]
    Interpolated,
    OneToOne,
    OneToOneReversed,
    None,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TranslationMode {
    /// Target retarget-pose translation: bone lengths kept.
    #[default]
    None,
    GloballyScaled,
    Absolute,
    Stretch,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChainMap {
    pub source: String,
    pub target: String,
    #[serde(default)]
    pub rotation: RotationMode,
    #[serde(default)]
    pub translation: TranslationMode,
}

/// Pelvis and motion root. Scales default to the hip-height ratio.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pelvis: Option<JointPair>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub motion_root: Option<JointPair>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "short::opt"
    )]
    pub horizontal_scale: Option<f32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "short::opt"
    )]
    pub vertical_scale: Option<f32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "short::opt"
    )]
    pub motion_root_scale: Option<f32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointPair {
    pub source: String,
    pub target: String,
}

/// Twist: the source joint's rotation about the bone that ends in it,
/// distributed over target twist joints.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TwistSpec {
    pub source: String,
    pub targets: Vec<TwistTarget>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TwistTarget {
    pub joint: String,
    #[serde(serialize_with = "short::one")]
    pub weight: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactSpec {
    #[serde(default, rename = "joint", skip_serializing_if = "Vec::is_empty")]
    pub joints: Vec<ContactJoint>,
    /// Contact when the joint is within this fraction of the source height
    /// above its lowest point in the clip...
    #[serde(default = "height_threshold")]
    #[serde(serialize_with = "short::one")]
    pub height_threshold: f32,
    /// ...and moves slower than this many character heights per second.
    #[serde(default = "speed_threshold")]
    #[serde(serialize_with = "short::one")]
    pub speed_threshold: f32,
    /// Ease in and out of a plant over this time (seconds).
    #[serde(default = "blend_s")]
    #[serde(serialize_with = "short::one")]
    pub blend_s: f32,
    /// Plant target feet during source contacts (two-bone IK).
    #[serde(default = "yes")]
    pub plant: bool,
    /// Lower the pelvis where a plant is out of the leg's reach.
    #[serde(default = "yes")]
    pub pelvis_correction: bool,
}

impl Default for ContactSpec {
    fn default() -> Self {
        ContactSpec {
            joints: Vec::new(),
            height_threshold: height_threshold(),
            speed_threshold: speed_threshold(),
            blend_s: blend_s(),
            plant: true,
            pelvis_correction: true,
        }
    }
}

fn height_threshold() -> f32 {
    0.03
}
fn speed_threshold() -> f32 {
    0.2
}
fn blend_s() -> f32 {
    0.1
}
fn yes() -> bool {
    true
}

/// A contact joint (foot or hand) and its two-bone IK chain on the target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactJoint {
    pub source: String,
    pub target: String,
    /// Target IK joints; default: `mid` = parent of the target joint (or
    /// the joint it follows), `upper` = parent of `mid`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upper: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mid: Option<String>,
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MismatchPolicy {
    #[default]
    Error,
    Warn,
}

/// T-pose vs A-pose check: arm-to-spine angles of the two retarget poses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PoseCheck {
    #[serde(default)]
    pub on_mismatch: MismatchPolicy,
    #[serde(default = "tolerance_deg")]
    #[serde(serialize_with = "short::one")]
    pub tolerance_deg: f32,
}

impl Default for PoseCheck {
    fn default() -> Self {
        PoseCheck {
            on_mismatch: MismatchPolicy::Error,
            tolerance_deg: tolerance_deg(),
        }
    }
}

fn tolerance_deg() -> f32 {
    15.0
}

/// Per-clip limits; a breach is an error diagnostic naming clip, joint and
/// time (like the codec's error threshold).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Budgets {
    /// Fraction of source-contact frames in which the target foot skates
    /// and the source foot does not.
    #[serde(default = "max_skate_fraction")]
    #[serde(serialize_with = "short::one")]
    pub max_skate_fraction: f32,
    /// Minimum fraction of source-contact frames that stay contacts.
    #[serde(default = "min_contact_preservation")]
    #[serde(serialize_with = "short::one")]
    pub min_contact_preservation: f32,
    /// Hands and feet: distance from where the source's limb segments put
    /// them on the target's limb, in target limb lengths.
    #[serde(default = "max_end_effector_error")]
    #[serde(serialize_with = "short::one")]
    pub max_end_effector_error: f32,
    /// Meters, for joints whose mode keeps bone lengths.
    #[serde(default = "max_bone_length_deviation_m")]
    #[serde(serialize_with = "short::one")]
    pub max_bone_length_deviation_m: f32,
    /// Largest component-rotation change of one joint between two baked
    /// frames (a flip detector), raised per joint and frame to what its
    /// own source joints do at that frame + 1 deg.
    #[serde(default = "max_angular_jump_deg")]
    #[serde(serialize_with = "short::one")]
    pub max_angular_jump_deg: f32,
    /// Largest range of applied twist over a clip.
    #[serde(default = "max_twist_range_deg")]
    #[serde(serialize_with = "short::one")]
    pub max_twist_range_deg: f32,
    /// Lowest facing agreement (cosine of the source's and the result's
    /// forward motion, each along its own body's forward): below 0 the
    /// result faces or moves the other way (a front/back mirror).
    #[serde(default = "min_facing_agreement")]
    #[serde(serialize_with = "short::one")]
    pub min_facing_agreement: f32,
    /// During a source contact, the target foot's speed over
    /// `1.5 x source speed + 0.5 leg lengths/s` (above 1: a pop).
    #[serde(default = "max_foot_speed_ratio")]
    #[serde(serialize_with = "short::one")]
    pub max_foot_speed_ratio: f32,
    /// Meters any target joint goes under the floor beyond the source's
    /// own (scaled) penetration.
    #[serde(default = "max_floor_penetration_m")]
    #[serde(serialize_with = "short::one")]
    pub max_floor_penetration_m: f32,
    /// What a breach does: `fail` (an error: the asset fails, no package)
    /// or `warn` (a located warning, the package is written so that the
    /// result can be looked at and the breach judged).
    #[serde(default)]
    pub on_breach: BreachPolicy,
}

/// What a budget breach does (`[budgets] on_breach`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BreachPolicy {
    #[default]
    Fail,
    Warn,
}

impl Default for Budgets {
    fn default() -> Self {
        Budgets {
            max_skate_fraction: max_skate_fraction(),
            min_contact_preservation: min_contact_preservation(),
            max_end_effector_error: max_end_effector_error(),
            max_bone_length_deviation_m: max_bone_length_deviation_m(),
            max_angular_jump_deg: max_angular_jump_deg(),
            max_twist_range_deg: max_twist_range_deg(),
            min_facing_agreement: min_facing_agreement(),
            max_foot_speed_ratio: max_foot_speed_ratio(),
            max_floor_penetration_m: max_floor_penetration_m(),
            on_breach: BreachPolicy::Fail,
        }
    }
}

fn max_skate_fraction() -> f32 {
    0.25
}
fn min_contact_preservation() -> f32 {
    0.9
}
fn max_end_effector_error() -> f32 {
    0.25
}
fn max_bone_length_deviation_m() -> f32 {
    1e-4
}
fn max_angular_jump_deg() -> f32 {
    45.0
}
fn max_twist_range_deg() -> f32 {
    400.0
}
fn min_facing_agreement() -> f32 {
    0.0
}
fn max_foot_speed_ratio() -> f32 {
    1.0
}
fn max_floor_penetration_m() -> f32 {
    0.01
}

/// Bake times: the clip's own key times, plus a uniform grid at `rate_hz`
/// wherever keys are further apart than one grid step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BakeSpec {
    #[serde(default = "rate_hz")]
    #[serde(serialize_with = "short::one")]
    pub rate_hz: f32,
}

impl Default for BakeSpec {
    fn default() -> Self {
        BakeSpec { rate_hz: rate_hz() }
    }
}

fn rate_hz() -> f32 {
    30.0
}

impl Profile {
    /// Parse and check values; `path` only names the file in errors.
    pub fn parse(text: &str, path: &str) -> Result<Profile, ProfileError> {
        let p: Profile = toml::from_str(text).map_err(|e| ProfileError::Parse {
            path: path.to_string(),
            message: with_suggestion(&e.to_string()),
        })?;
        p.check_values().map_err(|message| ProfileError::Invalid {
            path: path.to_string(),
            message,
        })?;
        Ok(p)
    }

    /// TOML text of this profile (what `retarget suggest` writes).
    pub fn to_toml(&self) -> Result<String, ProfileError> {
        toml::to_string(self).map_err(|e| ProfileError::Invalid {
            path: self.name.clone(),
            message: format!("cannot write TOML: {e}"),
        })
    }

    fn check_values(&self) -> Result<(), String> {
        if self.version != PROFILE_VERSION {
            return Err(format!(
                "version {} is not supported (this cooker reads version {PROFILE_VERSION})",
                self.version
            ));
        }
        for (side, s) in [("source", &self.source), ("target", &self.target)] {
            crate::basis::basis(&s.up, &s.forward).map_err(|e| format!("{side}: {e}"))?;
            if s.pose.kind == PoseKind::ClipFrame
                && (s.pose.clip.is_none() || s.pose.time_s.is_none())
            {
                return Err(format!(
                    "{side}.pose: kind = \"clip_frame\" needs `clip` and `time_s`"
                ));
            }
            for o in &s.pose.overrides {
                if o.rotation.is_some() == o.rotate_deg.is_some() {
                    return Err(format!(
                        "{side}.pose override '{}': give exactly one of `rotation`, `rotate_deg`",
                        o.joint
                    ));
                }
            }
            let mut names: Vec<&str> = s.chains.iter().map(|c| c.name.as_str()).collect();
            names.sort_unstable();
            if let Some(w) = names.windows(2).find(|w| w[0] == w[1]) {
                return Err(format!("{side}: two chains are named '{}'", w[0]));
            }
        }
        let scales = [
            ("root.horizontal_scale", self.root.horizontal_scale),
            ("root.vertical_scale", self.root.vertical_scale),
            ("root.motion_root_scale", self.root.motion_root_scale),
        ];
        for (key, v) in scales {
            if let Some(v) = v {
                if !(v.is_finite() && v > 0.0) {
                    return Err(format!("{key} = {v} must be a positive number"));
                }
            }
        }
        let c = &self.contacts;
        for (key, v) in [
            ("contacts.height_threshold", c.height_threshold),
            ("contacts.speed_threshold", c.speed_threshold),
            ("contacts.blend_s", c.blend_s),
            ("bake.rate_hz", self.bake.rate_hz),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                return Err(format!("{key} = {v} must be a non-negative number"));
            }
        }
        if self.bake.rate_hz <= 0.0 {
            return Err("bake.rate_hz must be positive".into());
        }
        Ok(())
    }
}
