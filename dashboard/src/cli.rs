//! The `ludus-anim report` command as a function the cooker's CLI calls:
//! `report OUT... [--baseline OLD] [--html FILE] [--fail-on-regression]
//! [--json]`.
//!
//! The page is an index (`report.html`) and its detail fragments in
//! `report-details/` beside it (named `<stem>-details/` after the page):
//! a fragment already there is the same bytes (its name is its content's
//! hash) and is not written again; fragments the new index does not name
//! are removed.
//!
//! Exit codes: 0 done (regressions, if any, are printed); 1 regressions
//! found with `fail_on_regression`; an `Err` is the caller's exit code 2
//! with the error's one line.

use crate::error::DashboardError;
use crate::html::preview::{left_out, render_previews};
use crate::html::site::{render_site, Site};
use crate::html::HtmlOptions;
use crate::input::{load_cook, report_path};
use crate::model::Dashboard;
use crate::text::{render_json, render_text};
use ludus_anim_report::rules::RegressionRules;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The command's arguments (the `[report]` manifest table gives `rules`).
#[derive(Clone, Debug, Default)]
pub struct ReportArgs {
    /// Cooks to report on: output directories or `report.json` files.
    pub outs: Vec<PathBuf>,
    /// The cook to compare with: an output directory or a `report.json`.
    pub baseline: Option<PathBuf>,
    /// Where to write the page; default `report.html` beside the first
    /// cook's `report.json`.
    pub html: Option<PathBuf>,
    pub fail_on_regression: bool,
    /// Print the summary as JSON instead of text.
    pub json: bool,
    pub rules: RegressionRules,
}

/// What the command printed and how it should exit.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub stdout: String,
    pub exit_code: i32,
    pub html: PathBuf,
    pub regressions: usize,
    /// Detail fragments written, and those already there (unchanged).
    pub fragments_written: usize,
    pub fragments_kept: usize,
}

/// Load, compare, write the page, and summarize.
pub fn run(args: &ReportArgs) -> Result<Outcome, DashboardError> {
    let first = args.outs.first().ok_or(DashboardError::NoInput)?;
    let cooks = args
        .outs
        .iter()
        .map(|p| load_cook(p))
        .collect::<Result<Vec<_>, _>>()?;
    let baseline = args.baseline.as_deref().map(load_cook).transpose()?;
    let d = Dashboard::new(cooks, baseline, args.rules.clone());
    let html_path = match &args.html {
        Some(p) => p.clone(),
        None => default_html(first)?,
    };
    let dir = details_dir(&html_path);
    let site = render_site(&d, &HtmlOptions::default(), &dir);
    let (fragments_written, fragments_kept) = write_site(&html_path, &site)?;
    let mut stdout = if args.json {
        render_json(&d)
    } else {
        render_text(&d)
    };
    if !args.json {
        stdout.push_str(&format!("\nDashboard: {}\n", html_path.display()));
    }
    let regressions = d.regressions().len();
    let exit_code = i32::from(args.fail_on_regression && regressions > 0);
    Ok(Outcome {
        stdout,
        exit_code,
        html: html_path,
        regressions,
        fragments_written,
        fragments_kept,
    })
}

/// What `retarget preview` wrote.
#[derive(Clone, Debug)]
pub struct PreviewOutcome {
    pub dir: PathBuf,
    /// One page per retargeted clip, in the sidecar's order.
    pub pages: Vec<PathBuf>,
    /// Retargeted clips the cook left without poses (no page).
    pub left_out: usize,
}

/// The folder `retarget preview` writes to by default: beside the cook's
/// `report.json`.
pub const PREVIEW_DIR: &str = "retarget-preview";

