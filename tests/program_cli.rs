//! Animation programs end to end: the worked example (`fixtures/locomotion/`)
//! cooked, compiled, dumped, verified and evaluated through the CLI; the
//! reference evaluator's properties on the cooked biped (weight 0/1
//! identities, additive reference reconstruction, empty-mask override,
//! capacities, determinism of transition selection, no allocation after
//! preparation); the asset against its JSON Schema.

mod common;
use common::*;
use ludus_anim_format::events::MarkerKind;
use ludus_anim_program::compile::{compile, AssetFacts, ClipFacts};
use ludus_anim_program::{asset, binary, Program};
use ludus_anim_program_eval::verify::{default_script, verify};
use ludus_anim_program_eval::{EvalError, Evaluator};
use ludus_anim_runtime::Package;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The example cooked once: (tempdir, its `locomotion/` directory).
fn cooked() -> &'static (tempfile::TempDir, PathBuf) {
    static DIR: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    DIR.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::copy(
            repo().join("fixtures/biped.glb"),
            tmp.path().join("biped.glb"),
        )
        .unwrap();
        let dir = tmp.path().join("locomotion");
        std::fs::create_dir(&dir).unwrap();
        for f in ["ludus-anim.toml", "locomotion.program.toml", "script.toml"] {
            std::fs::copy(repo().join("fixtures/locomotion").join(f), dir.join(f)).unwrap();
        }
        let o = ludus_anim(&["cook"], &dir);
        assert!(o.status.success(), "{}", text(&o));
        (tmp, dir)
    })
}

fn run(args: &[&str], cwd: &Path) -> String {
    let o = ludus_anim(args, cwd);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    text(&o)
}

#[test]
fn the_example_compiles_dumps_verifies_and_evaluates() {
    let (_t, dir) = cooked();
    let out = run(
        &["program", "compile", "locomotion.program.toml", "--dump"],
        dir,
    );
    assert!(
        out.contains("verified:") && out.contains("deterministic"),
        "{out}"
    );
    assert!(
        out.contains("BlendSpace 'gait'")
            && out.contains("OverrideMask")
            && out.contains("AddLocal"),
        "{out}"
    );
    assert!(out.contains("capacities:"), "{out}");
    let file = dir.join("out/programs/biped_locomotion.ludprog");
    assert!(file.is_file());
    let f = file.to_str().unwrap();
    let plan = run(&["inspect", "--plan", f], dir);
    assert!(
        plan.contains("[Move]")
            && plan.contains("[from Move]")
            && plan.contains("; layer 'upper_body'"),
        "{plan}"
    );
    assert!(
        plan.lines().count() < 40,
        "the dump is a short list:\n{plan}"
    );
    assert_eq!(
        plan.trim_end(),
        run(&["program", "dump", f], dir).trim_end()
    );
    let v = run(&["program", "verify", f, "--seconds", "30"], dir);
    assert!(
        v.contains("verified: 701 ticks (30.0 s)") && v.contains("deterministic"),
        "{v}"
    );
    let e = run(
        &[
            "program",
            "evaluate",
            f,
            "--script",
            "script.toml",
            "--every",
            "15",
        ],
        dir,
    );
    // Stand, walk, run, stop (settles into Rest after a second), walk
    // again (inertialized).
    assert!(
        e.contains("transition #1") && e.contains("transition #2") && e.contains(" Rest"),
        "{e}"
    );
    let j = run(
        &[
            "program",
            "evaluate",
            f,
            "--script",
            "script.toml",
            "--every",
            "30",
            "--json",
        ],
        dir,
    );
    let first: serde_json::Value =
        serde_json::from_str(j.lines().find(|l| l.starts_with('{')).unwrap()).unwrap();
    assert_eq!(first["state"], "Move");
    assert!(
        first["joints"]["Head"][1].as_f64().unwrap() > 1.4,
        "{first}"
    );
    // The stick-figure strip: one figure (31 bones) per printed tick.
    run(
        &[
            "program",
            "evaluate",
            f,
            "--script",
            "script.toml",
            "--every",
            "30",
            "--svg",
            "strip.svg",
        ],
        dir,
    );
    let svg = std::fs::read_to_string(dir.join("strip.svg")).unwrap();
    let figures = svg.matches("<g ").count();
    assert!(
        figures >= 6 && svg.matches("<line ").count() == figures * 31,
        "{figures} figures"
    );
    assert!(svg.contains(" Rest</text>") && svg.contains(" Move</text>"));
}

