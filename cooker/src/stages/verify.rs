//! Verify: load the written package bytes through the runtime and compare
//! every clip, decoded, with its prepared source (codec error) and with the
//! authored curves (total error), at every sample, interior points of every
//! interval, across loop seams, at seeded random times, then at the peaks
//! found around the worst of those (`ludus_anim_verify::times`); the clip's
//! f32 floor (`ludus_anim_verify::floor`) is added to what was measured, so
//! the reported figures bound the error at any time. Additive clips are measured the way they are used:
//! decoded deltas applied onto their base pose, compared with the prepared
//! deltas applied onto the same base. Root-motion clips are compared with
//! the authored motion minus the same trajectory.

use super::prepare::{verify_additive, Prepared};
use super::resample::SourcePose;
use crate::keys::{KeyInput, KeyWriter};
use crate::package_writer::{write_package, PackageClip, PackageContents};
use crate::pipeline::curve_schema::CurveLayers;
use crate::stage::{CookStage, Stage};
use ludus_anim_cache::Key;
use ludus_anim_model::Diagnostic;
use ludus_anim_model::SourceKind;
use ludus_anim_model::{ResampledClip, SourceClip};
use ludus_anim_report::sidecar::quantize_errors;
use ludus_anim_runtime::package::{Clip, CurveChannel};
use ludus_anim_runtime::Package;
use ludus_anim_runtime::{Player, Request, Skeleton, Transform};
use ludus_anim_verify::{
    check_plan, velocity_errors, verify_clip, Decoders, ErrorStats, Grid, TimeCounts,
    VelocityStats, CODEC_FRACTIONS, SOURCE_FRACTIONS,
};
use std::time::Instant;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ClipVerification {
    /// Decoded vs the prepared grid, as measured (without the floor). Its
    /// per-time grid is moved to `times_s` / `error_q`.
    pub codec: ErrorStats,
    /// Every time the codec error was checked at, ascending. Not stored
    /// with the record (empty when served from the cache): the clip's
    /// sidecar record, its own entry, is the one place the grid is kept.
    #[serde(skip)]
    pub times_s: Vec<f32>,
    /// The codec error of every joint at every checked time, quantized
    /// against the joint's threshold and joint-major, exactly as the
    /// dashboard's sidecar stores it (`ludus_anim_report::sidecar::
    /// quantize_errors`). Not stored, like `times_s`.
    #[serde(skip)]
    pub error_q: Vec<u16>,
    /// The clip's f32 floor (`ludus_anim_verify::f32_floor`): added to the
    /// measured figures to bound the error between checked times.
    pub floor_m: f32,
    /// Decoded vs the authored curves, measured, plus the floor. Curve
    /// sources: checked at eighths of every interval, where nlerp departs
    /// most from slerp, at key times and just before them (STEP jumps) and
    /// random times, then at the peaks found around the worst. Sampled
    /// sources: at their frames (their contract).
    pub source_error_m: f32,
    /// Each joint's error against the authored curves, as measured
    /// (without the floor); additive clips: as used, applied onto their
    /// base (their codec figures).
    #[serde(default)]
    pub source_per_joint_m: Vec<f32>,
    /// The times `source_error_m` was measured at, by kind.
    pub source_counts: TimeCounts,
    /// Source kind the figures are for: `curves` (any time) or `frames`.
    pub contract: String,
    /// The decoded clip sampled for the dashboard's player
    /// (`crate::sidecar_poses`); `None` for additive clips (deltas, not
    /// poses). Not stored, like `times_s`.
    #[serde(skip)]
    pub poses: Option<ludus_anim_report::sidecar::Poses>,
    /// Runtime decode time per pose, measured in this cook. Not stored,
    /// so an entry is the same bytes on every machine: 0 when served from
    /// the cache.
    #[serde(skip)]
    pub decode_ns_per_pose: f64,
    /// Per scalar curve: largest difference between the decoded channel
    /// and the resampled one over the checked times.
    pub curve_errors: Vec<(String, f32)>,
    /// Decoded vs authored velocity of each joint over each sample
    /// interval, for profiles that set `velocity_threshold_mps`
    /// (`None` otherwise, and for additive clips, whose deltas have no
    /// motion of their own to compare).
    #[serde(default)]
    pub velocity: Option<VelocityStats>,
}

