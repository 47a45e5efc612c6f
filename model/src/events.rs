//! Event canonicalization, cook side: authored markers brought into the
//! form `ludus_anim_format::events::check_events` accepts (what the runtime
//! loads).

use ludus_anim_format::events::{check_events, Event, EventTrackError};

/// Bring authored events into the form [`check_events`]
/// accepts. On a looping clip a marker at `duration` becomes the loop-start
/// marker at 0 (seed: loop assets canonicalize the alias). `-0.0` becomes
/// `0.0`. Events are sorted by `(time, id)`; entries that then share both
/// time and id are the same marker and are merged (`reversible` is OR-ed).
/// Finally the result is validated. Times must match `duration` exactly to
/// be treated as the alias; snapping authored times is the caller's policy.
pub fn canonicalize_events(
    events: &mut Vec<Event>,
    duration_s: f32,
    looping: bool,
) -> Result<(), EventTrackError> {
    for e in events.iter_mut() {
        if e.time_s == 0.0 {
            e.time_s = 0.0; // drops the sign of -0.0
        }
        if looping && duration_s > 0.0 && e.time_s == duration_s {
            e.time_s = 0.0;
        }
    }
    events.sort_by(|a, b| a.time_s.total_cmp(&b.time_s).then(a.id.cmp(&b.id)));
    events.dedup_by(|later, kept| {
        let same = later.time_s == kept.time_s && later.id == kept.id;
        if same {
            kept.reversible |= later.reversible;
        }
        same
    });
    check_events(events, duration_s, looping)
}
