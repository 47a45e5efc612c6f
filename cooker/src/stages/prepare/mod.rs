//! Prepare: a clip's playback semantics, baked on the resampled grid —
//! loop policy and seam, root-motion extraction, additive conversion,
//! markers and events (seed: "Prepare clip semantics: loop boundaries,
//! motion-root extraction, additive reference conversion, contact/sync
//! markers, curves, and event channels").
//!
//! # Where it runs
//! `import → normalize → resample → **prepare** → encode → verify →
//! package`. After resampling, because root extraction and additive
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
//! 6. Markers and events: validated, canonicalized for loops; contact
//!    windows as markers; control events once per time.
//! 7. Sync groups: the group's markers present, in its cyclic order.
//!
//! Adapted ideas: the duplicated-loop-sample removal and keeping the root
//! trajectory's endpoint follow ACL's documentation on looping clips
//! ("wrap" vs "clamp" loop policies); the additive equations and the
//! trajectory/event conventions are the Ludus seed's, implemented in the
//! runtime (`additive`, `root_motion`, `events`) and only called here.

mod additive;
mod markers;
mod root_motion;
mod sync;

pub use crate::settings::{
    AdditiveReference, ClipPrepSettings, LoopPolicy, MarkerSpec, RootMotionSettings,
};
pub use additive::{additive_skeleton, verify_additive, PreparedAdditive};
pub use ludus_anim_format::events::MarkerKind;
pub use ludus_anim_format::package::RootMotionPolicy;
pub use root_motion::{drift_100_loops, PreparedTrajectory};
pub use sync::PreparedSync;

use additive::convert_additive;
use markers::prepare_markers;
use root_motion::{drift_figures, extract_root_motion};
use sync::check_sync;

use crate::keys::{KeyInput, KeyWriter};
use crate::profile::{Profile, ShellSettings};
use crate::stage::{CookStage, Stage};
use crate::stages::resample::ResampleReport;
use ludus_anim_cache::Key;
use ludus_anim_format::additive::apply_additive;
use ludus_anim_format::events::Event;
use ludus_anim_format::math::Transform;
use ludus_anim_format::timing::LoopMode;
use ludus_anim_model::{Decision, Diagnostic, ResampledClip};
use ludus_anim_runtime::Skeleton;
use ludus_anim_verify::{pose_errors, Scratch};
use serde::{Deserialize, Serialize};

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
    /// The sync groups the clip is a member of, validated.
    pub sync: Vec<PreparedSync>,
    pub additive: Option<PreparedAdditive>,
    pub decisions: Vec<Decision>,
    /// What the stage found wrong but cooked anyway (a loop that pops),
    /// each naming the clip (and joint, time where known).
    pub warnings: Vec<Diagnostic>,
}

impl Prepared {
    /// Each event with its marker's name and kind, in track order.
    pub fn named_events(&self) -> impl Iterator<Item = (&Event, &str, MarkerKind)> {
        self.events.iter().map(|e| {
            let (name, kind) = self
                .event_names
                .iter()
                .find(|(id, _, _)| *id == e.id)
                .map_or(("", MarkerKind::Event), |(_, n, k)| (n.as_str(), *k));
            (e, name, kind)
        })
    }

    /// The additive base pose at time `t` of the prepared clip, with the
    /// runtime's interpolation and loop semantics. False if the clip is
    /// not additive or `out` has the wrong length.
    pub fn additive_base_at(&self, t: f32, out: &mut [Transform]) -> bool {
        let Some(a) = &self.additive else {
            return false;
        };
        self.clip
            .blend_grid(&a.base, self.clip.position(t, self.clip.loop_mode), out)
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

/// Serde for the runtime's `Event`: `(time_s, id, reversible)`.
mod serde_events {
    use ludus_anim_format::events::Event;
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
    #[error("clip '{clip}': sync group '{group}': {what}")]
    Sync {
        clip: String,
        group: String,
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

/// The prepare stage.
pub struct Prepare;

/// What preparing's key covers: the clip's grid, its prepare settings, the
/// loop-detection tolerance and shells (from the profile), and the grid an
/// additive reference reads.
pub struct PrepareSpec<'a> {
    pub resample: &'a Key,
    pub prep: &'a ClipPrepSettings,
    pub profile: &'a Profile,
    /// The resample key of the additive reference clip, if any.
    pub reference: Option<Key>,
}

impl KeyInput for PrepareSpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let PrepareSpec {
            resample,
            prep,
            profile,
            reference,
        } = self;
        k.put(*resample)
            .put(*prep)
            .put(&profile.sample_rate.max_resample_error_m)
            .put(&ShellSettings(profile))
            .put(reference);
    }
}

/// The grid, its skeleton, the per-joint shells, the additive reference's
/// grid on demand, and where (for diagnostics).
pub struct PrepareInput<'a> {
    pub skeleton: &'a Skeleton,
    pub clip: ResampledClip,
    /// The grid's resampling report, stored with the prepared clip.
    pub resample: ResampleReport,
    pub shells: &'a [f32],
    pub reference_clip: &'a dyn Fn(&str) -> Option<ResampledClip>,
    pub file: &'a str,
}

