//! Which generations are on disk and which stay: the listing with pins
//! and leases, pins, and collection by the retention policy
//! ([`crate::retention`]).

use super::{
    io_err, packages_of, read_json, write_synced, GenerationError, Generations, PackageIndex,
};
use super::{DIR, PIN_FILE};
use crate::lease;
use crate::retention::{self, Candidate, Policy};
use ludus_anim_cooker::report::PackageManifest;
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

impl Generations {
    /// The packages generation `number` names (read from its
    /// `manifest.json` once after a start, then remembered; publishing
    /// remembers them without a read). A number never published names
    /// nothing.
    pub fn packages_of(&mut self, number: u64) -> &PackageIndex {
        self.named.entry(number).or_insert_with(|| {
            let p = self
                .out
                .join(DIR)
                .join(number.to_string())
                .join("manifest.json");
            read_json::<PackageManifest>(&p)
                .map(|m| packages_of(&m))
                .unwrap_or_default()
        })
    }

    /// Apply `policy` with `current` served: `serve` is handed the
    /// packages the kept generations name (what may be served) before
    /// anything is removed; then the generations not kept go, with the
    /// packages no kept generation names. The first collect after a start
    /// sweeps `OUT/packages/` whole (what a killed server left); later
    /// ones only look at the packages of the generations they drop, so a
    /// publish costs the same whatever the project's size. Only the cook
    /// thread calls this, between cooks, so no package being written is
    /// removed.
    pub fn collect(&mut self, current: u64, policy: &Policy, serve: impl FnOnce(&PackageIndex)) {
        let now = SystemTime::now();
        let on_disk = list_swept(&self.out, now, true);
        let numbers: Vec<u64> = on_disk.iter().map(|g| g.number).collect();
        for &n in &numbers {
            self.packages_of(n);
        }
        let sized = policy.max_bytes.is_some();
        if sized {
            self.measure(&numbers, current);
        }
        let superseded = |i: usize| match policy.within {
            Some(_) => numbers.get(i + 1).and_then(|n| self.published_at(*n)),
            None => None,
        };
        let candidates: Vec<Candidate> = on_disk
            .iter()
            .enumerate()
            .map(|(i, g)| Candidate {
                number: g.number,
                held: g.pinned || g.leased_until.is_some(),
                superseded: superseded(i),
                own_bytes: self.own.get(&g.number).copied().unwrap_or(0),
                packages: self
                    .named
                    .get(&g.number)
                    .map_or_else(Vec::new, |p| p.values().map(String::as_str).collect()),
            })
            .collect();
        let sizes = &self.sizes;
        let keep = retention::kept(&candidates, current, policy, now, |p| {
            sizes.get(p).copied().unwrap_or(0)
        });
        drop(candidates);
        let mut kept = PackageIndex::new();
        for n in &keep {
            if let Some(p) = self.named.get(n) {
                kept.extend(p.iter().map(|(h, r)| (h.clone(), r.clone())));
            }
        }
        serve(&kept);
        let base = self.out.join(DIR);
        for n in numbers.iter().filter(|n| !keep.contains(n)) {
            let _ = std::fs::remove_dir_all(base.join(n.to_string()));
            self.own.remove(n);
        }
        let dropped: Vec<u64> = self
            .named
            .keys()
            .copied()
            .filter(|n| !keep.contains(n))
            .collect();
        let names: BTreeSet<&String> = kept.values().collect();
        let mut candidates = BTreeSet::new();
        for n in dropped {
            candidates.extend(
                self.named
                    .remove(&n)
                    .into_iter()
                    .flat_map(|p| p.into_values()),
            );
        }
        if !self.swept {
            self.swept = true;
            let pkgs = self.out.join("packages");
            for e in std::fs::read_dir(&pkgs).into_iter().flatten().flatten() {
                candidates.insert(format!("packages/{}", e.file_name().to_string_lossy()));
            }
        }
        for rel in candidates.iter().filter(|r| !names.contains(r)) {
            // Only names a manifest recorded or the directory listed.
            if let Some(name) = rel.strip_prefix("packages/").filter(|n| !n.contains('/')) {
                let _ = std::fs::remove_file(self.out.join("packages").join(name));
                self.sizes.remove(rel);
            }
        }
    }

    /// Record the bytes of the packages of `numbers` and of their own
    /// files (the current generation's are measured again each time: its
    /// sidecar may still be coming).
    fn measure(&mut self, numbers: &[u64], current: u64) {
        for &n in numbers {
            if n == current || !self.own.contains_key(&n) {
                let dir = self.dir_of(n);
                let bytes = std::fs::read_dir(&dir)
                    .into_iter()
                    .flatten()
                    .flatten()
                    .filter_map(|e| e.metadata().ok())
                    .map(|m| m.len())
                    .sum();
                self.own.insert(n, bytes);
            }
            let rels: Vec<String> = self.named.get(&n).map_or_else(Vec::new, |p| {
                p.values()
                    .filter(|r| !self.sizes.contains_key(*r))
                    .cloned()
                    .collect()
            });
            for rel in rels {
                let len = std::fs::metadata(self.out.join(&rel)).map_or(0, |m| m.len());
                self.sizes.insert(rel, len);
            }
        }
    }

    /// When generation `n` was published (its manifest's modification).
    fn published_at(&self, n: u64) -> Option<SystemTime> {
        std::fs::metadata(self.dir_of(n).join("manifest.json"))
            .and_then(|m| m.modified())
            .ok()
    }
}

/// One generation on disk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OnDisk {
    pub number: u64,
    pub pinned: bool,
    /// The latest expiry (Unix ms) of its live leases.
    pub leased_until: Option<u64>,
}

/// The generations on disk under `out`, oldest first, with their pins and
/// leases.
pub fn list(out: &Path) -> Vec<OnDisk> {
    list_swept(out, SystemTime::now(), false)
}

/// [`list`]; with `sweep`, expired lease files are removed.
fn list_swept(out: &Path, now: SystemTime, sweep: bool) -> Vec<OnDisk> {
    let base = out.join(DIR);
    let mut v: Vec<OnDisk> = std::fs::read_dir(&base)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let number = e.file_name().to_str()?.parse::<u64>().ok()?;
            let dir = e.path();
            Some(OnDisk {
                number,
                pinned: dir.join(PIN_FILE).is_file(),
                leased_until: lease::held_until(&dir, now, sweep),
            })
        })
        .collect();
    v.sort_unstable_by_key(|g| g.number);
    v
}

/// The directory of generation `number` if it is on disk (for leases).
pub fn dir_if_kept(out: &Path, number: u64) -> Option<PathBuf> {
    let dir = out.join(DIR).join(number.to_string());
    dir.join("manifest.json").is_file().then_some(dir)
}

/// Pin (`on`) or unpin generation `number`; `Ok(false)`: it is not on disk.
/// The caller holds the lock collection holds, so the directory cannot be
/// removed in between.
pub fn pin(out: &Path, number: u64, on: bool) -> Result<bool, GenerationError> {
    let dir = out.join(DIR).join(number.to_string());
    if !dir.join("manifest.json").is_file() {
        return Ok(false);
    }
    let p = dir.join(PIN_FILE);
    let r = match on {
        true => write_synced(&p, b"pinned by POST /generations/{n}/pin\n"),
        false => match std::fs::remove_file(&p) {
            Err(e) if e.kind() != io::ErrorKind::NotFound => Err(io_err(&p)(e)),
            _ => Ok(()),
        },
    };
    r.map(|_| true)
}
