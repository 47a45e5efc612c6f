//! Properties of `events::crossed_events` against an exact integer oracle
//! (a unit test module: the crossing query is public only through
//! `Clip::crossed_events`).
//!
//! All generated times live on a dyadic grid (events and durations on
//! 1/64 s, playback times on 1/128 s), so every f32/f64 value involved is
//! exact and the oracle can decide membership with integer arithmetic.

use super::{crossed_events, Crossing, Direction, EventTrack, Overflow, PlaybackLatch};
use ludus_anim_format::events::{check_events, Event, EventTrackError};
use ludus_anim_model::events::canonicalize_events;
use proptest::prelude::*;

/// No failure persistence: the regression file would land outside the
/// files this suite owns.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Event and duration grid (units per second).
const EV_UNITS: i64 = 64;
/// Playback time grid (half an event unit).
const T_UNITS: i64 = 128;

fn sec_ev(u: i64) -> f32 {
    u as f32 / EV_UNITS as f32
}
fn sec_t(u: i64) -> f64 {
    u as f64 / T_UNITS as f64
}

/// (event id, cycle, direction) — the caller-visible identity, plus time.
type Key = (u64, i64, f32, Direction);

fn keys(c: &[Crossing]) -> Vec<Key> {
    c.iter()
        .map(|c| (c.event_id, c.cycle, c.time_s, c.direction))
        .collect()
}

/// Integer oracle. `dur_u` and event times in EV units; `old_t`, `new_t`
/// in T units. Looping: every cycle, forward (old, new] ascending,
/// reverse [new, old) descending, reversible only.
fn oracle_loop(events: &[Event], dur_u: i64, old_t: i64, new_t: i64) -> Vec<Key> {
    let d2 = dur_u * 2; // duration in T units
    let forward = new_t > old_t;
    let (lo, hi) = if forward {
        (old_t, new_t)
    } else {
        (new_t, old_t)
    };
    let mut found: Vec<(i64, u64, i64, f32)> = Vec::new();
    let k0 = lo.div_euclid(d2) - 1;
    let k1 = hi.div_euclid(d2) + 1;
    for k in k0..=k1 {
        for e in events {
            if !forward && !e.reversible {
                continue;
            }
            let et = (e.time_s * EV_UNITS as f32) as i64 * 2 + k * d2;
            let inside = if forward {
                lo < et && et <= hi
            } else {
                lo <= et && et < hi
            };
            if inside {
                found.push((et, e.id, k, e.time_s));
            }
        }
    }
    found.sort_by_key(|a| (a.0, a.1));
    if !forward {
        found.reverse();
    }
    let dir = if forward {
        Direction::Forward
    } else {
        Direction::Reverse
    };
    found
        .into_iter()
        .map(|(_, id, k, t)| (id, k, t, dir))
        .collect()
}

fn run(track: &EventTrack<'_>, old: f64, new: f64, latch: &mut PlaybackLatch) -> Vec<Crossing> {
    let mut buf = vec![Crossing::default(); 4096];
    let n = crossed_events(track, old, new, latch, &mut buf).expect("buffer large enough");
    buf.truncate(n);
    buf
}

/// Random authored events on the 1/64 s grid, including the endpoints.
fn arb_events(dur_u: i64) -> impl Strategy<Value = Vec<Event>> {
    let time = prop_oneof![
        2 => Just(0i64),
        2 => Just(dur_u),
        6 => 0..=dur_u,
    ];
    prop::collection::vec((time, 0u64..6, any::<bool>()), 0..8).prop_map(|v| {
        v.into_iter()
            .map(|(t, id, reversible)| Event {
                time_s: sec_ev(t),
                id,
                reversible,
            })
            .collect()
    })
}

fn arb_track() -> impl Strategy<Value = (i64, bool, Vec<Event>)> {
    (8i64..=128, any::<bool>()).prop_flat_map(|(dur_u, looping)| {
        arb_events(dur_u).prop_map(move |mut ev| {
            canonicalize_events(&mut ev, sec_ev(dur_u), looping).expect("canonicalizable");
            (dur_u, looping, ev)
        })
    })
}

/// A playback time in T units; half the time snapped to an event unit so
/// update endpoints land exactly on event times.
fn arb_time(dur_u: i64) -> impl Strategy<Value = i64> {
    let span = dur_u * 2 * 6;
    prop_oneof![(-span..=span), (-span / 2..=span / 2).prop_map(|u| u * 2),]
}

