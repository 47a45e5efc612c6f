//! The compiler's validations with located errors, the plan's shape,
//! liveness and capacities, and the binary round trip, over a synthetic
//! cook output (no packages needed: the compiler reads `AssetFacts`).

use ludus_anim_program::compile::{compile, AssetFacts, ClipFacts};
use ludus_anim_program::plan::{Guard, Op, NO_PARENT, PERSISTENT_PER_MACHINE};
use ludus_anim_program::{asset, binary, dump, Program, ProgramErrors};

fn facts() -> Vec<AssetFacts> {
    let names = [
        "Root", "Hips", "Spine", "Spine1", "Chest", "Head", "LeftArm", "RightArm", "LeftLeg",
        "RightLeg",
    ];
    let parents = vec![NO_PARENT, 0, 1, 2, 3, 4, 4, 4, 1, 1];
    let gait = |name: &str, d: f32| ClipFacts {
        name: name.into(),
        duration_s: d,
        looping: true,
        additive: false,
        sync_markers: vec![("foot_l".into(), 0.0), ("foot_r".into(), d / 2.0)],
        marker_count: 2,
    };
    vec![AssetFacts {
        asset: "biped".into(),
        package: "packages/biped-0123456789abcdef.ludanim".into(),
        skeleton_identity: [7; 16],
        joint_names: names.iter().map(|s| s.to_string()).collect(),
        parents,
        clips: vec![
            gait("idle", 3.0),
            gait("walk", 1.2),
            gait("run", 0.7),
            ClipFacts {
                name: "breathing".into(),
                duration_s: 3.0,
                looping: true,
                additive: true,
                sync_markers: vec![],
                marker_count: 2,
            },
            ClipFacts {
                name: "wave".into(),
                duration_s: 2.0,
                looping: false,
                additive: false,
                sync_markers: vec![],
                marker_count: 2,
            },
        ],
    }]
}

const BASE: &str = r#"
version = 1
name = "t"
[[parameter]]
name = "speed"
type = "float"
min = 0.0
max = 3.5
[[parameter]]
name = "carrying"
type = "bool"
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
[[sync_group]]
name = "feet"
markers = ["foot_l", "foot_r"]
[[mask]]
name = "upper"
subtrees = [{ root = "Spine", feather = 2 }]
[[node]]
name = "gait"
type = "blendspace1d"
parameter = "speed"
sync = "feet"
samples = [{ clip = "idle", at = 0.0 }, { clip = "walk", at = 1.4 }, { clip = "run", at = 3.5 }]
[[node]]
name = "stand"
type = "clip"
clip = "idle"
[[node]]
name = "breath"
type = "clip"
clip = "breathing"
[[machine]]
name = "loco"
initial = "Grounded"
[[machine.state]]
name = "Grounded"
initial = "Move"
[[machine.state]]
name = "Move"
parent = "Grounded"
node = "gait"
[[machine.state]]
name = "Rest"
parent = "Grounded"
node = "stand"
[[machine.transition]]
id = 1
from = "Move"
to = "Rest"
when = "speed < 0.05 && state_time > 1.0"
duration_s = 0.3
[[machine.transition]]
id = 2
from = "Rest"
to = "Move"
when = "speed > 0.1"
mode = "inertialize"
duration_s = 0.25
[[layer]]
name = "base"
compose = "base"
machine = "loco"
[[layer]]
name = "upper"
compose = "override"
node = "stand"
mask = "upper"
weight = "carrying"
[[layer]]
name = "breathing"
compose = "additive"
node = "breath"
weight = 0.5
"#;

fn build(text: &str) -> Result<Program, ProgramErrors> {
    let a = asset::parse(text, "t.program.toml")?;
    compile(&a, text, "t.program.toml", &facts())
}

