//! Importers: authored files in, [`SourceAsset`] out.
//!
//! Each format lives in its own module behind one function with the same
//! shape, `import(path, bytes, options, companions)`, listed once in
//! `IMPORTERS`. No loader type (gltf, ufbx)
//! appears in any public signature: after import, formats are
//! interchangeable. Importers never write files.

#![forbid(unsafe_code)]

pub mod bvh;
pub mod fbx;
pub mod gltf;
pub mod sjson;

use ludus_anim_model::{Diagnostic, SourceAsset, SourceFormat};
use std::path::Path;

/// Choices the user makes per asset that importers need.
#[derive(Clone, Debug, Default)]
pub struct ImportOptions {
    /// Keep leaf joints that neither deform a mesh nor animate (exporters'
    /// `_end` bones, IK pole targets). Dropped by default, and recorded.
    pub keep_unused_leaves: bool,
    /// Animated custom float properties to import as scalar curves (FBX),
    /// each either a property name (`grasp`: that property on every node
    /// that animates it) or `Node.Property` (one node). Names are matched
    /// exactly; a name that matches no animated property in the file is a
    /// warning. Other formats ignore this list.
    pub custom_curves: Vec<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum ImportError {
    #[error("{path}: cannot read file: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: unknown file type (expected .gltf, .glb, .fbx, .bvh or .sjson)")]
    UnknownFormat { path: String },
    /// The file could not be parsed; the diagnostic names where.
    #[error("{0}")]
    Malformed(Box<Diagnostic>),
}

impl ImportError {
    pub fn malformed(path: &Path, code: &str, message: impl Into<String>) -> ImportError {
        ImportError::Malformed(Box::new(
            Diagnostic::error(code, message).file(path.display().to_string()),
        ))
    }
}

/// Reads the other files an asset names (a `.gltf`'s external buffers).
/// Importers never open files themselves: the cooker serves companions
/// from the same snapshot it hashes, so what is imported is exactly what
/// the cache key covers, and the asset server can serve in-memory edits.
pub trait CompanionReader {
    /// The whole file at `path` (already resolved against the asset's
    /// directory).
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>>;
    /// Whether `path` names a readable regular file, without reading it
    /// (for warnings about buffers nothing uses).
    fn exists(&self, path: &Path) -> bool;
}

/// Companions straight from the file system (tools and tests that import
/// one file outside a cook).
pub struct FileSystem;

impl CompanionReader for FileSystem {
    fn read(&self, path: &Path) -> std::io::Result<Vec<u8>> {
        std::fs::read(path)
    }
    fn exists(&self, path: &Path) -> bool {
        path.is_file()
    }
}

/// One importer: the asset at `path` with contents `bytes`.
type Importer = fn(
    path: &Path,
    bytes: &[u8],
    options: &ImportOptions,
    companions: &dyn CompanionReader,
) -> Result<SourceAsset, ImportError>;

/// Every importer by the format it reads. A new importer is one module and
/// one entry here (plus its [`SourceFormat`] variant).
const IMPORTERS: [(SourceFormat, Importer); 5] = [
    (SourceFormat::Gltf, gltf::import),
    (SourceFormat::Glb, gltf::import),
    (SourceFormat::Fbx, fbx::import),
    (SourceFormat::Bvh, bvh::import),
    (SourceFormat::AclSjson, sjson::import),
];

/// Read and import one file, choosing the importer by extension.
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<SourceAsset, ImportError> {
    let format = SourceFormat::of_path(path).ok_or_else(|| ImportError::UnknownFormat {
        path: path.display().to_string(),
    })?;
    let bytes = std::fs::read(path).map_err(|source| ImportError::Io {
        path: path.display().to_string(),
        source,
    })?;
    import_bytes(path, format, &bytes, options, &FileSystem)
}

/// Import already-read bytes (the cooker hashes them first); companion
/// files are read through `companions`.
pub fn import_bytes(
    path: &Path,
    format: SourceFormat,
    bytes: &[u8],
    options: &ImportOptions,
    companions: &dyn CompanionReader,
) -> Result<SourceAsset, ImportError> {
    match IMPORTERS.iter().find(|(f, _)| *f == format) {
        Some((_, import)) => import(path, bytes, options, companions),
        None => Err(ImportError::UnknownFormat {
            path: path.display().to_string(),
        }),
    }
}