/// Write one self-contained preview page per retargeted clip of the cook
/// at `out` (an output directory or its `report.json`) into `dir`
/// (default `retarget-preview/` beside the report). Each page is written
/// atomically; a cook without a sidecar, or without a retargeted clip
/// that has poses, is an error naming the file.
pub fn write_previews(out: &Path, dir: Option<&Path>) -> Result<PreviewOutcome, DashboardError> {
    let report = report_path(out)?;
    let cook = load_cook(out)?;
    let side = report.with_file_name(ludus_anim_report::sidecar::SIDECAR_FILE);
    let Some(sidecar) = &cook.sidecar else {
        let why = if cook.notices.is_empty() {
            String::new()
        } else {
            format!(": {}", cook.notices.join("; "))
        };
        return Err(DashboardError::NoSidecar { path: side, why });
    };
    let pages = render_previews(sidecar);
    let left = left_out(sidecar);
    if pages.is_empty() {
        let why = if left > 0 {
            format!("its {left} retargeted clip(s) have no sampled poses (the sidecar would have passed sidecar_max_mb)")
        } else {
            let failed: Vec<&str> = cook
                .report
                .assets
                .iter()
                .filter(|a| a.status == ludus_anim_report::AssetStatus::Failed)
                .map(|a| a.source.as_str())
                .collect();
            if failed.is_empty() {
                "the cook has no retargeted clip (cook with --retarget PROFILE)".to_string()
            } else {
                format!(
                    "the cook has no retargeted clip; {} asset(s) failed ({}): see report.json, or set `[budgets] on_breach = \"warn\"` in the retarget profile to get a package to look at",
                    failed.len(),
                    failed.join(", ")
                )
            }
        };
        return Err(DashboardError::NoRetargetedClip { path: side, why });
    }
    let dir = match dir {
        Some(d) => d.to_path_buf(),
        None => report.with_file_name(PREVIEW_DIR),
    };
    std::fs::create_dir_all(&dir).map_err(|source| DashboardError::Write {
        path: dir.clone(),
        source,
    })?;
    let mut written = Vec::with_capacity(pages.len());
    for p in &pages {
        let path = dir.join(&p.name);
        write_atomic(&path, p.html.as_bytes())?;
        written.push(path);
    }
    Ok(PreviewOutcome {
        dir,
        pages: written,
        left_out: left,
    })
}

/// `report.html` → `report-details`: the fragments' folder, beside it.
fn details_dir(html: &Path) -> String {
    let stem = html
        .file_stem()
        .map_or_else(|| "report".into(), |s| s.to_string_lossy().into_owned());
    format!("{stem}-details")
}

/// A fragment file name this writer makes: 16 hex digits and `.js`.
fn is_fragment_name(name: &str) -> bool {
    name.strip_suffix(".js")
        .is_some_and(|h| h.len() == 16 && h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Fragments first (new ones only), then the index, then stale
/// fragments removed: (written, kept).
fn write_site(html: &Path, site: &Site) -> Result<(usize, usize), DashboardError> {
    let dir = html.with_file_name(&site.dir);
    std::fs::create_dir_all(&dir).map_err(|source| DashboardError::Write {
        path: dir.clone(),
        source,
    })?;
    let (mut written, mut kept) = (0, 0);
    for f in &site.fragments {
        let path = dir.join(&f.name);
        if std::fs::metadata(&path).is_ok_and(|m| m.len() == f.bytes.len() as u64) {
            kept += 1;
            continue;
        }
        write_atomic(&path, &f.bytes)?;
        written += 1;
    }
    write_atomic(html, site.index.as_bytes())?;
    let names: std::collections::BTreeSet<&str> =
        site.fragments.iter().map(|f| f.name.as_str()).collect();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Ok((written, kept));
    };
    for e in entries.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if is_fragment_name(&name) && !names.contains(name.as_str()) {
            // A stale fragment left behind costs disk only: not an error.
            let _ = std::fs::remove_file(e.path());
        }
    }
    Ok((written, kept))
}

fn default_html(first: &Path) -> Result<PathBuf, DashboardError> {
    let report = report_path(first)?;
    Ok(report.with_file_name("report.html"))
}

/// Write through a temporary file in the same directory, then rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), DashboardError> {
    let err = |source| DashboardError::Write {
        path: path.to_path_buf(),
        source,
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = path.with_file_name(format!(".{name}.{}.tmp", std::process::id()));
    let mut f = std::fs::File::create(&tmp).map_err(err)?;
    f.write_all(bytes).and_then(|_| f.sync_all()).map_err(err)?;
    drop(f);
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        err(e)
    })
}
