//! Stage caching: every stage's output is stored under a key that covers
//! exactly what the stage reads (see `docs/stage-keys.md`), so a change
//! re-runs only the stages that read it.
//!
//! Keys chain: a stage's key includes the key of the stage before it (which
//! determines that stage's output, stages being deterministic functions of
//! their inputs and code version) rather than a hash of its output. The
//! whole chain of keys is therefore known before any work runs, and a
//! cook whose asset-level key hits reads nothing but that one record.
//!
//! Adapted idea: bevy's asset processor (a meta hash over source and
//! settings per processed asset); departure: per-stage keys that also carry
//! the stage's code version and the package format version.

use ludus_anim_cache::{CacheError, Key, KeyBuilder, Store};
use serde::de::DeserializeOwned;
use serde::Serialize;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Instant;

/// Pipeline stages in data-flow order, with the version of their code.
/// Bump a stage's version in the same commit that changes its output; the
/// golden-hash test fails otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Stage {
    Import,
    Normalize,
    Resample,
    Prepare,
    Encode,
    Verify,
    Package,
}

impl Stage {
    pub const ALL: [Stage; 7] = [
        Stage::Import,
        Stage::Normalize,
        Stage::Resample,
        Stage::Prepare,
        Stage::Encode,
        Stage::Verify,
        Stage::Package,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Stage::Import => "import",
            Stage::Normalize => "normalize",
            Stage::Resample => "resample",
            Stage::Prepare => "prepare",
            Stage::Encode => "encode",
            Stage::Verify => "verify",
            Stage::Package => "package",
        }
    }

    /// Code version of the stage.
    pub fn version(self) -> u32 {
        match self {
            // 2: markers from glTF extras, FBX custom-property curves.
            Stage::Import => 2,
            // 2: clips carry markers.
            Stage::Normalize => 2,
            Stage::Resample => 1,
            // 2: loops, root motion, additive and markers (was: loop only).
            Stage::Prepare => 2,
            // 2: VBR codec v2 (16-bit rotation ranges, unranged segments).
            Stage::Encode => 2,
            // 3: measures the static-pose decode and checks it equals the
            // direct decode (2: additive clips measured applied; scalar
            // curve errors).
            Stage::Verify => 3,
            // 3: quantized scalar curves with a channel schema.
            Stage::Package => 3,
        }
    }

    /// A key builder seeded with the stage's name and code version.
    pub fn key(self) -> KeyBuilder {
        let mut k = KeyBuilder::new();
        k.str(self.name()).u32(self.version());
        k
    }
}

#[derive(Default)]
struct Counter {
    hits: AtomicU64,
    misses: AtomicU64,
    nanos: AtomicU64,
}

/// Per-stage hit/miss/time counters, shared by all worker threads.
#[derive(Default)]
pub struct StageCounters {
    counters: [Counter; 7],
}

#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct StageStats {
    pub hits: u64,
    pub misses: u64,
    pub ms: f64,
}

impl StageCounters {
    fn slot(&self, s: Stage) -> &Counter {
        &self.counters[Stage::ALL.iter().position(|&x| x == s).unwrap_or(0)]
    }
    pub fn record(&self, s: Stage, hit: bool, nanos: u64) {
        let c = self.slot(s);
        if hit {
            c.hits.fetch_add(1, Ordering::Relaxed);
        } else {
            c.misses.fetch_add(1, Ordering::Relaxed);
        }
        c.nanos.fetch_add(nanos, Ordering::Relaxed);
    }
    pub fn snapshot(&self) -> Vec<(Stage, StageStats)> {
        Stage::ALL
            .iter()
            .map(|&s| {
                let c = self.slot(s);
                (
                    s,
                    StageStats {
                        hits: c.hits.load(Ordering::Relaxed),
                        misses: c.misses.load(Ordering::Relaxed),
                        ms: c.nanos.load(Ordering::Relaxed) as f64 / 1e6,
                    },
                )
            })
            .collect()
    }
}

/// The deterministic content of a stage output: what must not change
/// unless the stage's version does (timings are left out).
pub trait Fingerprint {
    fn fingerprint(&self) -> [u8; 32];
}