/// The single error of `text`, rendered.
fn error(text: &str) -> String {
    match build(text) {
        Ok(_) => panic!("compiled"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn the_base_program_compiles_to_a_short_plan() {
    let p = build(BASE).unwrap();
    let text = dump::dump(&p);
    assert!(p.ops.len() <= 20, "{text}");
    // Move's three synced players, Rest's one, the layers' two; a
    // cross-fade from Move to Rest has both leaves' players active.
    assert_eq!(p.capacities.players, 6, "{text}");
    assert_eq!(p.capacities.max_active_players, 4 + 2, "{text}");
    // Liveness: the blendspace's three samples and the machine output are
    // live at once; the source segment reuses the samples' buffers.
    assert!(p.capacities.scratch_buffers <= 5, "{text}");
    assert_eq!(p.capacities.padded_joints, 12);
    assert_eq!(
        p.capacities.pose_bytes,
        u64::from(p.capacities.scratch_buffers + PERSISTENT_PER_MACHINE) * 12 * 40
    );
    // Every op maps to an authored node; the machine's ops are guarded.
    assert!(p.debug.iter().all(|d| !d.node.is_empty()));
    assert!(p.ops.iter().any(|i| matches!(i.guard, Guard::Source(..))));
    assert!(matches!(
        p.ops.last().map(|i| &i.op),
        Some(Op::LocalToComponent { .. })
    ));
    assert!(
        text.contains("BlendSpace 'gait'")
            && text.contains("OverrideMask")
            && text.contains("AddLocal"),
        "{text}"
    );
    // Feathered mask: Spine 1/3, Spine1 2/3, Chest and below 1, legs 0.
    let m = &p.masks[0].weights;
    assert!(
        (m[2] - 1.0 / 3.0).abs() < 1e-6
            && (m[3] - 2.0 / 3.0).abs() < 1e-6
            && m[4] == 1.0
            && m[8] == 0.0,
        "{m:?}"
    );
    // Transitions in selection order, predicate code typed.
    assert_eq!(p.machines[0].transitions.len(), 2);
}

#[test]
fn the_binary_round_trips_and_refuses_damage() {
    let p = build(BASE).unwrap();
    let bytes = binary::encode(&p);
    assert_eq!(binary::load(&bytes).unwrap(), p);
    assert_eq!(
        binary::encode(&binary::load(&bytes).unwrap()),
        bytes,
        "deterministic bytes"
    );
    // Every single-byte change is refused (checksum) and no truncation
    // panics; past the checksum, the body reader and validator refuse
    // damage without panicking too.
    for i in 0..bytes.len() {
        let mut b = bytes.clone();
        b[i] ^= 0x5a;
        assert!(binary::load(&b).is_err(), "byte {i}");
        let _ = binary::load_body(&b[binary::HEADER_SIZE..]);
        assert!(binary::load(&bytes[..i]).is_err());
    }
}

#[test]
fn unresolved_names_are_located_with_suggestions() {
    let e = error(&BASE.replace("clip = \"walk\"\n[[clip]]", "clip = \"wlak\"\n[[clip]]"));
    assert!(
        e.contains("t.program.toml:")
            && e.contains("clip 'walk'")
            && e.contains("did you mean 'walk'"),
        "{e}"
    );
    let e = error(&BASE.replace("to = \"Rest\"", "to = \"Rset\""));
    assert!(
        e.contains("machine 'loco' / transition 1")
            && e.contains("no state named 'Rset'")
            && e.contains("'Rest'"),
        "{e}"
    );
    let e = error(&BASE.replace("root = \"Spine\"", "root = \"Spin\""));
    assert!(
        e.contains("mask 'upper'") && e.contains("no joint named 'Spin'") && e.contains("'Spine'"),
        "{e}"
    );
    let e = error(&BASE.replace("speed > 0.1", "sped > 0.1"));
    assert!(
        e.contains("in `when`: unknown parameter 'sped'") && e.contains("'speed'"),
        "{e}"
    );
    // The column points into the predicate.
    let line = BASE
        .lines()
        .position(|l| l.contains("speed > 0.1"))
        .unwrap()
        + 1;
    assert!(e.contains(&format!("t.program.toml:{line}:9:")), "{e}");
    let e = error(&BASE.replace("compose = \"override\"", "compose = \"overide\""));
    assert!(e.contains("did you mean 'override'"), "{e}");
    let e = error(&BASE.replace(
        "asset = \"biped\"\nclip = \"run\"",
        "asset = \"bipd\"\nclip = \"run\"",
    ));
    assert!(
        e.contains("no cooked asset named 'bipd'") && e.contains("'biped'"),
        "{e}"
    );
}

#[test]
fn state_machine_validations() {
    // Unreachable: Rest has no way in.
    let e = error(&BASE.replace(
        "from = \"Move\"\nto = \"Rest\"",
        "from = \"Rest\"\nto = \"Rest\"",
    ));
    assert!(
        e.contains("state 'Rest'") || e.contains("transition 1"),
        "{e}"
    );
    let no_in = BASE.replace("[[machine.transition]]\nid = 1\nfrom = \"Move\"\nto = \"Rest\"\nwhen = \"speed < 0.05 && state_time > 1.0\"\nduration_s = 0.3\n", "");
    let e = error(&no_in);
    assert!(e.contains("state 'Rest': unreachable"), "{e}");
    // Conflicting priorities: two transitions from Move at priority 0.
    let extra = "[[machine.transition]]\nid = 3\nfrom = \"Move\"\nto = \"Rest\"\nwhen = \"carrying\"\nduration_s = 0.2\n";
    let e = error(&BASE.replace(
        "[[layer]]\nname = \"base\"",
        &format!("{extra}[[layer]]\nname = \"base\""),
    ));
    assert!(
        e.contains("transition 3")
            && e.contains("same source state and priority 0 as transition 1"),
        "{e}"
    );
    // Distinct priorities are fine.
    let ok = BASE.replace(
        "[[layer]]\nname = \"base\"",
        &format!(
            "{}[[layer]]\nname = \"base\"",
            extra.replace("id = 3", "id = 3\npriority = 2")
        ),
    );
    let p = build(&ok).unwrap();
    // Selection order: priority 2 (id 3) before priority 0 (id 1).
    let ids: Vec<u32> = p.machines[0].transitions.iter().map(|t| t.id).collect();
    assert_eq!(ids, [3, 1, 2]);
    // Zero-time cycle: both directions immediate, no state_time wait.
    let zc = BASE
        .replace(
            "when = \"speed < 0.05 && state_time > 1.0\"\nduration_s = 0.3",
            "when = \"speed < 0.05\"",
        )
        .replace(
            "when = \"speed > 0.1\"\nmode = \"inertialize\"\nduration_s = 0.25",
            "when = \"speed > 0.1\"",
        );
    let e = error(&zc);
    assert!(e.contains("zero-time cycle through transitions"), "{e}");
    // Missing target, self transition.
    let e = error(&BASE.replace("to = \"Move\"", "to = \"Rest\""));
    assert!(e.contains("no self transitions"), "{e}");
    // Ancestor transitions come first whatever their priority.
    let anc = "[[machine.transition]]\nid = 9\nfrom = \"Grounded\"\nto = \"Rest\"\nwhen = \"carrying\"\nduration_s = 0.2\n";
    let p = build(&BASE.replace(
        "[[layer]]\nname = \"base\"",
        &format!("{anc}[[layer]]\nname = \"base\""),
    ))
    .unwrap();
    assert_eq!(p.machines[0].transitions[0].id, 9);
}

#[test]
fn binding_and_layer_validations() {
    // A sync member without the group's markers.
    let e = error(&BASE.replace(
        "markers = [\"foot_l\", \"foot_r\"]",
        "markers = [\"foot_l\", \"foot_rr\"]",
    ));
    assert!(
        e.contains("no sync marker 'foot_rr'") && e.contains("'foot_r'"),
        "{e}"
    );
    // Degenerate 1D cell.
    let e = error(&BASE.replace(
        "{ clip = \"walk\", at = 1.4 }",
        "{ clip = \"walk\", at = 0.0 }",
    ));
    assert!(e.contains("degenerate") || e.contains("ascending"), "{e}");
    // An additive layer over a pose clip needs a reference; a cooked
    // delta takes none; a delta is no override.
    let e = error(&BASE.replace(
        "node = \"breath\"\nweight = 0.5",
        "node = \"stand\"\nweight = 0.5",
    ));
    assert!(e.contains("give the `reference`"), "{e}");
    let e = error(&BASE.replace(
        "node = \"breath\"\nweight = 0.5",
        "node = \"breath\"\nweight = 0.5\nreference = { kind = \"rest\" }",
    ));
    assert!(e.contains("cooked deltas already"), "{e}");
    let e = error(&BASE.replace(
        "node = \"stand\"\nmask = \"upper\"",
        "node = \"breath\"\nmask = \"upper\"",
    ));
    assert!(e.contains("over an additive clip"), "{e}");
    let ok = BASE.replace(
        "node = \"breath\"\nweight = 0.5",
        "node = \"stand\"\nweight = 0.5\nreference = { kind = \"clip\", clip = \"idle\", time_s = 0.0 }",
    );
    build(&ok).unwrap();
    let e = error(&ok.replace("time_s = 0.0 }", "time_s = 9.0 }"));
    assert!(e.contains("reference time 9 is outside clip 'idle'"), "{e}");
    // Weight out of range, enum weight.
    let e = error(&BASE.replace("weight = 0.5", "weight = 1.5"));
    assert!(e.contains("weight 1.5"), "{e}");
    // Another skeleton.
    let mut f = facts();
    let mut other = f[0].clone();
    other.asset = "ogre".into();
    other.skeleton_identity = [9; 16];
    f.push(other);
    let text = BASE.replace(
        "asset = \"biped\"\nclip = \"run\"",
        "asset = \"ogre\"\nclip = \"run\"",
    );
    let a = asset::parse(&text, "t.program.toml").unwrap();
    let e = compile(&a, &text, "t.program.toml", &f)
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("asset 'ogre' has another skeleton than asset 'biped'"),
        "{e}"
    );
}

#[test]
fn capacity_limits_are_enforced() {
    let e = error(&BASE.replace("name = \"t\"", "name = \"t\"\n[limits]\nmax_players = 5"));
    assert!(
        e.contains("up to 6 players are active in one tick, over max_players 5"),
        "{e}"
    );
    let e = error(&BASE.replace(
        "name = \"t\"",
        "name = \"t\"\n[limits]\nmax_pose_buffers = 2",
    ));
    assert!(
        e.contains("live pose buffers, over max_pose_buffers 2"),
        "{e}"
    );
}

#[test]
fn a_2d_blendspace_is_triangulated_and_degenerate_sets_refused() {
    let two_d = BASE
        .replace("[[parameter]]\nname = \"carrying\"", "[[parameter]]\nname = \"turn\"\ntype = \"float\"\nmin = -1.0\nmax = 1.0\n[[parameter]]\nname = \"carrying\"")
        .replace(
            "type = \"blendspace1d\"\nparameter = \"speed\"\nsync = \"feet\"\nsamples = [{ clip = \"idle\", at = 0.0 }, { clip = \"walk\", at = 1.4 }, { clip = \"run\", at = 3.5 }]",
            "type = \"blendspace2d\"\nparameters = [\"speed\", \"turn\"]\nsamples = [{ clip = \"idle\", at = [0.0, 0.0] }, { clip = \"walk\", at = [1.4, -1.0] }, { clip = \"run\", at = [3.5, 1.0] }]",
        );
    let p = build(&two_d).unwrap();
    assert_eq!(p.blendspaces[0].triangles.len(), 1);
    let e = error(&two_d.replace("at = [3.5, 1.0]", "at = [2.8, -2.0]"));
    assert!(
        e.contains("every sample is on one line") || e.contains("degenerate cell"),
        "{e}"
    );
}
