//! Resample: authored curves → a uniform grid the runtime interpolates.
//!
//! The rate comes from the profile (the file's frame rate, the glTF key
//! spacing, or a fixed rate). The stage then checks what the runtime will
//! actually play — lerp/nlerp between samples — against the authored
//! interpolation *between* samples (eighths of every interval and the two
//! points where nlerp departs most from slerp, then a peak search around
//! the worst), in component space on virtual vertices. glTF LINEAR rotation is slerp, so
//! fast motion at a low rate can differ by centimetres mid-interval; where
//! the error exceeds the profile's tolerance the rate doubles, up to the
//! profile's maximum.

use crate::keys::{KeyInput, KeyWriter};
use crate::profile::{Profile, RatePolicy, SampleRate, ShellSettings};
use crate::stage::{CookStage, Stage};
use ludus_anim_cache::Key;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_format::timing::LoopMode;
use ludus_anim_model::curve::Interpolation;
use ludus_anim_model::limits::{Limit, LimitExceeded, Limits, BYTES_PER_JOINT_SAMPLE};
use ludus_anim_model::resampled::{ResampledClip, ResampledCurve};
use ludus_anim_model::{Decision, Diagnostic, SourceClip};
use ludus_anim_runtime::{Skeleton, Transform};
use ludus_anim_verify::{golden_max, position_errors, Scratch, PEAK_SEARCHES, SOURCE_FRACTIONS};

/// Evaluates a clip's authored curves into a full local pose.
pub struct SourcePose<'a> {
    clip: &'a SourceClip,
    rest: &'a [Transform],
}

impl<'a> SourcePose<'a> {
    pub fn new(clip: &'a SourceClip, skeleton: &'a Skeleton) -> Self {
        SourcePose {
            clip,
            rest: skeleton.rest_pose(),
        }
    }

    /// The authored pose at `t` (clamped to the clip's span).
    pub fn evaluate(&self, t: f32, out: &mut [Transform]) {
        self.clip.sample_pose(self.rest, t, out);
    }
}

/// What the stage decided and measured.
#[derive(Clone, Debug, Default, serde::Serialize, serde::Deserialize)]
pub struct ResampleReport {
    pub sample_rate_hz: f32,
    pub resample_error_m: f32,
    /// Each joint's resampling error (the grid against the authored
    /// curves): the share of the joint's error budget resampling took,
    /// which the encoder's share is reduced by (`codec_thresholds`).
    #[serde(default)]
    pub per_joint_m: Vec<f32>,
    pub worst_joint: usize,
    pub worst_time_s: f32,
    pub decisions: Vec<Decision>,
    /// What could not be met, naming the joint and time where known.
    pub warnings: Vec<Diagnostic>,
}

pub use ludus_anim_model::SourceKind;

/// Source rate from key spacing: the smallest gap between consecutive
/// keys *of one curve*, over all curves (the union of all key times would
/// invent a rate from unrelated tracks' offsets), snapped to a whole number
/// of hertz when within 0.5%.
pub fn key_spacing_rate(clip: &SourceClip) -> Option<f32> {
    fn gaps<T>(keys: &[ludus_anim_model::Key<T>]) -> f32 {
        keys.windows(2)
            .map(|w| w[1].time - w[0].time)
            .filter(|&d| d > 1e-4)
            .fold(f32::INFINITY, f32::min)
    }
    let mut min_dt = f32::INFINITY;
    for tr in &clip.tracks {
        if let Some(c) = &tr.translation {
            min_dt = min_dt.min(gaps(&c.keys));
        }
        if let Some(c) = &tr.rotation {
            min_dt = min_dt.min(gaps(&c.keys));
        }
        if let Some(c) = &tr.scale {
            min_dt = min_dt.min(gaps(&c.keys));
        }
    }
    for c in &clip.curves {
        min_dt = min_dt.min(gaps(&c.curve.keys));
    }
    if !min_dt.is_finite() {
        return None;
    }
    let r = 1.0 / min_dt;
    let snapped = r.round();
    Some(if snapped > 0.0 && (r - snapped).abs() / snapped < 0.005 {
        snapped
    } else {
        r
    })
}

