//! Loading a cook: `OUT/` or `OUT/report.json`, plus the sidecar beside it
//! when there is one. A missing sidecar is normal (the plots say so); an
//! unreadable one is a notice, never a failure: the summary still works.

use crate::error::DashboardError;
use ludus_anim_report::program_view::{ProgramView, VIEW_SUFFIX};
use ludus_anim_report::sidecar::{Sidecar, SIDECAR_FILE};
use ludus_anim_report::Report;
use std::path::{Path, PathBuf};

/// One cook's results.
#[derive(Clone, Debug)]
pub struct Cook {
    /// How the page and the summary name this cook (its directory).
    pub label: String,
    pub report: Report,
    pub sidecar: Option<Sidecar>,
    /// The compiled programs' views (`programs/*.view.json`, by file name).
    pub programs: Vec<ProgramView>,
    /// Problems met while loading (an unreadable sidecar or view).
    pub notices: Vec<String>,
}

impl Cook {
    /// A cook from values in memory (the asset server, tests).
    pub fn new(label: &str, report: Report, sidecar: Option<Sidecar>) -> Cook {
        Cook {
            label: label.to_string(),
            report,
            sidecar,
            programs: Vec::new(),
            notices: Vec::new(),
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, DashboardError> {
    std::fs::read(path).map_err(|source| DashboardError::Read {
        path: path.to_path_buf(),
        source,
    })
}

/// `path` is a cook's output directory or a `report.json`.
pub fn report_path(path: &Path) -> Result<PathBuf, DashboardError> {
    if path.is_dir() {
        let p = path.join("report.json");
        if p.is_file() {
            return Ok(p);
        }
        return Err(DashboardError::NoReport {
            path: path.to_path_buf(),
        });
    }
    Ok(path.to_path_buf())
}

/// Load a cook from its output directory or its `report.json`.
pub fn load_cook(path: &Path) -> Result<Cook, DashboardError> {
    let report_file = report_path(path)?;
    let bytes = read(&report_file)?;
    let report: Report = serde_json::from_slice(&bytes).map_err(|e| DashboardError::Parse {
        path: report_file.clone(),
        message: e.to_string(),
    })?;
    let dir = report_file.parent().unwrap_or(Path::new("."));
    let label = if path.is_dir() { path } else { dir };
    let mut cook = Cook::new(&label.display().to_string(), report, None);
    let side = dir.join(SIDECAR_FILE);
    if side.is_file() {
        match read(&side).map(|b| Sidecar::from_json(&b)) {
            Ok(Ok(s)) => cook.sidecar = Some(s),
            Ok(Err(e)) => cook
                .notices
                .push(format!("{}: {e}; plots left out", side.display())),
            Err(e) => cook.notices.push(format!("{e}; plots left out")),
        }
    }
    load_programs(&mut cook, &dir.join("programs"));
    Ok(cook)
}

/// The program views in `dir`, sorted by file name; an unreadable one is a
/// notice naming the file and is left out.
fn load_programs(cook: &mut Cook, dir: &Path) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut files: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(VIEW_SUFFIX))
        })
        .collect();
    files.sort();
    for f in files {
        match read(&f).map(|b| ProgramView::from_json(&b)) {
            Ok(Ok(v)) => cook.programs.push(v),
            Ok(Err(e)) => cook
                .notices
                .push(format!("{}: {e}; program left out", f.display())),
            Err(e) => cook.notices.push(format!("{e}; program left out")),
        }
    }
}
