//! Curve schemas end to end, per source format: the manifest's and the
//! profile's `curve_schema` rules and the importer's STEP reach the
//! package (`inspect` shows them), stepped channels decode as steps
//! between samples, and bad or unmatched rules are located.

mod common;

use common::{ludus_anim, package_path, report, shared_fixtures, text};
use ludus_anim_runtime::Package;
use std::path::Path;

/// Khronos AnimatedMorphCube with its weights sampler switched to STEP,
/// written into `dir` as `step_cube.gltf` (+ its buffer).
fn step_cube(fx: &Path, dir: &Path) {
    let src = fx.join("gltf/khronos_AnimatedMorphCube");
    std::fs::copy(
        src.join("AnimatedMorphCube.bin"),
        dir.join("AnimatedMorphCube.bin"),
    )
    .unwrap();
    let gltf = std::fs::read_to_string(src.join("AnimatedMorphCube.gltf")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&gltf).unwrap();
    doc["animations"][0]["samplers"][0]["interpolation"] = "STEP".into();
    std::fs::write(dir.join("step_cube.gltf"), doc.to_string()).unwrap();
}

/// Cook the project in `dir`; its `inspect` text, the package bytes, the
/// report and the cook's own output.
fn cook(dir: &Path) -> (String, Vec<u8>, serde_json::Value, String) {
    let o = ludus_anim(&["cook"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let out = dir.join("out");
    let r = report(&out);
    let pkg = package_path(&out, &r, 0);
    let i = ludus_anim(&["inspect", pkg.to_str().unwrap()], dir);
    assert!(i.status.success(), "{}", text(&i));
    let bytes = std::fs::read(&pkg).unwrap();
    let inspect = String::from_utf8_lossy(&i.stdout).into_owned();
    (inspect, bytes, r, text(&o))
}

fn curve_line<'a>(inspect: &'a str, name: &str) -> &'a str {
    inspect
        .lines()
        .find(|l| l.contains(&format!("curve {name} ")))
        .unwrap_or_else(|| panic!("no curve {name} in\n{inspect}"))
}

/// Every channel of every clip decodes as a step between samples: the
/// value at the middle of an interval is sample `i0`'s.
fn assert_steps(bytes: &[u8], channel: &str) {
    let p = Package::load(bytes).unwrap();
    let mut changes = 0;
    for c in p.clips() {
        let ch = p
            .clip_curves(c)
            .iter()
            .find(|ch| ch.name() == channel)
            .unwrap_or_else(|| panic!("{channel} in clip {}", c.name()));
        assert!(ch.record().step, "{channel} stored stepped");
        let rate = c.sample_rate_hz();
        for i in 0..c.num_samples().saturating_sub(1) {
            let (a, b) = (ch.value(i), ch.value(i + 1));
            let mid = c.position((i as f32 + 0.5) / rate);
            assert_eq!(ch.evaluate(mid), a, "{channel} sample {i} held");
            changes += usize::from(a != b);
        }
    }
    assert!(changes > 0, "{channel} changes value somewhere");
}

const RULES: &str = r#"
[project]
output = "out"

[[project.curve_schema]]
match = "*"
range = [0, 1]
clamp = true

[[asset]]
sources = ["step_cube.gltf"]

[[asset.curve_schema]]
match = "*/weights/1"
composition = "override"
default = 0

[[asset.curve_schema]]
match = "blink*"
interpolation = "step"
"#;