/// A grid time within float noise of a key time is that key time: `i /
/// rate` can land a hair before a key, where a STEP curve still holds the
/// previous value.
fn snap_to_key(t: f32, key_times: &[f32], rate: f32) -> f32 {
    let eps = 1e-3 / rate;
    let i = key_times.partition_point(|&k| k < t);
    [i.checked_sub(1), Some(i)]
        .into_iter()
        .flatten()
        .filter_map(|i| key_times.get(i).copied())
        .find(|k| (k - t).abs() <= eps)
        .unwrap_or(t)
}

/// The smallest whole multiple of `rate` within `max_hz` whose grid holds
/// every key time, so authored keys, kinks and STEP jumps are samples
/// (keys exported with a gap often sit on a finer lattice than their
/// smallest spacing suggests).
fn key_aligned_rate(rate: f32, key_times: &[f32], max_hz: f32) -> Option<f32> {
    let on_grid = |r: f32| {
        key_times.iter().all(|&t| {
            let p = t * r;
            (p - p.round()).abs() < 1e-3
        })
    };
    (1..=256)
        .map(|m| {
            // 2.4000003 Hz x 10 is 24 Hz.
            let r = rate * m as f32;
            if (r - r.round()).abs() < 1e-3 * r {
                r.round()
            } else {
                r
            }
        })
        .take_while(|&r| r <= max_hz)
        .find(|&r| on_grid(r))
}

/// The next rate to try when `rate` misses the tolerance: double it, or,
/// where doubling passes `max_hz`, the largest whole multiple of `base`
/// (the key-aligned starting rate, so keys stay samples) within it.
fn raised_rate(rate: f32, base: f32, max_hz: f32) -> Option<f32> {
    if rate * 2.0 <= max_hz {
        return Some(rate * 2.0);
    }
    let top = (max_hz / base).floor() * base;
    (top > rate * 1.0001).then_some(top)
}

fn sample_grid(
    clip: &SourceClip,
    skeleton: &Skeleton,
    rate: f32,
    loop_mode: LoopMode,
) -> ResampledClip {
    let n = ResampledClip::samples_for(clip.duration_s, rate);
    let joints = skeleton.joint_count();
    let src = SourcePose::new(clip, skeleton);
    let mut samples = vec![Transform::IDENTITY; n as usize * joints];
    for i in 0..n as usize {
        let t = snap_to_key(i as f32 / rate, &clip.key_times, rate);
        src.evaluate(t, &mut samples[i * joints..(i + 1) * joints]);
    }
    // Keep each joint's rotation samples in one hemisphere so the
    // runtime's shortest-path nlerp and the encoder see continuous data.
    for i in 1..n as usize {
        for j in 0..joints {
            let prev = samples[(i - 1) * joints + j].rotation;
            let q = &mut samples[i * joints + j].rotation;
            if prev.dot(*q) < 0.0 {
                *q = -*q;
            }
        }
    }
    let curves = clip
        .curves
        .iter()
        .map(|c| ResampledCurve {
            name: c.name.clone(),
            id: fnv1a64(c.name.as_bytes()),
            default: c.default,
            values: (0..n)
                .map(|i| {
                    c.curve
                        .evaluate(
                            snap_to_key(i as f32 / rate, &clip.key_times, rate)
                                .min(clip.duration_s),
                        )
                        .unwrap_or(c.default)
                })
                .collect(),
        })
        .collect();
    ResampledClip {
        name: clip.name.clone(),
        sample_rate_hz: rate,
        num_samples: n,
        duration_s: clip.duration_s,
        loop_mode,
        joint_count: joints,
        samples,
        curves,
    }
}

/// Where time `t` falls on a grid at `rate`: `Ok(k)` if it is sample `k`
/// (within float noise), `Err(i)` if it is inside interval `[i, i+1)`.
fn grid_slot(t: f32, rate: f32) -> Result<i64, i64> {
    let p = t * rate;
    let r = p.round();
    if (p - r).abs() < 1e-3 {
        Ok(r as i64)
    } else {
        Err(p.floor() as i64)
    }
}

