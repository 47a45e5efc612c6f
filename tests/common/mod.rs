//! Shared helpers for the end-to-end tests.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The repository root.
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// `../shared/fixtures` (or `LUDUS_SHARED_FIXTURES`); `None` with a printed
/// notice when absent, so a test can say clearly that it was skipped.
pub fn shared_fixtures() -> Option<PathBuf> {
    let p = std::env::var_os("LUDUS_SHARED_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/fixtures"));
    if p.join("MANIFEST.tsv").is_file() {
        Some(p)
    } else {
        eprintln!(
            "skipped: shared fixtures not found at {} (set LUDUS_SHARED_FIXTURES); CI has them",
            p.display()
        );
        None
    }
}

/// `../shared/anchors` (or `LUDUS_SHARED_ANCHORS`).
pub fn shared_anchors() -> Option<PathBuf> {
    let p = std::env::var_os("LUDUS_SHARED_ANCHORS")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/anchors"));
    if p.join("acl_dev_clips.csv").is_file() {
        Some(p)
    } else {
        eprintln!("skipped: shared anchors not found at {}", p.display());
        None
    }
}

/// Files of the shared fixtures' MANIFEST.tsv whose local path starts with
/// `prefix` (e.g. "gltf/").
pub fn manifest_files(fixtures: &Path, prefix: &str) -> Vec<PathBuf> {
    let text = std::fs::read_to_string(fixtures.join("MANIFEST.tsv")).expect("read MANIFEST.tsv");
    text.lines()
        .skip(1)
        .filter_map(|l| l.split('\t').nth(1))
        .filter(|p| p.starts_with(prefix))
        .map(|p| fixtures.join(p))
        .collect()
}

/// The `ludus-anim` command, run in `cwd` with a cache private to `cwd`
/// (never the user's cache).
pub fn command(args: &[&str], cwd: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_ludus-anim"));
    c.args(args)
        .current_dir(cwd)
        .env("LUDUS_ANIM_CACHE", cwd.join(".ludus-cache"));
    c
}

pub fn ludus_anim(args: &[&str], cwd: &Path) -> Output {
    command(args, cwd).output().expect("run ludus-anim")
}

