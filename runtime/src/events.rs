//! Clip events: which authored markers a playback update crosses.
//!
//! A playback update is expressed in *absolute, unwrapped* clip time held in
//! `f64` (seed: "Use float64 for time accumulation"): the caller accumulates
//! `abs += rate * dt` and never wraps it. For a looping clip the cycle index
//! is `floor(abs / duration)` and the local time is `abs - cycle * duration`,
//! so a loop records crossings instead of losing them to a bare modulo.
//!
//! Semantics (seed: "Playback synchronization and events"):
//!
//! * Forward (`new > old`): every event whose absolute time `E` satisfies
//!   `old < E <= new` is delivered, on every cycle the update touches, in
//!   playback order (ascending `E`, ties by ascending event id). A wrap is
//!   therefore split into ordered per-cycle intervals.
//! * Reverse (`new < old`): only events marked `reversible`, with
//!   `new <= E < old`, in descending `E` (the exact mirror of the forward
//!   order, ties by descending id).
//! * On a looping clip an event at local time `t` of cycle `k` sits at
//!   `E = k * duration + t`. A loop-start marker (`t = 0`) of cycle `k + 1`
//!   is reached exactly when `new >= (k + 1) * duration` and carries the
//!   *new* cycle's identity `k + 1` (in both directions: it is the same
//!   point on the unwrapped timeline).
//! * Looping assets store no marker at `duration`: the cook side's
//!   `canonicalize_events` (`ludus-anim-model`) moves it to the loop-start
//!   marker at zero, so the two aliases cannot fire independently; a
//!   package with an uncanonicalized track does not load.
//! * Nonlooping clips clamp both times to `[0, duration]` (cycle is always
//!   0). Endpoint events are one-shot per activation: the caller-owned
//!   [`PlaybackLatch`] records that the event at `duration` (forward) or at
//!   `0` (reverse) fired and that the clip completed, so replays or updates
//!   that keep pushing past the end do not repeat them.
//! * The activation's start position is never crossed: a marker at exactly
//!   `old` is not delivered. State entry is a separate notification the
//!   caller raises; it is not the timestamp-zero marker.
//! * Zero-duration clips with events do not load.
//!
//! Identity: `(cycle, event_id, time_s)` is unique per crossing within one
//! activation (the track's `(time, id)` pairs are strictly increasing). The
//! caller adds its instance and activation ids, which is what lets replay
//! and filtering recognise a crossing they already handled.
//!
//! Bounds: the output is a caller-owned slice. An update whose crossings do
//! not fit returns [`Overflow`] with the exact count needed, leaves the
//! output slice and the latch untouched, and the caller must reject the
//! candidate update without advancing its cursor (retry with a larger
//! buffer or a smaller step). Work is `O(events + needed)`, so even an
//! absurdly long update costs only a counting pass before it is refused.
//!
//! Adapted conventions: half-open `(prev, cur]` notify windows, per-cycle
//! splitting on wraps and reverse-direction filtering follow Epic's Unreal
//! Engine documentation on animation notifies and sync groups; the
//! "sample at duration is the loop start" canonicalization follows ACL's
//! documentation on looping clips (the duplicated last sample of a loop).
//! What was adopted is only the interval conventions; the identity,
//! latching and overflow contract are the Ludus seed's.

use ludus_anim_format::events::{check_events, Event};

/// Direction of the traversal that produced a crossing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    Forward,
    Reverse,
}

/// One delivered event crossing.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Crossing {
    /// The event's author id.
    pub event_id: u64,
    /// The event's index in its track (payload lookup without a search).
    pub index: u32,
    /// The event's clip-local time in seconds.
    pub time_s: f32,
    /// The loop cycle the crossing belongs to (always 0 when nonlooping).
    pub cycle: i64,
    pub direction: Direction,
}

impl Default for Crossing {
    /// What a caller-owned crossing buffer is filled with before
    /// `Clip::crossed_events` writes into it.
    fn default() -> Self {
        Crossing {
            event_id: 0,
            index: 0,
            time_s: 0.0,
            cycle: 0,
            direction: Direction::Forward,
        }
    }
}

/// The output slice was too small. Nothing was written and the latch was
/// not touched; the caller must not advance its cursor for this update.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("event update needs room for {needed} crossings")]
pub struct Overflow {
    /// Exactly how many crossings the rejected update would deliver.
    pub needed: usize,
}

/// A validated view of a clip's events (the rules of
/// `ludus_anim_format::events::check_events`).
#[derive(Clone, Copy, Debug)]
pub(crate) struct EventTrack<'a> {
    events: &'a [Event],
    duration_s: f32,
    looping: bool,
}