/// Fingerprint of a serializable value: blake3 of its cache encoding.
pub fn fingerprint_of<T: Serialize>(v: &T) -> [u8; 32] {
    *blake3::hash(&postcard::to_allocvec(v).unwrap_or_default()).as_bytes()
}

/// The cache as the pipeline uses it: optional store, counters, and the
/// notices (healed corruption, write failures) a cook reports.
pub struct StageCache {
    store: Option<Store>,
    pub counters: StageCounters,
    notices: Mutex<Vec<String>>,
    /// When set, every stage output's fingerprint, for the golden test.
    fingerprints: Option<Mutex<Vec<StageFingerprint>>>,
}

/// One stage output's fingerprint.
type StageFingerprint = (Stage, [u8; 32]);

impl StageCache {
    pub fn new(store: Option<Store>) -> StageCache {
        StageCache {
            store,
            counters: StageCounters::default(),
            notices: Mutex::new(Vec::new()),
            fingerprints: None,
        }
    }

    /// A cache that also records every stage output's fingerprint.
    pub fn recording(store: Option<Store>) -> StageCache {
        StageCache {
            fingerprints: Some(Mutex::new(Vec::new())),
            ..StageCache::new(store)
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

    /// Per stage: one hash over its outputs' fingerprints (sorted, so
    /// thread order does not matter).
    pub fn stage_fingerprints(&self) -> Vec<(Stage, [u8; 32])> {
        let Some(f) = &self.fingerprints else {
            return Vec::new();
        };
        let all = f.lock().map(|f| f.clone()).unwrap_or_default();
        Stage::ALL
            .iter()
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
        self.store.is_some()
    }

    pub fn take_notices(&self) -> Vec<String> {
        self.notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default()
    }

    fn notice(&self, s: String) {
        if let Ok(mut n) = self.notices.lock() {
            n.push(s);
        }
    }

    /// Raw bytes under `key`, if cached and intact.
    pub fn get_bytes(&self, key: &Key) -> Option<Vec<u8>> {
        let store = self.store.as_ref()?;
        match store.get(key) {
            Ok(v) => v,
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

    pub fn put_bytes(&self, key: &Key, bytes: &[u8]) {
        if let Some(store) = &self.store {
            if let Err(e) = store.put(key, bytes) {
                self.notice(format!("cache write failed (the cook goes on): {e}"));
            }
        }
    }

    pub fn get<T: DeserializeOwned>(&self, key: &Key) -> Option<T> {
        let bytes = self.get_bytes(key)?;
        match postcard::from_bytes(&bytes) {
            Ok(v) => Some(v),
            Err(e) => {
                self.notice(format!(
                    "cache entry {} does not decode ({e}); recomputing",
                    key.to_hex()
                ));
                None
            }
        }
    }

    pub fn put<T: Serialize>(&self, key: &Key, value: &T) {
        if self.store.is_none() {
            return;
        }
        match postcard::to_allocvec(value) {
            Ok(bytes) => self.put_bytes(key, &bytes),
            Err(e) => self.notice(format!("cache entry {} does not encode: {e}", key.to_hex())),
        }
    }

    /// Run `stage` through the cache: return the cached output for `key`,
    /// or compute, store and return it. Errors are never cached.
    pub fn run<T, E>(
        &self,
        stage: Stage,
        key: &Key,
        compute: impl FnOnce() -> Result<T, E>,
    ) -> Result<(T, bool), E>
    where
        T: Serialize + DeserializeOwned + Fingerprint,
    {
        let start = Instant::now();
        if let Some(v) = self.get::<T>(key) {
            self.counters
                .record(stage, true, start.elapsed().as_nanos() as u64);
            self.record_fingerprint(stage, v.fingerprint());
            return Ok((v, true));
        }
        let v = compute()?;
        self.put(key, &v);
        self.counters
            .record(stage, false, start.elapsed().as_nanos() as u64);
        self.record_fingerprint(stage, v.fingerprint());
        Ok((v, false))
    }
}