#[test]
fn a_bad_program_fails_with_a_located_message_and_writes_nothing() {
    let (_t, dir) = cooked();
    let text0 = std::fs::read_to_string(dir.join("locomotion.program.toml")).unwrap();
    let bad = text0
        .replace("clip = \"run\"", "clip = \"rnu\"")
        .replace("name = \"biped_locomotion\"", "name = \"bad\"");
    std::fs::write(dir.join("bad.program.toml"), &bad).unwrap();
    let o = ludus_anim(&["program", "compile", "bad.program.toml"], dir);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(1), "{t}");
    let line = bad.lines().position(|l| l.contains("\"rnu\"")).unwrap() + 1;
    assert!(t.contains(&format!("bad.program.toml:{line}:8: clip 'run': no clip in asset 'biped' named 'rnu' (did you mean 'run'?)")), "{t}");
    assert!(!dir.join("out/programs/bad.ludprog").exists());
    // A damaged program file is refused at load.
    let good = dir.join("out/programs/biped_locomotion.ludprog");
    if !good.exists() {
        run(&["program", "compile", "locomotion.program.toml"], dir);
    }
    let mut bytes = std::fs::read(&good).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 1;
    std::fs::write(dir.join("damaged.ludprog"), &bytes).unwrap();
    let o = ludus_anim(&["program", "dump", "damaged.ludprog"], dir);
    assert!(
        !o.status.success() && text(&o).contains("checksum"),
        "{}",
        text(&o)
    );
}

/// The cooked packages as (manifest path, bytes).
fn raw_packages(dir: &Path) -> Vec<(String, Vec<u8>)> {
    packages(&dir.join("out"))
        .into_iter()
        .map(|(n, b)| (format!("packages/{n}"), b))
        .collect()
}

