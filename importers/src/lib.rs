//! Importers: authored files in, [`SourceAsset`] out.
//!
//! Each format lives in its own module behind one function with the same
//! shape, `import(path, bytes, options, companions)` (default [`Limits`]),
//! and `import_limited(.., limits)`, listed once in `IMPORTERS`. No loader
//! type (gltf, ufbx) appears in any public signature: after import,
//! formats are interchangeable. Importers never write files.
//!
//! Hostile input: every count a file declares is checked against the
//! [`Limits`] before anything is allocated from it; companion URIs are
//! confined ([`companion`]); a panic anywhere below an importer (a
//! dependency's, or a bug of ours) is caught at [`import_bytes_with_limits`]
//! and becomes [`ImportError::Panicked`] naming the file. A crash inside
//! C code (ufbx) cannot be caught, so the FBX importer checks what it asks
//! ufbx to evaluate first.

#![forbid(unsafe_code)]

pub mod bvh;
pub mod companion;
pub mod fbx;
pub mod gltf;
pub mod sjson;

pub use companion::{read_regular_file, CompanionReader, FileSystem};
pub use ludus_anim_model::limits::{LimitExceeded, Limits};

use ludus_anim_model::{Diagnostic, SourceAsset, SourceFormat};
use std::panic::{catch_unwind, AssertUnwindSafe};
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
    /// A count, size or span the file declares is over a [`Limits`] field.
    #[error("{}", .0.diagnostic())]
    Limit(Box<LimitExceeded>),
    /// A companion URI the confinement policy refuses (absolute, escaping
    /// the allowed directory, a scheme other than `data:`), or a companion
    /// that is not a regular file within the size limit.
    #[error("{path}: companion URI '{uri}' refused: {reason}")]
    RefusedUri {
        path: String,
        uri: String,
        reason: String,
    },
    /// Code below the importer panicked; caught at the importer boundary.
    #[error(
        "{path}: the importer failed on this input (internal error, please report: {message})"
    )]
    Panicked { path: String, message: String },
}

impl ImportError {
    pub fn malformed(path: &Path, code: &str, message: impl Into<String>) -> ImportError {
        ImportError::Malformed(Box::new(
            Diagnostic::error(code, message).file(path.display().to_string()),
        ))
    }

    /// A limit error naming `path` (unless it already names a file).
    pub fn limit(path: &Path, e: LimitExceeded) -> ImportError {
        let e = match e.file {
            Some(_) => e,
            None => e.file(path.display().to_string()),
        };
        ImportError::Limit(Box::new(e))
    }

    /// The error as one diagnostic with a stable code, naming the file
    /// (and clip, joint, time where known).
    pub fn diagnostic(&self) -> Diagnostic {
        match self {
            ImportError::Malformed(d) => (**d).clone(),
            ImportError::Limit(e) => e.diagnostic(),
            ImportError::Io { path, .. } => Diagnostic::error("io", self.to_string()).file(path),
            ImportError::UnknownFormat { path } => {
                Diagnostic::error("unknown_format", self.to_string()).file(path)
            }
            ImportError::RefusedUri { path, uri, reason } => Diagnostic::error(
                "refused_uri",
                format!("companion URI '{uri}' refused: {reason}"),
            )
            .file(path),
            ImportError::Panicked { path, message } => Diagnostic::error(
                "importer_panicked",
                format!(
                    "the importer failed on this input (internal error, please report: {message})"
                ),
            )
            .file(path),
        }
    }
}

/// One importer: turns the bytes of one source file of the formats it
/// reads into a [`SourceAsset`]. A new importer is one module with one
/// impl (for a built-in format, one [`FormatImporter`] constant) and one
/// entry in [`IMPORTERS`] (plus its [`SourceFormat`] variant); reading, size limits, panic containment and the final limit
/// check are [`import_bytes_with_limits`]'s, for every importer alike.
pub trait Importer: Sync {
    /// The formats it reads.
    fn formats(&self) -> &'static [SourceFormat];

    /// Import the asset at `path` with contents `bytes`; companion files
    /// are read through `companions`. Counts read from the file are
    /// checked against `limits` before anything is allocated from them.
    fn import_limited(
        &self,
        path: &Path,
        bytes: &[u8],
        options: &ImportOptions,
        companions: &dyn CompanionReader,
        limits: &Limits,
    ) -> Result<SourceAsset, ImportError>;

    /// [`Importer::import_limited`] with the default [`Limits`].
    fn import(
        &self,
        path: &Path,
        bytes: &[u8],
        options: &ImportOptions,
        companions: &dyn CompanionReader,
    ) -> Result<SourceAsset, ImportError> {
        self.import_limited(path, bytes, options, companions, &Limits::default())
    }
}

/// An importer's one entry point, with [`Importer::import_limited`]'s
/// arguments.
pub type ImportFn = fn(
    &Path,
    &[u8],
    &ImportOptions,
    &dyn CompanionReader,
    &Limits,
) -> Result<SourceAsset, ImportError>;

/// An importer that is a list of formats and one function: what every
/// built-in importer is, so each format module declares one constant
/// instead of repeating the trait impl.
pub struct FormatImporter {
    pub formats: &'static [SourceFormat],
    pub import: ImportFn,
}

