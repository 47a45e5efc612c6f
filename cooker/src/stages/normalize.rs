//! Normalize: the stage around `ludus-anim-normalize` (units → meters,
//! depth-first skeleton, synthetic root, hemisphere continuity).

use super::import::Imported;
use crate::keys::{KeyInput, KeyWriter};
use crate::stage::{CookStage, Stage};
use ludus_anim_cache::Key;
use ludus_anim_model::{Decision, Diagnostic, SourceKind};
pub use ludus_anim_normalize::{normalize, NormalizeError, Normalized, SYNTHETIC_ROOT};
use serde::{Deserialize, Serialize};

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
    pub imported: &'a Imported,
    pub file: &'a str,
}

/// What normalize stores: the normalized asset, and what the import said
/// of the source, so an asset whose normalize hits is not imported.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Ingested {
    pub norm: Normalized,
    pub import: ImportNotes,
}

/// What the report and the later stages read of an import.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct ImportNotes {
    pub decisions: Vec<Decision>,
    /// The importer's diagnostics, then validation's (warnings: an import
    /// with errors stops the asset before normalize).
    pub diagnostics: Vec<Diagnostic>,
    /// How the source's axes were converted, in words.
    pub source_axes: String,
    pub kind: SourceKind,
    /// The imported clips' size (`model::limits::source_bytes`).
    pub source_bytes: u64,
}

impl ImportNotes {
    pub fn of(i: &Imported) -> ImportNotes {
        let a = &i.asset;
        ImportNotes {
            decisions: a.decisions.clone(),
            diagnostics: a
                .diagnostics
                .0
                .iter()
                .chain(&i.validation.0)
                .cloned()
                .collect(),
            source_axes: a.source_axes.description.clone(),
            kind: a.format.kind(),
            source_bytes: ludus_anim_model::limits::source_bytes(a),
        }
    }
}

impl CookStage for Normalize {
    const STAGE: Stage = Stage::Normalize;
    type Spec<'a> = NormalizeSpec<'a>;
    type Input<'a> = NormalizeInput<'a>;
    type Output = Ingested;

    fn run(spec: &NormalizeSpec<'_>, i: NormalizeInput<'_>) -> Result<Ingested, Diagnostic> {
        let norm = normalize(&i.imported.asset, spec.units_m)
            .map_err(|e| Diagnostic::error("normalize_failed", e.to_string()).file(i.file))?;
        Ok(Ingested {
            norm,
            import: ImportNotes::of(i.imported),
        })
    }
}
