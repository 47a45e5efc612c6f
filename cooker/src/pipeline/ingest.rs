//! Reading a source file and bringing it to the normalized asset every
//! later stage reads: the read (through the cook's snapshot), the
//! companion list remembered from the last import of the same bytes, the
//! source's content hash, import and normalize through the runner. Shared
//! by an asset's own source and a retarget target.

use super::Cook;
use crate::keys::SourceDigest;
use crate::report::{self, AssetReport, SkeletonReport};
use crate::source::{ReadPolicy, Snapshot};
use crate::stage::{Fingerprint, Stage};
use crate::stages::import::{companions_key, import, Import, ImportInput, ImportSpec, Imported};
use crate::stages::normalize::{Ingested, Normalize, NormalizeInput, NormalizeSpec};
use ludus_anim_cache::Key;
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::limits::{source_bytes, CompanionRoot, Limits, MemoryBudget};
use ludus_anim_model::{Diagnostic, SourceFormat};
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

/// Companion files an import read, with their content hashes at the time.
type Companions = Vec<(String, [u8; 32])>;

/// Why an asset stopped: a diagnostic to add, or one already recorded.
pub(super) enum Stop {
    Failed(Diagnostic),
    Recorded,
}

impl From<Diagnostic> for Stop {
    fn from(d: Diagnostic) -> Stop {
        Stop::Failed(d)
    }
}

impl From<Box<Diagnostic>> for Stop {
    fn from(d: Box<Diagnostic>) -> Stop {
        Stop::Failed(*d)
    }
}

/// What one asset may read: files up to the size limit, companions inside
/// its directory (or the project root, if the limits say so). The root is
/// in the recorded form (relative to the project root), as the importer
/// resolves companion URIs against the recorded path.
pub(super) fn read_policy(file: &str, limits: &Limits) -> ReadPolicy {
    let root = match limits.companion_root {
        CompanionRoot::Project => std::path::PathBuf::new(),
        _ => Path::new(file)
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default(),
    };
    ReadPolicy {
        max_bytes: limits.max_file_bytes,
        companion_root: Some(root),
    }
}

/// A source that cannot be read, as a diagnostic: over the size limit, or
/// not a regular file, or an I/O error.
fn unreadable(e: &std::io::Error, file: &str) -> Diagnostic {
    let code = match e.kind() {
        std::io::ErrorKind::InvalidData => ludus_anim_model::limits::LIMIT_CODE,
        _ => "io",
    };
    Diagnostic::error(code, format!("cannot read: {e}")).file(file)
}

/// A source file as this cook read it (the asset's, or a retarget
/// target's).
pub(super) struct Source<'a> {
    pub path: &'a std::path::Path,
    pub format: SourceFormat,
    pub file: &'a str,
    pub snapshot: &'a Snapshot<'a>,
    pub bytes: Arc<Vec<u8>>,
    pub options: ImportOptions,
    pub limits: &'a Limits,
}

impl<'a> Source<'a> {
    /// Read the source recorded as `file` (a path relative to the project
    /// root) into the snapshot.
    pub fn read(
        file: &'a str,
        snapshot: &'a Snapshot<'a>,
        options: ImportOptions,
        limits: &'a Limits,
    ) -> Result<(Source<'a>, [u8; 32]), Stop> {
        let path = std::path::Path::new(file);
        let format = SourceFormat::of_path(path).ok_or_else(|| {
            Diagnostic::error(
                "unknown_format",
                "unknown file type (expected .gltf, .glb, .fbx, .bvh or .sjson)",
            )
            .file(file)
        })?;
        let read = snapshot.file(path).map_err(|e| unreadable(&e, file))?;
        let src = Source {
            path,
            format,
            file,
            snapshot,
            bytes: read.bytes.clone(),
            options,
            limits,
        };
        Ok((src, read.hash))
    }
}

/// The source imported and normalized, its notes into the report (an
/// import with errors stops the asset). Normalize is looked up first: its
/// record carries what the report needs of the import, so an unchanged
/// source is not imported at all (`fresh`: an import that already ran for
/// the companion list). `budget` is charged with the imported clips and
/// their normalized copy before normalizing.
#[allow(clippy::too_many_arguments)]
pub(super) fn ingest(
    src: &Source<'_>,
    digest: &SourceDigest,
    fresh: Option<Imported>,
    import: &Key,
    units_m: Option<f32>,
    budget: Option<&MemoryBudget>,
    r: &mut AssetReport,
    cx: &Cook<'_>,
) -> Result<Ingested, Stop> {
    let file = src.file;
    let spec = NormalizeSpec { import, units_m };
    let ing = match cx.cached::<Normalize>(file, None, &spec) {
        Some(ing) => {
            charge(budget, ing.import.source_bytes, file)?;
            ing
        }
        None => {
            let imported = run_import(src, digest, fresh, cx)?;
            if imported.validation.has_errors() || imported.asset.diagnostics.has_errors() {
                return Err(record_import(&imported, r));
            }
            charge(budget, source_bytes(&imported.asset), file)?;
            let input = NormalizeInput {
                imported: &imported,
                file,
            };
            cx.stage::<Normalize>(file, None, &spec, input)?
        }
    };
    report_ingest(&ing, r);
    Ok(ing)
}

