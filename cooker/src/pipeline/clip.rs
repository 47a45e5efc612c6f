//! One clip through resample → prepare → encode → verify, each stage
//! through the cache under the key the chain derived for it.

use super::chain::{ClipKeys, ClipSpec};
use super::curve_schema::{curve_entries, default_warnings, step_key_warnings};
use super::plan::ClipPlan;
use super::sidecar::{clip_sidecar, CookedParts};
use super::sidecar_doc::{clip_part_key, ClipPart};
use super::Cook;
use crate::package_writer::PackageClip;
use crate::profile::Profile;
use crate::report::{
    ClipReport, CurvesReport, JointError, RetargetReport, RootMotionReport, TimeChecks,
};
use crate::sidecar_poses::source_poses;
use crate::stage::Stage;
use crate::stages::encode::{Encode, EncodeInput, EncodeSpec, Encoded};
use crate::stages::normalize::Normalized;
use crate::stages::prepare::{
    MarkerKind, Prepare, PrepareInput, PrepareSpec, Prepared, PreparedClip,
};
use crate::stages::resample::{GridLimits, Resample, ResampleInput, ResampleReport, ResampleSpec};
use crate::stages::verify::{
    add_extras, verify_in_package, ClipVerification, Extras, Verify, VerifyInput, VerifySpec,
};
use ludus_anim_model::limits::{Limits, MemoryBudget, BYTES_PER_JOINT_SAMPLE};
use ludus_anim_model::{Decision, Diagnostic, ResampledClip, SourceKind};
use ludus_anim_report::sidecar::ClipSidecar;
use ludus_anim_report::sidecar_parts::SidecarPart;
use ludus_anim_report::{EndToEnd, VelocityReport};
use ludus_anim_runtime::Skeleton;
use std::cell::RefCell;

/// What one clip needs besides the shared cook context.
pub(crate) struct ClipJob<'a> {
    pub plan: &'a ClipPlan<'a>,
    pub keys: &'a ClipKeys,
    /// What the clip's keys were derived from.
    pub spec: &'a ClipSpec<'a>,
    /// The clip an additive reference reads, with its resample spec.
    pub reference: Option<(&'a ClipPlan<'a>, &'a ResampleSpec<'a>)>,
    pub norm: &'a Normalized,
    pub kind: SourceKind,
    pub profile: &'a Profile,
    pub file: &'a str,
    pub source_hash: [u8; 32],
    pub limits: &'a Limits,
    /// The asset's memory budget, shared by its clips.
    pub budget: &'a MemoryBudget,
    /// Retargeted assets: the clip's entry for the report.
    pub retarget: Option<RetargetReport>,
    /// Retargeted assets: the clip's foot tracks for the sidecar.
    pub retarget_sidecar: Option<ClipSidecar>,
    /// Retargeted assets: the normalized source, whose clip the sidecar
    /// samples beside the result.
    pub retarget_source: Option<&'a Normalized>,
}

/// A cooked clip: its report, package entry and what verification found.
pub(crate) struct CookedClip {
    pub report: ClipReport,
    /// The profile's scalar-curve error threshold for this clip.
    pub curve_threshold: f32,
    pub entry: PackageClip,
    pub prepared: Prepared,
    pub verification: ClipVerification,
    pub decisions: Vec<Decision>,
    /// Quality warnings, each naming file and clip (joint and time where
    /// known); the asset's diagnostics carry them.
    pub warnings: Vec<Diagnostic>,
    /// Verification found a joint over its threshold by more than the
    /// clip's f32 floor (a codec failure, not f32 arithmetic): the asset
    /// fails.
    pub over_threshold: bool,
    /// The clip's dashboard record, when the cook writes the sidecar.
    pub sidecar: Option<ClipPart>,
}

/// Per-joint settings of the clip's profile on the normalized skeleton.
struct JointSettings {
    thresholds: Vec<f32>,
    shells: Vec<f32>,
}