/// Intervals `[i, i+1)` whose authored motion has a STEP discontinuity:
/// no linear runtime reproduces a jump between samples, so they are
/// excluded from the rate decision and reported.
fn step_intervals(clip: &SourceClip, rate: f32, n: u32) -> Vec<bool> {
    let mut out = vec![false; n as usize];
    let mut mark = |t: f32| {
        // A jump at sample k lies in the interval ending at k.
        let i = match grid_slot(t, rate) {
            Ok(k) => k - 1,
            Err(i) => i,
        };
        if i >= 0 && (i as usize) < out.len() {
            out[i as usize] = true;
        }
    };
    for tr in &clip.tracks {
        if let Some(c) = tr
            .translation
            .as_ref()
            .filter(|c| c.interpolation == Interpolation::Step)
        {
            c.keys.iter().for_each(|k| mark(k.time));
        }
        if let Some(c) = tr
            .rotation
            .as_ref()
            .filter(|c| c.interpolation == Interpolation::Step)
        {
            c.keys.iter().for_each(|k| mark(k.time));
        }
        if let Some(c) = tr
            .scale
            .as_ref()
            .filter(|c| c.interpolation == Interpolation::Step)
        {
            c.keys.iter().for_each(|k| mark(k.time));
        }
    }
    out
}

struct Measured {
    max: f32,
    joint: usize,
    time: f32,
    /// Each joint's largest error (NaN as infinity).
    per_joint: Vec<f32>,
    skipped_step_intervals: usize,
}

fn measure(
    clip: &SourceClip,
    skeleton: &Skeleton,
    grid: &ResampledClip,
    shells: &[f32],
    kind: SourceKind,
) -> Measured {
    let mut m = Measured {
        max: 0.0,
        joint: 0,
        time: 0.0,
        per_joint: vec![0.0; skeleton.joint_count()],
        skipped_step_intervals: 0,
    };
    let steps = step_intervals(clip, grid.sample_rate_hz, grid.num_samples);
    let fractions: &[f32] = match kind {
        SourceKind::Curves => &SOURCE_FRACTIONS,
        SourceKind::Samples => &[],
    };
    // Every source key time, every grid sample, and (curves) eighths and
    // the nlerp/slerp peaks between samples, except intervals holding a
    // STEP jump; then the peaks around the worst of those.
    let rate = grid.sample_rate_hz;
    let inside_step = |t: f32| match grid_slot(t, rate) {
        Ok(_) => false,
        Err(i) => i >= 0 && steps.get(i as usize).copied().unwrap_or(false),
    };
    let mut times: Vec<f32> = clip
        .key_times
        .iter()
        .copied()
        .filter(|&t| (0.0..=clip.duration_s).contains(&t) && !inside_step(t))
        .collect();
    for i in 0..grid.num_samples as usize {
        let t = (i as f32 / grid.sample_rate_hz).min(clip.duration_s);
        if !inside_step(t) {
            times.push(t);
        }
        if steps.get(i).copied().unwrap_or(false) {
            m.skipped_step_intervals += usize::from(!fractions.is_empty());
            continue;
        }
        for &f in fractions {
            let t = (i as f32 + f) / grid.sample_rate_hz;
            if t < clip.duration_s {
                times.push(t);
            }
        }
    }
    let mut probe = Probe::new(clip, skeleton, grid, shells);
    let mut found: Vec<(f32, f32)> = times.iter().map(|&t| (probe.at(t, &mut m), t)).collect();
    if !fractions.is_empty() {
        found.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.total_cmp(&b.1)));
        let end = clip.duration_s;
        for &(_, t) in found.iter().take(PEAK_SEARCHES) {
            golden_max(t, 0.125 / rate, |x| {
                let x = x.min(end);
                if inside_step(x) {
                    0.0
                } else {
                    probe.at(x, &mut m)
                }
            });
        }
    }
    m
}

/// The authored pose against the runtime's interpolation of the grid.
struct Probe<'a> {
    clip: &'a SourceClip,
    skeleton: &'a Skeleton,
    grid: &'a ResampledClip,
    shells: &'a [f32],
    src: SourcePose<'a>,
    scratch: Scratch,
    expected: Vec<Transform>,
    played: Vec<Transform>,
    pos: Vec<f32>,
}

impl<'a> Probe<'a> {
    fn new(
        clip: &'a SourceClip,
        skeleton: &'a Skeleton,
        grid: &'a ResampledClip,
        shells: &'a [f32],
    ) -> Self {
        let joints = skeleton.joint_count();
        Probe {
            clip,
            skeleton,
            grid,
            shells,
            src: SourcePose::new(clip, skeleton),
            scratch: Scratch::new(joints),
            expected: vec![Transform::IDENTITY; joints],
            played: vec![Transform::IDENTITY; joints],
            pos: vec![0.0; joints],
        }
    }

