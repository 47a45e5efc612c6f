//! The error promise at times verification did not choose: every shared
//! fixture is cooked at the standard profile, every package is decoded
//! through the runtime (`Package::load`, `Clip::sample`) at seeded random
//! times, and the decoded pose is measured in component space with the
//! project's metric against references evaluated here from the authored
//! curves (`ludus_anim_model::curve` through `SourcePose`: LINEAR rotation
//! is slerp, CUBICSPLINE Hermite), not the cooker's grid:
//!
//! - the *grid contract*: the authored pose at the two sample times around
//!   `t`, blended as the runtime blends (`interpolate`). The decoded clip
//!   must stay within the report's `max_error_m`, and that within the
//!   profile threshold, at every time. For sampled sources (BVH, FBX as
//!   baked, SJSON) this is the whole contract: their keys are the motion,
//!   with the runtime's interpolation between.
//! - the *source* (curve sources only): the authored pose at `t` itself.
//!   The decoded clip must stay within the report's `source_error_m`.
//!
//! Prints a table per clip: worst error at the random times and what the
//! report says.

mod common;
use common::*;
use ludus_anim_cooker::profile::Profile;
use ludus_anim_cooker::stages::normalize::normalize;
use ludus_anim_cooker::stages::resample::SourcePose;
use ludus_anim_format::math::interpolate;
use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_model::{SourceFormat, SourceKind};
use ludus_anim_runtime::package::Clip;
use ludus_anim_runtime::{Package, Skeleton, Transform};
use ludus_anim_verify::{pose_errors, Scratch};
use std::path::Path;

/// Random times per clip (seeded, uniform over the clip).
const TIMES: usize = 256;

/// Worst errors of one clip at the random times.
#[derive(Default)]
struct Found {
    grid_m: f32,
    grid_t: f32,
    source_m: f32,
    source_t: f32,
}

struct Measure<'a> {
    skeleton: &'a Skeleton,
    shells: &'a [f32],
    scratch: Scratch,
    pos: Vec<f32>,
    rot: Vec<f32>,
}

impl Measure<'_> {
    fn worst(&mut self, reference: &[Transform], decoded: &[Transform]) -> f32 {
        pose_errors(
            self.skeleton,
            reference,
            decoded,
            self.shells,
            &mut self.scratch,
            &mut self.pos,
            &mut self.rot,
        );
        self.pos
            .iter()
            .map(|&e| if e.is_finite() { e } else { f32::INFINITY })
            .fold(0.0, f32::max)
    }
}

fn random_times(seed: u64, duration: f32) -> Vec<f32> {
    let mut s = seed | 1;
    (0..TIMES)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 40) as f32 / (1u64 << 24) as f32 * duration
        })
        .collect()
}

/// Worst errors of `clip` at random times against the authored curves.
fn measure_clip(clip: &Clip<'_>, pkg: &Package<'_>, src: &SourcePose, m: &mut Measure) -> Found {
    let n = m.skeleton.joint_count();
    let (mut decoded, mut a, mut b) = (
        vec![Transform::IDENTITY; n],
        vec![Transform::IDENTITY; n],
        vec![Transform::IDENTITY; n],
    );
    let mut grid = vec![Transform::IDENTITY; n];
    let defaults = pkg.sample_defaults(clip);
    let (rate, dur) = (clip.sample_rate_hz(), clip.duration_s());
    let seed = ludus_anim_format::hash::fnv1a64(clip.name().as_bytes());
    let mut f = Found::default();
    for t in random_times(seed, dur) {
        assert!(
            clip.sample(t, defaults, &mut decoded).is_ok(),
            "decode at {t}"
        );
        let p = clip.position(t);
        src.evaluate((p.i0 as f32 / rate).min(dur), &mut a);
        src.evaluate((p.i1 as f32 / rate).min(dur), &mut b);
        for k in 0..n {
            grid[k] = if p.alpha == 0.0 {
                a[k]
            } else {
                interpolate(&a[k], &b[k], p.alpha)
            };
        }
        let e = m.worst(&grid, &decoded);
        if e > f.grid_m {
            (f.grid_m, f.grid_t) = (e, t);
        }
        src.evaluate(t, &mut a);
        let e = m.worst(&a, &decoded);
        if e > f.source_m {
            (f.source_m, f.source_t) = (e, t);
        }
    }
    f
}

