//! Records the source revision the binary was built from, for `--version`
//! and `report.json`. It never reaches package bytes or cache keys (those
//! carry only `COOKER_VERSION` and the format and stage versions), so an
//! unrelated commit changes neither.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
}

fn main() {
    let revision = std::env::var("LUDUS_ANIM_REVISION")
        .ok()
        .or_else(|| git(&["rev-parse", "--short=12", "HEAD"]))
        .unwrap_or_else(|| "unknown".to_string());
    println!("cargo:rustc-env=LUDUS_ANIM_REVISION={revision}");
    println!("cargo:rerun-if-env-changed=LUDUS_ANIM_REVISION");
    // Watch what names the revision and nothing wider: HEAD, and the ref
    // it points to (loose or packed). Only paths that exist: cargo treats
    // a missing one as always changed (that rebuilt the cooker, and all
    // that depends on it, on every build). Not the whole `refs/heads`,
    // which every commit on any branch touches (a worktree on another
    // branch rebuilt on each of them).
    let mut watch = Vec::new();
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        watch.push(format!("{dir}/HEAD"));
    }
    if let Some(dir) = git(&["rev-parse", "--git-common-dir"]) {
        if let Some(head_ref) = git(&["symbolic-ref", "-q", "HEAD"]) {
            watch.push(format!("{dir}/{head_ref}"));
        }
        watch.push(format!("{dir}/packed-refs"));
    }
    for path in watch.iter().filter(|p| std::path::Path::new(p).exists()) {
        println!("cargo:rerun-if-changed={path}");
    }
}
