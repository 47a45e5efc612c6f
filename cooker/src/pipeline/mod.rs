//! One cook: asset jobs → packages under `OUT/packages/`, `OUT/report.json`
//! and the package manifest `OUT/manifest.json`.
//!
//! Assets cook in parallel (rayon), clips of an asset too; each asset is
//! independent: one with errors gets no package and a `failed` status, the
//! others still cook. Every stage runs through the stage cache under the
//! key `keys` derives for it, and a whole asset whose inputs and settings
//! are unchanged is served from one record (the `package` stage's key).
//! Packages are a pure function of their inputs: byte-identical whatever
//! the thread count or order.
//!
//! Where things plug in: sources come through a [`SourceReader`], outputs
//! go to a [`Sink`], cache entries to a `CacheBackend`, and everything that
//! happens is a [`CookEvent`] to an [`Observer`].

mod asset;
mod bounds;
pub mod chain;
mod clip;
pub mod curve_schema;
mod ingest;
mod isolate;
mod joint_sets;
mod plan;
mod retarget;
#[cfg(test)]
mod runner_tests;
pub(crate) mod sidecar;
pub mod sidecar_doc;
mod skeleton;
mod skins;
mod sockets;
pub mod uptodate;

use crate::events::{CookEvent, Observer};
use crate::manifest::{AssetEntry, AssetJob};
use crate::profile::{CodecChoice, Profile, ProfileError};
use crate::publish::Staging;
use crate::report::{self, PackageManifest, Report};
use crate::sink::{PublishError, Sink};
use crate::source::{FileSystem, SourceReader};
use crate::stage::Fingerprint;
use crate::stage::{CookStage, Stage};
use crate::stage_cache::{StageCache, Tier};
use ludus_anim_cache::Key;
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::limits::{LimitOverrides, Limits};
use ludus_anim_model::Diagnostic;
use rayon::prelude::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

pub use asset::AssetResult;
pub use isolate::PANIC_CODE;
pub use sidecar::SidecarSettings;