proptest! {
    #![proptest_config(config(512))]

    /// Looping tracks: forward and reverse updates over any number of
    /// cycles match the integer oracle exactly (ids, cycles, order).
    #[test]
    fn looping_matches_oracle(
        (dur_u, ev, old_t, new_t) in arb_track()
            .prop_filter("looping", |t| t.1)
            .prop_flat_map(|(d, _, ev)| (Just(d), Just(ev), arb_time(d), arb_time(d)))
    ) {
        let track = EventTrack::new(&ev, sec_ev(dur_u), true).unwrap();
        let got = run(&track, sec_t(old_t), sec_t(new_t), &mut PlaybackLatch::default());
        prop_assert_eq!(keys(&got), oracle_loop(&ev, dur_u, old_t, new_t));
        for c in &got {
            prop_assert_eq!(ev[c.index as usize].id, c.event_id);
        }
    }

    /// Splitting an update into many small same-direction updates yields
    /// exactly the crossings of the single big update (looping and
    /// nonlooping, forward and reverse).
    #[test]
    fn split_updates_equal_one_update(
        (dur_u, looping, ev, start, steps, reverse) in arb_track().prop_flat_map(|(d, l, ev)| {
            (Just(d), Just(l), Just(ev), arb_time(d),
             prop::collection::vec(0i64..=3 * d, 1..24), any::<bool>())
        })
    ) {
        let track = EventTrack::new(&ev, sec_ev(dur_u), looping).unwrap();
        let sign = if reverse { -1 } else { 1 };
        let end = start + sign * steps.iter().sum::<i64>();
        let whole = run(&track, sec_t(start), sec_t(end), &mut PlaybackLatch::default());

        let mut latch = PlaybackLatch::default();
        let mut pieces = Vec::new();
        let mut t = start;
        for s in &steps {
            let next = t + sign * s;
            pieces.extend(run(&track, sec_t(t), sec_t(next), &mut latch));
            t = next;
        }
        prop_assert_eq!(keys(&pieces), keys(&whole));
    }

    /// Too-small output: `Err(Overflow { needed })` with the exact count,
    /// output slice and latch untouched; retrying with room succeeds with
    /// the same result.
    #[test]
    fn overflow_reports_needed_and_writes_nothing(
        (dur_u, looping, ev, old_t, new_t, cap) in arb_track().prop_flat_map(|(d, l, ev)| {
            (Just(d), Just(l), Just(ev), arb_time(d), arb_time(d), 0usize..6)
        })
    ) {
        let track = EventTrack::new(&ev, sec_ev(dur_u), looping).unwrap();
        let mut ref_latch = PlaybackLatch::default();
        let reference = run(&track, sec_t(old_t), sec_t(new_t), &mut ref_latch);

        let sentinel = Crossing { event_id: u64::MAX, index: 7, time_s: -1.0, cycle: -99,
                                  direction: Direction::Reverse };
        let mut small = vec![sentinel; cap];
        let mut latch = PlaybackLatch::default();
        let before = latch;
        match crossed_events(&track, sec_t(old_t), sec_t(new_t), &mut latch, &mut small) {
            Ok(n) => {
                prop_assert!(reference.len() <= cap);
                prop_assert_eq!(keys(&small[..n]), keys(&reference));
                prop_assert_eq!(latch, ref_latch);
            }
            Err(Overflow { needed }) => {
                prop_assert!(reference.len() > cap);
                prop_assert_eq!(needed, reference.len());
                prop_assert!(small.iter().all(|c| *c == sentinel));
                prop_assert_eq!(latch, before);
                let mut room = vec![Crossing::default(); needed];
                let n = crossed_events(&track, sec_t(old_t), sec_t(new_t), &mut latch, &mut room)
                    .unwrap();
                prop_assert_eq!(keys(&room[..n]), keys(&reference));
            }
        }
    }

    /// Nonlooping: times clamp; forward (old, new], reverse [new, old)
    /// reversible-only; the endpoint event fires once however far and
    /// however often updates push past the end; completion latches once.
    #[test]
    fn nonlooping_endpoint_fires_once(
        (dur_u, ev, steps) in arb_track()
            .prop_filter("nonlooping", |t| !t.1)
            .prop_flat_map(|(d, _, ev)| {
                (Just(d), Just(ev), prop::collection::vec(0i64..=2 * d, 1..30))
            })
    ) {
        let d = sec_ev(dur_u);
        let track = EventTrack::new(&ev, d, false).unwrap();
        let mut latch = PlaybackLatch::default();
        let mut all = Vec::new();
        let mut completions = 0;
        let mut t = 0i64;
        for s in &steps {
            let next = t + s;
            all.extend(run(&track, sec_t(t), sec_t(next), &mut latch));
            completions += latch.newly_completed() as u32;
            // Replaying the same update (a caller bug) must not re-fire the
            // endpoint nor re-latch completion.
            if next * EV_UNITS >= dur_u * T_UNITS {
                let again = run(&track, sec_t(t), sec_t(next), &mut latch);
                prop_assert!(again.iter().all(|c| c.time_s != d));
                prop_assert!(!latch.newly_completed());
            }
            t = next;
        }
        // Make sure the end was reached, then keep pushing past it.
        let next = t + 2 * dur_u * 2;
        all.extend(run(&track, sec_t(t), sec_t(next), &mut latch));
        completions += latch.newly_completed() as u32;
        t = next;
        for _ in 0..3 {
            let next = t + dur_u;
            prop_assert!(run(&track, sec_t(t), sec_t(next), &mut latch).is_empty());
            completions += latch.newly_completed() as u32;
            t = next;
        }
        let end_events = ev.iter().filter(|e| e.time_s == d).count();
        prop_assert_eq!(all.iter().filter(|c| c.time_s == d).count(), end_events);
        prop_assert_eq!(completions, 1);
        // Every non-start event fired exactly once, in authored order,
        // cycle 0; a marker at 0 is the activation start and never fires
        // forward.
        let expect: Vec<u64> = ev.iter().filter(|e| e.time_s > 0.0).map(|e| e.id).collect();
        let got: Vec<u64> = all.iter().map(|c| c.event_id).collect();
        prop_assert_eq!(got, expect);
        prop_assert!(all.iter().all(|c| c.cycle == 0 && c.direction == Direction::Forward));
    }
}

