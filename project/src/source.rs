//! Where a cook's inputs come from. The pipeline never calls `std::fs` for
//! a source: it asks a [`SourceReader`] (the file system for `cook`; the
//! asset server can serve watched or in-memory files), and every file one
//! asset reads — the source and its companions — is read once into a
//! [`Snapshot`], so the bytes that are hashed into the keys are the bytes
//! that are imported.

use crate::stamps::FileStamp;
use ludus_anim_importers::{read_regular_file, CompanionReader};
use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Reads source files.
pub trait SourceReader: Sync {
    /// The whole file at `path`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// Whether `path` names a readable regular file.
    fn exists(&self, path: &Path) -> bool;
    /// The file at `path` if it holds at most `max_bytes`. Readers that can
    /// check the size (and the file type) before reading must.
    fn read_bounded(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        let bytes = self.read(path)?;
        if bytes.len() as u64 > max_bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} bytes, over the limit max_file_bytes = {max_bytes}",
                    bytes.len()
                ),
            ));
        }
        Ok(bytes)
    }
    /// Where `path` really is, for confinement checks (symlinks resolved
    /// on a file system; `.` and `..` applied where there are none).
    fn resolve(&self, path: &Path) -> io::Result<PathBuf> {
        Ok(ludus_anim_importers::companion::normalize(path))
    }
    /// The file's change stamp (`crate::stamps`), if this reader has
    /// them; `None` makes every cook read the file.
    fn stamp(&self, _path: &Path) -> Option<FileStamp> {
        None
    }
}

/// Sources on the local file system: only regular files are read (never a
/// device, FIFO or socket, which could be endless or block forever), and
/// bounded reads check the size before reading.
pub struct FileSystem;

impl SourceReader for FileSystem {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        read_regular_file(path, u64::MAX)
    }
    fn exists(&self, path: &Path) -> bool {
        path.is_file()
    }
    fn read_bounded(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        read_regular_file(path, max_bytes)
    }
    fn resolve(&self, path: &Path) -> io::Result<PathBuf> {
        let p = if path.as_os_str().is_empty() {
            Path::new(".")
        } else {
            path
        };
        p.canonicalize()
    }
    fn stamp(&self, path: &Path) -> Option<FileStamp> {
        FileStamp::of(path)
    }
}

/// Files held in memory by path (tests; editors' unsaved buffers).
#[derive(Default)]
pub struct InMemory {
    pub files: BTreeMap<PathBuf, Vec<u8>>,
}

impl SourceReader for InMemory {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.files
            .get(path)
            .cloned()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, "not in memory"))
    }
    fn exists(&self, path: &Path) -> bool {
        self.files.contains_key(path)
    }
}

/// One file as read for an asset.
#[derive(Clone)]
pub struct ReadFile {
    pub bytes: std::sync::Arc<Vec<u8>>,
    pub hash: [u8; 32],
    /// The file's stamp, taken before its bytes were read.
    pub stamp: Option<FileStamp>,
}

/// What one asset may read: files up to `max_bytes`, and companions only
/// inside `companion_root` (checked on the real paths, symlinks resolved).
#[derive(Clone, Debug)]
pub struct ReadPolicy {
    pub max_bytes: u64,
    /// `None`: companions anywhere (tools that import one trusted file).
    pub companion_root: Option<PathBuf>,
}

impl Default for ReadPolicy {
    fn default() -> Self {
        ReadPolicy {
            max_bytes: ludus_anim_model::Limits::default().max_file_bytes,
            companion_root: None,
        }
    }
}

/// Every file one asset's cook read, each read once: companion hashes
/// for the key and companion bytes for the importer come from here.
///
/// Paths are asked for in their recorded form (relative to the project
/// root, `crate::paths`) and normalized, so `gltf/a/../x.bin` and
/// `gltf/x.bin` are one file; a relative path is read at `root.join(path)`.
pub struct Snapshot<'a> {
    reader: &'a dyn SourceReader,
    root: Option<PathBuf>,
    files: Mutex<Vec<(PathBuf, ReadFile)>>,
    /// Inputs known unchanged by their stamps, not read (`paths` lists
    /// them too).
    unread: Mutex<Vec<PathBuf>>,
    policy: ReadPolicy,
}

