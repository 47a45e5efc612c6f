//! `ludus-anim report`: the dashboard page and the text summary of one or
//! more cooks, optionally against a baseline, as a CI gate.

use super::output::Output;
use super::Exit;
use crate::cli::output::out;
use clap::Args;
use ludus_anim_cooker::manifest::{Manifest, FILE_NAME};
use std::path::PathBuf;

#[derive(Args)]
pub struct ReportArgs {
    /// Cook output directories (or their report.json files); several give
    /// the profile trade-off (e.g. one per profile).
    #[arg(required = true)]
    outs: Vec<PathBuf>,
    /// The earlier cook to compare with (an output directory or a
    /// report.json).
    #[arg(long)]
    baseline: Option<PathBuf>,
    /// Where to write the page (default: report.html beside the first
    /// report.json).
    #[arg(long)]
    html: Option<PathBuf>,
    /// Exit 1 when a regression rule fires (rules: the manifest's
    /// [report.regressions], else the documented defaults).
    #[arg(long)]
    fail_on_regression: bool,
    /// The summary as JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Project manifest with a [report] table (default: ./ludus-anim.toml
    /// when present).
    #[arg(long)]
    manifest: Option<PathBuf>,
}

pub fn run(a: ReportArgs, out: &Output) -> Exit {
    let manifest = a.manifest.clone().or_else(|| {
        let p = PathBuf::from(FILE_NAME);
        p.is_file().then_some(p)
    });
    let rules = match manifest.as_deref().map(Manifest::load) {
        None => Default::default(),
        Some(Ok(m)) => m.report.regressions,
        Some(Err(e)) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let args = ludus_anim_dashboard::ReportArgs {
        outs: a.outs,
        baseline: a.baseline,
        html: a.html,
        fail_on_regression: a.fail_on_regression,
        json: a.json,
        rules,
    };
    match ludus_anim_dashboard::run(&args) {
        Ok(o) => {
            out!("{}", o.stdout);
            if o.exit_code == 0 {
                Exit::Ok
            } else {
                Exit::AssetsFailed
            }
        }
        Err(e) => {
            out.error(e);
            Exit::Usage
        }
    }
}
