//! The commit record, applying it, and recovering the publications of
//! dead processes (the protocol is in the parent module's doc).

use super::{
    checked_rel, COMMITTED, COMMIT_END, GENERATION_FILE, LOCK_FILE, LOCK_TIMEOUT, NEW_PREFIX,
    OWNER, STAGE_PREFIX, STALE_AGE, TMP,
};
use crate::filelock::{self, FileLock};
use crate::sink::PublishError;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;
use std::time::Duration;

/// Take `OUT/.lock` (waiting up to [`LOCK_TIMEOUT`]).
pub fn lock_out(out: &Path) -> Result<FileLock, PublishError> {
    let path = out.join(LOCK_FILE);
    filelock::lock(&path, LOCK_TIMEOUT).map_err(|source| PublishError::Lock {
        path: path.display().to_string(),
        source,
    })
}

pub(super) fn read_generation(out: &Path) -> u64 {
    std::fs::read_to_string(out.join(GENERATION_FILE))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

pub(super) fn write_commit(dir: &Path, generation: u64, order: &[String]) -> io::Result<()> {
    let mut text = format!("generation {generation}\n");
    for r in order {
        text.push_str(r);
        text.push('\n');
    }
    text.push_str(COMMIT_END);
    let mut f = File::create(dir.join(COMMITTED))?;
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    sync_dir(dir);
    Ok(())
}

/// Rename every staged file of `order` still present into place (a file
/// already moved is skipped, so applying twice is harmless), then record
/// the generation.
pub(super) fn apply(out: &Path, dir: &Path, order: &[String], generation: u64) -> io::Result<()> {
    let with_path =
        |p: &Path, e: io::Error| io::Error::new(e.kind(), format!("{}: {e}", p.display()));
    // A directory is flushed once a run of renames into it ends (the
    // packages, then each top-level file on its own), so every package
    // rename is durable before the report's and the manifest's.
    let mut pending: Option<std::path::PathBuf> = None;
    for rel in order {
        let rel = checked_rel(rel)?;
        let (from, to) = (dir.join(rel), out.join(rel));
        let parent = to.parent().map(Path::to_path_buf);
        if pending.is_some() && pending != parent {
            pending.take().iter().for_each(|p| sync_dir(p));
        }
        match std::fs::rename(&from, &to) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(with_path(&to, e)),
        }
        // Renaming a hard link onto its own file changes nothing and
        // leaves the link: remove it, so nothing stale is ever re-applied.
        let _ = std::fs::remove_file(&from);
        pending = parent;
        if rel.components().count() == 1 {
            pending.take().iter().for_each(|p| sync_dir(p));
        }
    }
    pending.iter().for_each(|p| sync_dir(p));
    let g = out.join(GENERATION_FILE);
    crate::fsutil::write_atomic(&g, format!("{generation}\n").as_bytes())
        .map_err(|e| with_path(&g, e))
}

/// Roll forward or remove the staging directories of dead processes.
/// Call with `OUT/.lock` held.
pub fn recover_locked(out: &Path) -> Result<(), PublishError> {
    let tmp = out.join(TMP);
    let Ok(rd) = std::fs::read_dir(&tmp) else {
        return Ok(());
    };
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let path = e.path();
        if name.starts_with(NEW_PREFIX) {
            // Killed before its staging got its name: nothing committed.
            // A live cook holds its owner lock a few microseconds after
            // creating the directory (opening and locking are two steps),
            // so a free lock means dead only on a directory over a minute
            // old; without an owner file, over an hour.
            let owner = path.join(OWNER);
            let dead = older_than(&path, Duration::from_secs(60))
                && filelock::try_lock(&owner).is_ok_and(|l| l.is_some())
                || is_old(&path);
            if dead {
                let _ = std::fs::remove_dir_all(&path);
            }
        } else if name.starts_with(STAGE_PREFIX) {
            recover_one(out, &path).map_err(|source| PublishError::Apply {
                out: out.display().to_string(),
                source,
            })?;
        }
    }
    Ok(())
}

/// One staging directory: left alone while its owner lives; else applied
/// if committed with a generation not yet published, then removed.
fn recover_one(out: &Path, dir: &Path) -> io::Result<()> {
    let Some(_owner) = filelock::try_lock(&dir.join(OWNER))? else {
        return Ok(());
    };
    let commit = std::fs::read_to_string(dir.join(COMMITTED)).ok();
    if let Some(text) = commit.as_deref().and_then(|t| t.strip_suffix(COMMIT_END)) {
        let mut lines = text.lines();
        let generation = lines
            .next()
            .and_then(|l| l.strip_prefix("generation "))
            .and_then(|n| n.parse::<u64>().ok());
        if let Some(g) = generation.filter(|&g| g > read_generation(out)) {
            let order: Vec<String> = lines.map(str::to_string).collect();
            apply(out, dir, &order, g)?;
        }
    }
    let _ = std::fs::remove_dir_all(dir);
    Ok(())
}

fn is_old(p: &Path) -> bool {
    older_than(p, STALE_AGE)
}

fn older_than(p: &Path, age: Duration) -> bool {
    std::fs::metadata(p)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|m| m.elapsed().ok())
        .is_some_and(|a| a > age)
}

/// Plain temp files in `OUT/.tmp` (written by `OutputDir`) that a killed
/// process left more than an hour ago.
pub(super) fn remove_stale_temp_files(tmp: &Path) {
    let Ok(rd) = std::fs::read_dir(tmp) else {
        return;
    };
    for e in rd.flatten() {
        if e.file_type().is_ok_and(|t| t.is_file()) && is_old(&e.path()) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Flush a directory's entries; best effort (not every platform can).
pub(super) fn sync_dir(p: &Path) {
    if let Ok(d) = File::open(p) {
        let _ = d.sync_all();
    }
}

/// Flush `dir` and every directory below it (the files were flushed when
/// written).
pub(super) fn sync_tree(dir: &Path) -> io::Result<()> {
    for e in std::fs::read_dir(dir)?.flatten() {
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            sync_tree(&e.path())?;
        }
    }
    sync_dir(dir);
    Ok(())
}
