//! `ludus-anim prune OUT`: remove the packages no manifest in OUT names.

use super::output::Output;
use super::Exit;
use crate::cli::output::outln;
use clap::Args;
use ludus_anim_cooker::prune::{prune, PruneError, Pruned};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct PruneArgs {
    /// A cook's output directory (packages/, manifest.json).
    out: PathBuf,
    /// Print what would be removed; remove nothing.
    #[arg(long)]
    dry_run: bool,
}

pub fn run(a: PruneArgs, out: &Output) -> Exit {
    prune_and_say(&a.out, a.dry_run, out)
}

/// Prune `dir` and print one line (each removed package too, verbose).
pub fn prune_and_say(dir: &Path, dry: bool, out: &Output) -> Exit {
    match prune(dir, dry) {
        Ok(p) => {
            say(&p, dir, dry, out);
            Exit::Ok
        }
        Err(e @ (PruneError::Io { .. } | PruneError::Publish(_))) => {
            out.error(e);
            Exit::Write
        }
        Err(e) => {
            out.error(format!("prune refused: {e}"));
            Exit::Usage
        }
    }
}

fn say(p: &Pruned, dir: &Path, dry: bool, out: &Output) {
    if out.quiet {
        return;
    }
    if out.verbose || dry {
        for r in &p.removed {
            outln!("{} {}", if dry { "would remove" } else { "removed" }, r);
        }
    }
    outln!(
        "{} {} unreferenced packages ({} bytes) from {}; {} in use kept",
        if dry { "would remove" } else { "removed" },
        p.removed.len(),
        p.removed_bytes,
        dir.join("packages").display(),
        p.kept
    );
}
