//! One cook: asset jobs → packages under `OUT/packages/`, `OUT/report.json`
//! and the package manifest `OUT/manifest.json`.
//!
//! Assets cook in parallel (rayon), clips of an asset too; each asset is
//! independent: one with errors gets no package and a `failed` status, the
//! others still cook. Every stage runs through the stage cache
//! (`stage_cache`), and a whole asset whose inputs and settings are
//! unchanged is served from one record (the `package` stage's key).
//! Packages are a pure function of their inputs: byte-identical whatever
//! the thread count or order.

// Per-asset work fails with a `Diagnostic` (file, clip, joint, time): built
// once per failure, never on a hot path, so its size is not a concern.
#![allow(clippy::result_large_err)]

use crate::fsutil::OutputDir;
use crate::manifest::{
    AdditiveEntry, AssetEntry, AssetJob, ClipEntry, LoopSetting, MarkerKindEntry, RootPolicy,
};
use crate::package_writer::{
    write_package_prepared, ClipEntry as PackageClip, ClipPrepEntry, CurveEntry, PackageContents,
};
use crate::profile::Profile;
use crate::report::{
    AssetReport, AssetStatus, ClipReport, CurvesReport, JointError, Report, ReportDiagnostic,
    RootMotionReport, SkeletonReport,
};
use crate::stage_cache::{fingerprint_of, Fingerprint, Stage, StageCache, StageStats};
use crate::stages::encode::{encode, Encoded};
use crate::stages::normalize::{normalize, Normalized};
use crate::stages::prepare::{
    additive_skeleton, prepare, AdditiveReference, ClipPrepSettings, LoopPolicy, MarkerKind,
    MarkerSpec, Prepared, RootMotionPolicy, RootMotionSettings,
};
use crate::stages::resample::{resample, ResampleReport, SourceKind};
use crate::stages::verify::{verify, ClipVerification};
use ludus_anim_cache::{Key, KeyBuilder};
use ludus_anim_importers::{format_of, import_bytes, ImportError, ImportOptions};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::{Decision, Diagnostic, Diagnostics, ResampledClip, SourceAsset, SourceClip};
use ludus_anim_runtime::timing::LoopMode;
use ludus_anim_runtime::Package;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

pub const COOKER_VERSION: &str = concat!("ludus-anim ", env!("CARGO_PKG_VERSION"));

/// File extension of packages.
pub const PACKAGE_EXT: &str = "ludanim";

#[derive(Clone, Debug)]
pub struct CookOptions {
    pub jobs: Vec<AssetJob>,
    /// Source paths in packages and reports are written relative to this
    /// directory (the project root), so cooks on different machines agree.
    pub project_root: Option<PathBuf>,
    pub out: PathBuf,
    /// Profile for assets and clips that name none: bundled name or path.
    pub default_profile: String,
    /// Meters per source unit (`--units`), unless the manifest says.
    pub units_override_m: Option<f32>,
    pub import: ImportOptions,
    /// Multiplies the encoder's error thresholds (verification keeps the
    /// profile's): a test hook proving verification catches overshoot.
    pub encoder_slack: f32,
    /// Worker threads (0: rayon's default).
    pub threads: usize,
    /// Cook only shard `i` of `n` (1-based): a deterministic split by
    /// source path, so a farm's shards together cook every asset once.
    pub shard: Option<(u32, u32)>,
    /// Codec for every profile (`--codec`), replacing the profiles' own.
    pub codec_override: Option<crate::profile::CodecChoice>,
}

