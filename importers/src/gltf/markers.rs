//! Timeline markers from `animation.extras.markers`.
//!
//! glTF 2.0 has no marker concept; this importer reads the convention
//! documented in the module doc of [`super`]:
//!
//! ```json
//! "animations": [{
//!   "name": "walk",
//!   "channels": [...], "samplers": [...],
//!   "extras": { "markers": [
//!     { "name": "foot_l", "time": 0.25, "kind": "sync" },
//!     { "name": "step_sound", "time": 0.3 }
//!   ] }
//! }]
//! ```
//!
//! `time` is in the same seconds as the animation's sampler inputs and is
//! shifted with the keys when the clip is moved to start at zero. `kind` is
//! `"sync"` or `"event"` (default `"event"`). Every malformed marker is an
//! [`ImportError`] naming the file, the clip and the marker (by name, or by
//! index when the name itself is the problem).

use super::Report;
use crate::ImportError;
use ::gltf::json;
use ludus_anim_model::source::SourceMarker;
use ludus_anim_model::MarkerKind;
use serde_json::Value;

/// Marker kinds the convention allows, by their authored names.
const KINDS: [(&str, MarkerKind); 2] = [
    ("sync", MarkerKind::SyncMarker),
    ("event", MarkerKind::Event),
];
/// Kind of a marker that does not declare one.
const DEFAULT_KIND: MarkerKind = MarkerKind::Event;
/// Slack, in seconds, for a marker on the clip's first or last key whose
/// time went through a float shift.
const RANGE_SLACK_S: f32 = 1e-4;

/// A marker as authored, before the clip's time shift.
pub(super) struct Authored {
    name: String,
    time_s: f32,
    kind: MarkerKind,
}

/// Read `anim.extras.markers`. Absent extras, extras that are not an
/// object, or an object without `markers` yield no markers (extras belong
/// to other tools too); a `markers` entry that breaks the convention is an
/// error.
pub(super) fn read(
    anim: &json::Animation,
    clip: &str,
    report: &Report,
) -> Result<Vec<Authored>, ImportError> {
    let Some(raw) = anim.extras.as_deref() else {
        return Ok(Vec::new());
    };
    let bad = |message: String| report.malformed_at("bad_marker", message, Some(clip), None);
    let extras: Value = serde_json::from_str(raw.get()).map_err(|e| {
        bad(format!(
            "clip '{clip}': animation extras are not valid JSON: {e}"
        ))
    })?;
    let Some(list) = extras.get("markers") else {
        return Ok(Vec::new());
    };
    let Some(list) = list.as_array() else {
        return Err(bad(format!(
            "clip '{clip}': extras.markers must be an array of {{name, time, kind}} objects"
        )));
    };
    let mut out = Vec::with_capacity(list.len());
    for (i, entry) in list.iter().enumerate() {
        let Some(obj) = entry.as_object() else {
            return Err(bad(format!(
                "clip '{clip}', marker {i}: must be an object {{name, time, kind}}"
            )));
        };
        let name = match obj.get("name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => {
                return Err(bad(format!(
                    "clip '{clip}', marker {i}: 'name' must be a non-empty string"
                )))
            }
        };
        let time = obj.get("time").and_then(Value::as_f64).ok_or_else(|| {
            bad(format!(
                "clip '{clip}', marker '{name}': 'time' must be a number (seconds)"
            ))
        })?;
        let time_s = time as f32;
        if !time_s.is_finite() {
            return Err(bad(format!(
                "clip '{clip}', marker '{name}': time {time} is not a finite 32-bit number of seconds"
            )));
        }
        let kind = match obj.get("kind") {
            None => DEFAULT_KIND,
            Some(Value::String(k)) if KINDS.iter().any(|(n, _)| n == k) => KINDS
                .iter()
                .find(|(n, _)| n == k)
                .map_or(DEFAULT_KIND, |(_, m)| *m),
            Some(other) => {
                return Err(bad(format!(
                    "clip '{clip}', marker '{name}': kind {other} is not \"sync\" or \"event\""
                )))
            }
        };
        out.push(Authored { name, time_s, kind });
    }
    Ok(out)
}

/// Shift authored markers by `start` (the clip's first key time, which
/// becomes zero), check each lies on the clip's span `[0, duration_s]`, and
/// sort them by time (stable, so equal times keep authored order).
pub(super) fn place(
    authored: Vec<Authored>,
    start: f32,
    duration_s: f32,
    clip: &str,
    report: &Report,
) -> Result<Vec<SourceMarker>, ImportError> {
    let mut out = Vec::with_capacity(authored.len());
    for m in authored {
        let t = m.time_s - start;
        if !(-RANGE_SLACK_S..=duration_s + RANGE_SLACK_S).contains(&t) {
            return Err(report.malformed_at(
                "bad_marker",
                format!(
                    "clip '{clip}', marker '{}': time {} s lies outside the clip's keyed span {start}..{} s",
                    m.name,
                    m.time_s,
                    start + duration_s
                ),
                Some(clip),
                None,
            ));
        }
        out.push(SourceMarker {
            name: m.name,
            time_s: t.clamp(0.0, duration_s.max(0.0)),
            kind: m.kind,
        });
    }
    out.sort_by(|a, b| a.time_s.total_cmp(&b.time_s));
    Ok(out)
}
