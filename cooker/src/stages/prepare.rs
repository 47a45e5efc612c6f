//! Prepare: a clip's playback semantics, baked on the resampled grid —
//! loop policy and seam, root-motion extraction, additive conversion,
//! markers and events (seed: "Prepare clip semantics: loop boundaries,
//! motion-root extraction, additive reference conversion, contact/sync
//! markers, curves, and event channels").
//!
//! # Where it runs
//! `import → normalize → resample → **prepare** → encode → package →
//! verify`. After resampling, because root extraction and additive
//! conversion need component-space poses (FK of whole local poses) on the
//! exact grid the encoder stores and the runtime interpolates: the
//! trajectory keys are the motion joint's component transforms at the
//! sample times, and every delta is computed against the reference sampled
//! at those times. Before encoding, because the codec must compress the
//! prepared poses (root removed, deltas), not the authored ones. The output
//! depends only on the resampled clip and these settings, so it is a cache
//! seam: a quality-only change (codec thresholds, bit rates) re-runs encode
//! onwards and nothing before it.
//!
//! # Order inside the stage
//! 1. Root motion: extract the trajectory and remove it from the visual
//!    pose, exactly once.
//! 2. Loop decision and seam error, measured on the visual pose the player
//!    sees — after root removal, so a walk that travels forward but repeats
//!    its gait is a loop.
//! 3. Trajectory drift over 100 loops (looping clips).
//! 4. Additive conversion against the named reference.
//! 5. Dropping the duplicated end sample of a loop ([`LoopMode::LoopWrap`]);
//!    the trajectory keeps its endpoint key at the exact duration.
//! 6. Markers and events: validated, canonicalized for loops.
//!
//! Adapted ideas: the duplicated-loop-sample removal and keeping the root
//! trajectory's endpoint follow ACL's documentation on looping clips
//! ("wrap" vs "clamp" loop policies); the additive equations and the
//! trajectory/event conventions are the Ludus seed's, implemented in the
//! runtime (`additive`, `root_motion`, `events`) and only called here.

use crate::package_writer::{ClipPrepEntry, EventEntry, RootMotionEntry};
use ludus_anim_model::{Decision, ResampledClip};
use ludus_anim_runtime::additive::{apply_additive, make_additive};
use ludus_anim_runtime::events::{canonicalize_events, Event};
use ludus_anim_runtime::hash::fnv1a64;
use ludus_anim_runtime::math::{interpolate, Affine3A, Transform};
use ludus_anim_runtime::package::Clip;
use ludus_anim_runtime::root_motion::{
    extract_planar, normalize_trajectory, trajectory_key_count, RigidTransform, Trajectory,
    TrajectoryError,
};
use ludus_anim_runtime::timing::{sample_position, LoopMode};
use ludus_anim_runtime::Skeleton;
use ludus_anim_verify::{pose_errors, verify_poses, ErrorStats, Scratch};
use serde::{Deserialize, Serialize};

pub use ludus_anim_runtime::package::{MarkerKind, RootMotionPolicy};

/// Whether a clip loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub enum LoopPolicy {
    /// Loop when the first and last poses match within every joint's
    /// threshold (component space, virtual vertices): authored loops
    /// repeat their first pose at the end.
    #[default]
    Auto,
    Once,
    Loop,
}

/// Which joint carries locomotion and how much of it becomes the
/// trajectory. Hierarchy does not select it (seed: the moving root can be
/// a child of the synthetic root).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RootMotionSettings {
    pub joint: String,
    pub policy: RootMotionPolicy,
}

/// What additive deltas are made against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum AdditiveReference {
    /// The skeleton's rest pose.
    RestPose,
    /// One frame: of this clip (`clip: None`, after root removal) or of
    /// another clip, sampled with the runtime's interpolation.
    Frame { clip: Option<String>, time_s: f32 },
    /// The same time of a reference clip (framewise, baked; times past the
    /// reference's duration clamp to it).
    Clip { name: String },
}

/// One authored marker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct MarkerSpec {
    pub name: String,
    pub time_s: f32,
    pub kind: MarkerKind,
    /// Whether reverse playback delivers it.
    pub reversible: bool,
}

/// Everything the stage needs to know about one clip.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClipPrepSettings {
    pub loop_policy: LoopPolicy,
    /// Store a looping clip without its duplicated end sample when that
    /// sample equals the first within the thresholds.
    pub drop_duplicate_end: bool,
    pub root_motion: Option<RootMotionSettings>,
    pub additive: Option<AdditiveReference>,
    pub markers: Vec<MarkerSpec>,
}

/// The extracted, normalized root trajectory.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreparedTrajectory {
    pub joint: String,
    pub joint_index: usize,
    pub policy: RootMotionPolicy,
    pub sample_rate_hz: f32,
    pub duration_s: f32,
    /// `trajectory_key_count(duration, rate)` keys; key 0 is the identity
    /// and the last key sits at exactly the duration.
    #[serde(with = "serde_rigid_vec")]
    pub keys: Vec<RigidTransform>,
    /// The removed first key: `R_char(t) = reference_offset * R(t)`.
    #[serde(with = "serde_rigid")]
    pub reference_offset: RigidTransform,
    /// Looping clips: position error of composing per-tick (30 Hz) deltas
    /// over 100 loops against `C^100`.
    pub drift_100_loops_m: Option<f32>,
}

