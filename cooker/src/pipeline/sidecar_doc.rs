//! The cook's `OUT/report-sidecar.json`, assembled from each asset's
//! serialized part (`ludus_anim_report::sidecar_parts`) without parsing
//! anything back.
//!
//! Each clip's record is its own entry (`ClipPart`, keyed by the clip's
//! verification); an asset's part is its clips' parts concatenated. An
//! asset served whole from the cache brings only its clips' part keys and
//! the asset part's digest. The document records one digest over every part's digest and
//! the size limit (`content` in its header): when the published file's
//! header already says so, it is kept as it is (staged by hard link) and
//! no part is read at all. Otherwise the parts come from the cache; a part
//! missing there sends its asset through the clip stages again (whose own
//! entries make that cheap), so the document is never short of a clip.

use crate::stage::Stage;
use crate::stage_cache::StageCache;
use ludus_anim_cache::{Key, KeyBuilder};
use ludus_anim_report::sidecar::SIDECAR_VERSION;
use ludus_anim_report::sidecar_parts::{self, SidecarPart};
use std::sync::Arc;

/// An asset's part with the asset's recorded source path.
pub type NamedPart = (String, Arc<SidecarPart>);

/// One clip's sidecar record (a one-clip part) and the entry it is stored
/// under. The clip's per-time error grid is kept here only: verification's
/// record leaves it out.
#[derive(Clone, Debug)]
pub struct ClipPart {
    pub key: Key,
    pub part: SidecarPart,
}

/// Revision of what a clip's record holds within [`SIDECAR_VERSION`]'s
/// layout. 2: the sampled poses (and a retargeted clip's source poses);
/// 3: the retarget block's rig axes.
const CLIP_RECORD_REVISION: u32 = 3;

/// What a clip's record is a function of: its verification (whose key
/// chains every input and setting), the source path and profile name it
/// names, and the record layout.
pub fn clip_part_key(verify: &Key, source: &str, profile: &str) -> Key {
    let mut k = KeyBuilder::new();
    k.str("clip-sidecar")
        .u32(SIDECAR_VERSION)
        .u32(CLIP_RECORD_REVISION)
        .str(crate::COOKER_VERSION)
        .key(verify)
        .str(source)
        .str(profile);
    k.finish()
}

/// An asset's part: its clips' parts in order.
pub fn asset_part(clips: &[&ClipPart]) -> SidecarPart {
    SidecarPart::concat(clips.iter().map(|c| &c.part))
}

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
    /// Served from the cache: its clips' part entries and the asset
    /// part's digest.
    Cached { keys: Vec<Key>, digest: [u8; 32] },
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
        AssetSidecar::Cached { keys, digest } => {
            let clips: Option<Vec<SidecarPart>> = keys
                .iter()
                .map(|k| {
                    let bytes = cache.get_bytes(Stage::Package, k)?;
                    SidecarPart::from_bytes(&bytes)
                })
                .collect();
            let cached = clips
                .map(|c| SidecarPart::concat(c.iter()))
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