/// What to cook and how.
#[derive(Clone, Debug)]
pub struct CookOptions {
    pub jobs: Vec<AssetJob>,
    /// Source paths in packages, reports and keys are recorded relative to
    /// this directory (the project root; `None`: the working directory), so
    /// cooks on different machines agree. Job paths, like every path a
    /// person types, are relative to the working directory or absolute.
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
    /// Cook only shard `i` of `n` (1-based): a deterministic split
    /// balanced by estimated cost ([`balance`]), so a farm's shards
    /// together cook every asset once and take about as long.
    pub shard: Option<(u32, u32)>,
    /// Codec for every profile (`--codec`), replacing the profiles' own.
    pub codec_override: Option<CodecChoice>,
    /// `OUT/report-sidecar.json` (the dashboard's per-time data).
    pub sidecar: SidecarSettings,
    /// Retarget profile for assets whose manifest entry names none
    /// (`--retarget`).
    pub retarget: Option<PathBuf>,
    /// Resource limits from the command line (`--limit`), over the
    /// manifest's for every asset; profiles are read under their
    /// `max_file_bytes` too.
    pub limits: LimitOverrides,
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
            sidecar: SidecarSettings::default(),
            retarget: None,
            limits: LimitOverrides::default(),
        }
    }

    /// The limits of one job: defaults, then the manifest's, then the
    /// command line's.
    pub fn limits_of(&self, job: &AssetJob) -> Limits {
        job.settings
            .limits
            .then(&self.limits)
            .apply(&Limits::default())
    }

    /// A source path as packages, reports and keys record it: relative to
    /// the project root (the working directory without one), normalized,
    /// `/`-separated (`crate::paths`), so cooks on different machines and
    /// from different spellings of one file agree.
    pub fn recorded_path(&self, path: &Path) -> String {
        let root = crate::paths::absolute_root(self.project_root.as_deref());
        crate::paths::record(path, &root)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum CookError {
    #[error(
        "cannot write {path}: {source}; nothing was published (the previous outputs are unchanged)"
    )]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Publish(#[from] PublishError),
    #[error(transparent)]
    Profile(#[from] ProfileError),
    #[error("cannot start worker threads: {0}")]
    Threads(String),
}

/// The shard (1-based) of each of `costs`' jobs among `n`: the costliest
/// job first onto the least loaded shard (ties: the job with the smaller
/// `names` entry first, then the lower shard), so every machine computes
/// the same split and no shard's load exceeds another's by more than the
/// largest job (greedy longest-first scheduling).
pub fn balance(costs: &[u64], names: &[String], n: u32) -> Vec<u32> {
    let n = n.max(1) as usize;
    let mut order: Vec<usize> = (0..costs.len()).collect();
    order.sort_by(|&a, &b| {
        costs[b]
            .cmp(&costs[a])
            .then_with(|| names.get(a).cmp(&names.get(b)))
    });
    let mut load = vec![0u64; n];
    let mut split = vec![1u32; costs.len()];
    for i in order {
        let (shard, _) = load
            .iter()
            .enumerate()
            .min_by_key(|&(s, l)| (*l, s))
            .unwrap_or((0, &0));
        load[shard] = load[shard].saturating_add(costs[i]);
        split[i] = shard as u32 + 1;
    }
    split
}

/// Profiles referenced by a cook, loaded once up front (a bad name fails
/// the cook before any work), by the name they are referenced with.
pub struct Profiles(pub BTreeMap<String, Profile>);

impl Profiles {
    pub fn load(
        options: &CookOptions,
        reader: &dyn SourceReader,
    ) -> Result<Profiles, ProfileError> {
        let max_bytes = options.limits.apply(&Limits::default()).max_file_bytes;
        let mut names = vec![options.default_profile.clone()];
        for j in &options.jobs {
            names.extend(j.settings.profile.clone());
            names.extend(j.settings.clips.values().filter_map(|c| c.profile.clone()));
        }
        let mut map = BTreeMap::new();
        for n in names {
            if let std::collections::btree_map::Entry::Vacant(slot) = map.entry(n) {
                let location = profile_location(slot.key(), options);
                let mut p = Profile::load_from(&location, reader, max_bytes)?;
                if let Some(c) = &options.codec_override {
                    p.codec = c.clone();
                }
                slot.insert(p);
            }
        }
        Ok(Profiles(map))
    }

    /// The profiles one asset's clips can read: the asset's own (or the
    /// default) and every clip's. The asset's package key covers these
    /// only, so it does not depend on which other assets share the cook
    /// (the asset server cooks subsets).
    pub fn referenced_by(&self, settings: &AssetEntry, default: &str) -> BTreeMap<String, Profile> {
        let own = settings.profile.as_deref().unwrap_or(default);
        let clips = settings.clips.values().filter_map(|c| c.profile.as_deref());
        std::iter::once(own)
            .chain(clips)
            .filter_map(|n| self.0.get(n).map(|p| (n.to_string(), p.clone())))
            .collect()
    }

    /// A profile the cook loaded. Every name the options reference was
    /// loaded by [`Profiles::load`], so a miss is a caller's bug.
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.0.get(name)
    }
}

/// Where a profile named in a project is read: a relative `.toml` path
/// that exists under the project root is read there (the manifest's
/// `profile = "bench.toml"` works from any working directory), anything
/// else as given. Keys and reports use the name as written.
fn profile_location(name: &str, options: &CookOptions) -> String {
    let bundled = crate::profile::BUNDLED.iter().any(|(b, _)| *b == name);
    match &options.project_root {
        Some(root) if !bundled && Path::new(name).is_relative() && root.join(name).is_file() => {
            root.join(name).display().to_string()
        }
        _ => name.to_string(),
    }
}

/// Everything one cook shares between its workers.
pub(crate) struct Cook<'a> {
    pub options: &'a CookOptions,
    pub profiles: &'a Profiles,
    pub cache: &'a StageCache,
    pub observer: &'a dyn Observer,
    pub reader: &'a dyn SourceReader,
    /// Serve an asset whose package key hits from its cached record
    /// (`false`: run its stages, each still through the cache).
    pub reuse_packages: bool,
}

