//! Stage caching: every stage's output is stored under its key (`keys`),
//! so a change re-runs only the stages that read it. Where entries live is
//! a [`CacheBackend`]: the local directory store, or the local store
//! layered over a build farm's remote cache (`crate::remote`); the
//! pipeline sees one interface.

use crate::stage::{Fingerprint, Stage};
use crate::stamps::StampMemo;
use ludus_anim_cache::{CacheError, Key, Store};
use ludus_anim_report::{RemoteReport, StageStats};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Which cache tier served an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tier {
    /// The local directory store.
    Local,
    /// The build farm's remote cache (the entry is now also local).
    Remote,
}

/// A store of stage outputs. Entries are opaque bytes; a backend never
/// returns a partial or corrupted entry as a value (it reports and misses).
pub trait CacheBackend: Send + Sync {
    /// The entry under `key`, written by `stage`, if present and intact.
    fn get(&self, stage: Stage, key: &Key) -> Result<Option<Vec<u8>>, CacheError>;
    fn put(&self, stage: Stage, key: &Key, bytes: &[u8]) -> Result<(), CacheError>;
    /// [`CacheBackend::get`], saying which tier served the entry.
    fn lookup(&self, stage: Stage, key: &Key) -> Result<Option<(Vec<u8>, Tier)>, CacheError> {
        Ok(self.get(stage, key)?.map(|v| (v, Tier::Local)))
    }
    /// Start fetching these entries in the background, where that takes a
    /// network round trip (the remote tier), so later lookups find them
    /// ready; never blocks.
    fn prefetch(&self, _keys: &[Key]) {}
    /// Problems met and handled since the last call (healed corruption,
    /// unreachable servers), for the report.
    fn take_notices(&self) -> Vec<String> {
        Vec::new()
    }
    /// Finish pending work (uploads) before the process exits; bounded.
    fn flush(&self) {}
    /// The remote tier's traffic so far, if there is a remote tier.
    fn remote_report(&self) -> Option<RemoteReport> {
        None
    }
}

impl CacheBackend for Store {
    fn get(&self, _: Stage, key: &Key) -> Result<Option<Vec<u8>>, CacheError> {
        Store::get(self, key)
    }
    fn put(&self, _: Stage, key: &Key, bytes: &[u8]) -> Result<(), CacheError> {
        Store::put(self, key, bytes)
    }
}

#[derive(Default)]
struct Counter {
    hits: AtomicU64,
    misses: AtomicU64,
    nanos: AtomicU64,
    rejected: AtomicU64,
}

/// Per-stage hit/miss/time counters, shared by all worker threads.
pub struct StageCounters {
    counters: Vec<Counter>,
}

impl Default for StageCounters {
    fn default() -> Self {
        StageCounters {
            counters: Stage::ALL.iter().map(|_| Counter::default()).collect(),
        }
    }
}

impl StageCounters {
    pub fn record(&self, s: Stage, hit: bool, nanos: u64) {
        let Some(c) = self.counters.get(s.index()) else {
            return;
        };
        if hit {
            c.hits.fetch_add(1, Ordering::Relaxed);
        } else {
            c.misses.fetch_add(1, Ordering::Relaxed);
        }
        c.nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// A cached record of `s` refused (it does not prove its key).
    pub fn reject(&self, s: Stage) {
        if let Some(c) = self.counters.get(s.index()) {
            c.rejected.fetch_add(1, Ordering::Relaxed);
        }
    }

    pub fn snapshot(&self) -> Vec<(Stage, StageStats)> {
        Stage::ALL
            .iter()
            .zip(&self.counters)
            .map(|(&s, c)| {
                (
                    s,
                    StageStats {
                        hits: c.hits.load(Ordering::Relaxed),
                        misses: c.misses.load(Ordering::Relaxed),
                        ms: c.nanos.load(Ordering::Relaxed) as f64 / 1e6,
                        rejected: c.rejected.load(Ordering::Relaxed),
                    },
                )
            })
            .collect()
    }
}

/// One stage output's fingerprint.
type StageFingerprint = (Stage, [u8; 32]);

/// The cache as the pipeline uses it: an optional backend, counters, and
/// the notices (healed corruption, write failures) a cook reports.
pub struct StageCache {
    backend: Option<Box<dyn CacheBackend>>,
    pub counters: StageCounters,
    notices: Mutex<Vec<String>>,
    /// When set, every stage output's fingerprint, for the golden test.
    fingerprints: Option<Mutex<Vec<StageFingerprint>>>,
    /// The local cache directory's source stamps (`crate::stamps`), for
    /// cooks that read sources from the file system.
    stamps: Option<StampMemo>,
}

impl StageCache {
    pub fn new(backend: Option<Box<dyn CacheBackend>>) -> StageCache {
        StageCache {
            backend,
            counters: StageCounters::default(),
            notices: Mutex::new(Vec::new()),
            fingerprints: None,
            stamps: None,
        }
    }

