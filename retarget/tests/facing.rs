//! Facing: inferred from the body (toes, knees, left side, travel) on rigs
//! that face +Z, -Z and +X; a retarget between differently facing rigs
//! reproduces the target's own clip; a profile declaring the wrong
//! forward is caught by the facing-agreement budget (a front/back mirror
//! never passes).

mod common;
use common::*;
use ludus_anim_fixture_gen::rigs::{build, Facing, RigSpec};
use ludus_anim_normalize::Normalized;
use ludus_anim_retarget::{suggest_with, Profile, RigInput};

fn rig(facing: Facing) -> Normalized {
    norm(&build(&RigSpec {
        facing,
        ..RigSpec::default()
    }))
}

fn suggest_pair(src: &Normalized, tgt: &Normalized, forced: [Option<&str>; 2]) -> Profile {
    suggest_with(&side(src, forced[0]), &side(tgt, forced[1])).profile
}

fn side<'a>(n: &'a Normalized, forward: Option<&'a str>) -> RigInput<'a> {
    RigInput {
        skeleton: &n.skeleton,
        file: "rig",
        clips: &n.clips,
        forward,
    }
}

fn expected(f: Facing) -> &'static str {
    match f {
        Facing::PlusZ => "+z",
        Facing::MinusZ => "-z",
        Facing::PlusX => "+x",
    }
}

#[test]
fn forward_is_inferred_on_every_facing() {
    for f in [Facing::PlusZ, Facing::MinusZ, Facing::PlusX] {
        let n = rig(f);
        let p = suggest_pair(&n, &n, [None, None]);
        assert_eq!(p.source.forward, expected(f), "{f:?}");
        assert_eq!(p.target.forward, expected(f), "{f:?}");
    }
}

#[test]
fn differently_facing_rigs_reproduce_the_target_clip_and_agree() {
    let src = rig(Facing::PlusZ);
    for f in [Facing::MinusZ, Facing::PlusX] {
        let tgt = rig(f);
        let out = run(&src, &tgt, &suggest_pair(&src, &tgt, [None, None]));
        assert!(
            !out.diagnostics.has_errors(),
            "{f:?}: {:?}",
            out.diagnostics
        );
        for m in &out.metrics {
            let facing = m.facing.as_ref().expect("facing measured");
            let a = facing.agreement.expect("agreement defined");
            println!("{f:?} {}: {facing:?}", m.clip);
            assert!(a > 0.95, "{f:?} {}: {facing:?}", m.clip);
        }
        for (a, b) in tgt.clips.iter().zip(&out.clips) {
            let (r, t, at) = clip_diff(&tgt.skeleton, a, b);
            println!(
                "{f:?} {}: rotation {r:.2e} rad, translation {t:.2e} m ({at})",
                a.name
            );
            assert!(r < 1e-4 && t < 1e-4, "{f:?} {}: {r} {t} at {at}", a.name);
        }
        // The walk travels forward on both: same distance along each
        // body's own forward (same proportions).
        let walk = out.metrics[0].facing.as_ref().expect("facing");
        assert!(
            (walk.source_travel_m - walk.target_travel_m).abs() < 0.01 * walk.source_travel_m.abs(),
            "{walk:?}"
        );
    }
}

#[test]
fn a_wrong_forward_is_a_facing_breach_not_a_green_cook() {
    let src = rig(Facing::PlusZ);
    let tgt = rig(Facing::MinusZ);
    // A person (or an old suggester) declares the target facing +Z.
    let mut p = suggest_pair(&src, &tgt, [None, Some("+z")]);
    p.contacts.plant = false;
    let out = run(&src, &tgt, &p);
    let walk = out.metrics[0].facing.as_ref().expect("facing");
    assert!(walk.agreement.expect("agreement") < -0.9, "{walk:?}");
    assert!(walk.target_travel_m < 0.0, "walks backwards: {walk:?}");
    assert!(
        out.diagnostics
            .0
            .iter()
            .any(|d| d.code == "retarget_facing"),
        "{:?}",
        out.diagnostics
    );
}

#[test]
fn identity_retarget_agrees_fully() {
    let n = rig(Facing::PlusX);
    let out = run(&n, &n, &suggest_pair(&n, &n, [None, None]));
    for m in &out.metrics {
        let a = m
            .facing
            .as_ref()
            .and_then(|f| f.agreement)
            .expect("agreement");
        assert!(a > 0.999, "{}: {a}", m.clip);
    }
}
