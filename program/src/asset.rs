//! The authored program asset (TOML; `schemas/program.md`,
//! `schemas/program.schema.json`) as plain serde types, and its parse with
//! located errors. Names are kept with their byte spans so the compiler
//! can point at the node a problem concerns.

use crate::located::{did_you_mean, Diagnostic, ProgramErrors, SourceMap};
use serde::Deserialize;
use toml::Spanned;

/// The format version this crate reads.
pub const ASSET_VERSION: u32 = 1;

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProgramAsset {
    pub version: Spanned<u32>,
    pub name: String,
    #[serde(default)]
    pub limits: LimitsSpec,
    #[serde(default, rename = "parameter")]
    pub parameters: Vec<Spanned<ParamSpec>>,
    #[serde(default, rename = "clip")]
    pub clips: Vec<Spanned<ClipSpec>>,
    #[serde(default, rename = "sync_group")]
    pub sync_groups: Vec<Spanned<SyncSpec>>,
    #[serde(default, rename = "mask")]
    pub masks: Vec<Spanned<MaskSpec>>,
    #[serde(default, rename = "node")]
    pub nodes: Vec<Spanned<NodeSpec>>,
    #[serde(default, rename = "machine")]
    pub machines: Vec<Spanned<MachineSpec>>,
    #[serde(default, rename = "layer")]
    pub layers: Vec<Spanned<LayerSpec>>,
}

/// Bounds the compiler checks the program against and sizes events by.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LimitsSpec {
    /// Most players participating in one tick (transition sources included).
    pub max_players: u32,
    /// Longest control tick the capacities are computed for, in seconds.
    pub max_tick_s: f64,
    /// Most live pose buffers the plan may need.
    pub max_pose_buffers: u32,
}

impl Default for LimitsSpec {
    fn default() -> Self {
        LimitsSpec {
            max_players: 16,
            max_tick_s: 0.1,
            max_pose_buffers: 16,
        }
    }
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ParamSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    pub min: Option<f64>,
    pub max: Option<f64>,
    pub values: Option<Vec<String>>,
    pub default: Option<Spanned<toml::Value>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipSpec {
    pub name: String,
    pub asset: Spanned<String>,
    pub clip: Spanned<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncSpec {
    pub name: String,
    pub markers: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MaskSpec {
    pub name: String,
    #[serde(default)]
    pub subtrees: Vec<Spanned<SubtreeSpec>>,
    #[serde(default)]
    pub joints: Vec<Spanned<JointWeightSpec>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SubtreeSpec {
    pub root: String,
    #[serde(default = "one")]
    pub weight: f64,
    /// Depth over which the weight ramps up from the root (0: full at root).
    #[serde(default)]
    pub feather: u32,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointWeightSpec {
    pub name: String,
    pub weight: f64,
}

fn one() -> f64 {
    1.0
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NodeSpec {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: Spanned<String>,
    /// `clip` nodes.
    pub clip: Option<Spanned<String>>,
    #[serde(default = "one")]
    pub rate: f64,
    /// `clip` nodes: play frozen at this clip time (a reference frame).
    pub time_s: Option<f64>,
    /// Blendspaces: the sync group their members follow.
    pub sync: Option<Spanned<String>>,
    /// `blendspace1d`: the float parameter of its axis.
    pub parameter: Option<Spanned<String>>,
    /// `blendspace2d`: the two float parameters of its axes.
    pub parameters: Option<Vec<Spanned<String>>>,
    #[serde(default)]
    pub samples: Vec<Spanned<SampleSpec>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleSpec {
    pub clip: Spanned<String>,
    /// A number (1D) or `[x, y]` (2D).
    pub at: toml::Value,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MachineSpec {
    pub name: String,
    pub initial: Spanned<String>,
    #[serde(default, rename = "state")]
    pub states: Vec<Spanned<StateSpec>>,
    #[serde(default, rename = "transition")]
    pub transitions: Vec<Spanned<TransitionSpec>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StateSpec {
    pub name: String,
    pub parent: Option<Spanned<String>>,
    /// Leaves: the producer node.
    pub node: Option<Spanned<String>>,
    /// Parents: the child entered when the parent is the target.
    pub initial: Option<Spanned<String>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransitionSpec {
    /// Stable transition ID (unique in the machine; the last tie-break).
    pub id: u32,
    pub from: Spanned<String>,
    pub to: Spanned<String>,
    pub when: Spanned<String>,
    #[serde(default)]
    pub priority: i32,
    #[serde(default = "crossfade")]
    pub mode: Spanned<String>,
    #[serde(default)]
    pub duration_s: f64,
}

fn crossfade() -> Spanned<String> {
    Spanned::new(0..0, "crossfade".to_string())
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LayerSpec {
    pub name: String,
    pub compose: Spanned<String>,
    /// The producer: a node name.
    pub node: Option<Spanned<String>>,
    /// The producer: a state machine name.
    pub machine: Option<Spanned<String>>,
    pub mask: Option<Spanned<String>>,
    /// A number in [0, 1] or the name of a float/bool parameter.
    pub weight: Option<Spanned<toml::Value>>,
    /// Additive layers over a pose clip: what the delta is taken against.
    pub reference: Option<Spanned<ReferenceSpec>>,
    /// `two_bone_ik` layers: root, middle and tip joints.
    pub chain: Option<Spanned<Vec<String>>>,
    /// `two_bone_ik` layers: the tip's target, three float parameters
    /// (x, y, z in component space, meters).
    pub target: Option<Spanned<Vec<String>>>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReferenceSpec {
    /// `rest` or `clip`.
    pub kind: String,
    pub clip: Option<Spanned<String>>,
    #[serde(default)]
    pub time_s: f64,
}

/// Parse a program asset; a syntax or shape error is one located
/// diagnostic (unknown keys with the nearest allowed key).
pub fn parse(text: &str, file: &str) -> Result<ProgramAsset, ProgramErrors> {
    let map = SourceMap::new(file, text);
    toml::from_str::<ProgramAsset>(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        let message = e.message().trim().to_string();
        let mut d: Diagnostic = map.diag(offset, "", message.clone());
        d.suggestion = unknown_field_suggestion(&message);
        ProgramErrors(vec![d])
    })
}

/// From serde's "unknown field `x`, expected one of `a`, `b`": the
/// nearest expected key.
fn unknown_field_suggestion(message: &str) -> Option<String> {
    let rest = message.strip_prefix("unknown field `")?;
    let (name, rest) = rest.split_once('`')?;
    let expected: Vec<&str> = rest.split('`').skip(1).step_by(2).collect();
    did_you_mean(name, expected)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_located_with_a_suggestion() {
        let text = "version = 1\nname = \"p\"\n[[layer]]\nname = \"base\"\ncompse = \"base\"\n";
        let e = parse(text, "p.toml").unwrap_err();
        let d = &e.0[0];
        assert_eq!((d.file.as_str(), d.line), ("p.toml", 5), "{d}");
        assert_eq!(d.suggestion.as_deref(), Some("compose"), "{d}");
    }
}
