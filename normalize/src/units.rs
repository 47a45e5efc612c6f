//! How long a source unit is, checked against the skeleton it gives: a
//! character whose rest pose comes out 20 cm or 120 m tall is read in the
//! wrong unit, and every millimetre figure cooked from it is meaningless.
//!
//! Part of the normalize stage. What is judged is the rig's size: for a
//! humanoid ([`crate::humanoid`]: a head and two feet recognized by name
//! and topology) its height from feet to head, plausible within 0.6–2.6 m;
//! for any other character-sized rig (8 joints or more) the largest
//! extent of its rest pose, plausible within 0.3–4 m. Rules, in order:
//! 1. `--units` / manifest `units` win (recorded when they change the
//!    file's unit).
//! 2. When the file declares no unit (BVH, ACL SJSON, an FBX without a
//!    usable one: the importer recorded an `assumed_units` decision) and
//!    the skeleton matches a documented convention whose size is
//!    plausible while the assumed unit's is not, that convention's unit is
//!    used and recorded:
//!    - CMU motion capture as converted to BVH by cgspeed (joints
//!      `LHipJoint`, `RHipJoint`, `LowerBack`): 1/0.45 inch per unit;
//!    - MakeHuman BVH exports (joints `__Jaw` or `upperleg01.L`/`.R`):
//!      decimetres.
//! 3. Otherwise an implausible size gets a warning suggesting the likely
//!    unit: the matched convention's first, else the `--units` that makes
//!    a humanoid 1.2–2.0 m from feet to head (any other rig 1–2.5 m).

use crate::humanoid::{humanoid, Humanoid};
use ludus_anim_format::math::{Affine3A, Vec3};
use ludus_anim_model::{Decision, Diagnostic, SourceAsset, SourceSkeleton};

pub use ludus_anim_model::units::{CMU_CGSPEED_M, MAKEHUMAN_M};

/// Plausible largest rest-pose extent of a character, meters.
const PLAUSIBLE_M: (f32, f32) = (0.3, 4.0);
/// What a suggested unit should make of it (a human-sized character).
const HUMAN_M: (f32, f32) = (1.0, 2.5);
/// Plausible feet-to-head height of a humanoid, meters: a small child or
/// a stylized character to a giant. The head joint sits at the base of
/// the skull and the feet at the ankles, so an adult measures ~1.5 m.
const HUMANOID_M: (f32, f32) = (0.6, 2.6);
/// What a suggested unit should make of a humanoid's feet-to-head height.
const ADULT_M: (f32, f32) = (1.2, 2.0);
/// Fewer joints than this is a prop or a test rig, not a character.
const CHARACTER_JOINTS: usize = 8;

/// The unit chosen for an asset, why, and what looks wrong.
pub struct UnitChoice {
    pub meters: f32,
    pub decisions: Vec<Decision>,
    pub warnings: Vec<Diagnostic>,
}

/// What is judged of a rig's size, in source units.
enum Size {
    /// A humanoid's feet-to-head height.
    Humanoid(Humanoid),
    /// Any other character-sized rig's largest rest-pose extent.
    Extent(f32),
}

impl Size {
    /// `None`: a prop or test rig, too small to judge.
    fn of(sk: &SourceSkeleton) -> Option<Size> {
        if let Some(h) = humanoid(sk) {
            return Some(Size::Humanoid(h));
        }
        let extent = rest_extent(sk);
        (sk.joints.len() >= CHARACTER_JOINTS && extent > 0.0).then_some(Size::Extent(extent))
    }

    fn units(&self) -> f32 {
        match self {
            Size::Humanoid(h) => h.height,
            Size::Extent(e) => *e,
        }
    }

    fn plausible(&self, meters: f32) -> bool {
        let (lo, hi) = self.window();
        (lo..=hi).contains(&(self.units() * meters))
    }

    /// The plausible range, meters.
    fn window(&self) -> (f32, f32) {
        match self {
            Size::Humanoid(_) => HUMANOID_M,
            Size::Extent(_) => PLAUSIBLE_M,
        }
    }

