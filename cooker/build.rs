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
    if let Some(dir) = git(&["rev-parse", "--git-dir"]) {
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/refs/heads");
    }
    if let Some(dir) = git(&["rev-parse", "--git-common-dir"]) {
        println!("cargo:rerun-if-changed={dir}/refs/heads");
        println!("cargo:rerun-if-changed={dir}/packed-refs");
    }
}