impl CookStage for Prepare {
    const STAGE: Stage = Stage::Prepare;
    type Spec<'a> = PrepareSpec<'a>;
    type Input<'a> = PrepareInput<'a>;
    type Output = PreparedClip;

    /// Loop detection uses the resampling tolerance, not the quality
    /// threshold, so a quality-only change re-runs nothing before encode.
    fn run(spec: &PrepareSpec<'_>, i: PrepareInput<'_>) -> Result<PreparedClip, Diagnostic> {
        let name = i.clip.name.clone();
        let tolerance =
            vec![spec.profile.sample_rate.max_resample_error_m; i.skeleton.joint_count()];
        let prep = spec.prep;
        let prepared = prepare(
            i.skeleton,
            i.clip,
            prep,
            &tolerance,
            i.shells,
            i.reference_clip,
        )
        .map_err(|e| {
            Diagnostic::error("prepare_failed", e.to_string())
                .file(i.file)
                .clip(&name)
        })?;
        Ok(PreparedClip {
            prepared,
            resample: i.resample,
        })
    }
}

/// What prepare stores: the prepared clip and its grid's resampling
/// report (figures, decisions, warnings), so a clip whose prepare hits is
/// not resampled.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct PreparedClip {
    pub prepared: Prepared,
    pub resample: ResampleReport,
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
    let mut notes = Notes::default();

    // 1. Root motion.
    let mut trajectory = match &settings.root_motion {
        Some(rm) => Some(extract_root_motion(
            skeleton,
            &mut clip,
            rm,
            &mut notes.decisions,
            &mut notes.warnings,
        )?),
        None => None,
    };

    // 2. Loop decision and seam, on the visual pose.
    let seam = Seam::measure(skeleton, &clip, thresholds, shells);
    let looping = decide_loop(
        &name,
        &clip,
        settings.loop_policy,
        &seam,
        trajectory.is_some(),
        &mut notes,
    );
    clip.loop_mode = if looping {
        LoopMode::Loop
    } else {
        LoopMode::Once
    };

    // 3. Drift (the trajectory is stored in full f32; this measures what
    // long looping traversal accumulates from it).
    if let (Some(t), true) = (trajectory.as_mut(), looping) {
        record_drift(&name, t, &mut notes);
    }

    // 4. Additive conversion.
    let mut additive = match &settings.additive {
        Some(r) => Some(convert_additive(
            skeleton,
            &mut clip,
            r,
            reference_clip,
            &mut notes.decisions,
        )?),
        None => None,
    };

    // 5. Drop the duplicated end sample.
    if settings.drop_duplicate_end {
        drop_duplicate_end(&mut clip, additive.as_mut(), looping, &seam, &mut notes);
    }

    // 6. Markers and events.
    let (events, event_names) = prepare_markers(
        &name,
        clip.duration_s,
        looping,
        &settings.markers,
        &settings.contacts,
        &mut notes.decisions,
    )?;
    let sync = check_sync(&name, &clip, &events, &event_names, &settings.sync)?;

    Ok(Prepared {
        clip,
        loop_seam_error_m: looping.then_some(seam.max_m),
        trajectory,
        events,
        event_names,
        sync,
        additive,
        decisions: notes.decisions,
        warnings: notes.warnings,
    })
}

/// What the stage decided and warned about, in order.
#[derive(Default)]
struct Notes {
    decisions: Vec<Decision>,
    warnings: Vec<Diagnostic>,
}

/// The difference between a clip's last and first poses.
struct Seam {
    /// Largest virtual-vertex distance over joints (meters).
    max_m: f32,
    /// Largest ratio of a joint's distance to its threshold.
    ratio: f32,
}

impl Seam {
    fn measure(
        skeleton: &Skeleton,
        clip: &ResampledClip,
        thresholds: &[f32],
        shells: &[f32],
    ) -> Seam {
        let joints = skeleton.joint_count();
        let n = clip.num_samples as usize;
        if n < 2 || clip.duration_s <= 0.0 {
            return Seam {
                max_m: 0.0,
                ratio: 0.0,
            };
        }
        let mut scratch = Scratch::new(joints);
        let mut pos_err = vec![0.0f32; joints];
        let mut rot_err = vec![0.0f32; joints];
        pose_errors(
            skeleton,
            clip.pose(0),
            clip.pose(n - 1),
            shells,
            &mut scratch,
            &mut pos_err,
            &mut rot_err,
        );
        let max_m = pos_err.iter().copied().fold(0.0f32, f32::max);
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
        Seam { max_m, ratio }
    }
}

