//! Import: a source file's bytes (and its companions, through the cook's
//! snapshot) → a [`SourceAsset`] and what validation found in it.

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
