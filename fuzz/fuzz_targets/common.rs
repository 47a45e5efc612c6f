//! One importer on fuzz bytes, as the cooker calls it: default limits,
//! panic containment on, companions from an empty in-memory reader (so
//! nothing outside the input is ever read).
use ludus_anim_importers::{import_bytes_with_limits, CompanionReader, ImportOptions, Limits};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::SourceFormat;
use std::path::Path;

struct NoCompanions;

impl CompanionReader for NoCompanions {
    fn read(&self, _: &Path) -> std::io::Result<Vec<u8>> {
        Err(std::io::Error::new(std::io::ErrorKind::NotFound, "fuzzing"))
    }
    fn exists(&self, _: &Path) -> bool {
        false
    }
}

/// Import `data` as `format`; if it imports, validate it and normalize
/// it (the stages that walk the hierarchy), which must not panic either.
pub fn import(name: &str, format: SourceFormat, data: &[u8]) {
    let limits = Limits {
        // Small enough that a run explores parsing, not allocation.
        max_asset_memory_bytes: 256 << 20,
        ..Limits::default()
    };
    let path = Path::new(name);
    let Ok(asset) = import_bytes_with_limits(
        path,
        format,
        data,
        &ImportOptions::default(),
        &NoCompanions,
        &limits,
    ) else {
        return;
    };
    let v = validate_asset(&asset);
    if !v.has_errors() {
        let _ = ludus_anim_cooker::stages::normalize::normalize(&asset, None);
    }
}
