//! One asset: read its files, derive its key chain, serve it whole from the
//! cache or run import → normalize → (clips) → package.

use super::chain::{import_key, AssetKeys, ClipKeys, ClipSpec};
use super::clip::{cook_clip, ClipJob, CookedClip};
use super::ingest::{companions, ingest, read_policy, source_hash, Source, Stop};
use super::plan::{plan_clips, ClipPlan};
use super::sidecar_doc::{asset_part, AssetSidecar, ClipPart};
use super::{Cook, PackageBytes};
use crate::events::CookEvent;
use crate::keys::SourceDigest;
use crate::manifest::AssetJob;
use crate::report::{self, AssetReport, AssetStatus, ManifestAsset, ManifestClip};
use crate::source::Snapshot;
use crate::stage::{CookStage, Stage};
use crate::stage_cache::Tier;
use crate::stages::normalize::Normalized;
use crate::stages::package::{package, PackageHeader, PackageSpec, RecordProof};
use crate::stages::prepare::Prepared;
use crate::stages::resample::{Resample, ResampleSpec};
use crate::stages::retarget::RetargetedAsset;
use ludus_anim_cache::{Key, KeyBuilder};
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::limits::{Limits, MemoryBudget};
use ludus_anim_model::{Diagnostic, SourceFormat};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;
/// Everything one asset's cook produced.
pub struct AssetResult {
    pub report: AssetReport,
    /// Package file name and bytes.
    pub package: Option<PackageBytes>,
    pub manifest: Option<ManifestAsset>,
    /// The asset's dashboard records (none when the sidecar is off).
    pub sidecar: AssetSidecar,
}

/// The cached result of a whole asset (the `package` stage). It holds no
/// timing (the report's are zeroed), so a key holds the same bytes
/// whichever machine cooked it.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct AssetOutcome {
    /// The inputs of the key this record was stored under, compared with
    /// the reading cook's before anything of it is used.
    proof: RecordProof,
    report: AssetReport,
    package_name: String,
    package_key: String,
    manifest: ManifestAsset,
    /// The asset's sidecar part, when the cook that stored this wrote one.
    #[serde(default)]
    sidecar: Option<SidecarRef>,
}

/// Where an asset's sidecar part is: its clips' part entries, in order
/// (hex keys), and the hex digest of their concatenation.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct SidecarRef {
    clips: Vec<String>,
    digest: String,
}

/// Cook one asset job; never fails as a whole: a problem is a failed
/// asset report naming where.
pub fn cook_asset(job: &AssetJob, cx: &Cook<'_>) -> AssetResult {
    let file = cx.options.recorded_path(&job.path);
    cx.observer
        .event(&CookEvent::AssetStarted { source: &file });
    let format = SourceFormat::of_path(&job.path);
    let mut r = new_report(&file, format.map_or("unknown", SourceFormat::name));
    // The importer sees the recorded path, so what it derives from it
    // (companion paths, diagnostics) is the same on every machine; the
    // snapshot reads it under the project root.
    let limits = cx.options.limits_of(job);
    let snapshot = Snapshot::with_policy(
        cx.reader,
        cx.options.project_root.as_deref(),
        read_policy(&file, &limits),
    );
    let result = cook_format(job, &file, &snapshot, &limits, &mut r, cx);
    cx.observer.event(&CookEvent::Inputs {
        source: &file,
        files: &snapshot.paths(),
    });
    match result {
        Ok(done) => done,
        Err(stop) => {
            if let Stop::Failed(d) = stop {
                r.diagnostics.push(report::diagnostic(&d));
            }
            r.status = AssetStatus::Failed;
            AssetResult {
                report: r,
                package: None,
                manifest: None,
                sidecar: AssetSidecar::None,
            }
        }
    }
}

fn new_report(file: &str, format: &str) -> AssetReport {
    AssetReport {
        source: file.to_string(),
        source_hash: String::new(),
        format: format.to_string(),
        status: AssetStatus::Ok,
        diagnostics: Vec::new(),
        decisions: Vec::new(),
        package: None,
        package_bytes: 0,
        skeleton: None,
        clips: Vec::new(),
        joint_sets: None,
    }
}