impl CookOptions {
    /// Options for plain input files with default settings.
    pub fn for_files(inputs: Vec<PathBuf>, out: PathBuf, profile: &str) -> CookOptions {
        CookOptions {
            jobs: inputs
                .into_iter()
                .map(|path| AssetJob {
                    path,
                    settings: AssetEntry::default(),
                })
                .collect(),
            project_root: None,
            out,
            default_profile: profile.to_string(),
            units_override_m: None,
            import: ImportOptions::default(),
            encoder_slack: 1.0,
            threads: 0,
            shard: None,
            codec_override: None,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CookError {
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Profile(#[from] crate::profile::ProfileError),
    #[error("cannot start worker threads: {0}")]
    Threads(String),
}

/// What a cook tells whoever watches it (progress bars, JSON event logs).
/// Calls come from worker threads.
pub trait Observer: Sync {
    fn asset_started(&self, _source: &str) {}
    fn stage(&self, _source: &str, _clip: Option<&str>, _stage: Stage, _hit: bool, _ms: f64) {}
    fn asset_finished(&self, _report: &AssetReport) {}
    fn notice(&self, _message: &str) {}
}

/// An observer that ignores everything.
pub struct Silent;
impl Observer for Silent {}

/// Everything one asset's cook produced.
pub struct AssetResult {
    pub report: AssetReport,
    /// Package file name and bytes.
    pub package: Option<(String, Arc<Vec<u8>>)>,
    pub manifest: Option<ManifestAsset>,
}

/// One asset in `OUT/manifest.json`: what a runtime loader or a build
/// system needs to find and trust a package. No timings: the manifest is
/// byte-identical across repeated cooks.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ManifestAsset {
    pub source: String,
    pub source_hash: String,
    pub package: String,
    pub package_hash: String,
    pub package_bytes: u64,
    pub skeleton_identity: String,
    pub joints: usize,
    pub clips: Vec<ManifestClip>,
}

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ManifestClip {
    pub name: String,
    pub codec: String,
    pub codec_version: u16,
    pub profile: String,
    pub duration_s: f32,
    pub samples: u32,
    pub sample_rate_hz: f32,
    pub loop_mode: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct PackageManifest {
    pub cooker_version: String,
    pub package_format_version: u32,
    pub assets: Vec<ManifestAsset>,
}

/// The cached result of a whole asset (the `package` stage).
#[derive(Clone, Debug, Serialize, Deserialize)]
struct AssetOutcome {
    report: AssetReport,
    package_name: String,
    package_key: String,
    manifest: ManifestAsset,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Which shard a source path belongs to: stable across machines and
/// unaffected by other files being added.
pub fn shard_of(source: &str, n: u32) -> u32 {
    let h = blake3::hash(source.as_bytes());
    let mut b = [0u8; 8];
    b.copy_from_slice(&h.as_bytes()[..8]);
    (u64::from_le_bytes(b) % n.max(1) as u64) as u32 + 1
}

/// Profiles referenced by a cook, loaded once up front (a bad name fails
/// the cook before any work).
struct Profiles(BTreeMap<String, Profile>);

impl Profiles {
    fn load(options: &CookOptions) -> Result<Profiles, CookError> {
        let mut names = vec![options.default_profile.clone()];
        for j in &options.jobs {
            names.extend(j.settings.profile.clone());
            names.extend(j.settings.clips.values().filter_map(|c| c.profile.clone()));
        }
        let mut map = BTreeMap::new();
        for n in names {
            if let std::collections::btree_map::Entry::Vacant(slot) = map.entry(n) {
                let mut p = Profile::load(slot.key())?;
                if let Some(c) = &options.codec_override {
                    p.codec = c.clone();
                }
                slot.insert(p);
            }
        }
        Ok(Profiles(map))
    }
    fn get(&self, name: &str) -> &Profile {
        // Every referenced name was loaded above.
        &self.0[name]
    }
}

/// Cook every job; write packages, `report.json` and `manifest.json`.
pub fn cook(
    options: &CookOptions,
    cache: &StageCache,
    observer: &dyn Observer,
) -> Result<Report, CookError> {
    let start = Instant::now();
    let profiles = Profiles::load(options)?;
    let out = OutputDir::prepare(&options.out).map_err(|source| CookError::Write {
        path: options.out.display().to_string(),
        source,
    })?;
    let jobs: Vec<&AssetJob> = options
        .jobs
        .iter()
        .filter(|j| match options.shard {
            Some((i, n)) => shard_of(&display_path(&j.path, options), n) == i,
            None => true,
        })
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|e| CookError::Threads(e.to_string()))?;
    let results: Vec<Result<AssetResult, CookError>> = pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                let r = cook_asset(job, options, &profiles, cache, observer);
                if let Some((name, bytes)) = &r.package {
                    out.write(&format!("packages/{name}"), bytes)
                        .map_err(|source| CookError::Write {
                            path: options
                                .out
                                .join("packages")
                                .join(name)
                                .display()
                                .to_string(),
                            source,
                        })?;
                }
                observer.asset_finished(&r.report);
                Ok(r)
            })
            .collect()
    });
    let mut report = Report {
        cooker_version: COOKER_VERSION.to_string(),
        profile: options.default_profile.clone(),
        assets: Vec::new(),
        totals: Default::default(),
        stages: BTreeMap::new(),
        cache_notices: Vec::new(),
    };
    let mut manifest = PackageManifest {
        cooker_version: COOKER_VERSION.to_string(),
        package_format_version: ludus_anim_runtime::package::format::FORMAT_VERSION,
        assets: Vec::new(),
    };
    for r in results {
        let r = r?;
        manifest.assets.extend(r.manifest);
        report.assets.push(r.report);
    }
    report.stages = cache
        .counters
        .snapshot()
        .into_iter()
        .map(|(s, st)| (s.name().to_string(), st))
        .collect::<BTreeMap<String, StageStats>>();
    report.cache_notices = cache.take_notices();
    for n in &report.cache_notices {
        observer.notice(n);
    }
    report.compute_totals(start.elapsed().as_secs_f64() * 1000.0);
    let json = serde_json::to_vec_pretty(&manifest).unwrap_or_default();
    out.write("manifest.json", &json)
        .map_err(|source| CookError::Write {
            path: options.out.join("manifest.json").display().to_string(),
            source,
        })?;
    let json = serde_json::to_vec_pretty(&report).unwrap_or_default();
    out.write("report.json", &json)
        .map_err(|source| CookError::Write {
            path: options.out.join("report.json").display().to_string(),
            source,
        })?;
    Ok(report)
}

/// Source path as recorded: relative to the project root when there is
/// one, else as given.
fn display_path(path: &Path, options: &CookOptions) -> String {
    match &options.project_root {
        Some(root) => path
            .strip_prefix(root)
            .unwrap_or(path)
            .display()
            .to_string(),
        None => path.display().to_string(),
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
    }
}

fn failed(mut r: AssetReport, d: Diagnostic) -> AssetResult {
    r.status = AssetStatus::Failed;
    r.diagnostics.push(ReportDiagnostic::from(&d));
    AssetResult {
        report: r,
        package: None,
        manifest: None,
    }
}

/// The import stage's output: the asset and what validation found.
#[derive(Clone, Debug, Serialize, Deserialize)]
struct Imported {
    asset: SourceAsset,
    validation: Diagnostics,
}

