//! From changed paths to dirty assets: content comparison, the manifest
//! (re-resolved: new, removed and re-configured assets), profiles, and
//! failed assets waiting for a missing file.

use super::{AssetState, Worker};
use crate::deps::{profile_files, Change};
use crate::reader::{absolute, stamp_now, Meta};
use crate::state::Writer;
use ludus_anim_cooker::manifest::AssetJob;
use ludus_anim_cooker::project;
use ludus_anim_cooker::report::AssetStatus;
use ludus_anim_model::SourceFormat;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

impl Worker {
    /// The asset name of a job: its path as reports record it.
    pub(super) fn name_of(&self, job: &AssetJob) -> String {
        match &self.project.root {
            Some(root) => job
                .path
                .strip_prefix(root)
                .unwrap_or(&job.path)
                .display()
                .to_string(),
            None => job.path.display().to_string(),
        }
    }

    /// Index the project's jobs by name.
    pub(super) fn set_jobs(&mut self) {
        let named: Vec<(String, AssetJob)> = self
            .project
            .jobs
            .iter()
            .map(|j| (self.name_of(j), j.clone()))
            .collect();
        self.order = named.iter().map(|(n, _)| n.clone()).collect();
        self.jobs = named.into_iter().collect::<BTreeMap<_, _>>();
        if let Ok(mut n) = self.shared.names.write() {
            *n = self.order.clone();
        }
    }

    /// Start from the published generation on disk, if any (a restart).
    pub(super) fn restore(&mut self) {
        let g = match self.gens.current() {
            Ok(Some(g)) => g,
            Ok(None) => return,
            Err(e) => {
                self.warn(format!(
                    "the published generation cannot be read, starting afresh: {e}"
                ));
                return;
            }
        };
        self.format_version = g.manifest.package_format_version;
        let mut parts = match self.gens.sidecar(g.number) {
            Ok(s) => s
                .map(|s| crate::sidecar::split(s.clips))
                .unwrap_or_default(),
            Err(e) => {
                self.warn(format!("{e}; the next cooks rebuild the sidecar"));
                Default::default()
            }
        };
        for r in &g.report.assets {
            let good = g
                .manifest
                .assets
                .iter()
                .find(|m| m.source == r.source)
                .cloned();
            self.assets.insert(
                r.source.clone(),
                AssetState {
                    report: r.clone(),
                    sidecar: good.as_ref().and_then(|_| parts.remove(&r.source)),
                    good,
                },
            );
        }
        let number = g.number;
        let kept = self.install(g, None);
        // Killed between announcing and writing the sidecar: the first
        // cook writes it (its records come back from the cache).
        self.sidecar_missing = self.project.report.sidecar && !self.gens.has_sidecar(number);
        if !self.sidecar_missing {
            self.mirror(number);
        }
        self.collect(&kept);
    }

    pub(super) fn stamp_manifest(&mut self) {
        if let Some((p, s)) = &mut self.manifest {
            *s = stamp_now(p);
        }
    }

    /// Whether the manifest is among `paths` with new content.
    pub(super) fn manifest_changed(&mut self, paths: &[PathBuf]) -> bool {
        let Some((p, s)) = &mut self.manifest else {
            return false;
        };
        if !paths.contains(p) {
            return false;
        }
        let now = stamp_now(p);
        let changed = now.as_ref().map(|n| n.hash) != s.as_ref().map(|s| s.hash);
        *s = now;
        changed
    }