fn cook_format<'a>(
    job: &'a AssetJob,
    file: &'a str,
    snapshot: &'a Snapshot<'a>,
    limits: &'a Limits,
    r: &mut AssetReport,
    cx: &Cook<'a>,
) -> Result<AssetResult, Stop> {
    let options = import_options(job, cx);
    if let Some(done) = unchanged_asset(job, file, snapshot, limits, &options, cx)? {
        return Ok(done);
    }
    let (src, bytes_hash) = Source::read(file, snapshot, options, limits)?;
    let (digest, fresh) = companions(&src, &bytes_hash, cx)?;
    let source_hash = source_hash(&src, &digest)?;
    remember_stamps(file, snapshot, &digest, &source_hash, cx);
    r.source_hash = blake3::Hash::from_bytes(source_hash).to_hex().to_string();
    let retarget = super::retarget::plan(job, file, snapshot, cx)?;
    let bind = super::skeleton::plan(job, snapshot, cx)?;
    let keys = asset_keys(
        job,
        file,
        &digest,
        &source_hash,
        &src.options,
        (&retarget, &bind),
        cx,
    );
    prefetch_asset(&keys, cx);
    if cx.reuse_packages {
        if let Some(done) = cached_asset(&keys, file, cx) {
            return Ok(done);
        }
    }
    let budget = MemoryBudget::new(src.limits.max_asset_memory_bytes);
    let units_m = units_m(job, cx);
    let ingested = ingest(
        &src,
        &digest,
        fresh,
        &keys.import,
        units_m,
        Some(&budget),
        r,
        cx,
    )?;
    let norm = &ingested.norm;
    let asset_profile = job
        .settings
        .profile
        .as_deref()
        .unwrap_or(&cx.options.default_profile);
    let bind_pose_threshold = cx
        .profiles
        .get(asset_profile)
        .and_then(|p| p.bind_pose_threshold_mm);
    super::skins::check(norm, bind_pose_threshold, file, r)?;
    if let (Some(sk), Some(name)) = (&mut r.skeleton, &job.settings.skeleton) {
        sk.name = Some(name.clone());
    }
    let retargeted = match (&retarget, &keys.retarget) {
        (Some(plan), Some(_)) => Some(super::retarget::run(plan, norm, &keys.normalize, r, cx)?),
        _ => None,
    };
    let bound = match (&bind, &keys.bind) {
        (Some(plan), Some(_)) => Some(super::skeleton::run(plan, norm, &keys.normalize, r, cx)?),
        _ => None,
    };
    let norm = bound.as_ref().unwrap_or(norm);
    let asset_name = asset_name(job);
    let asset = AssetWork {
        file,
        asset_name: &asset_name,
        source_hash,
        norm: retargeted.as_ref().map_or(norm, |t| &t.asset),
        keys: &keys,
        kind: ingested.import.kind,
        retarget: retargeted.as_ref().zip(retarget.as_ref()),
        retarget_source: retargeted.as_ref().map(|_| norm),
        limits: src.limits,
        budget: &budget,
        settings: &job.settings,
    };
    cook_clips(&asset, job, r, cx)
}

fn import_options(job: &AssetJob, cx: &Cook<'_>) -> ImportOptions {
    ImportOptions {
        keep_unused_leaves: job
            .settings
            .keep_unused_leaves
            .unwrap_or(cx.options.import.keep_unused_leaves),
        custom_curves: job.settings.curves.clone(),
    }
}

fn asset_name(job: &AssetJob) -> String {
    if let (true, Some(name)) = (job.settings.skeleton_package, &job.settings.skeleton) {
        return format!("{name}.skeleton");
    }
    job.path
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("asset")
        .to_string()
}

fn units_m(job: &AssetJob, cx: &Cook<'_>) -> Option<f32> {
    job.settings
        .units
        .map(|u| u.meters())
        .or(cx.options.units_override_m)
}