/// Companion files an import read, with their content hashes at the time.
type Deps = Vec<(String, [u8; 32])>;

fn hash_file(path: &str) -> Option<[u8; 32]> {
    std::fs::read(path)
        .ok()
        .map(|b| *blake3::hash(&b).as_bytes())
}

/// Per-asset context threaded through the stages.
struct Ctx<'a> {
    source: &'a str,
    cache: &'a StageCache,
    observer: &'a dyn Observer,
}

impl Ctx<'_> {
    fn run<T, E>(
        &self,
        stage: Stage,
        clip: Option<&str>,
        key: &Key,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E>
    where
        T: Serialize + serde::de::DeserializeOwned + Fingerprint,
    {
        let start = Instant::now();
        let (v, hit) = self.cache.run(stage, key, f)?;
        self.observer.stage(
            self.source,
            clip,
            stage,
            hit,
            start.elapsed().as_secs_f64() * 1000.0,
        );
        Ok(v)
    }
}

/// Settings of one clip after precedence (clip > asset > command line).
struct ClipPlan<'a> {
    name: String,
    /// The imported clip it is cut from, and the cut.
    source: &'a SourceClip,
    range: Option<(f32, f32)>,
    settings: ClipEntry,
    profile_name: String,
}

/// Cook one asset job.
pub fn cook_asset_job(
    job: &AssetJob,
    options: &CookOptions,
    cache: &StageCache,
    observer: &dyn Observer,
) -> Result<AssetResult, CookError> {
    let profiles = Profiles::load(options)?;
    Ok(cook_asset(job, options, &profiles, cache, observer))
}