impl PreparedTrajectory {
    /// The runtime view of the keys.
    pub fn trajectory(&self) -> Result<Trajectory<'_>, TrajectoryError> {
        Trajectory::new(&self.keys, self.sample_rate_hz, self.duration_s)
    }

    /// `R_char(t) = reference_offset * R(t)`, `t` clamped to the clip.
    pub fn character_at(&self, t: f32) -> RigidTransform {
        let r = self.trajectory().map(|tr| tr.sample(t)).unwrap_or_default();
        self.reference_offset.compose(&r)
    }

    /// Remove the trajectory at time `t` from an authored local pose the
    /// way the stage removed it from the samples (e.g. to compare a
    /// decoded clip with its source between samples). Returns false if
    /// the pose is too short.
    pub fn remove_from_pose(&self, skeleton: &Skeleton, t: f32, pose: &mut [Transform]) -> bool {
        if pose.len() != skeleton.joint_count() || self.joint_index >= pose.len() {
            return false;
        }
        remove_motion(skeleton, self.joint_index, &self.character_at(t), pose);
        true
    }
}

/// An additive clip's reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreparedAdditive {
    /// Named and revisioned description, e.g. `clip 'idle' rev 0123…`
    /// (the revision is FNV-1a 64 of the reference values used).
    pub reference: String,
    /// The representative base pose verification applies the deltas onto:
    /// the reference's pose at each sample of the prepared clip
    /// (`num_samples * joint_count`, sample-major).
    pub base: Vec<Transform>,
}

/// The stage's result.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Prepared {
    /// Poses after root removal, additive conversion and end-sample drop;
    /// `loop_mode` set.
    pub clip: ResampledClip,
    /// Looping clips: the largest virtual-vertex distance (component
    /// space, meters, over joints) between the last and first poses.
    pub loop_seam_error_m: Option<f32>,
    pub trajectory: Option<PreparedTrajectory>,
    /// Canonical track order (time, then id).
    #[serde(with = "serde_events")]
    pub events: Vec<Event>,
    /// One entry per distinct marker id: `(id, name, kind)`.
    pub event_names: Vec<(u64, String, MarkerKind)>,
    pub additive: Option<PreparedAdditive>,
    pub decisions: Vec<Decision>,
    pub warnings: Vec<String>,
}

impl Prepared {
    /// The package writer's record of these semantics.
    pub fn package_entry(&self) -> ClipPrepEntry {
        ClipPrepEntry {
            additive_reference: self.additive.as_ref().map(|a| a.reference.clone()),
            root_motion: self.trajectory.as_ref().map(|t| RootMotionEntry {
                joint: t.joint.clone(),
                policy: t.policy,
                reference_offset: t.reference_offset,
                sample_rate_hz: t.sample_rate_hz,
                keys: t.keys.clone(),
                drift_100_loops_m: t.drift_100_loops_m,
            }),
            events: self
                .events
                .iter()
                .map(|e| {
                    let (name, kind) = self
                        .event_names
                        .iter()
                        .find(|(id, _, _)| *id == e.id)
                        .map(|(_, n, k)| (n.clone(), *k))
                        .unwrap_or((String::new(), MarkerKind::Event));
                    EventEntry {
                        time_s: e.time_s,
                        id: e.id,
                        kind,
                        reversible: e.reversible,
                        name,
                    }
                })
                .collect(),
            loop_seam_error_m: self.loop_seam_error_m,
        }
    }

    /// The additive base pose at time `t` of the prepared clip, with the
    /// runtime's interpolation and loop semantics. False if the clip is
    /// not additive or `out` has the wrong length.
    pub fn additive_base_at(&self, t: f32, out: &mut [Transform]) -> bool {
        let Some(a) = &self.additive else {
            return false;
        };
        sample_grid(&self.clip, &a.base, self.clip.loop_mode, t, out)
    }

    /// What the game sees at weight one on the representative base:
    /// `apply_additive(base(t), deltas[j], 1)`. `deltas` is a decoded (or
    /// prepared) delta pose at `t`. False if the clip is not additive or a
    /// length differs.
    pub fn apply_onto_base(&self, t: f32, deltas: &[Transform], out: &mut [Transform]) -> bool {
        if deltas.len() != out.len() || !self.additive_base_at(t, out) {
            return false;
        }
        for (o, d) in out.iter_mut().zip(deltas) {
            *o = apply_additive(o, d, 1.0);
        }
        true
    }
}