/// The asset's key chain from its sources' hashes and its settings.
fn asset_keys(
    job: &AssetJob,
    file: &str,
    digest: &SourceDigest,
    source_hash: &[u8; 32],
    options: &ImportOptions,
    (retarget, bind): (
        &Option<super::retarget::RetargetPlan>,
        &Option<super::skeleton::SkeletonPlan>,
    ),
    cx: &Cook<'_>,
) -> AssetKeys {
    let import = import_key(digest, options);
    AssetKeys::derive(&PackageSpec {
        import: &import,
        asset_name: &asset_name(job),
        recorded_path: file,
        source_hash,
        settings: &job.settings,
        units_m: units_m(job, cx),
        encoder_slack: cx.options.encoder_slack,
        profiles: &cx
            .profiles
            .referenced_by(&job.settings, &cx.options.default_profile),
        default_profile: &cx.options.default_profile,
        retarget: retarget.as_ref().map(|p| p.inputs.clone()),
        skeleton: bind.as_ref().map(|p| p.inputs.clone()),
    })
}

/// The asset served whole from its package record without reading its
/// source or companions, when their stamps say they are the files last
/// hashed (`crate::stamps`); `None`: read and cook as usual.
fn unchanged_asset(
    job: &AssetJob,
    file: &str,
    snapshot: &Snapshot<'_>,
    limits: &Limits,
    options: &ImportOptions,
    cx: &Cook<'_>,
) -> Result<Option<AssetResult>, Stop> {
    if !cx.reuse_packages {
        return Ok(None);
    }
    let Some((keys, files)) = stamped_keys(job, file, snapshot, limits, options, cx)? else {
        return Ok(None);
    };
    prefetch_asset(&keys, cx);
    let done = cached_asset(&keys, file, cx);
    if done.is_some() {
        snapshot.note_unread(files);
    }
    Ok(done)
}

/// The asset's keys from the stamps memo alone, when every file it read
/// last time (source, companions) still has the stamp it had when hashed;
/// with those files' paths. `None`: some file changed or was never
/// memoized.
fn stamped_keys(
    job: &AssetJob,
    file: &str,
    snapshot: &Snapshot<'_>,
    limits: &Limits,
    options: &ImportOptions,
    cx: &Cook<'_>,
) -> Result<Option<(AssetKeys, Vec<std::path::PathBuf>)>, Stop> {
    let Some(stamps) = cx.cache.stamps() else {
        return Ok(None);
    };
    let Some(memo) = stamps.lookup(file, limits.max_file_bytes, |p| snapshot.stamp(p)) else {
        return Ok(None);
    };
    let Some(format) = SourceFormat::of_path(Path::new(file)) else {
        return Ok(None);
    };
    let digest = SourceDigest {
        path: file.to_string(),
        format,
        bytes: memo.bytes_hash,
        companions: memo.companions.clone(),
    };
    let retarget = super::retarget::plan(job, file, snapshot, cx)?;
    let bind = super::skeleton::plan(job, snapshot, cx)?;
    let keys = asset_keys(
        job,
        file,
        &digest,
        &memo.source_hash,
        options,
        (&retarget, &bind),
        cx,
    );
    Ok(Some((
        keys,
        memo.files.into_iter().map(|(p, _)| p).collect(),
    )))
}

/// The key of the package `job` would publish, if its files are unchanged
/// since they were last hashed (`stamped_keys`); `None` otherwise, or if
/// planning it fails (a full cook then says why).
pub(crate) fn stamped_package_key(job: &AssetJob, cx: &Cook<'_>) -> Option<Key> {
    let file = cx.options.recorded_path(&job.path);
    let limits = cx.options.limits_of(job);
    let snapshot = Snapshot::with_policy(
        cx.reader,
        cx.options.project_root.as_deref(),
        read_policy(&file, &limits),
    );
    let options = import_options(job, cx);
    let keys = stamped_keys(job, &file, &snapshot, &limits, &options, cx).ok()??;
    Some(keys.0.package)
}

/// Start fetching what the asset's cook looks up first, all at once: the
/// whole-asset record and its package bytes, and (should those miss) the
/// stored asset-level stages. Import is not stored.
fn prefetch_asset(keys: &AssetKeys, cx: &Cook<'_>) {
    let mut plan = vec![
        keys.package,
        package_bytes_key(&keys.package),
        keys.normalize,
    ];
    plan.extend(keys.retarget);
    plan.extend(keys.bind);
    cx.cache.prefetch(&plan);
}

