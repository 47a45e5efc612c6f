//! Where a cook's inputs come from. The pipeline never calls `std::fs` for
//! a source: it asks a [`SourceReader`] (the file system for `cook`; the
//! asset server can serve watched or in-memory files), and every file one
//! asset reads — the source and its companions — is read once into a
//! [`Snapshot`], so the bytes that are hashed into the keys are the bytes
//! that are imported.

use ludus_anim_importers::CompanionReader;
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
}

/// Sources on the local file system.
pub struct FileSystem;

impl SourceReader for FileSystem {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }
    fn exists(&self, path: &Path) -> bool {
        path.is_file()
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
}

impl<'a> Snapshot<'a> {
    /// Paths are read as given (relative to the working directory).
    pub fn new(reader: &'a dyn SourceReader) -> Snapshot<'a> {
        Snapshot::rooted(reader, None)
    }

    /// Relative paths are read under `root` (the project root as the cook
    /// was given it; `None`: the working directory).
    pub fn rooted(reader: &'a dyn SourceReader, root: Option<&Path>) -> Snapshot<'a> {
        Snapshot {
            reader,
            root: root.map(Path::to_path_buf),
            files: Mutex::new(Vec::new()),
        }
    }

    /// Where the reader finds `path` (already normalized).
    fn location(&self, path: &Path) -> PathBuf {
        match &self.root {
            Some(r) if !r.as_os_str().is_empty() => r.join(path),
            _ => path.to_path_buf(),
        }
    }

    /// `path`'s bytes and hash, read on first use.
    pub fn file(&self, path: &Path) -> io::Result<ReadFile> {
        let path = &crate::paths::normalize(path);
        let mut files = self
            .files
            .lock()
            .map_err(|_| io::Error::other("snapshot lock poisoned"))?;
        if let Some((_, f)) = files.iter().find(|(p, _)| p == path) {
            return Ok(f.clone());
        }
        let bytes = self.reader.read(&self.location(path))?;
        let f = ReadFile {
            hash: *blake3::hash(&bytes).as_bytes(),
            bytes: std::sync::Arc::new(bytes),
        };
        files.push((path.to_path_buf(), f.clone()));
        Ok(f)
    }
}

impl Snapshot<'_> {
    /// Every file read so far, in the order first read.
    pub fn paths(&self) -> Vec<PathBuf> {
        self.files
            .lock()
            .map(|f| f.iter().map(|(p, _)| p.clone()).collect())
            .unwrap_or_default()
    }
}

impl CompanionReader for Snapshot<'_> {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.file(path).map(|f| f.bytes.to_vec())
    }
    fn exists(&self, path: &Path) -> bool {
        let path = &crate::paths::normalize(path);
        self.files
            .lock()
            .map(|f| f.iter().any(|(p, _)| p == path))
            .unwrap_or(false)
            || self.reader.exists(&self.location(path))
    }
}