fn cook_asset(
    job: &AssetJob,
    options: &CookOptions,
    profiles: &Profiles,
    cache: &StageCache,
    observer: &dyn Observer,
) -> AssetResult {
    let input = &job.path;
    let file = display_path(input, options);
    observer.asset_started(&file);
    let ctx = Ctx {
        source: &file,
        cache,
        observer,
    };
    let Some(format) = format_of(input) else {
        return failed(
            new_report(&file, "unknown"),
            Diagnostic::error(
                "unknown_format",
                "unknown file type (expected .gltf, .glb, .fbx, .bvh or .sjson)",
            )
            .file(&file),
        );
    };
    let mut r = new_report(&file, format);
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => {
            return failed(
                r,
                Diagnostic::error("io", format!("cannot read: {e}")).file(&file),
            )
        }
    };
    let bytes_hash = *blake3::hash(&bytes).as_bytes();
    let import_options = ImportOptions {
        keep_unused_leaves: job
            .settings
            .keep_unused_leaves
            .unwrap_or(options.import.keep_unused_leaves),
        custom_curves: job.settings.curves.clone(),
    };
    let mut deps_key = Stage::Import.key();
    deps_key
        .str("deps")
        .bytes(&bytes_hash)
        .str(format)
        .u32(u32::from(import_options.keep_unused_leaves))
        .str(&import_options.custom_curves.join("\n"));
    let deps_key = deps_key.finish();

    // Companions (a .gltf's .bin files) are part of the import's input;
    // they are known from the previous import of the same bytes.
    let known_deps: Option<Deps> = cache
        .get::<Deps>(&deps_key)
        .filter(|deps| deps.iter().all(|(p, h)| hash_file(p).as_ref() == Some(h)));
    let mut fresh_import: Option<Imported> = None;
    let deps = match known_deps {
        Some(d) => d,
        None => {
            let start = Instant::now();
            let imported = match run_import(input, format, &bytes, &import_options) {
                Ok(i) => i,
                Err(d) => return failed(r, *d),
            };
            let mut deps = Vec::new();
            for c in &imported.asset.companions {
                match hash_file(c) {
                    Some(h) => deps.push((c.clone(), h)),
                    None => {
                        return failed(
                            r,
                            Diagnostic::error("io", format!("cannot read companion '{c}'"))
                                .file(&file),
                        )
                    }
                }
            }
            cache.put(&deps_key, &deps);
            cache
                .counters
                .record(Stage::Import, false, start.elapsed().as_nanos() as u64);
            observer.stage(
                &file,
                None,
                Stage::Import,
                false,
                start.elapsed().as_secs_f64() * 1000.0,
            );
            fresh_import = Some(imported);
            deps
        }
    };
    let mut source_hasher = blake3::Hasher::new();
    source_hasher.update(&bytes);
    let mut import_key = Stage::Import.key();
    import_key
        .bytes(&bytes_hash)
        .str(format)
        .u32(u32::from(import_options.keep_unused_leaves))
        .str(&import_options.custom_curves.join("\n"));
    for (p, h) in &deps {
        import_key.str(p).bytes(h);
        if let Ok(b) = std::fs::read(p) {
            source_hasher.update(&b);
        }
    }
    let import_key = import_key.finish();
    let source_hash: [u8; 32] = *source_hasher.finalize().as_bytes();
    r.source_hash = hex(&source_hash);

    // The whole asset: every input and setting that reaches the package.
    let asset_name = input
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("asset")
        .to_string();
    let units = job
        .settings
        .units
        .map(|u| u.meters())
        .or(options.units_override_m);
    let mut package_key = Stage::Package.key();
    package_key
        .key(&import_key)
        .str(COOKER_VERSION)
        .u32(ludus_anim_runtime::package::format::FORMAT_VERSION)
        .str(&asset_name)
        .str(&file)
        .bytes(&source_hash)
        .str(&format!("{:?}", job.settings))
        .str(&format!("{units:?}"))
        .f32(options.encoder_slack);
    for s in Stage::ALL {
        package_key.u32(s.version());
    }
    for (name, p) in &profiles.0 {
        package_key
            .str(name)
            .str(&serde_json::to_string(p).unwrap_or_default());
    }
    package_key.str(&options.default_profile);
    let package_key = package_key.finish();
    let start = Instant::now();
    if let Some(outcome) = cache
        .get_bytes(&package_key)
        .and_then(|b| serde_json::from_slice::<AssetOutcome>(&b).ok())
    {
        let mut bytes_key = KeyBuilder::new();
        bytes_key.str("package-bytes").key(&package_key);
        if let Some(pkg) = cache.get_bytes(&bytes_key.finish()) {
            if hex(blake3::hash(&pkg).as_bytes()) == outcome.manifest.package_hash {
                cache
                    .counters
                    .record(Stage::Package, true, start.elapsed().as_nanos() as u64);
                observer.stage(
                    &file,
                    None,
                    Stage::Package,
                    true,
                    start.elapsed().as_secs_f64() * 1000.0,
                );
                return AssetResult {
                    report: outcome.report,
                    package: Some((outcome.package_name, Arc::new(pkg))),
                    manifest: Some(outcome.manifest),
                };
            }
        }
    }

    // Import (through the cache; a fresh import above is stored now).
    let imported: Imported = match fresh_import {
        Some(i) => {
            cache.put(&import_key, &i);
            cache.record_fingerprint(Stage::Import, i.fingerprint());
            i
        }
        None => match ctx.run(Stage::Import, None, &import_key, || {
            run_import(input, format, &bytes, &import_options)
        }) {
            Ok(i) => i,
            Err(d) => return failed(r, *d),
        },
    };
    let asset = &imported.asset;
    r.decisions.extend(asset.decisions.iter().cloned());
    r.diagnostics
        .extend(asset.diagnostics.0.iter().map(ReportDiagnostic::from));
    r.diagnostics
        .extend(imported.validation.0.iter().map(ReportDiagnostic::from));
    if imported.validation.has_errors() || asset.diagnostics.has_errors() {
        r.status = AssetStatus::Failed;
        return AssetResult {
            report: r,
            package: None,
            manifest: None,
        };
    }

    // Normalize.
    let mut normalize_key = Stage::Normalize.key();
    normalize_key.key(&import_key).str(&format!("{units:?}"));
    let normalize_key = normalize_key.finish();
    let norm: Normalized = match ctx.run(Stage::Normalize, None, &normalize_key, || {
        normalize(asset, units)
    }) {
        Ok(n) => n,
        Err(e) => {
            return failed(
                r,
                Diagnostic::error("normalize_failed", e.to_string()).file(&file),
            )
        }
    };
    r.decisions.extend(norm.decisions.iter().cloned());
    let sk = &norm.skeleton;
    r.skeleton = Some(SkeletonReport {
        joints: sk.joint_count(),
        identity: sk.identity().to_hex(),
        unit_scale_m: norm.unit_scale_m,
        source_axes: asset.source_axes.description.clone(),
    });
    let kind = match asset.format.as_str() {
        "bvh" | "acl-sjson" | "fbx" => SourceKind::Samples,
        _ => SourceKind::Curves,
    };

    // The clips to cook, with their settings.
    let asset_profile = job
        .settings
        .profile
        .clone()
        .unwrap_or(options.default_profile.clone());
    let mut plans: Vec<ClipPlan> = Vec::new();
    for c in &norm.clips {
        let settings = job.settings.clips.get(&c.name).cloned().unwrap_or_default();
        if settings.skip || settings.from.is_some() {
            continue;
        }
        plans.push(ClipPlan {
            name: c.name.clone(),
            source: c,
            range: None,
            profile_name: settings.profile.clone().unwrap_or(asset_profile.clone()),
            settings,
        });
    }
    for (name, settings) in &job.settings.clips {
        match (&settings.from, settings.range) {
            (Some(from), Some([s, e])) => match norm.clips.iter().find(|c| &c.name == from) {
                Some(c) if e <= c.duration_s + 1e-4 => plans.push(ClipPlan {
                    name: name.clone(),
                    source: c,
                    range: Some((s, e.min(c.duration_s))),
                    profile_name: settings.profile.clone().unwrap_or(asset_profile.clone()),
                    settings: settings.clone(),
                }),
                Some(c) => {
                    return failed(
                        r,
                        Diagnostic::error(
                            "bad_clip_range",
                            format!("range ends at {e} s, after the end of clip '{from}' ({} s)", c.duration_s),
                        )
                        .file(&file)
                        .clip(name),
                    )
                }
                None => {
                    return failed(
                        r,
                        Diagnostic::error("unknown_clip", format!("the manifest cuts it from clip '{from}', which the asset does not have"))
                            .file(&file)
                            .clip(name),
                    )
                }
            },
            _ if !norm.clips.iter().any(|c| &c.name == name) => {
                r.diagnostics.push(ReportDiagnostic::from(
                    &Diagnostic::warning("unknown_clip", "the manifest has settings for a clip the asset does not have").file(&file).clip(name),
                ));
            }
            _ => {}
        }
    }

    // Resample, prepare, encode and verify every clip (in parallel).
    let clip_results: Vec<Result<CookedClip, Diagnostic>> = plans
        .par_iter()
        .map(|plan| {
            cook_clip(
                plan,
                &plans,
                &norm,
                &normalize_key,
                kind,
                profiles.get(&plan.profile_name),
                options,
                &ctx,
                &file,
                source_hash,
            )
        })
        .collect();
    let mut cooked = Vec::with_capacity(clip_results.len());
    for c in clip_results {
        match c {
            Ok(c) => cooked.push(c),
            Err(d) => return failed(r, d),
        }
    }

    // Report the clips; any verification failure fails the asset.
    for c in &cooked {
        r.decisions.extend(c.decisions.iter().cloned());
        for (curve, err) in &c.verification.curve_errors {
            if *err > c.curve_threshold {
                r.status = AssetStatus::Failed;
                r.diagnostics.push(ReportDiagnostic::from(
                    &Diagnostic::error(
                        "verification_failed",
                        format!(
                            "curve '{curve}' decodes {err} away from its source, above the profile's curve threshold {}",
                            c.curve_threshold
                        ),
                    )
                    .file(&file)
                    .clip(&c.report.name),
                ));
            }
        }
        if let Some(x) = c.verification.codec.violations.first() {
            r.status = AssetStatus::Failed;
            r.diagnostics.push(ReportDiagnostic::from(
                &Diagnostic::error(
                    "verification_failed",
                    format!(
                        "decoded error {:.5} mm exceeds the profile's {:.5} mm ({} joint-times over)",
                        x.error_m * 1000.0,
                        x.threshold_m * 1000.0,
                        c.verification.codec.violations.len()
                    ),
                )
                .file(&file)
                .clip(&c.report.name)
                .joint(sk.name(x.joint))
                .time(x.time_s),
            ));
        }
        r.clips.push(c.report.clone());
    }
    if r.status == AssetStatus::Failed {
        return AssetResult {
            report: r,
            package: None,
            manifest: None,
        };
    }

    // Package: the final bytes, checked by the runtime reader once more.
    let start = Instant::now();
    let contents = PackageContents {
        cooker_version: COOKER_VERSION.to_string(),
        asset_name: asset_name.clone(),
        source_path: file.clone(),
        source_hash,
        skeleton: sk,
        clips: cooked.iter().map(|c| c.entry.clone()).collect(),
    };
    let prep: Vec<ClipPrepEntry> = cooked.iter().map(|c| c.prep.clone()).collect();
    let bytes = write_package_prepared(&contents, &prep);
    if let Err(e) = Package::load(&bytes) {
        return failed(
            r,
            Diagnostic::error(
                "package_invalid",
                format!("the written package does not load: {e}"),
            )
            .file(&file),
        );
    }
    let digest = hex(blake3::hash(&bytes).as_bytes());
    let name = format!("{asset_name}-{}.{PACKAGE_EXT}", &digest[..16]);
    r.package = Some(format!("packages/{name}"));
    r.package_bytes = bytes.len() as u64;
    let manifest = ManifestAsset {
        source: file.clone(),
        source_hash: r.source_hash.clone(),
        package: format!("packages/{name}"),
        package_hash: digest,
        package_bytes: bytes.len() as u64,
        skeleton_identity: sk.identity().to_hex(),
        joints: sk.joint_count(),
        clips: cooked
            .iter()
            .map(|c| ManifestClip {
                name: c.report.name.clone(),
                codec: c.report.codec.clone(),
                codec_version: c.report.codec_version,
                profile: c.report.profile.clone(),
                duration_s: c.report.duration_s,
                samples: c.report.samples,
                sample_rate_hz: c.report.sample_rate_hz,
                loop_mode: c.report.loop_mode.clone(),
            })
            .collect(),
    };
    let outcome = AssetOutcome {
        report: r.clone(),
        package_name: name.clone(),
        package_key: package_key.to_hex(),
        manifest: manifest.clone(),
    };
    if cache.enabled() {
        let mut bytes_key = KeyBuilder::new();
        bytes_key.str("package-bytes").key(&package_key);
        cache.put_bytes(&bytes_key.finish(), &bytes);
        cache.put_bytes(
            &package_key,
            &serde_json::to_vec(&outcome).unwrap_or_default(),
        );
    }
    cache
        .counters
        .record(Stage::Package, false, start.elapsed().as_nanos() as u64);
    cache.record_fingerprint(Stage::Package, *blake3::hash(&bytes).as_bytes());
    observer.stage(
        &file,
        None,
        Stage::Package,
        false,
        start.elapsed().as_secs_f64() * 1000.0,
    );
    AssetResult {
        report: r,
        package: Some((name, Arc::new(bytes))),
        manifest: Some(manifest),
    }
}