/// Remember the stamps the asset's files had when they were read, with
/// the hashes they gave.
fn remember_stamps(
    file: &str,
    snapshot: &Snapshot<'_>,
    digest: &SourceDigest,
    source_hash: &[u8; 32],
    cx: &Cook<'_>,
) {
    let Some(stamps) = cx.cache.stamps() else {
        return;
    };
    let names = std::iter::once(file).chain(digest.companions.iter().map(|(p, _)| p.as_str()));
    let files: Option<Vec<_>> = names
        .map(|p| snapshot.stamp_of_read(Path::new(p)))
        .collect();
    if let Some(files) = files {
        stamps.record(
            file,
            crate::stamps::SourceMemo {
                files,
                bytes_hash: digest.bytes,
                companions: digest.companions.clone(),
                source_hash: *source_hash,
            },
        );
    }
}

/// The whole asset from the cache, if its package key hits, the record
/// proves that key (`RecordProof`) and the package bytes are the ones it
/// names. A record or package that fails a check is a miss with a notice.
fn cached_asset(keys: &AssetKeys, file: &str, cx: &Cook<'_>) -> Option<AssetResult> {
    let start = Instant::now();
    let key = &keys.package;
    let (outcome, t1) = cx.cache.lookup_bytes(Stage::Package, key)?;
    let reject = |why: String| {
        let at = format!("cache record {} for '{file}'", key.to_hex());
        cx.cache.reject(
            Stage::Package,
            format!("{at} ignored (cooked instead): {why}"),
        );
    };
    let outcome: AssetOutcome = match serde_json::from_slice(&outcome) {
        Ok(o) => o,
        Err(e) => {
            reject(format!("not a record of this cooker ({e})"));
            return None;
        }
    };
    if let Some((field, theirs, ours)) = outcome.proof.disagreement(&keys.proof) {
        reject(format!(
            "it was stored for {field} '{theirs}', this cook's is '{ours}'"
        ));
        return None;
    }
    let (pkg, t2) = cx
        .cache
        .lookup_bytes(Stage::Package, &package_bytes_key(key))?;
    let digest = blake3::hash(&pkg).to_hex();
    if digest.as_str() != outcome.manifest.package_hash {
        reject(format!(
            "its package bytes hash to {digest}, the record names {}",
            outcome.manifest.package_hash
        ));
        return None;
    }
    let tier = if t1 == Tier::Remote || t2 == Tier::Remote {
        Tier::Remote
    } else {
        Tier::Local
    };
    // A cook that wants the sidecar needs the record's part; without one
    // (the record was written with the sidecar off) the clip stages
    // rebuild it. The part itself is read only if the published sidecar
    // does not already hold it (`sidecar_doc`).
    let sidecar = if cx.options.sidecar.write {
        let r = outcome.sidecar.as_ref()?;
        let digest = *blake3::Hash::from_hex(&r.digest).ok()?.as_bytes();
        let keys: Option<Vec<Key>> = r.clips.iter().map(|k| Key::from_hex(k)).collect();
        AssetSidecar::Cached {
            keys: keys?,
            digest,
        }
    } else {
        AssetSidecar::None
    };
    cx.record(file, Stage::Package, None, Some(tier), start);
    Some(AssetResult {
        report: outcome.report,
        package: Some((outcome.package_name, Arc::new(pkg))),
        manifest: Some(outcome.manifest),
        sidecar,
    })
}

fn package_bytes_key(package_key: &Key) -> Key {
    let mut k = KeyBuilder::new();
    k.str("package-bytes").key(package_key);
    k.finish()
}

/// What the clip and package stages of one asset share.
struct AssetWork<'a> {
    file: &'a str,
    asset_name: &'a str,
    source_hash: [u8; 32],
    norm: &'a Normalized,
    keys: &'a AssetKeys,
    kind: ludus_anim_model::SourceKind,
    /// The retarget stage's output and its plan, for retargeted assets.
    retarget: Option<(&'a RetargetedAsset, &'a super::retarget::RetargetPlan)>,
    /// Retargeted assets: the normalized source (the player's source view).
    retarget_source: Option<&'a Normalized>,
    limits: &'a Limits,
    /// Shared by the asset's clips.
    budget: &'a MemoryBudget,
    /// The manifest's settings of the asset (curve schema rules).
    settings: &'a crate::manifest::AssetEntry,
}