impl<'a> EventTrack<'a> {
    /// The track of `events` on a clip of `duration_s`, if they obey the
    /// rules.
    pub(crate) fn new(events: &'a [Event], duration_s: f32, looping: bool) -> Option<Self> {
        check_events(events, duration_s, looping).ok()?;
        Some(EventTrack {
            events,
            duration_s,
            looping,
        })
    }
}

/// Caller-owned per-activation state for nonlooping clips: one-shot
/// endpoint events and the completion latch. Start each activation with
/// `PlaybackLatch::default()`; looping clips ignore it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PlaybackLatch {
    end_fired: bool,
    start_fired: bool,
    completed: bool,
    newly_completed: bool,
}

impl PlaybackLatch {
    /// The clip reached the end of its direction of travel (forward: the
    /// duration; reverse: time 0) at some point in this activation.
    pub fn completed(&self) -> bool {
        self.completed
    }
    /// The last successful [`crate::Clip::crossed_events`] call is the one that latched
    /// completion (true exactly once per activation).
    pub fn newly_completed(&self) -> bool {
        self.newly_completed
    }
}

/// Beyond this many cycles from zero an absolute time is treated as
/// invalid (the update delivers nothing): `k * duration` must stay exact
/// enough in `f64` for the crossing predicate to be monotone.
pub(crate) const MAX_ABS_CYCLES: f64 = (1u64 << 40) as f64;

/// Write the events crossed by the update `old_abs -> new_abs` into `out`
/// (the body of [`crate::Clip::crossed_events`])
/// in playback order and return how many were written (see the module
/// documentation for the exact intervals).
///
/// `latch` is the activation's state; it is only read and written for
/// nonlooping tracks, and only when the call succeeds.
///
/// On `Err(Overflow { needed })` nothing in `out` or `latch` changed; the
/// caller must not advance its cursor (the candidate update is rejected).
/// Non-finite times, `old_abs == new_abs`, and (looping) times more than
/// [`MAX_ABS_CYCLES`] cycles from zero deliver nothing. Never allocates or
/// panics.
pub(crate) fn crossed_events(
    track: &EventTrack<'_>,
    old_abs: f64,
    new_abs: f64,
    latch: &mut PlaybackLatch,
    out: &mut [Crossing],
) -> Result<usize, Overflow> {
    if !old_abs.is_finite() || !new_abs.is_finite() {
        return Ok(0);
    }
    if old_abs == new_abs {
        if !track.looping {
            latch.newly_completed = false;
        }
        return Ok(0);
    }
    if track.looping {
        looping_crossings(track, old_abs, new_abs, out)
    } else {
        once_crossings(track, old_abs, new_abs, latch, out)
    }
}

/// Absolute time of an event at local `t` in cycle `k`. Monotone
/// non-decreasing in `k` for `|k| <= MAX_ABS_CYCLES`.
#[inline]
fn abs_time(k: i64, d: f64, t: f64) -> f64 {
    k as f64 * d + t
}

/// Whether `e` lies in the update's interval: forward `(lo, hi]`, reverse
/// `[lo, hi)` with `lo < hi`.
#[inline]
fn in_interval(e: f64, lo: f64, hi: f64, forward: bool) -> bool {
    if forward {
        lo < e && e <= hi
    } else {
        lo <= e && e < hi
    }
}

/// Inclusive cycle range `[first, last]` in which the event at local `t`
/// falls inside the interval (empty if `first > last`). The initial guess
/// is within a cycle or two of the answer; the fix-up steps use the exact
/// predicate so counting and writing can never disagree.
fn cycle_range(t: f64, d: f64, lo: f64, hi: f64, forward: bool) -> (i64, i64) {
    // Lower bound: first k with E(k) past `lo`.
    let past_lo = |k: i64| {
        let e = abs_time(k, d, t);
        if forward {
            e > lo
        } else {
            e >= lo
        }
    };
    // Upper bound: last k with E(k) before `hi`.
    let before_hi = |k: i64| {
        let e = abs_time(k, d, t);
        if forward {
            e <= hi
        } else {
            e < hi
        }
    };
    let mut first = ((lo - t) / d).floor() as i64;
    for _ in 0..4 {
        if past_lo(first - 1) {
            first -= 1;
        } else {
            break;
        }
    }
    for _ in 0..4 {
        if past_lo(first) {
            break;
        }
        first += 1;
    }
    let mut last = ((hi - t) / d).floor() as i64;
    for _ in 0..4 {
        if before_hi(last + 1) {
            last += 1;
        } else {
            break;
        }
    }
    for _ in 0..4 {
        if before_hi(last) {
            break;
        }
        last -= 1;
    }
    (first, last)
}

