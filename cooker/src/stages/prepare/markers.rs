//! Markers and events: validated, given stable ids, canonicalized for
//! loops (`ludus_anim_model::events::canonicalize_events`). Contact
//! windows join as contact-start/-end markers; control events are
//! authoritative, so one that would fire twice at a time is refused
//! rather than merged.

use super::{MarkerKind, MarkerSpec, PrepareError};
use crate::clip_semantics::ContactWindow;
use ludus_anim_format::events::Event;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_model::events::canonicalize_events;
use ludus_anim_model::Decision;

pub(super) type MarkerTrack = (Vec<Event>, Vec<(u64, String, MarkerKind)>);

pub(super) fn prepare_markers(
    clip: &str,
    duration: f32,
    looping: bool,
    authored: &[MarkerSpec],
    contacts: &[ContactWindow],
    decisions: &mut Vec<Decision>,
) -> Result<MarkerTrack, PrepareError> {
    let mut markers = authored.to_vec();
    for w in contacts {
        markers.extend(contact_markers(clip, duration, looping, w)?);
    }
    snap_control_to_loop_end(clip, duration, looping, &mut markers, decisions);
    let markers = &markers[..];
    let err = |m: &MarkerSpec, what: String| PrepareError::Marker {
        clip: clip.to_string(),
        marker: m.name.clone(),
        time_s: m.time_s,
        what,
    };
    if let Some(m) = markers.first() {
        if duration <= 0.0 {
            return Err(PrepareError::EventfulZeroDuration {
                clip: clip.to_string(),
                marker: m.name.clone(),
                time_s: m.time_s,
            });
        }
    }
    let mut names: Vec<(u64, String, MarkerKind)> = Vec::new();
    let mut events = Vec::with_capacity(markers.len());
    for m in markers {
        if m.name.is_empty() {
            return Err(err(m, "a marker needs a name".into()));
        }
        if !m.time_s.is_finite() {
            return Err(err(m, "time is not finite".into()));
        }
        if m.time_s < 0.0 || m.time_s > duration {
            return Err(err(
                m,
                format!("time is outside the clip [0, {duration}] s"),
            ));
        }
        let id = fnv1a64(m.name.as_bytes());
        match names.iter().find(|(i, _, _)| *i == id) {
            Some((_, other, _)) if *other != m.name => {
                return Err(err(
                    m,
                    format!("its id {id:016x} collides with marker '{other}'; rename one"),
                ))
            }
            Some((_, _, kind)) if *kind != m.kind => {
                return Err(err(
                    m,
                    format!(
                        "marker name used as both {} and {}",
                        kind.as_str(),
                        m.kind.as_str()
                    ),
                ))
            }
            Some(_) => {}
            None => names.push((id, m.name.clone(), m.kind)),
        }
        if looping && m.time_s == duration {
            decisions.push(Decision::new(
                "marker_canonicalized",
                format!(
                    "clip '{clip}': marker '{}' at the loop end {duration} s is the loop-start marker at 0 s",
                    m.name
                ),
            ));
        }
        events.push(Event {
            time_s: m.time_s,
            id,
            reversible: m.reversible,
        });
    }
    check_control_once(clip, duration, looping, markers)?;
    canonicalize_events(&mut events, duration, looping).map_err(|e| PrepareError::Marker {
        clip: clip.to_string(),
        marker: String::new(),
        time_s: 0.0,
        what: e.to_string(),
    })?;
    Ok((events, names))
}

/// A contact window's two markers, `<name>.start` and `<name>.end`.
fn contact_markers(
    clip: &str,
    duration: f32,
    looping: bool,
    w: &ContactWindow,
) -> Result<[MarkerSpec; 2], PrepareError> {
    let err = |what: String| PrepareError::Marker {
        clip: clip.to_string(),
        marker: format!("contact {}", w.name),
        time_s: w.start_s,
        what,
    };
    let inside = |t: f32| t.is_finite() && (0.0..=duration).contains(&t);
    if w.name.is_empty() {
        return Err(err("a contact window needs a name".into()));
    }
    if !inside(w.start_s) || !inside(w.end_s) {
        return Err(err(format!(
            "window [{}, {}] s is outside the clip [0, {duration}] s",
            w.start_s, w.end_s
        )));
    }
    if w.start_s == w.end_s || (w.start_s > w.end_s && !looping) {
        return Err(err(format!(
            "window [{}, {}] s is empty or reversed (a window may cross the seam only on a looping clip)",
            w.start_s, w.end_s
        )));
    }
    let marker = |suffix: &str, time_s: f32, kind: MarkerKind| MarkerSpec {
        name: format!("{}.{suffix}", w.name),
        time_s,
        kind,
        reversible: true,
    };
    Ok([
        marker("start", w.start_s, MarkerKind::ContactStart),
        marker("end", w.end_s, MarkerKind::ContactEnd),
    ])
}

/// A control event fires once per crossing: two authored at one time
/// (after a loop's end is canonicalized to 0, its alias) are refused,
/// where a visual notify's duplicates merge.
fn check_control_once(
    clip: &str,
    duration: f32,
    looping: bool,
    markers: &[MarkerSpec],
) -> Result<(), PrepareError> {
    let canonical = |t: f32| if looping && t == duration { 0.0 } else { t };
    let control: Vec<&MarkerSpec> = markers
        .iter()
        .filter(|m| m.kind == MarkerKind::Control)
        .collect();
    for (i, m) in control.iter().enumerate() {
        let twin = control[..i]
            .iter()
            .find(|o| o.name == m.name && canonical(o.time_s) == canonical(m.time_s));
        if let Some(o) = twin {
            let alias = if o.time_s != m.time_s {
                format!(
                    " (authored at {} s and at the loop end {} s, its alias)",
                    o.time_s.min(m.time_s),
                    o.time_s.max(m.time_s)
                )
            } else {
                " (authored twice)".to_string()
            };
            return Err(PrepareError::Marker {
                clip: clip.to_string(),
                marker: m.name.clone(),
                time_s: canonical(m.time_s),
                what: format!("control event would fire twice{alias}; a control event fires once"),
            });
        }
    }
    Ok(())
}

/// How close to a loop's end a control event is taken as authored at the
/// end (and so canonicalized to the loop start): one millisecond, below
/// any tick, above what a person types for the duration (1.3333).
const CONTROL_LOOP_END_SNAP_S: f32 = 1e-3;

/// A control event's cycle identity must be unambiguous: on a looping clip
/// one within [`CONTROL_LOOP_END_SNAP_S`] of the end is moved to the end,
/// which canonicalization then makes the loop-start event at 0.
fn snap_control_to_loop_end(
    clip: &str,
    duration: f32,
    looping: bool,
    markers: &mut [MarkerSpec],
    decisions: &mut Vec<Decision>,
) {
    if !looping {
        return;
    }
    for m in markers.iter_mut().filter(|m| m.kind == MarkerKind::Control) {
        let gap = duration - m.time_s;
        if gap > 0.0 && gap <= CONTROL_LOOP_END_SNAP_S {
            decisions.push(Decision::new(
                "control_event_snapped",
                format!(
                    "clip '{clip}': control event '{}' at {} s is within 1 ms of the loop end {duration} s: taken as the loop-start event at 0 s",
                    m.name, m.time_s
                ),
            ));
            m.time_s = duration;
        }
    }
}
