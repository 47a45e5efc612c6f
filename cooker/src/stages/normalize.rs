//! Normalize: the stage around `ludus-anim-normalize` (units → meters,
//! depth-first skeleton, synthetic root, hemisphere continuity).

use crate::keys::{KeyInput, KeyWriter};
use crate::stage::{CookStage, Stage};
use ludus_anim_cache::Key;
use ludus_anim_model::{Diagnostic, SourceAsset};
pub use ludus_anim_normalize::{normalize, NormalizeError, Normalized, SYNTHETIC_ROOT};

/// The normalize stage.
pub struct Normalize;

/// What normalization's key covers: the import and the units override.
pub struct NormalizeSpec<'a> {
    pub import: &'a Key,
    pub units_m: Option<f32>,
}

impl KeyInput for NormalizeSpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let NormalizeSpec { import, units_m } = self;
        k.put(*import).put(units_m);
    }
}

/// The imported asset and its file (for diagnostics).
pub struct NormalizeInput<'a> {
    pub asset: &'a SourceAsset,
    pub file: &'a str,
}

impl CookStage for Normalize {
    const STAGE: Stage = Stage::Normalize;
    type Spec<'a> = NormalizeSpec<'a>;
    type Input<'a> = NormalizeInput<'a>;
    type Output = Normalized;

    fn run(spec: &NormalizeSpec<'_>, i: NormalizeInput<'_>) -> Result<Normalized, Diagnostic> {
        normalize(i.asset, spec.units_m)
            .map_err(|e| Diagnostic::error("normalize_failed", e.to_string()).file(i.file))
    }
}