pub(crate) fn cook_clip(job: &ClipJob<'_>, cx: &Cook<'_>) -> Result<CookedClip, Diagnostic> {
    crate::fault::panic_point(job.file);
    let sk = &job.norm.skeleton;
    let name = job.plan.name.as_str();
    let (thresholds, shells) = job
        .profile
        .joint_settings(sk.names(), job.norm.file_shells_m.as_deref());
    let js = JointSettings { thresholds, shells };
    let mut decisions = Vec::new();
    let PreparedClip {
        prepared,
        resample: rs_report,
    } = prepare_clip(job, &js, cx)?;
    decisions.extend(rs_report.decisions.iter().map(|d| Decision {
        kind: d.kind.clone(),
        detail: format!("clip '{name}': {}", d.detail),
    }));
    if job.plan.source_markers > 0 {
        decisions.push(Decision::new(
            "markers_from_source",
            format!(
                "clip '{name}': {} markers from the source file join the manifest's",
                job.plan.source_markers
            ),
        ));
    }
    decisions.extend(prepared.decisions.iter().cloned());
    // The encoder checks what it encodes exactly as verification does;
    // verification takes the check of the blob that was kept.
    let last_check = RefCell::new(None);
    let encoded = run_encode(job, &prepared, &js, &rs_report, &last_check, cx)?;
    let mut entry = package_clip(job, &prepared, &encoded, &rs_report);
    let spec = VerifySpec {
        encode: &job.keys.encode,
        curve_threshold: job.profile.curve_error_threshold,
        curves: job.spec.curves,
        velocity_threshold: job.profile.velocity_threshold_mps,
    };
    let extras = Extras {
        velocity: job.profile.velocity_threshold_mps.is_some(),
        poses: true,
        decode_timing: true,
    };
    let check = || match last_check.take() {
        Some((blob, mut v)) if blob == encoded.blob => {
            let source = job.plan.authored();
            let sk = &job.norm.skeleton;
            add_extras(&mut v, extras, sk, &entry, &prepared, &source, job.file)?;
            Ok(v)
        }
        _ => check(job, &entry, &prepared, &js, encoded.floor_m, extras),
    };
    let verification =
        cx.stage::<Verify>(job.file, Some(name), &spec, VerifyInput { check: &check })?;
    entry.max_error_m = verification.codec.max_error_m + verification.floor_m;
    let stepped = rs_report
        .warnings
        .iter()
        .any(|d| d.code == "step_between_samples");
    let e2e = end_to_end(&job.norm.skeleton, &verification, &js, &rs_report, stepped);
    let mut warnings = clip_warnings(job, &rs_report, &prepared, &verification, &js, &e2e);
    warnings.extend(default_warnings(
        job.plan.source,
        name,
        &job.spec.curves,
        job.file,
    ));
    warnings.extend(step_key_warnings(
        &job.plan.authored(),
        prepared.clip.sample_rate_hz,
        &job.spec.curves,
        job.file,
    ));
    if encoded.budget_exhausted_segments > 0 {
        warnings.push(budget_warning(job, &encoded));
    }
    let mut report = clip_report(
        job,
        &prepared,
        &encoded,
        &verification,
        &rs_report,
        &js,
        &warnings,
    );
    report.end_to_end = Some(e2e);
    let over_threshold = beyond_floor(&verification, &js.thresholds);
    let mut cooked = CookedClip {
        over_threshold,
        sidecar: None,
        report,
        warnings,
        curve_threshold: job.profile.curve_error_threshold,
        entry,
        prepared,
        verification,
        decisions,
    };
    if cx.options.sidecar.write {
        cooked.sidecar = Some(clip_part(job, &cooked, encoded.floor_m, &js, cx)?);
    }
    Ok(cooked)
}

