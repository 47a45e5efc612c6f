//! The server's [`SourceReader`]: reads only files under the project's
//! roots, and remembers what each read returned (content hash and file
//! metadata), so a later change can be told from a touch by re-hashing.

use ludus_anim_cooker::source::SourceReader;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::SystemTime;

/// What a file looked like when it was read: its content hash and the
/// metadata a cheap rescan compares (any write changes `ctime`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stamp {
    pub hash: [u8; 32],
    pub meta: Meta,
}

/// The metadata of a file a rescan compares without reading it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Meta {
    pub len: u64,
    pub modified: Option<SystemTime>,
    pub changed: i64,
    pub changed_ns: i64,
    pub inode: u64,
}

impl Meta {
    /// The metadata of `path` now, or `None` when it is not a file.
    pub fn of(path: &Path) -> Option<Meta> {
        let m = std::fs::metadata(path).ok().filter(|m| m.is_file())?;
        Some(Meta::from_metadata(&m))
    }

    fn from_metadata(m: &std::fs::Metadata) -> Meta {
        #[cfg(unix)]
        let (changed, changed_ns, inode) = {
            use std::os::unix::fs::MetadataExt;
            (m.ctime(), m.ctime_nsec(), m.ino())
        };
        #[cfg(not(unix))]
        let (changed, changed_ns, inode) = (0, 0, 0);
        Meta {
            len: m.len(),
            modified: m.modified().ok(),
            changed,
            changed_ns,
            inode,
        }
    }
}

/// Hash and stamp a file as it is now (`None`: gone or not a file).
pub fn stamp_now(path: &Path) -> Option<Stamp> {
    let before = Meta::of(path)?;
    let bytes = std::fs::read(path).ok()?;
    Some(Stamp {
        hash: *blake3::hash(&bytes).as_bytes(),
        meta: before,
    })
}

/// Sources under `roots` only, every read stamped.
pub struct WatchedReader {
    roots: Vec<PathBuf>,
    read: Mutex<HashMap<PathBuf, Stamp>>,
}

impl WatchedReader {
    /// A reader confined to `roots` (canonicalized; a root that does not
    /// exist confines to nothing).
    pub fn new(roots: &[PathBuf]) -> WatchedReader {
        WatchedReader {
            roots: roots
                .iter()
                .filter_map(|r| std::fs::canonicalize(r).ok())
                .collect(),
            read: Mutex::new(HashMap::new()),
        }
    }

    /// Every file read since the last call, with its stamp, keyed by the
    /// absolute path.
    pub fn take_stamps(&self) -> HashMap<PathBuf, Stamp> {
        self.read
            .lock()
            .map(|mut m| std::mem::take(&mut *m))
            .unwrap_or_default()
    }

    fn check(&self, path: &Path) -> io::Result<PathBuf> {
        let real = std::fs::canonicalize(path)?;
        if self.roots.iter().any(|r| real.starts_with(r)) {
            Ok(real)
        } else {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "'{}' is outside the project (the server reads only files under {})",
                    path.display(),
                    self.describe_roots()
                ),
            ))
        }
    }

    fn describe_roots(&self) -> String {
        let v: Vec<String> = self.roots.iter().map(|r| r.display().to_string()).collect();
        v.join(", ")
    }
}

impl SourceReader for WatchedReader {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.check(path)?;
        let file = std::fs::File::open(path)?;
        let meta = Meta::from_metadata(&file.metadata()?);
        let mut bytes = Vec::with_capacity(meta.len as usize);
        io::Read::read_to_end(&mut &file, &mut bytes)?;
        let stamp = Stamp {
            hash: *blake3::hash(&bytes).as_bytes(),
            meta,
        };
        if let Ok(mut m) = self.read.lock() {
            m.insert(absolute(path), stamp);
        }
        Ok(bytes)
    }

    fn exists(&self, path: &Path) -> bool {
        self.check(path).is_ok_and(|p| p.is_file())
    }
}

/// `path` made absolute against the working directory (lexically: the
/// same spelling file-system events use for the watched directories).
pub fn absolute(path: &Path) -> PathBuf {
    std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf())
}