    /// Resolve the project again: new assets and assets whose settings
    /// changed are dirty; removed ones leave.
    pub(super) fn reresolve(&mut self, dirty: &mut BTreeSet<String>, announce: bool) {
        let r = &self.resolver;
        let p = match project::resolve(&r.args, &r.cwd, &r.fixtures) {
            Ok(p) => p,
            Err(e) => {
                self.warn(format!(
                    "the project no longer resolves; serving what was cooked: {e}"
                ));
                return;
            }
        };
        if p.out != self.project.out || p.cache_dir != self.project.cache_dir {
            self.warn(
                "the manifest's output or cache directory changed: restart the server to use it"
                    .into(),
            );
        }
        let default_changed = p.profile != self.project.profile;
        let old = std::mem::take(&mut self.jobs);
        let out = std::mem::replace(&mut self.project.out, p.out.clone());
        self.project = p;
        self.project.out = out;
        self.set_jobs();
        for (name, job) in &self.jobs {
            let same = old.get(name).is_some_and(|o| o.settings == job.settings);
            let reads_default = job.settings.profile.is_none();
            if !same || (default_changed && reads_default) {
                dirty.insert(name.clone());
            }
        }
        let removed: Vec<&String> = old.keys().filter(|n| !self.jobs.contains_key(*n)).collect();
        for name in &removed {
            self.deps.remove(name);
            self.assets.remove(*name);
        }
        if announce {
            self.note(format!(
                "manifest changed: {} assets to cook, {} removed",
                dirty.len(),
                removed.len()
            ));
        }
        if !removed.is_empty() {
            self.publish_if_changed(None);
        }
    }

    /// Assets whose files changed content, plus failed assets in a
    /// directory that changed (a missing companion may have appeared).
    pub(super) fn dirty_from_paths(&mut self, paths: &[PathBuf], dirty: &mut BTreeSet<String>) {
        let mut resolve = false;
        for p in paths {
            if self.manifest.as_ref().is_some_and(|(m, _)| m == p) {
                continue;
            }
            let readers = self.deps.dependants(p);
            if readers.is_empty() {
                resolve |=
                    SourceFormat::of_path(p).is_some() && self.project.manifest_path.is_some();
            } else if self.deps.rehash(p) == Change::Content {
                resolve |= !p.is_file();
                dirty.extend(readers);
            }
            dirty.extend(self.failed_in(p.parent()));
        }
        if resolve {
            self.reresolve(dirty, false);
        }
    }

    fn failed_in(&self, dir: Option<&Path>) -> Vec<String> {
        let Some(dir) = dir else { return Vec::new() };
        self.assets
            .iter()
            .filter(|(_, s)| s.report.status == AssetStatus::Failed)
            .filter_map(|(n, _)| self.jobs.get(n).map(|j| (n, j)))
            .filter(|(_, j)| absolute(&j.path).parent() == Some(dir))
            .map(|(n, _)| n.clone())
            .collect()
    }

    /// Compare every watched file's metadata with what was read; a file
    /// that differs becomes a pending change (debounced like an event),
    /// unless its events already made it one (the scan heals missed
    /// events, it does not second-guess seen ones).
    pub(super) fn scan(&mut self) {
        let mut files: Vec<PathBuf> = self.deps.watched().cloned().collect();
        files.extend(self.manifest.as_ref().map(|(p, _)| p.clone()));
        let now = Instant::now();
        let mut changed = Vec::new();
        for f in files {
            let meta = Meta::of(&f);
            let differs = match &self.manifest {
                Some((m, s)) if *m == f => meta != s.as_ref().map(|s| s.meta),
                _ => self.deps.meta_differs(&f),
            };
            let moved = self.seen.insert(f.clone(), meta) != Some(meta);
            if differs && moved {
                changed.push(f);
            }
        }
        if !changed.is_empty() {
            self.shared.submit(|p| {
                // A path already pending was seen by its events, which
                // know more about its writer: hinting it `Writing` again
                // turned a closed save's 40 ms settle into the 250 ms
                // debounce whenever a rescan fell in that window (the
                // profile edit's quiet p99 on the bench).
                for f in changed {
                    if !p.paths.contains_key(&f) {
                        p.hint(f, now, Writer::Writing);
                    }
                }
            });
        }
    }

    /// Files an asset reads besides those the cook reported: its profile
    /// files.
    pub(super) fn extra_files(&self, name: &str) -> BTreeSet<PathBuf> {
        self.jobs
            .get(name)
            .map(|j| profile_files(&j.settings, &self.project.profile))
            .unwrap_or_default()
    }

    pub(super) fn warn(&self, message: String) {
        eprintln!("ludus-anim-server: warning: {message}");
        self.shared
            .emit(serde_json::json!({"event": "notice", "message": message}).to_string());
    }

    pub(super) fn note(&self, message: String) {
        eprintln!("ludus-anim-server: {message}");
    }
}
