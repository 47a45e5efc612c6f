//! Markers and events: validated, given stable ids, canonicalized for
//! loops (`ludus_anim_model::events::canonicalize_events`).

use super::{MarkerKind, MarkerSpec, PrepareError};
use ludus_anim_format::events::Event;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_model::events::canonicalize_events;
use ludus_anim_model::Decision;

pub(super) type MarkerTrack = (Vec<Event>, Vec<(u64, String, MarkerKind)>);

pub(super) fn prepare_markers(
    clip: &str,
    duration: f32,
    looping: bool,
    markers: &[MarkerSpec],
    decisions: &mut Vec<Decision>,
) -> Result<MarkerTrack, PrepareError> {
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
    canonicalize_events(&mut events, duration, looping).map_err(|e| PrepareError::Marker {
        clip: clip.to_string(),
        marker: String::new(),
        time_s: 0.0,
        what: e.to_string(),
    })?;
    Ok((events, names))
}
