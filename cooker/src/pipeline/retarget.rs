//! The retarget step of an asset: its profile and target skeleton read
//! before the keys are derived (both are inputs of the package key), the
//! target imported and normalized through the cache like any source, then
//! the retarget stage.

use super::chain::{import_key, normalize_key};
use super::ingest::{companions, ingest, read_policy, Source, Stop};
use super::Cook;
use crate::keys::RetargetInputs;
use crate::manifest::AssetJob;
use crate::report::{self, AssetReport};
use crate::source::Snapshot;
use crate::stages::retarget::{Retarget, RetargetInput, RetargetSpec, RetargetedAsset};
use ludus_anim_cache::Key;
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::{Diagnostic, Limits};
use ludus_anim_retarget::Profile;
use std::path::{Path, PathBuf};

/// A retarget to run: the parsed profile and the target's source.
pub struct RetargetPlan {
    pub profile: Profile,
    /// The profile path as the report records it.
    pub profile_path: String,
    pub profile_hash: [u8; 32],
    /// The target skeleton's file, relative to the project root.
    pub target_file: String,
    pub inputs: RetargetInputs,
    target_digest: crate::keys::SourceDigest,
    /// The asset's limits, which its target is read under too.
    limits: Limits,
}

/// The asset's retarget profile: its manifest entry's (relative to the
/// project root), else `--retarget`.
fn profile_path(job: &AssetJob, cx: &Cook<'_>) -> Option<PathBuf> {
    match &job.settings.retarget {
        Some(p) => Some(match &cx.options.project_root {
            Some(root) => root.join(p),
            None => PathBuf::from(p),
        }),
        None => cx.options.retarget.clone(),
    }
}

/// Read the profile and the target's files, if the asset is retargeted.
pub fn plan(
    job: &AssetJob,
    file: &str,
    snapshot: &Snapshot<'_>,
    cx: &Cook<'_>,
) -> Result<Option<RetargetPlan>, Stop> {
    let Some(path) = profile_path(job, cx) else {
        return Ok(None);
    };
    let profile_path = cx.options.recorded_path(&path);
    let fail = |m: String| Diagnostic::error("retarget_profile", m).file(file);
    let read = snapshot.file(Path::new(&profile_path)).map_err(|e| {
        fail(format!(
            "cannot read retarget profile '{profile_path}': {e}"
        ))
    })?;
    let text = std::str::from_utf8(&read.bytes)
        .map_err(|_| fail(format!("retarget profile '{profile_path}' is not UTF-8")))?;
    let profile = Profile::parse(text, &profile_path).map_err(|e| fail(e.to_string()))?;
    // The target's path is relative to the profile's directory.
    let dir = Path::new(&profile_path).parent().unwrap_or(Path::new(""));
    let target_file = crate::paths::normalize(&dir.join(&profile.target.skeleton))
        .display()
        .to_string();
    let limits = cx.options.limits_of(job);
    // The target's companions (a split glTF's .bin) resolve relative to
    // the target's own file and are confined to its directory, as in
    // `run`, not to the source asset's: read it through its own snapshot,
    // then count what it read as the asset's inputs.
    let target_snapshot = Snapshot::with_policy(
        cx.reader,
        cx.options.project_root.as_deref(),
        read_policy(&target_file, &limits),
    );
    let read_target = || -> Result<_, Stop> {
        let (src, hash) = Source::read(
            &target_file,
            &target_snapshot,
            ImportOptions::default(),
            &limits,
        )?;
        let (target_digest, _) = companions(&src, &hash, cx)?;
        Ok((target_digest, src.options.clone()))
    };
    let target_read = read_target();
    snapshot.note_unread(target_snapshot.paths());
    let (target_digest, options) = target_read?;
    let target = normalize_key(&import_key(&target_digest, &options), None);
    Ok(Some(RetargetPlan {
        profile,
        profile_path,
        profile_hash: read.hash,
        target_file,
        inputs: RetargetInputs {
            profile: read.hash,
            target,
        },
        target_digest,
        limits,
    }))
}