    /// What a suggested unit should make of it, meters.
    fn target(&self) -> (f32, f32) {
        match self {
            Size::Humanoid(_) => ADULT_M,
            Size::Extent(_) => HUMAN_M,
        }
    }

    /// "a humanoid `Head` … is 0.275 m from feet to head" and the like.
    fn describe(&self, sk: &SourceSkeleton, meters: f32) -> String {
        let m = self.units() * meters;
        let name = |j: usize| sk.joints.get(j).map_or("?", |x| x.name.as_str());
        match self {
            Size::Humanoid(h) => format!(
                "the rig is a humanoid (head `{}`, feet `{}` and `{}`) {m:.3} m from feet to head",
                name(h.head),
                name(h.feet[0]),
                name(h.feet[1])
            ),
            Size::Extent(_) => format!("the skeleton's rest pose spans {m:.3} m"),
        }
    }
}

/// Choose meters per source unit for `asset` (see the module rules).
pub fn choose_units(asset: &SourceAsset, override_m: Option<f32>) -> UnitChoice {
    let mut c = UnitChoice {
        meters: asset.unit_scale_m,
        decisions: Vec::new(),
        warnings: Vec::new(),
    };
    let size = Size::of(&asset.skeleton);
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
    } else if let Some((size, (name, m))) = size
        .as_ref()
        .and_then(|s| Some((s, applicable_convention(asset, s)?)))
    {
        c.decisions.push(Decision::new(
            "units_convention",
            format!(
                "{name}: {m} m per unit (the file declares none; at the assumed {} m {}; this makes it {:.3} m); override with --units",
                asset.unit_scale_m,
                size.describe(&asset.skeleton, asset.unit_scale_m),
                size.units() * m
            ),
        ));
        c.meters = m;
    }
    if let Some(w) = size.and_then(|s| implausible(asset, &s, c.meters)) {
        c.warnings.push(w);
    }
    c
}

/// A documented convention the skeleton's joint names match.
fn convention(asset: &SourceAsset) -> Option<(&'static str, &'static str, f32)> {
    let has = |n: &str| asset.skeleton.find(n).is_some();
    if has("LHipJoint") && has("RHipJoint") && has("LowerBack") {
        Some((
            "CMU motion capture (cgspeed BVH conversion)",
            "cmu",
            CMU_CGSPEED_M,
        ))
    } else if has("__Jaw") || has("upperleg01.L") || has("upperleg01.R") {
        Some(("MakeHuman BVH export", "dm", MAKEHUMAN_M))
    } else {
        None
    }
}

/// The matched convention, if the file declares no unit, the assumed one
/// is implausible and the convention's is not.
fn applicable_convention(asset: &SourceAsset, size: &Size) -> Option<(&'static str, f32)> {
    let assumed = asset.decisions.iter().any(|d| d.kind == "assumed_units");
    if !assumed || size.plausible(asset.unit_scale_m) {
        return None;
    }
    let (name, _, m) = convention(asset)?;
    size.plausible(m).then_some((name, m))
}

