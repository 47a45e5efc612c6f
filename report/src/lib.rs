//! `ludus-anim-report`: the cook's JSON outputs as Rust types —
//! `OUT/report.json` ([`Report`], schema `schemas/report.schema.json`) and
//! `OUT/manifest.json` ([`PackageManifest`], schema
//! `schemas/package-manifest.schema.json`), the per-time sidecar
//! `OUT/report-sidecar.json` ([`sidecar::Sidecar`], schema
//! `schemas/report-sidecar.schema.json`); and what compares two cooks:
//! [`compare::compare`] under the manifest's [`rules::RegressionRules`].
//!
//! **Owns:** the field names and shapes of both files (a contract with
//! dashboards, CI gates and build systems), the totals arithmetic, and a
//! small checker for the JSON Schema subset the schemas use ([`schema`]).
//!
//! **Invariants:** depends on serde, serde_json and base64 only, so a dashboard or
//! a CI script reads a cook's results without linking the cooker, its
//! importers (ufbx, gltf) or the codec. The schemas are tested against
//! these types (`tests/schema.rs`): every field the types write is in the
//! schema, and every required field is written.

#![forbid(unsafe_code)]

pub mod compare;
pub mod farm;
pub mod joint_sets;
pub mod manifest;
pub mod packed;
pub mod program_view;
pub mod rules;
pub mod schema;
pub mod sidecar;
pub mod sidecar_parts;
pub mod sync;

pub use farm::{RemoteReport, RemoteStageStats, ShardInfo};
pub use manifest::{ManifestAsset, ManifestClip, PackageManifest};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How bad a diagnostic is: errors fail the asset.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Warning,
    Error,
}

/// Something an importer or stage chose on the user's behalf (root joint,
/// skipped nodes, units assumed), recorded so nothing happens silently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Decision {
    /// Stable machine-readable kind, e.g. `synthetic_root`.
    pub kind: String,
    pub detail: String,
}

/// Which build of the cooker wrote a report. Packages do not record it
/// (only what changes their bytes), so two builds of the same cooker
/// version give the same packages.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildInfo {
    /// Crate version, e.g. `0.1.0`.
    pub version: String,
    /// Source revision (`git rev-parse --short=12 HEAD`) or `unknown`.
    pub revision: String,
}

/// Per stage: cache hits, misses (runs) and the time spent in it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct StageStats {
    pub hits: u64,
    pub misses: u64,
    pub ms: f64,
    /// Cached records refused because they do not prove their key (they
    /// name other inputs than this cook's): each was a miss, with a notice.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rejected: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl StageStats {
    /// Adds another cook's counters and time (merging shards).
    pub fn add(&mut self, o: &StageStats) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.ms += o.ms;
        self.rejected += o.rejected;
    }
}

