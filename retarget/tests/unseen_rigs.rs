//! Shared fixture humanoids the suggester was not developed on (#42's
//! done-when matrix): French joint names and knee-less limbs (the ufbx
//! Blender barbarian), legs without a foot joint and a knee pushed under
//! the floor (the Quaternius Skeleton), a leaning MotionBuilder rest (PAB
//! as target). Skipped (with a line saying so) when ../shared/fixtures is
//! absent.

mod common;
use common::*;
use ludus_anim_normalize::Normalized;
use ludus_anim_retarget::{suggest_with, Profile, RigInput};

/// cgspeed's CMU conversion: 1 unit = 1/0.45 inch.
const CMU_M: f32 = 0.056_444_44;

fn side(n: &Normalized) -> RigInput<'_> {
    RigInput {
        skeleton: &n.skeleton,
        file: "rig",
        clips: &n.clips,
        forward: None,
    }
}

fn suggest_for(src: &Normalized, tgt: &Normalized) -> Profile {
    suggest_with(&side(src), &side(tgt)).profile
}

fn chain<'a>(p: &'a Profile, name: &str) -> Option<(&'a str, &'a str)> {
    p.target
        .chains
        .iter()
        .find(|c| c.name == name)
        .map(|c| (c.start.as_str(), c.end.as_str()))
}

#[test]
fn french_barbarian_maps_its_knee_less_limbs() {
    let (Some(cmu), Some(barb)) = (
        shared_fixture("bvh/cmu_12_01_walk.bvh"),
        shared_fixture("fbx/ufbx_blender_293_barbarian_7400.fbx"),
    ) else {
        return;
    };
    let (src, tgt) = (load(&cmu, Some(CMU_M)), load(&barb, None));
    let p = suggest_for(&src, &tgt);
    // `jambe` (hip to ankle) is the leg's one bone, `pied` the foot;
    // `bras` -> `main` the arm; `tête` the head.
    assert_eq!(chain(&p, "leg_l"), Some(("jambe gauche", "jambe gauche")));
    assert_eq!(chain(&p, "foot_r"), Some(("pied droit", "pied droit")));
    assert_eq!(chain(&p, "arm_l"), Some(("bras gauche", "main gauche")));
    assert_eq!(chain(&p, "head"), Some(("tête", "tête")));
    // No knee to bend: not planted.
    assert!(p.contacts.joints.is_empty(), "{:?}", p.contacts.joints);
    // The A-pose arms get source pose overrides, so the pose check passes
    // (`run` fails on a pose mismatch).
    let out = run(&src, &tgt, &p);
    let m = &out.metrics[0];
    let facing = m.facing.as_ref().and_then(|f| f.agreement);
    assert!(facing.is_some_and(|a| a > 0.5), "facing {facing:?}");
    assert!(
        m.floor_penetration.target_m <= 0.01,
        "{:?}",
        m.floor_penetration
    );
    // The one-bone legs and arms aim where the source's limbs point (hip
    // to ankle): 1.25 limb lengths off when they took the thigh alone.
    let e = &m.end_effector_error;
    assert!(e.value <= p.budgets.max_end_effector_error, "{e:?}");
}

#[test]
fn quaternius_skeleton_legs_move_and_stay_above_the_floor() {
    let (Some(cmu), Some(skel)) = (
        shared_fixture("bvh/cmu_01_01.bvh"),
        shared_fixture("fbx/quaternius_Skeleton.fbx"),
    ) else {
        return;
    };
    let (src, tgt) = (load(&cmu, Some(CMU_M)), load(&skel, None));
    let p = suggest_for(&src, &tgt);
    // `L.UpperLeg` runs hip to ankle; `L.DownLeg` is a leaf on the floor:
    // the foot. `L.UpperLeg.001` (an arm named as a leg) is not the leg.
    assert_eq!(chain(&p, "leg_l"), Some(("L.UpperLeg", "L.UpperLeg")));
    assert_eq!(chain(&p, "foot_l"), Some(("L.DownLeg", "L.DownLeg")));
    let out = run(&src, &tgt, &p);
    let m = &out.metrics[0];
    assert!(
        m.facing.as_ref().and_then(|f| f.agreement).is_some(),
        "facing measured: the legs are mapped"
    );
    // CMU 01_01's hops put the unplanted shin 9.3 cm under the floor
    // before the whole body was kept above it.
    let pen = &m.floor_penetration;
    assert!(pen.target_m - pen.source_m <= 0.01, "{pen:?}");
    let e = &m.end_effector_error;
    assert!(e.value <= p.budgets.max_end_effector_error, "{e:?}");
}

#[test]
fn a_leaning_motionbuilder_rest_is_aligned_not_refused() {
    let (Some(cmu), Some(pab)) = (
        shared_fixture("bvh/cmu_12_01_walk.bvh"),
        shared_fixture("fbx/pab_locomotions.fbx"),
    ) else {
        return;
    };
    let (src, tgt) = (load(&cmu, Some(CMU_M)), load(&pab, None));
    let p = suggest_for(&src, &tgt);
    // The source spine is turned onto PAB's leaning one, before the arms.
    let first = p.source.pose.overrides.first().map(|o| o.joint.as_str());
    assert_eq!(first, Some("LowerBack"), "{:?}", p.source.pose.overrides);
    // Both A-poses now agree within the pose check's tolerance (43 vs 26
    // deg before): `run` would fail on a mismatch.
    let out = run(&src, &tgt, &p);
    let m = &out.metrics[0];
    let facing = m.facing.as_ref().and_then(|f| f.agreement);
    assert!(facing.is_some_and(|a| a > 0.5), "facing {facing:?}");
    // The planting IK's pole leans forward: the right knee flipped by
    // 105 deg in one frame at 2.02 s where the source leg straightened.
    let j = &m.angular_jump_least_headroom;
    assert!(j.target_deg <= j.limit_deg, "{j:?}");
    // PAB's rest lifts the right foot: planted there (its own rest
    // height), the right leg stayed bent, 0.39 limb lengths off.
    let e = &m.end_effector_error;
    assert!(e.value <= p.budgets.max_end_effector_error, "{e:?}");
}