    /// This cache with the source stamps kept in `cache_dir`.
    pub fn with_stamps(self, cache_dir: &std::path::Path) -> StageCache {
        StageCache {
            stamps: Some(StampMemo::open(cache_dir)),
            ..self
        }
    }

    /// The source stamps, if this cache keeps them.
    pub fn stamps(&self) -> Option<&StampMemo> {
        self.stamps.as_ref()
    }

    /// A cache on a local store (or none).
    pub fn local(store: Option<Store>) -> StageCache {
        StageCache::new(store.map(|s| Box::new(s) as Box<dyn CacheBackend>))
    }

    /// A cache that also records every stage output's fingerprint.
    pub fn recording(store: Option<Store>) -> StageCache {
        StageCache {
            fingerprints: Some(Mutex::new(Vec::new())),
            ..StageCache::local(store)
        }
    }

    /// Record a stage output's fingerprint (when recording).
    pub fn record_fingerprint(&self, stage: Stage, fp: [u8; 32]) {
        if let Some(f) = &self.fingerprints {
            if let Ok(mut f) = f.lock() {
                f.push((stage, fp));
            }
        }
    }

    /// Per stage that produced output: one hash over its outputs'
    /// fingerprints (sorted, so thread order does not matter).
    pub fn stage_fingerprints(&self) -> Vec<(Stage, [u8; 32])> {
        let Some(f) = &self.fingerprints else {
            return Vec::new();
        };
        let all = f.lock().map(|f| f.clone()).unwrap_or_default();
        Stage::ALL
            .iter()
            .filter(|&&s| all.iter().any(|(x, _)| *x == s))
            .map(|&s| {
                let mut v: Vec<[u8; 32]> = all
                    .iter()
                    .filter(|(x, _)| *x == s)
                    .map(|(_, h)| *h)
                    .collect();
                v.sort();
                let mut h = blake3::Hasher::new();
                for x in &v {
                    h.update(x);
                }
                (s, *h.finalize().as_bytes())
            })
            .collect()
    }

    pub fn enabled(&self) -> bool {
        self.backend.is_some()
    }

    /// Notices so far, the backend's included; the list is emptied.
    pub fn take_notices(&self) -> Vec<String> {
        let mut n = self
            .notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default();
        if let Some(b) = &self.backend {
            n.extend(b.take_notices());
        }
        n
    }

    /// Start fetching the entries of `keys` in the background
    /// ([`CacheBackend::prefetch`]): a plan's keys, as soon as they are
    /// known.
    pub fn prefetch(&self, keys: &[Key]) {
        if let Some(b) = &self.backend {
            b.prefetch(keys);
        }
    }

    /// Finish the backend's pending work; save the source stamps.
    pub fn flush(&self) {
        if let Some(b) = &self.backend {
            b.flush();
        }
        if let Some(s) = &self.stamps {
            s.save();
        }
    }

    /// The remote tier's traffic, if the backend has a remote tier.
    pub fn remote_report(&self) -> Option<RemoteReport> {
        self.backend.as_ref().and_then(|b| b.remote_report())
    }

    /// A record of `stage` found under a key it does not prove: counted,
    /// and told as a notice (the caller treats it as a miss).
    pub fn reject(&self, stage: Stage, why: String) {
        self.counters.reject(stage);
        self.notice(why);
    }

    pub fn notice(&self, s: String) {
        if let Ok(mut n) = self.notices.lock() {
            n.push(s);
        }
    }

    /// Raw bytes under `key`, if cached and intact.
    pub fn get_bytes(&self, stage: Stage, key: &Key) -> Option<Vec<u8>> {
        self.lookup_bytes(stage, key).map(|(v, _)| v)
    }

    /// Raw bytes under `key` and the tier that served them.
    pub fn lookup_bytes(&self, stage: Stage, key: &Key) -> Option<(Vec<u8>, Tier)> {
        let backend = self.backend.as_ref()?;
        match backend.lookup(stage, key) {
            Ok(Some((packed, tier))) => match unpack(&packed) {
                Some(v) => Some((v, tier)),
                None => {
                    self.notice(format!(
                        "cache entry {} is not a compressed stage output; recomputing",
                        key.to_hex()
                    ));
                    None
                }
            },
            Ok(None) => None,
            Err(e @ CacheError::Corrupt { .. }) => {
                self.notice(e.to_string());
                None
            }
            Err(e) => {
                self.notice(format!("cache read failed, recomputing: {e}"));
                None
            }
        }
    }

    pub fn put_bytes(&self, stage: Stage, key: &Key, bytes: &[u8]) {
        if let Some(backend) = &self.backend {
            if let Err(e) = backend.put(stage, key, &pack(bytes)) {
                self.notice(format!("cache write failed (the cook goes on): {e}"));
            }
        }
    }