/// Serde for the runtime's `RigidTransform` (the runtime links no serde
/// for it): seven f32, rotation xyzw then translation xyz — the package's
/// key layout. The stage cache stores [`Prepared`] through these.
mod serde_rigid {
    use ludus_anim_runtime::math::{Quat, Vec3};
    use ludus_anim_runtime::root_motion::RigidTransform;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn to_array(r: &RigidTransform) -> [f32; 7] {
        let (q, t) = (r.rotation, r.translation);
        [q.x, q.y, q.z, q.w, t.x, t.y, t.z]
    }
    pub fn from_array(a: [f32; 7]) -> RigidTransform {
        RigidTransform::new(
            Quat::from_xyzw(a[0], a[1], a[2], a[3]),
            Vec3::new(a[4], a[5], a[6]),
        )
    }
    pub fn serialize<S: Serializer>(r: &RigidTransform, s: S) -> Result<S::Ok, S::Error> {
        to_array(r).serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RigidTransform, D::Error> {
        Ok(from_array(<[f32; 7]>::deserialize(d)?))
    }
}

mod serde_rigid_vec {
    use super::serde_rigid::{from_array, to_array};
    use ludus_anim_runtime::root_motion::RigidTransform;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &[RigidTransform], s: S) -> Result<S::Ok, S::Error> {
        v.iter().map(to_array).collect::<Vec<_>>().serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<RigidTransform>, D::Error> {
        Ok(Vec::<[f32; 7]>::deserialize(d)?
            .into_iter()
            .map(from_array)
            .collect())
    }
}

/// Serde for the runtime's `Event`: `(time_s, id, reversible)`.
mod serde_events {
    use ludus_anim_runtime::events::Event;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &[Event], s: S) -> Result<S::Ok, S::Error> {
        v.iter()
            .map(|e| (e.time_s, e.id, e.reversible))
            .collect::<Vec<_>>()
            .serialize(s)
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Event>, D::Error> {
        Ok(Vec::<(f32, u64, bool)>::deserialize(d)?
            .into_iter()
            .map(|(time_s, id, reversible)| Event {
                time_s,
                id,
                reversible,
            })
            .collect())
    }
}

/// Why a clip could not be prepared. Every variant names the clip, and the
/// joint, marker or reference and time where one is involved.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PrepareError {
    #[error("clip '{clip}': {what}")]
    BadInput { clip: String, what: String },
    #[error(
        "clip '{clip}': root-motion joint '{joint}' is not in the skeleton{}",
        near_list(near)
    )]
    UnknownJoint {
        clip: String,
        joint: String,
        near: Vec<String>,
    },
    #[error("clip '{clip}': root-motion joint '{joint}' at t={time_s} s: {what}")]
    RootMotion {
        clip: String,
        joint: String,
        time_s: f32,
        what: String,
    },
    #[error("clip '{clip}': additive reference clip '{reference}' not found")]
    MissingReference { clip: String, reference: String },
    #[error("clip '{clip}': additive reference '{reference}': {what}")]
    BadReference {
        clip: String,
        reference: String,
        what: String,
    },
    #[error("clip '{clip}': marker '{marker}' at t={time_s} s: {what}")]
    Marker {
        clip: String,
        marker: String,
        time_s: f32,
        what: String,
    },
    #[error("clip '{clip}' has zero duration and cannot carry events (marker '{marker}' at t={time_s} s)")]
    EventfulZeroDuration {
        clip: String,
        marker: String,
        time_s: f32,
    },
}

fn near_list(near: &[String]) -> String {
    if near.is_empty() {
        String::new()
    } else {
        format!(" (near matches: {})", near.join(", "))
    }
}