impl<'a> Snapshot<'a> {
    /// Paths are read as given (relative to the working directory).
    pub fn new(reader: &'a dyn SourceReader) -> Snapshot<'a> {
        Snapshot::rooted(reader, None)
    }

    /// Relative paths are read under `root` (the project root as the cook
    /// was given it; `None`: the working directory), with the default
    /// [`ReadPolicy`].
    pub fn rooted(reader: &'a dyn SourceReader, root: Option<&Path>) -> Snapshot<'a> {
        Snapshot::with_policy(reader, root, ReadPolicy::default())
    }

    /// [`Snapshot::rooted`] under `policy` (the asset's limits).
    pub fn with_policy(
        reader: &'a dyn SourceReader,
        root: Option<&Path>,
        policy: ReadPolicy,
    ) -> Snapshot<'a> {
        Snapshot {
            reader,
            root: root.map(Path::to_path_buf),
            files: Mutex::new(Vec::new()),
            unread: Mutex::new(Vec::new()),
            policy,
        }
    }

    /// Where the reader finds `path` (already normalized).
    fn location(&self, path: &Path) -> PathBuf {
        match &self.root {
            Some(r) if !r.as_os_str().is_empty() => r.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// `path`'s bytes and hash, read on first use (at most the policy's
    /// size).
    pub fn file(&self, path: &Path) -> io::Result<ReadFile> {
        let path = &crate::paths::normalize(path);
        let mut files = self
            .files
            .lock()
            .map_err(|_| io::Error::other("snapshot lock poisoned"))?;
        if let Some((_, f)) = files.iter().find(|(p, _)| p == path) {
            return Ok(f.clone());
        }
        let location = self.location(path);
        let stamp = self.reader.stamp(&location);
        let bytes = self.reader.read_bounded(&location, self.policy.max_bytes)?;
        let f = ReadFile {
            hash: *blake3::hash(&bytes).as_bytes(),
            bytes: std::sync::Arc::new(bytes),
            stamp,
        };
        files.push((path.to_path_buf(), f.clone()));
        Ok(f)
    }

    /// A companion of the asset: [`Snapshot::file`], once its real path is
    /// known to lie inside the policy's companion root.
    pub fn companion(&self, path: &Path) -> io::Result<ReadFile> {
        self.confine(path)?;
        self.file(path)
    }

    fn confine(&self, path: &Path) -> io::Result<()> {
        let Some(root) = &self.policy.companion_root else {
            return Ok(());
        };
        let real = self
            .reader
            .resolve(&self.location(&crate::paths::normalize(path)))?;
        let real_root = self.reader.resolve(&self.location(root))?;
        if real.starts_with(&real_root) {
            Ok(())
        } else {
            Err(io::Error::new(
                io::ErrorKind::PermissionDenied,
                format!(
                    "resolves to '{}', outside the allowed root '{}'",
                    real.display(),
                    real_root.display()
                ),
            ))
        }
    }
}

impl Snapshot<'_> {
    /// Every input so far: the files read, in the order first read, then
    /// those known unchanged by their stamps.
    pub fn paths(&self) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = self
            .files
            .lock()
            .map(|f| f.iter().map(|(p, _)| p.clone()).collect())
            .unwrap_or_default();
        v.extend(self.unread.lock().map(|u| u.clone()).unwrap_or_default());
        v
    }

    /// `path`'s stamp now, from the reader.
    pub fn stamp(&self, path: &Path) -> Option<FileStamp> {
        self.reader
            .stamp(&self.location(&crate::paths::normalize(path)))
    }

    /// The stamp `path` had when this snapshot read it.
    pub fn stamp_of_read(&self, path: &Path) -> Option<(PathBuf, FileStamp)> {
        let path = crate::paths::normalize(path);
        let files = self.files.lock().ok()?;
        let (_, f) = files.iter().find(|(p, _)| *p == path)?;
        Some((path.clone(), f.stamp?))
    }

    /// Count `paths` as inputs without reading them.
    pub fn note_unread(&self, paths: impl IntoIterator<Item = PathBuf>) {
        if let Ok(mut u) = self.unread.lock() {
            u.extend(paths);
        }
    }
}

impl CompanionReader for Snapshot<'_> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.companion(path).map(|f| f.bytes.to_vec())
    }
    fn read_bounded(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        let f = self.companion(path)?;
        if f.bytes.len() as u64 > max_bytes {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{} bytes, over the limit max_file_bytes = {max_bytes}",
                    f.bytes.len()
                ),
            ));
        }
        Ok(f.bytes.to_vec())
    }
    fn exists(&self, path: &Path) -> bool {
        let path = &crate::paths::normalize(path);
        self.files
            .lock()
            .map(|f| f.iter().any(|(p, _)| p == path))
            .unwrap_or(false)
            || self.reader.exists(&self.location(path))
    }
    fn allowed_root(&self) -> Option<&Path> {
        self.policy.companion_root.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(root: &Path) -> ReadPolicy {
        ReadPolicy {
            max_bytes: 64,
            companion_root: Some(root.to_path_buf()),
        }
    }

    #[test]
    fn companions_outside_the_root_and_oversized_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let assets = dir.path().join("assets");
        std::fs::create_dir_all(&assets).unwrap();
        std::fs::write(assets.join("a.bin"), [1u8; 8]).unwrap();
        std::fs::write(dir.path().join("secret.bin"), [2u8; 8]).unwrap();
        std::fs::write(assets.join("big.bin"), [3u8; 65]).unwrap();
        let snap = Snapshot::with_policy(&FileSystem, None, policy(&assets));
        assert_eq!(
            snap.companion(&assets.join("a.bin")).unwrap().bytes.len(),
            8
        );
        let e = snap.companion(&assets.join("../secret.bin")).err().unwrap();
        assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
        assert!(snap.companion(&assets.join("big.bin")).is_err());
        #[cfg(unix)]
        {
            // A symlink inside the root pointing out of it is followed to
            // where it really leads, and refused.
            std::os::unix::fs::symlink(dir.path().join("secret.bin"), assets.join("link.bin"))
                .unwrap();
            let e = snap.companion(&assets.join("link.bin")).err().unwrap();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied, "{e}");
        }
    }
}