fn ev(time_s: f32, id: u64, reversible: bool) -> Event {
    Event {
        time_s,
        id,
        reversible,
    }
}

#[test]
fn multiple_wraps_split_into_ordered_cycles() {
    // 1 s loop, events at 0 (loop start), 0.25, 0.75. 0.3 -> 5.7 cycles.
    let events = [ev(0.0, 1, false), ev(0.25, 2, false), ev(0.75, 3, false)];
    let track = EventTrack::new(&events, 1.0, true).unwrap();
    let got = run(&track, 0.3, 5.7, &mut PlaybackLatch::default());
    let mut expect = vec![(3, 0)];
    for k in 1..=5 {
        expect.extend([(1, k), (2, k), (3, k)]);
    }
    expect.pop(); // 5.75 is beyond 5.7
    let got: Vec<(u64, i64)> = got.iter().map(|c| (c.event_id, c.cycle)).collect();
    assert_eq!(got, expect);
}

#[test]
fn endpoints_exactly_on_event_times() {
    let events = [ev(0.25, 1, true), ev(0.5, 2, true)];
    let track = EventTrack::new(&events, 1.0, true).unwrap();
    let ids = |v: Vec<Crossing>| v.iter().map(|c| c.event_id).collect::<Vec<_>>();
    let mut l = PlaybackLatch::default();
    // Forward includes new, excludes old.
    assert_eq!(ids(run(&track, 0.25, 0.5, &mut l)), vec![2]);
    // Reverse includes new, excludes old.
    assert_eq!(ids(run(&track, 0.5, 0.25, &mut l)), vec![1]);
    // Reverse only delivers reversible events.
    let events = [ev(0.25, 1, false), ev(0.5, 2, true)];
    let track = EventTrack::new(&events, 1.0, true).unwrap();
    assert_eq!(ids(run(&track, 0.9, 0.1, &mut l)), vec![2]);
}

