//! `ludus-anim bench`.

use super::output::Output;
use super::Exit;
use crate::cli::output::{out, outln};
use clap::Args;
use ludus_anim_cooker::bench;
use ludus_anim_cooker::profile::Profile;
use ludus_anim_cooker::project::{bundled_inputs, files_below, supported_files};
use ludus_anim_model::SourceFormat;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct BenchArgs {
    /// Files or directories to cook; default: ../shared/fixtures (glTF,
    /// FBX, BVH) and the bundled fixtures.
    files: Vec<PathBuf>,
    /// Profiles to run (comma separated).
    #[arg(long, default_value = "standard,hero,crowd")]
    profiles: String,
    /// ACL anchor directory (acl-clips/ and acl_dev_clips.csv); the
    /// side-by-side runs on its SJSON clips at the standard profile.
    #[arg(long)]
    anchors: Option<PathBuf>,
    /// Skip the ACL side-by-side.
    #[arg(long)]
    no_acl: bool,
    /// Print the results as JSON on stdout instead of the table.
    #[arg(long)]
    json: bool,
    /// Also write the JSON to this file (never one of the inputs).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Timed strict-flush decodes per clip and figure.
    #[arg(long, default_value_t = 101)]
    cold_iterations: usize,
    /// Treat the inputs as cooked packages (.ludanim files, or directories
    /// searched for them) and measure their decode only (no cook); ACL's
    /// sizes are matched by file name.
    #[arg(long)]
    packages: bool,
}

/// The decode settings of `a`.
fn decode_settings(a: &BenchArgs) -> Result<bench::decode::DecodeSettings, String> {
    Ok(bench::decode::DecodeSettings {
        strict_runs: a.cold_iterations,
    })
}

fn shared_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .join(name)
}

fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
}

/// The inputs, directories expanded; the default set when none.
fn inputs(files: &[PathBuf]) -> Vec<PathBuf> {
    if files.is_empty() {
        let mut v = bundled_inputs(&fixtures_dir());
        let shared = shared_dir("fixtures");
        for sub in ["gltf", "fbx", "bvh"] {
            v.extend(supported_files(&shared.join(sub), Path::new("")));
        }
        return v;
    }
    files
        .iter()
        .flat_map(|f| {
            if f.is_dir() {
                supported_files(f, Path::new(""))
            } else {
                vec![f.clone()]
            }
        })
        .collect()
}

/// The packages `bench --packages` measures: files as given, directories
/// searched (recursively, sorted, links to directories not followed) for
/// `.ludanim` files.
fn package_inputs(files: &[PathBuf]) -> Vec<PathBuf> {
    let package = |p: &Path| p.extension().is_some_and(|x| x == "ludanim");
    files
        .iter()
        .flat_map(|f| {
            if f.is_dir() {
                files_below(f, Path::new(""), &package)
            } else {
                vec![f.clone()]
            }
        })
        .collect()
}

/// Refuse to write the JSON over an input or anything that looks like
/// content.
fn check_out(out: &Path, inputs: &[PathBuf]) -> Result<(), String> {
    let same = |p: &PathBuf| {
        p == out
            || matches!(
                (p.canonicalize(), out.canonicalize()),
                (Ok(a), Ok(b)) if a == b
            )
    };
    if inputs.iter().any(same) {
        return Err(format!("--out {} is one of the inputs", out.display()));
    }
    let content = SourceFormat::of_path(out).is_some()
        || out
            .extension()
            .is_some_and(|e| e == "ludanim" || e == "toml");
    if content {
        return Err(format!(
            "--out {} looks like content, not a JSON results file",
            out.display()
        ));
    }
    Ok(())
}

