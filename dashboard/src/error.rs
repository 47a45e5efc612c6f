//! Why a report could not be read or written: one line naming the file.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum DashboardError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a ludus-anim report: {message}")]
    Parse { path: PathBuf, message: String },
    #[error("no report.json in {path} (pass a cook's output directory or its report.json)")]
    NoReport { path: PathBuf },
    #[error("cannot write {path}: {source}")]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no cook to report on (pass at least one output directory)")]
    NoInput,
    #[error("no usable sidecar at {path}{why} (the preview draws the sidecar's poses: cook with the sidecar on)")]
    NoSidecar { path: PathBuf, why: String },
    #[error("{path}: no retarget preview to write: {why}")]
    NoRetargetedClip { path: PathBuf, why: String },
}