/// Import and normalize the target, then run the retarget stage. Budget
/// breaches and pose mismatches go into the report; errors stop the asset.
pub fn run(
    plan: &RetargetPlan,
    source: &crate::stages::normalize::Normalized,
    normalize: &Key,
    r: &mut AssetReport,
    cx: &Cook<'_>,
) -> Result<RetargetedAsset, Stop> {
    // The target's companions are confined to its own directory.
    let snapshot = Snapshot::with_policy(
        cx.reader,
        cx.options.project_root.as_deref(),
        read_policy(&plan.target_file, &plan.limits),
    );
    let (src, _) = Source::read(
        &plan.target_file,
        &snapshot,
        ImportOptions::default(),
        &plan.limits,
    )?;
    let import = import_key(&plan.target_digest, &src.options);
    // The target's own import notes are not the asset's: keep only errors.
    let mut scratch = r.clone();
    let digest = &plan.target_digest;
    let ingested =
        ingest(&src, digest, None, &import, None, None, &mut scratch, cx).map_err(|_| {
            Diagnostic::error(
                "retarget_target",
                format!("the retarget target '{}' cannot be read", plan.target_file),
            )
            .file(&r.source)
        })?;
    let target = &ingested.norm;
    let spec = RetargetSpec {
        normalize,
        inputs: &plan.inputs,
    };
    let input = RetargetInput {
        source,
        target,
        profile: &plan.profile,
        file: &r.source,
        profile_path: &plan.profile_path,
    };
    let out = cx.stage::<Retarget>(&r.source.clone(), None, &spec, input)?;
    // The package holds the target skeleton: the report describes it.
    r.skeleton = Some(report::SkeletonReport {
        joints: target.skeleton.joint_count(),
        identity: target.skeleton.identity().to_hex(),
        unit_scale_m: target.unit_scale_m,
        source_axes: ingested.import.source_axes.clone(),
        name: None,
        skins: Vec::new(),
    });
    r.decisions
        .extend(out.asset.decisions.iter().map(report::decision));
    r.diagnostics
        .extend(out.diagnostics.iter().map(report::diagnostic));
    if out.has_errors() {
        return Err(Stop::Recorded);
    }
    Ok(out)
}

/// The report entry of a clip cut from (or equal to) source clip `clip`.
pub fn clip_report(
    plan: &RetargetPlan,
    out: &RetargetedAsset,
    clip: &str,
) -> crate::report::RetargetReport {
    let metrics = out
        .metrics
        .iter()
        .find(|m| m.clip == clip)
        .and_then(|m| serde_json::to_value(m).ok())
        .unwrap_or(serde_json::Value::Null);
    crate::report::RetargetReport {
        profile: plan.profile.name.clone(),
        profile_path: plan.profile_path.clone(),
        profile_hash: blake3::Hash::from_bytes(plan.profile_hash)
            .to_hex()
            .to_string(),
        target: plan.target_file.clone(),
        target_identity: out.asset.skeleton.identity().to_hex(),
        metrics,
    }
}

/// The sidecar's retarget part of cooked clip `clip` (cut from, or equal
/// to, a source clip), if the stage measured its source clip's feet.
pub fn clip_sidecar(
    plan: &RetargetPlan,
    out: &RetargetedAsset,
    file: &str,
    clip: &super::plan::ClipPlan<'_>,
    profile: &str,
) -> Option<ludus_anim_report::sidecar::ClipSidecar> {
    let tracks = out.feet.iter().find(|f| f.clip == clip.source.name)?;
    let mut part = crate::sidecar_retarget::clip_part(
        tracks,
        &plan.profile.name,
        file,
        &clip.name,
        profile,
        clip.range,
    );
    let (s, t) = (&plan.profile.source, &plan.profile.target);
    if let Some(r) = part.retarget.as_mut() {
        r.axes = Some(ludus_anim_report::sidecar::RetargetAxes {
            source_up: s.up.clone(),
            source_forward: s.forward.clone(),
            target_up: t.up.clone(),
            target_forward: t.forward.clone(),
        });
    }
    Some(part)
}