/// The clip's sidecar record: from its entry, or made and stored. A
/// verification served from the cache carries no per-time grid (this
/// record keeps it), so when the record is gone the clip is measured
/// again, uncached, for it.
fn clip_part(
    job: &ClipJob<'_>,
    cooked: &CookedClip,
    floor_m: f32,
    js: &JointSettings,
    cx: &Cook<'_>,
) -> Result<ClipPart, Diagnostic> {
    let key = clip_part_key(&job.keys.verify, job.file, &job.profile.name);
    if let Some(part) = cx
        .cache
        .get_bytes(Stage::Package, &key)
        .and_then(|b| SidecarPart::from_bytes(&b))
    {
        return Ok(ClipPart { key, part });
    }
    let measured;
    let verification = if cooked.verification.times_s.is_empty() {
        let extras = Extras {
            velocity: false,
            poses: true,
            decode_timing: false,
        };
        measured = check(job, &cooked.entry, &cooked.prepared, js, floor_m, extras)?;
        &measured
    } else {
        &cooked.verification
    };
    let parts = CookedParts {
        entry: &cooked.entry,
        verification,
        prepared: &cooked.prepared,
    };
    let mut record = clip_sidecar(job.file, &parts, &job.norm.skeleton, &js.thresholds);
    record.retarget = job
        .retarget_sidecar
        .as_ref()
        .and_then(|p| p.retarget.clone());
    record.source_poses = job.retarget_source.and_then(|src| {
        let clip = src.clips.iter().find(|c| c.name == job.plan.source.name)?;
        let start = job.plan.range.map_or(0.0, |r| r.0);
        source_poses(&src.skeleton, clip, start, cooked.entry.duration_s)
    });
    let part = SidecarPart::of(vec![record]);
    cx.cache.put_bytes(Stage::Package, &key, &part.to_bytes());
    Ok(ClipPart { key, part })
}

/// Resample `plan` (a cut clip is its source shifted and shortened).
fn run_resample(
    plan: &ClipPlan<'_>,
    spec: &ResampleSpec<'_>,
    job: &ClipJob<'_>,
    shells: &[f32],
    cx: &Cook<'_>,
) -> Result<(ResampledClip, ResampleReport), Diagnostic> {
    let limits = GridLimits {
        max_samples: job.limits.max_samples_per_clip,
        max_bytes: job.budget.remaining(),
        work_per_sample: depth_sum(&job.norm.skeleton),
        max_work: job.limits.max_encode_work,
    };
    let authored = plan.authored();
    let input = ResampleInput {
        clip: &authored,
        skeleton: &job.norm.skeleton,
        shells,
        limits,
        file: job.file,
    };
    let (grid, report) = cx.stage::<Resample>(job.file, Some(&plan.name), spec, input)?;
    charge_grid(job, &plan.name, grid.num_samples, grid.joint_count)?;
    Ok((grid, report))
}

/// The grid (and what later stages derive from it) stays until the asset
/// is packaged: the asset's budget is charged with it.
fn charge_grid(
    job: &ClipJob<'_>,
    clip: &str,
    samples: u32,
    joints: usize,
) -> Result<(), Diagnostic> {
    let bytes = u64::from(samples)
        .saturating_mul(joints as u64)
        .saturating_mul(BYTES_PER_JOINT_SAMPLE);
    job.budget
        .charge(&format!("clip '{clip}'"), bytes)
        .map_err(|e| e.clip(clip.to_string()).file(job.file).diagnostic())
}

/// The sum of every joint's depth (a root is 1): the encoder's work per
/// sample, in one pass (parents come first).
fn depth_sum(sk: &ludus_anim_runtime::Skeleton) -> u64 {
    let mut depth = vec![0u64; sk.joint_count()];
    for j in 0..depth.len() {
        depth[j] = sk.parent(j).map_or(1, |p| depth[p] + 1);
    }
    depth.iter().sum()
}