impl Importer for FormatImporter {
    fn formats(&self) -> &'static [SourceFormat] {
        self.formats
    }

    fn import_limited(
        &self,
        path: &Path,
        bytes: &[u8],
        options: &ImportOptions,
        companions: &dyn CompanionReader,
        limits: &Limits,
    ) -> Result<SourceAsset, ImportError> {
        (self.import)(path, bytes, options, companions, limits)
    }
}

/// Every importer.
pub const IMPORTERS: [&dyn Importer; 4] = [&gltf::GLTF, &fbx::FBX, &bvh::BVH, &sjson::SJSON];

/// The importer that reads `format`.
pub fn importer_for(format: SourceFormat) -> Option<&'static dyn Importer> {
    IMPORTERS
        .into_iter()
        .find(|i| i.formats().contains(&format))
}

/// Read and import one file, choosing the importer by extension.
pub fn import_file(path: &Path, options: &ImportOptions) -> Result<SourceAsset, ImportError> {
    let format = SourceFormat::of_path(path).ok_or_else(|| ImportError::UnknownFormat {
        path: path.display().to_string(),
    })?;
    let limits = Limits::default();
    let bytes =
        read_regular_file(path, limits.max_file_bytes).map_err(|source| ImportError::Io {
            path: path.display().to_string(),
            source,
        })?;
    import_bytes_with_limits(path, format, &bytes, options, &FileSystem, &limits)
}

/// Import already-read bytes (the cooker hashes them first); companion
/// files are read through `companions`. Default [`Limits`].
pub fn import_bytes(
    path: &Path,
    format: SourceFormat,
    bytes: &[u8],
    options: &ImportOptions,
    companions: &dyn CompanionReader,
) -> Result<SourceAsset, ImportError> {
    import_bytes_with_limits(path, format, bytes, options, companions, &Limits::default())
}

/// [`import_bytes`] under `limits`: the file size is checked first, a panic
/// below the importer is contained, and the imported skeleton and clips are
/// checked against the limits once more (a safety net: each importer
/// checks the counts it reads before allocating from them).
pub fn import_bytes_with_limits(
    path: &Path,
    format: SourceFormat,
    bytes: &[u8],
    options: &ImportOptions,
    companions: &dyn CompanionReader,
    limits: &Limits,
) -> Result<SourceAsset, ImportError> {
    let Some(importer) = importer_for(format) else {
        return Err(ImportError::UnknownFormat {
            path: path.display().to_string(),
        });
    };
    limits
        .check_file_bytes("file size (bytes)", bytes.len() as u64)
        .map_err(|e| ImportError::limit(path, e))?;
    let asset = contain(path, || {
        importer.import_limited(path, bytes, options, companions, limits)
    })?;
    check_asset(path, &asset, limits)?;
    Ok(asset)
}

/// Run `f`, turning a panic into [`ImportError::Panicked`] naming `path`:
/// the last line of defence (importers validate input so no dependency
/// panics, and the fuzz targets check that they do).
pub fn contain(
    path: &Path,
    f: impl FnOnce() -> Result<SourceAsset, ImportError>,
) -> Result<SourceAsset, ImportError> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "panic".to_string());
        Err(ImportError::Panicked {
            path: path.display().to_string(),
            message,
        })
    })
}

/// Joints, depth and clip durations of an imported asset against `limits`.
fn check_asset(path: &Path, asset: &SourceAsset, limits: &Limits) -> Result<(), ImportError> {
    let fail = |e| ImportError::limit(path, e);
    limits.check_skeleton(&asset.skeleton).map_err(fail)?;
    for clip in &asset.clips {
        limits
            .check_duration(f64::from(clip.duration_s))
            .map_err(|e| fail(e.clip(clip.name.clone())))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_has_exactly_one_importer() {
        for f in SourceFormat::ALL {
            let n = IMPORTERS
                .iter()
                .filter(|i| i.formats().contains(&f))
                .count();
            assert_eq!(n, 1, "{f:?}");
        }
    }

    #[test]
    fn a_panic_below_an_importer_is_a_typed_error() {
        let e = contain(Path::new("x.glb"), || panic!("boom")).unwrap_err();
        match &e {
            ImportError::Panicked { path, message } => {
                assert_eq!((path.as_str(), message.as_str()), ("x.glb", "boom"));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(e.diagnostic().code, "importer_panicked");
    }

    #[test]
    fn oversized_input_is_refused_before_parsing() {
        let limits = Limits {
            max_file_bytes: 4,
            ..Limits::default()
        };
        let e = import_bytes_with_limits(
            Path::new("a.bvh"),
            SourceFormat::Bvh,
            b"HIERARCHY",
            &ImportOptions::default(),
            &FileSystem,
            &limits,
        )
        .unwrap_err();
        let d = e.diagnostic();
        assert_eq!(d.code, "limit_exceeded");
        assert_eq!(d.file.as_deref(), Some("a.bvh"));
        assert!(d.message.contains("max_file_bytes = 4"), "{}", d.message);
    }
}