/// The verify stage.
pub struct Verify;

/// What verification's key covers: the encoded clip (whose key chains
/// everything upstream, thresholds included), the curve threshold and the
/// curve schema rules (a channel's interpolation and clamp change what is
/// measured).
pub struct VerifySpec<'a> {
    pub encode: &'a Key,
    pub curve_threshold: f32,
    pub curves: CurveLayers<'a>,
    /// The profile's `velocity_threshold_mps` (whether velocity is
    /// measured, and what the clip's warning is judged against).
    pub velocity_threshold: Option<f32>,
}

impl KeyInput for VerifySpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let VerifySpec {
            encode,
            curve_threshold,
            curves,
            velocity_threshold,
        } = self;
        k.put(*encode)
            .put(curve_threshold)
            .put(curves)
            .put(velocity_threshold);
    }
}

/// Verification's work: a check of the clip's package entry (what
/// [`verify_in_package`] does with the clip's inputs).
pub struct VerifyInput<'a> {
    pub check: &'a dyn Fn() -> Result<ClipVerification, Diagnostic>,
}

impl CookStage for Verify {
    const STAGE: Stage = Stage::Verify;
    type Spec<'a> = VerifySpec<'a>;
    type Input<'a> = VerifyInput<'a>;
    type Output = ClipVerification;

    fn run(_: &VerifySpec<'_>, i: VerifyInput<'_>) -> Result<ClipVerification, Diagnostic> {
        (i.check)()
    }
}

/// What verification measures besides the error bound: figures only the
/// report and the sidecar read, so the encoder's checks of candidate blobs
/// leave them out and the kept blob gets them once ([`add_extras`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extras {
    /// Each joint's velocity error (the profile's `velocity_threshold_mps`).
    pub velocity: bool,
    /// The decoded poses the dashboard's player draws.
    pub poses: bool,
    /// The report's decode time per pose (`decode_timing`): wall-clock
    /// work that says nothing about a candidate blob's error, so it is
    /// not part of the encoder's checks (nor of its `compress_ms`).
    pub decode_timing: bool,
}

impl Extras {
    /// Nothing besides the bound (an encoder candidate's check).
    pub const NONE: Extras = Extras {
        velocity: false,
        poses: false,
        decode_timing: false,
    };
}

/// Write a one-clip package holding `entry`, load it through the runtime
/// reader, and give `f` the decoded clip: exactly what a game would load.
fn with_decoded<R>(
    skeleton: &Skeleton,
    entry: &PackageClip,
    prepared: &Prepared,
    file: &str,
    f: impl FnOnce(&Package<'_>, &Clip<'_>) -> R,
) -> Result<R, Diagnostic> {
    let bytes = write_package(
        &PackageContents {
            cooker_version: crate::COOKER_VERSION.to_string(),
            asset_name: String::new(),
            source_path: file.to_string(),
            source_hash: entry.source_hash,
            skeleton,
            clips: vec![entry.clone()],
            skins: &[],
            bounds: &[],
            sockets: &[],
            joint_sets: None,
        },
        &[prepared],
    );
    let invalid = |what: String| {
        Diagnostic::error("package_invalid", what)
            .file(file)
            .clip(&entry.name)
    };
    let package = Package::load(&bytes)
        .map_err(|e| invalid(format!("the written package does not load: {e}")))?;
    let decoded = package
        .clips()
        .first()
        .ok_or_else(|| invalid("clip missing from package".into()))?;
    if let Some(what) = schema_mismatch(entry, package.clip_curves(decoded)) {
        return Err(invalid(what));
    }
    Ok(f(&package, decoded))
}