/// Prepare: loops, root motion, additive reference, markers. Loop
/// detection uses the resampling tolerance, not the quality threshold, so
/// a quality-only change re-runs nothing before encode.
/// The clip prepared: prepare's record, looked up first (it carries the
/// resampling report, so a hit needs no grid), or the clip resampled and
/// prepared now.
fn prepare_clip(
    job: &ClipJob<'_>,
    js: &JointSettings,
    cx: &Cook<'_>,
) -> Result<PreparedClip, Diagnostic> {
    let name = &job.plan.name;
    let spec = PrepareSpec {
        resample: &job.keys.resample,
        prep: &job.plan.prep,
        profile: job.profile,
        reference: job.spec.reference,
    };
    if let Some(pc) = cx.cached::<Prepare>(job.file, Some(name), &spec) {
        let clip = &pc.prepared.clip;
        charge_grid(job, name, clip.num_samples, clip.joint_count)?;
        return Ok(pc);
    }
    let (mut grid, report) = run_resample(job.plan, &job.spec.resample(), job, &js.shells, cx)?;
    grid.name = name.clone();
    let reference_clip = |wanted: &str| -> Option<ResampledClip> {
        let (rp, spec) = job.reference.filter(|(rp, _)| rp.name == wanted)?;
        let (mut c, _) = run_resample(rp, spec, job, &js.shells, cx).ok()?;
        c.name = wanted.to_string();
        Some(c)
    };
    let input = PrepareInput {
        skeleton: &job.norm.skeleton,
        clip: grid,
        resample: report,
        shells: &js.shells,
        reference_clip: &reference_clip,
        file: job.file,
    };
    cx.stage::<Prepare>(job.file, Some(name), &spec, input)
}

fn run_encode(
    job: &ClipJob<'_>,
    prepared: &Prepared,
    js: &JointSettings,
    rs: &ResampleReport,
    last_check: &RefCell<Option<(Vec<u8>, ClipVerification)>>,
    cx: &Cook<'_>,
) -> Result<Encoded, Diagnostic> {
    let name = job.plan.name.as_str();
    let fail = |what: String| {
        Diagnostic::error("encode_failed", what)
            .file(job.file)
            .clip(name)
    };
    let check = |e: &Encoded| {
        let v = check(
            job,
            &package_clip(job, prepared, e, rs),
            prepared,
            js,
            e.floor_m,
            Extras::NONE,
        )?;
        *last_check.borrow_mut() = Some((e.blob.clone(), v.clone()));
        Ok(v)
    };
    let spec = EncodeSpec {
        prepare: &job.keys.prepare,
        profile: job.profile,
        slack: cx.options.encoder_slack,
        additive: job.plan.prep.additive.is_some(),
    };
    let input = EncodeInput {
        skeleton: &job.norm.skeleton,
        prepared,
        thresholds: &js.thresholds,
        resample_per_joint: &rs.per_joint_m,
        shells: &js.shells,
        fail: &fail,
        check: &check,
    };
    cx.stage::<Encode>(job.file, Some(name), &spec, input)
}

/// Verify through the runtime, reading a package holding this clip.
fn check(
    job: &ClipJob<'_>,
    entry: &PackageClip,
    prepared: &Prepared,
    js: &JointSettings,
    floor_m: f32,
    extras: Extras,
) -> Result<ClipVerification, Diagnostic> {
    verify_in_package(
        &job.norm.skeleton,
        entry,
        prepared,
        &job.plan.authored(),
        &js.thresholds,
        &js.shells,
        floor_m,
        job.kind,
        extras,
        job.file,
    )
}

/// The clip as the package stores it.
fn package_clip(
    job: &ClipJob<'_>,
    prepared: &Prepared,
    encoded: &Encoded,
    rs: &ResampleReport,
) -> PackageClip {
    let clip = &prepared.clip;
    let threshold = job.profile.curve_error_threshold;
    PackageClip {
        name: job.plan.name.clone(),
        duration_s: clip.duration_s,
        sample_rate_hz: clip.sample_rate_hz,
        num_samples: clip.num_samples,
        loop_mode: clip.loop_mode,
        codec: encoded.codec,
        codec_version: encoded.codec_version,
        profile: job.profile.name.clone(),
        source_hash: job.source_hash,
        resample_error_m: rs.resample_error_m,
        max_error_m: 0.0,
        blob: encoded.blob.clone(),
        curves: curve_entries(clip, job.plan.source, &job.spec.curves, threshold),
    }
}

