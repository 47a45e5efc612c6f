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
