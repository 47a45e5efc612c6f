//! From changed paths to dirty assets: content comparison, the manifest
//! (re-resolved: new, removed and re-configured assets), profiles, and
//! failed assets waiting for a missing file.

use super::{AssetState, Worker};
use crate::deps::{profile_files, Change};
use crate::reader::{absolute, stamp_now, Meta};
use crate::state::Writer;
use ludus_anim_cooker::manifest::{is_editor_leftover, AssetJob};
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
                AssetState::new(
                    r.clone(),
                    good.clone(),
                    good.as_ref().and_then(|_| parts.remove(&r.source)),
                ),
            );
        }
        let number = g.number;
        let written = crate::generation::Written {
            report: self.gens.report_bytes(number).unwrap_or_default(),
            manifest: crate::generation::to_json(&g.manifest),
        };
        let fingerprint = self.fingerprint();
        self.install(g, written, fingerprint);
        // Killed between announcing and writing the sidecar: the first
        // cook writes it (its records come back from the cache).
        self.sidecar_missing = self.project.report.sidecar && !self.gens.has_sidecar(number);
        if !self.sidecar_missing {
            self.mirror(number);
        }
        self.collect();
    }

    pub(super) fn stamp_manifest(&mut self) {
        if let Some((p, s)) = &mut self.manifest {
            *s = stamp_now(p);
        }
    }

    /// Whether the manifest is among `paths` and must be resolved again:
    /// its bytes differ from the last version that resolved, or the
    /// project is in error (a deleted manifest rewritten unchanged).
    pub(super) fn manifest_changed(&mut self, paths: &[PathBuf]) -> bool {
        let Some((p, s)) = &self.manifest else {
            return false;
        };
        if !paths.contains(p) {
            return false;
        }
        let now = stamp_now(p);
        let in_error = self.shared.health().project_error.is_some();
        in_error || now.as_ref().map(|n| n.hash) != s.as_ref().map(|s| s.hash)
    }

    /// Resolve the project again: new assets and assets whose settings
    /// changed are dirty. An asset leaves only when a new version of the
    /// manifest no longer names it; one whose source vanished stays (stale,
    /// with its last package) until the file returns. A manifest that
    /// cannot be read or parsed is a project error: nothing changes.
    pub(super) fn reresolve(&mut self, dirty: &mut BTreeSet<String>, announce: bool) {
        let r = &self.resolver;
        let p = match project::resolve(&r.args, &r.cwd, &r.fixtures) {
            Ok(p) => p,
            Err(e) => {
                let cause = match &self.manifest {
                    Some((m, _)) if !m.is_file() => "manifest_missing",
                    Some(_) => "manifest_invalid",
                    // Inputs named on the command line, one of them gone.
                    None => "inputs_missing",
                };
                self.set_project_error(Some((cause, e.to_string())));
                return;
            }
        };
        self.set_project_error(None);
        let edited = self.restamp_manifest();
        if p.out != self.project.out || p.cache_dir != self.project.cache_dir {
            self.warn(
                "the manifest's output or cache directory changed: restart the server to use it"
                    .into(),
            );
        }
        let default_changed = p.profile != self.project.profile;
        let old = std::mem::take(&mut self.jobs);
        let old_order = std::mem::take(&mut self.order);
        let out = std::mem::replace(&mut self.project.out, p.out.clone());
        self.project = p;
        self.project.out = out;
        self.hold_back_new_files(&old);
        if !edited {
            self.keep_vanished(&old, &old_order);
        }
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

    /// Remember the manifest's current bytes as the version that resolved;
    /// whether they differ from the previous one.
    fn restamp_manifest(&mut self) -> bool {
        let Some((p, s)) = &mut self.manifest else {
            return false;
        };
        let now = stamp_now(p);
        let edited = now.as_ref().map(|n| n.hash) != s.as_ref().map(|s| s.hash);
        *s = now;
        edited
    }

    /// Leave out of the project's jobs the new files written less than
    /// `--new-asset-settle` ago (an exporter's temp file may be renamed or
    /// deleted next); each is looked at again once that period has passed.
    fn hold_back_new_files(&mut self, old: &BTreeMap<String, AssetJob>) {
        let settle = self.settings.new_asset_settle;
        let mut young = Vec::new();
        let jobs = std::mem::take(&mut self.project.jobs);
        for j in jobs {
            let is_new = !old.contains_key(&self.name_of(&j));
            let age = std::fs::metadata(&j.path)
                .and_then(|m| m.modified())
                .ok()
                .and_then(|t| t.elapsed().ok());
            match is_new && age.is_none_or(|a| a < settle) {
                true => young.push(absolute(&j.path)),
                false => self.project.jobs.push(j),
            }
        }
        if young.is_empty() {
            return;
        }
        let again = Instant::now() + settle.saturating_sub(self.settings.debounce);
        self.shared.submit(|p| {
            for f in young {
                p.hint(f, again, Writer::Writing);
            }
        });
    }

    /// Keep the assets of the previous resolution whose source file is
    /// missing (a save that deletes or renames the file away first), in
    /// their place in the project's order.
    fn keep_vanished(&mut self, old: &BTreeMap<String, AssetJob>, old_order: &[String]) {
        let present: BTreeSet<String> = self.project.jobs.iter().map(|j| self.name_of(j)).collect();
        for (i, name) in old_order.iter().enumerate() {
            let Some(job) = old.get(name) else { continue };
            if present.contains(name) || job.path.is_file() {
                continue;
            }
            let after = old_order[..i].iter().rev().find_map(|prev| {
                self.project
                    .jobs
                    .iter()
                    .position(|j| self.name_of(j) == *prev)
            });
            let at = after.map_or(0, |k| k + 1);
            self.project.jobs.insert(at, job.clone());
        }
    }

    /// Assets whose files changed content, plus failed assets in a
    /// directory that changed (a missing companion or source may have
    /// appeared). A new file the manifest's globs may match re-resolves
    /// the project; editor leftovers never do.
    pub(super) fn dirty_from_paths(&mut self, paths: &[PathBuf], dirty: &mut BTreeSet<String>) {
        // In a project error, any change may be the one that fixes it (an
        // explicitly named source that was missing is back).
        let mut resolve = !paths.is_empty() && self.shared.health().project_error.is_some();
        for p in paths {
            if self.manifest.as_ref().is_some_and(|(m, _)| m == p) {
                continue;
            }
            let readers = self.deps.dependants(p);
            if readers.is_empty() {
                resolve |= SourceFormat::of_path(p).is_some()
                    && self.project.manifest_path.is_some()
                    && !is_leftover(p);
            } else if self.deps.rehash(p) == Change::Content {
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

/// Whether `p`'s file name is one editors leave behind while saving.
fn is_leftover(p: &Path) -> bool {
    p.file_name()
        .and_then(|n| n.to_str())
        .is_none_or(is_editor_leftover)
}