/// The clip's entry in `report.json`.
fn clip_report(
    job: &ClipJob<'_>,
    prepared: &Prepared,
    encoded: &Encoded,
    v: &ClipVerification,
    rs: &ResampleReport,
    js: &JointSettings,
    warnings: &[Diagnostic],
) -> ClipReport {
    let (sk, profile, clip) = (&job.norm.skeleton, job.profile, &prepared.clip);
    let raw = sk.joint_count() as u64 * clip.num_samples as u64 * 40;
    let compressed = encoded.blob.len() as u64;
    let count = |kind: MarkerKind| prepared.event_names.iter().filter(|e| e.2 == kind).count();
    ClipReport {
        name: job.plan.name.clone(),
        profile: profile.name.clone(),
        joints: sk.joint_count(),
        samples: clip.num_samples,
        sample_rate_hz: clip.sample_rate_hz,
        duration_s: clip.duration_s,
        loop_mode: clip.loop_mode.as_str().to_string(),
        loop_seam_error_m: prepared.loop_seam_error_m,
        root_motion: prepared.trajectory.as_ref().map(|t| RootMotionReport {
            policy: t.policy.as_str().to_string(),
            joint: t.joint.clone(),
            drift_100_loops_m: t.drift_100_loops_m,
        }),
        additive_reference: prepared.additive.as_ref().map(|a| a.reference.clone()),
        // Visual and control events and contact-window edges.
        events: prepared.event_names.len() - count(MarkerKind::SyncMarker),
        markers: count(MarkerKind::SyncMarker),
        codec: encoded.codec.name().to_string(),
        codec_version: encoded.codec_version,
        raw_bytes: raw,
        compressed_bytes: compressed,
        ratio: if compressed > 0 {
            raw as f32 / compressed as f32
        } else {
            0.0
        },
        resample_error_m: rs.resample_error_m,
        max_error_m: v.codec.max_error_m + v.floor_m,
        p99_error_m: v.codec.p99_error_m,
        max_rotation_error_deg: v.codec.max_rotation_error_deg,
        source_error_m: v.source_error_m,
        end_to_end: None,
        velocity: velocity_report(job, v),
        bounds: None,
        sockets: Vec::new(),
        threshold_m: js.thresholds.iter().copied().fold(f32::INFINITY, f32::min),
        worst_joint: sk.name(v.codec.worst_joint).to_string(),
        worst_time_s: v.codec.worst_time_s,
        times_checked: v.codec.times_checked,
        checks: Some(TimeChecks {
            codec: v.codec.counts,
            source: v.source_counts,
            f32_floor_m: v.floor_m,
            contract: v.contract.clone(),
        }),
        selected_joints: profile
            .report_joint_indices(sk.names())
            .iter()
            .map(|&j| JointError {
                joint: sk.name(j).to_string(),
                max_error_m: v.codec.per_joint_max_m.get(j).copied().unwrap_or(0.0) + v.floor_m,
                threshold_m: js.thresholds[j],
            })
            .collect(),
        curves: CurvesReport {
            count: clip.curves.len(),
            max_error: v.curve_errors.iter().cloned().collect(),
        },
        compress_ms: encoded.ms,
        decode_ns_per_pose: v.decode_ns_per_pose,
        warnings: warnings.iter().map(|d| d.message.clone()).collect(),
        retarget: job.retarget.clone(),
        sync: prepared
            .sync
            .iter()
            .map(|s| ludus_anim_report::sync::ClipSync {
                group: s.group.clone(),
                intervals_s: s.intervals_s.clone(),
            })
            .collect(),
    }
}