    /// The largest error at `t`, recorded into `m` if it is the worst.
    fn at(&mut self, t: f32, m: &mut Measured) -> f32 {
        let rate = self.grid.sample_rate_hz;
        self.src.evaluate(
            snap_to_key(t, &self.clip.key_times, rate),
            &mut self.expected,
        );
        let g = self.grid;
        g.blend_grid(&g.samples, g.position(t, LoopMode::Once), &mut self.played);
        position_errors(
            self.skeleton,
            &self.expected,
            &self.played,
            self.shells,
            &mut self.scratch,
            &mut self.pos,
        );
        let mut worst = 0.0f32;
        for (j, &e) in self.pos.iter().enumerate() {
            // NaN counts as the worst error.
            let e = if e.is_nan() { f32::INFINITY } else { e };
            worst = worst.max(e);
            if let Some(pj) = m.per_joint.get_mut(j) {
                *pj = pj.max(e);
            }
            if e > m.max {
                m.max = e;
                m.joint = j;
                m.time = t;
            }
        }
        worst
    }
}

/// How large a grid the resampler may allocate.
#[derive(Clone, Copy, Debug)]
/// The resample stage.
pub struct Resample;

/// What a clip's resampling key covers: the asset it comes from, the
/// source clip and cut, the source kind and the profile's sample-rate
/// table and shell settings.
pub struct ResampleSpec<'a> {
    /// Normalize's key, or the retarget stage's for a retargeted asset.
    pub upstream: &'a Key,
    pub source_clip: &'a str,
    pub range: Option<(f32, f32)>,
    pub kind: SourceKind,
    pub profile: &'a Profile,
}

impl KeyInput for ResampleSpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let ResampleSpec {
            upstream,
            source_clip,
            range,
            kind,
            profile,
        } = self;
        k.put(*upstream)
            .put(*source_clip)
            .put(range)
            .put(kind)
            .put(&profile.sample_rate)
            .put(&ShellSettings(profile));
    }
}

/// The authored clip (cut), its skeleton, the per-joint shells, the grid's
/// limits, and the file for diagnostics.
pub struct ResampleInput<'a> {
    pub clip: &'a SourceClip,
    pub skeleton: &'a Skeleton,
    pub shells: &'a [f32],
    pub limits: GridLimits,
    pub file: &'a str,
}

impl CookStage for Resample {
    const STAGE: Stage = Stage::Resample;
    type Spec<'a> = ResampleSpec<'a>;
    type Input<'a> = ResampleInput<'a>;
    type Output = (ResampledClip, ResampleReport);
    /// Only prepare reads the grid, on its misses, and prepare's record
    /// carries the report: stored, the grid would be read by nobody.
    const CACHED: bool = false;

    fn run(spec: &ResampleSpec<'_>, i: ResampleInput<'_>) -> Result<Self::Output, Diagnostic> {
        let policy = &spec.profile.sample_rate;
        resample(
            i.clip,
            i.skeleton,
            policy,
            i.shells,
            spec.kind,
            LoopMode::Once,
            &i.limits,
        )
        .map_err(|e| e.file(i.file).diagnostic())
    }
}

pub struct GridLimits {
    pub max_samples: u64,
    /// Estimated bytes the grid and its later stages may use
    /// ([`BYTES_PER_JOINT_SAMPLE`] per joint and sample).
    pub max_bytes: u64,
    /// Encode work per sample (the sum of the skeleton's joint depths)
    /// and the most a clip may take (`max_encode_work`).
    pub work_per_sample: u64,
    pub max_work: u64,
}

/// The sample count of `clip`'s grid at `rate`, if `limits` allow it:
/// computed in f64 before anything is allocated (an absurd rate or a
/// 10^9-second clip would otherwise overflow the count or exhaust memory).
pub fn check_grid(
    clip: &SourceClip,
    joints: usize,
    rate: f32,
    limits: &GridLimits,
) -> Result<u32, LimitExceeded> {
    let named = |e: LimitExceeded| e.clip(clip.name.clone());
    let samples = (f64::from(clip.duration_s) * f64::from(rate)).ceil() + 1.0;
    let max = limits.max_samples.min(u64::from(u32::MAX - 1));
    if !(rate.is_finite() && rate > 0.0 && samples <= max as f64) {
        let what = format!("samples at {rate} Hz over {} s", clip.duration_s);
        return Err(named(LimitExceeded::new(
            Limit::SamplesPerClip,
            what,
            samples,
            max,
        )));
    }
    let bytes = (samples as u64)
        .saturating_mul(joints as u64)
        .saturating_mul(BYTES_PER_JOINT_SAMPLE);
    Limits::check(
        Limit::AssetMemory,
        &format!("estimated memory (bytes) for {samples} samples of {joints} joints"),
        bytes,
        limits.max_bytes,
    )
    .map_err(named)?;
    Limits::check(
        Limit::EncodeWork,
        &format!(
            "encode work ({samples} samples x joint depth sum {})",
            limits.work_per_sample
        ),
        (samples as u64).saturating_mul(limits.work_per_sample),
        limits.max_work,
    )
    .map_err(named)?;
    Ok(ResampledClip::samples_for(clip.duration_s, rate))
}

