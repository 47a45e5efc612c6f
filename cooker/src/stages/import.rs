//! Import: a source file's bytes (and its companions, through the cook's
//! snapshot) → a [`SourceAsset`] and what validation found in it.

use ludus_anim_importers::{import_bytes, CompanionReader, ImportError, ImportOptions};
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

/// Import and validate one asset. A file that cannot be read as its format
/// is a diagnostic naming the file (and clip, joint, time where known).
pub fn import(
    path: &Path,
    format: SourceFormat,
    bytes: &[u8],
    options: &ImportOptions,
    companions: &dyn CompanionReader,
) -> Result<Imported, Box<Diagnostic>> {
    let asset = match import_bytes(path, format, bytes, options, companions) {
        Ok(a) => a,
        Err(ImportError::Malformed(d)) => return Err(d),
        Err(e) => {
            return Err(Box::new(
                Diagnostic::error("import_failed", e.to_string()).file(path.display().to_string()),
            ))
        }
    };
    let validation = validate_asset(&asset);
    Ok(Imported { asset, validation })
}
