//! Real data: CMU BVH mocap onto the Quaternius Knight (glTF) and the
//! MakeHuman skeleton, through the example profiles in profiles/retarget.
//! Skipped (with a line saying so) when ../shared/fixtures is absent.

mod common;
use common::*;
use ludus_anim_normalize::Normalized;
use ludus_anim_retarget::{suggest, Profile, Retargeted};

/// cgspeed's CMU conversion: 1 unit = 1/0.45 inch.
const CMU_M: f32 = 0.056_444_44; // 0.0254 / 0.45, as written in the profiles
/// MakeHuman BVH files are in decimetres.
const MAKEHUMAN_M: f32 = 0.1;

fn profile(name: &str) -> Profile {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../profiles/retarget")
        .join(name);
    Profile::parse(&std::fs::read_to_string(&path).unwrap(), name).unwrap()
}

/// The bar for a walk, asserted: contact preservation >= 95%,
/// per foot no more skating (distance and fraction) than the source's own,
/// zero budget breaches, and feet on the floor: each planted ankle's lowest
/// height is the target's own ankle height in its retarget pose (which
/// stands on the floor), never below it.
fn check_walk(name: &str, profile: &Profile, tgt: &Normalized, out: &Retargeted) {
    let m = &out.metrics[0];
    let (mut frames, mut kept) = (0usize, 0.0f32);
    for c in &m.contacts {
        println!(
            "{name}: {} contact frames {}, skate distance source {:.4} h ({:.3} m) target {:.4} h ({:.3} m), skate fraction source {:.3} target {:.3}, preserved {:.1}%",
            c.joint, c.source_contact_frames, c.source_skate_distance_h, c.source_skate_distance_m,
            c.target_skate_distance_h, c.target_skate_distance_m, c.source_skate_fraction, c.target_skate_fraction, c.preservation * 100.0
        );
        assert!(
            c.source_contact_frames > 50,
            "{name} {}: contacts found",
            c.joint
        );
        assert!(
            c.target_skate_distance_h <= c.source_skate_distance_h,
            "{name} {}: target skates further",
            c.joint
        );
        assert!(
            c.target_skate_fraction <= c.source_skate_fraction,
            "{name} {}: target skates more often",
            c.joint
        );
        frames += c.source_contact_frames;
        kept += c.preservation * c.source_contact_frames as f32;
    }
    let preserved = kept / frames as f32;
    let j = &m.angular_jump_least_headroom;
    println!(
        "{name}: contact preservation {:.1}%, end effector {:.4} limb lengths ({} t={:.3}), bone length {:.2e} m, largest jump {:.1} deg on {} (source {:.1}), least headroom {:.1} deg on {} ({:.1} vs limit {:.1}), scales {:?}",
        preserved * 100.0, m.end_effector_error.value, m.end_effector_error.joint, m.end_effector_error.time_s,
        m.bone_length_deviation_m.value, m.max_angular_jump.target_deg, m.max_angular_jump.joint,
        m.max_angular_jump.source_deg, j.limit_deg - j.target_deg, j.joint, j.target_deg, j.limit_deg, out.scales
    );
    let breaches: Vec<String> = out.diagnostics.errors().map(|d| d.to_string()).collect();
    assert!(breaches.is_empty(), "{name}: budget breaches {breaches:#?}");
    assert!(
        preserved >= 0.95,
        "{name}: contact preservation {preserved}"
    );
    let up = ludus_anim_retarget::profile::axis_vector(&profile.target.up).unwrap();
    let rest = fk(&tgt.skeleton, tgt.skeleton.rest_pose());
    let clip = &out.clips[0];
    for c in &profile.contacts.joints {
        let k = tgt.skeleton.find_by_name(&c.target).unwrap();
        let rest_h = up.dot(rest[k].translation.into());
        let lowest = clip
            .key_times
            .iter()
            .map(|&t| {
                up.dot(
                    fk(&tgt.skeleton, &sample(&tgt.skeleton, clip, t))[k]
                        .translation
                        .into(),
                )
            })
            .fold(f32::INFINITY, f32::min);
        println!(
            "{name}: {} lowest {lowest:.5} m, ankle height at rest {rest_h:.5} m",
            c.target
        );
        assert!(
            (lowest - rest_h).abs() < 1e-3 * out.scales.vertical,
            "{name} {}: feet on the floor",
            c.target
        );
    }
}

