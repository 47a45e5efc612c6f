//! A clip's sync-group memberships checked against its marker track: every
//! group marker present as a sync marker, met in the group's cyclic order
//! (seed: "Validate ordering, marker compatibility, and acceptable rate
//! ranges"), and the length of each marker interval for the group's rate
//! range (computed over the members at package time).

use super::{MarkerKind, PrepareError};
use crate::clip_semantics::SyncMembership;
use ludus_anim_format::events::Event;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_format::timing::LoopMode;
use ludus_anim_model::suggest::near_matches;
use ludus_anim_model::ResampledClip;
use serde::{Deserialize, Serialize};

/// One validated membership.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreparedSync {
    pub group: String,
    /// The group's markers in cycle order.
    pub markers: Vec<String>,
    pub max_rate: f32,
    /// Per interval `markers[k] -> markers[k + 1]` (cyclically): its mean
    /// length in this clip (seconds), or `None` if the clip never plays
    /// it (a one-shot clip's last interval).
    pub intervals_s: Vec<Option<f32>>,
}

/// Check every membership of the clip; `events` are in canonical order.
pub(super) fn check_sync(
    clip: &str,
    grid: &ResampledClip,
    events: &[Event],
    names: &[(u64, String, MarkerKind)],
    memberships: &[SyncMembership],
) -> Result<Vec<PreparedSync>, PrepareError> {
    let looping = grid.loop_mode != LoopMode::Once;
    memberships
        .iter()
        .map(|m| check_one(clip, grid.duration_s, looping, events, names, m))
        .collect()
}

fn check_one(
    clip: &str,
    duration: f32,
    looping: bool,
    events: &[Event],
    names: &[(u64, String, MarkerKind)],
    m: &SyncMembership,
) -> Result<PreparedSync, PrepareError> {
    let err = |what: String| PrepareError::Sync {
        clip: clip.to_string(),
        group: m.group.clone(),
        what,
    };
    let ids: Vec<u64> = m.markers.iter().map(|n| fnv1a64(n.as_bytes())).collect();
    for (marker, id) in m.markers.iter().zip(&ids) {
        match names.iter().find(|(i, _, _)| i == id) {
            None => return Err(err(missing(marker, names))),
            Some((_, _, kind)) if *kind != MarkerKind::SyncMarker => {
                return Err(err(format!(
                    "marker '{marker}' has kind '{}'; a group needs sync markers (kind = \"sync\")",
                    kind.as_str()
                )))
            }
            Some(_) => {}
        }
    }
    // The group's markers in time order, as (position in the cycle, time).
    let seq: Vec<(usize, f32)> = events
        .iter()
        .filter_map(|e| Some((ids.iter().position(|i| *i == e.id)?, e.time_s)))
        .collect();
    let n = ids.len();
    let mut sums = vec![(0.0f32, 0u32); n];
    let pairs = seq.len() - usize::from(!looping);
    for j in 0..pairs {
        let (a, ta) = seq[j];
        let (b, tb) = seq[(j + 1) % seq.len()];
        if b != (a + 1) % n {
            return Err(err(format!(
                "marker '{}' at t={tb} s follows '{}' at t={ta} s; the group's cyclic order is {}",
                m.markers[b],
                m.markers[a],
                order(&m.markers)
            )));
        }
        let len = if j + 1 < seq.len() {
            tb - ta
        } else {
            tb + duration - ta
        };
        sums[a].0 += len;
        sums[a].1 += 1;
    }
    Ok(PreparedSync {
        group: m.group.clone(),
        markers: m.markers.clone(),
        max_rate: m.max_rate,
        intervals_s: sums
            .iter()
            .map(|&(s, c)| (c > 0).then(|| s / c as f32))
            .collect(),
    })
}

/// "a → b → c → a".
fn order(markers: &[String]) -> String {
    let mut s = markers.join(" → ");
    if let Some(first) = markers.first() {
        s.push_str(" → ");
        s.push_str(first);
    }
    s
}

fn missing(marker: &str, names: &[(u64, String, MarkerKind)]) -> String {
    let near = near_matches(marker, names.iter().map(|(_, n, _)| n.as_str()));
    let hint = match near.first() {
        Some(n) => format!("; did you mean '{n}'?"),
        None if names.is_empty() => "; the clip has no markers".to_string(),
        None => format!(
            "; its markers: {}",
            names
                .iter()
                .map(|(_, n, _)| n.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    format!("the clip has no marker '{marker}'{hint}")
}
