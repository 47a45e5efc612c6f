//! Importers: authored files in, [`SourceAsset`] out.
//!
//! Each format lives in its own module behind one function with the same
//! shape, `import(path, bytes, options)`. No loader type (gltf, ufbx)
//! appears in any public signature: after import, formats are
//! interchangeable. Importers never write files.

#![forbid(unsafe_code)]

pub mod bvh;
pub mod fbx;
pub mod gltf;
pub mod sjson;

use ludus_anim_model::{Diagnostic, SourceAsset};
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

/// The format an importer is chosen by, from the file extension.
pub fn format_of(path: &Path) -> Option<&'static str> {
    let ext = path.extension()?.to_str()?.to_ascii_lowercase();
    match ext.as_str() {
        "gltf" => Some("gltf"),
        "glb" => Some("glb"),
        "fbx" => Some("fbx"),
        "bvh" => Some("bvh"),
        "sjson" => Some("acl-sjson"),
        _ => None,
    }
}

/// Read and import one file, choosing the importer by extension.
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<SourceAsset, ImportError> {
    let format = format_of(path).ok_or_else(|| ImportError::UnknownFormat {
        path: path.display().to_string(),
    })?;
    let bytes = std::fs::read(path).map_err(|source| ImportError::Io {
        path: path.display().to_string(),
        source,
    })?;
    import_bytes(path, format, &bytes, options)
}

/// Import already-read bytes (the cooker hashes them first).
pub fn import_bytes(
    path: &Path,
    format: &str,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<SourceAsset, ImportError> {
    match format {
        "gltf" | "glb" => gltf::import(path, bytes, options),
        "fbx" => fbx::import(path, bytes, options),
        "bvh" => bvh::import(path, bytes, options),
        "acl-sjson" => sjson::import(path, bytes, options),
        _ => Err(ImportError::UnknownFormat {
            path: path.display().to_string(),
        }),
    }
}
