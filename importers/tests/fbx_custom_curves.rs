//! FBX custom animated properties imported as scalar curves on request
//! (`ImportOptions::custom_curves`), checked against ufbx's own evaluation
//! on the ozz robot fixture, whose user-defined animated properties are
//! `thumb2.grasp` (boolean) and `target.lock_orientation` (integer).

use ludus_anim_importers::{fbx, ImportOptions, Importer};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::{ScalarCurve, Severity, SourceAsset};
use std::path::{Path, PathBuf};

fn robot_path() -> Option<PathBuf> {
    let dir = match std::env::var_os("LUDUS_SHARED_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures"),
    };
    let p = dir.join("fbx/ozz_robot.fbx");
    p.is_file().then_some(p)
}

fn import(path: &Path, requests: &[&str]) -> SourceAsset {
    let bytes = std::fs::read(path).expect("read fixture");
    let opts = ImportOptions {
        custom_curves: requests.iter().map(|s| s.to_string()).collect(),
        ..ImportOptions::default()
    };
    let a = fbx::FBX
        .import(path, &bytes, &opts, &ludus_anim_importers::FileSystem)
        .expect("robot imports");
    assert!(!validate_asset(&a).has_errors());
    a
}

fn decision<'a>(a: &'a SourceAsset, kind: &str) -> Option<&'a str> {
    a.decisions
        .iter()
        .find(|d| d.kind == kind)
        .map(|d| d.detail.as_str())
}

fn curve<'a>(a: &'a SourceAsset, name: &str) -> &'a ScalarCurve {
    a.clips[0]
        .curves
        .iter()
        .find(|c| c.name == name)
        .unwrap_or_else(|| panic!("curve {name} missing"))
}

/// The robot's only stack and a node element by name, from ufbx directly.
fn reference(path: &Path) -> ufbx::SceneRoot {
    let bytes = std::fs::read(path).expect("read fixture");
    ufbx::load_memory(&bytes, ufbx::LoadOpts::default()).expect("ufbx loads")
}

#[test]
fn requested_properties_match_ufbx_evaluation() {
    let Some(path) = robot_path() else {
        eprintln!("shared fixtures not found; skipping");
        return;
    };
    let a = import(&path, &["grasp", "target.lock_orientation"]);
    assert_eq!(a.clips.len(), 1);
    let clip = &a.clips[0];
    let scene = reference(&path);
    let stack = &scene.anim_stacks[0];
    let node = |name: &str| {
        scene
            .nodes
            .iter()
            .find(|n| n.element.name.as_ref() == name)
            .unwrap_or_else(|| panic!("node {name}"))
    };
    for (curve_name, node_name, prop) in [
        ("thumb2/grasp", "thumb2", "grasp"),
        ("target/lock_orientation", "target", "lock_orientation"),
    ] {
        let c = curve(&a, curve_name);
        let el = &node(node_name).element;
        let stat = el.props.find_prop(prop).expect("static prop").value_vec4.x as f32;
        assert_eq!(c.default, stat, "{curve_name} default");
        assert!(c.curve.keys.len() > 2, "{curve_name} is animated");
        assert_eq!(c.curve.keys.last().unwrap().time, clip.duration_s);
        // Exact on the sampling grid (every key), at a few spread times.
        let n = c.curve.keys.len();
        for i in [0, 1, n / 7, n / 3, n / 2, 2 * n / 3, n - 2, n - 1] {
            let k = &c.curve.keys[i];
            let want = ufbx::evaluate_prop(&stack.anim, el, prop, stack.time_begin + k.time as f64)
                .value_vec4
                .x as f32;
            assert_eq!(k.value, want, "{curve_name} at t={}", k.time);
            assert_eq!(c.curve.evaluate(k.time), Some(want));
        }
        let values: Vec<f32> = c.curve.keys.iter().map(|k| k.value).collect();
        let (lo, hi) = values
            .iter()
            .fold((f32::MAX, f32::MIN), |(l, h), &v| (l.min(v), h.max(v)));
        assert!(hi > lo, "{curve_name} changes value over the clip");
        // Boolean and integer properties are discrete: carried as STEP.
        assert_eq!(
            c.curve.interpolation,
            ludus_anim_model::Interpolation::Step,
            "{curve_name}"
        );
    }
    let imported = decision(&a, "imported_custom_curves").expect("decision");
    assert!(imported.contains("thumb2/grasp") && imported.contains("target/lock_orientation"));
    let skipped = decision(&a, "skipped_property_animation").unwrap_or("");
    assert!(!skipped.contains("grasp") && !skipped.contains("lock_orientation"));
    assert!(!a
        .diagnostics
        .0
        .iter()
        .any(|d| d.code.starts_with("custom_curve")));
}

