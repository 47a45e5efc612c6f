//! The rig zoo: generated rigs that differ in naming scheme (Mixamo,
//! Unreal, Rigify, Hip/Knee/Ankle + Collar/Shoulder/Elbow/Wrist, 3ds Max
//! Biped, unnamed `node0..`), facing (+Z, -Z, +X), rest pose, proportions
//! (child to giant) and IK control joints. Each is suggested from a
//! default rig without edits and must map its limbs, face the right way
//! and reproduce the target's own clip (same motion by construction).

mod common;
use common::*;
use ludus_anim_fixture_gen::rigs::{build, Facing, Naming, RestPose, RigSpec};
use ludus_anim_model::{SourceAsset, SourceJoint};
use ludus_anim_normalize::Normalized;
use ludus_anim_retarget::profile::Role;
use ludus_anim_retarget::{suggest_with, Profile, RigInput};

fn side<'a>(n: &'a Normalized, file: &'a str) -> RigInput<'a> {
    RigInput {
        skeleton: &n.skeleton,
        file,
        clips: &n.clips,
        forward: None,
    }
}

fn suggest_pair(src: &Normalized, tgt: &Normalized) -> Profile {
    suggest_with(&side(src, "src"), &side(tgt, "tgt")).profile
}

/// Chains of the roles every humanoid must map.
fn assert_limbs_mapped(p: &Profile, what: &str) {
    for role in [
        Role::Spine,
        Role::Head,
        Role::ArmL,
        Role::ArmR,
        Role::LegL,
        Role::LegR,
        Role::FootL,
        Role::FootR,
    ] {
        let mapped = p
            .target
            .chains
            .iter()
            .any(|c| c.role == role && p.maps.iter().any(|m| m.target == c.name));
        assert!(
            mapped,
            "{what}: no {role:?} chain mapped:\n{:#?}",
            p.target.chains
        );
    }
}

/// Worst joint position error (m) of the result against the target's own
/// clip, over every key of every clip.
fn worst_position_error(tgt: &Normalized, out: &ludus_anim_retarget::Retargeted) -> f32 {
    let mut worst = 0.0f32;
    for (truth, got) in tgt.clips.iter().zip(&out.clips) {
        for &t in &truth.key_times {
            let a = fk(&tgt.skeleton, &sample(&tgt.skeleton, truth, t));
            let b = fk(&tgt.skeleton, &sample(&tgt.skeleton, got, t));
            for (x, y) in a.iter().zip(&b) {
                worst = worst.max((x.translation - y.translation).length());
            }
        }
    }
    worst
}

fn check_pair(src: &Normalized, tgt: &Normalized, what: &str) {
    let p = suggest_pair(src, tgt);
    assert_limbs_mapped(&p, what);
    let out = run(src, tgt, &p);
    assert!(
        !out.diagnostics.has_errors(),
        "{what}: {:?}",
        out.diagnostics
    );
    for m in &out.metrics {
        let a = m.facing.as_ref().and_then(|f| f.agreement);
        assert!(
            a.is_some_and(|a| a > 0.95),
            "{what} {}: facing {a:?}",
            m.clip
        );
    }
    let e = worst_position_error(tgt, &out);
    println!(
        "{what}: worst joint position error {e:.2e} m, {} chains",
        p.maps.len()
    );
    assert!(e < 1e-3, "{what}: worst joint position error {e} m");
}

#[test]
fn naming_schemes_and_facings_map_without_edits() {
    let src = norm(&build(&RigSpec::default()));
    for naming in [
        Naming::Unreal,
        Naming::Rigify,
        Naming::HipKnee,
        Naming::Biped,
        Naming::Unnamed,
        Naming::French,
    ] {
        for facing in [Facing::PlusZ, Facing::MinusZ, Facing::PlusX] {
            let tgt = norm(&build(&RigSpec {
                naming,
                facing,
                ..RigSpec::default()
            }));
            check_pair(&src, &tgt, &format!("{naming:?}/{facing:?}"));
        }
    }
}

#[test]
fn unnamed_source_onto_named_target() {
    let src = norm(&build(&RigSpec {
        naming: Naming::Unnamed,
        facing: Facing::MinusZ,
        ..RigSpec::default()
    }));
    let tgt = norm(&build(&RigSpec::default()));
    check_pair(&src, &tgt, "unnamed -Z -> Mixamo +Z");
}

/// Foot and knee IK controls parented to the root (named as in the
/// issue's Maya rig) are never chosen over the deforming joints.
#[test]
fn ik_controls_are_not_body_parts() {
    let src = norm(&build(&RigSpec::default()));
    let mut asset = build(&RigSpec::default());
    add_controls(&mut asset);
    let tgt = norm(&asset);
    let p = suggest_pair(&src, &tgt);
    for c in &p.target.chains {
        for j in [&c.start, &c.end] {
            assert!(!j.contains("Ctrl") && !j.contains("Pole"), "{c:?}");
        }
    }
    for c in &p.contacts.joints {
        assert!(!c.target.contains("Ctrl"), "{c:?}");
    }
    check_pair(&src, &tgt, "IK controls");
}

fn add_controls(asset: &mut SourceAsset) {
    let root = 0;
    for side in ["Left", "Right"] {
        for (name, at) in [
            (format!("{side}FootCtrl"), [0.1, 0.08, 0.0]),
            (format!("{side}KneeCtrl"), [0.1, 0.5, 0.4]),
            (format!("Pole{side}Knee"), [0.1, 0.5, 0.6]),
        ] {
            let mut rest = ludus_anim_format::math::Transform::IDENTITY;
            rest.translation = at.into();
            asset.skeleton.joints.push(SourceJoint {
                name,
                parent: Some(root),
                rest,
            });
        }
    }
}

#[test]
fn rest_poses_and_proportions_child_to_giant() {
    let src = norm(&build(&RigSpec::default()));
    for (rest, legs, arms) in [
        (RestPose::A, 0.55, 0.6),
        (RestPose::T, 0.55, 0.6),
        (RestPose::A, 2.2, 2.0),
        (RestPose::T, 1.0, 1.4),
    ] {
        let tgt = norm(&build(&RigSpec {
            rest,
            leg_scale: legs,
            arm_scale: arms,
            naming: Naming::Unnamed,
            ..RigSpec::default()
        }));
        let what = format!("{rest:?} legs x{legs} arms x{arms}");
        let p = suggest_pair(&src, &tgt);
        assert_limbs_mapped(&p, &what);
        let out = run(&src, &tgt, &p);
        assert!(
            !out.diagnostics.has_errors(),
            "{what}: {:?}",
            out.diagnostics
        );
        for m in &out.metrics {
            let a = m.facing.as_ref().and_then(|f| f.agreement);
            assert!(
                a.is_some_and(|a| a > 0.9),
                "{what} {}: facing {a:?}",
                m.clip
            );
        }
    }
}
