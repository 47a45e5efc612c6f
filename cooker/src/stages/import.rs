//! Import: a source file's bytes (and its companions, through the cook's
//! snapshot) → a [`SourceAsset`] and what validation found in it.

use crate::keys::{KeyInput, KeyWriter, SourceDigest};
use crate::stage::{CookStage, Stage};
use ludus_anim_importers::{import_bytes_with_limits, CompanionReader, ImportOptions, Limits};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::{Diagnostic, Diagnostics, SourceAsset, SourceFormat};
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The import stage's output.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Imported {
    pub asset: SourceAsset,
    pub validation: Diagnostics,
}

/// The import stage.
pub struct Import;

/// What an import's key covers: the source as read (recorded path, bytes,
/// format, companions with their hashes) and the import options.
pub struct ImportSpec<'a> {
    pub digest: &'a SourceDigest,
    pub options: &'a ImportOptions,
}

impl KeyInput for ImportSpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let ImportSpec { digest, options } = self;
        k.put(&digest.path)
            .put(&digest.bytes)
            .put(&digest.format)
            .put(*options)
            .put(&digest.companions);
    }
}

/// The bytes an import reads (their hashes are in the spec).
pub struct ImportInput<'a> {
    pub path: &'a Path,
    pub bytes: &'a [u8],
    pub companions: &'a dyn CompanionReader,
    pub limits: &'a Limits,
}

impl CookStage for Import {
    const STAGE: Stage = Stage::Import;
    type Spec<'a> = ImportSpec<'a>;
    type Input<'a> = ImportInput<'a>;
    type Output = Imported;
    /// Only normalize reads the imported asset, and normalize's record
    /// carries the import's notes: stored, it would be read by nobody.
    const CACHED: bool = false;

    fn run(spec: &ImportSpec<'_>, i: ImportInput<'_>) -> Result<Imported, Diagnostic> {
        let format = spec.digest.format;
        import(
            i.path,
            format,
            i.bytes,
            spec.options,
            i.companions,
            i.limits,
        )
        .map_err(|d| *d)
    }
}

/// The key under which an import's companion list is remembered: known
/// from the source's recorded path and bytes alone, before the companions
/// are read (the same bytes elsewhere name other companions).
pub fn companions_key(
    path: &str,
    format: SourceFormat,
    bytes: &[u8; 32],
    options: &ImportOptions,
) -> ludus_anim_cache::Key {
    let s = Stage::Import;
    KeyWriter::stage(s.name(), s.version())
        .tag("companions")
        .put(path)
        .put(bytes)
        .put(&format)
        .put(options)
        .finish()
}

/// Import and validate one asset under `limits`. A file that cannot be
/// read as its format, or is over a limit, is a diagnostic naming the file
/// (and clip, joint, time where known).
pub fn import(
    path: &Path,
    format: SourceFormat,
    bytes: &[u8],
    options: &ImportOptions,
    companions: &dyn CompanionReader,
    limits: &Limits,
) -> Result<Imported, Box<Diagnostic>> {
    let asset = import_bytes_with_limits(path, format, bytes, options, companions, limits)
        .map_err(|e| Box::new(e.diagnostic()))?;
    let validation = validate_asset(&asset);
    Ok(Imported { asset, validation })
}