impl Cook<'_> {
    /// Run stage `S` on `spec` and `input` through the cache under
    /// `S::key(spec)`, counting it and telling the observer; `clip` names
    /// the clip for clip-level stages.
    pub fn stage<S: CookStage>(
        &self,
        source: &str,
        clip: Option<&str>,
        spec: &S::Spec<'_>,
        input: S::Input<'_>,
    ) -> Result<S::Output, Diagnostic> {
        if !S::CACHED {
            let start = Instant::now();
            let out = S::run(spec, input)?;
            self.cache.record_fingerprint(S::STAGE, out.fingerprint());
            self.record(source, S::STAGE, clip, None, start);
            return Ok(out);
        }
        self.run(source, S::STAGE, clip, &S::key(spec), || {
            S::run(spec, input)
        })
    }

    /// Stage `S`'s cached output for `spec`, counted and told as a hit;
    /// `None` (nothing counted) when it must run: the pipeline looks a
    /// stage up before producing the inputs it would need.
    pub fn cached<S: CookStage>(
        &self,
        source: &str,
        clip: Option<&str>,
        spec: &S::Spec<'_>,
    ) -> Option<S::Output> {
        let start = Instant::now();
        let (out, tier) = self.cache.lookup::<S::Output>(S::STAGE, &S::key(spec))?;
        self.cache.record_fingerprint(S::STAGE, out.fingerprint());
        self.record(source, S::STAGE, clip, Some(tier), start);
        Some(out)
    }

    /// Run `stage` through the cache and tell the observer.
    pub fn run<T, E>(
        &self,
        source: &str,
        stage: Stage,
        clip: Option<&str>,
        key: &Key,
        f: impl FnOnce() -> Result<T, E>,
    ) -> Result<T, E>
    where
        T: serde::Serialize + serde::de::DeserializeOwned + Fingerprint,
    {
        let start = Instant::now();
        let (v, found) = self.cache.run(stage, key, f)?;
        self.observer.event(&CookEvent::Stage {
            source,
            clip,
            stage,
            hit: found.is_some(),
            remote: found == Some(Tier::Remote),
            ms: start.elapsed().as_secs_f64() * 1000.0,
        });
        Ok(v)
    }

    /// Count a stage that ran outside [`Cook::run`] (`found`: the tier of
    /// a hit; `None`: it ran) and tell the observer.
    pub fn record(
        &self,
        source: &str,
        stage: Stage,
        clip: Option<&str>,
        found: Option<Tier>,
        start: Instant,
    ) {
        let elapsed = start.elapsed();
        let hit = found.is_some();
        self.cache
            .counters
            .record(stage, hit, elapsed.as_nanos() as u64);
        self.observer.event(&CookEvent::Stage {
            source,
            clip,
            stage,
            hit,
            remote: found == Some(Tier::Remote),
            ms: elapsed.as_secs_f64() * 1000.0,
        });
    }
}

/// Cook every job from the file system into `options.out`, publishing
/// its packages, report and manifest together or not at all
/// ([`crate::publish`]).
pub fn cook(
    options: &CookOptions,
    cache: &StageCache,
    observer: &dyn Observer,
) -> Result<Report, CookError> {
    let out = Staging::begin(&options.out).map_err(|source| CookError::Write {
        path: options.out.display().to_string(),
        source,
    })?;
    let report = cook_with(options, cache, observer, &FileSystem, &out)?;
    if let Some((generation, files)) = out.published() {
        uptodate::record(options, cache, &report.totals, generation, &files);
    }
    Ok(report)
}

