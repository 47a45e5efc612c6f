//! Atomic file output. Readers see the old file or the new one, never half
//! of one: every file is written to a temp file, flushed, and renamed into
//! place. `OutputDir` keeps its temp files in `OUT/.tmp/`, so a killed
//! process never leaves a partial file among the outputs; it writes file
//! by file (the asset server's packages). A cook publishes its outputs
//! together through `crate::publish` instead.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static COUNTER: AtomicU64 = AtomicU64::new(0);

fn temp_name(name: &str) -> String {
    format!(
        ".{name}.tmp-{}-{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Write `bytes` to `tmp`, flush to disk, rename onto `path`.
fn write_via(tmp: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let result = (|| {
        let mut f = std::fs::File::create(tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        std::fs::rename(tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(tmp);
    }
    result
}

/// Write a single file atomically through a sibling temp file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    write_via(&dir.join(temp_name(name)), path, bytes)
}

/// A cook's output directory.
pub struct OutputDir {
    root: PathBuf,
    tmp: PathBuf,
}

impl OutputDir {
    /// Create `root`, `root/packages` and `root/.tmp`; remove temp files a
    /// killed cook left in `.tmp` more than an hour ago (a concurrent cook
    /// into the same directory keeps its fresh ones).
    pub fn prepare(root: &Path) -> std::io::Result<OutputDir> {
        let tmp = root.join(".tmp");
        std::fs::create_dir_all(root.join("packages"))?;
        std::fs::create_dir_all(&tmp)?;
        if let Ok(rd) = std::fs::read_dir(&tmp) {
            for e in rd.flatten() {
                let old = e
                    .metadata()
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|m| m.elapsed().ok())
                    .is_some_and(|age| age.as_secs() > 3600);
                if old {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(OutputDir {
            root: root.to_path_buf(),
            tmp,
        })
    }

    /// The path of `rel` in this directory.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    /// Write `rel` (e.g. `packages/x.ludanim`) atomically. A file that
    /// already holds exactly these bytes is left alone (packages are
    /// immutable and content-named).
    pub fn write(&self, rel: &str, bytes: &[u8]) -> std::io::Result<()> {
        let path = self.root.join(rel);
        if let Ok(m) = std::fs::metadata(&path) {
            if m.len() == bytes.len() as u64 && std::fs::read(&path).is_ok_and(|b| b == bytes) {
                return Ok(());
            }
        }
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
        write_via(&self.tmp.join(temp_name(name)), &path, bytes)
    }
}