/// Prepare one resampled clip (see the module documentation for the order
/// of operations). `thresholds` and `shells` are per joint (meters), as for
/// the encoder. `reference_clip(name)` returns another resampled clip of
/// the same asset for additive references.
pub fn prepare(
    skeleton: &Skeleton,
    clip: ResampledClip,
    settings: &ClipPrepSettings,
    thresholds: &[f32],
    shells: &[f32],
    reference_clip: &dyn Fn(&str) -> Option<ResampledClip>,
) -> Result<Prepared, PrepareError> {
    let mut clip = clip;
    let name = clip.name.clone();
    let joints = skeleton.joint_count();
    let bad = |what: String| PrepareError::BadInput {
        clip: name.clone(),
        what,
    };
    check_grid(&clip, joints).map_err(bad)?;
    if thresholds.len() != joints || shells.len() != joints {
        return Err(bad(format!(
            "{} thresholds and {} shells for {joints} joints",
            thresholds.len(),
            shells.len()
        )));
    }
    let mut decisions = Vec::new();
    let mut warnings = Vec::new();
    let n = clip.num_samples as usize;
    let duration = clip.duration_s;
    let rate = clip.sample_rate_hz;

    // 1. Root motion.
    let mut trajectory = match &settings.root_motion {
        Some(rm) => Some(extract_root_motion(
            skeleton,
            &mut clip,
            rm,
            &mut decisions,
            &mut warnings,
        )?),
        None => None,
    };

    // 2. Loop decision and seam, on the visual pose.
    let mut scratch = Scratch::new(joints);
    let mut pos_err = vec![0.0f32; joints];
    let mut rot_err = vec![0.0f32; joints];
    let (seam_m, seam_ratio) = if n >= 2 && duration > 0.0 {
        pose_errors(
            skeleton,
            clip.pose(0),
            clip.pose(n - 1),
            shells,
            &mut scratch,
            &mut pos_err,
            &mut rot_err,
        );
        let m = pos_err.iter().copied().fold(0.0f32, f32::max);
        let ratio = pos_err
            .iter()
            .zip(thresholds)
            .map(|(&e, &th)| {
                if th > 0.0 {
                    e / th
                } else if e > 0.0 {
                    f32::INFINITY
                } else {
                    0.0
                }
            })
            .fold(0.0f32, f32::max);
        (m, ratio)
    } else {
        (0.0, 0.0)
    };
    let looping = match settings.loop_policy {
        LoopPolicy::Once => false,
        LoopPolicy::Loop if duration <= 0.0 => {
            warnings.push(format!(
                "clip '{name}': a zero-duration clip cannot loop; cooked as once"
            ));
            false
        }
        LoopPolicy::Loop => {
            decisions.push(Decision::new(
                "loop_policy",
                format!(
                    "clip '{name}': looping by setting; seam error {:.4} mm",
                    seam_m * 1000.0
                ),
            ));
            if seam_ratio > 1.0 {
                warnings.push(format!(
                    "clip '{name}': loop seam error {:.4} mm exceeds the thresholds: the loop pops",
                    seam_m * 1000.0
                ));
            }
            true
        }
        LoopPolicy::Auto => {
            let l = n >= 2 && duration > 0.0 && seam_ratio <= 1.0;
            if l {
                decisions.push(Decision::new(
                    "loop_detected",
                    format!(
                        "clip '{name}': first and last poses match within the profile threshold (seam {:.4} mm{}); cooked as looping",
                        seam_m * 1000.0,
                        if trajectory.is_some() { ", root motion removed" } else { "" }
                    ),
                ));
            }
            l
        }
    };
    clip.loop_mode = if looping {
        LoopMode::Loop
    } else {
        LoopMode::Once
    };
    let loop_seam_error_m = looping.then_some(seam_m);

    // 3. Drift (the trajectory is stored in full f32; this measures what
    // long looping traversal accumulates from it).
    if let Some(t) = trajectory.as_mut() {
        if looping {
            let figures = t.trajectory().ok().map(|tr| drift_figures(&tr));
            t.drift_100_loops_m = figures.map(|f| f.0);
            if let Some((d32, d64)) = figures {
                decisions.push(Decision::new(
                    "root_motion_drift",
                    format!(
                        "clip '{name}': composing 30 Hz deltas over 100 loops drifts {:.4} mm from C^100 ({:.4} mm with the position accumulated in f64)",
                        d32 * 1000.0,
                        d64 * 1000.0
                    ),
                ));
            }
        }
    }

    // 4. Additive conversion.
    let mut additive = match &settings.additive {
        Some(r) => Some(convert_additive(
            skeleton,
            &mut clip,
            r,
            reference_clip,
            &mut decisions,
        )?),
        None => None,
    };

    // 5. Drop the duplicated end sample.
    if settings.drop_duplicate_end {
        let on_grid =
            ((n as f64 - 1.0) / rate as f64 - duration as f64).abs() <= 1e-3 / rate as f64;
        if !looping {
            decisions.push(Decision::new(
                "duplicate_end_kept",
                format!("clip '{name}': not looping; the end sample is kept"),
            ));
        } else if seam_ratio > 1.0 {
            warnings.push(format!(
                "clip '{name}': last sample differs from the first beyond the thresholds (seam {:.4} mm); end sample kept",
                seam_m * 1000.0
            ));
        } else if !on_grid || n < 2 {
            decisions.push(Decision::new(
                "duplicate_end_kept",
                format!(
                    "clip '{name}': duration {duration} s is not on the {rate} Hz grid; the end sample is kept"
                ),
            ));
        } else {
            clip.samples.truncate((n - 1) * joints);
            for c in &mut clip.curves {
                c.values.truncate(n - 1);
            }
            if let Some(a) = additive.as_mut() {
                a.base.truncate((n - 1) * joints);
            }
            clip.num_samples -= 1;
            clip.loop_mode = LoopMode::LoopWrap;
            decisions.push(Decision::new(
                "duplicate_end_dropped",
                format!(
                    "clip '{name}': last sample repeats the first (seam {:.4} mm); stored {} samples, wrapping from the last to the first; duration stays {duration} s",
                    seam_m * 1000.0,
                    n - 1
                ),
            ));
        }
    }

    // 6. Markers and events.
    let (events, event_names) =
        prepare_markers(&name, duration, looping, &settings.markers, &mut decisions)?;

    Ok(Prepared {
        clip,
        loop_seam_error_m,
        trajectory,
        events,
        event_names,
        additive,
        decisions,
        warnings,
    })
}

/// The grid must be self-consistent before anything indexes it.
fn check_grid(clip: &ResampledClip, joints: usize) -> Result<(), String> {
    if clip.joint_count != joints {
        return Err(format!(
            "clip has {} joints, the skeleton {joints}",
            clip.joint_count
        ));
    }
    if clip.num_samples == 0 {
        return Err("clip has no samples".into());
    }
    if !(clip.duration_s.is_finite() && clip.duration_s >= 0.0) {
        return Err(format!("duration {} s", clip.duration_s));
    }
    if !(clip.sample_rate_hz.is_finite() && clip.sample_rate_hz > 0.0) {
        return Err(format!("sample rate {} Hz", clip.sample_rate_hz));
    }
    if clip.loop_mode == LoopMode::LoopWrap {
        return Err("clip is already prepared (wrap loop)".into());
    }
    let n = clip.num_samples as usize;
    // The grid covers the duration (the reader's rule for these modes).
    let covered = (n - 1) as f64 / clip.sample_rate_hz as f64;
    if covered + 1e-3 / (clip.sample_rate_hz as f64) < clip.duration_s as f64 {
        return Err(format!(
            "{n} samples at {} Hz do not cover {} s",
            clip.sample_rate_hz, clip.duration_s
        ));
    }
    if n.checked_mul(joints) != Some(clip.samples.len()) {
        return Err(format!(
            "{} transforms for {n} samples of {joints} joints",
            clip.samples.len()
        ));
    }
    if let Some(c) = clip.curves.iter().find(|c| c.values.len() != n) {
        return Err(format!(
            "curve '{}' has {} values for {n} samples",
            c.name,
            c.values.len()
        ));
    }
    if let Some(i) = clip.samples.iter().position(|t| !t.is_finite()) {
        return Err(format!(
            "sample {} joint {} is not finite",
            i / joints.max(1),
            i % joints.max(1)
        ));
    }
    Ok(())
}

