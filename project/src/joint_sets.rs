//! A skeleton's joint sets file (`*.joints.toml`, named by a manifest
//! `[[skeleton]]` or `[[asset]]` with `joint_sets = "..."`): its blend
//! masks and its LOD plan, by joint name. Schema and semantics:
//! `schemas/joint-sets.md`.
//!
//! Why a file per skeleton and not manifest entries: masks and LOD levels
//! belong to a skeleton, not to an asset's cook settings; one file is
//! shared by every asset bound to the skeleton, is edited by riggers
//! apart from the cook settings, and every error names it. This crate
//! checks what needs no skeleton (names, numbers, unknown keys); joint
//! names are checked against the bound skeleton when it is cooked.

use crate::keys::{KeyInput, KeyWriter};
use serde::Deserialize;
use std::collections::BTreeMap;

/// The parsed file, with the path it was read from (relative to the
/// project root) for located errors.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct JointSets {
    /// The file (relative to the project root); set when read.
    #[serde(skip)]
    pub file: String,
    /// Named joint groups: a group is a list of joint names a mask can
    /// take whole (`groups = ["hands"]`).
    #[serde(default)]
    pub groups: BTreeMap<String, Vec<String>>,
    /// `[[mask]]`: blend masks, in file order.
    #[serde(default, rename = "mask")]
    pub masks: Vec<MaskSpec>,
    /// `[lod]`: the LOD plan.
    pub lod: Option<LodSpec>,
}

/// One mask. Weights compose in this order, each step over the previous:
/// `subtrees` (1 on each root and its descendants), `groups` (1 on each
/// member), `feather` (a ramp), `exclude` (0 on each root and its
/// descendants), then `weights` (explicit, last word).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct MaskSpec {
    pub name: String,
    #[serde(default)]
    pub subtrees: Vec<String>,
    #[serde(default)]
    pub groups: Vec<String>,
    #[serde(default)]
    pub feather: Vec<Feather>,
    #[serde(default)]
    pub exclude: Vec<String>,
    #[serde(default)]
    pub weights: BTreeMap<String, f64>,
}

/// A weight ramp down a chain: `root` gets `1 / (joints + 1)`, its child
/// on the chain `2 / (joints + 1)`, ..., reaching 1 after `joints` joints;
/// every descendant below the ramp gets 1. E.g. `root = "Spine", joints =
/// 3` blends the spine in over three joints, shoulders and arms fully.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Feather {
    pub root: String,
    pub joints: u32,
}

/// The LOD plan: levels in order (level 0 the most detailed), each a set
/// of retained joints; `pinned` joints (and the roots, and contact joints)
/// are retained at every level.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LodSpec {
    #[serde(default)]
    pub pinned: Vec<String>,
    #[serde(default, rename = "level")]
    pub levels: Vec<LodLevelSpec>,
}

/// One LOD level: an explicit `keep` list (which must be ancestor-closed),
/// or every joint but the subtrees of joints whose names match a `drop`
/// pattern (`*` matches any run of characters, case-insensitive).
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct LodLevelSpec {
    pub keep: Option<Vec<String>>,
    #[serde(default)]
    pub drop: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
#[error("{file}: {message}")]
pub struct JointSetsError {
    pub file: String,
    pub message: String,
}

/// Most LOD levels a plan may declare.
pub const MAX_LOD_LEVELS: usize = 8;

impl JointSets {
    /// Parse and check `text` (read from `file`): unknown keys (with a
    /// suggestion), mask names unique and not empty, groups named by a
    /// mask exist, explicit weights finite and in [0, 1], feathers at
    /// least one joint long, each LOD level either `keep` or `drop`.
    pub fn parse(text: &str, file: &str) -> Result<JointSets, JointSetsError> {
        let bad = |message: String| JointSetsError {
            file: file.to_string(),
            message,
        };
        let mut sets: JointSets = toml::from_str(text)
            .map_err(|e| bad(ludus_anim_model::suggest::with_suggestion(e.message())))?;
        sets.file = file.to_string();
        for (i, m) in sets.masks.iter().enumerate() {
            let at = format!("mask '{}'", m.name);
            if m.name.is_empty() {
                return Err(bad(format!("[[mask]] {i}: `name` is empty")));
            }
            if sets.masks[..i].iter().any(|o| o.name == m.name) {
                return Err(bad(format!("{at} is declared twice")));
            }
            for g in &m.groups {
                if !sets.groups.contains_key(g) {
                    let hint = ludus_anim_model::suggest::closest(
                        g,
                        sets.groups.keys().map(String::as_str),
                    )
                    .map_or(String::new(), |h| format!(" (did you mean '{h}'?)"));
                    return Err(bad(format!("{at}: group '{g}' is not declared{hint}")));
                }
            }
            for (joint, w) in &m.weights {
                if !w.is_finite() || !(0.0..=1.0).contains(w) {
                    return Err(bad(format!(
                        "{at}: joint '{joint}': weight {w} is not a number in [0, 1]"
                    )));
                }
            }
            if let Some(f) = m.feather.iter().find(|f| f.joints == 0) {
                return Err(bad(format!(
                    "{at}: feather from '{}' must ramp over at least 1 joint",
                    f.root
                )));
            }
            if m.subtrees.is_empty()
                && m.groups.is_empty()
                && m.feather.is_empty()
                && m.weights.is_empty()
            {
                return Err(bad(format!(
                    "{at} selects nothing: give `subtrees`, `groups`, `feather` or `weights`"
                )));
            }
        }
        if let Some(lod) = &sets.lod {
            if lod.levels.is_empty() || lod.levels.len() > MAX_LOD_LEVELS {
                return Err(bad(format!(
                    "[lod] declares {} levels; give 1 to {MAX_LOD_LEVELS} `[[lod.level]]`",
                    lod.levels.len()
                )));
            }
            for (i, l) in lod.levels.iter().enumerate() {
                if l.keep.is_some() && !l.drop.is_empty() {
                    return Err(bad(format!(
                        "LOD level {i}: give `keep` or `drop`, not both"
                    )));
                }
            }
        }
        Ok(sets)
    }
}

/// Whether `name` matches `pattern` (`*` any run, case-insensitive).
pub fn name_matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let n: Vec<char> = name.to_lowercase().chars().collect();
    // Iterative wildcard match with backtracking to the last star.
    let (mut i, mut j) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while j < n.len() {
        if i < p.len() && p[i] != '*' && p[i] == n[j] {
            i += 1;
            j += 1;
        } else if i < p.len() && p[i] == '*' {
            star = Some(i);
            mark = j;
            i += 1;
        } else if let Some(s) = star {
            i = s + 1;
            mark += 1;
            j = mark;
        } else {
            return false;
        }
    }
    p[i..].iter().all(|&c| c == '*')
}

