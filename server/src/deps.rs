//! What each asset read, and so what a change to a file reaches. Files are
//! keyed by absolute path; each carries the [`Stamp`] of the bytes the
//! last cook read, so a change is judged by content (a touch, or a save
//! that writes the same bytes, reaches nothing).
//!
//! The idea of recording every input of a processed asset so that a change
//! to a shared input re-processes exactly its dependants is bevy_asset's
//! processor (`process_dependencies`); here the inputs come from the
//! cook's own `inputs` events and the manifest's settings.

use crate::reader::{stamp_now, Meta, Stamp};
use ludus_anim_cooker::manifest::AssetEntry;
use ludus_anim_cooker::profile::BUNDLED;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};

#[derive(Default)]
pub struct Deps {
    files: BTreeMap<String, BTreeSet<PathBuf>>,
    readers: HashMap<PathBuf, BTreeSet<String>>,
    stamps: HashMap<PathBuf, Stamp>,
}

/// How a file differs from what the last cook read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Change {
    /// Same bytes (or still absent).
    None,
    /// Different bytes, or it appeared or vanished.
    Content,
}

impl Deps {
    /// Replace what `asset` reads.
    pub fn set(&mut self, asset: &str, files: BTreeSet<PathBuf>) {
        self.remove(asset);
        for f in &files {
            self.readers
                .entry(f.clone())
                .or_default()
                .insert(asset.to_string());
        }
        self.files.insert(asset.to_string(), files);
    }

    /// Forget `asset` (it left the project).
    pub fn remove(&mut self, asset: &str) {
        let Some(old) = self.files.remove(asset) else {
            return;
        };
        for f in old {
            if let Some(r) = self.readers.get_mut(&f) {
                r.remove(asset);
                if r.is_empty() {
                    self.readers.remove(&f);
                    self.stamps.remove(&f);
                }
            }
        }
    }

    /// The assets that read `path`.
    pub fn dependants(&self, path: &Path) -> BTreeSet<String> {
        self.readers.get(path).cloned().unwrap_or_default()
    }

    /// What `asset` read.
    pub fn files_of(&self, asset: &str) -> Option<&BTreeSet<PathBuf>> {
        self.files.get(asset)
    }

    /// Every file some asset reads.
    pub fn watched(&self) -> impl Iterator<Item = &PathBuf> {
        self.readers.keys()
    }

    /// Remember what a cook read.
    pub fn record(&mut self, path: PathBuf, stamp: Stamp) {
        self.stamps.insert(path, stamp);
    }

    /// Whether `path`'s metadata differs from what was read (a cheap
    /// first look: no read).
    pub fn meta_differs(&self, path: &Path) -> bool {
        Meta::of(path) != self.stamps.get(path).map(|s| s.meta)
    }

    /// Re-hash `path` and compare with what the last cook read, keeping
    /// the new stamp.
    pub fn rehash(&mut self, path: &Path) -> Change {
        let now = stamp_now(path);
        let before = self.stamps.get(path);
        let change = match (before, &now) {
            (Some(b), Some(n)) if b.hash == n.hash => Change::None,
            (None, None) => Change::None,
            _ => Change::Content,
        };
        match now {
            Some(s) => self.stamps.insert(path.to_path_buf(), s),
            None => self.stamps.remove(path),
        };
        change
    }
}

/// The profile files an asset's settings name (bundled names are compiled
/// in and read no file): its own or the default, and its clips'; and its
/// retarget profile, watched even when a cook could not read it (the
/// target skeleton the profile names comes from the cook's `inputs`).
pub fn profile_files(settings: &AssetEntry, default: &str) -> BTreeSet<PathBuf> {
    let own = settings.profile.as_deref().unwrap_or(default);
    std::iter::once(own)
        .chain(settings.clips.values().filter_map(|c| c.profile.as_deref()))
        .filter(|n| !BUNDLED.iter().any(|(b, _)| b == n))
        .chain(settings.retarget.as_deref())
        .map(|n| crate::reader::absolute(Path::new(n)))
        .collect()
}