/// Checks one cooked asset; failures and table rows are appended.
fn check_asset(
    file: &Path,
    pkg_bytes: &[u8],
    report: &serde_json::Value,
    rows: &mut Vec<String>,
    failures: &mut Vec<String>,
) {
    let name = file.file_name().unwrap().to_string_lossy().to_string();
    let format = SourceFormat::of_path(file).expect("known format");
    let asset = import_file(file, &ImportOptions::default()).expect("import");
    let norm = normalize(&asset, None).expect("normalize");
    let pkg = Package::load(pkg_bytes).expect("package loads");
    let sk = pkg.skeleton();
    assert_eq!(sk.joint_count(), norm.skeleton.joint_count(), "{name}");
    let profile = Profile::load("standard").unwrap();
    let (_, shells) = profile.joint_settings(norm.skeleton.names(), norm.file_shells_m.as_deref());
    let mut m = Measure {
        skeleton: &norm.skeleton,
        shells: &shells,
        scratch: Scratch::new(sk.joint_count()),
        pos: vec![0.0; sk.joint_count()],
        rot: vec![0.0; sk.joint_count()],
    };
    let curves = format.kind() == SourceKind::Curves;
    for clip in pkg.clips() {
        let Some(rc) = report["clips"]
            .as_array()
            .and_then(|v| v.iter().find(|c| c["name"] == clip.name()))
        else {
            failures.push(format!("{name}: clip '{}' not in the report", clip.name()));
            continue;
        };
        let Some(source) = norm.clips.iter().find(|c| c.name == clip.name()) else {
            failures.push(format!("{name}: clip '{}' not in the source", clip.name()));
            continue;
        };
        let src = SourcePose::new(source, &norm.skeleton);
        let f = measure_clip(clip, &pkg, &src, &mut m);
        let num = |k: &str| rc[k].as_f64().unwrap_or(f64::NAN) as f32;
        let (max_e, src_e, thr) = (
            num("max_error_m"),
            num("source_error_m"),
            num("threshold_m"),
        );
        rows.push(format!(
            "{name:<44} {:<28} {:>9.5} {:>9.5} {:>9.5} {:>9.5} {}",
            clip.name(),
            f.grid_m * 1e3,
            max_e * 1e3,
            if curves { f.source_m * 1e3 } else { f32::NAN },
            src_e * 1e3,
            if f.grid_m > max_e || f.grid_m > thr || (curves && f.source_m > src_e) {
                "BREACH"
            } else {
                "ok"
            }
        ));
        let what = format!("{name} clip '{}'", clip.name());
        if f.grid_m > max_e || f.grid_m > thr {
            failures.push(format!(
                "{what}: {:.5} mm at t={} exceeds the reported max_error_m {:.5} mm or the threshold {:.5} mm",
                f.grid_m * 1e3, f.grid_t, max_e * 1e3, thr * 1e3
            ));
        }
        if curves && f.source_m > src_e {
            failures.push(format!(
                "{what}: {:.5} mm from the authored curves at t={} exceeds the reported source_error_m {:.5} mm",
                f.source_m * 1e3, f.source_t, src_e * 1e3
            ));
        }
    }
}

#[test]
fn random_times_stay_within_the_reported_errors() {
    let Some(fx) = shared_fixtures() else { return };
    let files: Vec<_> = ["gltf/", "fbx/", "bvh/"]
        .iter()
        .flat_map(|p| manifest_files(&fx, p))
        .collect();
    assert!(files.len() >= 20, "{files:?}");
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    let mut args = vec!["cook", "--out", out.to_str().unwrap(), "--no-cache"];
    args.extend(files.iter().map(|f| f.to_str().unwrap()));
    // LUDUS_ERROR_BOUND_BIN: measure another build's cook (a baseline).
    let o = match std::env::var_os("LUDUS_ERROR_BOUND_BIN") {
        Some(bin) => std::process::Command::new(bin)
            .args(&args)
            .current_dir(tmp.path())
            .output()
            .expect("run the LUDUS_ERROR_BOUND_BIN cooker"),
        None => ludus_anim(&args, tmp.path()),
    };
    let r = report(&out);
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (i, a) in r["assets"].as_array().unwrap().iter().enumerate() {
        let source = a["source"].as_str().unwrap_or_default();
        let Some(file) = files.iter().find(|f| {
            f.ends_with(source) || source.ends_with(&*f.file_name().unwrap().to_string_lossy())
        }) else {
            failures.push(format!("asset {source}: not a fixture"));
            continue;
        };
        if a["package"].is_null() {
            failures.push(format!("{source}: no package ({})", text(&o)));
            continue;
        }
        let bytes = std::fs::read(package_path(&out, &r, i)).unwrap();
        check_asset(file, &bytes, a, &mut rows, &mut failures);
    }
    eprintln!(
        "{:<44} {:<28} {:>9} {:>9} {:>9} {:>9}\n{}",
        "fixture",
        "clip",
        "grid mm",
        "max_err",
        "source mm",
        "src_err",
        rows.join("\n")
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