/// Whether the clip loops under `policy`, recording why.
fn decide_loop(
    name: &str,
    clip: &ResampledClip,
    policy: LoopPolicy,
    seam: &Seam,
    root_removed: bool,
    notes: &mut Notes,
) -> bool {
    let duration = clip.duration_s;
    let seam_mm = seam.max_m * 1000.0;
    match policy {
        LoopPolicy::Once => false,
        LoopPolicy::Loop if duration <= 0.0 => {
            notes.warnings.push(
                Diagnostic::warning(
                    "loop_zero_duration",
                    "a zero-duration clip cannot loop; cooked as once",
                )
                .clip(name),
            );
            false
        }
        LoopPolicy::Loop => {
            notes.decisions.push(Decision::new(
                "loop_policy",
                format!("clip '{name}': looping by setting; seam error {seam_mm:.4} mm"),
            ));
            if seam.ratio > 1.0 {
                notes.warnings.push(
                    Diagnostic::warning(
                        "loop_seam",
                        format!(
                            "loop seam error {seam_mm:.4} mm exceeds the thresholds: the loop pops"
                        ),
                    )
                    .clip(name)
                    .time(duration),
                );
            }
            true
        }
        LoopPolicy::Auto => {
            let l = clip.num_samples >= 2 && duration > 0.0 && seam.ratio <= 1.0;
            if l {
                notes.decisions.push(Decision::new(
                    "loop_detected",
                    format!(
                        "clip '{name}': first and last poses match within the profile threshold (seam {seam_mm:.4} mm{}); cooked as looping",
                        if root_removed { ", root motion removed" } else { "" }
                    ),
                ));
            }
            l
        }
    }
}

/// Measure and record the trajectory's drift over 100 loops.
fn record_drift(name: &str, t: &mut PreparedTrajectory, notes: &mut Notes) {
    let figures = t.trajectory().ok().map(|tr| drift_figures(&tr));
    t.drift_100_loops_m = figures.map(|f| f.0);
    if let Some((d32, d64)) = figures {
        notes.decisions.push(Decision::new(
            "root_motion_drift",
            format!(
                "clip '{name}': composing 30 Hz deltas over 100 loops drifts {:.4} mm from C^100 ({:.4} mm with the position accumulated in f64)",
                d32 * 1000.0,
                d64 * 1000.0
            ),
        ));
    }
}

/// Drop a looping clip's last sample when it repeats the first
/// ([`LoopMode::LoopWrap`]), or record why it is kept.
fn drop_duplicate_end(
    clip: &mut ResampledClip,
    additive: Option<&mut PreparedAdditive>,
    looping: bool,
    seam: &Seam,
    notes: &mut Notes,
) {
    let (name, n, joints) = (
        clip.name.clone(),
        clip.num_samples as usize,
        clip.joint_count,
    );
    let (rate, duration) = (clip.sample_rate_hz, clip.duration_s);
    let on_grid = ((n as f64 - 1.0) / rate as f64 - duration as f64).abs() <= 1e-3 / rate as f64;
    let seam_mm = seam.max_m * 1000.0;
    if !looping {
        notes.decisions.push(Decision::new(
            "duplicate_end_kept",
            format!("clip '{name}': not looping; the end sample is kept"),
        ));
    } else if seam.ratio > 1.0 {
        notes.warnings.push(
            Diagnostic::warning(
                "loop_seam",
                format!("last sample differs from the first beyond the thresholds (seam {seam_mm:.4} mm); end sample kept"),
            )
            .clip(&name)
            .time(duration),
        );
    } else if !on_grid || n < 2 {
        notes.decisions.push(Decision::new(
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
        if let Some(a) = additive {
            a.base.truncate((n - 1) * joints);
        }
        clip.num_samples -= 1;
        clip.loop_mode = LoopMode::LoopWrap;
        notes.decisions.push(Decision::new(
            "duplicate_end_dropped",
            format!(
                "clip '{name}': last sample repeats the first (seam {seam_mm:.4} mm); stored {} samples, wrapping from the last to the first; duration stays {duration} s",
                n - 1
            ),
        ));
    }
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
    // Slack: float noise of a sample interval, and the f32 rounding of a
    // long duration (3333.3 s is 3333.30005 in f32, a hair past 99,999
    // samples at 30 Hz).
    let slack = 1e-3 / (clip.sample_rate_hz as f64) + 2.0 * f64::from(f32::EPSILON) * covered;
    if covered + slack < clip.duration_s as f64 {
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

#[cfg(test)]
mod tests {
    use super::root_motion::{remove_motion, rigid_of};
    use super::*;
    use ludus_anim_format::math::Affine3A;
    use ludus_anim_format::math::{Quat, Vec3};
    use ludus_anim_format::trajectory::extract_planar;
    use ludus_anim_model::suggest;
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
        assert_eq!(
            suggest::near_matches("Pelvis", sk.names().iter().map(String::as_str)),
            vec!["pelvis".to_string()]
        );
        assert_eq!(
            suggest::near_matches("spin", sk.names().iter().map(String::as_str)),
            vec!["spine".to_string()]
        );
        assert!(suggest::near_matches("hand_l", sk.names().iter().map(String::as_str)).is_empty());
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
