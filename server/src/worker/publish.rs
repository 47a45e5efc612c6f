//! Cook a set of assets, fold the results into every asset's state, and
//! publish a generation when anything a client sees changed.

use super::health::Unpublished;
use super::{snapshot, AssetState, Stopwatch, Worker, SOURCE_MISSING};
use crate::generation::{GenerationFiles, PackageSink, StaleMap, Written};
use crate::observer::ServerObserver;
use crate::reader::{absolute, stamp_now, Stamp, WatchedReader};
use crate::sidecar::SidecarParts;
use crate::state::{unix_ms, Cooking, LastCook, Published};
use ludus_anim_cache::Store;
use ludus_anim_cooker::pipeline::{cook_with, CookError, CookOptions, SidecarSettings};
use ludus_anim_cooker::project::Origin;
use ludus_anim_cooker::remote::FarmCache;
use ludus_anim_cooker::report::{
    AssetReport, AssetStatus, PackageManifest, Report, ReportDiagnostic, Severity,
};
use ludus_anim_cooker::stage_cache::StageCache;
use ludus_anim_importers::ImportOptions;
use serde_json::json;
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Instant, SystemTime};

/// The diagnostic of an asset whose source file is gone.
const VANISHED: &str = "the source file is gone (deleted, or renamed away by a save); its last package is served until the file returns or the manifest no longer names it";

