//! The GameModifier op: a `modifier` layer is a declared hook slot the
//! game fills. The worked example (`fixtures/locomotion/`) with a `lean`
//! modifier over the upper body appended: compiled through the CLI (the
//! dump lists the hook), verified with no hook (the output is the
//! example's, bit for bit: the same pose hash), then evaluated with a
//! caller-supplied hook through the reference evaluator: only the mask's
//! joints change, at the layer's weight; a joint the hook breaks (NaN) is
//! ignored and counted. Malformed modifier layers are located errors.

mod common;
use common::program::{cooked_example, example_program, stdout, write_variant};
use common::*;
use ludus_anim_format::math::{Quat, Transform};
use ludus_anim_program::binary;
use ludus_anim_program_eval::Evaluator;
use ludus_anim_runtime::Package;
use std::path::PathBuf;

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::Counting;

const LEAN: &str = "
[[parameter]]
name = \"lean\"
type = \"float\"
min = 0.0
max = 1.0
default = 0.5

[[layer]]
name = \"lean\"
compose = \"modifier\"
mask = \"upper_body\"
weight = \"lean\"
";

fn setup() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = cooked_example();
    write_variant(&dir, "lean", &example_program(&dir), LEAN);
    (tmp, dir)
}

#[test]
fn a_modifier_layer_is_a_bounded_hook_the_game_fills() {
    let (_t, dir) = setup();
    let out = stdout(&["program", "compile", "lean.program.toml", "--dump"], &dir);
    assert!(
        out.contains("GameModifier b0 hook 'lean' mask 'upper_body' w=$lean")
            && out.contains("; layer 'lean'"),
        "{out}"
    );
    stdout(&["program", "compile", "locomotion.program.toml"], &dir);
    let lean_file = dir.join("out/programs/biped_lean.ludprog");
    let base_file = dir.join("out/programs/biped_locomotion.ludprog");
    let raw: Vec<(String, Vec<u8>)> = packages(&dir.join("out"))
        .into_iter()
        .map(|(n, b)| (format!("packages/{n}"), b))
        .collect();
    let pk: Vec<(String, Package<'_>)> = raw
        .iter()
        .map(|(n, b)| (n.clone(), Package::load(b).unwrap()))
        .collect();
    let lean = binary::load(&std::fs::read(&lean_file).unwrap()).unwrap();
    let plain = binary::load(&std::fs::read(&base_file).unwrap()).unwrap();
    let slot = lean.layers.iter().position(|l| l == "lean").unwrap() as u16;
    let mask = &lean.masks[lean
        .masks
        .iter()
        .position(|m| m.name == "upper_body")
        .unwrap()];
    let head = lean.joint_names.iter().position(|n| n == "Head").unwrap();
    let hips = lean.joint_names.iter().position(|n| n == "Hips").unwrap();
    let foot = lean
        .joint_names
        .iter()
        .position(|n| n == "LeftFoot")
        .unwrap();
    assert_eq!(mask.weights[foot], 0.0);
    assert_eq!(mask.weights[head], 1.0);

    let mut a = Evaluator::new(&plain, &pk).unwrap();
    let mut b = Evaluator::new(&lean, &pk).unwrap();
    let turn = Quat::from_rotation_y(0.8);
    let mut calls = 0u32;
    let mut hook = |s: u16, pose: &mut [Transform]| {
        assert_eq!(s, slot);
        calls += 1;
        for t in pose.iter_mut() {
            t.rotation = turn * t.rotation;
        }
        // A broken joint outside the mask and one inside it.
        pose[hips].translation.x = f32::NAN;
        pose[head].translation.y = f32::INFINITY;
    };
    for k in 0..90 {
        let speed = if k < 30 { 0.0 } else { 1.4 };
        a.tick(&[speed, 0.0, 1.0], 1.0 / 30.0).unwrap();
        b.tick(&[speed, 0.0, 1.0, 0.5], 1.0 / 30.0).unwrap();
        a.evaluate().unwrap();
        let (calls_alloc, r) = common::alloc::count(|| b.evaluate_with(&mut hook));
        r.unwrap();
        assert_eq!(calls_alloc, 0, "tick {k}: evaluate_with allocates nothing");
        let (pa, pb) = (a.local_pose(), b.local_pose());
        for j in 0..pa.len() {
            if mask.weights[j] == 0.0 {
                assert_eq!(
                    pa[j], pb[j],
                    "joint {} outside the mask",
                    lean.joint_names[j]
                );
            }
        }
        // The head (weight 1 × lean 0.5): the broken value is ignored.
        assert_eq!(
            pa[head], pb[head],
            "tick {k}: the head's write was not finite"
        );
        let spine = lean.joint_names.iter().position(|n| n == "Spine1").unwrap();
        let want = ludus_anim_program_eval::kernels::blend_pair(
            &pa[spine],
            &Transform {
                rotation: turn * pa[spine].rotation,
                ..pa[spine]
            },
            0.5 * mask.weights[spine],
        );
        let d = pb[spine].rotation.dot(want.rotation).abs();
        assert!(
            d > 1.0 - 1e-5,
            "tick {k}: Spine1 leans by half the hook's turn"
        );
    }
    assert_eq!(calls, 90);
    assert_eq!(b.stats().hook_rejects, 90, "the head, once per tick");
    // With no hook the program is the example, bit for bit.
    let mut c = Evaluator::new(&lean, &pk).unwrap();
    let mut a = Evaluator::new(&plain, &pk).unwrap();
    for _ in 0..60 {
        a.tick(&[1.4, 1.0, 1.0], 1.0 / 30.0).unwrap();
        c.tick(&[1.4, 1.0, 1.0, 1.0], 1.0 / 30.0).unwrap();
        a.evaluate().unwrap();
        c.evaluate().unwrap();
        assert_eq!(a.local_pose(), c.local_pose());
    }
    let v = stdout(&["program", "verify", lean_file.to_str().unwrap()], &dir);
    assert!(v.contains("deterministic"), "{v}");
}

#[test]
fn malformed_modifier_layers_are_located_errors() {
    let (_t, dir) = setup();
    let lean = std::fs::read_to_string(dir.join("lean.program.toml")).unwrap();
    for (bad, want) in [
        (
            lean.replace(
                "compose = \"modifier\"\nmask = \"upper_body\"\n",
                "compose = \"modifier\"\n",
            ),
            "layer 'lean': a modifier layer needs a `mask`",
        ),
        (
            lean.replace(
                "compose = \"modifier\"\n",
                "compose = \"modifier\"\nnode = \"carry\"\n",
            ),
            "layer 'lean': a modifier layer is a hook the game fills",
        ),
        (
            lean.replace("compose = \"modifier\"", "compose = \"modifer\""),
            "(did you mean 'modifier'?)",
        ),
    ] {
        std::fs::write(dir.join("bad.program.toml"), &bad).unwrap();
        let o = ludus_anim(&["program", "compile", "bad.program.toml"], &dir);
        let t = text(&o);
        assert_eq!(o.status.code(), Some(1), "{t}");
        assert!(
            t.contains("bad.program.toml:") && t.contains(want),
            "{want}: {t}"
        );
    }
}