/// The rate resampling starts from, per the profile's policy (the file's
/// frame rate, the key spacing, or the fixed rate), clamped to the
/// profile's range and, for the source policy, raised to the lowest rate
/// that puts every key time on a sample; each step a recorded decision.
fn starting_rate(
    clip: &SourceClip,
    policy: &SampleRate,
    kind: SourceKind,
    decisions: &mut Vec<Decision>,
) -> f32 {
    let (mut rate, why) = match (policy.policy, kind) {
        (RatePolicy::Fixed, _) => (policy.rate_hz, "the profile's fixed rate".to_string()),
        (RatePolicy::Source, _) => match clip.frame_rate_hz.filter(|r| r.is_finite() && *r > 0.0) {
            Some(r) => (r, "the file's frame rate".to_string()),
            None => match key_spacing_rate(clip) {
                Some(r) => (r, "the source key spacing".to_string()),
                None => (
                    policy.rate_hz,
                    "the profile's default (the clip has a single key time)".to_string(),
                ),
            },
        },
    };
    if rate < policy.min_hz || rate > policy.max_hz {
        let c = rate.clamp(policy.min_hz, policy.max_hz);
        decisions.push(Decision::new(
            "sample_rate_clamped",
            format!("{rate} Hz from {why} clamped to the profile's range: {c} Hz"),
        ));
        rate = c;
    } else {
        decisions.push(Decision::new(
            "sample_rate",
            format!("{rate} Hz from {why}"),
        ));
    }
    if policy.policy == RatePolicy::Source {
        match key_aligned_rate(rate, &clip.key_times, policy.max_hz) {
            Some(r) if r != rate => {
                decisions.push(Decision::new(
                    "sample_rate_key_aligned",
                    format!("{rate} Hz -> {r} Hz so that every source key time is a sample"),
                ));
                rate = r;
            }
            Some(_) => {}
            None => decisions.push(Decision::new(
                "keys_off_grid",
                format!("some source key times fall between {rate} Hz samples (no multiple of the rate up to the profile maximum aligns them); they are reproduced within the resampling tolerance"),
            )),
        }
    }
    if kind == SourceKind::Samples {
        decisions.push(Decision::new(
            "sampled_source",
            "the source is sampled: its keys are the authored motion; error is checked at every key time, not between keys",
        ));
    }
    rate
}

/// Resample `clip` per the profile's rate policy and measure the result.
/// Every grid is checked against `limits` before it is allocated: the
/// first is an error, a doubled one that would not fit stops the rate
/// from rising (with a warning).
pub fn resample(
    clip: &SourceClip,
    skeleton: &Skeleton,
    policy: &SampleRate,
    shells: &[f32],
    kind: SourceKind,
    loop_mode: LoopMode,
    limits: &GridLimits,
) -> Result<(ResampledClip, ResampleReport), LimitExceeded> {
    let mut report = ResampleReport::default();
    let mut rate = starting_rate(clip, policy, kind, &mut report.decisions);
    let base = rate;
    let joints = skeleton.joint_count();
    check_grid(clip, joints, rate, limits)?;
    loop {
        let grid = sample_grid(clip, skeleton, rate, loop_mode);
        let m = measure(clip, skeleton, &grid, shells, kind);
        let tol = policy.max_resample_error_m;
        let next = raised_rate(rate, base, policy.max_hz);
        let fits = next.map(|r| check_grid(clip, joints, r, limits));
        if let (true, Some(Err(e))) = (m.max > tol, &fits) {
            report.warnings.push(
                Diagnostic::warning(
                    "resample_rate_limited",
                    format!("sample rate not raised above {rate} Hz: {e}"),
                )
                .clip(&clip.name),
            );
        }
        if let (true, Some(next), Some(Ok(_))) = (m.max > tol, next, &fits) {
            report.decisions.push(Decision::new(
                "sample_rate_raised",
                format!(
                    "{rate} Hz -> {next} Hz: between samples the runtime's interpolation differs from the authored curve by {:.4} mm (joint '{}', t={:.4}s), tolerance {:.4} mm",
                    m.max * 1000.0,
                    skeleton.name(m.joint),
                    m.time,
                    tol * 1000.0
                ),
            ));
            rate = next;
            continue;
        }
        final_warnings(clip, skeleton, &m, rate, tol, &mut report.warnings);
        report.sample_rate_hz = rate;
        report.resample_error_m = m.max;
        report.per_joint_m = m.per_joint;
        report.worst_joint = m.joint;
        report.worst_time_s = m.time;
        return Ok((grid, report));
    }
}

