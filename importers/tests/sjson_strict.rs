//! The SJSON importer rejects broken input with errors that name the line.

use ludus_anim_importers::{sjson, ImportError, ImportOptions, Importer};
use ludus_anim_model::{Diagnostic, Quat, Vec3};
use std::path::Path;

const GOOD: &str = r#"// A tiny clip.
version = 5
clip = {
	name = "tiny"
	num_samples = 2
	sample_rate = 30.0
	is_binary_exact = false
}
bones = [
	{ name = "root", parent = "", vertex_distance = 3.0 }
	{
		name = "arm"
		parent = "root"
		vertex_distance = 2.5
	}
]
tracks = [
	{
		name = "root"
		rotations = [ [0, 0, 0, 1] [0, 0.6, 0, 0.8] ]
		translations = [ [0, 1, 0], [0, 2, 0] ]
	}
	{
		name = "arm"
		scales = [ [1 1 1] [2 2 2] ]
	}
]
"#;

fn import(text: &str) -> Result<ludus_anim_model::SourceAsset, ImportError> {
    sjson::SJSON.import(
        Path::new("test.acl.sjson"),
        text.as_bytes(),
        &ImportOptions::default(),
        &ludus_anim_importers::FileSystem,
    )
}

/// The diagnostic of a rejected file.
fn error(text: &str) -> Diagnostic {
    match import(text) {
        Err(ImportError::Malformed(d)) => *d,
        Err(e) => panic!("unexpected error kind: {e}"),
        Ok(_) => panic!("accepted broken input:\n{text}"),
    }
}

/// `GOOD` with the first occurrence of `from` replaced.
fn broken(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replacen(from, to, 1)
}

#[test]
fn good_clip_imports() {
    let a = import(GOOD).unwrap();
    assert_eq!(a.skeleton.joints.len(), 2);
    assert_eq!(a.skeleton.joints[1].parent, Some(0));
    assert_eq!(a.joint_shell_distance, Some(vec![3.0, 2.5]));
    let c = &a.clips[0];
    assert_eq!(c.name, "tiny");
    assert_eq!(c.frame_rate_hz, Some(30.0));
    assert!((c.duration_s - 1.0 / 30.0).abs() < 1e-7);
    assert_eq!(c.tracks.len(), 2);
    let rot = c.tracks[0].rotation.as_ref().unwrap();
    assert_eq!(rot.keys[1].value, Quat::from_xyzw(0.0, 0.6, 0.0, 0.8));
    // The root track has no scales and the arm track no rotations or
    // translations: identity, and the rest pose is identity too, so no
    // curve is needed.
    assert!(c.tracks[0].scale.is_none());
    assert!(c.tracks[1].rotation.is_none());
    assert_eq!(
        c.tracks[1].scale.as_ref().unwrap().keys[1].value,
        Vec3::splat(2.0)
    );
    assert!(a.diagnostics.0.is_empty(), "{:?}", a.diagnostics);
    assert!(a
        .decisions
        .iter()
        .any(|d| d.kind == "rest_pose" && d.detail.contains("identity")));
}

fn assert_error(d: &Diagnostic, code: &str, line: u32, words: &[&str]) {
    assert_eq!(d.code, code, "{d}");
    assert!(
        d.message.contains(&format!("line {line}:")),
        "expected line {line}: {d}"
    );
    for w in words {
        assert!(d.message.contains(w), "expected '{w}' in: {d}");
    }
    assert_eq!(d.file.as_deref(), Some("test.acl.sjson"));
}