#[test]
fn gltf_step_morph_weights_and_manifest_rules_reach_the_package() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    step_cube(&fx, tmp.path());
    std::fs::write(tmp.path().join("ludus-anim.toml"), RULES).unwrap();
    let (inspect, bytes, r, _) = cook(tmp.path());
    let w0 = curve_line(&inspect, "AnimatedMorphCube/weights/0");
    assert!(
        w0.ends_with("default 0, step, blend, range [0, 1], clamped)"),
        "{w0}"
    );
    let w1 = curve_line(&inspect, "AnimatedMorphCube/weights/1");
    assert!(
        w1.ends_with("default 0, step, override, range [0, 1], clamped)"),
        "{w1}"
    );
    assert_steps(&bytes, "AnimatedMorphCube/weights/0");
    assert_steps(&bytes, "AnimatedMorphCube/weights/1");
    let pkg = package_path(&tmp.path().join("out"), &r, 0);
    let j = ludus_anim(&["inspect", "--json", pkg.to_str().unwrap()], tmp.path());
    let j: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    let c = &j["clips"][0]["curves"][1];
    assert_eq!(
        (
            &c["interpolation"],
            &c["composition"],
            &c["range"],
            &c["clamp"]
        ),
        (
            &"step".into(),
            &"override".into(),
            &serde_json::json!([0.0, 1.0]),
            &true.into()
        ),
        "{c}"
    );
    // Verification measured the steps as steps: within the threshold.
    let errors = &r["assets"][0]["clips"][0]["curves"]["max_error"];
    for (name, e) in errors.as_object().unwrap() {
        assert!(e.as_f64().unwrap() <= 0.001, "{name}: {e}");
    }
    // The rule naming no channel is a warning naming the manifest entry.
    let diags = r["assets"][0]["diagnostics"].to_string();
    assert!(
        diags.contains("ludus-anim.toml [[asset]] 0 curve_schema[1]")
            && diags.contains("blink*")
            && diags.contains("curve_schema_unmatched"),
        "{diags}"
    );
    // A rule may turn the importer's STEP back into linear.
    let linear = RULES.replace("composition = \"override\"", "interpolation = \"linear\"");
    std::fs::write(tmp.path().join("ludus-anim.toml"), linear).unwrap();
    let (inspect, _, _, cooked) = cook(tmp.path());
    let w1 = curve_line(&inspect, "AnimatedMorphCube/weights/1");
    assert!(w1.contains("default 0, linear, blend"), "{w1}");
    // A rule change re-runs verify and package only.
    for stage in ["prepare 1/0", "encode 1/0", "verify 0/1", "package 0/1"] {
        assert!(cooked.contains(stage), "{stage}: {cooked}");
    }
}

#[test]
fn importer_step_is_kept_without_rules_and_profiles_declare_schemas() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    step_cube(&fx, tmp.path());
    let plain = "[project]\noutput = \"out\"\n[[asset]]\nsources = [\"step_cube.gltf\"]\n";
    std::fs::write(tmp.path().join("ludus-anim.toml"), plain).unwrap();
    let (inspect, _, _, _) = cook(tmp.path());
    let w0 = curve_line(&inspect, "AnimatedMorphCube/weights/0");
    assert!(w0.ends_with("default 0, step, blend)"), "{w0}");
    // A profile's rules, below the asset's.
    let standard = ludus_anim_cooker::profile::BUNDLED[0].1;
    let profile = format!(
        "{standard}\n[[curve_schema]]\nmatch = \"*\"\ncomposition = \"max\"\nrange = [0, 2]\n"
    );
    std::fs::write(tmp.path().join("faces.toml"), profile).unwrap();
    let manifest = plain.replace(
        "sources = [\"step_cube.gltf\"]\n",
        "sources = [\"step_cube.gltf\"]\nprofile = \"faces.toml\"\ncurve_schema = [ { match = \"*/0\", range = [0, 1] } ]\n",
    );
    std::fs::write(tmp.path().join("ludus-anim.toml"), manifest).unwrap();
    let (inspect, _, _, _) = cook(tmp.path());
    let w0 = curve_line(&inspect, "AnimatedMorphCube/weights/0");
    assert!(w0.ends_with("step, max, range [0, 1])"), "{w0}");
    let w1 = curve_line(&inspect, "AnimatedMorphCube/weights/1");
    assert!(w1.ends_with("step, max, range [0, 2])"), "{w1}");
    // A bad profile rule names the profile file and the field.
    let bad = format!("{standard}\n[[curve_schema]]\nmatch = \"*\"\nrange = [2, 0]\n");
    std::fs::write(tmp.path().join("faces.toml"), bad).unwrap();
    let o = ludus_anim(&["cook"], tmp.path());
    let t = text(&o);
    assert!(!o.status.success(), "{t}");
    assert!(
        t.contains("faces.toml") && t.contains("curve_schema[0].range"),
        "{t}"
    );
}

