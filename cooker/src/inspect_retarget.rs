//! What `inspect PACKAGE` says about a retargeted package. The package
//! itself holds the target skeleton (its identity is the package's) but
//! not the profile: a retarget profile is a cook input, not runtime data,
//! and `report.json` already records it per clip with its metrics. So
//! `inspect` reads the report of the cook that wrote the package: the one
//! beside it (`OUT/report.json` for `OUT/packages/NAME`) or the one given,
//! and checks that it describes these very bytes (package path and
//! skeleton identity) before showing anything.

use crate::report::{Report, RetargetReport};
use ludus_anim_retarget::ClipMetrics;
use ludus_anim_runtime::Package;
use serde_json::{json, Value};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// The retarget records of one package's clips, from a cook report.
pub struct RetargetInfo {
    pub report: PathBuf,
    /// Per clip (report order): its name and retarget record.
    pub clips: Vec<(String, RetargetReport)>,
    /// Why the report's records may not describe this package (identity
    /// mismatch), if they may not.
    pub warning: Option<String>,
}

/// The report `inspect` reads for `package_path`: `explicit`, else
/// `report.json` in the package's directory's parent, else in its
/// directory.
pub fn report_path(package_path: &Path, explicit: Option<&Path>) -> Option<PathBuf> {
    if let Some(p) = explicit {
        return Some(p.to_path_buf());
    }
    let dir = package_path.parent()?;
    [
        dir.parent().map(|d| d.join("report.json")),
        Some(dir.join("report.json")),
    ]
    .into_iter()
    .flatten()
    .find(|p| p.is_file())
}

/// The retarget records of `package` (read from `package_path`) in the
/// report, `Ok(None)` when the report lists the package without any.
pub fn find(
    package_path: &Path,
    package: &Package<'_>,
    report: &Path,
) -> Result<Option<RetargetInfo>, String> {
    let bytes = std::fs::read(report).map_err(|e| format!("cannot read: {e}"))?;
    let r: Report =
        serde_json::from_slice(&bytes).map_err(|e| format!("not a cook report: {e}"))?;
    let name = package_path
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let wanted = format!("packages/{name}");
    let asset = r
        .assets
        .iter()
        .find(|a| a.package.as_deref() == Some(wanted.as_str()))
        .ok_or_else(|| format!("lists no package '{wanted}'"))?;
    let clips: Vec<(String, RetargetReport)> = asset
        .clips
        .iter()
        .filter_map(|c| c.retarget.clone().map(|t| (c.name.clone(), t)))
        .collect();
    if clips.is_empty() {
        return Ok(None);
    }
    let have = package.skeleton().identity().to_hex();
    let warning = clips
        .iter()
        .find(|(_, t)| !t.target_identity.eq_ignore_ascii_case(&have))
        .map(|(c, t)| {
            format!(
                "clip '{c}': the report's target identity {} is not the package skeleton's {have} (the report describes another cook)",
                t.target_identity
            )
        });
    Ok(Some(RetargetInfo {
        report: report.to_path_buf(),
        clips,
        warning,
    }))
}

fn metrics(t: &RetargetReport) -> Option<ClipMetrics> {
    serde_json::from_value(t.metrics.clone()).ok()
}

/// The text `inspect` prints.
pub fn describe(info: &RetargetInfo) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "retarget (from {}):", info.report.display());
    if let Some(w) = &info.warning {
        let _ = writeln!(s, "  warning: {w}");
    }
    for (clip, t) in &info.clips {
        let hash = t.profile_hash.get(..16).unwrap_or(&t.profile_hash);
        let _ = writeln!(
            s,
            "  clip '{clip}': profile '{}' ({}, blake3 {hash}), target {} (identity {})",
            t.profile, t.profile_path, t.target, t.target_identity
        );
        let Some(m) = metrics(t) else { continue };
        for c in &m.contacts {
            let _ = writeln!(
                s,
                "    {}: contacts preserved {:.1}%, skating target {:.1}% / source {:.1}% of {} contact frames",
                c.joint,
                c.preservation * 100.0,
                c.target_skate_fraction * 100.0,
                c.source_skate_fraction * 100.0,
                c.source_contact_frames
            );
        }
        let (e, b, j) = (
            &m.end_effector_error,
            &m.bone_length_deviation_m,
            &m.max_angular_jump,
        );
        let _ = writeln!(
            s,
            "    end effector {:.4} limb lengths ({} t={:.3}s), bone length {:.6} m ({}), max jump {:.1} deg ({} t={:.3}s)",
            e.value, e.joint, e.time_s, b.value, b.joint, j.target_deg, j.joint, j.time_s
        );
    }
    s
}

/// The JSON `inspect --json` adds under `retarget`.
pub fn describe_json(info: &RetargetInfo) -> Value {
    json!({
        "report": info.report.display().to_string(),
        "warning": info.warning,
        "clips": info.clips.iter().map(|(c, t)| json!({"clip": c, "retarget": t})).collect::<Vec<_>>(),
    })
}
