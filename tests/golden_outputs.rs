//! Golden outputs: for fixed inputs and settings, the bytes of every
//! package, `manifest.json`, and `report.json` (without its timings and
//! build identity) are recorded in `tests/golden/outputs.txt`. A refactor
//! must leave them identical; a change that alters output on purpose
//! refreshes the file in the same commit (and bumps the stage versions it
//! changed):
//! `LUDUS_UPDATE_GOLDEN=1 cargo test -p ludus-anim-cooker --test golden_outputs`.
//!
//! Covered: every shared fixture (glTF, FBX, BVH) under each bundled
//! profile, the ACL SJSON anchor clips, the bundled biped, and a manifest
//! project with cut clips, loops, root motion, additive references,
//! markers, custom curves, per-clip profiles and a units override.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

/// Report fields that measure the machine, not the cook.
const VOLATILE: &[&str] = &[
    "compress_ms",
    "decode_ns_per_pose",
    "cook_ms",
    "peak_rss_mb",
    "ms",
    "build",
];

fn strip_volatile(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for k in VOLATILE {
                o.remove(*k);
            }
            for (_, x) in o.iter_mut() {
                strip_volatile(x);
            }
        }
        Value::Array(a) => a.iter_mut().for_each(strip_volatile),
        _ => {}
    }
}

fn hash(bytes: &[u8]) -> String {
    blake3::hash(bytes).to_hex().to_string()
}

/// One line per output of the cook in `out`: packages by name, the
/// manifest, and the report without volatile fields.
fn digest_outputs(label: &str, out: &Path) -> Vec<String> {
    let mut lines = Vec::new();
    for (name, bytes) in packages(out) {
        lines.push(format!("{label} packages/{name} {}", hash(&bytes)));
    }
    let manifest = std::fs::read(out.join("manifest.json")).expect("manifest.json written");
    lines.push(format!("{label} manifest.json {}", hash(&manifest)));
    let mut report = report(out);
    strip_volatile(&mut report);
    let text = serde_json::to_vec_pretty(&report).unwrap();
    lines.push(format!("{label} report.json {}", hash(&text)));
    lines
}

/// Cook `args` in `cwd` without a cache into `out`; the cook must succeed.
fn cook(cwd: &Path, out: &Path, args: &[String]) {
    let mut all: Vec<String> = vec!["cook".into(), "--no-cache".into(), "--out".into()];
    all.push(out.display().to_string());
    all.extend(args.iter().cloned());
    let refs: Vec<&str> = all.iter().map(String::as_str).collect();
    let o = ludus_anim(&refs, cwd);
    assert!(o.status.success(), "{}", text(&o));
}

/// Shared fixture files relative to the fixtures directory (so recorded
/// paths do not depend on the checkout).
fn fixture_files(fx: &Path) -> Vec<String> {
    let mut v = Vec::new();
    for prefix in ["gltf/", "fbx/", "bvh/"] {
        for p in manifest_files(fx, prefix) {
            v.push(p.strip_prefix(fx).unwrap().display().to_string());
        }
    }
    v.sort();
    v
}

#[test]
fn outputs_are_byte_identical_to_the_golden_record() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let mut lines = Vec::new();

    let files = fixture_files(&fx);
    for profile in ["standard", "hero", "crowd"] {
        let out = tmp.path().join(format!("fixtures-{profile}"));
        let mut args = files.clone();
        args.extend(["--profile".into(), profile.into()]);
        cook(&fx, &out, &args);
        lines.extend(digest_outputs(&format!("fixtures/{profile}"), &out));
    }

    if let Some(anchors) = shared_anchors() {
        let dir = anchors.join("acl-clips");
        let mut clips: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().to_string())
            .filter(|n| n.ends_with(".sjson"))
            .collect();
        clips.sort();
        let out = tmp.path().join("acl");
        clips.extend(["--units".into(), "cm".into()]);
        cook(&dir, &out, &clips);
        lines.extend(digest_outputs("acl/standard", &out));
    }

    let biped_dir = repo().join("fixtures");
    let out = tmp.path().join("biped");
    cook(&biped_dir, &out, &["biped.glb".into()]);
    lines.extend(digest_outputs("biped/standard", &out));

    let project = tmp.path().join("project");
    feature_project(&fx, &project);
    let out = project.join("out");
    cook(&project, &out, &[]);
    lines.extend(digest_outputs("project", &out));

    let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let path: PathBuf = repo().join("tests/golden/outputs.txt");
    if std::env::var_os("LUDUS_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    let changed: Vec<String> = lines
        .iter()
        .filter(|l| !golden.lines().any(|g| g == l.as_str()))
        .cloned()
        .collect();
    let gone: Vec<&str> = golden
        .lines()
        .filter(|g| !lines.iter().any(|l| l == g))
        .collect();
    assert!(
        changed.is_empty() && gone.is_empty(),
        "outputs differ from {}:\nnew or changed:\n{}\nmissing:\n{}\n(refresh with LUDUS_UPDATE_GOLDEN=1 only for an intended output change)",
        path.display(),
        changed.join("\n"),
        gone.join("\n")
    );
}