#[test]
fn invalid_manifest_rules_are_errors_naming_file_and_field() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        common::repo().join("fixtures/biped.glb"),
        tmp.path().join("biped.glb"),
    )
    .unwrap();
    let base = "[[asset]]\nsources = [\"biped.glb\"]\n[[asset.curve_schema]]\nmatch = \"*\"\n";
    for (extra, wants) in [
        ("range = [1, 0]\n", "range = [1, 0] must satisfy min <= max"),
        (
            "range = [0, 1]\ndefault = 3\n",
            "default = 3 must lie within range",
        ),
        ("composition = \"reduce\"\n", "unknown variant `reduce`"),
        ("interpolation = \"cubic\"\n", "unknown variant `cubic`"),
    ] {
        std::fs::write(tmp.path().join("ludus-anim.toml"), format!("{base}{extra}")).unwrap();
        let o = ludus_anim(&["cook"], tmp.path());
        let t = text(&o);
        assert!(!o.status.success(), "{t}");
        assert!(t.contains("ludus-anim.toml") && t.contains(wants), "{t}");
    }
}

#[test]
fn fbx_discrete_properties_cook_stepped() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(fx.join("fbx/ozz_robot.fbx"), tmp.path().join("robot.fbx")).unwrap();
    let manifest = "[project]\noutput = \"out\"\n[[asset]]\nsources = [\"robot.fbx\"]\ncurves = [\"grasp\", \"target.lock_orientation\"]\n[[asset.curve_schema]]\nmatch = \"target/*\"\ncomposition = \"override\"\n";
    std::fs::write(tmp.path().join("ludus-anim.toml"), manifest).unwrap();
    let (inspect, bytes, _, _) = cook(tmp.path());
    let grasp = curve_line(&inspect, "thumb2/grasp");
    assert!(grasp.contains(", step, blend)"), "{grasp}");
    let lock = curve_line(&inspect, "target/lock_orientation");
    assert!(lock.contains(", step, override)"), "{lock}");
    assert_steps(&bytes, "thumb2/grasp");
}

#[test]
fn bvh_has_no_channels_for_a_rule_to_name() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(fx.join("bvh/cmu_01_01.bvh"), tmp.path().join("a.bvh")).unwrap();
    let manifest = "[project]\noutput = \"out\"\n[[project.curve_schema]]\nmatch = \"*\"\nclamp = true\n[[asset]]\nsources = [\"a.bvh\"]\nunits = \"cmu\"\n[[asset.curve_schema]]\nmatch = \"blink\"\n";
    std::fs::write(tmp.path().join("ludus-anim.toml"), manifest).unwrap();
    let (_, _, r, _) = cook(tmp.path());
    let diags = r["assets"][0]["diagnostics"].to_string();
    assert!(
        diags.contains("curve_schema[0]: match \\\"blink\\\" names no curve channel")
            && diags.contains("the asset has no curve channels"),
        "{diags}"
    );
    assert_eq!(
        diags.matches("curve_schema_unmatched").count(),
        1,
        "project rules are not expected to match in every asset: {diags}"
    );
}

/// A project rule that names no channel of any asset of the cook is told
/// once (a typo in a pattern otherwise changes nothing silently); the one
/// that matches is not.
#[test]
fn a_project_rule_matching_no_channel_of_the_cook_is_told() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    step_cube(&fx, tmp.path());
    let typo = RULES.replacen(
        "[[asset]]",
        "[[project.curve_schema]]\nmatch = \"*/wieghts/*\"\nclamp = true\n\n[[asset]]",
        1,
    );
    std::fs::write(tmp.path().join("ludus-anim.toml"), typo).unwrap();
    let (_, _, _, said) = cook(tmp.path());
    assert!(
        said.contains("ludus-anim.toml [[project.curve_schema]] 1: match \"*/wieghts/*\" names no curve channel of any asset of this cook"),
        "{said}"
    );
    assert!(!said.contains("[[project.curve_schema]] 0:"), "{said}");
}
