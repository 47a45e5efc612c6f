//! `inspect`'s masks and LOD levels (the JSET section): each mask's
//! weights per joint (nonzero ones, then the joints sampled only for FK),
//! each LOD level's retained and removed joints and its skin remaps.

use ludus_anim_format::joint_sets::{contains, members};
use ludus_anim_runtime::package::Package;
use serde_json::{json, Value};
use std::fmt::Write;

/// The masks and LOD levels as text (nothing when the package has none).
pub fn describe(s: &mut String, p: &Package<'_>) {
    let sets = &p.bindings().joint_sets;
    let sk = p.skeleton();
    if !sets.masks.is_empty() {
        let _ = writeln!(s, "masks:          {}", sets.masks.len());
    }
    for m in &sets.masks {
        let _ = writeln!(
            s,
            "  {}: {} weighted, {} sampled, ranges {:?}",
            m.name,
            members(&m.write).count(),
            members(&m.sample).count(),
            m.ranges
        );
        for j in members(&m.sample) {
            match m.weights[j] {
                w if w > 0.0 => {
                    let _ = writeln!(s, "    {} {w:.3}", sk.name(j));
                }
                _ => {
                    let _ = writeln!(s, "    {} 0 (sampled for FK)", sk.name(j));
                }
            }
        }
    }
    if !sets.lods.is_empty() {
        let _ = writeln!(s, "lod levels:     {}", sets.lods.len());
    }
    for (l, level) in sets.lods.iter().enumerate() {
        let removed: Vec<&str> = (0..sk.joint_count())
            .filter(|&j| !contains(&level.retained, j))
            .map(|j| sk.name(j))
            .collect();
        let _ = writeln!(
            s,
            "  LOD{l}: {} joints retained, {} removed{}",
            members(&level.retained).count(),
            removed.len(),
            if removed.is_empty() {
                String::new()
            } else {
                format!(": {}", removed.join(", "))
            }
        );
        for (skin, remap) in p.bindings().skins.iter().zip(&level.skins) {
            for (&from, &to) in skin.joints.iter().zip(&remap.joints) {
                if from != to {
                    let _ = writeln!(
                        s,
                        "    skin {}: {} -> {}",
                        skin.name,
                        sk.name(from as usize),
                        sk.name(to as usize)
                    );
                }
            }
        }
    }
}

/// The masks and LOD levels for `inspect --json` (`None` without any):
/// weights by joint name, sample sets and retained sets by joint name,
/// remaps per skin.
pub fn describe_json(p: &Package<'_>) -> Option<Value> {
    let sets = &p.bindings().joint_sets;
    if sets.masks.is_empty() && sets.lods.is_empty() {
        return None;
    }
    let sk = p.skeleton();
    let names = |set: &[u64]| members(set).map(|j| sk.name(j)).collect::<Vec<_>>();
    let masks: Vec<Value> = sets
        .masks
        .iter()
        .map(|m| {
            json!({
                "name": m.name,
                "weights": members(&m.write).map(|j| json!([sk.name(j), m.weights[j]])).collect::<Vec<_>>(),
                "sample": names(&m.sample),
                "ranges": m.ranges,
            })
        })
        .collect();
    let lods: Vec<Value> = sets
        .lods
        .iter()
        .map(|level| {
            json!({
                "retained": names(&level.retained),
                "skins": p.bindings().skins.iter().zip(&level.skins).map(|(skin, r)| json!({
                    "name": skin.name,
                    "joints": r.joints.iter().map(|&j| sk.name(j as usize)).collect::<Vec<_>>(),
                    "offsets": r.offsets,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    Some(json!({ "masks": masks, "lods": lods }))
}