pub fn run(a: BenchArgs, out: &Output) -> Exit {
    let mut profiles = Vec::new();
    for name in a
        .profiles
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
    {
        match Profile::load(name) {
            Ok(p) => profiles.push(p),
            Err(e) => {
                out.error(e);
                return Exit::Usage;
            }
        }
    }
    let files = if a.packages {
        package_inputs(&a.files)
    } else {
        inputs(&a.files)
    };
    if files.is_empty() {
        out.error("bench: no inputs (no supported files, or no .ludanim with --packages)");
        return Exit::Usage;
    }
    if let Some(path) = &a.out {
        if let Err(e) = check_out(path, &files) {
            out.error(e);
            return Exit::Usage;
        }
    }
    let settings = match decode_settings(&a) {
        Ok(s) => s,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let mut conditions = bench::conditions::Conditions::start();
    let mut text = String::new();
    let mut results = Vec::new();
    if a.packages {
        let dir = a.anchors.clone().unwrap_or_else(|| shared_dir("anchors"));
        let r = bench::run_packages(&files, &acl_anchors(&dir), &settings);
        text.push_str(&bench::render_decode(&r.rows));
        results.push(("packages", r));
    } else {
        let r = bench::run(&files, &profiles, None, &Default::default(), &settings);
        text.push_str(&bench::render(&r));
        text.push_str(&bench::render_decode(&r.rows));
        results.push(("fixtures", r));
    }
    if !a.no_acl && !a.packages {
        match acl_side_by_side(&a, &profiles, out) {
            Ok(Some(r)) => {
                text.push_str("\nACL anchor clips (standard profile, --units cm):\n");
                text.push_str(&bench::render(&r));
                text.push_str(&bench::render_decode(&r.rows));
                results.push(("acl", r));
            }
            Ok(None) => {}
            Err(code) => return code,
        }
    }
    conditions.finish();
    text.push_str(&conditions.render());
    let mut json: serde_json::Map<String, serde_json::Value> = results
        .iter()
        .map(|(k, r)| (k.to_string(), serde_json::to_value(r).unwrap_or_default()))
        .collect();
    json.insert(
        "conditions".into(),
        serde_json::to_value(&conditions).unwrap_or_default(),
    );
    let json = serde_json::to_string_pretty(&json).unwrap_or_default();
    if a.json {
        outln!("{json}");
    } else {
        out!("{text}");
    }
    if let Some(path) = &a.out {
        if let Err(e) = ludus_anim_cooker::fsutil::write_atomic(path, json.as_bytes()) {
            out.error(format!("cannot write {}: {e}", path.display()));
            return Exit::Write;
        }
    }
    let failures: Vec<&String> = results.iter().flat_map(|(_, r)| &r.failures).collect();
    for f in &failures {
        out.error(format!("bench: {f}"));
    }
    if !failures.is_empty() {
        Exit::AssetsFailed
    } else {
        Exit::Ok
    }
}

/// ACL's figures from the anchor directory (missing files give none).
fn acl_anchors(dir: &Path) -> bench::AclAnchors {
    bench::AclAnchors {
        sizes: bench::load_acl_csv(&dir.join("acl_dev_clips.csv")),
    }
}

/// The ACL anchor clips at the standard profile, if the anchors exist.
fn acl_side_by_side(
    a: &BenchArgs,
    profiles: &[Profile],
    out: &Output,
) -> Result<Option<bench::BenchResult>, Exit> {
    let dir = a.anchors.clone().unwrap_or_else(|| shared_dir("anchors"));
    let clips = supported_files(&dir.join("acl-clips"), Path::new(""));
    if clips.is_empty() {
        out.note(format!(
            "no ACL anchor clips in {}; skipping the ACL side-by-side",
            dir.display()
        ));
        return Ok(None);
    }
    let acl = acl_anchors(&dir);
    let standard = match profiles.iter().find(|p| p.name == "standard") {
        Some(p) => p.clone(),
        None => Profile::load("standard").map_err(|e| {
            out.error(e);
            Exit::Usage
        })?,
    };
    // ACL's clips are centimetres; shell distances come from the files.
    Ok(Some(bench::run(
        &clips,
        &[standard],
        Some(0.01),
        &acl,
        &decode_settings(a).map_err(|e| {
            out.error(e);
            Exit::Usage
        })?,
    )))
}
