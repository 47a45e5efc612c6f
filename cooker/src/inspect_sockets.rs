//! `inspect`'s socket section: the package's sockets (the SOCK section),
//! and, from the cook report that wrote the package (found as for the
//! retarget records, `inspect_retarget::report_path`), each clip's error
//! at them.

use crate::report::{Report, SocketError};
use ludus_anim_runtime::package::Package;
use serde_json::{json, Value};
use std::fmt::Write;
use std::path::Path;

/// The sockets as text (nothing when the package has none).
pub fn describe(s: &mut String, p: &Package<'_>) {
    let sockets = &p.bindings().sockets;
    if sockets.is_empty() {
        return;
    }
    let sk = p.skeleton();
    let _ = writeln!(s, "sockets:        {}", sockets.len());
    for k in sockets {
        let [x, y, z] = k.translation;
        let [qx, qy, qz, qw] = k.rotation;
        let _ = writeln!(
            s,
            "  {} on {}: offset ({x:.4}, {y:.4}, {z:.4}) rotation ({qx:.4}, {qy:.4}, {qz:.4}, {qw:.4})",
            k.name,
            sk.name(k.joint as usize)
        );
    }
}

/// The sockets for `inspect --json`.
pub fn describe_json(p: &Package<'_>) -> Value {
    let sk = p.skeleton();
    p.bindings()
        .sockets
        .iter()
        .map(|k| {
            json!({
                "name": k.name,
                "joint": sk.name(k.joint as usize),
                "translation": k.translation,
                "rotation": k.rotation,
            })
        })
        .collect()
}

/// Per clip of the package (report order), its error at each socket, from
/// the cook report `report` (`None`: the report does not list the
/// package, or lists no socket error for it).
pub fn errors(package_path: &Path, report: &Path) -> Option<Vec<(String, Vec<SocketError>)>> {
    let bytes = std::fs::read(report).ok()?;
    let r: Report = serde_json::from_slice(&bytes).ok()?;
    let name = package_path.file_name()?.to_str()?;
    let wanted = format!("packages/{name}");
    let asset = r
        .assets
        .iter()
        .find(|a| a.package.as_deref() == Some(wanted.as_str()))?;
    let clips: Vec<_> = asset
        .clips
        .iter()
        .filter(|c| !c.sockets.is_empty())
        .map(|c| (c.name.clone(), c.sockets.clone()))
        .collect();
    (!clips.is_empty()).then_some(clips)
}

/// The socket errors as text.
pub fn describe_errors(clips: &[(String, Vec<SocketError>)]) -> String {
    let mut s = String::from("socket error (from the cook report):\n");
    for (clip, errors) in clips {
        for e in errors {
            let _ = writeln!(
                s,
                "  clip '{clip}' socket {} ({}): max {:.4} mm at t={:.3}s",
                e.socket,
                e.joint,
                e.max_error_m * 1000.0,
                e.worst_time_s
            );
        }
    }
    s
}

/// The socket errors for `inspect --json` (`socket_errors`).
pub fn errors_json(clips: &[(String, Vec<SocketError>)]) -> Value {
    clips
        .iter()
        .map(|(c, e)| json!({"clip": c, "sockets": e}))
        .collect()
}
