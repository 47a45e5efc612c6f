//! `cache verify --remote`: does the farm's cache hold what this machine
//! computes? A sample of the project's assets is cooked here from scratch
//! into an empty scratch store, and every entry that cook stored is
//! compared byte for byte with the remote's entry under the same key.
//! Entries are deterministic (no timings; the same inputs give the same
//! bytes on every machine), so any difference is a disagreement: a
//! poisoned or mis-configured writer, or a nondeterministic stage.

use crate::events::Silent;
use crate::manifest::AssetJob;
use crate::pipeline::{cook_asset_job, CookError, CookOptions};
use crate::stage::Stage;
use crate::stage_cache::{unpack, CacheBackend, StageCache};
use ludus_anim_cache::{CacheError, Key, Store};
use ludus_anim_remote_cache::RemoteCache;
use serde_json::Value;
use std::sync::{Arc, Mutex};

/// One remote entry that is not what this machine computes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disagreement {
    /// The asset's recorded source path.
    pub source: String,
    pub stage: Stage,
    pub key: Key,
    /// Where the entries differ: a JSON path for whole-asset records
    /// (`manifest.package_hash`), else what the entry holds.
    pub field: String,
}

/// What a verification found.
#[derive(Clone, Debug, Default)]
pub struct Verification {
    /// Assets cooked here (the sample).
    pub assets: usize,
    /// Entries compared with the remote's.
    pub compared: usize,
    /// Entries the remote does not hold (not a disagreement).
    pub absent: usize,
    pub disagreements: Vec<Disagreement>,
}

/// The jobs to verify: `sample` of them (all when `None`), chosen by a
/// hash of the recorded path so repeated runs check the same assets and
/// a sample spreads over the project.
pub fn sample(options: &CookOptions, sample: Option<usize>) -> Vec<AssetJob> {
    let mut jobs: Vec<(blake3::Hash, &AssetJob)> = options
        .jobs
        .iter()
        .map(|j| (blake3::hash(options.recorded_path(&j.path).as_bytes()), j))
        .collect();
    jobs.sort_by_key(|(h, _)| *h.as_bytes());
    let n = sample.unwrap_or(jobs.len()).min(jobs.len());
    jobs.into_iter().take(n).map(|(_, j)| j.clone()).collect()
}

/// Cooks each of `jobs` into a fresh store in `scratch` and compares
/// every entry stored with `remote`'s.
pub fn verify(
    options: &CookOptions,
    jobs: &[AssetJob],
    remote: &RemoteCache,
    scratch: &Store,
) -> Result<Verification, CookError> {
    let mut found = Verification::default();
    for job in jobs {
        let recorder = Arc::new(Recorder {
            store: scratch.clone(),
            puts: Mutex::new(Vec::new()),
        });
        let cache = StageCache::new(Some(Box::new(Shared(recorder.clone()))));
        let result = cook_asset_job(job, options, &cache, &Silent)?;
        let source = result.report.source;
        found.assets += 1;
        let puts = recorder.puts.lock().map(|p| p.clone()).unwrap_or_default();
        for key in &puts {
            remote.prefetch(&key.1);
        }
        for (stage, key) in puts {
            let Ok(Some(ours)) = scratch.get(&key) else {
                continue;
            };
            match remote.fetch(&key, stage.name()) {
                Ok(Some(theirs)) => {
                    found.compared += 1;
                    if theirs != ours {
                        found.disagreements.push(Disagreement {
                            source: source.clone(),
                            stage,
                            key,
                            field: difference(&ours, &theirs),
                        });
                    }
                }
                Ok(None) => found.absent += 1,
                Err(_) => found.absent += 1,
            }
        }
    }
    Ok(found)
}

/// Where two stored entries differ.
fn difference(ours: &[u8], theirs: &[u8]) -> String {
    let (Some(a), Some(b)) = (unpack(ours), unpack(theirs)) else {
        return "entry encoding".to_string();
    };
    match (
        serde_json::from_slice::<Value>(&a),
        serde_json::from_slice::<Value>(&b),
    ) {
        (Ok(x), Ok(y)) => json_difference(&x, &y, String::new()),
        (Err(_), Err(_)) if a.len() != b.len() => {
            format!("output bytes ({} here, {} there)", a.len(), b.len())
        }
        _ => "output bytes".to_string(),
    }
}

/// The first path at which two JSON values differ (depth first, in key
/// order); `path` is where `a` and `b` sit.
fn json_difference(a: &Value, b: &Value, path: String) -> String {
    let at = |p: &str| {
        if p.is_empty() {
            "record".to_string()
        } else {
            p.to_string()
        }
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            for (k, v) in x {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                match y.get(k) {
                    Some(w) if w == v => {}
                    Some(w) => return json_difference(v, w, p),
                    None => return p,
                }
            }
            match y.keys().find(|k| !x.contains_key(*k)) {
                Some(k) if path.is_empty() => k.clone(),
                Some(k) => format!("{path}.{k}"),
                None => at(&path),
            }
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => x
            .iter()
            .zip(y)
            .enumerate()
            .find(|(_, (v, w))| v != w)
            .map(|(i, (v, w))| json_difference(v, w, format!("{path}[{i}]")))
            .unwrap_or_else(|| at(&path)),
        _ => at(&path),
    }
}

/// A store that remembers what was put into it, by stage.
struct Recorder {
    store: Store,
    puts: Mutex<Vec<(Stage, Key)>>,
}

/// [`Recorder`] shared with the caller that reads the list afterwards.
struct Shared(Arc<Recorder>);

impl CacheBackend for Shared {
    fn get(&self, _: Stage, _: &Key) -> Result<Option<Vec<u8>>, CacheError> {
        // Everything is computed here: nothing is read back.
        Ok(None)
    }

    fn put(&self, stage: Stage, key: &Key, bytes: &[u8]) -> Result<(), CacheError> {
        if let Ok(mut p) = self.0.puts.lock() {
            p.push((stage, *key));
        }
        self.0.store.put(key, bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::json_difference;
    use serde_json::json;

    #[test]
    fn json_differences_are_named_by_path() {
        let a = json!({"manifest": {"package_hash": "aa", "joints": 3}, "clips": [1, 2]});
        let mut b = a.clone();
        b["manifest"]["package_hash"] = json!("bb");
        assert_eq!(
            json_difference(&a, &b, String::new()),
            "manifest.package_hash"
        );
        let mut c = a.clone();
        c["clips"][1] = json!(5);
        assert_eq!(json_difference(&a, &c, String::new()), "clips[1]");
        assert_eq!(json_difference(&a, &json!(1), String::new()), "record");
    }
}
