//! A state machine on an override layer: the worked example
//! (`fixtures/locomotion/`) with its upper-body layer driven by a second
//! machine (`arms`: Free ⇄ Carry on `carrying`, a cross-fade in and an
//! inertialization out) instead of a weighted clip, through the CLI:
//! compiled (the dump names each guard's machine), verified, evaluated.
//! The legs, outside the layer's mask, move exactly as in the example; the
//! hands follow the arms machine. A machine on an additive layer, and an
//! override machine whose leaf plays a cooked delta, are refused with
//! located messages naming the layer, machine, state and node.

mod common;
use common::program::{cooked_example, example_program, stdout, write_variant};
use common::*;
use std::path::{Path, PathBuf};

const LAYER: &str = "[[layer]]
name = \"upper_body\"
compose = \"override\"
node = \"carry\"
mask = \"upper_body\"
weight = \"carrying\"
";

const ARMS: &str = "
[[node]]
name = \"swing\"
type = \"clip\"
clip = \"run\"

[[machine]]
name = \"arms\"
initial = \"Free\"

[[machine.state]]
name = \"Free\"
node = \"stand\"

[[machine.state]]
name = \"Carry\"
node = \"swing\"

[[machine.transition]]
id = 10
from = \"Free\"
to = \"Carry\"
when = \"carrying\"
mode = \"crossfade\"
duration_s = 0.2

[[machine.transition]]
id = 11
from = \"Carry\"
to = \"Free\"
when = \"!carrying\"
mode = \"inertialize\"
duration_s = 0.3
";

fn setup() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = cooked_example();
    let base = example_program(&dir);
    assert!(base.contains(LAYER), "the example's upper-body layer");
    let layer = "[[layer]]\nname = \"upper_body\"\ncompose = \"override\"\nmachine = \"arms\"\nmask = \"upper_body\"\n";
    write_variant(&dir, "arms", &base.replace(LAYER, layer), ARMS);
    (tmp, dir)
}

/// Every printed tick of `evaluate --json` over the example's script.
fn ticks(file: &str, dir: &Path) -> Vec<serde_json::Value> {
    stdout(
        &[
            "program",
            "evaluate",
            file,
            "--script",
            "script.toml",
            "--json",
            "--joints",
            "LeftFoot,RightFoot,LeftHand,RightHand",
        ],
        dir,
    )
    .lines()
    .filter(|l| l.starts_with('{'))
    .map(|l| serde_json::from_str(l).unwrap())
    .collect()
}

#[test]
fn an_override_layer_runs_its_own_machine() {
    let (_t, dir) = setup();
    let out = stdout(&["program", "compile", "arms.program.toml", "--dump"], &dir);
    assert!(
        out.contains("verified:") && out.contains("deterministic"),
        "{out}"
    );
    for want in [
        "machine 'arms' (initial Free)",
        "[locomotion.Move]",
        "[arms.Free]",
        "[arms.Carry]",
        "[from arms.Free]",
        "[arms fading]",
        "[arms inertial]",
        "; layer 'upper_body' / machine 'arms' / state 'Carry' / node 'swing'",
        "OverrideMask",
    ] {
        assert!(out.contains(want), "{want} in:\n{out}");
    }
    // Two machines: 4 persistent buffers each.
    assert!(out.contains("+ 8 persistent pose buffers"), "{out}");
    let v = stdout(
        &[
            "program",
            "verify",
            "out/programs/biped_arms.ludprog",
            "--seconds",
            "30",
        ],
        &dir,
    );
    assert!(v.contains("deterministic"), "{v}");

    let base = ticks("locomotion.program.toml", &dir);
    let arms = ticks("arms.program.toml", &dir);
    assert_eq!(base.len(), arms.len());
    let mut carried = 0;
    let mut hands_differ = 0;
    for (b, a) in base.iter().zip(&arms) {
        // The legs are outside the mask: the same bits.
        assert_eq!(b["joints"]["LeftFoot"], a["joints"]["LeftFoot"], "{a}");
        assert_eq!(b["joints"]["RightFoot"], a["joints"]["RightFoot"], "{a}");
        if a["inputs"][1] == 1.0 {
            carried += 1;
            if b["joints"]["LeftHand"] != a["joints"]["LeftHand"] {
                hands_differ += 1;
            }
        }
    }
    assert!(carried > 30, "the script carries for 1.5 s");
    assert!(
        hands_differ > carried / 2,
        "the arms machine drives the hands ({hands_differ} of {carried})"
    );
    // The compiled view's state path names both machines' leaves.
    let view = std::fs::read_to_string(dir.join("out/programs/biped_arms.view.json")).unwrap();
    assert!(view.contains("\"Move / Free\"") && view.contains("\"Move / Carry\""));
}

#[test]
fn a_machine_on_an_additive_layer_or_over_a_delta_is_refused() {
    let (_t, dir) = setup();
    let arms = std::fs::read_to_string(dir.join("arms.program.toml")).unwrap();
    // The arms machine's Carry leaf plays the cooked breathing delta.
    let delta = arms.replace(
        "name = \"swing\"\ntype = \"clip\"\nclip = \"run\"",
        "name = \"swing\"\ntype = \"clip\"\nclip = \"breathing\"",
    );
    std::fs::write(dir.join("delta.program.toml"), &delta).unwrap();
    let o = ludus_anim(&["program", "compile", "delta.program.toml"], &dir);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    assert!(
        t.contains("layer 'upper_body' / machine 'arms' / state 'Carry' / node 'swing': override layer over an additive clip"),
        "{t}"
    );
    // The breathing layer driven by the arms machine.
    let additive = arms
        .replace(
            "compose = \"override\"\nmachine = \"arms\"\nmask = \"upper_body\"\n",
            "compose = \"override\"\nnode = \"carry\"\nmask = \"upper_body\"\n",
        )
        .replace(
            "compose = \"additive\"\nnode = \"breath\"",
            "compose = \"additive\"\nmachine = \"arms\"",
        );
    std::fs::write(dir.join("additive.program.toml"), &additive).unwrap();
    let o = ludus_anim(&["program", "compile", "additive.program.toml"], &dir);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let line = additive
        .lines()
        .position(|l| l == "machine = \"arms\"")
        .unwrap()
        + 1;
    assert!(
        t.contains(&format!("additive.program.toml:{line}:"))
            && t.contains("layer 'breathing': a state machine produces a base or an override layer, not an additive one"),
        "{t}"
    );
    assert!(!dir.join("out/programs/biped_arms.ludprog").exists());
}
