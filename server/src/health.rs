//! What is wrong right now, for `/status`, `/assets` and the `health`
//! event: a project error (the manifest is missing, unreadable or invalid:
//! the last good generation is still served) and, per asset, a change that
//! was not applied (its cook failed, its source vanished, or the
//! generation holding it could not be written), with the diagnostic.

use ludus_anim_cooker::report::ReportDiagnostic;
use serde::Serialize;
use std::collections::BTreeMap;

/// One problem, from when it was first seen.
#[derive(Clone, Debug, Serialize)]
pub struct Problem {
    /// `manifest_missing`, `manifest_invalid`, `inputs_missing` (project); `cook_failed`,
    /// `source_missing`, `publish_failed` (asset).
    pub cause: &'static str,
    pub message: String,
    pub since_unix_ms: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub diagnostics: Vec<ReportDiagnostic>,
}

impl Problem {
    /// The same problem (ignoring when it was first seen).
    pub fn same(&self, other: &Problem) -> bool {
        self.cause == other.cause
            && self.message == other.message
            && self.diagnostics == other.diagnostics
    }
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct Health {
    /// The project cannot be resolved; the last good generation is served.
    pub project_error: Option<Problem>,
    /// Asset name → why its latest change is not what is served.
    pub not_applied: BTreeMap<String, Problem>,
}

impl Health {
    pub fn ok(&self) -> bool {
        self.project_error.is_none() && self.not_applied.is_empty()
    }
}