/// A diagnostic as the report shows it: absent locations are omitted.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ReportDiagnostic {
    pub severity: Severity,
    pub code: String,
    pub message: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub clip: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub joint: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_s: Option<f32>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Report {
    pub cooker_version: String,
    /// The build that cooked: version and source revision. Absent in
    /// reports of earlier cookers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub build: Option<BuildInfo>,
    pub profile: String,
    pub assets: Vec<AssetReport>,
    pub totals: Totals,
    /// Per stage: cache hits, misses (runs) and time spent.
    pub stages: BTreeMap<String, StageStats>,
    /// Cache problems met and handled (corrupt entries healed, failed
    /// writes, remote cache failures): the cook went on, recomputing.
    /// Optional in the schema.
    #[serde(default)]
    pub cache_notices: Vec<String>,
    /// The remote cache's traffic per stage, when one was configured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub remote: Option<RemoteReport>,
    /// The shard this cook was (`cook --shard I/N`); absent in unsharded
    /// and merged reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<ShardInfo>,
    /// Sync groups over the whole cook (absent without groups, and in
    /// sharded and merged reports).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sync_groups: Vec<sync::SyncGroupReport>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "lowercase")]
pub enum AssetStatus {
    Ok,
    Failed,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct AssetReport {
    pub source: String,
    /// blake3 of the source bytes and companion files, hex.
    pub source_hash: String,
    pub format: String,
    pub status: AssetStatus,
    pub diagnostics: Vec<ReportDiagnostic>,
    pub decisions: Vec<Decision>,
    /// Package path relative to the output directory (`packages/...`).
    pub package: Option<String>,
    pub package_bytes: u64,
    pub skeleton: Option<SkeletonReport>,
    pub clips: Vec<ClipReport>,
    /// The package's masks and LOD levels, when its skeleton has a joint
    /// sets file.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint_sets: Option<joint_sets::JointSetsReport>,
}

impl AssetReport {
    /// This report without the timings measured in the cook that wrote
    /// it (`compress_ms`, `decode_ns_per_pose` set to 0): what a cache
    /// record keeps, so it is the same bytes whichever machine cooked.
    pub fn without_timings(&self) -> AssetReport {
        let mut r = self.clone();
        for c in &mut r.clips {
            c.compress_ms = 0.0;
            c.decode_ns_per_pose = 0.0;
        }
        r
    }

    /// An asset that produced nothing, with one error diagnostic `code`
    /// (`file`: the diagnostic's file, if it names one). What the cook's
    /// panic isolation and the asset server's failed cooks both record.
    pub fn failed(
        source: String,
        source_hash: String,
        format: String,
        (code, message, file): (&str, String, Option<String>),
    ) -> AssetReport {
        AssetReport {
            source,
            source_hash,
            format,
            status: AssetStatus::Failed,
            diagnostics: vec![ReportDiagnostic {
                severity: Severity::Error,
                code: code.to_string(),
                message,
                file,
                clip: None,
                joint: None,
                time_s: None,
            }],
            decisions: Vec::new(),
            package: None,
            package_bytes: 0,
            skeleton: None,
            clips: Vec::new(),
            joint_sets: None,
        }
    }
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct SkeletonReport {
    pub joints: usize,
    pub identity: String,
    pub unit_scale_m: f32,
    pub source_axes: String,
    /// The `[[skeleton]]` name (authoring identity) of a shared skeleton.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The bind-pose check of each skin of the asset.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skins: Vec<SkinReport>,
}

/// One skin's bind-pose check: skinning the source mesh's vertices (with
/// their authored influences) with the cooked bind pose, against the
/// undeformed mesh.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SkinReport {
    pub name: String,
    pub vertices: usize,
    /// Palette entries.
    pub joints: usize,
    /// Largest residual (mm); absent when the file gave no mesh to check.
    pub residual_mm: Option<f32>,
    pub threshold_mm: f32,
    /// Largest distance of a vertex's authored weight sum from one (the
    /// check normalizes weights, as skinning runtimes do).
    #[serde(default)]
    pub max_weight_sum_error: f32,
    /// Vertices no influence moves (left out of the residual).
    #[serde(default)]
    pub unweighted_vertices: usize,
}

/// A clip's motion bounds in character space (the skeleton's component
/// space, meters): a box and a sphere holding every point at every
/// checked time (each sample and each midpoint between samples, decoded
/// from the package).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BoundsReport {
    /// `skinned_vertices` (every skin's mesh, skinned) or `joints` (joint
    /// positions; no mesh).
    pub points: String,
    pub min: [f32; 3],
    pub max: [f32; 3],
    pub center: [f32; 3],
    pub radius: f32,
    /// Times checked and points per time.
    pub checked_times: usize,
    pub points_per_time: usize,
    /// Meshless assets: the sphere around each joint the bounds hold
    /// (manifest `joint_radius_m`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub joint_radius_m: Option<f32>,
    /// Additive clips: the base pose and weights they were applied at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub applied_on: Option<String>,
}

/// The largest distance between a socket's position decoded from the
/// package (the clip decoded, forward kinematics, the socket's offset)
/// and the same from the source poses, over the clip's samples.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SocketError {
    pub socket: String,
    pub joint: String,
    pub max_error_m: f32,
    pub worst_time_s: f32,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct JointError {
    pub joint: String,
    pub max_error_m: f32,
    pub threshold_m: f32,
}

/// The error a game sees against what the artist authored, at the joint
/// that uses most of its own threshold: resampling, codec and the f32
/// floor together.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct EndToEnd {
    pub error_m: f32,
    pub joint: String,
    pub threshold_m: f32,
    /// `error_m <= threshold_m`.
    pub within: bool,
    /// Why not, when not: `resampling` (the grid at its highest allowed
    /// rate cannot follow the authored curves), `step_between_samples`
    /// (a STEP key change inside a sample interval), `f32_floor` (f32
    /// arithmetic alone, for this rig's coordinates), `codec` (the
    /// encoder with its fallbacks).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cause: Option<String>,
}