/// Cook every job, reading sources through `reader` and writing packages,
/// `manifest.json` and `report.json` to `sink` (a shard writes
/// `manifest.shard-I-of-N.json` and `report.shard-I-of-N.json` instead, so
/// shards sharing one output directory never overwrite each other).
pub fn cook_with(
    options: &CookOptions,
    cache: &StageCache,
    observer: &dyn Observer,
    reader: &dyn SourceReader,
    sink: &dyn Sink,
) -> Result<Report, CookError> {
    let start = Instant::now();
    let profiles = Profiles::load(options, reader)?;
    let cx = Cook {
        options,
        profiles: &profiles,
        cache,
        observer,
        reader,
        reuse_packages: true,
    };
    let shard = shard_info(options, reader);
    let jobs: Vec<&AssetJob> = options
        .jobs
        .iter()
        .enumerate()
        .filter(|(k, _)| match &shard {
            Some(s) => s.assignment.get(*k) == Some(&s.index),
            None => true,
        })
        .map(|(_, j)| j)
        .collect();
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(options.threads)
        .build()
        .map_err(|e| CookError::Threads(e.to_string()))?;
    let results = cook_jobs(&pool, &jobs, &cx, sink)?;
    let mut report = new_report(options);
    let mut manifest = PackageManifest {
        cooker_version: crate::COOKER_VERSION.to_string(),
        package_format_version: ludus_anim_format::package::FORMAT_VERSION,
        assets: Vec::new(),
        shard: shard.clone(),
    };
    let mut parts = Vec::with_capacity(results.len());
    for r in results {
        manifest.assets.extend(r.manifest);
        parts.push((r.report.source.clone(), r.sidecar));
        report.assets.push(r.report);
    }
    // A shard reports the groups of its own clips (merged across shards
    // by `merge`), but only the whole cook can tell about members no
    // asset produced or ranges across assets.
    let silent = crate::events::Silent;
    let told: &dyn Observer = if shard.is_none() { observer } else { &silent };
    report.sync_groups = sync_groups(&report, &jobs, told);
    unmatched_project_curve_rules(&report, &jobs, told);
    // Uploads finish (bounded) before the report counts them.
    cache.flush();
    report.shard = shard;
    finish_report(&mut report, cache, observer, start);
    let shard = report.shard.as_ref();
    let sidecar_file = sidecar::sidecar_file(shard);
    let sidecar = match options.sidecar.write {
        true => sidecar_document(parts, &sidecar_file, &pool, &jobs, &cx, sink)?,
        false => None,
    };
    let (report_json, manifest_json) = (to_json(&report)?, to_json(&manifest)?);
    let mut index: Vec<(&str, &[u8])> = Vec::new();
    if let Some(json) = &sidecar {
        index.push((&sidecar_file, json));
    }
    let (report_file, manifest_file) = (
        report::farm::report_file(shard),
        report::farm::manifest_file(shard),
    );
    index.push((&report_file, &report_json));
    index.push((&manifest_file, &manifest_json));
    sink.publish(&index)?;
    observer.event(&CookEvent::CookFinished {
        report: &report,
        out: &options.out,
    });
    Ok(report)
}

/// The cook's sync groups over every asset; notices for clips no asset
/// produced and for ranges past a group's bound (the groups are the
/// manifest's, copied into every job).
fn sync_groups(
    report: &Report,
    jobs: &[&AssetJob],
    observer: &dyn Observer,
) -> Vec<ludus_anim_report::sync::SyncGroupReport> {
    let Some(job) = jobs.first() else {
        return Vec::new();
    };
    let names: Vec<&str> = report
        .assets
        .iter()
        .flat_map(|a| a.clips.iter().map(|c| c.name.as_str()))
        .collect();
    let failed = failed_sources(report);
    let unknown = crate::sync_groups::unknown_members(&job.settings.sync_groups, &names, &failed);
    let (groups, notices) = crate::sync_groups::cook_groups(&job.settings.sync_groups, report);
    for n in unknown.iter().chain(&notices) {
        observer.event(&CookEvent::Notice { message: n });
    }
    groups
}

/// Sources of the cook's failed assets (which report no clips or curves,
/// so a cook-wide check cannot tell what they hold).
fn failed_sources(report: &Report) -> Vec<&str> {
    report
        .assets
        .iter()
        .filter(|a| a.status == crate::report::AssetStatus::Failed)
        .map(|a| a.source.as_str())
        .collect()
}