#[test]
fn cmu_walk_onto_the_knight() {
    let (Some(cmu), Some(knight)) = (
        shared_fixture("bvh/cmu_12_01_walk.bvh"),
        shared_fixture("gltf/quaternius_KnightCharacter.glb"),
    ) else {
        return;
    };
    let (src, tgt) = (load(&cmu, Some(CMU_M)), load(&knight, None));
    let p = profile("cmu_to_knight.toml");
    let out = run(&src, &tgt, &p);
    check_walk("CMU 12_01 -> Knight", &p, &tgt, &out);

    // The end-effector metric catches the previous mapping, whose Knight
    // shin took CMU's ankle rotation (legs ending at the foot on the
    // source, at the shin on the target, feet unmapped).
    let mut old = p.clone();
    for c in old.source.chains.iter_mut() {
        if c.name == "leg_l" || c.name == "leg_r" {
            c.end = c.end.replace("Leg", "Foot");
        }
    }
    old.maps.retain(|m| !m.target.starts_with("foot_"));
    let bad = run(&src, &tgt, &old);
    let e = &bad.metrics[0].end_effector_error;
    println!(
        "old leg mapping: end effector {:.3} limb lengths ({})",
        e.value, e.joint
    );
    assert!(
        bad.diagnostics
            .errors()
            .any(|d| d.code == "retarget_end_effector"),
        "{e:?}"
    );
}

#[test]
fn cmu_walk_onto_makehuman() {
    let (Some(cmu), Some(mh)) = (
        shared_fixture("bvh/cmu_12_01_walk.bvh"),
        shared_fixture("bvh/makehuman_zombieWalk1.bvh"),
    ) else {
        return;
    };
    // MakeHuman BVH: decimetres, Z up in the file; the importer keeps the
    // file's axes and the profile declares them (up +z, forward -y).
    let (src, tgt) = (load(&cmu, Some(CMU_M)), load(&mh, Some(MAKEHUMAN_M)));
    let p = profile("cmu_to_makehuman.toml");
    assert_eq!(
        (p.target.up.as_str(), p.target.forward.as_str()),
        ("+z", "-y")
    );
    let out = run(&src, &tgt, &p);
    check_walk("CMU 12_01 -> MakeHuman", &p, &tgt, &out);
}

/// The shipped profiles are what `suggest` proposes (files aside), and the
/// suggestion maps the Knight bone for bone: legs end at the shin with the
/// foot its own chain (the Knight's feet are IK controls under the root),
/// and the Knight's mislabeled thumbs (`Thumb.R` hangs off the left
/// forearm) take the thumb of the same arm.
#[test]
fn example_profiles_are_the_suggestions() {
    let (Some(cmu), Some(knight), Some(mh)) = (
        shared_fixture("bvh/cmu_12_01_walk.bvh"),
        shared_fixture("gltf/quaternius_KnightCharacter.glb"),
        shared_fixture("bvh/makehuman_zombieWalk1.bvh"),
    ) else {
        return;
    };
    let src = load(&cmu, Some(CMU_M));
    for (tgt, file) in [
        (load(&knight, None), "cmu_to_knight.toml"),
        (load(&mh, Some(MAKEHUMAN_M)), "cmu_to_makehuman.toml"),
    ] {
        let shipped = profile(file);
        let mut s = suggest(
            &src.skeleton,
            &shipped.source.skeleton,
            &tgt.skeleton,
            &shipped.target.skeleton,
        );
        s.name = shipped.name.clone();
        assert_eq!(s, shipped, "{file}: regenerate with examples/suggest.rs");
    }
    let p = profile("cmu_to_knight.toml");
    let chain = |side: &ludus_anim_retarget::profile::SideSpec, name: &str| {
        let c = side.chains.iter().find(|c| c.name == name).unwrap();
        (c.start.clone(), c.end.clone(), c.follow.clone())
    };
    let own = |a: &str, b: &str| (a.to_string(), b.to_string(), None);
    assert_eq!(chain(&p.source, "leg_l"), own("LeftUpLeg", "LeftLeg"));
    assert_eq!(chain(&p.source, "foot_l"), own("LeftFoot", "LeftFoot"));
    assert_eq!(chain(&p.target, "leg_l"), own("UpperLeg.L", "LowerLeg.L"));
    assert_eq!(
        chain(&p.target, "foot_l"),
        ("Foot.L".into(), "Foot.L".into(), Some("LowerLeg.L".into()))
    );
    assert!(p
        .maps
        .iter()
        .any(|m| m.source == "foot_r" && m.target == "foot_r"));
    assert_eq!(chain(&p.target, "match_Thumb.R").0, "Thumb.R");
    assert_eq!(chain(&p.source, "match_Thumb.R").0, "LThumb");
    assert_eq!(chain(&p.source, "match_Thumb.L").0, "RThumb");
}
