//! Finding Debian's Chromium for the browser tests (installed with
//! apt-get when missing, as `.ci/run` does) and the programs they need.

use std::path::PathBuf;
use std::process::Command;

pub fn found(name: &str) -> Option<PathBuf> {
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!("command -v {name}"))
        .output()
        .ok()?;
    let p = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!p.is_empty()).then(|| PathBuf::from(p))
}

pub fn chromium() -> Option<PathBuf> {
    if let Some(p) = found("chromium") {
        return Some(p);
    }
    if found("apt-get").is_some() {
        eprintln!("chromium not found: installing it with apt-get");
        let install = "DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1 \
            || (apt-get update -qq >/dev/null 2>&1; DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null 2>&1)";
        let _ = Command::new("sh").arg("-c").arg(install).status();
    }
    let p = found("chromium");
    if p.is_none() {
        eprintln!("skipped: chromium is not installed and could not be installed with apt-get (the browser test needs Debian's chromium)");
    }
    p
}