/// Plan the clips, derive their keys, cook them in parallel, check them,
/// and package the asset.
fn cook_clips(
    a: &AssetWork<'_>,
    job: &AssetJob,
    r: &mut AssetReport,
    cx: &Cook<'_>,
) -> Result<AssetResult, Stop> {
    let mut warnings = Vec::new();
    // A shared skeleton's own package holds the skeleton alone.
    let clips: &[ludus_anim_model::SourceClip] = if job.settings.skeleton_package {
        &[]
    } else {
        &a.norm.clips
    };
    let plans = plan_clips(
        clips,
        &job.settings,
        &cx.options.default_profile,
        a.file,
        &mut warnings,
    );
    warnings.extend(super::curve_schema::unmatched_rules(
        &a.norm.clips,
        &job.settings,
        a.file,
    ));
    r.diagnostics
        .extend(warnings.iter().map(report::diagnostic));
    let plans = plans?;
    let keyed = clip_keys(a, &plans, cx)?;
    let chain: Vec<(String, Vec<(Stage, Key)>)> = keyed
        .iter()
        .map(|k| (k.plan.name.clone(), k.keys.entries()))
        .collect();
    cx.observer.event(&CookEvent::Planned {
        source: a.file,
        asset: &a.keys.entries(),
        clips: &chain,
    });
    // Every clip's stored stages, fetched side by side (resample is not
    // stored).
    let plan: Vec<Key> = keyed
        .iter()
        .flat_map(|k| [k.keys.verify, k.keys.encode, k.keys.prepare])
        .collect();
    cx.cache.prefetch(&plan);
    let results: Vec<Result<CookedClip, Diagnostic>> =
        keyed.par_iter().map(|k| cook_clip(&k.job(a), cx)).collect();
    let mut cooked = Vec::with_capacity(results.len());
    for c in results {
        cooked.push(c?);
    }
    assess(&cooked, a, r);
    if r.status == AssetStatus::Failed {
        return Err(Stop::Recorded);
    }
    package_asset(a, cooked, r, cx)
}

/// A clip plan with its spec, keys, profile and additive reference.
struct KeyedClip<'a> {
    plan: &'a ClipPlan<'a>,
    spec: ClipSpec<'a>,
    keys: ClipKeys,
    profile: &'a crate::profile::Profile,
    reference: Option<(&'a ClipPlan<'a>, ResampleSpec<'a>)>,
}

impl<'a> KeyedClip<'a> {
    fn job(&'a self, a: &'a AssetWork<'a>) -> ClipJob<'a> {
        ClipJob {
            plan: self.plan,
            keys: &self.keys,
            spec: &self.spec,
            reference: self.reference.as_ref().map(|(p, s)| (*p, s)),
            norm: a.norm,
            kind: a.kind,
            profile: self.profile,
            file: a.file,
            source_hash: a.source_hash,
            retarget: a
                .retarget
                .map(|(out, plan)| super::retarget::clip_report(plan, out, &self.plan.source.name)),
            retarget_sidecar: a.retarget.and_then(|(out, plan)| {
                super::retarget::clip_sidecar(plan, out, a.file, self.plan, &self.profile.name)
            }),
            retarget_source: a.retarget_source,
            limits: a.limits,
            budget: a.budget,
        }
    }
}

/// Every clip's key chain, derived before any clip stage runs.
fn clip_keys<'a>(
    a: &'a AssetWork<'a>,
    plans: &'a [ClipPlan<'a>],
    cx: &'a Cook<'_>,
) -> Result<Vec<KeyedClip<'a>>, Stop> {
    let mut out = Vec::with_capacity(plans.len());
    for plan in plans {
        let profile = cx.profiles.get(&plan.profile_name).ok_or_else(|| {
            Diagnostic::error(
                "unknown_profile",
                format!("profile '{}' was not loaded", plan.profile_name),
            )
            .file(a.file)
            .clip(&plan.name)
        })?;
        let reference = plan
            .prep
            .additive
            .as_ref()
            .and_then(|r| r.clip())
            .and_then(|wanted| plans.iter().find(|p| p.name == wanted))
            .map(|rp| {
                let spec = ClipSpec {
                    source_clip: &rp.source.name,
                    range: rp.range,
                    ..clip_spec(a, plan, profile, cx)
                };
                (rp, spec.resample())
            });
        let spec = ClipSpec {
            reference: reference.as_ref().map(|(_, s)| Resample::key(s)),
            ..clip_spec(a, plan, profile, cx)
        };
        out.push(KeyedClip {
            plan,
            keys: ClipKeys::derive(&spec),
            spec,
            profile,
            reference,
        });
    }
    Ok(out)
}