/// A warning for a rig of implausible size, with the likely unit: the
/// convention its names match, else the `--units` that makes it
/// human-sized.
fn implausible(asset: &SourceAsset, size: &Size, meters: f32) -> Option<Diagnostic> {
    if size.plausible(meters) {
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
    let (lo, hi) = size.target();
    let by_names = convention(asset)
        .filter(|c| size.plausible(c.2))
        .map(|(name, unit, m)| (unit, m, format!(" ({name}, by its joint names)")));
    let hint = by_names
        .or_else(|| {
            units
                .iter()
                .find(|(_, m)| (lo..=hi).contains(&(size.units() * m)))
                .map(|&(n, m)| (n, m, String::new()))
        })
        .map(|(n, m, why)| {
            format!(
                "; likely unit: --units {n}{why}, which makes it {:.2} m",
                size.units() * m
            )
        })
        .unwrap_or_default();
    let (wlo, whi) = size.window();
    Some(
        Diagnostic::warning(
            "implausible_units",
            format!(
                "{} at {meters} m per unit, implausible (expected {wlo}-{whi} m){hint}; error figures in millimetres assume the unit is right",
                size.describe(&asset.skeleton, meters)
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
            skins: Vec::new(),
            sockets: Vec::new(),
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

    /// A CMU-named humanoid (cgspeed BVH layout), ankles 27.5 units
    /// below the head: 1.55 m in CMU units, 27.5 cm in centimetres.
    pub(crate) fn cmu_humanoid(unit: f32, assumed: bool) -> SourceAsset {
        let joints: [(&str, Option<usize>, [f32; 3]); 14] = [
            ("Hips", None, [0.0, 16.0, 0.0]),
            ("LHipJoint", Some(0), [1.5, -1.0, 0.0]),
            ("LeftUpLeg", Some(1), [0.5, -1.0, 0.0]),
            ("LeftLeg", Some(2), [0.0, -7.0, 0.0]),
            ("LeftFoot", Some(3), [0.0, -7.0, 0.0]),
            ("RHipJoint", Some(0), [-1.5, -1.0, 0.0]),
            ("RightUpLeg", Some(5), [-0.5, -1.0, 0.0]),
            ("RightLeg", Some(6), [0.0, -7.0, 0.0]),
            ("RightFoot", Some(7), [0.0, -7.0, 0.0]),
            ("LowerBack", Some(0), [0.0, 2.0, 0.0]),
            ("Spine", Some(9), [0.0, 2.5, 0.0]),
            ("Spine1", Some(10), [0.0, 2.5, 0.0]),
            ("Neck", Some(11), [0.0, 2.0, 0.0]),
            ("Head", Some(12), [0.0, 2.5, 0.0]),
        ];
        let mut a = asset(&[], 0.0, unit, assumed);
        a.skeleton.joints = joints
            .iter()
            .map(|&(name, parent, t)| SourceJoint {
                name: name.into(),
                parent,
                rest: Transform {
                    translation: Vec3::from(t),
                    ..Transform::IDENTITY
                },
            })
            .collect();
        a
    }

    #[test]
    fn a_humanoid_read_in_centimetres_is_warned_with_its_convention() {
        // 27.5 cm from feet to head: within the 0.3-4 m extent window a
        // rig of unknown kind would be judged by, but not a person.
        let a = cmu_humanoid(0.01, false);
        let c = choose_units(&a, Some(0.01));
        let w = c.warnings.first().expect("warned");
        assert_eq!(w.code, "implausible_units");
        for part in [
            "humanoid",
            "`Head`",
            "`LeftFoot`",
            "0.275 m",
            "--units cmu",
            "1.55 m",
        ] {
            assert!(w.message.contains(part), "{part}: {}", w.message);
        }
    }

    #[test]
    fn a_humanoid_with_no_unit_gets_its_convention_by_height() {
        let c = choose_units(&cmu_humanoid(0.01, true), None);
        assert_eq!(c.meters, CMU_CGSPEED_M);
        assert!(c.warnings.is_empty(), "1.55 m from feet to head");
        let d = &c.decisions[0];
        assert!(d.detail.contains("from feet to head"), "{}", d.detail);
    }

    #[test]
    fn a_plausible_humanoid_is_not_warned_and_a_giant_gets_a_unit() {
        assert!(choose_units(&cmu_humanoid(CMU_CGSPEED_M, false), None)
            .warnings
            .is_empty());
        let mut a = cmu_humanoid(1.0, false);
        for n in ["LHipJoint", "RHipJoint", "LowerBack"] {
            let j = a.skeleton.find(n).unwrap();
            a.skeleton.joints[j].name = format!("x{n}");
        }
        // 170.5 m from feet to head with no convention by name: the unit
        // that makes it an adult.
        for j in &mut a.skeleton.joints {
            j.rest.translation *= 6.2;
        }
        let w = choose_units(&a, None).warnings;
        assert!(
            w[0].message.contains("--units cm, which makes it 1.70 m"),
            "{}",
            w[0].message
        );
    }

    #[test]
    fn extent_is_linear_and_survives_a_deep_chain() {
        let names: Vec<String> = (0..100_000).map(|i| format!("j{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let a = asset(&names, 0.001, 1.0, false);
        assert!((rest_extent(&a.skeleton) - 99.999).abs() < 0.1);
    }
}