/// Case-insensitive Levenshtein distance (small strings: joint names).
fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Skeleton joints whose names resemble `wanted`: same letters ignoring
/// case, one containing the other, or within two edits; closest first.
fn near_matches(skeleton: &Skeleton, wanted: &str) -> Vec<String> {
    let w = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = skeleton
        .names()
        .iter()
        .filter(|n| !n.is_empty())
        .filter_map(|n| {
            let l = n.to_lowercase();
            let d = edit_distance(n, wanted);
            if l == w {
                Some((0, n.as_str()))
            } else if !w.is_empty() && (l.contains(&w) || w.contains(&l)) {
                Some((1, n.as_str()))
            } else if d <= 2 {
                Some((1 + d, n.as_str()))
            } else {
                None
            }
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(5)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// Component transform of `joint`'s parent in `pose` (identity for the
/// root), by walking the ancestor chain: no allocation.
fn parent_component(skeleton: &Skeleton, pose: &[Transform], joint: usize) -> Affine3A {
    let mut m = Affine3A::IDENTITY;
    let mut a = skeleton.parent(joint);
    while let Some(p) = a {
        m = pose[p].to_affine() * m;
        a = skeleton.parent(p);
    }
    m
}

/// The rigid part (rotation, translation) of an affine component
/// transform: scale (and any shear) is not locomotion.
fn rigid_of(m: &Affine3A) -> RigidTransform {
    let (_, r, t) = m.to_scale_rotation_translation();
    RigidTransform::new(r.normalize(), t)
}

/// Whether an affine transform's scale is uniform (then `P^-1 K^-1 P` is
/// rigid and the removal is exact).
fn uniform_scale(m: &Affine3A) -> bool {
    let (s, _, _) = m.to_scale_rotation_translation();
    let (lo, hi) = (s.min_element().abs(), s.max_element().abs());
    hi > 0.0 && (hi - lo) <= 1e-4 * hi
}

/// Set `joint`'s local transform so that its component transform becomes
/// `inverse(k) * C` (C its current component transform), leaving the
/// parent chain unchanged: `L' = M * L` with `M = P^-1 * k^-1 * P`, whose
/// rigid part is applied to `L`'s translation and rotation (exact when the
/// parent's scale is uniform; the stage warns otherwise). Scale is kept.
/// Returns whether the parent's scale was uniform.
fn remove_motion(
    skeleton: &Skeleton,
    joint: usize,
    k: &RigidTransform,
    pose: &mut [Transform],
) -> bool {
    let p = parent_component(skeleton, pose, joint);
    let kinv = k.inverse();
    let kinv = Affine3A::from_rotation_translation(kinv.rotation, kinv.translation);
    let m = rigid_of(&(p.inverse() * kinv * p));
    let l = pose[joint];
    pose[joint] = Transform {
        rotation: (m.rotation * l.rotation).normalize(),
        translation: m.rotation * l.translation + m.translation,
        scale: l.scale,
    };
    uniform_scale(&p)
}

/// Keep each joint's rotation samples in one hemisphere (as resampling
/// did) after a stage rewrote them, so shortest-path nlerp and the encoder
/// see continuous data.
fn hemisphere_continuity(clip: &mut ResampledClip) {
    let j = clip.joint_count;
    for i in 1..clip.num_samples as usize {
        for k in 0..j {
            let prev = clip.samples[(i - 1) * j + k].rotation;
            let q = &mut clip.samples[i * j + k].rotation;
            if prev.dot(*q) < 0.0 {
                *q = -*q;
            }
        }
    }
}

fn extract_root_motion(
    skeleton: &Skeleton,
    clip: &mut ResampledClip,
    rm: &RootMotionSettings,
    decisions: &mut Vec<Decision>,
    warnings: &mut Vec<String>,
) -> Result<PreparedTrajectory, PrepareError> {
    let name = clip.name.clone();
    let joint = skeleton
        .find_by_name(&rm.joint)
        .ok_or_else(|| PrepareError::UnknownJoint {
            clip: name.clone(),
            joint: rm.joint.clone(),
            near: near_matches(skeleton, &rm.joint),
        })?;
    let joints = clip.joint_count;
    let n = clip.num_samples as usize;
    let rate = clip.sample_rate_hz;
    let duration = clip.duration_s;
    let count = trajectory_key_count(duration, rate).ok_or_else(|| PrepareError::RootMotion {
        clip: name.clone(),
        joint: rm.joint.clone(),
        time_s: duration,
        what: format!("no trajectory for duration {duration} s at {rate} Hz"),
    })?;

    // Character transform per sample: the policy's part of the motion
    // joint's component transform.
    let mut comp = vec![Affine3A::IDENTITY; joints];
    let mut raw = Vec::with_capacity(n);
    for i in 0..n {
        let pose = &clip.samples[i * joints..(i + 1) * joints];
        skeleton.local_to_component(pose, &mut comp);
        let c = rigid_of(&comp[joint]);
        let k = match rm.policy {
            RootMotionPolicy::Planar => extract_planar(c),
            RootMotionPolicy::Full => c,
        };
        if !k.is_finite() {
            return Err(PrepareError::RootMotion {
                clip: name.clone(),
                joint: rm.joint.clone(),
                time_s: i as f32 / rate,
                what: "component transform is not finite".into(),
            });
        }
        raw.push(k);
    }

    // Keys: sample i for every grid point before the duration, and the
    // pose at the duration last. The resampled grid's last sample is the
    // pose at the duration (resampling clamps), so this is sample n - 1
    // whether or not the duration is on the grid.
    let mut keys: Vec<RigidTransform> = (0..count)
        .map(|i| raw[if i + 1 == count { n - 1 } else { i.min(n - 1) }])
        .collect();
    let reference_offset = normalize_trajectory(&mut keys);

    // Remove R_char(t) = raw key from the visual pose, exactly once.
    let mut nonuniform = false;
    for (i, k) in raw.iter().enumerate() {
        let pose = &mut clip.samples[i * joints..(i + 1) * joints];
        nonuniform |= !remove_motion(skeleton, joint, k, pose);
    }
    hemisphere_continuity(clip);
    if nonuniform {
        warnings.push(format!(
            "clip '{name}': root-motion joint '{}' has a parent with non-uniform scale; the removal keeps only the rigid part",
            rm.joint
        ));
    }
    let traj = PreparedTrajectory {
        joint: rm.joint.clone(),
        joint_index: joint,
        policy: rm.policy,
        sample_rate_hz: rate,
        duration_s: duration,
        keys,
        reference_offset,
        drift_100_loops_m: None,
    };
    let tr = traj.trajectory().map_err(|e| PrepareError::RootMotion {
        clip: name.clone(),
        joint: rm.joint.clone(),
        time_s: 0.0,
        what: format!("trajectory invalid: {e}"),
    })?;
    let c = tr.cycle();
    decisions.push(Decision::new(
        "root_motion_extracted",
        format!(
            "clip '{name}': {} root motion of joint '{}' extracted ({} keys at {rate} Hz, full f32); whole clip moves {:.4} m and turns {:.2} deg; reference offset t=({:.4}, {:.4}, {:.4})",
            rm.policy.as_str(),
            rm.joint,
            traj.keys.len(),
            c.translation.length(),
            (2.0 * c.rotation.xyz().length().atan2(c.rotation.w.abs())).to_degrees(),
            reference_offset.translation.x,
            reference_offset.translation.y,
            reference_offset.translation.z,
        ),
    ));
    Ok(traj)
}

/// Per-tick (30 Hz) composition of `Trajectory::delta` over 100 loops
/// against the cycle transform's power `C^100`, as the runtime's own
/// property test measures it: the position error (meters) of a game that
/// accumulates root motion every frame in f32, after 100 loops.
pub fn drift_100_loops(tr: &Trajectory<'_>) -> f32 {
    drift_figures(tr).0
}

/// (f32 accumulation error, f64-accumulated position error): the second
/// separates the stored keys' error from f32 world-position rounding.
fn drift_figures(tr: &Trajectory<'_>) -> (f32, f64) {
    let d = tr.duration_s() as f64;
    if d <= 0.0 {
        return (0.0, 0.0);
    }
    let total = 100.0 * d;
    let dt = 1.0 / 30.0;
    let mut acc = RigidTransform::IDENTITY;
    let mut pos64 = [0.0f64; 3];
    let mut t = 0.0f64;
    let mut i = 0u64;
    while t < total {
        i += 1;
        let next = (i as f64 * dt).min(total);
        let step = tr.delta(t, next, true);
        let v = acc.rotation * step.translation;
        pos64[0] += v.x as f64;
        pos64[1] += v.y as f64;
        pos64[2] += v.z as f64;
        acc = acc * step;
        t = next;
    }
    let exact = tr.cycle().pow(100).translation;
    let e64 = ((pos64[0] - exact.x as f64).powi(2)
        + (pos64[1] - exact.y as f64).powi(2)
        + (pos64[2] - exact.z as f64).powi(2))
    .sqrt();
    ((acc.translation - exact).length(), e64)
}

/// Sample a pose grid shaped like `clip` (same rate, count, duration) at
/// `t` with the runtime's interpolation and `mode`'s loop semantics; exact
/// samples at `alpha == 0`, as every runtime decoder returns them.
fn sample_grid(
    clip: &ResampledClip,
    grid: &[Transform],
    mode: LoopMode,
    t: f32,
    out: &mut [Transform],
) -> bool {
    let j = clip.joint_count;
    if out.len() != j || grid.len() != clip.num_samples as usize * j {
        return false;
    }
    let p = sample_position(
        t,
        clip.duration_s,
        clip.sample_rate_hz,
        clip.num_samples,
        mode,
    );
    let (i0, i1) = (p.i0 as usize, p.i1 as usize);
    for (k, o) in out.iter_mut().enumerate() {
        let a = &grid[i0 * j + k];
        *o = if p.alpha == 0.0 {
            *a
        } else {
            interpolate(a, &grid[i1 * j + k], p.alpha)
        };
    }
    true
}

/// FNV-1a 64 over the bit patterns of reference transforms: the
/// reference's revision (changes whenever the values used change).
fn revision(values: &[Transform]) -> u64 {
    let mut bytes = Vec::with_capacity(values.len() * 40);
    for t in values {
        for v in t.to_array() {
            let v = if v == 0.0 { 0.0f32 } else { v };
            bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
    fnv1a64(&bytes)
}

fn convert_additive(
    skeleton: &Skeleton,
    clip: &mut ResampledClip,
    reference: &AdditiveReference,
    reference_clip: &dyn Fn(&str) -> Option<ResampledClip>,
    decisions: &mut Vec<Decision>,
) -> Result<PreparedAdditive, PrepareError> {
    let name = clip.name.clone();
    let joints = clip.joint_count;
    let n = clip.num_samples as usize;
    let fetch = |r: &str| -> Result<ResampledClip, PrepareError> {
        let c = reference_clip(r).ok_or_else(|| PrepareError::MissingReference {
            clip: name.clone(),
            reference: r.to_string(),
        })?;
        check_grid(&c, joints).map_err(|what| PrepareError::BadReference {
            clip: name.clone(),
            reference: r.to_string(),
            what,
        })?;
        Ok(c)
    };
    let frame_of = |src: &ResampledClip, r: &str, t: f32| -> Result<Vec<Transform>, PrepareError> {
        if !(t.is_finite() && t >= 0.0 && t <= src.duration_s) {
            return Err(PrepareError::BadReference {
                clip: name.clone(),
                reference: r.to_string(),
                what: format!(
                    "frame time {t} s is outside the reference's [0, {}] s",
                    src.duration_s
                ),
            });
        }
        let mut out = vec![Transform::IDENTITY; joints];
        sample_grid(src, &src.samples, LoopMode::Once, t, &mut out);
        Ok(out)
    };
    // The reference pose at every sample of this clip.
    let (label, base): (String, Vec<Transform>) = match reference {
        AdditiveReference::RestPose => ("rest".to_string(), skeleton.rest_pose().repeat(n)),
        AdditiveReference::Frame { clip: None, time_s } => {
            let f = frame_of(clip, &name, *time_s)?;
            (format!("frame '{name}'@{time_s}s"), f.repeat(n))
        }
        AdditiveReference::Frame {
            clip: Some(r),
            time_s,
        } => {
            let src = fetch(r)?;
            let f = frame_of(&src, r, *time_s)?;
            (format!("frame '{r}'@{time_s}s"), f.repeat(n))
        }
        AdditiveReference::Clip { name: r } => {
            let src = fetch(r)?;
            let mut base = vec![Transform::IDENTITY; n * joints];
            for i in 0..n {
                // Same time, clamped to the reference's duration.
                let t = (i as f32 / clip.sample_rate_hz).min(src.duration_s);
                sample_grid(
                    &src,
                    &src.samples,
                    LoopMode::Once,
                    t,
                    &mut base[i * joints..(i + 1) * joints],
                );
            }
            (format!("clip '{r}'"), base)
        }
    };
    for (a, r) in clip.samples.iter_mut().zip(&base) {
        *a = make_additive(a, r);
    }
    hemisphere_continuity(clip);
    let description = format!("{label} rev {:016x}", revision(&base));
    decisions.push(Decision::new(
        "additive_converted",
        format!(
            "clip '{name}': converted to additive deltas (Ludus local convention: dT = tA - tR, dQ = inverse(qR) * qA, dS = sA / sR) against {description}"
        ),
    ));
    Ok(PreparedAdditive {
        reference: description,
        base,
    })
}

type MarkerTrack = (Vec<Event>, Vec<(u64, String, MarkerKind)>);

fn prepare_markers(
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

/// Verify an additive clip in the seed's terms ("additive error checks must
/// use Ludus's actual additive equations and a representative base pose"):
/// at each of `times` the decoded deltas and the prepared deltas are both
/// applied at weight one onto the base pose (the reference at that time),
/// and the two results are compared in component space with the project's
/// one metric (`pose_errors`, virtual vertices at each joint's shell).
/// `defaults` are what the decoder fills untracked joints with
/// (`Package::sample_defaults`: the additive identity). `None` if the
/// prepared clip is not additive or a length disagrees.
pub fn verify_additive(
    skeleton: &Skeleton,
    prepared: &Prepared,
    decoded: &Clip<'_>,
    defaults: &[Transform],
    times: &[f32],
    shells: &[f32],
    thresholds: &[f32],
) -> Option<ErrorStats> {
    let n = skeleton.joint_count();
    if prepared.additive.is_none() || shells.len() != n || thresholds.len() != n {
        return None;
    }
    let mut delta = vec![Transform::IDENTITY; n];
    let mut expected_delta = vec![Transform::IDENTITY; n];
    let c = &prepared.clip;
    Some(verify_poses(
        skeleton,
        times,
        shells,
        thresholds,
        |t, expected, got| {
            decoded.sample(t, defaults, &mut delta)
                && sample_grid(c, &c.samples, c.loop_mode, t, &mut expected_delta)
                && prepared.apply_onto_base(t, &expected_delta, expected)
                && prepared.apply_onto_base(t, &delta, got)
        },
    ))
}

/// A copy of `skeleton` whose rest pose is the additive identity. The VBR
/// encoder strips tracks equal to the skeleton's rest value and the
/// decoder fills them from the caller's defaults; encoding (and verifying)
/// an additive clip against this skeleton makes the stripped value
/// [`ludus_anim_runtime::additive::ADDITIVE_IDENTITY`], the value
/// `Package::sample_defaults` hands the decoder for additive clips.
pub fn additive_skeleton(
    skeleton: &Skeleton,
) -> Result<Skeleton, ludus_anim_runtime::SkeletonError> {
    Skeleton::new(
        skeleton.parents().to_vec(),
        skeleton.ids().to_vec(),
        vec![ludus_anim_runtime::additive::ADDITIVE_IDENTITY; skeleton.joint_count()],
        skeleton.names().to_vec(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_runtime::math::{Quat, Vec3};
    use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};

    fn skeleton() -> Skeleton {
        let names = ["root", "pelvis", "spine"];
        Skeleton::new(
            vec![NO_PARENT, 0, 1],
            names.iter().map(|n| JointId::from_path(n)).collect(),
            vec![
                Transform::IDENTITY,
                Transform::new(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY, Vec3::ONE),
                Transform::new(Vec3::new(0.0, 0.3, 0.0), Quat::IDENTITY, Vec3::ONE),
            ],
            names.iter().map(|s| s.to_string()).collect(),
        )
        .expect("valid skeleton")
    }

    fn clip(sk: &Skeleton, n: u32, rate: f32) -> ResampledClip {
        ResampledClip {
            name: "c".into(),
            sample_rate_hz: rate,
            num_samples: n,
            duration_s: (n - 1) as f32 / rate,
            loop_mode: LoopMode::Once,
            joint_count: 3,
            samples: sk.rest_pose().repeat(n as usize),
            curves: vec![],
        }
    }

    fn none(_: &str) -> Option<ResampledClip> {
        None
    }

    #[test]
    fn near_matches_list_similar_names() {
        let sk = skeleton();
        assert_eq!(near_matches(&sk, "Pelvis"), vec!["pelvis".to_string()]);
        assert_eq!(near_matches(&sk, "spin"), vec!["spine".to_string()]);
        assert!(near_matches(&sk, "hand_l").is_empty());
        let e = prepare(
            &sk,
            clip(&sk, 3, 10.0),
            &ClipPrepSettings {
                root_motion: Some(RootMotionSettings {
                    joint: "Root".into(),
                    policy: RootMotionPolicy::Planar,
                }),
                ..Default::default()
            },
            &[1e-4; 3],
            &[0.1; 3],
            &none,
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("'Root'") && e.contains("root"), "{e}");
    }

    #[test]
    fn static_clip_auto_loops_and_drops_its_end() {
        let sk = skeleton();
        let p = prepare(
            &sk,
            clip(&sk, 11, 10.0),
            &ClipPrepSettings {
                drop_duplicate_end: true,
                ..Default::default()
            },
            &[1e-4; 3],
            &[0.1; 3],
            &none,
        )
        .expect("prepares");
        assert_eq!(p.clip.loop_mode, LoopMode::LoopWrap);
        assert_eq!(p.clip.num_samples, 10);
        assert_eq!(p.clip.duration_s, 1.0);
        assert_eq!(p.loop_seam_error_m, Some(0.0));
    }

    #[test]
    fn removal_of_a_non_root_joint_keeps_the_parent_chain() {
        let sk = skeleton();
        let mut pose = sk.rest_pose().to_vec();
        pose[0].rotation = Quat::from_rotation_y(0.7);
        pose[1].translation = Vec3::new(0.5, 1.0, 2.0);
        pose[1].rotation = Quat::from_rotation_y(0.3) * Quat::from_rotation_x(0.1);
        let mut comp = vec![Affine3A::IDENTITY; 3];
        sk.local_to_component(&pose, &mut comp);
        let k = extract_planar(rigid_of(&comp[1]));
        let before = comp[1];
        assert!(remove_motion(&sk, 1, &k, &mut pose));
        sk.local_to_component(&pose, &mut comp);
        let kinv = k.inverse();
        let want = Affine3A::from_rotation_translation(kinv.rotation, kinv.translation) * before;
        assert!((comp[1].translation - want.translation).length() < 1e-5);
        assert!(comp[1].matrix3.abs_diff_eq(want.matrix3, 1e-5));
        // Planar: on the origin's vertical, heading removed.
        assert!(comp[1].translation.x.abs() < 1e-5 && comp[1].translation.z.abs() < 1e-5);
        assert_eq!(pose[0].rotation, Quat::from_rotation_y(0.7));
    }
}
