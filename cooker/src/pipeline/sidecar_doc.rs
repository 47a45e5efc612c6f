//! The cook's `OUT/report-sidecar.json`, assembled from each asset's
//! serialized part (`ludus_anim_report::sidecar_parts`) without parsing
//! anything back.
//!
//! An asset served whole from the cache brings only its part's key and
//! digest. The document records one digest over every part's digest and
//! the size limit (`content` in its header): when the published file's
//! header already says so, it is kept as it is (staged by hard link) and
//! no part is read at all. Otherwise the parts come from the cache; a part
//! missing there sends its asset through the clip stages again (whose own
//! entries make that cheap), so the document is never short of a clip.

use crate::stage::Stage;
use crate::stage_cache::StageCache;
use ludus_anim_cache::Key;
use ludus_anim_report::sidecar_parts::{self, SidecarPart};
use std::sync::Arc;

/// An asset's part with the asset's recorded source path.
pub type NamedPart = (String, Arc<SidecarPart>);

/// One asset's sidecar part, in hand or in the cache.
#[derive(Clone, Debug)]
pub enum AssetSidecar {
    /// The cook writes no sidecar, or the asset failed.
    None,
    /// Cooked now.
    Ready {
        part: Arc<SidecarPart>,
        digest: [u8; 32],
    },
    /// Served from the cache: the part's entry and digest.
    Cached { key: Key, digest: [u8; 32] },
}

impl AssetSidecar {
    /// A part cooked now, with its digest.
    pub fn ready(part: SidecarPart) -> AssetSidecar {
        let digest = digest_of(&part);
        AssetSidecar::Ready {
            part: Arc::new(part),
            digest,
        }
    }

    fn digest(&self) -> Option<&[u8; 32]> {
        match self {
            AssetSidecar::None => None,
            AssetSidecar::Ready { digest, .. } | AssetSidecar::Cached { digest, .. } => {
                Some(digest)
            }
        }
    }
}

/// The digest a part is recorded under: blake3 of its cache bytes.
pub fn digest_of(part: &SidecarPart) -> [u8; 32] {
    *blake3::hash(&part.to_bytes()).as_bytes()
}

/// The document's `content`: one hex digest over the size limit and the
/// parts' digests in order (what fixes its bytes, with the cooker
/// version the header also carries).
pub fn content_digest<'a>(
    digests: impl Iterator<Item = &'a [u8; 32]>,
    max_mb: Option<f64>,
) -> String {
    let mut h = blake3::Hasher::new();
    h.update(crate::COOKER_VERSION.as_bytes());
    match max_mb {
        Some(mb) => h.update(&[1]).update(&mb.to_le_bytes()),
        None => h.update(&[0]),
    };
    for d in digests {
        h.update(d);
    }
    h.finalize().to_hex().to_string()
}

/// The `content` of a cook's parts (`None` entries skipped).
pub(crate) fn content_of(parts: &[&AssetSidecar], max_mb: Option<f64>) -> String {
    content_digest(parts.iter().filter_map(|p| p.digest()), max_mb)
}

/// The part in hand: read from the cache (and checked against its
/// digest), or, when the entry is gone or wrong, what `recook` gives
/// (the asset cooked again through its stages).
pub(crate) fn materialize(
    part: AssetSidecar,
    cache: &StageCache,
    recook: impl FnOnce() -> AssetSidecar,
) -> Option<Arc<SidecarPart>> {
    match part {
        AssetSidecar::None => None,
        AssetSidecar::Ready { part, .. } => Some(part),
        AssetSidecar::Cached { key, digest } => {
            let cached = cache
                .get_bytes(Stage::Package, &key)
                .and_then(|b| SidecarPart::from_bytes(&b))
                .filter(|p| digest_of(p) == digest);
            match (cached, recook) {
                (Some(p), _) => Some(Arc::new(p)),
                (None, recook) => match recook() {
                    AssetSidecar::Ready { part, .. } => Some(part),
                    _ => None,
                },
            }
        }
    }
}

/// The header that identifies a document with this `content`.
pub(crate) fn header(content: &str) -> Vec<u8> {
    sidecar_parts::header(crate::COOKER_VERSION, content)
}

/// The document of `parts` (in hand), with its `content`.
pub(crate) fn document(
    parts: &[Arc<SidecarPart>],
    max_mb: Option<f64>,
    content: &str,
) -> std::io::Result<Vec<u8>> {
    let mut out = Vec::new();
    let iter = parts.iter().map(|p| p.as_ref());
    sidecar_parts::write(&mut out, iter, max_mb, crate::COOKER_VERSION, content)?;
    Ok(out)
}