/// Decoded vs authored velocity, for profiles that ask for it
/// (`velocity_threshold_mps`): the joint with the largest error over any
/// sample interval.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct VelocityReport {
    /// Meters per second.
    pub max_error_mps: f32,
    pub joint: String,
    /// Middle of the interval where it peaks.
    pub time_s: f32,
    pub threshold_mps: f32,
    /// `max_error_mps <= threshold_mps`.
    pub within: bool,
    /// Sample intervals measured.
    pub intervals: usize,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ClipReport {
    pub name: String,
    /// Quality profile the clip was cooked with.
    pub profile: String,
    pub joints: usize,
    pub samples: u32,
    pub sample_rate_hz: f32,
    pub duration_s: f32,
    /// Loop policy as cooked: `once`, `loop`, or `loop-wrap` (looping with
    /// the duplicated end sample dropped).
    #[serde(rename = "loop")]
    pub loop_mode: String,
    /// Looping clips: pose difference between the last and first samples
    /// (component space, virtual vertices, meters).
    pub loop_seam_error_m: Option<f32>,
    /// The extracted motion root, if any.
    pub root_motion: Option<RootMotionReport>,
    /// Additive clips: the named, revisioned reference.
    pub additive_reference: Option<String>,
    /// Events (visual, control, contact-window edges) and sync markers
    /// stored with the clip, by distinct name.
    pub events: usize,
    pub markers: usize,
    pub codec: String,
    pub codec_version: u16,
    /// joints x samples x 40 (ACL's definition, for comparison).
    pub raw_bytes: u64,
    /// The clip's codec blob.
    pub compressed_bytes: u64,
    pub ratio: f32,
    /// Authored curves vs the runtime's interpolation of the samples.
    pub resample_error_m: f32,
    /// Decoded vs resampled source, component space, virtual vertices.
    pub max_error_m: f32,
    pub p99_error_m: f32,
    pub max_rotation_error_deg: f32,
    /// Decoded vs the authored curves (resampling and codec together).
    pub source_error_m: f32,
    /// `source_error_m` at the joint that uses most of its own threshold,
    /// judged against that threshold.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_to_end: Option<EndToEnd>,
    /// Velocity error, where the profile asks for it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub velocity: Option<VelocityReport>,
    /// Motion bounds over the clip's whole time range (pose clips).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bounds: Option<BoundsReport>,
    /// Error at each of the skeleton's sockets (pose clips of a skeleton
    /// with sockets).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sockets: Vec<SocketError>,
    pub threshold_m: f32,
    pub worst_joint: String,
    pub worst_time_s: f32,
    pub times_checked: usize,
    /// Which times verification checked, and what the figures promise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checks: Option<TimeChecks>,
    pub selected_joints: Vec<JointError>,
    pub curves: CurvesReport,
    /// The encode stage's time in this cook; 0 when the clip's encoding
    /// was served from the cache (cache entries hold no timings, so the
    /// same key is the same bytes on every machine).
    pub compress_ms: f64,
    /// The runtime's decode time per pose, measured by verification in
    /// this cook; 0 when verification was served from the cache.
    pub decode_ns_per_pose: f64,
    /// The clip's quality warnings as text; each is also in the asset's
    /// `diagnostics`, located by file, clip, joint and time.
    pub warnings: Vec<String>,
    /// Retargeted clips: the profile and what the retarget measured.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retarget: Option<RetargetReport>,
    /// The sync groups the clip is a member of.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sync: Vec<sync::ClipSync>,
}

impl ClipReport {
    /// The threshold of the worst joint where the report lists it among
    /// `selected_joints`; `None` otherwise (`threshold_m` is the tightest
    /// joint's, not necessarily the worst joint's).
    pub fn worst_joint_threshold_m(&self) -> Option<f32> {
        self.selected_joints
            .iter()
            .find(|j| j.joint == self.worst_joint)
            .map(|j| j.threshold_m)
    }

    /// How much of its error budget the clip uses (max error over
    /// threshold), from the report alone: exact where the worst joint's
    /// threshold is known, else against the tightest threshold, capped at 1
    /// for a clip without warnings (verification held every joint within
    /// its own threshold). The sidecar gives the exact figure per joint.
    pub fn budget_used(&self) -> f32 {
        let ratio = |e: f32, t: f32| {
            if t > 0.0 {
                e / t
            } else if e > 0.0 {
                f32::INFINITY
            } else {
                0.0
            }
        };
        let selected = self
            .selected_joints
            .iter()
            .map(|j| ratio(j.max_error_m, j.threshold_m))
            .fold(0.0, f32::max);
        let clip = match self.worst_joint_threshold_m() {
            Some(t) => ratio(self.max_error_m, t),
            None => {
                let r = ratio(self.max_error_m, self.threshold_m);
                if self.warnings.is_empty() {
                    r.min(1.0)
                } else {
                    r
                }
            }
        };
        clip.max(selected)
    }
}

