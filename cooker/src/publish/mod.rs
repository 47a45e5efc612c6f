//! Publishing one cook's outputs together or not at all.
//!
//! A cook stages everything it writes (packages, `report.json`,
//! `manifest.json`) in a private directory, then publishes it under the
//! output directory's lock by renames, manifest last:
//!
//! ```text
//! OUT/.lock                  flock held while publishing, recovering or pruning
//! OUT/.generation            "<n>\n": the last publication
//! OUT/.cook-state            the last cook's key and file stamps (`pipeline::uptodate`)
//! OUT/.tmp/stage-<id>/       one cook's staged files, same relative paths as in OUT
//! OUT/.tmp/stage-<id>/.owner flock held by the staging cook for its whole life
//! OUT/.tmp/stage-<id>/COMMITTED  "generation <n>", every staged file in publish order, "end"
//! ```
//!
//! Publishing: flush every staged file and directory; take `OUT/.lock`;
//! recover (below); write and flush `COMMITTED` with generation n + 1;
//! rename each staged file into place (packages, then the report, then the
//! manifest); write `.generation`; remove the staging directory.
//!
//! Crash semantics: before `COMMITTED` is flushed, `OUT` is untouched (a
//! failed write, a full disk or `kill -9` while cooking leaves the previous
//! outputs as they were). After it, the publication is rolled forward by
//! whichever process next takes the lock (a cook publishing, or
//! `ludus-anim prune`): a staging directory whose `.owner` lock is free
//! belongs to a dead process; committed with a generation above
//! `.generation`, its remaining files are renamed into place; otherwise it
//! is removed. Until then a reader may see the new packages and report
//! with the previous manifest; the manifest, renamed last, never names a
//! package that is not in place. Readers that need the report and manifest
//! of one cook take `OUT/.lock` while reading them.

mod commit;
#[cfg(test)]
mod tests;

pub use commit::{lock_out, recover_locked};

