//! bvh importer (being written).

use crate::{ImportError, ImportOptions};
use ludus_anim_model::SourceAsset;
use std::path::Path;

pub fn import(path: &Path, _bytes: &[u8], _options: &ImportOptions) -> Result<SourceAsset, ImportError> {
    Err(ImportError::malformed(path, "unsupported", "importer not built yet"))
}