    pub fn get<T: DeserializeOwned>(&self, stage: Stage, key: &Key) -> Option<T> {
        self.lookup(stage, key).map(|(v, _)| v)
    }

    /// A decoded entry and the tier that served it.
    pub fn lookup<T: DeserializeOwned>(&self, stage: Stage, key: &Key) -> Option<(T, Tier)> {
        let (bytes, tier) = self.lookup_bytes(stage, key)?;
        match postcard::from_bytes(&bytes) {
            Ok(v) => Some((v, tier)),
            Err(e) => {
                self.notice(format!(
                    "cache entry {} does not decode ({e}); recomputing",
                    key.to_hex()
                ));
                None
            }
        }
    }

    pub fn put<T: Serialize>(&self, stage: Stage, key: &Key, value: &T) {
        if self.backend.is_none() {
            return;
        }
        match postcard::to_allocvec(value) {
            Ok(bytes) => self.put_bytes(stage, key, &bytes),
            Err(e) => self.notice(format!("cache entry {} does not encode: {e}", key.to_hex())),
        }
    }

    /// Run `stage` through the cache: the cached output for `key` (with
    /// the tier that served it), or compute, store and return it (`None`).
    /// Errors are never cached.
    pub fn run<T, E>(
        &self,
        stage: Stage,
        key: &Key,
        compute: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, Option<Tier>), E>
    where
        T: Serialize + DeserializeOwned + Fingerprint,
    {
        let start = Instant::now();
        if let Some((v, tier)) = self.lookup::<T>(stage, key) {
            self.counters
                .record(stage, true, start.elapsed().as_nanos() as u64);
            self.record_fingerprint(stage, v.fingerprint());
            return Ok((v, Some(tier)));
        }
        let v = compute()?;
        self.put(stage, key, &v);
        self.counters
            .record(stage, false, start.elapsed().as_nanos() as u64);
        self.record_fingerprint(stage, v.fingerprint());
        Ok((v, None))
    }
}

/// Stage outputs are stored zstd-compressed (level [`ZSTD_LEVEL`]): grids
/// of transforms and error tables shrink 2.5-4.5x, which is most of the
/// cache. An entry is `Z`, the raw length (u64 little-endian), then one
/// zstd frame; the length bounds the decompression, so a hostile entry
/// cannot make it allocate more than it declares (at most
/// [`MAX_ENTRY_BYTES`]). The encoding is part of every key
/// (`keys::ENTRY_FORMAT`), so entries of another encoding are never asked
/// for.
pub const ZSTD_LEVEL: i32 = 1;
/// The largest stage output an entry may declare.
pub const MAX_ENTRY_BYTES: u64 = 1 << 31;

fn pack(raw: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(raw.len() / 3 + 16);
    out.push(b'Z');
    out.extend_from_slice(&(raw.len() as u64).to_le_bytes());
    match zstd::bulk::compress(raw, ZSTD_LEVEL) {
        Ok(z) => out.extend_from_slice(&z),
        // Compression of an in-memory buffer does not fail in practice;
        // an entry that cannot be made is simply not usable (a miss).
        Err(_) => out.clear(),
    }
    out
}

pub(crate) fn unpack(entry: &[u8]) -> Option<Vec<u8>> {
    let (tag, rest) = entry.split_first()?;
    let (len, frame) = rest.split_first_chunk::<8>()?;
    let len = u64::from_le_bytes(*len);
    if *tag != b'Z' || len > MAX_ENTRY_BYTES {
        return None;
    }
    let capacity = usize::try_from(len).ok()?;
    // One decompression context per thread: making one per entry was a
    // twentieth of a no-op cook.
    thread_local! {
        static CONTEXT: std::cell::RefCell<Option<zstd::bulk::Decompressor<'static>>> =
            const { std::cell::RefCell::new(None) };
    }
    let raw = CONTEXT.with(|c| {
        let mut c = c.try_borrow_mut().ok()?;
        if c.is_none() {
            *c = zstd::bulk::Decompressor::new().ok();
        }
        c.as_mut()?.decompress(frame, capacity).ok()
    })?;
    (raw.len() as u64 == len).then_some(raw)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_round_trip_and_refuse_what_they_did_not_write() {
        let raw: Vec<u8> = (0..10_000u32).flat_map(|i| (i % 7).to_le_bytes()).collect();
        let e = pack(&raw);
        assert!(e.len() < raw.len() / 4);
        assert_eq!(unpack(&e), Some(raw.clone()));
        assert_eq!(unpack(&pack(&[])), Some(Vec::new()));
        assert_eq!(unpack(b"postcard bytes"), None);
        let mut lying = e.clone();
        lying[1..9].copy_from_slice(&10u64.to_le_bytes());
        assert_eq!(unpack(&lying), None, "declared length too small");
        let mut huge = e.clone();
        huge[1..9].copy_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(unpack(&huge), None);
        assert_eq!(unpack(&e[..e.len() - 3]), None, "truncated frame");
    }
}
