//! What HTTP reads: the published generation (immutable, swapped whole),
//! the packages the kept generations name, the cook queue, counters and
//! the event stream. Handlers never see a generation being built.

use crate::generation::{GenerationFiles, StaleMap, Written};
use crate::health::Health;
use crate::metrics::Metrics;
use ludus_anim_cooker::report::{AssetReport, ManifestAsset};
use std::collections::{BTreeSet, HashMap, VecDeque};
use std::path::PathBuf;
use std::sync::{Arc, Condvar, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};
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
    /// What a client sees of it ([`GenerationFiles::fingerprint`]): a new
    /// generation is published only when this differs.
    pub fingerprint: [u8; 32],
    /// `manifest.json` as written (`GET /manifest`) and its ETag.
    pub manifest_json: Arc<Vec<u8>>,
    pub manifest_etag: String,
    /// The dashboard of this generation (index and detail fragments),
    /// rendered on first request.
    dashboard: std::sync::OnceLock<Arc<ludus_anim_dashboard::html::site::Site>>,
}

impl Published {
    /// The dashboard of this generation (the index and fragments
    /// `ludus-anim report` writes, without the sidecar's plots), rendered
    /// once.
    pub fn dashboard(&self) -> Arc<ludus_anim_dashboard::html::site::Site> {
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
                use ludus_anim_dashboard::html::site::{render_site, DETAILS_DIR};
                Arc::new(render_site(&d, &opts, DETAILS_DIR))
            })
            .clone()
    }

    /// Generation `files` as `written` (its index files' bytes, served as
    /// they are on disk) with its fingerprint.
    pub fn with_fingerprint(
        files: GenerationFiles,
        written: Written,
        at: SystemTime,
        fingerprint: [u8; 32],
    ) -> Published {
        let by_name = index(files.report.assets.iter().map(|a| a.source.as_str()));
        let served = index(files.manifest.assets.iter().map(|a| a.source.as_str()));
        let manifest_etag = format!("\"m-{}\"", &blake3::hash(&written.manifest).to_hex()[..32]);
        Published {
            manifest_json: Arc::new(written.manifest),
            manifest_etag,
            number: files.number,
            published_at: at,
            files,
            report_json: Arc::new(written.report),
            by_name,
            served,
            fingerprint,
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

/// What an event says about the writer of a path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    /// It may still be writing: bytes changed, the file was created,
    /// removed or renamed away (a delete or rename is usually followed by
    /// a new file), or a poll saw new metadata.
    Writing,
    /// It is done: the file was closed after writing, or a file was
    /// renamed onto the path (an atomic save).
    Done,
    /// Only metadata changed (a touch): says nothing new about a writer.
    Metadata,
}

/// A changed path waiting to be re-hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Hint {
    /// When its last event arrived.
    pub last: Instant,
    /// Whether the events since the last data change include the writer
    /// being done with it (see [`Writer::Done`]).
    pub done: bool,
    /// Time from the last event of the path's previous change (taken by
    /// the cook thread) to this change's first event, when remembered.
    pub since_previous: Option<Duration>,
}

/// How long a path must be quiet before it is re-hashed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Quiet {
    /// Writer done, path left alone for `debounce` before this change:
    /// one save, whose steps all come within a few milliseconds.
    pub first: Duration,
    /// Writer done, path changed again within `debounce` of its previous
    /// change: a burst of saves, coalesced.
    pub settle: Duration,
    /// Writer possibly still writing.
    pub debounce: Duration,
}

impl Hint {
    /// When the path is ready to re-hash: when its writer is done, the
    /// first-save settle after its last event, or the burst settle when
    /// it changed shortly before; the debounce otherwise.
    pub fn ready_at(&self, q: &Quiet) -> Instant {
        let burst = self.since_previous.is_some_and(|d| d < q.debounce);
        self.last
            + match (self.done, burst) {
                (false, _) => q.debounce,
                (true, true) => q.settle,
                (true, false) => q.first,
            }
    }
}

/// What is waiting for the cook thread. Sets, not queues: a burst of
/// changes to one file is one entry, so the backlog is bounded by the
/// project's size whatever the rate of edits.
#[derive(Default)]
pub struct Pending {
    /// Changed paths (absolute) → their last event.
    pub paths: HashMap<PathBuf, Hint>,
    /// Paths taken by the cook thread lately → the last event of the
    /// change taken (entries older than the debounce are dropped).
    pub taken: HashMap<PathBuf, Instant>,
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

/// One `/events` line and its position in the stream.
#[derive(Clone, Debug)]
pub struct Logged {
    pub seq: u64,
    pub line: Arc<str>,
}

/// How many recent events a reconnecting stream can resume from.
pub const EVENT_HISTORY: usize = 4096;

/// The recent events, for `Last-Event-ID` resume.
#[derive(Default)]
pub struct EventLog {
    pub next: u64,
    pub recent: VecDeque<Logged>,
}

impl Pending {
    /// Note an event for `path` at `at`.
    pub fn hint(&mut self, path: PathBuf, at: Instant, writer: Writer) {
        let previous = self.taken.get(&path).copied();
        let h = self.paths.entry(path).or_insert(Hint {
            last: at,
            done: writer != Writer::Writing,
            since_previous: previous.map(|p| at.saturating_duration_since(p)),
        });
        h.last = at;
        match writer {
            Writer::Writing => h.done = false,
            Writer::Done => h.done = true,
            Writer::Metadata => {}
        }
    }

