//! Metrics that match what is seen, on real files: a rig onto itself with
//! the suggested profile as written (contacts planted) reproduces the
//! clip and cooks green; CMU's T-pose first frame is recognized as a
//! reference frame; foot speed, toe slide and floor penetration are
//! measured against the source's.

mod common;
use common::*;
use ludus_anim_retarget::{suggest_with, RigInput};

fn onto_itself(
    n: &ludus_anim_normalize::Normalized,
    name: &str,
) -> (f32, ludus_anim_retarget::Retargeted) {
    let side = RigInput {
        skeleton: &n.skeleton,
        file: name,
        clips: &n.clips,
        forward: None,
    };
    let profile = suggest_with(&side, &side).profile;
    assert!(profile.contacts.plant, "planting on, as suggested");
    let out = run(n, n, &profile);
    assert!(
        !out.diagnostics.has_errors(),
        "{name}: {:?}",
        out.diagnostics
    );
    let mut worst = 0.0f32;
    for (a, b) in n.clips.iter().zip(&out.clips) {
        for &t in &a.key_times {
            let pa = fk(&n.skeleton, &sample(&n.skeleton, a, t));
            let pb = fk(&n.skeleton, &sample(&n.skeleton, b, t));
            for (x, y) in pa.iter().zip(&pb) {
                worst = worst.max((x.translation - y.translation).length());
            }
        }
    }
    (worst, out)
}

#[test]
fn cmu_walk_onto_itself_with_contacts_reproduces_and_flags_the_t_pose() {
    let Some(p) = shared_fixture("bvh/cmu_12_01_walk.bvh") else {
        return;
    };
    let n = load(&p, Some(0.056_444_44));
    let (worst, out) = onto_itself(&n, "cmu_12_01_walk.bvh");
    let m = &out.metrics[0];
    println!("CMU onto itself: worst joint position {worst:.2e} m; {m:#?}");
    // Nothing to correct on a rig onto itself: planting is skipped.
    assert!(worst < 1e-4, "{worst}");
    assert!(m.reference_first_frame, "CMU's first frame is a T-pose");
    let f = m.facing.as_ref().and_then(|f| f.agreement).expect("facing");
    assert!(f > 0.99, "{f}");
    for s in &m.foot_speeds {
        assert!(s.peak_ratio <= 1.0, "{s:?}");
        assert!(s.target_toe_slide_m <= s.source_toe_slide_m + 0.01, "{s:?}");
    }
    assert!(m.floor_penetration.target_m <= m.floor_penetration.source_m + 0.01);
}

#[test]
fn knight_onto_itself_with_contacts() {
    let Some(p) = shared_fixture("gltf/quaternius_KnightCharacter.glb") else {
        return;
    };
    let n = load(&p, None);
    let (worst, out) = onto_itself(&n, "quaternius_KnightCharacter.glb");
    println!("Knight onto itself: worst joint position {worst:.2e} m");
    assert!(worst < 1e-4, "{worst}");
    assert!(out.metrics.iter().all(|m| !m.reference_first_frame));
}

#[test]
fn pab_mocap_onto_itself_with_contacts() {
    let Some(p) = shared_fixture("fbx/pab_locomotions.fbx") else {
        return;
    };
    let n = load(&p, None);
    let (worst, _) = onto_itself(&n, "pab_locomotions.fbx");
    println!("PAB onto itself: worst joint position {worst:.2e} m");
    assert!(worst < 1e-4, "{worst}");
}

/// Every shared mocap source onto itself, as suggested: the clip back.
#[test]
fn shared_mocap_onto_itself() {
    for (rel, units) in [
        ("bvh/cmu_01_01.bvh", Some(0.056_444_44)),
        ("fbx/pab_crackhead.fbx", None),
        ("bvh/makehuman_zombieWalk1.bvh", None),
    ] {
        let Some(p) = shared_fixture(rel) else {
            return;
        };
        let n = load(&p, units);
        let (worst, _) = onto_itself(&n, rel);
        println!("{rel} onto itself: worst joint position {worst:.2e} m");
        assert!(worst < 1e-4, "{rel}: {worst}");
    }
}

/// MotionBuilder mocap onto the Knight as suggested: facing agrees and no
/// joint goes under the floor beyond the source's own (the jog's foot has
/// no contact to plant and was left 5.9 cm under).
#[test]
fn pab_onto_the_knight_faces_forward_and_stays_above_the_floor() {
    let (Some(s), Some(t)) = (
        shared_fixture("fbx/pab_locomotions.fbx"),
        shared_fixture("gltf/quaternius_KnightCharacter.glb"),
    ) else {
        return;
    };
    let (src, tgt) = (load(&s, None), load(&t, None));
    let profile = suggest_with(&rig(&src), &rig(&tgt)).profile;
    let out = run(&src, &tgt, &profile);
    for m in &out.metrics {
        let p = &m.floor_penetration;
        let f = m.facing.as_ref().and_then(|f| f.agreement);
        println!("{}: facing {f:?}, penetration {p:?}", m.clip);
        assert!(f.is_some_and(|f| f > 0.9), "{}: {f:?}", m.clip);
        assert!(p.target_m <= p.source_m + 0.01, "{}: {p:?}", m.clip);
    }
}

fn rig(n: &ludus_anim_normalize::Normalized) -> RigInput<'_> {
    RigInput {
        skeleton: &n.skeleton,
        file: "rig",
        clips: &n.clips,
        forward: None,
    }
}
