//! Authored markers as a package stores them (EVNT records) and the rules
//! a clip's event track obeys. The runtime checks a package's tracks with
//! [`check_events`] at load and answers crossing queries over them; the
//! cook side's canonicalization (`ludus-anim-model`) brings authored
//! markers into the form [`check_events`] accepts.

/// An authored marker. Tracks are sorted by `time_s`, then `id`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Event {
    /// Clip-local time in seconds, in `[0, duration]` (`[0, duration)` for
    /// looping clips, after the cook side's canonicalization).
    pub time_s: f32,
    /// Author-level identity of the marker (payload lookup, dedup): the
    /// FNV-1a 64 of its name.
    pub id: u64,
    /// Whether reverse playback delivers this event.
    pub reversible: bool,
}

/// What an authored marker is for. Every kind is delivered as an event
/// crossing; the kind says who owns it (seed: "Gameplay owns damage ...
/// visual clip notifies request sound, VFX, and contact presentation").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum MarkerKind {
    /// A named contact marker for locomotion synchronization.
    SyncMarker,
    /// A visual notify (sound, VFX, presentation): advisory, delivered once
    /// per crossing, may be skipped with the pose.
    Event,
    /// A control event: authoritative, cooked into the control timeline
    /// that ticks independently of visibility.
    Control,
    /// The start of an authored contact window (a foot plant).
    ContactStart,
    /// The end of an authored contact window.
    ContactEnd,
}

impl MarkerKind {
    /// The kind's name in reports: "sync-marker", "event", "control",
    /// "contact-start" or "contact-end".
    pub fn as_str(self) -> &'static str {
        match self {
            MarkerKind::SyncMarker => "sync-marker",
            MarkerKind::Event => "event",
            MarkerKind::Control => "control",
            MarkerKind::ContactStart => "contact-start",
            MarkerKind::ContactEnd => "contact-end",
        }
    }

    /// The kind bits of an EVNT record's flags
    /// (`package::EVENT_FLAG_*`; a visual event sets none).
    pub fn flags(self) -> u32 {
        use crate::package::*;
        match self {
            MarkerKind::SyncMarker => EVENT_FLAG_SYNC_MARKER,
            MarkerKind::Event => 0,
            MarkerKind::Control => EVENT_FLAG_CONTROL,
            MarkerKind::ContactStart => EVENT_FLAG_CONTACT_START,
            MarkerKind::ContactEnd => EVENT_FLAG_CONTACT_END,
        }
    }

    /// The kind of an EVNT record's flags: at most one kind bit may be set
    /// (`None` for a combination).
    pub fn from_flags(flags: u32) -> Option<MarkerKind> {
        let bits = flags & crate::package::EVENT_FLAGS_KIND;
        [
            MarkerKind::Event,
            MarkerKind::SyncMarker,
            MarkerKind::Control,
            MarkerKind::ContactStart,
            MarkerKind::ContactEnd,
        ]
        .into_iter()
        .find(|k| k.flags() == bits)
    }
}

/// One marker of a loaded clip with its debug name and kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Marker<'a> {
    pub event: Event,
    pub name: &'a str,
    pub kind: MarkerKind,
}

/// Why an event track was refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum EventTrackError {
    BadDuration(f32),
    ZeroDurationWithEvents,
    NonFiniteTime { index: usize },
    OutOfRange { index: usize },
    LoopEndAlias { index: usize },
    Unsorted { index: usize },
    TooMany(usize),
}

impl std::fmt::Display for EventTrackError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            EventTrackError::BadDuration(d) => {
                write!(f, "clip duration {d} is not a finite non-negative number")
            }
            EventTrackError::ZeroDurationWithEvents => {
                write!(f, "a zero-duration clip cannot carry events")
            }
            EventTrackError::NonFiniteTime { index } => {
                write!(f, "event {index} has a non-finite time")
            }
            EventTrackError::OutOfRange { index } => {
                write!(f, "event {index} lies outside [0, duration]")
            }
            EventTrackError::LoopEndAlias { index } => write!(
                f,
                "event {index} sits at the duration of a looping clip (canonicalize it to 0)"
            ),
            EventTrackError::Unsorted { index } => write!(
                f,
                "event {index} is not strictly after its predecessor in (time, id) order"
            ),
            EventTrackError::TooMany(n) => write!(f, "too many events ({n})"),
        }
    }
}

impl std::error::Error for EventTrackError {}

/// Whether `events` form a valid track of a clip of `duration_s`: duration
/// finite and `>= 0`; no events on a zero-duration clip; times finite and
/// in `[0, duration]` (`[0, duration)` when looping); `(time, id)`
/// strictly increasing (so no duplicates); at most `u32::MAX` events.
pub fn check_events(
    events: &[Event],
    duration_s: f32,
    looping: bool,
) -> Result<(), EventTrackError> {
    if !duration_s.is_finite() || duration_s < 0.0 {
        return Err(EventTrackError::BadDuration(duration_s));
    }
    if events.len() > u32::MAX as usize {
        return Err(EventTrackError::TooMany(events.len()));
    }
    if duration_s == 0.0 && !events.is_empty() {
        return Err(EventTrackError::ZeroDurationWithEvents);
    }
    for (index, e) in events.iter().enumerate() {
        if !e.time_s.is_finite() {
            return Err(EventTrackError::NonFiniteTime { index });
        }
        if e.time_s < 0.0 || e.time_s > duration_s {
            return Err(EventTrackError::OutOfRange { index });
        }
        if looping && e.time_s == duration_s {
            return Err(EventTrackError::LoopEndAlias { index });
        }
        if index > 0 {
            let p = &events[index - 1];
            if !(p.time_s < e.time_s || (p.time_s == e.time_s && p.id < e.id)) {
                return Err(EventTrackError::Unsorted { index });
            }
        }
    }
    Ok(())
}
