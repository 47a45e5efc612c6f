//! The server's `report-sidecar.json`: the dashboard's per-time data for
//! the *whole* generation, not just the assets the last cook touched.
//!
//! A cook of a few assets hands over one serialized part per asset it
//! cooked (its [`PackageSink`](crate::generation::PackageSink) keeps them
//! instead of writing them out). The worker keeps each asset's part (the
//! last good one while a later cook fails, beside the last good package),
//! and a generation's sidecar is assembled by concatenating the parts in
//! project order (`ludus_anim_report::sidecar_parts`, the same writer as
//! `ludus-anim cook`'s): a one-asset edit serializes that asset's clips
//! once, never the other 999.
//!
//! The size limit (`[report] sidecar_max_mb`) applies to the assembled
//! whole, as `ludus-anim cook` applies it to its whole sidecar: above it,
//! every clip's per-time errors are left out. The server's cooks therefore
//! run without the limit; each part is kept in both forms.

use ludus_anim_cooker::pipeline::sidecar_doc::{self, NamedPart};
use ludus_anim_report::sidecar::ClipSidecar;
pub use ludus_anim_report::sidecar_parts::SidecarPart;
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Arc;

/// Asset name (the report's `source`) → its part.
pub type SidecarParts = BTreeMap<String, Arc<SidecarPart>>;

/// The parts a cook handed over, by asset.
pub fn by_asset(parts: Vec<NamedPart>) -> SidecarParts {
    parts.into_iter().collect()
}

/// Split a published sidecar's records into one part per asset (a
/// restart picks up the generation on disk).
pub fn split(clips: Vec<ClipSidecar>) -> SidecarParts {
    let mut by_asset: BTreeMap<String, Vec<ClipSidecar>> = BTreeMap::new();
    for c in clips {
        by_asset.entry(c.source.clone()).or_default().push(c);
    }
    by_asset
        .into_iter()
        .map(|(name, clips)| (name, Arc::new(SidecarPart::of(clips))))
        .collect()
}

/// The sidecar JSON of `parts` (in order): the same document
/// `ludus-anim cook` writes for those clips, `content` included, every
/// clip's per-time errors left out when the whole would pass `max_mb`.
pub fn write<'a>(
    w: &mut impl Write,
    parts: impl Iterator<Item = &'a SidecarPart> + Clone,
    max_mb: Option<f64>,
) -> io::Result<()> {
    let digests: Vec<[u8; 32]> = parts.clone().map(sidecar_doc::digest_of).collect();
    let content = sidecar_doc::content_digest(digests.iter(), max_mb);
    let version = ludus_anim_cooker::COOKER_VERSION;
    ludus_anim_report::sidecar_parts::write(w, parts, max_mb, version, &content)
}