/// Verify the clip as a game loads it (a one-clip package holding
/// `entry`, read back through the runtime).
#[allow(clippy::too_many_arguments)]
pub fn verify_in_package(
    skeleton: &Skeleton,
    entry: &PackageClip,
    prepared: &Prepared,
    source: &SourceClip,
    thresholds: &[f32],
    shells: &[f32],
    floor_m: f32,
    kind: SourceKind,
    extras: Extras,
    file: &str,
) -> Result<ClipVerification, Diagnostic> {
    with_decoded(skeleton, entry, prepared, file, |package, decoded| {
        let mut v = verify(
            skeleton,
            decoded,
            package.clip_curves(decoded),
            package.sample_defaults(decoded),
            prepared,
            source,
            thresholds,
            shells,
            floor_m,
            kind,
        );
        measure_extras(&mut v, extras, skeleton, package, decoded, prepared, source);
        v
    })
}

/// Add `extras` to a verification made without them (the encoder's check
/// of the blob it kept).
pub fn add_extras(
    v: &mut ClipVerification,
    extras: Extras,
    skeleton: &Skeleton,
    entry: &PackageClip,
    prepared: &Prepared,
    source: &SourceClip,
    file: &str,
) -> Result<(), Diagnostic> {
    if extras == Extras::NONE {
        return Ok(());
    }
    with_decoded(skeleton, entry, prepared, file, |package, decoded| {
        measure_extras(v, extras, skeleton, package, decoded, prepared, source)
    })
}

fn measure_extras(
    v: &mut ClipVerification,
    extras: Extras,
    skeleton: &Skeleton,
    package: &Package<'_>,
    decoded: &Clip<'_>,
    prepared: &Prepared,
    source: &SourceClip,
) {
    if extras.decode_timing {
        let defaults = package.sample_defaults(decoded);
        v.decode_ns_per_pose = decode_timing(skeleton, decoded, defaults);
    }
    // Additive clips hold differences from a base pose, not poses.
    if prepared.additive.is_some() {
        return;
    }
    if extras.velocity {
        v.velocity = Some(velocity(skeleton, decoded, prepared, source));
    }
    if extras.poses {
        let defaults = package.sample_defaults(decoded);
        v.poses = crate::sidecar_poses::decoded_poses(skeleton, decoded, defaults);
    }
}

