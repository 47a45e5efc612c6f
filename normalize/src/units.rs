//! How long a source unit is, checked against the skeleton it gives: a
//! character whose rest pose comes out 20 cm or 120 m tall is read in the
//! wrong unit, and every millimetre figure cooked from it is meaningless.
//!
//! Part of the normalize stage. Rules, in order:
//! 1. `--units` / manifest `units` win (recorded when they change the
//!    file's unit).
//! 2. When the file declares no unit (BVH, ACL SJSON, an FBX without a
//!    usable one: the importer recorded an `assumed_units` decision) and
//!    the skeleton matches a documented convention whose height is
//!    plausible while the assumed unit's is not, that convention's unit is
//!    used and recorded:
//!    - CMU motion capture as converted to BVH by cgspeed (joints
//!      `LHipJoint`, `RHipJoint`, `LowerBack`): 1/0.45 inch per unit;
//!    - MakeHuman BVH exports (joints `__Jaw` or `upperleg01.L`/`.R`):
//!      decimetres.
//! 3. Otherwise a character-sized rig (8 joints or more) whose rest-pose
//!    extent lies outside 0.3–4 m gets a warning suggesting the `--units`
//!    that would make it 1–2.5 m.

use ludus_anim_format::math::{Affine3A, Vec3};
use ludus_anim_model::{Decision, Diagnostic, SourceAsset, SourceSkeleton};

pub use ludus_anim_model::units::{CMU_CGSPEED_M, MAKEHUMAN_M};

/// Plausible largest rest-pose extent of a character, meters.
const PLAUSIBLE_M: (f32, f32) = (0.3, 4.0);
/// What a suggested unit should make of it (a human-sized character).
const HUMAN_M: (f32, f32) = (1.0, 2.5);
/// Fewer joints than this is a prop or a test rig, not a character.
const CHARACTER_JOINTS: usize = 8;

/// The unit chosen for an asset, why, and what looks wrong.
pub struct UnitChoice {
    pub meters: f32,
    pub decisions: Vec<Decision>,
    pub warnings: Vec<Diagnostic>,
}

/// Choose meters per source unit for `asset` (see the module rules).
pub fn choose_units(asset: &SourceAsset, override_m: Option<f32>) -> UnitChoice {
    let mut c = UnitChoice {
        meters: asset.unit_scale_m,
        decisions: Vec::new(),
        warnings: Vec::new(),
    };
    let extent = rest_extent(&asset.skeleton);
    if let Some(u) = override_m {
        if (u - asset.unit_scale_m).abs() > f32::EPSILON * u.abs() {
            c.decisions.push(Decision::new(
                "units_override",
                format!(
                    "source units {} m replaced by --units ({} m per unit)",
                    asset.unit_scale_m, u
                ),
            ));
        }
        c.meters = u;
    } else if let Some((name, m)) = convention(asset, extent) {
        c.decisions.push(Decision::new(
            "units_convention",
            format!(
                "{name}: {m} m per unit (the file declares none; {} m assumed would make the skeleton {:.3} m tall, this makes it {:.3} m); override with --units",
                asset.unit_scale_m,
                extent * asset.unit_scale_m,
                extent * m
            ),
        ));
        c.meters = m;
    }
    if let Some(w) = implausible(asset, extent, c.meters) {
        c.warnings.push(w);
    }
    c
}

/// A documented convention the skeleton matches, if the assumed unit is
/// implausible and the convention's is not.
fn convention(asset: &SourceAsset, extent: f32) -> Option<(&'static str, f32)> {
    let assumed = asset.decisions.iter().any(|d| d.kind == "assumed_units");
    if !assumed || plausible(extent * asset.unit_scale_m) {
        return None;
    }
    let has = |n: &str| asset.skeleton.find(n).is_some();
    let candidate = if has("LHipJoint") && has("RHipJoint") && has("LowerBack") {
        ("CMU motion capture (cgspeed BVH conversion)", CMU_CGSPEED_M)
    } else if has("__Jaw") || has("upperleg01.L") || has("upperleg01.R") {
        ("MakeHuman BVH export", MAKEHUMAN_M)
    } else {
        return None;
    };
    plausible(extent * candidate.1).then_some(candidate)
}

fn plausible(m: f32) -> bool {
    (PLAUSIBLE_M.0..=PLAUSIBLE_M.1).contains(&m)
}

/// A warning for a character-sized rig of implausible size, with the
/// `--units` that would make it human-sized.
fn implausible(asset: &SourceAsset, extent: f32, meters: f32) -> Option<Diagnostic> {
    let size = extent * meters;
    if asset.skeleton.joints.len() < CHARACTER_JOINTS || plausible(size) || extent <= 0.0 {
        return None;
    }
    let units = [
        ("m", 1.0),
        ("dm", 0.1),
        ("cm", 0.01),
        ("mm", 0.001),
        ("in", 0.0254),
        ("cmu", CMU_CGSPEED_M),
    ];
    let hint = units
        .iter()
        .find(|(_, m)| (HUMAN_M.0..=HUMAN_M.1).contains(&(extent * m)))
        .map(|(n, m)| format!("; with --units {n} it would be {:.2} m", extent * m))
        .unwrap_or_default();
    Some(
        Diagnostic::warning(
            "implausible_units",
            format!(
                "the skeleton's rest pose spans {size:.3} m at {meters} m per unit, implausible for a character (expected {}-{} m){hint}; error figures in millimetres assume the unit is right",
                PLAUSIBLE_M.0, PLAUSIBLE_M.1
            ),
        )
        .file(&asset.path),
    )
}

