//! The cook's JSON outputs. Their types live in `ludus-anim-report` (serde
//! only, for dashboards and CI); this module converts the pipeline's
//! diagnostics and decisions into them and measures the process.

pub use ludus_anim_report::*;

/// A model diagnostic as the report shows it.
pub fn diagnostic(d: &ludus_anim_model::Diagnostic) -> ReportDiagnostic {
    ReportDiagnostic {
        severity: match d.severity {
            ludus_anim_model::Severity::Warning => Severity::Warning,
            ludus_anim_model::Severity::Error => Severity::Error,
        },
        code: d.code.clone(),
        message: d.message.clone(),
        file: d.file.clone(),
        clip: d.clip.clone(),
        joint: d.joint.clone(),
        time_s: d.time_s,
    }
}

/// A model decision as the report shows it.
pub fn decision(d: &ludus_anim_model::Decision) -> Decision {
    Decision {
        kind: d.kind.clone(),
        detail: d.detail.clone(),
    }
}

/// `VmHWM` of this process from `/proc/self/status`, in MiB (0 where the
/// platform has no such file).
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(0.0)
}