/// Verify one decoded clip. `defaults` are what the decoder fills stripped
/// tracks with (`Package::sample_defaults`); `floor_m` is the clip's f32
/// floor (`ludus_anim_verify::f32_floor` of the prepared samples, which
/// the encoder measured).
#[allow(clippy::too_many_arguments)]
pub fn verify(
    skeleton: &Skeleton,
    decoded: &Clip<'_>,
    decoded_curves: &[CurveChannel<'_>],
    defaults: &[Transform],
    prepared: &Prepared,
    source: &SourceClip,
    thresholds: &[f32],
    shells: &[f32],
    floor_m: f32,
    kind: SourceKind,
) -> ClipVerification {
    let clip = &prepared.clip;
    let grid = Grid {
        duration_s: clip.duration_s,
        sample_rate_hz: clip.sample_rate_hz,
        num_samples: clip.num_samples,
        looping: clip.loop_mode.is_looping(),
    };
    let plan = check_plan(grid, &CODEC_FRACTIONS, &[]);
    // Peaks are searched within a quarter interval of the worst times.
    let h = 0.25 / clip.sample_rate_hz;
    let mut codec = match verify_additive(
        skeleton,
        prepared,
        decoded,
        defaults,
        &plan.times,
        shells,
        thresholds,
    ) {
        Some(stats) => stats,
        None => verify_clip(
            skeleton,
            decoded,
            Decoders::Both,
            &plan.times,
            h,
            shells,
            thresholds,
            |t, out| {
                clip.sample(t, out);
            },
        ),
    };
    codec.counts = TimeCounts {
        refined: codec.counts.refined,
        ..plan.counts
    };
    let times_s = std::mem::take(&mut codec.times_s);
    let error_q = quantize_errors(
        times_s.len(),
        &std::mem::take(&mut codec.errors_m),
        thresholds,
    );
    // The additive figures are measured applied onto the base pose; their
    // floor is that of the deltas, measured as poses.
    let (source_error_m, source_counts, source_per_joint_m) = if prepared.additive.is_some() {
        (
            codec.max_error_m,
            codec.counts,
            codec.per_joint_max_m.clone(),
        )
    } else {
        source_error(
            skeleton, decoded, prepared, source, thresholds, shells, kind,
        )
    };
    let source_error_m = source_error_m + floor_m;
    let curve_errors = curve_errors(decoded, decoded_curves, clip, &plan.times);
    ClipVerification {
        codec,
        times_s,
        error_q,
        poses: None,
        floor_m,
        source_error_m,
        source_per_joint_m,
        source_counts,
        contract: match kind {
            SourceKind::Curves => "curves",
            SourceKind::Samples => "frames",
        }
        .to_string(),
        decode_ns_per_pose: 0.0,
        curve_errors,
        velocity: None,
    }
}

/// Decoded vs the authored curves, measured. Curve sources: at
/// `SOURCE_FRACTIONS` of every interval, key times and the instants before
/// them, random times, then the peaks around the worst (an eighth of an
/// interval either side). Sampled sources: at their key times (frames) and
/// the grid's samples, no peak search (between frames the source has no
/// motion of its own; the runtime's interpolation is the contract).
#[allow(clippy::too_many_arguments)]
fn source_error(
    skeleton: &Skeleton,
    decoded: &Clip<'_>,
    prepared: &Prepared,
    source: &SourceClip,
    thresholds: &[f32],
    shells: &[f32],
    kind: SourceKind,
) -> (f32, TimeCounts, Vec<f32>) {
    let clip = &prepared.clip;
    let looping = clip.loop_mode.is_looping();
    let grid = Grid {
        duration_s: clip.duration_s,
        sample_rate_hz: clip.sample_rate_hz,
        num_samples: clip.num_samples,
        looping,
    };
    let (times, h, mut counts) = match kind {
        SourceKind::Curves => {
            let plan = check_plan(grid, &SOURCE_FRACTIONS, &source.key_times);
            (plan.times, 0.125 / clip.sample_rate_hz, plan.counts)
        }
        SourceKind::Samples => {
            let mut t: Vec<f32> = (0..clip.num_samples)
                .map(|i| (i as f32 / clip.sample_rate_hz).min(clip.duration_s))
                .collect();
            t.dedup();
            let samples = t.len();
            t.extend(
                source
                    .key_times
                    .iter()
                    .copied()
                    .filter(|t| (0.0..=clip.duration_s).contains(t)),
            );
            t.sort_by(f32::total_cmp);
            t.dedup();
            let counts = TimeCounts {
                samples,
                keys: t.len() - samples,
                ..TimeCounts::default()
            };
            (t, 0.0, counts)
        }
    };
    // The codec pass compared the two decoders at every sample, quarter
    // point, seam and random time; this pass plays.
    let total = verify_clip(
        skeleton,
        decoded,
        Decoders::Playing,
        &times,
        h,
        shells,
        thresholds,
        authored(skeleton, prepared, source),
    );
    counts.refined = total.counts.refined;
    (total.max_error_m, counts, total.per_joint_max_m)
}

/// The authored local pose at any time, as the package means it: looping
/// clips wrap, the extracted root motion is taken out.
fn authored<'a>(
    skeleton: &'a Skeleton,
    prepared: &'a Prepared,
    source: &'a SourceClip,
) -> impl FnMut(f32, &mut [Transform]) + 'a {
    let src = SourcePose::new(source, skeleton);
    let clip = &prepared.clip;
    let (looping, dur) = (clip.loop_mode.is_looping(), clip.duration_s);
    move |t, out| {
        let t = if looping && dur > 0.0 {
            t.rem_euclid(dur)
        } else {
            t
        };
        src.evaluate(t, out);
        if let Some(tr) = &prepared.trajectory {
            tr.remove_from_pose(skeleton, t, out);
        }
    }
}