/// The warnings of the final grid: the error still over the tolerance at
/// the maximum rate, and STEP key changes a sampled runtime blends across.
fn final_warnings(
    clip: &SourceClip,
    skeleton: &Skeleton,
    m: &Measured,
    rate: f32,
    tol: f32,
    warnings: &mut Vec<Diagnostic>,
) {
    if m.max > tol {
        warnings.push(
            Diagnostic::warning(
                "resample_error",
                format!(
                    "resampling error {:.4} mm exceeds the profile's {:.4} mm at the maximum rate {rate} Hz",
                    m.max * 1000.0,
                    tol * 1000.0
                ),
            )
            .clip(&clip.name)
            .joint(skeleton.name(m.joint))
            .time(m.time),
        );
    }
    if m.skipped_step_intervals > 0 {
        warnings.push(
            Diagnostic::warning(
                "step_between_samples",
                format!(
                    "{} sample intervals contain STEP key changes; a sampled runtime interpolates across each jump within one sample interval (1/{rate} s)",
                    m.skipped_step_intervals
                ),
            )
            .clip(&clip.name),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_format::math::Vec3;
    use ludus_anim_model::{Curve, JointTracks, Quat};
    use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};

    fn skel() -> Skeleton {
        Skeleton::new(
            vec![NO_PARENT, 0],
            vec![JointId(1), JointId(2)],
            vec![
                Transform::IDENTITY,
                Transform::new(Vec3::new(0.0, 0.5, 0.0), Quat::IDENTITY, Vec3::ONE),
            ],
            vec!["root".into(), "tip".into()],
        )
        .unwrap()
    }

    fn spin_clip(angle: f32) -> SourceClip {
        let mut tr = JointTracks::new(0);
        tr.rotation = Some(Curve::from_values(
            Interpolation::Linear,
            &[0.0, 1.0 / 24.0],
            &[Quat::IDENTITY, Quat::from_rotation_z(angle)],
        ));
        let mut c = SourceClip {
            name: "spin".into(),
            duration_s: 1.0 / 24.0,
            tracks: vec![tr],
            curves: vec![],
            frame_rate_hz: None,
            key_times: vec![],
            markers: vec![],
        };
        c.collect_key_times();
        c
    }

    const UNLIMITED: GridLimits = GridLimits {
        max_samples: u64::MAX,
        max_bytes: u64::MAX,
        work_per_sample: 1,
        max_work: u64::MAX,
    };

    #[test]
    fn absurd_grids_are_refused_before_allocating() {
        let s = skel();
        let mut clip = spin_clip(0.1);
        let limits = GridLimits {
            max_samples: 1_000_000,
            max_bytes: 1 << 30,
            ..UNLIMITED
        };
        // 5e9 samples: the count would not even fit a u32.
        clip.duration_s = 5e5;
        let e = check_grid(&clip, 2, 10_000.0, &limits).unwrap_err();
        assert_eq!(e.limit.name(), "max_samples_per_clip");
        assert_eq!(e.clip.as_deref(), Some("spin"));
        let mut fixed = policy();
        fixed.policy = RatePolicy::Fixed;
        fixed.rate_hz = 10_000.0;
        fixed.max_hz = 10_000.0;
        let r = resample(
            &clip,
            &s,
            &fixed,
            &[0.03; 2],
            SourceKind::Curves,
            LoopMode::Once,
            &limits,
        );
        assert!(r.is_err());
        // A rate of 1e-9 Hz over a second is a single sample (the grid
        // covers the clip within a sample interval): tiny, not a panic.
        clip.duration_s = 1.0;
        assert_eq!(check_grid(&clip, 2, 1e-9, &limits), Ok(1));
        assert!(check_grid(&clip, 2, f32::NAN, &limits).is_err());
        assert!(check_grid(&clip, 2, 0.0, &limits).is_err());
        // Memory: 2 joints x 1,001 samples x 448 B is over 512 KB.
        let tight = GridLimits {
            max_samples: 1_000_000,
            max_bytes: 512 << 10,
            ..UNLIMITED
        };
        assert_eq!(
            check_grid(&clip, 2, 1000.0, &tight)
                .unwrap_err()
                .limit
                .name(),
            "max_asset_memory_bytes"
        );
        // Encode work: a 1,000-joint chain (depth sum 500,500) at 31
        // samples, against a limit of 10^7.
        let chain = GridLimits {
            work_per_sample: 500_500,
            max_work: 10_000_000,
            ..UNLIMITED
        };
        assert_eq!(check_grid(&clip, 1000, 10.0, &chain), Ok(11));
        let e = check_grid(&clip, 1000, 30.0, &chain).unwrap_err();
        assert_eq!(e.limit.name(), "max_encode_work");
    }

    fn policy() -> SampleRate {
        SampleRate {
            policy: RatePolicy::Source,
            rate_hz: 30.0,
            min_hz: 1.0,
            max_hz: 240.0,
            max_resample_error_m: 0.0001,
        }
    }

    #[test]
    fn fast_slerp_raises_the_rate() {
        // 120 degrees in one 24 Hz key interval: nlerp vs slerp differs by
        // centimetres mid-interval at the tip.
        let s = skel();
        let (grid, r) = resample(
            &spin_clip(2.1),
            &s,
            &policy(),
            &[0.03, 0.03],
            SourceKind::Curves,
            LoopMode::Once,
            &UNLIMITED,
        )
        .unwrap();
        assert!(grid.sample_rate_hz > 24.0, "{:?}", r.decisions);
        assert!(r.decisions.iter().any(|d| d.kind == "sample_rate_raised"));
        assert!(r.resample_error_m <= 0.0001, "{}", r.resample_error_m);
    }

    #[test]
    fn slow_motion_keeps_the_key_rate() {
        let s = skel();
        let (grid, r) = resample(
            &spin_clip(0.01),
            &s,
            &policy(),
            &[0.03, 0.03],
            SourceKind::Curves,
            LoopMode::Once,
            &UNLIMITED,
        )
        .unwrap();
        assert_eq!(grid.sample_rate_hz, 24.0);
        assert_eq!(grid.num_samples, 2);
        assert!(r.resample_error_m < 1e-5);
    }

    #[test]
    fn step_keys_off_the_spacing_grid_align_the_rate() {
        // Keys every 1/30 s, plus a STEP track switching at 0.75 s (not a
        // 30 Hz sample): 60 Hz holds every key.
        assert_eq!(
            key_aligned_rate(30.0, &[0.0, 1.0 / 30.0, 0.75, 1.0], 240.0),
            Some(60.0)
        );
        assert_eq!(key_aligned_rate(24.0, &[0.0, 0.013], 240.0), None);
        assert_eq!(
            key_aligned_rate(24.0, &[0.0, 16.0 / 24.0, 104.0 / 120.0], 240.0),
            Some(120.0)
        );
        assert_eq!(
            snap_to_key(0.833_333_2, &[0.5, 0.833_333_4], 2.4),
            0.833_333_4
        );
    }

    #[test]
    fn key_spacing_is_per_curve_and_snaps_to_whole_hertz() {
        let mut c = spin_clip(0.1);
        assert_eq!(key_spacing_rate(&c), Some(24.0));
        // A second track offset by 1 ms must not invent a 1000 Hz rate.
        let mut tr = JointTracks::new(1);
        tr.translation = Some(Curve::from_values(
            Interpolation::Linear,
            &[0.001, 0.5],
            &[Vec3::ZERO, Vec3::X],
        ));
        c.tracks.push(tr);
        assert_eq!(key_spacing_rate(&c), Some(24.0));
        c.tracks.clear();
        assert_eq!(key_spacing_rate(&c), None);
    }
}
