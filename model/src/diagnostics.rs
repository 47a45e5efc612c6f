//! Diagnostics and importer decisions. A diagnostic names the file, clip,
//! joint and time it concerns wherever they apply, so a build-farm log line
//! is enough to find the problem in the source.

use serde::{Deserialize, Serialize};
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// Stable machine-readable code, e.g. `non_finite_value`.
    pub code: String,
    pub message: String,
    pub file: Option<String>,
    pub clip: Option<String>,
    pub joint: Option<String>,
    pub time_s: Option<f32>,
}

impl Diagnostic {
    pub fn new(severity: Severity, code: &str, message: impl Into<String>) -> Self {
        Diagnostic {
            severity,
            code: code.to_string(),
            message: message.into(),
            file: None,
            clip: None,
            joint: None,
            time_s: None,
        }
    }
    pub fn error(code: &str, message: impl Into<String>) -> Self {
        Self::new(Severity::Error, code, message)
    }
    pub fn warning(code: &str, message: impl Into<String>) -> Self {
        Self::new(Severity::Warning, code, message)
    }
    pub fn file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
    pub fn clip(mut self, clip: impl Into<String>) -> Self {
        self.clip = Some(clip.into());
        self
    }
    pub fn joint(mut self, joint: impl Into<String>) -> Self {
        self.joint = Some(joint.into());
        self
    }
    pub fn time(mut self, t: f32) -> Self {
        self.time_s = Some(t);
        self
    }
}

impl fmt::Display for Diagnostic {
    /// `error[code]: file 'x', clip 'y', joint 'z', t=0.5s: message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Warning => "warning",
            Severity::Error => "error",
        };
        write!(f, "{sev}[{}]: ", self.code)?;
        let mut parts = Vec::new();
        if let Some(v) = &self.file {
            parts.push(format!("file '{v}'"));
        }
        if let Some(v) = &self.clip {
            parts.push(format!("clip '{v}'"));
        }
        if let Some(v) = &self.joint {
            parts.push(format!("joint '{v}'"));
        }
        if let Some(v) = self.time_s {
            parts.push(format!("t={v:.4}s"));
        }
        if !parts.is_empty() {
            write!(f, "{}: ", parts.join(", "))?;
        }
        write!(f, "{}", self.message)
    }
}

/// A list of diagnostics with helpers; errors stop the asset, warnings go
/// to the report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }
    pub fn has_errors(&self) -> bool {
        self.0.iter().any(|d| d.severity == Severity::Error)
    }
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.severity == Severity::Error)
    }
    pub fn warnings(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter().filter(|d| d.severity == Severity::Warning)
    }
    pub fn extend(&mut self, other: Diagnostics) {
        self.0.extend(other.0);
    }
}

/// Something an importer or stage chose on the user's behalf (root joint,
/// skipped nodes, renamed duplicates, units assumed). Recorded in the
/// report so nothing happens silently.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// Stable machine-readable kind, e.g. `synthetic_root`, `skipped_node`.
    pub kind: String,
    pub detail: String,
}

impl Decision {
    pub fn new(kind: &str, detail: impl Into<String>) -> Self {
        Decision {
            kind: kind.to_string(),
            detail: detail.into(),
        }
    }
}