/// Notices for `[[project.curve_schema]]` rules that name no curve
/// channel of any asset of the cook (a typo, or a rule for channels the
/// project no longer has). Profile rules are shared across projects and
/// are not expected to match in each; asset rules are warned per asset.
fn unmatched_project_curve_rules(report: &Report, jobs: &[&AssetJob], observer: &dyn Observer) {
    let Some(job) = jobs.first() else { return };
    let (_, project) = job.settings.curve_layers();
    if project.is_empty() {
        return;
    }
    let channels: std::collections::BTreeSet<&str> = report
        .assets
        .iter()
        .flat_map(|a| &a.clips)
        .flat_map(|c| c.curves.max_error.keys().map(String::as_str))
        .collect();
    let failed = match failed_sources(report).len() {
        0 => String::new(),
        n => format!(" ({n} failed asset(s) may hold it)"),
    };
    for r in project
        .iter()
        .filter(|r| !channels.iter().any(|c| r.matches(c)))
    {
        let message = format!(
            "{}: match \"{}\" names no curve channel of any asset of this cook{failed}",
            r.origin, r.pattern
        );
        observer.event(&CookEvent::Notice { message: &message });
    }
}

/// Cook `jobs` on `pool`, each isolated (a panic fails its asset only),
/// writing each package to `sink` as its asset finishes. After a write
/// error the assets not yet started are skipped and the first error is
/// returned: the cook cannot be published.
fn cook_jobs(
    pool: &rayon::ThreadPool,
    jobs: &[&AssetJob],
    cx: &Cook<'_>,
    sink: &dyn Sink,
) -> Result<Vec<AssetResult>, CookError> {
    let failed = AtomicBool::new(false);
    let results: Vec<Result<Option<AssetResult>, CookError>> = pool.install(|| {
        jobs.par_iter()
            .map(|job| {
                if failed.load(Ordering::Relaxed) {
                    return Ok(None);
                }
                let r = isolate::cook_asset_isolated(job, cx);
                if let Some((name, bytes)) = &r.package {
                    let written = write(sink, &format!("packages/{name}"), bytes);
                    if written.is_err() {
                        failed.store(true, Ordering::Relaxed);
                    }
                    written?;
                }
                cx.observer
                    .event(&CookEvent::AssetFinished { report: &r.report });
                Ok(Some(r))
            })
            .collect()
    });
    let mut done = Vec::with_capacity(results.len());
    for r in results {
        done.extend(r?);
    }
    Ok(done)
}

/// The sidecar document of the cook's parts, or `None` when the sink
/// keeps the published one (its `content` is this cook's) or takes the
/// parts itself (the asset server). Parts served from the cache are read
/// only when the document is rebuilt; one missing there sends its asset
/// through its stages again.
fn sidecar_document(
    parts: Vec<(String, sidecar_doc::AssetSidecar)>,
    file: &str,
    pool: &rayon::ThreadPool,
    jobs: &[&AssetJob],
    cx: &Cook<'_>,
    sink: &dyn Sink,
) -> Result<Option<Vec<u8>>, CookError> {
    let max_mb = cx.options.sidecar.max_mb;
    let states: Vec<&sidecar_doc::AssetSidecar> = parts.iter().map(|(_, p)| p).collect();
    let content = sidecar_doc::content_of(&states, max_mb);
    if sink.keep_published(file, &sidecar_doc::header(&content)) {
        return Ok(None);
    }
    let ready: Vec<sidecar_doc::NamedPart> = pool.install(|| {
        parts
            .into_par_iter()
            .zip(jobs.par_iter())
            .filter_map(|((source, part), job)| {
                let recook = || {
                    let fresh = Cook {
                        reuse_packages: false,
                        ..*cx
                    };
                    isolate::cook_asset_isolated(job, &fresh).sidecar
                };
                sidecar_doc::materialize(part, cx.cache, recook).map(|p| (source, p))
            })
            .collect()
    });
    let Some(ready) = sink.take_sidecar(ready) else {
        return Ok(None);
    };
    let parts: Vec<_> = ready.into_iter().map(|(_, p)| p).collect();
    sidecar_doc::document(&parts, max_mb, &content)
        .map(Some)
        .map_err(|source| CookError::Write {
            path: file.to_string(),
            source,
        })
}