/// The times verification checked, by kind, for both figures, the f32
/// allowance the reported figures include, and what they promise.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeChecks {
    /// Times `max_error_m` was measured at (decoded vs the resampled grid).
    pub codec: TimeCounts,
    /// Times `source_error_m` was measured at (decoded vs the authored
    /// curves, or the source's frames for sampled sources).
    pub source: TimeCounts,
    /// The clip's f32 floor, included in `max_error_m`, `source_error_m`
    /// and the selected joints' figures (meters).
    pub f32_floor_m: f32,
    /// `curves`: `source_error_m` bounds the error against the authored
    /// curves at any time; `frames` (sampled sources: BVH, FBX as baked,
    /// SJSON): it holds at the source's frames, with the runtime's
    /// interpolation between them as the motion.
    pub contract: String,
}

/// How many times of each kind were checked (each time counted once, under
/// the first kind that produced it in this order).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TimeCounts {
    /// Every sample time of the grid.
    pub samples: usize,
    /// Interior points of every interval.
    pub interior: usize,
    /// The clip end and both sides of a loop seam.
    pub seam: usize,
    /// Source key times and the instants just before them.
    pub keys: usize,
    /// Seeded random times (uniform over the clip).
    pub random: usize,
    /// Evaluations of the peak search around the worst of the above.
    pub refined: usize,
}

impl TimeCounts {
    pub fn total(&self) -> usize {
        self.samples + self.interior + self.seam + self.keys + self.random + self.refined
    }
}

/// How a clip was retargeted and how well (metrics as defined in
/// `schemas/retarget.md`: foot skating and contact preservation, end
/// effector error, bone-length deviation, angular jumps, twist ranges).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetargetReport {
    /// The profile's `name`.
    pub profile: String,
    /// The profile file, relative to the project root.
    pub profile_path: String,
    /// blake3 of the profile's bytes, hex.
    pub profile_hash: String,
    /// The target skeleton's file and compatibility identity.
    pub target: String,
    pub target_identity: String,
    /// The retarget's measurements of this clip (`ClipMetrics`).
    pub metrics: serde_json::Value,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RootMotionReport {
    pub policy: String,
    pub joint: String,
    /// Looping clips: position drift of composing per-tick (30 Hz) deltas
    /// over 100 loops against the exact 100-cycle transform.
    pub drift_100_loops_m: Option<f32>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct CurvesReport {
    pub count: usize,
    /// Per channel: largest decoded-vs-resampled difference.
    pub max_error: BTreeMap<String, f32>,
}

#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct Totals {
    pub assets: usize,
    pub assets_failed: usize,
    pub clips: usize,
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    pub package_bytes: u64,
    pub ratio: f32,
    pub max_error_m: f32,
    /// Warning diagnostics over all assets (every quality warning is one).
    pub warnings: usize,
    pub cook_ms: f64,
    /// Peak resident memory of the cooking process (Linux; 0 elsewhere).
    pub peak_rss_mb: f64,
}

impl Report {
    /// Recompute `totals` from the assets; `cook_ms` and `peak_rss_mb`
    /// are measured by the cooking process.
    pub fn compute_totals(&mut self, cook_ms: f64, peak_rss_mb: f64) {
        let mut t = Totals {
            assets: self.assets.len(),
            cook_ms,
            peak_rss_mb,
            ..Default::default()
        };
        for a in &self.assets {
            if a.status == AssetStatus::Failed {
                t.assets_failed += 1;
            }
            t.package_bytes += a.package_bytes;
            t.warnings += a
                .diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Warning)
                .count();
            for c in &a.clips {
                t.clips += 1;
                t.raw_bytes += c.raw_bytes;
                t.compressed_bytes += c.compressed_bytes;
                t.max_error_m = t.max_error_m.max(c.max_error_m);
            }
        }
        t.ratio = if t.compressed_bytes > 0 {
            t.raw_bytes as f32 / t.compressed_bytes as f32
        } else {
            0.0
        };
        self.totals = t;
    }
}
