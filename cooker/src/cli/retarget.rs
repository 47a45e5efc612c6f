//! `ludus-anim retarget suggest SOURCE TARGET [-o PROFILE.toml]`.

use super::output::Output;
use super::Exit;
use crate::cli::output::out;
use clap::{Args, Subcommand};
use ludus_anim_cooker::fsutil::write_atomic;
use ludus_anim_cooker::manifest::Units;
use ludus_anim_cooker::suggest::suggest_profile;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct RetargetArgs {
    #[command(subcommand)]
    command: RetargetCommand,
}

#[derive(Subcommand)]
enum RetargetCommand {
    /// Propose a retarget profile from SOURCE's rig onto TARGET's: chains
    /// and chain map from hierarchy, names and synonyms, retarget poses and
    /// the detected rest kinds, with comments saying what to check. It is
    /// a starting point for a person, never applied implicitly.
    Suggest(SuggestArgs),
}

#[derive(Args)]
struct SuggestArgs {
    /// The rig the clips are authored on (any supported source file).
    source: PathBuf,
    /// The rig to bake the clips onto.
    target: PathBuf,
    /// Write the profile here (atomically) instead of printing it; its
    /// skeleton paths are written relative to this file.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Source length unit, overriding what the file declares.
    #[arg(long, value_enum)]
    source_units: Option<Units>,
    /// Target length unit, overriding what the file declares.
    #[arg(long, value_enum)]
    target_units: Option<Units>,
}

pub fn run(a: RetargetArgs, out: &Output) -> Exit {
    match a.command {
        RetargetCommand::Suggest(s) => suggest(s, out),
    }
}

fn suggest(a: SuggestArgs, out: &Output) -> Exit {
    let dir = a
        .out
        .as_deref()
        .and_then(Path::parent)
        .unwrap_or(Path::new(""));
    let s = match suggest_profile(
        &a.source,
        a.source_units.map(Units::meters),
        &a.target,
        a.target_units.map(Units::meters),
        dir,
    ) {
        Ok(s) => s,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    for n in &s.notes {
        out.warn(n);
    }
    let Some(path) = &a.out else {
        out!("{}", s.toml);
        return Exit::Ok;
    };
    if let Err(e) = write_atomic(path, s.toml.as_bytes()) {
        out.error(format!("{}: cannot write: {e}", path.display()));
        return Exit::Write;
    }
    out.note(format!(
        "wrote {} ({} chains mapped{}); review it, then cook with `ludus-anim cook --retarget {}`",
        path.display(),
        s.profile.maps.len(),
        if s.valid {
            ""
        } else {
            "; it does not fit the rigs yet"
        },
        path.display()
    ));
    Exit::Ok
}