#[test]
fn unrequested_properties_stay_skipped() {
    let Some(path) = robot_path() else {
        return;
    };
    let a = import(&path, &[]);
    assert!(a.clips[0].curves.is_empty());
    assert!(decision(&a, "imported_custom_curves").is_none());
    let skipped = decision(&a, "skipped_property_animation").expect("skipped decision");
    assert!(skipped.contains("thumb2.grasp"), "{skipped}");
    assert!(skipped.contains("target.lock_orientation"), "{skipped}");
}

#[test]
fn unmatched_request_is_a_warning_naming_file_and_property() {
    let Some(path) = robot_path() else {
        return;
    };
    // `wrist.grasp`: the property exists, but not on that node.
    let a = import(&path, &["grasp", "no_such_prop", "wrist.grasp"]);
    assert_eq!(a.clips[0].curves.len(), 1);
    curve(&a, "thumb2/grasp");
    let warnings: Vec<_> = a
        .diagnostics
        .0
        .iter()
        .filter(|d| d.code == "custom_curve_not_found")
        .collect();
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    for (w, name) in warnings.iter().zip(["no_such_prop", "wrist.grasp"]) {
        assert_eq!(w.severity, Severity::Warning);
        assert_eq!(w.file.as_deref(), Some(path.display().to_string().as_str()));
        assert!(w.message.contains(&format!("'{name}'")), "{}", w.message);
    }
    // The skipped list still names what was not requested.
    let skipped = decision(&a, "skipped_property_animation").expect("skipped decision");
    assert!(skipped.contains("target.lock_orientation") && !skipped.contains("grasp"));
}

/// FBX SDK timeline markers (`GlobalSettings` `TimeMarker|<name>` compound
/// properties) are not imported (their layout is unverified against a real
/// file), but a file that declares them gets a warning naming them.
#[test]
fn fbx_timeline_markers_are_reported_not_imported() {
    let text = r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {
	FBXHeaderVersion: 1003
	FBXVersion: 7400
}
GlobalSettings:  {
	Version: 1000
	Properties70:  {
		P: "TimeMarker", "Compound", "", ""
		P: "TimeMarker|Footstep", "Compound", "", ""
		P: "TimeMarker|Footstep|Time", "KTime", "Time", "",46186158000
	}
}
Objects:  {
	Model: 2001, "Model::Root", "LimbNode" {
		Version: 232
	}
}
Connections:  {
	C: "OO",2001,0
}
"#;
    let a = fbx::FBX
        .import(
            Path::new("markers.fbx"),
            text.as_bytes(),
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .expect("imports");
    let w = a
        .diagnostics
        .0
        .iter()
        .find(|d| d.code == "fbx_markers_not_imported")
        .expect("marker warning");
    assert_eq!(w.severity, Severity::Warning);
    assert_eq!(w.file.as_deref(), Some("markers.fbx"));
    assert!(w.message.contains("Footstep"), "{}", w.message);
    assert!(a.clips.iter().all(|c| c.markers.is_empty()));
}
