//! Sync groups in `report.json`: each member clip's marker intervals, and
//! per group the playback-rate range over every member of the cook (the
//! package's `SYNC` figure covers one asset's members).

use serde::{Deserialize, Serialize};

/// A clip's membership of a sync group.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ClipSync {
    pub group: String,
    /// Per interval `markers[k] -> markers[k + 1]` (cyclically), its mean
    /// length in the clip in seconds; `null` if the clip never plays it.
    pub intervals_s: Vec<Option<f32>>,
}

/// One group over the whole cook.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct SyncGroupReport {
    pub name: String,
    pub markers: Vec<String>,
    /// Members as `source:clip`.
    pub clips: Vec<String>,
    /// The smallest and largest rate a member plays at to follow another,
    /// interval by interval.
    pub rate_min: f32,
    pub rate_max: f32,
    /// The manifest's bound; above it the cook tells.
    pub max_rate: f32,
}