/// With `--shard I/N`, the shard this cook is: every job of the whole
/// cook by recorded path (what `merge` orders by and checks completeness
/// with), each job's source hash (every shard reads every source once, so
/// the merge can refuse shards cooked from different checkouts), the
/// stage versions, and the split balanced by each job's estimated cost.
fn shard_info(options: &CookOptions, reader: &dyn SourceReader) -> Option<report::ShardInfo> {
    let (index, count) = options.shard?;
    let read = |job: &AssetJob| {
        let max = options.limits_of(job).max_file_bytes;
        match reader.read_bounded(&job.path, max) {
            Ok(bytes) => (
                blake3::hash(&bytes).to_hex().to_string(),
                estimated_cost(&job.path, &bytes, reader, max),
            ),
            Err(_) => (String::new(), 0),
        }
    };
    let (source_hashes, costs): (Vec<String>, Vec<u64>) = options.jobs.iter().map(read).unzip();
    let jobs: Vec<String> = options
        .jobs
        .iter()
        .map(|j| options.recorded_path(&j.path))
        .collect();
    Some(report::ShardInfo {
        index,
        count,
        assignment: balance(&costs, &jobs, count),
        jobs,
        source_hashes,
        stage_versions: Stage::ALL
            .iter()
            .map(|s| format!("{}:{}", s.name(), s.version()))
            .collect(),
        costs,
    })
}

/// A job's estimated cook cost without importing it: its source's bytes,
/// plus a `.gltf`'s external buffers (where its keyframes are). Cook time
/// grows with keyframe data; the clip count would need an import.
fn estimated_cost(path: &Path, bytes: &[u8], reader: &dyn SourceReader, max: u64) -> u64 {
    let mut cost = bytes.len() as u64;
    let is_gltf = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gltf"));
    let Some(doc) = is_gltf
        .then(|| serde_json::from_slice::<serde_json::Value>(bytes).ok())
        .flatten()
    else {
        return cost;
    };
    let dir = path.parent().unwrap_or(Path::new(""));
    let uris = doc["buffers"].as_array().into_iter().flatten();
    for uri in uris.filter_map(|b| b["uri"].as_str()) {
        if uri.starts_with("data:") || uri.contains("..") {
            continue;
        }
        if let Ok(b) = reader.read_bounded(&dir.join(uri), max) {
            cost = cost.saturating_add(b.len() as u64);
        }
    }
    cost
}

/// Cook one asset job (no output is written).
pub fn cook_asset_job(
    job: &AssetJob,
    options: &CookOptions,
    cache: &StageCache,
    observer: &dyn Observer,
) -> Result<AssetResult, CookError> {
    let profiles = Profiles::load(options, &FileSystem)?;
    let cx = Cook {
        options,
        profiles: &profiles,
        cache,
        observer,
        reader: &FileSystem,
        reuse_packages: true,
    };
    Ok(isolate::cook_asset_isolated(job, &cx))
}

fn new_report(options: &CookOptions) -> Report {
    Report {
        cooker_version: crate::COOKER_VERSION.to_string(),
        build: Some(report::BuildInfo {
            version: env!("CARGO_PKG_VERSION").to_string(),
            revision: crate::REVISION.to_string(),
        }),
        profile: options.default_profile.clone(),
        assets: Vec::new(),
        totals: Default::default(),
        stages: BTreeMap::new(),
        cache_notices: Vec::new(),
        remote: None,
        shard: None,
        sync_groups: Vec::new(),
    }
}

/// Stage counters, cache notices and totals.
fn finish_report(report: &mut Report, cache: &StageCache, observer: &dyn Observer, start: Instant) {
    report.stages = cache
        .counters
        .snapshot()
        .into_iter()
        .map(|(s, st)| (s.name().to_string(), st))
        .collect();
    report.remote = cache.remote_report();
    report.cache_notices = cache.take_notices();
    for n in &report.cache_notices {
        observer.event(&CookEvent::Notice { message: n });
    }
    report.compute_totals(
        start.elapsed().as_secs_f64() * 1000.0,
        report::peak_rss_mb(),
    );
}

fn to_json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, CookError> {
    serde_json::to_vec_pretty(v).map_err(|e| CookError::Write {
        path: "JSON output".into(),
        source: std::io::Error::other(e),
    })
}

fn write(sink: &dyn Sink, rel: &str, bytes: &[u8]) -> Result<(), CookError> {
    sink.write(rel, bytes).map_err(|source| CookError::Write {
        path: sink.describe(rel),
        source,
    })
}

/// The package bytes of an asset, shared between the result and the cache.
pub(crate) type PackageBytes = (String, Arc<Vec<u8>>);
