//! The shared-skeleton step of an asset bound to a manifest `[[skeleton]]`:
//! the skeleton's file read before the keys are derived (its normalize key
//! is an input of the package key), imported and normalized through the
//! cache like any source, then the bind stage.

use super::chain::{import_key, normalize_key};
use super::ingest::{companions, ingest, read_policy, Source, Stop};
use super::Cook;
use crate::manifest::AssetJob;
use crate::report::{self, AssetReport};
use crate::source::Snapshot;
use crate::stages::bind::{Bind, BindInput, BindSpec, SkeletonInputs};
use crate::stages::normalize::Normalized;
use ludus_anim_cache::Key;
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::{Diagnostic, Limits};

/// A bind to run: the skeleton's name and file.
pub struct SkeletonPlan {
    pub inputs: SkeletonInputs,
    /// The skeleton's file, relative to the project root.
    pub file: String,
    digest: crate::keys::SourceDigest,
    limits: Limits,
}

/// Read the skeleton's file, if the asset is bound to a shared skeleton
/// (the skeleton's own package job is not: it cooks that file itself).
pub fn plan(
    job: &AssetJob,
    snapshot: &Snapshot<'_>,
    cx: &Cook<'_>,
) -> Result<Option<SkeletonPlan>, Stop> {
    let s = &job.settings;
    let (Some(name), Some(source), false) = (&s.skeleton, &s.skeleton_source, s.skeleton_package)
    else {
        return Ok(None);
    };
    let limits = cx.options.limits_of(job);
    let (src, hash) = Source::read(source, snapshot, ImportOptions::default(), &limits)?;
    let (digest, _) = companions(&src, &hash, cx)?;
    let skeleton = normalize_key(&import_key(&digest, &src.options), None);
    Ok(Some(SkeletonPlan {
        inputs: SkeletonInputs {
            name: name.clone(),
            skeleton,
        },
        file: source.clone(),
        digest,
        limits,
    }))
}

/// Import and normalize the skeleton's file, then bind the asset's clips
/// to it. Errors (a track the skeleton has no joint for) stop the asset.
pub fn run(
    plan: &SkeletonPlan,
    source: &Normalized,
    normalize: &Key,
    r: &mut AssetReport,
    cx: &Cook<'_>,
) -> Result<Normalized, Stop> {
    let snapshot = Snapshot::with_policy(
        cx.reader,
        cx.options.project_root.as_deref(),
        read_policy(&plan.file, &plan.limits),
    );
    let (src, _) = Source::read(
        &plan.file,
        &snapshot,
        ImportOptions::default(),
        &plan.limits,
    )?;
    let import = import_key(&plan.digest, &src.options);
    // The skeleton file's own import notes are not the asset's.
    let mut scratch = r.clone();
    let ingested = ingest(
        &src,
        &plan.digest,
        None,
        &import,
        None,
        None,
        &mut scratch,
        cx,
    )
    .map_err(|_| {
        Diagnostic::error(
            "skeleton_source",
            format!(
                "skeleton '{}': '{}' cannot be read",
                plan.inputs.name, plan.file
            ),
        )
        .file(&r.source)
    })?;
    let spec = BindSpec {
        normalize,
        inputs: &plan.inputs,
    };
    let input = BindInput {
        source,
        skeleton: &ingested.norm,
        name: &plan.inputs.name,
        file: &r.source,
    };
    let out = cx.stage::<Bind>(&r.source.clone(), None, &spec, input)?;
    r.skeleton = Some(report::SkeletonReport {
        joints: out.skeleton.joint_count(),
        identity: out.skeleton.identity().to_hex(),
        unit_scale_m: out.unit_scale_m,
        source_axes: ingested.import.source_axes.clone(),
        name: Some(plan.inputs.name.clone()),
        skins: Vec::new(),
    });
    if let Some(d) = out.decisions.last() {
        r.decisions.push(report::decision(d));
    }
    Ok(out)
}
