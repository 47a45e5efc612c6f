//! A skeleton retargeted onto itself reproduces every clip.

mod common;
use common::*;
use ludus_anim_retarget::suggest;

fn identity_on(n: &ludus_anim_normalize::Normalized, name: &str) {
    let mut profile = suggest(&n.skeleton, name, &n.skeleton, name);
    // Plants move feet to one position per contact: not an identity.
    profile.contacts.plant = false;
    let out = run(n, n, &profile);
    assert!(!out.diagnostics.has_errors(), "{:?}", out.diagnostics);
    let (mut rot, mut tr) = (0.0f32, 0.0f32);
    for (a, b) in n.clips.iter().zip(&out.clips) {
        let (r, t, at) = clip_diff(&n.skeleton, a, b);
        println!(
            "{name} {}: rotation {r:.2e} rad, translation {t:.2e} m (worst {at})",
            a.name
        );
        rot = rot.max(r);
        tr = tr.max(t);
    }
    assert!(rot <= 1e-5, "{name}: rotation error {rot}");
    assert!(tr <= 1e-6, "{name}: translation error {tr}");
}

#[test]
fn biped_onto_itself() {
    identity_on(&biped(), "biped.glb");
}

#[test]
fn cmu_walk_onto_itself() {
    let Some(p) = shared_fixture("bvh/cmu_12_01_walk.bvh") else {
        return;
    };
    identity_on(&load(&p, Some(0.056_444_44)), "cmu_12_01_walk.bvh");
}

#[test]
fn knight_onto_itself() {
    let Some(p) = shared_fixture("gltf/quaternius_KnightCharacter.glb") else {
        return;
    };
    identity_on(&load(&p, None), "quaternius_KnightCharacter.glb");
}