/// Every quality warning of a cooked clip, located: the resample and
/// prepare stages' own, and a codec error far below the error against the
/// authored curves (the grid cannot represent the source).
fn clip_warnings(
    job: &ClipJob<'_>,
    rs: &ResampleReport,
    prepared: &Prepared,
    v: &ClipVerification,
    js: &JointSettings,
    e2e: &EndToEnd,
) -> Vec<Diagnostic> {
    let mut out: Vec<Diagnostic> = rs
        .warnings
        .iter()
        .chain(&prepared.warnings)
        .cloned()
        .collect();
    if let Some(d) = end_to_end_warning(prepared, rs, v, e2e) {
        out.push(d);
    }
    if let Some(d) = floor_warning(job, v, js) {
        out.push(d);
    }
    if let Some(d) = velocity_warning(job, v) {
        out.push(d);
    }
    for d in &mut out {
        d.file = Some(job.file.to_string());
        d.clip = Some(job.plan.name.clone());
    }
    out
}

/// The velocity figure, where the profile asks for it.
fn velocity_report(job: &ClipJob<'_>, v: &ClipVerification) -> Option<VelocityReport> {
    let (threshold, s) = (job.profile.velocity_threshold_mps?, v.velocity.as_ref()?);
    Some(VelocityReport {
        max_error_mps: s.max_error_mps,
        joint: job.norm.skeleton.name(s.worst_joint).to_string(),
        time_s: s.worst_time_s,
        threshold_mps: threshold,
        within: s.max_error_mps <= threshold,
        intervals: s.intervals,
    })
}

/// A located warning for a velocity error over the profile's threshold.
fn velocity_warning(job: &ClipJob<'_>, v: &ClipVerification) -> Option<Diagnostic> {
    let r = velocity_report(job, v).filter(|r| !r.within)?;
    Some(
        Diagnostic::warning(
            "velocity_error",
            format!(
                "decoded velocity departs from the authored motion by {:.4} m/s at joint '{}' around {:.3} s, over the profile's {} m/s ({} intervals measured)",
                r.max_error_mps, r.joint, r.time_s, r.threshold_mps, r.intervals
            ),
        )
        .joint(&r.joint)
        .time(r.time_s),
    )
}

/// The clip's end-to-end figure: each joint's error against the authored
/// curves plus the f32 floor, at the joint that uses most of its own
/// threshold, with the cause when it is over.
fn end_to_end(
    skeleton: &Skeleton,
    v: &ClipVerification,
    js: &JointSettings,
    rs: &ResampleReport,
    stepped: bool,
) -> EndToEnd {
    let per_joint = if v.source_per_joint_m.is_empty() {
        &v.codec.per_joint_max_m
    } else {
        &v.source_per_joint_m
    };
    let error = |j: usize| per_joint.get(j).copied().unwrap_or(0.0) + v.floor_m;
    let ratio = |j: usize| {
        let (e, t) = (error(j), js.thresholds[j]);
        if e.is_nan() {
            f32::INFINITY
        } else if t > 0.0 {
            e / t
        } else {
            e
        }
    };
    let worst = (0..js.thresholds.len())
        .max_by(|&a, &b| ratio(a).total_cmp(&ratio(b)).then(b.cmp(&a)))
        .unwrap_or(0);
    let (error_m, threshold_m) = (
        error(worst),
        js.thresholds.get(worst).copied().unwrap_or(0.0),
    );
    let within = error_m <= threshold_m;
    let codec = v.codec.per_joint_max_m.get(worst).copied().unwrap_or(0.0);
    let resampled = rs.per_joint_m.get(worst).copied().unwrap_or(0.0);
    let cause = (!within).then(|| {
        if resampled + v.floor_m > threshold_m {
            "resampling"
        } else if stepped && error_m > (resampled + codec) * 1.01 + v.floor_m {
            "step_between_samples"
        } else if codec <= threshold_m && codec + v.floor_m > threshold_m {
            "f32_floor"
        } else {
            "codec"
        }
        .to_string()
    });
    EndToEnd {
        error_m,
        joint: skeleton.name(worst).to_string(),
        threshold_m,
        within,
        cause,
    }
}