/// Decoded vs authored velocity over each sample interval (the grid's
/// samples and the end; a wrap loop's seam interval included).
fn velocity(
    skeleton: &Skeleton,
    decoded: &Clip<'_>,
    prepared: &Prepared,
    source: &SourceClip,
) -> VelocityStats {
    let clip = &prepared.clip;
    let mut times: Vec<f32> = (0..clip.num_samples)
        .map(|i| (i as f32 / clip.sample_rate_hz).min(clip.duration_s))
        .chain([clip.duration_s])
        .collect();
    times.dedup();
    let rest = skeleton.rest_pose();
    let mut reference = authored(skeleton, prepared, source);
    velocity_errors(skeleton, &times, |t, expected, actual| {
        reference(t, expected);
        decoded.sample(t, rest, actual).is_ok()
    })
}

/// Decoded scalar curves against the resampled ones, each interpolated
/// as its schema says: a stepped channel holds sample `i0` (it is never
/// interpolated), a clamped one is compared with its samples clamped.
fn curve_errors(
    decoded: &Clip<'_>,
    channels: &[CurveChannel<'_>],
    clip: &ResampledClip,
    times: &[f32],
) -> Vec<(String, f32)> {
    clip.curves
        .iter()
        .map(|c| {
            let ch = channels.iter().find(|ch| ch.id() == c.id);
            let err = times
                .iter()
                .map(|&t| {
                    let p = decoded.position(t);
                    let a = c.values.get(p.i0 as usize).copied().unwrap_or(c.default);
                    let b = c.values.get(p.i1 as usize).copied().unwrap_or(c.default);
                    match ch {
                        Some(ch) => (ch.evaluate(p) - expected(ch, a, b, p.alpha)).abs(),
                        None => f32::INFINITY,
                    }
                })
                .fold(0.0f32, f32::max);
            (c.name.clone(), err)
        })
        .collect()
}

/// The first channel whose decoded schema is not the one written (the
/// curve errors measure each channel by its decoded schema, so this is
/// what ties them to the schema the cook resolved).
fn schema_mismatch(entry: &PackageClip, channels: &[CurveChannel<'_>]) -> Option<String> {
    entry.curves.iter().find_map(|e| {
        let ch = channels.iter().find(|ch| ch.id() == e.id);
        let same = ch.is_some_and(|ch| {
            let r = ch.record();
            (r.step, r.composition, r.clamp) == (e.step, e.composition, e.clamp)
                && r.default_value.to_bits() == e.default.to_bits()
                && (r.range.0.to_bits(), r.range.1.to_bits())
                    == (e.range.0.to_bits(), e.range.1.to_bits())
        });
        (!same).then(|| format!("curve '{}' does not decode with the schema written", e.name))
    })
}

/// What channel `ch` should return between samples valued `a` and `b`.
fn expected(ch: &CurveChannel<'_>, a: f32, b: f32, alpha: f32) -> f32 {
    let r = ch.record();
    let clamp = |v: f32| {
        if r.clamp {
            v.max(r.range.0).min(r.range.1)
        } else {
            v
        }
    };
    let (a, b) = (clamp(a), clamp(b));
    if r.step || alpha == 0.0 {
        a
    } else {
        a + (b - a) * alpha
    }
}

/// Median of 5 batches of the mean time to decode a full pose at 128
/// pseudo-random times (fixed seed), warm cache, through a playing
/// instance (`Player`, seeking to each time): the figure the report shows
/// beside bytes and error. Indicative only (it shares the core with the
/// cook); `ludus-anim bench` is the measurement.
pub fn decode_timing(skeleton: &Skeleton, clip: &Clip<'_>, defaults: &[Transform]) -> f64 {
    let mut out = vec![Transform::IDENTITY; skeleton.joint_count()];
    let Ok(mut player) = Player::new(clip, defaults) else {
        return 0.0;
    };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut times = [0.0f32; 128];
    for t in times.iter_mut() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *t = (seed >> 40) as f32 / (1u64 << 24) as f32 * clip.duration_s();
    }
    let mut batches = Vec::with_capacity(5);
    for _ in 0..5 {
        let start = Instant::now();
        for &t in &times {
            player.seek(t);
            std::hint::black_box(player.decode(Request::Pose, &mut out).is_ok());
            std::hint::black_box(&out);
        }
        batches.push(start.elapsed().as_nanos() as f64 / times.len() as f64);
    }
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}