impl KeyInput for JointSets {
    fn feed(&self, k: &mut KeyWriter) {
        let JointSets {
            file,
            groups,
            masks,
            lod,
        } = self;
        k.put(file).put(groups).put(masks).put(lod);
    }
}

impl KeyInput for MaskSpec {
    fn feed(&self, k: &mut KeyWriter) {
        let MaskSpec {
            name,
            subtrees,
            groups,
            feather,
            exclude,
            weights,
        } = self;
        let weights: BTreeMap<&String, u64> =
            weights.iter().map(|(j, w)| (j, w.to_bits())).collect();
        k.put(name)
            .put(subtrees)
            .put(groups)
            .put(feather)
            .put(exclude);
        for (j, w) in weights {
            k.put(j).put(&w);
        }
    }
}

impl KeyInput for Feather {
    fn feed(&self, k: &mut KeyWriter) {
        let Feather { root, joints } = self;
        k.put(root).put(joints);
    }
}

impl KeyInput for LodSpec {
    fn feed(&self, k: &mut KeyWriter) {
        let LodSpec { pinned, levels } = self;
        k.put(pinned).put(levels);
    }
}

impl KeyInput for LodLevelSpec {
    fn feed(&self, k: &mut KeyWriter) {
        let LodLevelSpec { keep, drop } = self;
        k.put(keep).put(drop);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_masks_and_lod() {
        let s = JointSets::parse(
            r#"
[groups]
hands = ["LeftHand", "RightHand"]
[[mask]]
name = "upper"
feather = [{ root = "Spine", joints = 2 }]
exclude = ["Neck"]
weights = { Head = 0.5 }
[[mask]]
name = "hands"
groups = ["hands"]
[lod]
pinned = ["LeftFoot"]
[[lod.level]]
drop = []
[[lod.level]]
drop = ["*Index*"]
[[lod.level]]
keep = ["Hips"]
"#,
            "rig.joints.toml",
        )
        .unwrap();
        assert_eq!(s.masks.len(), 2);
        assert_eq!(s.lod.as_ref().unwrap().levels.len(), 3);
    }

    #[test]
    fn refuses_bad_weights_groups_and_keys() {
        let e = JointSets::parse("[[mask]]\nname = \"m\"\nweights = { A = 1.5 }", "f.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("f.toml") && e.contains("'A'") && e.contains("[0, 1]"),
            "{e}"
        );
        let e = JointSets::parse("[[mask]]\nname = \"m\"\nweights = { A = nan }", "f.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not a number in [0, 1]"), "{e}");
        let e = JointSets::parse(
            "[groups]\nhands = []\n[[mask]]\nname = \"m\"\ngroups = [\"hand\"]",
            "f.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("did you mean 'hands'"), "{e}");
        let e = JointSets::parse("[[mask]]\nname = \"m\"\nsubtree = [\"A\"]", "f.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `subtrees`"), "{e}");
    }

    #[test]
    fn wildcards() {
        assert!(name_matches("*index*", "mixamorig:LeftHandIndex1"));
        assert!(name_matches("*Twist", "LeftArmTwist"));
        assert!(!name_matches("*Twist", "LeftArmTwist1"));
        assert!(name_matches("Head", "head"));
        assert!(!name_matches("Head", "HeadTop"));
    }
}