fn looping_crossings(
    track: &EventTrack<'_>,
    old_abs: f64,
    new_abs: f64,
    out: &mut [Crossing],
) -> Result<usize, Overflow> {
    let events = track.events;
    if events.is_empty() {
        return Ok(0);
    }
    // Non-empty implies duration > 0 (validated).
    let d = track.duration_s as f64;
    if (old_abs / d).abs() > MAX_ABS_CYCLES || (new_abs / d).abs() > MAX_ABS_CYCLES {
        return Ok(0);
    }
    let forward = new_abs > old_abs;
    let (lo, hi) = if forward {
        (old_abs, new_abs)
    } else {
        (new_abs, old_abs)
    };

    // Counting pass: exact number of crossings and the touched cycle span.
    let mut needed: u64 = 0;
    let mut k_min = i64::MAX;
    let mut k_max = i64::MIN;
    for e in events {
        if !forward && !e.reversible {
            continue;
        }
        let (first, last) = cycle_range(e.time_s as f64, d, lo, hi, forward);
        if first <= last {
            needed = needed.saturating_add((last - first) as u64 + 1);
            k_min = k_min.min(first);
            k_max = k_max.max(last);
        }
    }
    let needed = usize::try_from(needed).unwrap_or(usize::MAX);
    if needed > out.len() {
        return Err(Overflow { needed });
    }
    if needed == 0 {
        return Ok(0);
    }

    // Writing pass. Every cycle strictly inside the span holds at least one
    // crossing, so this visits at most `needed + 2` cycles.
    let direction = if forward {
        Direction::Forward
    } else {
        Direction::Reverse
    };
    let mut n = 0usize;
    let mut emit = |k: i64, index: usize, e: &Event, n: &mut usize| {
        if !forward && !e.reversible {
            return;
        }
        if in_interval(abs_time(k, d, e.time_s as f64), lo, hi, forward) {
            if let Some(slot) = out.get_mut(*n) {
                *slot = Crossing {
                    event_id: e.id,
                    index: index as u32,
                    time_s: e.time_s,
                    cycle: k,
                    direction,
                };
                *n += 1;
            }
        }
    };
    if forward {
        let mut k = k_min;
        loop {
            for (i, e) in events.iter().enumerate() {
                emit(k, i, e, &mut n);
            }
            if k >= k_max {
                break;
            }
            k += 1;
        }
    } else {
        let mut k = k_max;
        loop {
            for (i, e) in events.iter().enumerate().rev() {
                emit(k, i, e, &mut n);
            }
            if k <= k_min {
                break;
            }
            k -= 1;
        }
    }
    Ok(n)
}

fn once_crossings(
    track: &EventTrack<'_>,
    old_abs: f64,
    new_abs: f64,
    latch: &mut PlaybackLatch,
    out: &mut [Crossing],
) -> Result<usize, Overflow> {
    let d = track.duration_s as f64;
    let co = old_abs.clamp(0.0, d);
    let cn = new_abs.clamp(0.0, d);
    let forward = new_abs > old_abs;
    let (lo, hi) = if forward { (co, cn) } else { (cn, co) };
    let end_local = track.duration_s;

    // An event is delivered if it lies in the clamped interval and, for an
    // endpoint event in its direction, the latch has not consumed it yet.
    let wanted = |e: &Event| -> bool {
        if forward {
            if e.time_s == end_local && latch.end_fired {
                return false;
            }
        } else {
            if !e.reversible {
                return false;
            }
            if e.time_s == 0.0 && latch.start_fired {
                return false;
            }
        }
        lo < hi && in_interval(e.time_s as f64, lo, hi, forward)
    };

    let needed = track.events.iter().filter(|e| wanted(e)).count();
    if needed > out.len() {
        return Err(Overflow { needed });
    }

    let direction = if forward {
        Direction::Forward
    } else {
        Direction::Reverse
    };
    let mut n = 0usize;
    let mut fired_end = false;
    let mut fired_start = false;
    let mut write = |i: usize, e: &Event| {
        if let Some(slot) = out.get_mut(n) {
            *slot = Crossing {
                event_id: e.id,
                index: i as u32,
                time_s: e.time_s,
                cycle: 0,
                direction,
            };
            n += 1;
            fired_end |= forward && e.time_s == end_local;
            fired_start |= !forward && e.time_s == 0.0;
        }
    };
    if forward {
        for (i, e) in track.events.iter().enumerate() {
            if wanted(e) {
                write(i, e);
            }
        }
    } else {
        for (i, e) in track.events.iter().enumerate().rev() {
            if wanted(e) {
                write(i, e);
            }
        }
    }

    // Commit the latch only now that the update is accepted.
    latch.end_fired |= fired_end;
    latch.start_fired |= fired_start;
    let reached = if forward { cn >= d } else { cn <= 0.0 };
    latch.newly_completed = reached && !latch.completed;
    latch.completed |= reached;
    Ok(n)
}

#[cfg(test)]
#[path = "events_props_tests.rs"]
mod props_tests;