/// `plan`'s spec in the key chain, without an additive reference.
fn clip_spec<'a>(
    a: &'a AssetWork<'_>,
    plan: &'a ClipPlan<'a>,
    profile: &'a crate::profile::Profile,
    cx: &Cook<'_>,
) -> ClipSpec<'a> {
    ClipSpec {
        upstream: a.keys.upstream(),
        source_clip: &plan.source.name,
        range: plan.range,
        kind: a.kind,
        profile,
        prep: &plan.prep,
        reference: None,
        encoder_slack: cx.options.encoder_slack,
        curves: super::curve_schema::CurveLayers::new(a.settings, profile),
    }
}

/// Report every clip; a verification failure fails the asset.
fn assess(cooked: &[CookedClip], a: &AssetWork<'_>, r: &mut AssetReport) {
    let sk = &a.norm.skeleton;
    for c in cooked {
        r.decisions.extend(c.decisions.iter().map(report::decision));
        r.diagnostics
            .extend(c.warnings.iter().map(report::diagnostic));
        for (curve, err) in &c.verification.curve_errors {
            if *err > c.curve_threshold {
                r.status = AssetStatus::Failed;
                r.diagnostics.push(report::diagnostic(
                    &Diagnostic::error(
                        "verification_failed",
                        format!(
                            "curve '{curve}' decodes {err} away from its source, above the profile's curve threshold {}",
                            c.curve_threshold
                        ),
                    )
                    .file(a.file)
                    .clip(&c.report.name),
                ));
            }
        }
        // Over by no more than the f32 floor: the clip's f32_floor warning
        // says so (a rig that far from the origin cannot do better).
        if let Some(x) = c
            .verification
            .codec
            .violations
            .first()
            .filter(|_| c.over_threshold)
        {
            r.status = AssetStatus::Failed;
            r.diagnostics.push(report::diagnostic(
                &Diagnostic::error(
                    "verification_failed",
                    format!(
                        "decoded error {:.5} mm exceeds the profile's {:.5} mm ({} joint-times over)",
                        x.error_m * 1000.0,
                        x.threshold_m * 1000.0,
                        c.verification.codec.violations.len()
                    ),
                )
                .file(a.file)
                .clip(&c.report.name)
                .joint(sk.name(x.joint))
                .time(x.time_s),
            ));
        }
        r.clips.push(c.report.clone());
    }
}