/// A located warning for a clip over its threshold against the authored
/// curves, saying by how much and why (STEP keys between samples also
/// have the resampler's count of such intervals, `step_between_samples`).
fn end_to_end_warning(
    prepared: &Prepared,
    rs: &ResampleReport,
    v: &ClipVerification,
    e2e: &EndToEnd,
) -> Option<Diagnostic> {
    let cause = e2e.cause.as_deref()?;
    if prepared.additive.is_some() {
        return None;
    }
    let mm = |m: f32| m * 1000.0;
    let why = match cause {
        "resampling" => format!(
            "the grid at {} Hz cannot follow the authored curves between samples (resampling error {:.4} mm here, with f32's {:.4} mm): raise the profile's sample_rate.max_hz or lower max_resample_error_m",
            prepared.clip.sample_rate_hz,
            mm(rs.per_joint_m.iter().copied().fold(0.0, f32::max)),
            mm(v.floor_m)
        ),
        "f32_floor" => format!(
            "f32 arithmetic alone moves this rig's vertices by up to {:.4} mm (its joints lie far from the origin: check the source's units)",
            mm(v.floor_m)
        ),
        "step_between_samples" => format!(
            "a STEP key changes value between two grid samples and the runtime interpolates across the jump within one sample interval (1/{} s); put STEP keys on the grid or raise the sample rate",
            prepared.clip.sample_rate_hz
        ),
        _ => "the encoder could not meet it, raw tracks included".to_string(),
    };
    Some(
        Diagnostic::warning(
            "end_to_end_error",
            format!(
                "the cooked clip is {:.4} mm from the authored curves at joint '{}', over its {:.4} mm threshold by {:.4} mm: {why}",
                mm(e2e.error_m),
                e2e.joint,
                mm(e2e.threshold_m),
                mm(e2e.error_m - e2e.threshold_m),
            ),
        )
        .joint(&e2e.joint),
    )
}

/// The f32 floor is what puts a joint over its threshold: its decoded
/// error is within the threshold at every checked time, but not once the
/// floor is added.
fn floor_warning(
    job: &ClipJob<'_>,
    v: &ClipVerification,
    js: &JointSettings,
) -> Option<Diagnostic> {
    let per_joint = &v.codec.per_joint_max_m;
    let j = (0..per_joint.len().min(js.thresholds.len())).find(|&j| {
        let (e, t) = (per_joint[j], js.thresholds[j]);
        v.floor_m > 0.0 && e <= t && e + v.floor_m > t
    })?;
    let mm = |m: f32| m * 1000.0;
    let joint = job.norm.skeleton.name(j);
    Some(
        Diagnostic::warning(
            "f32_floor",
            format!(
                "joint '{joint}' decodes within {:.4} mm at the checked times, but f32 arithmetic alone moves this rig's vertices by up to {:.4} mm (its joints lie far from the origin: check the source's units), so between them it can reach {:.4} mm, above its {:.4} mm",
                mm(per_joint[j]),
                mm(v.floor_m),
                mm(per_joint[j] + v.floor_m),
                mm(js.thresholds[j])
            ),
        )
        .joint(joint),
    )
}

/// The encoder's search stopped refining on some segments (a hierarchy so
/// deep that every joint needed raising): the bound holds, the bytes are
/// not what a full search would reach.
fn budget_warning(job: &ClipJob<'_>, encoded: &Encoded) -> Diagnostic {
    let mut d = Diagnostic::warning(
        "encode_budget",
        format!(
            "the encoder's search ran out of its work budget on {} segment(s) (a very deep or wide hierarchy needing many rate raises): the error bound holds, but those segments keep more bits than needed and the package is larger than a full search would make it",
            encoded.budget_exhausted_segments
        ),
    );
    d.file = Some(job.file.to_string());
    d.clip = Some(job.plan.name.clone());
    d
}

/// Some joint's measured error exceeds its threshold by more than the f32
/// floor: over what f32 arithmetic alone can explain.
fn beyond_floor(v: &ClipVerification, thresholds: &[f32]) -> bool {
    let per_joint = &v.codec.per_joint_max_m;
    // NaN (a failed decode) counts as over.
    let over = |(e, t): (&f32, &f32)| e.is_nan() || *e > t + v.floor_m;
    !v.codec.violations.is_empty() && per_joint.iter().zip(thresholds).any(over)
}
