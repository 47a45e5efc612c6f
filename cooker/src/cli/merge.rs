//! `ludus-anim merge`: shard outputs into one manifest and report.

use super::output::Output;
use super::Exit;
use crate::cli::output::outln;
use clap::Args;
use ludus_anim_cooker::hermetic;
use ludus_anim_cooker::merge::{merge, MergeError};
use std::path::PathBuf;

#[derive(Args)]
pub struct MergeArgs {
    /// Output directories of `cook --shard I/N` (one directory may hold
    /// several shards).
    #[arg(required = true)]
    shards: Vec<PathBuf>,
    /// Where manifest.json, report.json and the packages go (default: the
    /// shard directory, when there is only one).
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// For `cook-asset` output directories: the `ludus-anim query` JSON
    /// whose asset order (the project's job order) the merge follows and
    /// whose every asset must be there (default: the order given).
    #[arg(long, value_name = "QUERY.json")]
    order: Option<PathBuf>,
}

pub fn run(a: MergeArgs, out: &Output) -> Exit {
    if a.shards.iter().any(|d| hermetic::is_fragment_dir(d)) {
        return super::merge_fragments::run(&a.shards, a.out.as_deref(), a.order.as_deref(), out);
    }
    if a.order.is_some() {
        out.error("merge: --order is for `cook-asset` output directories, not shards");
        return Exit::Usage;
    }
    let target = match (&a.out, a.shards.as_slice()) {
        (Some(o), _) => o.clone(),
        (None, [one]) => one.clone(),
        (None, _) => {
            out.error("merge: --out DIR is needed when the shards are in several directories");
            return Exit::Usage;
        }
    };
    match merge(&a.shards, &target) {
        Ok(m) => {
            for n in &m.notices {
                out.note(n);
            }
            if !out.quiet {
                outln!(
                    "merged {} shards: {} assets ({} failed), {} packages ({} copied) -> {}, {}",
                    m.shards,
                    m.report.totals.assets,
                    m.report.totals.assets_failed,
                    m.manifest.assets.len(),
                    m.copied,
                    target.join("manifest.json").display(),
                    target.join("report.json").display()
                );
            }
            Exit::Ok
        }
        Err(e @ (MergeError::Write { .. } | MergeError::Publish(_))) => {
            out.error(format!("merge: {e}"));
            Exit::Write
        }
        Err(e) => {
            out.error(format!("merge refused: {e}"));
            Exit::Usage
        }
    }
}