/// The package stage: the final bytes, the manifest entry, and the whole
/// outcome cached under the package key.
fn package_asset(
    a: &AssetWork<'_>,
    cooked: Vec<CookedClip>,
    r: &mut AssetReport,
    cx: &Cook<'_>,
) -> Result<AssetResult, Stop> {
    let start = Instant::now();
    let sk = &a.norm.skeleton;
    let prepared: Vec<&Prepared> = cooked.iter().map(|c| &c.prepared).collect();
    let names: Vec<&str> = cooked.iter().map(|c| c.report.name.as_str()).collect();
    let groups = crate::sync_groups::summarize(&prepared);
    for w in crate::sync_groups::rate_warnings(&groups, &names, a.file) {
        r.diagnostics.push(report::diagnostic(&w));
    }
    let entries: Vec<_> = cooked.iter().map(|c| c.entry.clone()).collect();
    let sockets = asset_sockets(a, r)?;
    // A clip package bound to a shared skeleton measures the skeleton's
    // sockets; the skeleton's package carries them.
    let bound = a.settings.skeleton.is_some() && !a.settings.skeleton_package;
    let records: Vec<_> = match bound {
        true => Vec::new(),
        false => sockets.iter().map(|s| s.record()).collect(),
    };
    let resolved = match &a.settings.joint_sets_spec {
        Some(spec) => Some(super::joint_sets::resolve(spec, sk, &a.norm.skins)?),
        None => None,
    };
    let joint_sets = resolved.as_ref().map(super::joint_sets::view);
    let header = |bounds| PackageHeader {
        asset_name: a.asset_name,
        source_path: a.file,
        source_hash: a.source_hash,
        skeleton: sk,
        skins: &a.norm.skins,
        bounds,
        sockets: &records,
        joint_sets: joint_sets.as_ref(),
    };
    // The bounds are measured on the package as written (decoded as a
    // game would), then stored in it: the clips' bytes do not change.
    let first = package(&header(&[]), entries.clone(), &prepared)?;
    // Masks and LOD levels are checked on it the same way.
    if let Some(resolved) = &resolved {
        if !super::joint_sets::verify(&first.bytes, resolved, &entries, &a.norm.skins, r) {
            r.status = AssetStatus::Failed;
        }
    }
    let radius = a.settings.joint_radius_m.unwrap_or(0.0);
    let bounds = super::bounds::record(&first.bytes, &a.norm.skins, radius, a.file, r);
    let sources: Vec<_> = cooked
        .iter()
        .map(|c| (c.report.name.as_str(), &c.prepared.clip))
        .collect();
    super::sockets::record(&first.bytes, &sources, &sockets, r);
    let packaged = package(&header(&bounds), entries, &prepared)?;
    r.package = Some(format!("packages/{}", packaged.file_name));
    r.package_bytes = packaged.bytes.len() as u64;
    let manifest = ManifestAsset {
        source: a.file.to_string(),
        source_hash: r.source_hash.clone(),
        package: format!("packages/{}", packaged.file_name),
        package_hash: packaged.digest.clone(),
        package_bytes: packaged.bytes.len() as u64,
        skeleton_identity: sk.identity().to_hex(),
        joints: sk.joint_count(),
        clips: cooked.iter().map(|c| manifest_clip(&c.report)).collect(),
    };
    let clip_parts: Vec<&ClipPart> = cooked.iter().filter_map(|c| c.sidecar.as_ref()).collect();
    let sidecar = match cx.options.sidecar.write {
        true => AssetSidecar::ready(asset_part(&clip_parts)),
        false => AssetSidecar::None,
    };
    if cx.cache.enabled() {
        let outcome = AssetOutcome {
            proof: a.keys.proof.clone(),
            report: r.without_timings(),
            package_name: packaged.file_name.clone(),
            package_key: a.keys.package.to_hex(),
            manifest: manifest.clone(),
            sidecar: match &sidecar {
                AssetSidecar::Ready { digest, .. } => Some(SidecarRef {
                    clips: clip_parts.iter().map(|c| c.key.to_hex()).collect(),
                    digest: blake3::Hash::from_bytes(*digest).to_hex().to_string(),
                }),
                _ => None,
            },
        };
        cx.cache.put_bytes(
            Stage::Package,
            &package_bytes_key(&a.keys.package),
            &packaged.bytes,
        );
        match serde_json::to_vec(&outcome) {
            Ok(json) => cx.cache.put_bytes(Stage::Package, &a.keys.package, &json),
            Err(e) => cx
                .cache
                .notice(format!("asset outcome does not encode: {e}")),
        }
    }
    cx.cache
        .record_fingerprint(Stage::Package, *blake3::hash(&packaged.bytes).as_bytes());
    cx.record(a.file, Stage::Package, None, None, start);
    Ok(AssetResult {
        report: r.clone(),
        package: Some((packaged.file_name, Arc::new(packaged.bytes))),
        manifest: Some(manifest),
        sidecar,
    })
}

/// The package's sockets (`super::sockets`), their decisions recorded.
fn asset_sockets(
    a: &AssetWork<'_>,
    r: &mut AssetReport,
) -> Result<Vec<super::sockets::CookedSocket>, Stop> {
    let source =
        a.retarget
            .zip(a.retarget_source)
            .map(|((_, plan), src)| super::sockets::SourceRig {
                skeleton: &src.skeleton,
                profile: &plan.profile,
            });
    let (sockets, decisions) = super::sockets::resolve(a.norm, a.settings, source, a.file)?;
    super::sockets::note(&decisions, r);
    Ok(sockets)
}

fn manifest_clip(c: &crate::report::ClipReport) -> ManifestClip {
    ManifestClip {
        name: c.name.clone(),
        codec: c.codec.clone(),
        codec_version: c.codec_version,
        profile: c.profile.clone(),
        duration_s: c.duration_s,
        samples: c.samples,
        sample_rate_hz: c.sample_rate_hz,
        loop_mode: c.loop_mode.clone(),
    }
}
