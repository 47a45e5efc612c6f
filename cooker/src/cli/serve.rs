//! `ludus-anim serve`: the asset server lives in its own crate and binary
//! (`ludus-anim-server`, `server/`), so this library and binary stay free
//! of async dependencies; `serve` hands its arguments to that binary
//! (found next to this one, else on PATH, or at `LUDUS_ANIM_SERVER`) and,
//! on Unix, becomes it, so signals reach the server directly.

use super::output::Output;
use super::Exit;
use clap::Args;
use std::ffi::OsString;
use std::path::PathBuf;
use std::process::Command;

#[derive(Args)]
pub struct ServeArgs {
    /// Arguments for ludus-anim-server (`ludus-anim serve --help` lists them).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
    args: Vec<OsString>,
}

/// The server binary: `LUDUS_ANIM_SERVER`, else beside this executable,
/// else by name on PATH.
fn server_exe() -> PathBuf {
    if let Some(p) = std::env::var_os("LUDUS_ANIM_SERVER") {
        return PathBuf::from(p);
    }
    let name = format!("ludus-anim-server{}", std::env::consts::EXE_SUFFIX);
    std::env::current_exe()
        .ok()
        .and_then(|e| e.parent().map(|d| d.join(&name)))
        .filter(|p| p.is_file())
        .unwrap_or_else(|| PathBuf::from(name))
}

pub fn run(a: ServeArgs, out: &Output) -> Exit {
    let exe = server_exe();
    let mut cmd = Command::new(&exe);
    cmd.args(&a.args);
    let err = exec(&mut cmd);
    out.error(format!(
        "cannot run {} ({err}); build it with `cargo build --release -p ludus-anim-server`, put it beside ludus-anim or on PATH, or set LUDUS_ANIM_SERVER",
        exe.display()
    ));
    Exit::Usage
}

#[cfg(unix)]
fn exec(cmd: &mut Command) -> std::io::Error {
    use std::os::unix::process::CommandExt;
    cmd.exec()
}

#[cfg(not(unix))]
fn exec(cmd: &mut Command) -> std::io::Error {
    match cmd.status() {
        Ok(s) => std::process::exit(s.code().unwrap_or(1)),
        Err(e) => e,
    }
}