/// Largest dimension of the bounding box of the rest-pose joint origins,
/// in source units (0 for fewer than two joints). Linear in the joint
/// count; joints not reachable from a root (a broken hierarchy, reported
/// elsewhere) are left out.
pub fn rest_extent(sk: &SourceSkeleton) -> f32 {
    let n = sk.joints.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut stack = Vec::new();
    for (i, j) in sk.joints.iter().enumerate() {
        match j.parent {
            Some(p) if p < n && p != i => children[p].push(i),
            Some(_) => {}
            None => stack.push((i, Affine3A::IDENTITY)),
        }
    }
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    let mut seen = 0usize;
    while let Some((i, parent)) = stack.pop() {
        seen += 1;
        if seen > n {
            break;
        }
        let m = parent * sk.joints[i].rest.to_affine();
        let p = Vec3::from(m.translation);
        if p.is_finite() {
            lo = lo.min(p);
            hi = hi.max(p);
        }
        stack.extend(children[i].iter().map(|&c| (c, m)));
    }
    if seen < 2 || !lo.is_finite() {
        return 0.0;
    }
    (hi - lo).max_element()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_model::{AxisSystem, Diagnostics, SourceFormat, SourceJoint, Transform};

    /// A chain of `names` stacked `step` source units apart along +Y.
    fn asset(names: &[&str], step: f32, unit: f32, assumed: bool) -> SourceAsset {
        let joints = names
            .iter()
            .enumerate()
            .map(|(i, n)| SourceJoint {
                name: n.to_string(),
                parent: i.checked_sub(1),
                rest: Transform {
                    translation: Vec3::new(0.0, if i == 0 { 0.0 } else { step }, 0.0),
                    ..Transform::IDENTITY
                },
            })
            .collect();
        SourceAsset {
            path: "a.bvh".into(),
            format: SourceFormat::Bvh,
            skeleton: SourceSkeleton { joints },
            clips: vec![],
            unit_scale_m: unit,
            source_axes: AxisSystem {
                description: String::new(),
            },
            joint_shell_distance: None,
            diagnostics: Diagnostics::default(),
            decisions: if assumed {
                vec![Decision::new("assumed_units", "cm")]
            } else {
                vec![]
            },
            companions: vec![],
        }
    }

    const CMU: [&str; 9] = [
        "Hips",
        "LHipJoint",
        "LeftUpLeg",
        "LeftLeg",
        "RHipJoint",
        "RightUpLeg",
        "LowerBack",
        "Spine",
        "Head",
    ];

    #[test]
    fn cmu_cgspeed_bvh_read_as_centimetres_gets_its_convention() {
        // 8 steps of 3.5 units: 28 units, 0.28 m read as centimetres.
        let a = asset(&CMU, 3.5, 0.01, true);
        let c = choose_units(&a, None);
        assert_eq!(c.meters, CMU_CGSPEED_M);
        assert!(c.decisions.iter().any(|d| d.kind == "units_convention"));
        assert!(c.warnings.is_empty(), "1.58 m is plausible");
    }

    #[test]
    fn a_declared_unit_is_kept_and_an_implausible_size_warned_with_a_hint() {
        let names: Vec<String> = (0..10).map(|i| format!("j{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        // 9 steps of 18 units at 1 m per unit: 162 m, authored in cm.
        let a = asset(&names, 18.0, 1.0, false);
        let c = choose_units(&a, None);
        assert_eq!(c.meters, 1.0);
        let w = c.warnings.first().expect("warned");
        assert_eq!(w.code, "implausible_units");
        assert!(w.message.contains("--units cm"), "{}", w.message);
    }

    #[test]
    fn an_override_wins_and_small_rigs_are_not_judged() {
        let a = asset(&CMU, 3.5, 0.01, true);
        let c = choose_units(&a, Some(0.01));
        assert_eq!(c.meters, 0.01);
        assert_eq!(
            c.warnings.len(),
            1,
            "the override is implausible and said so"
        );
        let prop = asset(&["a", "b", "c"], 100.0, 1.0, false);
        assert!(choose_units(&prop, None).warnings.is_empty());
    }

    #[test]
    fn extent_is_linear_and_survives_a_deep_chain() {
        let names: Vec<String> = (0..100_000).map(|i| format!("j{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let a = asset(&names, 0.001, 1.0, false);
        assert!((rest_extent(&a.skeleton) - 99.999).abs() < 0.1);
    }
}
