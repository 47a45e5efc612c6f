//! Source stamps: what a file's metadata said when its bytes were last
//! hashed, so a cook whose sources did not change need not read them to
//! know their hashes (an unchanged asset is then served from its package
//! record without a single source read).
//!
//! A stamp is (size, mtime, ctime, inode, device), all in nanoseconds
//! where the file system has them; a file whose stamp differs in any of
//! these is read and hashed again. Content hashes stay the truth: a stamp
//! only stands in for a hash it was recorded with. A write that keeps the
//! size and lands within the file system's timestamp granularity of the
//! recording could keep all five; as git does for its index, a stamp is
//! therefore recorded only for files whose mtime and ctime are at least
//! [`SETTLE`] older than the moment they were hashed.
//!
//! The memo is machine-local (inodes are): it lives in the local cache
//! directory (`source-stamps`), never in the shared remote cache; a lost
//! or unreadable memo only costs reads.
//!
//! Adapted idea: Bazel's file digest cache (digests keyed by a file's
//! ctime, mtime, inode and size) and git's racy-clean rule.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// How much older than the moment of hashing a file's times must be for
/// its stamp to be recorded.
pub const SETTLE: Duration = Duration::from_secs(2);

/// The memo's file name in the cache directory.
pub const FILE: &str = "source-stamps";

/// A file's metadata as far as change detection goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct FileStamp {
    pub len: u64,
    pub mtime_ns: i128,
    pub ctime_ns: i128,
    pub ino: u64,
    pub dev: u64,
}

impl FileStamp {
    /// The stamp of the file at `path` (symlinks followed, as reads do).
    pub fn of(path: &Path) -> Option<FileStamp> {
        let m = std::fs::metadata(path).ok()?;
        if !m.is_file() {
            return None;
        }
        Some(stamp_of(&m))
    }

    /// Whether the file was last changed at least [`SETTLE`] before `now`.
    fn settled(&self, now: SystemTime) -> bool {
        let now = now
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as i128);
        let settle = SETTLE.as_nanos() as i128;
        self.mtime_ns.max(self.ctime_ns) + settle <= now
    }
}

#[cfg(unix)]
fn stamp_of(m: &std::fs::Metadata) -> FileStamp {
    use std::os::unix::fs::MetadataExt;
    FileStamp {
        len: m.len(),
        mtime_ns: i128::from(m.mtime()) * 1_000_000_000 + i128::from(m.mtime_nsec()),
        ctime_ns: i128::from(m.ctime()) * 1_000_000_000 + i128::from(m.ctime_nsec()),
        ino: m.ino(),
        dev: m.dev(),
    }
}

#[cfg(not(unix))]
fn stamp_of(m: &std::fs::Metadata) -> FileStamp {
    let ns = |t: std::io::Result<SystemTime>| {
        t.ok()
            .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_nanos() as i128)
    };
    FileStamp {
        len: m.len(),
        mtime_ns: ns(m.modified()),
        ctime_ns: ns(m.created()),
        ino: 0,
        dev: 0,
    }
}

/// What one asset's sources hashed to, under the stamps they had.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SourceMemo {
    /// Every file the hashes cover (the source first, then companions),
    /// by recorded path, with its stamp.
    pub files: Vec<(PathBuf, FileStamp)>,
    /// blake3 of the source's bytes.
    pub bytes_hash: [u8; 32],
    /// The companions' recorded paths and blake3 hashes, in import order.
    pub companions: Vec<(String, [u8; 32])>,
    /// blake3 over the source's and every companion's bytes.
    pub source_hash: [u8; 32],
}

/// The stamps of a cache directory, by the source's recorded path.
#[derive(Default)]
pub struct StampMemo {
    path: Option<PathBuf>,
    entries: Mutex<BTreeMap<String, SourceMemo>>,
    changed: std::sync::atomic::AtomicBool,
}