fn facts(pk: &[(String, Package<'_>)]) -> Vec<AssetFacts> {
    pk.iter()
        .map(|(rel, p)| AssetFacts {
            asset: "biped".into(),
            package: rel.clone(),
            skeleton_identity: p.skeleton().identity().0,
            joint_names: p.skeleton().names().to_vec(),
            parents: p.skeleton().parents().to_vec(),
            clips: p
                .clips()
                .iter()
                .map(|c| ClipFacts {
                    name: c.name().into(),
                    duration_s: c.duration_s(),
                    looping: c.loop_mode().is_looping(),
                    additive: c.is_additive(),
                    sync_markers: c
                        .markers()
                        .iter()
                        .filter(|m| m.kind == MarkerKind::SyncMarker)
                        .map(|m| (m.name.to_string(), m.event.time_s))
                        .collect(),
                    marker_count: c.markers().len(),
                })
                .collect(),
        })
        .collect()
}

fn program(text: &str, pk: &[(String, Package<'_>)]) -> Program {
    let a = asset::parse(text, "p.toml").unwrap_or_else(|e| panic!("{e}"));
    compile(&a, text, "p.toml", &facts(pk)).unwrap_or_else(|e| panic!("{e}"))
}

/// A program over the biped's clips with `base` and `layers` tables.
fn small(nodes_and_layers: &str) -> String {
    format!(
        r#"version = 1
name = "p"
[[parameter]]
name = "w"
type = "float"
[[clip]]
name = "idle"
asset = "biped"
clip = "idle"
[[clip]]
name = "walk"
asset = "biped"
clip = "walk"
[[clip]]
name = "run"
asset = "biped"
clip = "run"
[[clip]]
name = "breathing"
asset = "biped"
clip = "breathing"
[[mask]]
name = "empty"
[[mask]]
name = "upper"
subtrees = [{{ root = "Spine", feather = 2 }}]
{nodes_and_layers}"#
    )
}

const NODES: &str = r#"
[[node]]
name = "walk"
type = "clip"
clip = "walk"
[[node]]
name = "run"
type = "clip"
clip = "run"
[[node]]
name = "idle0"
type = "clip"
clip = "idle"
time_s = 0.0
[[node]]
name = "idle"
type = "clip"
clip = "idle"
[[node]]
name = "breath"
type = "clip"
clip = "breathing"
"#;

fn base(node: &str) -> String {
    format!("{NODES}[[layer]]\nname = \"base\"\ncompose = \"base\"\nnode = \"{node}\"\n")
}

/// Local poses of `text` over 40 ticks of 1/30 s with input `w`.
fn poses(text: &str, pk: &[(String, Package<'_>)], w: f32) -> Vec<Vec<[f32; 10]>> {
    let p = program(text, pk);
    let mut ev = Evaluator::new(&p, pk).unwrap();
    (0..40)
        .map(|_| {
            ev.tick(&[w], 1.0 / 30.0).unwrap();
            ev.evaluate().unwrap();
            ev.local_pose().iter().map(|t| t.to_array()).collect()
        })
        .collect()
}

#[test]
fn evaluator_identities_on_the_cooked_biped() {
    let (_t, dir) = cooked();
    let raw = raw_packages(dir);
    let pk: Vec<(String, Package<'_>)> = raw
        .iter()
        .map(|(n, b)| (n.clone(), Package::load(b).unwrap()))
        .collect();
    let layer = |compose: &str, node: &str, extra: &str| {
        format!("[[layer]]\nname = \"l\"\ncompose = \"{compose}\"\nnode = \"{node}\"\n{extra}\n")
    };
    let walk = poses(&small(&base("walk")), &pk, 0.0);
    let run = poses(&small(&base("run")), &pk, 0.0);
    assert_ne!(walk, run);
    // Override at weight 0 (constant and parameter) is the base, at 1 the
    // layer's sample, bit for bit.
    assert_eq!(
        poses(
            &small(&(base("walk") + &layer("override", "run", "weight = 0.0"))),
            &pk,
            0.0
        ),
        walk
    );
    assert_eq!(
        poses(
            &small(&(base("walk") + &layer("override", "run", "weight = \"w\""))),
            &pk,
            0.0
        ),
        walk
    );
    assert_eq!(
        poses(
            &small(&(base("walk") + &layer("override", "run", "weight = 1.0"))),
            &pk,
            0.0
        ),
        run
    );
    assert_eq!(
        poses(
            &small(&(base("walk") + &layer("override", "run", "weight = \"w\""))),
            &pk,
            1.0
        ),
        run
    );
    // An override with an empty mask is a no-op, at any weight.
    assert_eq!(
        poses(
            &small(&(base("walk") + &layer("override", "run", "mask = \"empty\"\nweight = 1.0"))),
            &pk,
            0.0
        ),
        walk
    );
    // A masked override changes only the mask's joints.
    let masked = poses(
        &small(&(base("walk") + &layer("override", "run", "mask = \"upper\"\nweight = 1.0"))),
        &pk,
        0.0,
    );
    let p = program(&small(&base("walk")), &pk);
    let legs = p.joint_names.iter().position(|n| n == "LeftUpLeg").unwrap();
    let arm = p.joint_names.iter().position(|n| n == "LeftArm").unwrap();
    assert!(masked.iter().zip(&walk).all(|(m, w)| m[legs] == w[legs]));
    assert!(masked.iter().zip(&run).all(|(m, r)| m[arm] == r[arm]));
    // Additive at weight 0 is the base exactly; the additive of walk
    // against the idle frame, applied at weight 1 on that frame,
    // reconstructs walk.
    let idle0 = poses(&small(&base("idle0")), &pk, 0.0);
    let reference = "reference = { kind = \"clip\", clip = \"idle\", time_s = 0.0 }";
    assert_eq!(
        poses(
            &small(
                &(base("idle0")
                    + &layer("additive", "walk", &format!("weight = 0.0\n{reference}")))
            ),
            &pk,
            0.0
        ),
        idle0
    );
    let rebuilt = poses(
        &small(
            &(base("idle0") + &layer("additive", "walk", &format!("weight = 1.0\n{reference}"))),
        ),
        &pk,
        0.0,
    );
    let mut worst = 0f32;
    for (a, b) in rebuilt.iter().zip(&walk) {
        for (x, y) in a.iter().zip(b) {
            for k in 0..10 {
                worst = worst.max((x[k] - y[k]).abs());
            }
        }
    }
    assert!(worst < 2e-5, "additive reconstruction off by {worst}");
    // Against the rest pose too.
    let rest = "reference = { kind = \"rest\" }";
    let rebuilt_rest = poses(
        &small(&(base("idle0") + &layer("additive", "walk", &format!("weight = 1.0\n{rest}")))),
        &pk,
        0.0,
    );
    assert_ne!(
        rebuilt_rest, walk,
        "a rest-relative delta on the idle frame is not walk"
    );
}

#[test]
fn capacities_hold_and_transition_selection_is_deterministic() {
    let (_t, dir) = cooked();
    let raw = raw_packages(dir);
    let pk: Vec<(String, Package<'_>)> = raw
        .iter()
        .map(|(n, b)| (n.clone(), Package::load(b).unwrap()))
        .collect();
    let text0 = std::fs::read_to_string(dir.join("locomotion.program.toml")).unwrap();
    let p = program(&text0, &pk);
    let script = default_script(&p, 30.0, 1.0 / 30.0);
    let a = verify(&p, &pk, &script).unwrap();
    let b = verify(&p, &pk, &script).unwrap();
    assert_eq!(a, b);
    assert!(
        a.max_players <= a.capacity_players && a.max_events <= a.capacity_events,
        "{a:?}"
    );
    assert!(a.max_events > 0, "the foot markers are crossed: {a:?}");
    assert!(
        a.transitions.iter().any(|t| t.1 == 1) && a.transitions.iter().any(|t| t.1 == 2),
        "{a:?}"
    );
    // The check can fail: with one event fewer than needed the tick is
    // refused without advancing.
    let mut tight = p.clone();
    tight.capacities.max_events_per_tick = a.max_events - 1;
    let mut ev = Evaluator::new(&tight, &pk).unwrap();
    let refused = script.iter().find_map(|s| ev.tick(&s.inputs, s.dt).err());
    assert!(
        matches!(refused, Some(EvalError::Events { .. })),
        "{refused:?}"
    );
    // Through the file: the loaded program evaluates the same.
    let loaded = binary::load(&binary::encode(&p)).unwrap();
    assert_eq!(verify(&loaded, &pk, &script).unwrap(), a);
}

#[test]
fn the_example_conforms_to_its_schema() {
    let schema: serde_json::Value =
        serde_json::from_slice(&std::fs::read(repo().join("schemas/program.schema.json")).unwrap())
            .unwrap();
    let text0 = std::fs::read_to_string(repo().join("fixtures/locomotion/locomotion.program.toml"))
        .unwrap();
    let v: serde_json::Value =
        serde_json::to_value(toml::from_str::<toml::Value>(&text0).unwrap()).unwrap();
    let errs = ludus_anim_report::schema::validate(&schema, &v);
    assert!(errs.is_empty(), "{errs:?}");
    let bad: serde_json::Value = serde_json::to_value(
        toml::from_str::<toml::Value>(
            &text0.replace("compose = \"base\"", "compose = \"base\"\nblend = 1"),
        )
        .unwrap(),
    )
    .unwrap();
    assert!(!ludus_anim_report::schema::validate(&schema, &bad).is_empty());
}

#[test]
fn an_interrupted_fade_starts_from_the_captured_pose() {
    let (_t, dir) = cooked();
    let raw = raw_packages(dir);
    let pk: Vec<(String, Package<'_>)> = raw
        .iter()
        .map(|(n, b)| (n.clone(), Package::load(b).unwrap()))
        .collect();
    // Walk <-> run on a flag, both ways cross-faded: flipping the flag
    // in the middle of a fade cross-fades from the captured pose.
    let machine = |d: f32| {
        small(&format!(
            "{NODES}[[parameter]]\nname = \"fast\"\ntype = \"bool\"\n[[machine]]\nname = \"m\"\ninitial = \"Walk\"\n\
             [[machine.state]]\nname = \"Walk\"\nnode = \"walk\"\n[[machine.state]]\nname = \"Run\"\nnode = \"run\"\n\
             [[machine.transition]]\nid = 1\nfrom = \"Walk\"\nto = \"Run\"\nwhen = \"fast\"\nduration_s = {d}\n\
             [[machine.transition]]\nid = 2\nfrom = \"Run\"\nto = \"Walk\"\nwhen = \"!fast\"\nduration_s = {d}\n\
             [[layer]]\nname = \"base\"\ncompose = \"base\"\nmachine = \"m\"\n"
        ))
    };
    // Largest joint translation step between consecutive ticks around the
    // flips, and the transitions taken.
    let run = |text: &str| {
        let p = program(text, &pk);
        let mut ev = Evaluator::new(&p, &pk).unwrap();
        let mut prev: Option<Vec<[f32; 10]>> = None;
        let (mut jump, mut ids) = (0f32, Vec::new());
        for k in 0..60 {
            let fast = (10..16).contains(&k) || k >= 30;
            let r = ev
                .tick(&[0.0, f32::from(u8::from(fast))], 1.0 / 30.0)
                .unwrap();
            ev.evaluate().unwrap();
            ids.extend(r.transition);
            let pose: Vec<[f32; 10]> = ev.local_pose().iter().map(|t| t.to_array()).collect();
            if let (Some(a), true) = (&prev, (10..18).contains(&k)) {
                for (x, y) in a.iter().zip(&pose) {
                    for i in 4..7 {
                        jump = jump.max((x[i] - y[i]).abs());
                    }
                }
            }
            prev = Some(pose);
        }
        (jump, ids)
    };
    let (faded, ids) = run(&machine(0.5));
    let (switched, ids0) = run(&machine(0.001));
    assert_eq!(ids, [1, 2, 1]);
    assert_eq!(ids, ids0);
    assert!(
        faded < 0.5 * switched,
        "cross-faded step {faded} m against a hard switch's {switched} m"
    );
}
