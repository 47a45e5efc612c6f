//! The report of a package's cooked masks and LOD levels
//! (`AssetReport::joint_sets`): what each set holds, what a decode of it
//! costs, and the cook-time checks that it decodes as the whole pose does.

use serde::{Deserialize, Serialize};

/// Masks and LOD levels of one package, from the joint sets file `file`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JointSetsReport {
    pub file: String,
    /// Joints of the skeleton.
    pub joints: usize,
    /// What a whole-pose decode costs, for comparison (over the package's
    /// clips: see [`DecodeCost`]).
    pub whole_pose: DecodeCost,
    pub masks: Vec<MaskReport>,
    pub lods: Vec<LodReport>,
}

/// The decode cost of a joint set over the package's clips: animated
/// tracks it decodes (summed over clips; a static track is never decoded
/// per pose), and the blob bytes one pose decode reads for those joints,
/// averaged over clips and segments (constant values, clip and segment
/// ranges, and the two bracketing samples of each animated track at its
/// segment's bit rate). `None` bytes: a clip's codec is not VBR.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DecodeCost {
    pub clips: usize,
    pub tracks_decoded: usize,
    pub bytes_touched_per_pose: Option<f64>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MaskReport {
    pub name: String,
    /// Joints with a nonzero blend weight (the write set).
    pub joints_weighted: usize,
    /// Joints decoded: the write set and its ancestors (the sample set).
    pub joints_sampled: usize,
    /// Runs of consecutive weighted joints.
    pub ranges: Vec<[u32; 2]>,
    pub cost: DecodeCost,
    /// Poses checked: the masked decode equal to the whole-pose decode bit
    /// for bit on every sampled joint, and its FK on every weighted joint.
    pub poses_verified: usize,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LodReport {
    pub level: usize,
    pub joints_retained: usize,
    /// Pinned joints (declared `pinned`, and the roots).
    pub pinned: Vec<String>,
    pub cost: DecodeCost,
    /// Poses checked: the LOD decode equal to the whole-pose decode bit
    /// for bit on the retained joints, and their FK.
    pub poses_verified: usize,
    pub skins: Vec<LodSkinReport>,
}

/// One skin at one LOD level: palette entries re-pointed to a retained
/// ancestor, and the worst vertex displacement this causes (mm) against
/// full skinning.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LodSkinReport {
    pub name: String,
    pub remapped_entries: usize,
    /// At the skin's bind pose; `None` without a mesh.
    pub bind_displacement_mm: Option<f32>,
    /// Over every sample of every clip of the package; `None` without a
    /// mesh or without clips.
    pub clip_displacement_mm: Option<f32>,
    /// Where the clip figure was reached.
    pub worst_clip: Option<String>,
    pub worst_time_s: Option<f32>,
}