/// Every package under `out/packages`, by file name, with its bytes.
pub fn packages(out: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(out.join("packages"))
        .map(|rd| {
            rd.flatten()
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().to_string(),
                        std::fs::read(e.path()).unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

pub fn text(o: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        o.status.code(),
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

pub fn report(out: &Path) -> serde_json::Value {
    let bytes = std::fs::read(out.join("report.json")).expect("report.json written");
    serde_json::from_slice(&bytes).expect("report.json parses")
}

/// Every file under `dir`, recursively (to check nothing partial is left).
pub fn all_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(all_files(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// Path of the single package the report lists for asset `i`.
pub fn package_path(out: &Path, report: &serde_json::Value, i: usize) -> PathBuf {
    out.join(
        report["assets"][i]["package"]
            .as_str()
            .expect("asset has a package"),
    )
}

/// A project manifest that exercises every preparation path: loops with
/// the duplicated end dropped, planar and full root motion, markers and
/// events, cut clips, additive against rest, a frame and a clip, custom
/// FBX curves, per-asset and per-clip profiles, a units override.
pub const FEATURE_PROJECT: &str = r#"
[project]
output = "out"

[[asset]]
sources = ["biped.glb"]

[asset.clips.walk]
loop = "loop"
drop_duplicate_end = true
root_motion = { joint = "Root", policy = "planar" }
markers = [
  { name = "foot_l", time_s = 0.0, kind = "sync" },
  { name = "foot_r", time_s = 0.6, kind = "sync" },
  { name = "step", time_s = 0.3, kind = "event", reversible = true },
]

[asset.clips.idle_additive]
from = "idle"
range = [0.0, 3.0]
additive = { reference = "frame", clip = "idle", time_s = 0.0 }

[asset.clips.walk_rest_additive]
from = "walk"
range = [0.2, 0.9]
additive = { reference = "rest" }
profile = "hero"

[[asset]]
sources = ["robot.fbx"]
curves = ["grasp", "lock_orientation"]
profile = "crowd"

[[asset]]
sources = ["walk.bvh"]
units = "cm"
keep_unused_leaves = true

[asset.clips.walk]
loop = "once"
root_motion = { joint = "Hips", policy = "full" }

[asset.clips.first_half]
from = "walk"
range = [0.0, 2.0]
loop = "loop"

[asset.clips.first_half_additive]
from = "walk"
range = [0.0, 2.0]
additive = { reference = "clip", clip = "first_half" }
"#;

/// Write [`FEATURE_PROJECT`] and copies of its sources into `dir`.
pub fn feature_project(fixtures: &Path, dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::copy(repo().join("fixtures/biped.glb"), dir.join("biped.glb")).unwrap();
    std::fs::copy(fixtures.join("fbx/ozz_robot.fbx"), dir.join("robot.fbx")).unwrap();
    std::fs::copy(
        fixtures.join("bvh/cmu_12_01_walk.bvh"),
        dir.join("walk.bvh"),
    )
    .unwrap();
    std::fs::write(dir.join("ludus-anim.toml"), FEATURE_PROJECT).unwrap();
}

/// Report fields that measure the machine, not the cook: what two cooks of
/// the same inputs may differ in.
pub const TIMING: &[&str] = &[
    "compress_ms",
    "decode_ns_per_pose",
    "cook_ms",
    "peak_rss_mb",
    "ms",
    "build",
];

/// Removes every field named in `keys`, at any depth.
pub fn strip(v: &mut serde_json::Value, keys: &[&str]) {
    match v {
        serde_json::Value::Object(o) => {
            for k in keys {
                o.remove(*k);
            }
            o.values_mut().for_each(|x| strip(x, keys));
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(|x| strip(x, keys)),
        _ => {}
    }
}

pub mod alloc;
pub mod hermetic;
pub mod program;
pub mod retarget;

/// A report without what differs between equal cooks: timings
/// (`*_ms`, `decode_ns_per_pose`), peak memory and the per-stage cache
/// counters (a re-cook hits where a clean cook ran).
pub fn without_timings(mut v: serde_json::Value) -> serde_json::Value {
    const TIMED: [&str; 3] = ["stages", "peak_rss_mb", "decode_ns_per_pose"];
    if let Some(o) = v.as_object_mut() {
        o.retain(|k, _| !(k.ends_with("_ms") || TIMED.contains(&k.as_str())));
        for x in o.values_mut() {
            *x = without_timings(x.take());
        }
    } else if let Some(a) = v.as_array_mut() {
        for x in a.iter_mut() {
            *x = without_timings(x.take());
        }
    }
    v
}

/// A package of reference-codec (uncompressed) clips with their prepared
/// semantics (markers, sync, root motion), for tests of what the package
/// carries rather than of the codec.
pub fn reference_package(
    sk: &ludus_anim_runtime::Skeleton,
    clips: &[&ludus_anim_cooker::stages::prepare::Prepared],
) -> Vec<u8> {
    use ludus_anim_cooker::package_writer::{write_package, PackageClip, PackageContents};
    use ludus_anim_format::codec::CodecId;
    let entries = clips
        .iter()
        .map(|p| PackageClip {
            name: p.clip.name.clone(),
            duration_s: p.clip.duration_s,
            sample_rate_hz: p.clip.sample_rate_hz,
            num_samples: p.clip.num_samples,
            loop_mode: p.clip.loop_mode,
            codec: CodecId::Reference,
            codec_version: CodecId::Reference.version(),
            profile: "test".into(),
            source_hash: [7; 32],
            resample_error_m: 0.0,
            max_error_m: 0.0,
            blob: ludus_anim_format::reference::encode(&p.clip.samples),
            curves: vec![],
        })
        .collect();
    write_package(
        &PackageContents {
            cooker_version: "test".into(),
            asset_name: "synthetic".into(),
            source_path: "synthetic".into(),
            source_hash: [7; 32],
            skeleton: sk,
            clips: entries,
            skins: &[],
            bounds: &[],
            sockets: &[],
            joint_sets: None,
        },
        clips,
    )
}
