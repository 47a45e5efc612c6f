//! `ludus-anim merge` over `cook-asset` output directories
//! (`ludus_anim_cooker::fragment_merge`).

use super::output::Output;
use super::Exit;
use crate::cli::output::outln;
use ludus_anim_cooker::fragment_merge::{merge_fragments, order_from_query, FragmentError};
use ludus_anim_cooker::hermetic;
use std::path::{Path, PathBuf};

pub fn run(dirs: &[PathBuf], target: Option<&Path>, order: Option<&Path>, out: &Output) -> Exit {
    if let Some(d) = dirs.iter().find(|d| !hermetic::is_fragment_dir(d)) {
        out.error(format!(
            "merge: {} is not a `cook-asset` output directory (no {}); shards and asset fragments are merged separately",
            d.display(),
            hermetic::REPORT_FRAGMENT
        ));
        return Exit::Usage;
    }
    let Some(target) = target else {
        out.error("merge: --out DIR is needed for `cook-asset` output directories");
        return Exit::Usage;
    };
    let order = match order.map(order_from_query).transpose() {
        Ok(o) => o,
        Err(e) => {
            out.error(format!("merge refused: {e}"));
            return Exit::Usage;
        }
    };
    match merge_fragments(dirs, order.as_deref(), target) {
        Ok(m) => {
            for n in &m.notices {
                out.note(n);
            }
            if !out.quiet {
                outln!(
                    "merged {} asset fragments: {} assets ({} failed), {} packages -> {}, {}",
                    m.fragments,
                    m.report.totals.assets,
                    m.report.totals.assets_failed,
                    m.manifest.assets.len(),
                    target.join("manifest.json").display(),
                    target.join("report.json").display()
                );
            }
            Exit::Ok
        }
        Err(e @ (FragmentError::Write { .. } | FragmentError::Publish(_))) => {
            out.error(format!("merge: {e}"));
            Exit::Write
        }
        Err(e) => {
            out.error(format!("merge refused: {e}"));
            Exit::Usage
        }
    }
}