    /// Remember that the change of `path` whose last event was at `last`
    /// was taken, forgetting those taken more than `window` before `now`.
    pub fn taken(&mut self, path: PathBuf, last: Instant, now: Instant, window: Duration) {
        self.taken
            .retain(|_, t| now.saturating_duration_since(*t) < window);
        self.taken.insert(path, last);
    }
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
    /// JSON event lines for `/events`, numbered.
    pub events: broadcast::Sender<Logged>,
    /// The recent events (sent under this lock, so numbers are in order).
    pub log: Mutex<EventLog>,
    /// This process's start (Unix ms): the first part of every event id,
    /// so an id from another run is never mistaken for one of this run.
    pub boot: u64,
    /// Project error and unapplied changes.
    pub health: RwLock<Health>,
    /// Bumped on every publication and health change (long-polls wait on it).
    pub changes: tokio::sync::watch::Sender<u64>,
    /// Held while generations are collected or pinned.
    pub pin_lock: Mutex<()>,
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
            log: Mutex::new(EventLog {
                next: 1,
                recent: VecDeque::new(),
            }),
            boot: unix_ms(SystemTime::now()),
            health: RwLock::new(Health::default()),
            changes: tokio::sync::watch::channel(0).0,
            pin_lock: Mutex::new(()),
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
        let Ok(mut log) = self.log.lock() else { return };
        let e = Logged {
            seq: log.next,
            line: Arc::from(line),
        };
        log.next += 1;
        if log.recent.len() == EVENT_HISTORY {
            log.recent.pop_front();
        }
        log.recent.push_back(e.clone());
        // No receivers is not an error: nobody is listening.
        let _ = self.events.send(e);
    }

    /// Wake long-polls: a generation was published or health changed.
    pub fn bump(&self) {
        self.changes.send_modify(|n| *n += 1);
    }

    pub fn health(&self) -> Health {
        self.health.read().map(|h| h.clone()).unwrap_or_default()
    }
}

/// Milliseconds since the Unix epoch.
pub fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pending_after(events: &[Writer]) -> Hint {
        let mut p = Pending::default();
        let at = Instant::now();
        for w in events {
            p.hint(PathBuf::from("/p/a.bvh"), at, *w);
        }
        p.paths[&PathBuf::from("/p/a.bvh")]
    }

    #[test]
    fn a_writer_is_done_only_after_its_last_data_change_was_closed() {
        use Writer::*;
        assert!(!pending_after(&[Writing]).done);
        assert!(pending_after(&[Writing, Done]).done);
        assert!(!pending_after(&[Writing, Done, Writing]).done, "reopened");
        assert!(pending_after(&[Writing, Done, Metadata]).done);
        assert!(!pending_after(&[Writing, Metadata]).done);
        assert!(pending_after(&[Metadata]).done, "a touch");
    }

    #[test]
    fn done_paths_wait_for_a_settle_period_others_for_the_debounce() {
        let at = Instant::now();
        let q = Quiet {
            first: Duration::from_millis(5),
            settle: Duration::from_millis(40),
            debounce: Duration::from_millis(250),
        };
        let h = |done, since_previous| Hint {
            last: at,
            done,
            since_previous,
        };
        assert_eq!(h(true, None).ready_at(&q), at + q.first, "one save");
        let long_ago = Some(Duration::from_secs(2));
        assert_eq!(h(true, long_ago).ready_at(&q), at + q.first);
        let burst = Some(Duration::from_millis(30));
        assert_eq!(h(true, burst).ready_at(&q), at + q.settle, "a burst");
        assert_eq!(h(false, None).ready_at(&q), at + q.debounce);
        assert_eq!(h(false, burst).ready_at(&q), at + q.debounce);
    }

    #[test]
    fn a_path_saved_again_soon_after_it_was_taken_is_a_burst() {
        let mut p = Pending::default();
        let t0 = Instant::now();
        let window = Duration::from_millis(250);
        let path = PathBuf::from("/p/a.bvh");
        p.hint(path.clone(), t0, Writer::Done);
        assert_eq!(p.paths[&path].since_previous, None);
        p.paths.remove(&path);
        p.taken(path.clone(), t0, t0 + Duration::from_millis(5), window);
        let t1 = t0 + Duration::from_millis(30);
        p.hint(path.clone(), t1, Writer::Done);
        assert_eq!(
            p.paths[&path].since_previous,
            Some(Duration::from_millis(30))
        );
        // Taking another path a second later forgets this one.
        let other = PathBuf::from("/p/b.bvh");
        p.taken(other, t1, t1 + Duration::from_secs(1), window);
        assert!(!p.taken.contains_key(&path));
    }
}