#[test]
fn unterminated_string() {
    let d = error(&broken(r#"name = "arm""#, r#"name = "arm"#));
    assert_error(&d, "sjson_syntax", 12, &["unterminated string"]);
}

#[test]
fn missing_equals() {
    let d = error(&broken("num_samples = 2", "num_samples 2"));
    assert_error(&d, "sjson_syntax", 5, &["expected `=`", "num_samples"]);
}

#[test]
fn wrong_array_length_names_bone_and_array() {
    let d = error(&broken("[0, 1, 0], [0, 2, 0]", "[0, 1, 0]"));
    assert_error(
        &d,
        "sample_count_mismatch",
        21,
        &["'root'", "`translations`", "1 entries", "expected 2"],
    );
    assert_eq!(d.joint.as_deref(), Some("root"));
}

#[test]
fn wrong_vector_width() {
    let d = error(&broken("[1 1 1] [2 2 2]", "[1 1 1] [2 2]"));
    assert_error(
        &d,
        "sjson_schema",
        25,
        &["'arm'", "`scales`[1]", "2 values, expected 3"],
    );
}

#[test]
fn unknown_parent() {
    let d = error(&broken(r#"parent = "root""#, r#"parent = "rooot""#));
    assert_error(&d, "unknown_parent", 13, &["'arm'", "'rooot'"]);
    assert_eq!(d.joint.as_deref(), Some("arm"));
}

#[test]
fn non_number() {
    let d = error(&broken("[0, 2, 0]", r#"[0, "two", 0]"#));
    assert_error(
        &d,
        "sjson_schema",
        21,
        &["must be a number", "found a string"],
    );
    let d = error(&broken("[0, 2, 0]", "[0, two, 0]"));
    assert_error(&d, "sjson_syntax", 21, &["expected a value", "`two`"]);
    let d = error(&broken("sample_rate = 30.0", "sample_rate = \"30\""));
    assert_error(&d, "sjson_schema", 6, &["sample_rate", "must be a number"]);
}

#[test]
fn nan_is_a_syntax_error() {
    let d = error(&broken("[0, 2, 0]", "[0, nan, 0]"));
    assert_error(&d, "sjson_syntax", 21, &["NaN"]);
    let d = error(&broken("[0, 2, 0]", "[0, -inf, 0]"));
    assert_error(&d, "sjson_syntax", 21, &["malformed number"]);
}

#[test]
fn unknown_bone_and_duplicates() {
    let d = error(&broken(
        r#"name = "arm"
		scales"#,
        r#"name = "leg"
		scales"#,
    ));
    assert_error(&d, "unknown_bone", 24, &["'leg'"]);
    let d = error(&broken(r#"name = "arm""#, r#"name = "root""#));
    assert_error(&d, "duplicate_bone", 11, &["'root'", "line 10:"]);
}

#[test]
fn missing_keys_and_bad_header() {
    let d = error(&broken("\tnum_samples = 2\n", ""));
    assert_error(
        &d,
        "sjson_schema",
        3,
        &["missing key `num_samples`", "`clip`"],
    );
    let d = error(&broken("num_samples = 2", "num_samples = 0"));
    assert_error(&d, "sjson_schema", 5, &["at least 1"]);
    let d = error(&broken("version = 5", "version = 6"));
    assert_error(&d, "unsupported_sjson", 2, &["version 6"]);
}

#[test]
fn truncated_and_garbage_input() {
    let cut = &GOOD[..GOOD.find("translations").unwrap()];
    let d = error(cut);
    assert_eq!(d.code, "sjson_syntax");
    assert!(
        d.message
            .contains("end of file inside the object opened at line 18:2"),
        "{d}"
    );
    let d = match sjson::SJSON.import(
        Path::new("x.sjson"),
        &[0x00, 0xff, 0xfe, b'{'],
        &ImportOptions::default(),
        &ludus_anim_importers::FileSystem,
    ) {
        Err(ImportError::Malformed(d)) => *d,
        _ => panic!(),
    };
    assert_eq!(d.code, "sjson_syntax");
    assert!(d.message.contains("line 1:"), "{d}");
    // Every prefix of a good file either imports or fails cleanly.
    for end in 0..GOOD.len() {
        if GOOD.is_char_boundary(end) {
            let _ = import(&GOOD[..end]);
        }
    }
}

#[test]
fn unknown_sections_and_keys_are_ignored_with_a_warning() {
    let text = broken(
        "bones = [",
        "extra = { anything = [1 2 3] }\nsettings = { error_threshold = 0.01 }\nbones = [",
    )
    .replacen(
        "vertex_distance = 3.0",
        "vertex_distance = 3.0, colour = \"red\"",
        1,
    );
    let a = import(&text).unwrap();
    assert!(a
        .decisions
        .iter()
        .any(|d| d.kind == "ignored_section" && d.detail.contains("`extra`")));
    assert!(a
        .decisions
        .iter()
        .any(|d| d.kind == "ignored_section" && d.detail.contains("`settings`")));
    assert!(a
        .decisions
        .iter()
        .any(|d| d.kind == "ignored_key" && d.detail.contains("`colour`")));
    assert!(a
        .diagnostics
        .warnings()
        .any(|d| d.code == "unknown_sjson_section" && d.message.contains("line 9:")));
    assert!(!a.diagnostics.has_errors());
}

#[test]
fn bind_pose_is_the_rest_and_missing_arrays_hold_identity() {
    let text = broken(
        "vertex_distance = 2.5",
        "vertex_distance = 2.5\n\t\tbind_translation = [0, 10, 0]\n\t\tbind_rotation = [0, 0, 0.6, 0.8]",
    );
    let a = import(&text).unwrap();
    let arm = &a.skeleton.joints[1];
    assert_eq!(arm.rest.translation, Vec3::new(0.0, 10.0, 0.0));
    assert_eq!(arm.rest.rotation, Quat::from_xyzw(0.0, 0.0, 0.6, 0.8));
    // The arm track only has scales; ACL reads the absent rotations and
    // translations as identity, which differs from this rest pose.
    let tr = &a.clips[0].tracks[1];
    assert_eq!(tr.translation.as_ref().unwrap().keys[0].value, Vec3::ZERO);
    assert_eq!(tr.rotation.as_ref().unwrap().keys[0].value, Quat::IDENTITY);
    assert!(a
        .decisions
        .iter()
        .any(|d| d.kind == "rest_pose" && d.detail.contains("1 of 2")));
    assert!(a.decisions.iter().any(|d| d.kind == "missing_channel"));
}

#[test]
fn binary_exact_values_are_hex_bits() {
    let text = broken("is_binary_exact = false", "is_binary_exact = true").replacen(
        "[1 1 1] [2 2 2]",
        r#"["3ff0000000000000" "3ff0000000000000" "3ff0000000000000"] ["4000000000000000", "4000000000000000", "4000000000000000"]"#,
        1,
    );
    let a = import(&text).unwrap();
    assert_eq!(
        a.clips[0].tracks[1].scale.as_ref().unwrap().keys[1].value,
        Vec3::splat(2.0)
    );
}