use crate::filelock::{self, FileLock};
use crate::sink::{PublishError, Sink};
use commit::{apply, read_generation, remove_stale_temp_files, sync_tree, write_commit};
use std::fs::File;
use std::io::{self, Read, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The output directory's lock file.
pub const LOCK_FILE: &str = ".lock";
const GENERATION_FILE: &str = ".generation";
const TMP: &str = ".tmp";
const STAGE_PREFIX: &str = "stage-";
const NEW_PREFIX: &str = "new-";
const OWNER: &str = ".owner";
const COMMITTED: &str = "COMMITTED";
/// The last line of a complete `COMMITTED` (one cut short is ignored).
const COMMIT_END: &str = "end\n";
/// How long a cook waits for another process's publication or prune.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(120);
/// Temp files and half-created staging directories older than this are
/// removed (a concurrent cook's fresh ones are kept).
const STALE_AGE: Duration = Duration::from_secs(3600);

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// One cook's staged outputs for `OUT`, published by [`Sink::publish`].
/// Dropped unpublished, the staging directory is removed.
pub struct Staging {
    out: PathBuf,
    dir: PathBuf,
    _owner: FileLock,
    staged: Mutex<Vec<String>>,
    committed: AtomicBool,
    /// The generation this cook published (0: none yet).
    published: AtomicU64,
}

impl Staging {
    /// Create `OUT`, `OUT/packages`, `OUT/.tmp` and this cook's staging
    /// directory (under a temporary name until its owner lock is held, so
    /// a recovering process never mistakes it for a dead one).
    pub fn begin(out: &Path) -> io::Result<Staging> {
        let tmp = out.join(TMP);
        std::fs::create_dir_all(out.join("packages"))?;
        std::fs::create_dir_all(&tmp)?;
        remove_stale_temp_files(&tmp);
        let id = unique_id();
        let new = tmp.join(format!("{NEW_PREFIX}{id}"));
        std::fs::create_dir(&new)?;
        let owner = filelock::try_lock(&new.join(OWNER))?
            .ok_or_else(|| io::Error::other("a fresh staging directory is already locked"))?;
        let dir = tmp.join(format!("{STAGE_PREFIX}{id}"));
        std::fs::rename(&new, &dir)?;
        Ok(Staging {
            out: out.to_path_buf(),
            dir,
            _owner: owner,
            staged: Mutex::new(Vec::new()),
            committed: AtomicBool::new(false),
            published: AtomicU64::new(0),
        })
    }

    /// Where `rel` is published.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.out.join(rel)
    }

    /// Stage `bytes` as `rel`: a hard link to the published file when it
    /// already holds exactly these bytes (packages are content-named),
    /// else a new file, flushed.
    fn stage(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let rel_path = checked_rel(rel)?;
        let staged = self.dir.join(rel_path);
        if let Some(parent) = staged.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let target = self.out.join(rel_path);
        let same = std::fs::metadata(&target).is_ok_and(|m| m.len() == bytes.len() as u64)
            && std::fs::read(&target).is_ok_and(|b| b == bytes);
        if !(same && std::fs::hard_link(&target, &staged).is_ok()) {
            let mut f = File::create(&staged)?;
            f.write_all(bytes)?;
            f.sync_all()?;
        }
        if let Ok(mut s) = self.staged.lock() {
            s.push(rel.to_string());
        }
        Ok(())
    }

    /// Stage the published `rel` as it is (a hard link) if it starts
    /// with `header`.
    fn keep(&self, rel: &str, header: &[u8]) -> io::Result<bool> {
        let rel_path = checked_rel(rel)?;
        let target = self.out.join(rel_path);
        let mut start = vec![0u8; header.len()];
        let same = File::open(&target).and_then(|mut f| f.read_exact(&mut start));
        if same.is_err() || start != header {
            return Ok(false);
        }
        let staged = self.dir.join(rel_path);
        if let Some(parent) = staged.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::hard_link(&target, &staged)?;
        if let Ok(mut s) = self.staged.lock() {
            s.push(rel.to_string());
        }
        Ok(true)
    }

    fn publish_staged(&self, index: &[&str]) -> Result<(), PublishError> {
        let mut order: Vec<String> = self.staged.lock().map(|s| s.clone()).unwrap_or_default();
        order.retain(|r| !index.contains(&r.as_str()));
        order.sort();
        order.extend(index.iter().map(|r| r.to_string()));
        sync_tree(&self.dir).map_err(|e| self.stage_error(e))?;
        let _lock = lock_out(&self.out)?;
        recover_locked(&self.out)?;
        let generation = read_generation(&self.out) + 1;
        write_commit(&self.dir, generation, &order).map_err(|e| self.stage_error(e))?;
        self.committed.store(true, Ordering::SeqCst);
        apply(&self.out, &self.dir, &order, generation).map_err(|source| PublishError::Apply {
            out: self.out.display().to_string(),
            source,
        })?;
        let _ = std::fs::remove_dir_all(&self.dir);
        self.published.store(generation, Ordering::SeqCst);
        Ok(())
    }

    /// The generation this cook published and every file in it (relative
    /// to OUT); `None` before a publication.
    pub fn published(&self) -> Option<(u64, Vec<String>)> {
        let generation = self.published.load(Ordering::SeqCst);
        let files = self.staged.lock().ok()?.clone();
        (generation > 0).then_some((generation, files))
    }

    fn stage_error(&self, source: io::Error) -> PublishError {
        PublishError::Stage {
            path: self.dir.display().to_string(),
            source,
        }
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.committed.load(Ordering::SeqCst) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

impl Sink for Staging {
    fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.stage(rel, bytes)
    }

    fn describe(&self, rel: &str) -> String {
        format!(
            "{} (staged in {})",
            self.path(rel).display(),
            self.dir.display()
        )
    }

    fn keep_published(&self, rel: &str, header: &[u8]) -> bool {
        self.keep(rel, header).unwrap_or(false)
    }

    fn publish(&self, index: &[(&str, &[u8])]) -> Result<(), PublishError> {
        for (rel, bytes) in index {
            self.stage(rel, bytes)
                .map_err(|source| PublishError::Stage {
                    path: self.describe(rel),
                    source,
                })?;
        }
        let names: Vec<&str> = index.iter().map(|(r, _)| *r).collect();
        self.publish_staged(&names)
    }
}

/// The last generation published into `out` (0: none).
pub fn generation(out: &Path) -> u64 {
    read_generation(out)
}

/// A relative path of plain components only (no `..`, no root).
pub(super) fn checked_rel(rel: &str) -> io::Result<&Path> {
    let p = Path::new(rel);
    let plain = p.components().all(|c| matches!(c, Component::Normal(_)));
    if plain && !rel.is_empty() {
        Ok(p)
    } else {
        Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("output path '{rel}' is not a plain relative path"),
        ))
    }
}

fn unique_id() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "{}-{}-{nanos}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
