//! The warm no-op: a cook whose inputs, settings and published outputs
//! are exactly those of the last publication does nothing.
//!
//! After a publication, `OUT/.cook-state` records the cook's key (every
//! asset's package key, derived from the stamps memo without reading a
//! source, plus the options), the generation it published, and each
//! published file's length, modification time and inode. A later cook
//! whose key, generation and files all match is up to date: it reads no
//! cache record and writes nothing, and the published report stays the
//! one that describes these outputs. Anything else (a changed source,
//! profile or option, a file edited or removed in `OUT`, another
//! publication, a stamp the memo does not know) cooks as usual.
//!
//! Only a cook that published without failed assets is recorded, so an
//! error is always reported again by cooking.

use super::asset::stamped_package_key;
use super::{Cook, CookOptions, Profiles};
use crate::events::Silent;
use crate::source::FileSystem;
use crate::stage_cache::StageCache;
use ludus_anim_report::Totals;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The state file, in the output directory.
pub const STATE_FILE: &str = ".cook-state";

/// Revision of the state file's layout.
const REVISION: u32 = 1;

/// What the last publication was, when the outputs are up to date.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct UpToDate {
    pub generation: u64,
    pub totals: Totals,
}

#[derive(Serialize, Deserialize)]
struct State {
    revision: u32,
    key: String,
    generation: u64,
    totals: Totals,
    /// (path relative to OUT, length, mtime ns, inode)
    files: Vec<(String, u64, i128, u64)>,
}

/// The cook's key: the options that shape its outputs and every asset's
/// package key from the stamps memo; `None` if any asset's files changed
/// since they were hashed (or were never memoized).
fn cook_key(options: &CookOptions, cache: &StageCache) -> Option<String> {
    cache.stamps()?;
    let profiles = Profiles::load(options, &FileSystem).ok()?;
    let cx = Cook {
        options,
        profiles: &profiles,
        cache,
        observer: &Silent,
        reader: &FileSystem,
        reuse_packages: true,
    };
    // Worker threads change nothing a cook writes.
    let shaping = CookOptions {
        threads: 0,
        ..options.clone()
    };
    let mut h = blake3::Hasher::new();
    h.update(crate::COOKER_VERSION.as_bytes());
    h.update(format!("{shaping:?}").as_bytes());
    for job in &options.jobs {
        h.update(stamped_package_key(job, &cx)?.to_hex().as_bytes());
    }
    Some(h.finalize().to_hex().to_string())
}

/// A published file's stamp: length, modification time (ns), inode.
fn stamp(out: &Path, rel: &str) -> Option<(u64, i128, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::symlink_metadata(out.join(rel)).ok()?;
    if !m.is_file() {
        return None;
    }
    let mtime = m.mtime() as i128 * 1_000_000_000 + m.mtime_nsec() as i128;
    Some((m.len(), mtime, m.ino()))
}

/// Whether `options` would publish exactly what `OUT` holds (see the
/// module documentation). Holds the output directory's lock while
/// comparing, so a publication in progress is never taken as current.
pub fn up_to_date(options: &CookOptions, cache: &StageCache) -> Option<UpToDate> {
    if options.shard.is_some() {
        return None;
    }
    let out = &options.out;
    let state: State = serde_json::from_slice(&std::fs::read(out.join(STATE_FILE)).ok()?).ok()?;
    if state.revision != REVISION {
        return None;
    }
    let _lock = crate::publish::lock_out(out).ok()?;
    if crate::publish::generation(out) != state.generation {
        return None;
    }
    let files_match = state
        .files
        .iter()
        .all(|(rel, len, mtime, ino)| stamp(out, rel) == Some((*len, *mtime, *ino)));
    if !files_match || cook_key(options, cache)? != state.key {
        return None;
    }
    Some(UpToDate {
        generation: state.generation,
        totals: state.totals,
    })
}

/// Record the publication `generation` of `files` (relative to OUT) by a
/// cook with `options` and these `totals`. Best effort: without a state
/// file the next cook simply cooks.
pub fn record(
    options: &CookOptions,
    cache: &StageCache,
    totals: &Totals,
    generation: u64,
    files: &[String],
) {
    let out = &options.out;
    let _ = std::fs::remove_file(out.join(STATE_FILE));
    if options.shard.is_some() || totals.assets_failed > 0 {
        return;
    }
    // Keys after the cook: the stamps memo now holds the files it read.
    let Some(key) = cook_key(options, cache) else {
        return;
    };
    let files: Option<Vec<_>> = files
        .iter()
        .map(|rel| stamp(out, rel).map(|(l, m, i)| (rel.clone(), l, m, i)))
        .collect();
    let Some(files) = files else {
        return;
    };
    let state = State {
        revision: REVISION,
        key,
        generation,
        totals: totals.clone(),
        files,
    };
    if let Ok(bytes) = serde_json::to_vec(&state) {
        let _ = crate::fsutil::write_atomic(&out.join(STATE_FILE), &bytes);
    }
}