/// Why a cook did not run.
#[derive(Debug, thiserror::Error)]
enum RunError {
    #[error(transparent)]
    Cook(#[from] CookError),
    #[error("cannot prepare the output directory: {0}")]
    Output(#[from] std::io::Error),
}

/// What one cook returned.
struct Cooked {
    report: Report,
    manifest: Option<PackageManifest>,
    inputs: Vec<(String, Vec<PathBuf>)>,
    stamps: HashMap<PathBuf, Stamp>,
    /// The cooked assets' sidecar records.
    sidecar: SidecarParts,
}

impl Worker {
    /// Cook `dirty` (in project order) and publish what changed.
    pub(super) fn cook(&mut self, dirty: &BTreeSet<String>, clock: &mut Stopwatch) {
        let names: Vec<String> = self
            .order
            .iter()
            .filter(|n| dirty.contains(*n))
            .cloned()
            .collect();
        let start = Instant::now();
        self.set_cooking(Some(&names));
        let (present, missing) = self.split_missing(names.clone());
        if !missing.is_empty() {
            self.mark_failed(&missing, SOURCE_MISSING, VANISHED, Vec::new());
        }
        if !present.is_empty() {
            self.cook_names(&present);
        }
        let end = Instant::now();
        clock.cook = Some((start, end));
        let ms = (end - start).as_secs_f64() * 1000.0;
        self.shared.metrics.cook_seconds.observe(ms / 1000.0);
        let published = self.publish_if_changed(Some(clock));
        let failed = names
            .iter()
            .filter(|n| {
                self.assets
                    .get(*n)
                    .is_some_and(|s| s.report.status == AssetStatus::Failed)
            })
            .count();
        if let Ok(mut l) = self.shared.last_cook.lock() {
            *l = Some(LastCook {
                finished_unix_ms: unix_ms(SystemTime::now()),
                ms,
                assets: names.len(),
                failed,
                published,
            });
        }
        // `cooking` is cleared by the caller once the watches are updated
        // too: an idle `/status` means everything the cook changed is done.
    }

    /// `names` split into those whose source file is there and those whose
    /// source vanished (not cooked: they keep their last package).
    fn split_missing(&self, names: Vec<String>) -> (Vec<String>, Vec<String>) {
        names
            .into_iter()
            .partition(|n| self.jobs.get(n).is_none_or(|j| j.path.is_file()))
    }

    /// One cook of `names`; a cook that cannot run (a profile that does
    /// not load) is retried asset by asset, so only the assets that read
    /// the broken file fail.
    fn cook_names(&mut self, names: &[String]) {
        let profiles = self.stamp_profiles(names);
        self.shared.metrics.cooks.fetch_add(1, Relaxed);
        match self.run_cook(names) {
            Ok(c) => self.merge(c, profiles),
            Err(RunError::Cook(CookError::Profile(_))) if names.len() > 1 => {
                for n in names {
                    self.cook_names(std::slice::from_ref(n));
                }
            }
            Err(e) => {
                self.shared.metrics.cooks_failed.fetch_add(1, Relaxed);
                self.warn(format!("cook of {} assets did not run: {e}", names.len()));
                self.mark_failed(names, "cook_failed", &e.to_string(), profiles);
            }
        }
    }

    fn run_cook(&self, names: &[String]) -> Result<Cooked, RunError> {
        let options = CookOptions {
            jobs: names
                .iter()
                .filter_map(|n| self.jobs.get(n).cloned())
                .collect(),
            project_root: self.project.root.clone(),
            out: self.project.out.clone(),
            default_profile: self.project.profile.clone(),
            units_override_m: None,
            import: ImportOptions::default(),
            encoder_slack: 1.0,
            threads: self.settings.threads,
            shard: None,
            codec_override: None,
            // The size limit applies to the generation's whole sidecar
            // (`crate::sidecar::write`), not to a cook of a few assets.
            sidecar: SidecarSettings {
                write: self.project.report.sidecar,
                max_mb: None,
            },
            retarget: None,
            limits: Default::default(),
        };
        let cache = self.open_cache();
        let reader = WatchedReader::new(&self.roots());
        let observer = ServerObserver::new(&self.shared, self.settings.slow_asset);
        let sink = PackageSink::new(&self.project.out)?;
        let report = cook_with(&options, &cache, &observer, &reader, &sink)?;
        let sidecar = crate::sidecar::by_asset(sink.take_sidecar_parts());
        Ok(Cooked {
            report,
            sidecar,
            manifest: sink.take_manifest(),
            inputs: observer.take_inputs(),
            stamps: reader.take_stamps(),
        })
    }

    /// The local store, layered over the remote cache when one is set (as
    /// `cook`); a remote that cannot be opened is a warning, not a stop.
    fn open_cache(&self) -> StageCache {
        let store = match Store::open(&self.project.cache_dir) {
            Ok(s) => s,
            Err(e) => {
                self.warn(format!("cache unavailable, cooking without it: {e}"));
                return StageCache::local(None);
            }
        };
        let Some(config) = self.project.remote.clone() else {
            return StageCache::local(Some(store));
        };
        match FarmCache::open(store, config) {
            Ok(f) => StageCache::new(Some(Box::new(f))),
            Err(e) => {
                self.warn(format!(
                    "remote cache unavailable, cooking with the local cache: {e}"
                ));
                StageCache::local(Store::open(&self.project.cache_dir).ok())
            }
        }
    }

    /// The directories cooks may read: the manifest's, else the inputs'
    /// (a file's directory), else the bundled fixtures.
    fn roots(&self) -> Vec<PathBuf> {
        let r = &self.resolver;
        match (self.project.origin, &self.project.root) {
            (Origin::Manifest, Some(root)) => vec![r.cwd.join(root)],
            (Origin::Bundled, _) => vec![r.cwd.join(&r.fixtures)],
            _ => r
                .args
                .inputs
                .iter()
                .map(|i| r.cwd.join(i))
                .map(|p| match p.is_dir() {
                    true => p,
                    false => p.parent().map(PathBuf::from).unwrap_or(p),
                })
                .collect(),
        }
    }

    /// Stamp the profile files `names` read, before the cook reads them:
    /// a change during the cook is then seen as a change afterwards.
    fn stamp_profiles(&self, names: &[String]) -> Vec<(PathBuf, Stamp)> {
        let files: BTreeSet<PathBuf> = names.iter().flat_map(|n| self.extra_files(n)).collect();
        files
            .into_iter()
            .filter_map(|f| stamp_now(&f).map(|s| (f, s)))
            .collect()
    }

    fn merge(&mut self, mut c: Cooked, profiles: Vec<(PathBuf, Stamp)>) {
        if let Some(m) = &c.manifest {
            self.format_version = m.package_format_version;
        }
        for a in &c.report.assets {
            let (good, sidecar) = match a.status {
                AssetStatus::Ok => (
                    c.manifest
                        .as_ref()
                        .and_then(|m| m.assets.iter().find(|e| e.source == a.source).cloned()),
                    c.sidecar.remove(&a.source),
                ),
                AssetStatus::Failed => {
                    self.shared.metrics.asset_errors.fetch_add(1, Relaxed);
                    let prev = self.assets.get(&a.source);
                    (
                        prev.and_then(|s| s.good.clone()),
                        prev.and_then(|s| s.sidecar.clone()),
                    )
                }
            };
            self.assets
                .insert(a.source.clone(), AssetState::new(a.clone(), good, sidecar));
        }
        for (name, files) in c.inputs {
            let mut set: BTreeSet<PathBuf> = files.iter().map(|f| absolute(f)).collect();
            set.extend(self.extra_files(&name));
            self.deps.set(&name, set);
        }
        for (p, s) in c.stamps.into_iter().chain(profiles) {
            self.deps.record(p, s);
        }
        self.template = Some(Report {
            assets: Vec::new(),
            ..c.report
        });
    }

    /// A cook that did not run: every asset in it failed with `why`
    /// (keeping its last good package, so it is stale).
    fn mark_failed(
        &mut self,
        names: &[String],
        code: &str,
        why: &str,
        profiles: Vec<(PathBuf, Stamp)>,
    ) {
        for n in names {
            let prev = self.assets.get(n).cloned();
            let format = self.jobs.get(n).and_then(|j| {
                ludus_anim_model::SourceFormat::of_path(&j.path).map(|f| f.name().to_string())
            });
            let hash = prev
                .as_ref()
                .map(|p| p.report.source_hash.clone())
                .unwrap_or_default();
            let report = AssetReport::failed(
                n.clone(),
                hash,
                format.unwrap_or_else(|| "unknown".into()),
                (code, why.to_string(), None),
            );
            let (good, sidecar) = prev.map_or((None, None), |p| (p.good, p.sidecar));
            self.assets
                .insert(n.clone(), AssetState::new(report, good, sidecar));
            let mut files = self.deps.files_of(n).cloned().unwrap_or_default();
            files.extend(self.extra_files(n));
            self.deps.set(n, files);
        }
        for (p, s) in profiles {
            self.deps.record(p, s);
        }
    }

    /// Publish the assets' state as a new generation if a client would
    /// see a difference (packages, statuses, diagnostics, stale flags).
    pub(super) fn publish_if_changed(&mut self, clock: Option<&Stopwatch>) -> Option<u64> {
        let published = self.publish_inner(clock);
        self.refresh_health();
        if published.is_some() {
            self.shared.bump();
        }
        published
    }

    fn publish_inner(&mut self, clock: Option<&Stopwatch>) -> Option<u64> {
        let start = Instant::now();
        let current = self.shared.current();
        let fingerprint = self.fingerprint();
        if let Some(c) = current.as_ref().filter(|c| c.fingerprint == fingerprint) {
            self.unpublished = None;
            if self.sidecar_missing {
                self.finish_outputs(c.number);
            }
            return None;
        }
        let number = self.gens.next_number(current.as_ref().map(|c| c.number));
        let mut files = self.assemble(number, current.as_deref());
        let written = match self.write_generation(&mut files) {
            Ok(r) => r,
            Err(e) => {
                let message = format!("generation {number} could not be written: {e}");
                self.warn(message.clone());
                let assets = differing_assets(current.as_deref(), &files);
                self.unpublished = Some(Unpublished { message, assets });
                return None;
            }
        };
        self.unpublished = None;
        let (changed, removed) = changed_assets(current.as_deref(), &files);
        let stale: Vec<String> = files.stale.keys().cloned().collect();
        let (assets, packages) = (files.report.assets.len(), files.manifest.assets.len());
        self.install(files, written, fingerprint);
        self.shared.metrics.generations.fetch_add(1, Relaxed);
        let mut event = json!({
            "event": "generation_published",
            "generation": number,
            "assets": assets,
            "changed": changed,
            "removed": removed,
            "stale": stale,
        });
        if let Some(c) = clock {
            if let Some(t) = c.first_event {
                self.shared
                    .metrics
                    .change_to_publish_seconds
                    .observe(t.elapsed().as_secs_f64());
            }
            event["latency_ms"] = latency_ms(c, start);
        }
        self.shared.emit(event.to_string());
        self.gens.sync_current();
        eprintln!(
            "ludus-anim-server: generation {number} published: {packages} packages, {} changed, {} removed, {} stale",
            changed.len(),
            removed.len(),
            stale.len()
        );
        self.finish_outputs(number);
        self.collect();
        Some(number)
    }

    /// What a client sees of the assets' state ([`snapshot::fingerprint`]).
    pub(super) fn fingerprint(&self) -> [u8; 32] {
        snapshot::fingerprint(self.order.iter().filter_map(|n| self.assets.get(n)))
    }

    /// Write generation `files` (the `--debug-fail-publish` hook fails it
    /// as a full disk does). Its `report.json` is spliced from each
    /// asset's JSON, serialized when the asset was cooked.
    fn write_generation(&mut self, files: &mut GenerationFiles) -> Result<Written, String> {
        if self
            .settings
            .fail_publish
            .as_ref()
            .is_some_and(|f| f.exists())
        {
            return Err(std::io::Error::from_raw_os_error(28).to_string());
        }
        let assets = std::mem::take(&mut files.report.assets);
        let states = self.order.iter().filter_map(|n| self.assets.get(n));
        let report = snapshot::report_json(&files.report, states);
        files.report.assets = assets;
        self.gens.publish(files, report).map_err(|e| e.to_string())
    }

    /// After generation `number` was announced (off the edit's path): its
    /// sidecar, every asset's last good records, if the project writes
    /// one; then the top-level report, sidecar and manifest.
    pub(super) fn finish_outputs(&mut self, number: u64) {
        self.sidecar_missing = false;
        if self.project.report.sidecar {
            let parts = self
                .order
                .iter()
                .filter_map(|n| self.assets.get(n)?.sidecar.as_deref());
            let max_mb = self.project.report.sidecar_max_mb;
            if let Err(e) = self.gens.write_sidecar(number, parts, max_mb) {
                self.warn(format!("generation {number} has no sidecar: {e}"));
            }
        }
        self.mirror(number);
    }

    /// Point the top-level report, sidecar and manifest at generation
    /// `number`.
    pub(super) fn mirror(&self, number: u64) {
        if let Err(e) = self.gens.mirror(number) {
            self.warn(format!(
                "top-level report and manifest not updated to generation {number}: {e}"
            ));
        }
    }

    /// Make `files` the served generation (`written`: its index files'
    /// bytes): its packages join those that may be served at once; the
    /// ones no kept generation names leave at [`Worker::collect`].
    pub(super) fn install(
        &mut self,
        files: GenerationFiles,
        written: Written,
        fingerprint: [u8; 32],
    ) {
        let added = self.gens.packages_of(files.number).clone();
        if let Ok(mut p) = self.shared.packages.write() {
            p.extend(added);
        }
        let published = Published::with_fingerprint(files, written, SystemTime::now(), fingerprint);
        if let Ok(mut c) = self.shared.current.write() {
            *c = Some(Arc::new(published));
        }
    }

    /// Apply the retention policy: remove generations and packages no
    /// kept generation names (after a publish was announced: it is not on
    /// the way to clients).
    pub(super) fn collect(&mut self) {
        if let Some(c) = self.shared.current() {
            // Pins and leases are set under this lock: a held directory is
            // never removed half-way through holding it.
            let shared = Arc::clone(&self.shared);
            let _held = shared.pin_lock.lock();
            let policy = self.settings.retention;
            self.gens.collect(c.number, &policy, |kept| {
                if let Ok(mut p) = shared.packages.write() {
                    *p = kept.iter().map(|(h, r)| (h.clone(), r.clone())).collect();
                }
            });
        }
    }

    /// The generation the assets' state describes.
    fn assemble(&self, number: u64, current: Option<&Published>) -> GenerationFiles {
        let states: Vec<(&String, &AssetState)> = self
            .order
            .iter()
            .filter_map(|n| self.assets.get(n).map(|s| (n, s)))
            .collect();
        let template = self
            .template
            .clone()
            .or_else(|| current.map(|c| c.files.report.clone()));
        let mut report = template.unwrap_or_else(empty_report);
        report.assets = states.iter().map(|(_, s)| s.report.clone()).collect();
        report.compute_totals(report.totals.cook_ms, report.totals.peak_rss_mb);
        let stale: StaleMap = states
            .iter()
            .filter(|(_, s)| s.report.status == AssetStatus::Failed && s.good.is_some())
            .map(|(n, s)| ((*n).clone(), errors_of(&s.report)))
            .collect();
        GenerationFiles {
            number,
            manifest: PackageManifest {
                cooker_version: ludus_anim_cooker::COOKER_VERSION.to_string(),
                package_format_version: self.format_version,
                assets: states.iter().filter_map(|(_, s)| s.good.clone()).collect(),
                shard: None,
            },
            report,
            stale,
        }
    }

    /// What `/status` shows in flight (`Some(&[])`: work taken, what it
    /// reaches not yet known).
    pub(super) fn set_cooking(&self, names: Option<&[String]>) {
        if let Ok(mut c) = self.shared.cooking.lock() {
            *c = names.map(|n| Cooking {
                assets: n.to_vec(),
                started_unix_ms: unix_ms(SystemTime::now()),
            });
        }
    }

    /// Watch the directories of every file an asset reads, the sources'
    /// and the manifest's.
    pub(super) fn update_watches(&mut self) {
        let mut dirs: BTreeSet<PathBuf> = self
            .deps
            .watched()
            .chain(self.manifest.as_ref().map(|(p, _)| p))
            .filter_map(|p| p.parent().map(PathBuf::from))
            .collect();
        dirs.extend(
            self.jobs
                .values()
                .filter_map(|j| absolute(&j.path).parent().map(PathBuf::from)),
        );
        self.watch.update(dirs, &self.shared);
    }
}

/// The `latency_ms` of a `generation_published` event: milliseconds from
/// the change's last event to the batch being taken (`quiet`), finding
/// what it reaches (`prepare`), the cook, and publishing (`publish`).
fn latency_ms(c: &Stopwatch, publish_start: Instant) -> serde_json::Value {
    let ms = |a: Instant, b: Instant| (b.saturating_duration_since(a)).as_secs_f64() * 1000.0;
    let now = Instant::now();
    let (cook_start, cook_end) = c.cook.unwrap_or((c.taken, c.taken));
    let mut v = json!({
        "prepare": ms(c.taken, cook_start),
        "cook": ms(cook_start, cook_end),
        "publish": ms(publish_start, now),
    });
    if let Some(t) = c.first_event {
        v["quiet"] = json!(ms(t, c.taken));
        v["total"] = json!(ms(t, now));
    }
    v
}

fn errors_of(r: &AssetReport) -> Vec<ReportDiagnostic> {
    r.diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect()
}

fn empty_report() -> Report {
    Report {
        cooker_version: ludus_anim_cooker::COOKER_VERSION.to_string(),
        build: None,
        profile: String::new(),
        assets: Vec::new(),
        totals: Default::default(),
        stages: Default::default(),
        cache_notices: Vec::new(),
        remote: None,
        shard: None,
        sync_groups: Vec::new(),
    }
}

/// Assets whose served package differs from the previous generation's
/// (new or changed), and assets the previous generation served that this
/// one does not.
fn changed_assets(prev: Option<&Published>, g: &GenerationFiles) -> (Vec<String>, Vec<String>) {
    let changed = g
        .manifest
        .assets
        .iter()
        .filter(|a| {
            prev.and_then(|p| p.served(&a.source))
                .map(|m| &m.package_hash)
                != Some(&a.package_hash)
        })
        .map(|a| a.source.clone())
        .collect();
    let now: BTreeSet<&str> = g
        .manifest
        .assets
        .iter()
        .map(|a| a.source.as_str())
        .collect();
    let removed = prev
        .map(|p| p.files.manifest.assets.iter())
        .into_iter()
        .flatten()
        .filter(|a| !now.contains(a.source.as_str()))
        .map(|a| a.source.clone())
        .collect();
    (changed, removed)
}

/// Assets whose report entry or package differs from `prev`'s: what a
/// generation that could not be written would have changed.
fn differing_assets(prev: Option<&Published>, g: &GenerationFiles) -> Vec<String> {
    g.report
        .assets
        .iter()
        .filter(|a| {
            let before = prev.and_then(|p| p.report_of(&a.source));
            let served = prev
                .and_then(|p| p.served(&a.source))
                .map(|m| &m.package_hash);
            let now = g
                .manifest
                .assets
                .iter()
                .find(|m| m.source == a.source)
                .map(|m| &m.package_hash);
            before.is_none_or(|b| {
                b.status != a.status
                    || b.source_hash != a.source_hash
                    || b.diagnostics != a.diagnostics
            }) || served != now
        })
        .map(|a| a.source.clone())
        .collect()
}