impl Fingerprint for Imported {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for Normalized {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for (ResampledClip, ResampleReport) {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for Prepared {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for Encoded {
    /// The blob and its codec, not the time it took.
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(&(self.codec as u16, self.codec_version, &self.blob))
    }
}
impl Fingerprint for ClipVerification {
    /// The measured errors, not the decode timing.
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(&(&self.codec, self.source_error_m))
    }
}

fn run_import(
    input: &Path,
    format: &str,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<Imported, Box<Diagnostic>> {
    let file = input.display().to_string();
    let asset = match import_bytes(input, format, bytes, options) {
        Ok(a) => a,
        Err(ImportError::Malformed(d)) => return Err(d),
        Err(e) => {
            return Err(Box::new(
                Diagnostic::error("import_failed", e.to_string()).file(&file),
            ))
        }
    };
    let validation = validate_asset(&asset);
    Ok(Imported { asset, validation })
}

struct CookedClip {
    report: ClipReport,
    /// The profile's scalar-curve error threshold for this clip.
    curve_threshold: f32,
    entry: PackageClip,
    prep: ClipPrepEntry,
    verification: ClipVerification,
    decisions: Vec<Decision>,
}

fn shells_key(k: &mut KeyBuilder, v: &[f32]) {
    k.u64(v.len() as u64);
    for &x in v {
        k.f32(x);
    }
}

#[allow(clippy::too_many_arguments)]
fn cook_clip(
    plan: &ClipPlan,
    plans: &[ClipPlan],
    norm: &Normalized,
    normalize_key: &Key,
    kind: SourceKind,
    profile: &Profile,
    options: &CookOptions,
    ctx: &Ctx,
    file: &str,
    source_hash: [u8; 32],
) -> Result<CookedClip, Diagnostic> {
    let sk = &norm.skeleton;
    let name = plan.name.as_str();
    let (thresholds, shells) = profile.joint_settings(sk.names(), norm.file_shells_m.as_deref());
    let mut decisions = Vec::new();

    // Resample (a cut clip is its source shifted and shortened).
    let resample_key = resample_key_of(plan, normalize_key, kind, profile, &shells);
    let (mut resampled, rs_report) =
        run_resample(plan, norm, normalize_key, kind, profile, &shells, ctx)?;
    resampled.name = name.to_string();
    for d in &rs_report.decisions {
        decisions.push(Decision {
            kind: d.kind.clone(),
            detail: format!("clip '{name}': {}", d.detail),
        });
    }

    // Prepare: loops, root motion, additive reference, markers. Loop
    // detection uses the resampling tolerance, not the quality threshold,
    // so a quality-only change re-runs nothing before encode.
    let mut settings = prep_settings(&plan.settings);
    let imported = source_markers(plan);
    if !imported.is_empty() {
        decisions.push(Decision::new(
            "markers_from_source",
            format!(
                "clip '{name}': {} markers from the source file join the manifest's",
                imported.len()
            ),
        ));
        for m in imported {
            if !settings
                .markers
                .iter()
                .any(|x| x.name == m.name && x.time_s == m.time_s)
            {
                settings.markers.push(m);
            }
        }
    }
    let tolerance = vec![profile.sample_rate.max_resample_error_m; sk.joint_count()];
    let reference_name = match &settings.additive {
        Some(AdditiveReference::Clip { name }) => Some(name.clone()),
        Some(AdditiveReference::Frame {
            clip: Some(name), ..
        }) => Some(name.clone()),
        _ => None,
    };
    let mut k = Stage::Prepare.key();
    k.key(&resample_key)
        .str(&serde_json::to_string(&settings).unwrap_or_default());
    shells_key(&mut k, &tolerance);
    shells_key(&mut k, &shells);
    if let Some(r) = &reference_name {
        k.str(r);
        if let Some(rp) = plans.iter().find(|p| &p.name == r) {
            k.key(&resample_key_of(rp, normalize_key, kind, profile, &shells));
        }
    }
    let prepare_key = k.finish();
    let reference_clip = |wanted: &str| -> Option<ResampledClip> {
        let rp = plans.iter().find(|p| p.name == wanted)?;
        let (mut c, _) = run_resample(rp, norm, normalize_key, kind, profile, &shells, ctx).ok()?;
        c.name = wanted.to_string();
        Some(c)
    };
    let prepared: Prepared = ctx.run(Stage::Prepare, Some(name), &prepare_key, || {
        prepare(
            sk,
            resampled.clone(),
            &settings,
            &tolerance,
            &shells,
            &reference_clip,
        )
        .map_err(|e| {
            Diagnostic::error("prepare_failed", e.to_string())
                .file(file)
                .clip(name)
        })
    })?;
    decisions.extend(prepared.decisions.iter().cloned());
    let clip = &prepared.clip;
    // Additive clips strip tracks equal to the additive identity, which is
    // what the runtime fills them with.
    let encode_skeleton = match prepared.additive {
        Some(_) => additive_skeleton(sk).map_err(|e| {
            Diagnostic::error("prepare_failed", e.to_string())
                .file(file)
                .clip(name)
        })?,
        None => sk.clone(),
    };

    // Encode.
    let mut k = Stage::Encode.key();
    k.key(&prepare_key)
        .str(&format!("{:?}", profile.codec))
        // Blob layouts: a codec version bump alone invalidates encodes.
        .u32(ludus_anim_runtime::codec::CodecId::Vbr.version() as u32)
        .u32(ludus_anim_runtime::codec::CodecId::Reference.version() as u32)
        .u32(profile.max_segment_samples)
        .f32(options.encoder_slack);
    shells_key(&mut k, &thresholds);
    shells_key(&mut k, &shells);
    let encode_key = k.finish();
    let package_clip = |encoded: &Encoded| PackageClip {
        name: name.to_string(),
        duration_s: clip.duration_s,
        sample_rate_hz: clip.sample_rate_hz,
        num_samples: clip.num_samples,
        loop_mode: clip.loop_mode,
        codec: encoded.codec,
        codec_version: encoded.codec_version,
        profile: profile.name.clone(),
        source_hash,
        resample_error_m: rs_report.resample_error_m,
        max_error_m: 0.0,
        blob: encoded.blob.clone(),
        curves: clip
            .curves
            .iter()
            .map(|k| {
                CurveEntry::quantized(
                    k.id,
                    k.name.clone(),
                    k.default,
                    false,
                    &k.values,
                    profile.curve_error_threshold,
                )
            })
            .collect(),
    };
    // Verify through the runtime, reading a package holding this clip.
    let verify_entry = |entry: &PackageClip| -> Result<ClipVerification, Diagnostic> {
        let bytes = write_package_prepared(
            &PackageContents {
                cooker_version: COOKER_VERSION.to_string(),
                asset_name: String::new(),
                source_path: file.to_string(),
                source_hash,
                skeleton: sk,
                clips: vec![entry.clone()],
            },
            &[prepared.package_entry()],
        );
        let package = Package::load(&bytes).map_err(|e| {
            Diagnostic::error(
                "package_invalid",
                format!("the written package does not load: {e}"),
            )
            .file(file)
            .clip(name)
        })?;
        let decoded = package.clips().first().ok_or_else(|| {
            Diagnostic::error("package_invalid", "clip missing from package")
                .file(file)
                .clip(name)
        })?;
        Ok(verify(
            sk,
            decoded,
            package.clip_curves(decoded),
            package.sample_defaults(decoded),
            &prepared,
            plan_source_for_verify(plan, name).as_ref(),
            &thresholds,
            &shells,
        ))
    };
    let encoded: Encoded = ctx.run(Stage::Encode, Some(name), &encode_key, || {
        let mut aim = thresholds.clone();
        let mut attempts = 0;
        loop {
            let e = encode(
                &encode_skeleton,
                clip,
                profile,
                &aim,
                &shells,
                options.encoder_slack,
            )
            .map_err(|e| {
                Diagnostic::error("encode_failed", e.to_string())
                    .file(file)
                    .clip(name)
            })?;
            // The search measures deltas as poses; additive clips are used
            // applied onto a base, where an ancestor's delta error moves
            // whole bone lengths. Tighten the chains that overshoot there.
            if prepared.additive.is_none() || options.encoder_slack != 1.0 || attempts == 6 {
                return Ok(e);
            }
            let v = verify_entry(&package_clip(&e))?;
            if v.codec.violations.is_empty() {
                return Ok(e);
            }
            // Scale each overshooting joint's chain by how far it is over
            // (with a margin), so one or two passes settle it.
            let mut factor = vec![1.0f32; aim.len()];
            for (j, &err) in v.codec.per_joint_max_m.iter().enumerate() {
                if err > thresholds[j] {
                    let f = 0.9 * thresholds[j] / err;
                    let mut a = Some(j);
                    while let Some(i) = a {
                        factor[i] = factor[i].min(f);
                        a = sk.parent(i);
                    }
                }
            }
            for (a, f) in aim.iter_mut().zip(factor) {
                *a *= f;
            }
            attempts += 1;
        }
    })?;
    let entry = package_clip(&encoded);

    let mut k = Stage::Verify.key();
    k.key(&encode_key)
        .key(&prepare_key)
        .f32(profile.curve_error_threshold);
    shells_key(&mut k, &thresholds);
    shells_key(&mut k, &shells);
    let verify_key = k.finish();
    let verification: ClipVerification = ctx.run(Stage::Verify, Some(name), &verify_key, || {
        verify_entry(&entry)
    })?;
    let mut entry = entry;
    entry.max_error_m = verification.codec.max_error_m;

    let mut warnings = rs_report.warnings.clone();
    if rs_report.resample_error_m > profile.sample_rate.max_resample_error_m {
        warnings.push(format!(
            "resample error {:.4} mm above the profile's {:.4} mm",
            rs_report.resample_error_m * 1000.0,
            profile.sample_rate.max_resample_error_m * 1000.0
        ));
    }
    let raw = sk.joint_count() as u64 * clip.num_samples as u64 * 40;
    let compressed = encoded.blob.len() as u64;
    let report_joints = profile.report_joint_indices(sk.names());
    let v = &verification;
    let report = ClipReport {
        name: name.to_string(),
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
        events: prepared
            .event_names
            .iter()
            .filter(|e| e.2 == MarkerKind::Event)
            .count(),
        markers: prepared
            .event_names
            .iter()
            .filter(|e| e.2 == MarkerKind::SyncMarker)
            .count(),
        codec: encoded.codec.name().to_string(),
        codec_version: encoded.codec_version,
        raw_bytes: raw,
        compressed_bytes: compressed,
        ratio: if compressed > 0 {
            raw as f32 / compressed as f32
        } else {
            0.0
        },
        resample_error_m: rs_report.resample_error_m,
        max_error_m: v.codec.max_error_m,
        p99_error_m: v.codec.p99_error_m,
        max_rotation_error_deg: v.codec.max_rotation_error_deg,
        source_error_m: v.source_error_m,
        threshold_m: thresholds.iter().copied().fold(f32::INFINITY, f32::min),
        worst_joint: sk.name(v.codec.worst_joint).to_string(),
        worst_time_s: v.codec.worst_time_s,
        times_checked: v.codec.times_checked,
        selected_joints: report_joints
            .iter()
            .map(|&j| JointError {
                joint: sk.name(j).to_string(),
                max_error_m: v.codec.per_joint_max_m.get(j).copied().unwrap_or(0.0),
                threshold_m: thresholds[j],
            })
            .collect(),
        curves: CurvesReport {
            count: clip.curves.len(),
            max_error: v.curve_errors.iter().cloned().collect(),
        },
        compress_ms: encoded.ms,
        decode_ns_per_pose: v.decode_ns_per_pose,
        warnings,
    };
    Ok(CookedClip {
        report,
        curve_threshold: profile.curve_error_threshold,
        entry,
        prep: prepared.package_entry(),
        verification,
        decisions,
    })
}

/// The resample stage's key for a clip plan.
fn resample_key_of(
    plan: &ClipPlan,
    normalize_key: &Key,
    kind: SourceKind,
    profile: &Profile,
    shells: &[f32],
) -> Key {
    let mut k = Stage::Resample.key();
    k.key(normalize_key)
        .str(&plan.source.name)
        .str(&format!("{:?}", plan.range))
        .str(&format!("{:?}", kind));
    k.str(&serde_json::to_string(&profile.sample_rate).unwrap_or_default());
    shells_key(&mut k, shells);
    k.finish()
}

/// Resample a clip plan through the cache.
fn run_resample(
    plan: &ClipPlan,
    norm: &Normalized,
    normalize_key: &Key,
    kind: SourceKind,
    profile: &Profile,
    shells: &[f32],
    ctx: &Ctx,
) -> Result<(ResampledClip, ResampleReport), Diagnostic> {
    let key = resample_key_of(plan, normalize_key, kind, profile, shells);
    let name = plan.name.as_str();
    ctx.run(
        Stage::Resample,
        Some(name),
        &key,
        || -> Result<_, Diagnostic> {
            let cut;
            let source = match plan.range {
                Some((s, e)) => {
                    cut = cut_clip(plan.source, name, s, e);
                    &cut
                }
                None => plan.source,
            };
            Ok(resample(
                source,
                &norm.skeleton,
                &profile.sample_rate,
                shells,
                kind,
                LoopMode::Once,
            ))
        },
    )
}

/// Markers the importer found on the clip's source (glTF extras), cut and
/// shifted like the clip.
fn source_markers(plan: &ClipPlan) -> Vec<MarkerSpec> {
    let (start, end) = plan.range.unwrap_or((0.0, plan.source.duration_s));
    plan.source
        .markers
        .iter()
        .filter(|m| m.time_s >= start - 1e-6 && m.time_s <= end + 1e-6)
        .map(|m| MarkerSpec {
            name: m.name.clone(),
            time_s: (m.time_s - start).clamp(0.0, end - start),
            kind: if m.kind == "sync" {
                MarkerKind::SyncMarker
            } else {
                MarkerKind::Event
            },
            reversible: false,
        })
        .collect()
}

/// The manifest's clip settings as the prepare stage takes them.
fn prep_settings(c: &ClipEntry) -> ClipPrepSettings {
    ClipPrepSettings {
        loop_policy: match c.loop_mode.unwrap_or(LoopSetting::Auto) {
            LoopSetting::Auto => LoopPolicy::Auto,
            LoopSetting::Once => LoopPolicy::Once,
            LoopSetting::Loop => LoopPolicy::Loop,
        },
        drop_duplicate_end: c.drop_duplicate_end.unwrap_or(false),
        root_motion: c.root_motion.as_ref().map(|r| RootMotionSettings {
            joint: r.joint.clone(),
            policy: match r.policy {
                RootPolicy::Planar => RootMotionPolicy::Planar,
                RootPolicy::Full => RootMotionPolicy::Full,
            },
        }),
        additive: c.additive.as_ref().map(|a| match a {
            AdditiveEntry::Rest => AdditiveReference::RestPose,
            AdditiveEntry::Frame { clip, time_s } => AdditiveReference::Frame {
                clip: clip.clone(),
                time_s: *time_s,
            },
            AdditiveEntry::Clip { clip } => AdditiveReference::Clip { name: clip.clone() },
        }),
        markers: c
            .markers
            .iter()
            .map(|m| MarkerSpec {
                name: m.name.clone(),
                time_s: m.time_s,
                kind: match m.kind {
                    MarkerKindEntry::Sync => MarkerKind::SyncMarker,
                    MarkerKindEntry::Event => MarkerKind::Event,
                },
                reversible: m.reversible,
            })
            .collect(),
    }
}

/// The authored clip verification compares against (cut like the plan).
fn plan_source_for_verify<'a>(plan: &ClipPlan<'a>, name: &str) -> std::borrow::Cow<'a, SourceClip> {
    match plan.range {
        Some((s, e)) => std::borrow::Cow::Owned(cut_clip(plan.source, name, s, e)),
        None => std::borrow::Cow::Borrowed(plan.source),
    }
}

/// `clip` restricted to `[start, end]` and shifted to start at zero.
fn cut_clip(clip: &SourceClip, name: &str, start: f32, end: f32) -> SourceClip {
    let mut c = clip.clone();
    c.name = name.to_string();
    c.duration_s = (end - start).max(0.0);
    for tr in &mut c.tracks {
        if let Some(x) = &mut tr.translation {
            x.shift(start);
        }
        if let Some(x) = &mut tr.rotation {
            x.shift(start);
        }
        if let Some(x) = &mut tr.scale {
            x.shift(start);
        }
    }
    for k in &mut c.curves {
        k.curve.shift(start);
    }
    c.collect_key_times();
    let d = c.duration_s;
    c.key_times.retain(|&t| (0.0..=d).contains(&t));
    c
}

/// The content `ludus-anim cook` cooks when given no inputs: every glTF
/// file in the project's `fixtures/` directory.
pub fn bundled_inputs(fixtures: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| matches!(format_of(p), Some("glb" | "gltf")))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