#[test]
fn loop_start_marker_uses_new_cycle_and_fires_once_per_cycle() {
    // Authored with both aliases of the same marker: at 0 and at duration.
    let mut events = vec![ev(1.5, 9, true), ev(0.0, 9, false), ev(0.7, 4, false)];
    canonicalize_events(&mut events, 1.5, true).unwrap();
    assert_eq!(events, vec![ev(0.0, 9, true), ev(0.7, 4, false)]);
    let track = EventTrack::new(&events, 1.5, true).unwrap();
    let got = run(
        &track,
        0.75,
        3.0 * 1.5 + 0.75,
        &mut PlaybackLatch::default(),
    );
    let starts: Vec<i64> = got
        .iter()
        .filter(|c| c.event_id == 9)
        .map(|c| c.cycle)
        .collect();
    assert_eq!(starts, vec![1, 2, 3]);
    // Landing exactly on the wrap delivers the loop start of the new cycle.
    let got = run(&track, 1.0, 1.5, &mut PlaybackLatch::default());
    assert_eq!(
        got.iter()
            .map(|c| (c.event_id, c.cycle))
            .collect::<Vec<_>>(),
        vec![(9, 1)]
    );
    // Reverse across the same wrap: same identity (cycle 1).
    let got = run(&track, 1.6, 1.4, &mut PlaybackLatch::default());
    assert_eq!(
        got.iter()
            .map(|c| (c.event_id, c.cycle))
            .collect::<Vec<_>>(),
        vec![(9, 1)]
    );
}

#[test]
fn track_validation() {
    let e = [ev(0.5, 1, false)];
    assert_eq!(
        check_events(&e, 0.0, false).unwrap_err(),
        EventTrackError::ZeroDurationWithEvents
    );
    assert!(check_events(&[], 0.0, true).is_ok());
    let e = [ev(1.0, 1, false)];
    assert_eq!(
        check_events(&e, 1.0, true).unwrap_err(),
        EventTrackError::LoopEndAlias { index: 0 }
    );
    assert!(check_events(&e, 1.0, false).is_ok());
    let e = [ev(0.5, 2, false), ev(0.5, 1, false)];
    assert_eq!(
        check_events(&e, 1.0, false).unwrap_err(),
        EventTrackError::Unsorted { index: 1 }
    );
    let e = [ev(f32::NAN, 1, false)];
    assert_eq!(
        check_events(&e, 1.0, false).unwrap_err(),
        EventTrackError::NonFiniteTime { index: 0 }
    );
    let e = [ev(1.5, 1, false)];
    assert_eq!(
        check_events(&e, 1.0, false).unwrap_err(),
        EventTrackError::OutOfRange { index: 0 }
    );
    let mut v = vec![ev(0.5, 1, false)];
    assert_eq!(
        canonicalize_events(&mut v, 0.0, true).unwrap_err(),
        EventTrackError::ZeroDurationWithEvents
    );
}

#[test]
fn huge_update_is_refused_cheaply() {
    // A billion cycles: the counting pass answers without iterating them.
    let events = [ev(0.0, 1, false), ev(0.5, 2, false)];
    let track = EventTrack::new(&events, 1.0, true).unwrap();
    let mut out = [Crossing::default(); 8];
    let err =
        crossed_events(&track, 0.0, 1e9, &mut PlaybackLatch::default(), &mut out).unwrap_err();
    assert_eq!(err.needed, 2_000_000_000);
    // Non-finite input delivers nothing.
    assert_eq!(
        crossed_events(
            &track,
            0.0,
            f64::NAN,
            &mut PlaybackLatch::default(),
            &mut out
        ),
        Ok(0)
    );
}

#[test]
fn nonlooping_reverse_start_event_latches() {
    let events = [ev(0.0, 1, true), ev(0.5, 2, true), ev(1.0, 3, true)];
    let track = EventTrack::new(&events, 1.0, false).unwrap();
    let mut l = PlaybackLatch::default();
    let ids = |v: Vec<Crossing>| v.iter().map(|c| c.event_id).collect::<Vec<_>>();
    assert_eq!(ids(run(&track, 1.0, -0.5, &mut l)), vec![2, 1]);
    assert!(l.newly_completed() && l.start_fired);
    assert_eq!(ids(run(&track, 0.2, -0.5, &mut l)), Vec::<u64>::new());
    assert!(!l.newly_completed());
    // Forward to the end: the endpoint fires once, completion already latched.
    assert_eq!(ids(run(&track, -0.5, 2.0, &mut l)), vec![2, 3]);
    assert!(!l.newly_completed());
    assert_eq!(ids(run(&track, 0.9, 2.0, &mut l)), Vec::<u64>::new());
}
