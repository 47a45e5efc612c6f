//! What HTTP reads: the published generation (immutable, swapped whole),
//! the packages the kept generations name, the cook queue, counters and
//! the event stream. Handlers never see a generation being built.

use crate::generation::{GenerationFiles, StaleMap};
use crate::metrics::Metrics;
use ludus_anim_cooker::report::{AssetReport, ManifestAsset};
use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Instant, SystemTime};
use tokio::sync::broadcast;

/// One published generation, with lookups built once.
pub struct Published {
    pub number: u64,
    pub published_at: SystemTime,
    pub files: GenerationFiles,
    /// `report.json` as written.
    pub report_json: Arc<Vec<u8>>,
    /// Asset name → index in `files.report.assets`.
    by_name: HashMap<String, usize>,
    /// Asset name → its served manifest entry.
    served: HashMap<String, usize>,
    /// The dashboard page of this generation, rendered on first request.
    dashboard: std::sync::OnceLock<Arc<String>>,
}

impl Published {
    /// The dashboard of this generation (the same page `ludus-anim report`
    /// writes), rendered once.
    pub fn dashboard(&self) -> Arc<String> {
        self.dashboard
            .get_or_init(|| {
                let cook = ludus_anim_dashboard::Cook::new(
                    &format!("generation {}", self.number),
                    self.files.report.clone(),
                    None,
                );
                let d = ludus_anim_dashboard::Dashboard::new(vec![cook], None, Default::default());
                let opts = ludus_anim_dashboard::HtmlOptions {
                    title: format!("ludus-anim — generation {}", self.number),
                    ..Default::default()
                };
                Arc::new(ludus_anim_dashboard::render_html(&d, &opts))
            })
            .clone()
    }

    pub fn new(files: GenerationFiles, report_json: Vec<u8>, at: SystemTime) -> Published {
        let by_name = index(files.report.assets.iter().map(|a| a.source.as_str()));
        let served = index(files.manifest.assets.iter().map(|a| a.source.as_str()));
        Published {
            number: files.number,
            published_at: at,
            files,
            report_json: Arc::new(report_json),
            by_name,
            served,
            dashboard: std::sync::OnceLock::new(),
        }
    }

    /// The latest report entry of `name`.
    pub fn report_of(&self, name: &str) -> Option<&AssetReport> {
        self.by_name
            .get(name)
            .and_then(|&i| self.files.report.assets.get(i))
    }

    /// The package `name` is served with (possibly from an older cook).
    pub fn served(&self, name: &str) -> Option<&ManifestAsset> {
        self.served
            .get(name)
            .and_then(|&i| self.files.manifest.assets.get(i))
    }

    pub fn stale(&self) -> &StaleMap {
        &self.files.stale
    }
}

fn index<'a>(names: impl Iterator<Item = &'a str>) -> HashMap<String, usize> {
    names.enumerate().map(|(i, n)| (n.to_string(), i)).collect()
}

/// What is waiting for the cook thread. Sets, not queues: a burst of
/// changes to one file is one entry, so the backlog is bounded by the
/// project's size whatever the rate of edits.
#[derive(Default)]
pub struct Pending {
    /// Changed paths (absolute) → when the last event for each arrived.
    pub paths: HashMap<PathBuf, Instant>,
    /// Assets to cook regardless of their files (`POST /cook`).
    pub assets: BTreeSet<String>,
    /// Cook every asset (`POST /cook` without names).
    pub all: bool,
    /// Compare every watched file's metadata (poll tick or rescan).
    pub scan: bool,
    /// Also re-expand the manifest's globs (rescan).
    pub resolve: bool,
    pub shutdown: bool,
}

/// The cook in flight, for `/status`.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Cooking {
    pub assets: Vec<String>,
    pub started_unix_ms: u64,
}

/// The last finished cook, for `/status`.
#[derive(Clone, Debug, serde::Serialize)]
pub struct LastCook {
    pub finished_unix_ms: u64,
    pub ms: f64,
    pub assets: usize,
    pub failed: usize,
    /// The generation it published, if the results changed anything.
    pub published: Option<u64>,
}

/// Everything shared between the cook thread, the watcher and HTTP.
pub struct Shared {
    pub current: RwLock<Option<Arc<Published>>>,
    /// Package hash → path relative to OUT, over the kept generations.
    pub packages: RwLock<HashMap<String, String>>,
    pub pending: Mutex<Pending>,
    pub wake: Condvar,
    pub cooking: Mutex<Option<Cooking>>,
    pub last_cook: Mutex<Option<LastCook>>,
    /// Asset names of the resolved project, in manifest order.
    pub names: RwLock<Vec<String>>,
    pub metrics: Metrics,
    /// JSON event lines for `/events`.
    pub events: broadcast::Sender<Arc<str>>,
    pub watch_mode: Mutex<String>,
    pub out: PathBuf,
}

impl Shared {
    pub fn new(out: PathBuf) -> Shared {
        Shared {
            current: RwLock::new(None),
            packages: RwLock::new(HashMap::new()),
            pending: Mutex::new(Pending::default()),
            wake: Condvar::new(),
            cooking: Mutex::new(None),
            last_cook: Mutex::new(None),
            names: RwLock::new(Vec::new()),
            metrics: Metrics::default(),
            events: broadcast::channel(1024).0,
            watch_mode: Mutex::new("events".into()),
            out,
        }
    }

    /// Change `pending` and wake the cook thread.
    pub fn submit(&self, f: impl FnOnce(&mut Pending)) {
        if let Ok(mut p) = self.pending.lock() {
            f(&mut p);
        }
        self.wake.notify_all();
    }

    /// The published generation.
    pub fn current(&self) -> Option<Arc<Published>> {
        self.current.read().ok().and_then(|c| c.clone())
    }

    /// Send one JSON event line to every `/events` stream.
    pub fn emit(&self, line: String) {
        // No receivers is not an error: nobody is listening.
        let _ = self.events.send(Arc::from(line));
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}
