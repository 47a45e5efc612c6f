//! The SolveConstraint op: a `two_bone_ik` layer turns the left arm so the
//! hand reaches a component-space target given by three float parameters.
//! The worked example (`fixtures/locomotion/`) with a `reach` layer
//! appended: compiled through the CLI (the dump lists the solve),
//! verified, then evaluated through the reference evaluator: at weight 1 a
//! reachable target is met within a millimetre, an unreachable one gets
//! the arm straight towards it, and at weight 0 the pose is the example's
//! bit for bit. Malformed layers are located errors.

mod common;
use common::program::{cooked_example, example_program, stdout, write_variant};
use common::*;
use ludus_anim_format::math::Vec3;
use ludus_anim_program::binary;
use ludus_anim_program_eval::Evaluator;
use ludus_anim_runtime::Package;
use std::path::PathBuf;

const REACH: &str = "
[[parameter]]
name = \"hx\"
type = \"float\"
min = -3.0
max = 3.0

[[parameter]]
name = \"hy\"
type = \"float\"
min = -3.0
max = 3.0

[[parameter]]
name = \"hz\"
type = \"float\"
min = -3.0
max = 3.0

[[parameter]]
name = \"reach_w\"
type = \"float\"
min = 0.0
max = 1.0
default = 1.0

[[layer]]
name = \"reach\"
compose = \"two_bone_ik\"
chain = [\"LeftArm\", \"LeftForeArm\", \"LeftHand\"]
target = [\"hx\", \"hy\", \"hz\"]
weight = \"reach_w\"
";

fn setup() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = cooked_example();
    write_variant(&dir, "reach", &example_program(&dir), REACH);
    (tmp, dir)
}

#[test]
fn a_two_bone_ik_layer_reaches_its_target() {
    let (_t, dir) = setup();
    let out = stdout(
        &["program", "compile", "reach.program.toml", "--dump"],
        &dir,
    );
    assert!(
        out.contains("b0 = SolveConstraint b0 two-bone LeftArm>LeftForeArm>LeftHand to ($hx, $hy, $hz) w=$reach_w")
            && out.contains("; layer 'reach'"),
        "{out}"
    );
    stdout(&["program", "compile", "locomotion.program.toml"], &dir);
    let v = stdout(
        &[
            "program",
            "verify",
            "out/programs/biped_reach.ludprog",
            "--seconds",
            "30",
        ],
        &dir,
    );
    assert!(v.contains("deterministic"), "{v}");

    let raw: Vec<(String, Vec<u8>)> = packages(&dir.join("out"))
        .into_iter()
        .map(|(n, b)| (format!("packages/{n}"), b))
        .collect();
    let pk: Vec<(String, Package<'_>)> = raw
        .iter()
        .map(|(n, b)| (n.clone(), Package::load(b).unwrap()))
        .collect();
    let load =
        |f: &str| binary::load(&std::fs::read(dir.join("out/programs").join(f)).unwrap()).unwrap();
    let reach = load("biped_reach.ludprog");
    let plain = load("biped_locomotion.ludprog");
    let j = |n: &str| reach.joint_names.iter().position(|x| x == n).unwrap();
    let (arm, fore, hand) = (j("LeftArm"), j("LeftForeArm"), j("LeftHand"));

    let mut a = Evaluator::new(&plain, &pk).unwrap();
    let mut b = Evaluator::new(&reach, &pk).unwrap();
    let pos = |e: &Evaluator<'_, '_>, k: usize| Vec3::from(e.component_pose()[k].translation);
    let mut worst = 0f32;
    let mut worst_far = 0f32;
    for k in 0..120 {
        let speed = if k < 40 { 0.0 } else { 1.4 };
        a.tick(&[speed, 0.0, 1.0], 1.0 / 30.0).unwrap();
        a.evaluate().unwrap();
        let (s, h) = (pos(&a, arm), pos(&a, hand));
        let lab = pos(&a, fore).distance(s);
        let lcb = h.distance(pos(&a, fore));
        // Weight 0 first: the example's pose, bit for bit.
        let mut t = h;
        let w = if k % 3 == 0 { 0.0 } else { 1.0 };
        if k % 3 == 1 {
            // A reachable point: 80% of the reach, forward and down.
            t = s + Vec3::new(0.2, -0.6, 0.5).normalize() * 0.8 * (lab + lcb);
        }
        if k % 3 == 2 {
            // Out of reach: 2 m away, up and to the side (within the
            // parameters' range of ±3 m).
            t = s + Vec3::new(0.5, 0.5, 0.2).normalize() * 2.0;
        }
        b.tick(&[speed, 0.0, 1.0, t.x, t.y, t.z, w], 1.0 / 30.0)
            .unwrap();
        b.evaluate().unwrap();
        if w == 0.0 {
            assert_eq!(a.local_pose(), b.local_pose(), "tick {k}: weight 0");
            continue;
        }
        let got = pos(&b, hand);
        if k % 3 == 1 {
            worst = worst.max(got.distance(t));
        } else {
            let dir = (got - s).normalize().dot((t - s).normalize());
            assert!(dir > 0.999, "tick {k}: towards the far target ({dir})");
            let ext = got.distance(s) / (lab + lcb);
            worst_far = worst_far.max(1.0 - ext);
        }
    }
    // The breathing additive scales the chest, so the arm's frames are not
    // rigid: the evaluator repeats the analytic solve (3 passes).
    assert!(worst < 1e-3, "reachable targets met within {worst} m");
    assert!(
        worst_far < 5e-3,
        "far targets: the arm straight within {worst_far}"
    );
}

#[test]
fn malformed_two_bone_ik_layers_are_located_errors() {
    let (_t, dir) = setup();
    let reach = std::fs::read_to_string(dir.join("reach.program.toml")).unwrap();
    for (bad, want) in [
        (
            reach.replace("\"LeftForeArm\", \"LeftHand\"]", "\"LeftForeArm\", \"RightHand\"]"),
            "chain LeftArm > LeftForeArm > RightHand: each joint must be a descendant of the one before",
        ),
        (
            reach.replace("\"LeftForeArm\", \"LeftHand\"]", "\"LeftForeArm\", \"LeftHnd\"]"),
            "(did you mean 'LeftHand'?)",
        ),
        (
            reach.replace("target = [\"hx\", \"hy\", \"hz\"]", "target = [\"hx\", \"hy\", \"carrying\"]"),
            "target parameter 'carrying' is not a float",
        ),
        (
            reach.replace("target = [\"hx\", \"hy\", \"hz\"]\n", ""),
            "a two_bone_ik layer needs `chain`",
        ),
    ] {
        std::fs::write(dir.join("bad.program.toml"), &bad).unwrap();
        let o = ludus_anim(&["program", "compile", "bad.program.toml"], &dir);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(t.contains("bad.program.toml:") && t.contains(want), "{want}: {t}");
    }
}