/// Charge the asset's budget with the imported clips and their
/// normalized copy.
fn charge(budget: Option<&MemoryBudget>, bytes: u64, file: &str) -> Result<(), Stop> {
    let Some(budget) = budget else {
        return Ok(());
    };
    budget
        .charge(
            "the imported clips and their normalized copy",
            bytes.saturating_mul(2),
        )
        .map_err(|e| Stop::Failed(e.file(file).diagnostic()))
}

/// The import's decisions and diagnostics, then normalize's, into the
/// report; the skeleton's entry if it has none yet.
fn report_ingest(ing: &Ingested, r: &mut AssetReport) {
    let (notes, norm) = (&ing.import, &ing.norm);
    r.decisions
        .extend(notes.decisions.iter().map(report::decision));
    r.diagnostics
        .extend(notes.diagnostics.iter().map(report::diagnostic));
    r.decisions
        .extend(norm.decisions.iter().map(report::decision));
    r.diagnostics
        .extend(norm.warnings.iter().map(report::diagnostic));
    if r.skeleton.is_none() {
        r.skeleton = Some(SkeletonReport {
            joints: norm.skeleton.joint_count(),
            identity: norm.skeleton.identity().to_hex(),
            unit_scale_m: norm.unit_scale_m,
            source_axes: notes.source_axes.clone(),
            name: None,
            skins: Vec::new(),
        });
    }
}

/// Companion files (a .gltf's .bin buffers) are part of the import's
/// input; they are known from the previous import of the same bytes. When
/// they are not known, or one changed, the import runs now and is returned.
pub(super) fn companions(
    src: &Source<'_>,
    bytes_hash: &[u8; 32],
    cx: &Cook<'_>,
) -> Result<(SourceDigest, Option<Imported>), Stop> {
    let key = companions_key(src.file, src.format, bytes_hash, &src.options);
    let digest = |companions: Companions| SourceDigest {
        path: src.file.to_string(),
        format: src.format,
        bytes: *bytes_hash,
        companions,
    };
    let known: Option<Companions> = cx.cache.get(Stage::Import, &key);
    if let Some(known) = known.filter(|c| unchanged(src.snapshot, c)) {
        return Ok((digest(known), None));
    }
    let start = Instant::now();
    let imported = import(
        src.path,
        src.format,
        &src.bytes,
        &src.options,
        src.snapshot,
        src.limits,
    )?;
    let mut read = Vec::new();
    for c in &imported.asset.companions {
        let f = src.snapshot.companion(Path::new(c)).map_err(|_| {
            Diagnostic::error("io", format!("cannot read companion '{c}'")).file(src.file)
        })?;
        // `dir.join(uri)` of the recorded path: normalized like it.
        read.push((crate::paths::normalize_recorded(c), f.hash));
    }
    cx.cache.put(Stage::Import, &key, &read);
    cx.record(src.file, Stage::Import, None, None, start);
    Ok((digest(read), Some(imported)))
}

/// Whether every remembered companion still has the remembered bytes.
fn unchanged(snapshot: &Snapshot<'_>, companions: &Companions) -> bool {
    companions
        .iter()
        .all(|(p, h)| snapshot.companion(Path::new(p)).is_ok_and(|f| &f.hash == h))
}

/// blake3 over the source's bytes and every companion's, in import order.
pub(super) fn source_hash(src: &Source<'_>, digest: &SourceDigest) -> Result<[u8; 32], Stop> {
    let mut h = blake3::Hasher::new();
    h.update(&src.bytes);
    for (p, _) in &digest.companions {
        let f = src.snapshot.companion(Path::new(p)).map_err(|_| {
            Diagnostic::error("io", format!("cannot read companion '{p}'")).file(src.file)
        })?;
        h.update(&f.bytes);
    }
    Ok(*h.finalize().as_bytes())
}

/// Import (not stored: normalize's record carries what is read of it);
/// an import that already ran for the companion list is counted now.
fn run_import(
    src: &Source<'_>,
    digest: &SourceDigest,
    fresh: Option<Imported>,
    cx: &Cook<'_>,
) -> Result<Imported, Stop> {
    let spec = ImportSpec {
        digest,
        options: &src.options,
    };
    match fresh {
        Some(i) => {
            cx.cache.record_fingerprint(Stage::Import, i.fingerprint());
            Ok(i)
        }
        None => {
            let input = ImportInput {
                path: src.path,
                bytes: &src.bytes,
                companions: src.snapshot,
                limits: src.limits,
            };
            Ok(cx.stage::<Import>(src.file, None, &spec, input)?)
        }
    }
}

/// An import with errors: its decisions and diagnostics go into the
/// report, and the asset stops.
fn record_import(imported: &Imported, r: &mut AssetReport) -> Stop {
    let asset = &imported.asset;
    r.decisions
        .extend(asset.decisions.iter().map(report::decision));
    r.diagnostics
        .extend(asset.diagnostics.0.iter().map(report::diagnostic));
    r.diagnostics
        .extend(imported.validation.0.iter().map(report::diagnostic));
    Stop::Recorded
}
