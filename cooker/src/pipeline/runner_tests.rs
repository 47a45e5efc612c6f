//! A stage defined only here, run through the generic runner: what adding
//! a stage takes (one `CookStage` impl; its line in `stage_list!` is the
//! registration, borrowed here from `verify`'s so no production stage is
//! added), and what the runner does for it with no other code: key, cache
//! lookup and store, counters, `stage` events, and `Cook::cached`.

use super::{Cook, CookOptions, Profiles};
use crate::events::{CookEvent, Observer};
use crate::keys::{KeyInput, KeyWriter};
use crate::source::FileSystem;
use crate::stage::{fingerprint_of, CookStage, Fingerprint, Stage};
use crate::stage_cache::StageCache;
use ludus_anim_cache::Store;
use ludus_anim_model::Diagnostic;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Doubles a number; counts its runs.
struct Doubler;

struct DoublerSpec {
    n: u32,
}

impl KeyInput for DoublerSpec {
    fn feed(&self, k: &mut KeyWriter) {
        let DoublerSpec { n } = self;
        k.put(n);
    }
}

#[derive(Debug, PartialEq, Serialize, Deserialize)]
struct Doubled(u64);

impl Fingerprint for Doubled {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}

impl CookStage for Doubler {
    const STAGE: Stage = Stage::Verify;
    type Spec<'a> = DoublerSpec;
    type Input<'a> = &'a AtomicUsize;
    type Output = Doubled;

    fn run(spec: &DoublerSpec, runs: &AtomicUsize) -> Result<Doubled, Diagnostic> {
        runs.fetch_add(1, Ordering::Relaxed);
        match spec.n {
            0 => Err(Diagnostic::error("zero", "nothing to double")),
            n => Ok(Doubled(2 * u64::from(n))),
        }
    }
}

/// Every `stage` event as (stage, clip, hit).
#[derive(Default)]
struct Events(Mutex<Vec<(String, Option<String>, bool)>>);

impl Observer for Events {
    fn event(&self, e: &CookEvent<'_>) {
        if let CookEvent::Stage {
            stage, clip, hit, ..
        } = e
        {
            if let Ok(mut v) = self.0.lock() {
                v.push((stage.name().to_string(), clip.map(str::to_string), *hit));
            }
        }
    }
}

#[test]
fn a_new_stage_is_one_impl_and_the_runner_does_the_rest() {
    let dir = tempfile::tempdir().expect("temp dir");
    let store = Store::open(dir.path()).expect("store");
    let cache = StageCache::local(Some(store));
    let options = CookOptions::for_files(Vec::new(), dir.path().join("out"), "standard");
    let profiles = Profiles(BTreeMap::new());
    let events = Events::default();
    let cx = Cook {
        options: &options,
        profiles: &profiles,
        cache: &cache,
        observer: &events,
        reader: &FileSystem,
        reuse_packages: true,
    };
    let runs = AtomicUsize::new(0);
    let spec = DoublerSpec { n: 21 };

    assert_eq!(cx.cached::<Doubler>("a.glb", Some("c"), &spec), None);
    let first = cx.stage::<Doubler>("a.glb", Some("c"), &spec, &runs);
    let again = cx.stage::<Doubler>("a.glb", Some("c"), &spec, &runs);
    assert_eq!((first, again), (Ok(Doubled(42)), Ok(Doubled(42))));
    assert_eq!(runs.load(Ordering::Relaxed), 1, "the second call is a hit");
    assert_eq!(
        cx.cached::<Doubler>("a.glb", Some("c"), &spec),
        Some(Doubled(42))
    );

    // Another spec is another key. An error is returned and never
    // stored (so it runs again), nor counted or told as a stage event:
    // the asset's failure report carries it.
    let other = DoublerSpec { n: 0 };
    assert!(cx.stage::<Doubler>("a.glb", None, &other, &runs).is_err());
    assert!(cx.stage::<Doubler>("a.glb", None, &other, &runs).is_err());
    assert_eq!(runs.load(Ordering::Relaxed), 3);

    let counted = cache.counters.snapshot();
    let (_, stats) = counted
        .iter()
        .find(|(s, _)| *s == Stage::Verify)
        .expect("the stage is counted");
    assert_eq!((stats.hits, stats.misses), (2, 1), "{counted:?}");
    let seen = events.0.lock().expect("events").clone();
    let verify = |clip: Option<&str>, hit| ("verify".to_string(), clip.map(str::to_string), hit);
    assert_eq!(
        seen,
        vec![
            verify(Some("c"), false),
            verify(Some("c"), true),
            verify(Some("c"), true),
        ]
    );
}