impl StampMemo {
    /// The memo kept in `cache_dir` (empty if it has none or it does not
    /// decode).
    pub fn open(cache_dir: &Path) -> StampMemo {
        let path = cache_dir.join(FILE);
        let entries = std::fs::read(&path)
            .ok()
            .and_then(|b| postcard::from_bytes(&b).ok())
            .unwrap_or_default();
        StampMemo {
            path: Some(path),
            entries: Mutex::new(entries),
            changed: Default::default(),
        }
    }

    /// The memo of `source` if every file it covers still has its stamp
    /// (`stamp_now`, by recorded path) and fits under `max_bytes`.
    pub fn lookup(
        &self,
        source: &str,
        max_bytes: u64,
        stamp_now: impl Fn(&Path) -> Option<FileStamp>,
    ) -> Option<SourceMemo> {
        let memo = self.entries.lock().ok()?.get(source).cloned()?;
        let fresh = memo
            .files
            .iter()
            .all(|(p, s)| s.len <= max_bytes && stamp_now(p).as_ref() == Some(s));
        fresh.then_some(memo)
    }

    /// Remember `memo` for `source`, if every file's stamp (taken before
    /// its bytes were hashed) has settled.
    pub fn record(&self, source: &str, memo: SourceMemo) {
        let now = SystemTime::now();
        if self.path.is_none() || !memo.files.iter().all(|(_, s)| s.settled(now)) {
            return;
        }
        if let Ok(mut e) = self.entries.lock() {
            if e.get(source) != Some(&memo) {
                e.insert(source.to_string(), memo);
                self.changed
                    .store(true, std::sync::atomic::Ordering::Relaxed);
            }
        }
    }

    /// Write the memo back (temp file + rename) if it changed; a failure
    /// only costs reads next time.
    pub fn save(&self) {
        let Some(path) = &self.path else { return };
        if !self.changed.load(std::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let Ok(entries) = self.entries.lock() else {
            return;
        };
        let Ok(bytes) = postcard::to_allocvec(&*entries) else {
            return;
        };
        let tmp = path.with_extension(format!("tmp-{}", std::process::id()));
        if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn memo(p: &Path) -> SourceMemo {
        SourceMemo {
            files: vec![(p.to_path_buf(), FileStamp::of(p).unwrap())],
            bytes_hash: [1; 32],
            companions: Vec::new(),
            source_hash: [2; 32],
        }
    }

    #[test]
    fn a_fresh_file_is_not_recorded_and_a_changed_one_misses() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("a.bvh");
        std::fs::write(&f, b"one").unwrap();
        let m = StampMemo::open(tmp.path());
        m.record("a.bvh", memo(&f));
        assert_eq!(
            m.lookup("a.bvh", u64::MAX, FileStamp::of),
            None,
            "just written: racy"
        );
        let old = SystemTime::now() - Duration::from_secs(10);
        let file = std::fs::File::options().write(true).open(&f).unwrap();
        file.set_modified(old).unwrap();
        // ctime is now: still racy until it settles.
        m.record("a.bvh", memo(&f));
        assert_eq!(m.lookup("a.bvh", u64::MAX, FileStamp::of), None);
        // A memo whose stamps settled (ctime cannot be set back, so the
        // entry is inserted as if recorded later).
        m.entries.lock().unwrap().insert("a.bvh".into(), memo(&f));
        assert!(m.lookup("a.bvh", u64::MAX, FileStamp::of).is_some());
        assert_eq!(
            m.lookup("a.bvh", 2, FileStamp::of),
            None,
            "over the size limit"
        );
        std::fs::write(&f, b"two").unwrap();
        assert_eq!(
            m.lookup("a.bvh", u64::MAX, FileStamp::of),
            None,
            "rewritten"
        );
    }

    #[test]
    fn the_memo_survives_a_save_and_open() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("a.bvh");
        std::fs::write(&f, b"one").unwrap();
        let m = StampMemo::open(tmp.path());
        let mut e = memo(&f);
        for (_, s) in &mut e.files {
            s.mtime_ns -= 10_000_000_000;
            s.ctime_ns -= 10_000_000_000;
        }
        m.record("a.bvh", e.clone());
        m.save();
        let back = StampMemo::open(tmp.path());
        assert_eq!(back.entries.lock().unwrap().get("a.bvh"), Some(&e));
    }
}
