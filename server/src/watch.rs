//! Watching: file-system events (notify's recommended watcher: inotify on
//! Linux) on the directories of every watched file, or polling. Events are
//! only hints: each names a path that becomes a pending change, which the
//! cook thread re-hashes once the path has been quiet long enough: the
//! short settle period when the writer is done with it (closed after
//! writing, or renamed into place), the debounce period otherwise (editors
//! save by rename or delete + create, and write in several steps; see
//! `schemas/server-api.md`, "Watching", for what this guarantees). Polling compares metadata of exactly the watched files, and is
//! also what the server falls back to, with a warning, when watches cannot
//! be registered (the inotify watch limit).
//!
//! notify-debouncer-full was the suggested debouncer; it is not used: its
//! timeout runs from each event, not from a path's last event, so a writer
//! that pauses mid-file would have its half-written file re-hashed, and its
//! rename stitching is not needed when changes are judged by content.

use crate::args::WatchMode;
use crate::state::{Shared, Writer};
use notify::event::{AccessKind, AccessMode, ModifyKind, RenameMode};
use notify::{Event, EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Poll interval after a fallback from events.
const FALLBACK_POLL: Duration = Duration::from_millis(1000);

pub enum Watch {
    Events {
        watcher: RecommendedWatcher,
        dirs: BTreeSet<PathBuf>,
        /// Test hook: refuse every registration, as a full inotify table.
        refuse: bool,
    },
    Poll {
        interval: Duration,
        stop: Arc<AtomicBool>,
    },
}

impl Watch {
    /// Start watching in `mode` (`refuse`: the fallback test hook).
    pub fn start(mode: WatchMode, shared: &Arc<Shared>, refuse: bool) -> Watch {
        match mode {
            WatchMode::Poll(interval) => poll(interval, shared, "poll"),
            WatchMode::Events => match events(shared) {
                Ok(watcher) => Watch::Events {
                    watcher,
                    dirs: BTreeSet::new(),
                    refuse,
                },
                Err(e) => fallback(shared, &e.to_string()),
            },
        }
    }

    /// The poll interval, when polling.
    pub fn poll_interval(&self) -> Option<Duration> {
        match self {
            Watch::Poll { interval, .. } => Some(*interval),
            Watch::Events { .. } => None,
        }
    }

    /// Watch exactly `wanted` (directories, non-recursively). A directory
    /// that cannot be watched switches the server to polling.
    pub fn update(&mut self, wanted: BTreeSet<PathBuf>, shared: &Arc<Shared>) {
        let Watch::Events {
            watcher,
            dirs,
            refuse,
        } = self
        else {
            return;
        };
        for d in dirs.difference(&wanted) {
            let _ = watcher.unwatch(d);
        }
        let mut failed = None;
        for d in wanted.difference(dirs) {
            let r = match *refuse {
                true => Err(notify::Error::generic("watch refused (test hook)")),
                false => watcher.watch(d, RecursiveMode::NonRecursive),
            };
            if let Err(e) = r {
                failed = Some(format!("{}: {e}", d.display()));
                break;
            }
        }
        match failed {
            Some(why) => *self = fallback(shared, &why),
            None => *dirs = wanted,
        }
    }

    pub fn stop(&self) {
        if let Watch::Poll { stop, .. } = self {
            stop.store(true, Ordering::Relaxed);
        }
    }
}

fn fallback(shared: &Arc<Shared>, why: &str) -> Watch {
    let message = format!(
        "cannot watch for file-system events ({why}); polling every {} ms instead (raise fs.inotify.max_user_watches, or pass --poll)",
        FALLBACK_POLL.as_millis()
    );
    eprintln!("ludus-anim-server: warning: {message}");
    shared.emit(serde_json::json!({"event": "notice", "message": message}).to_string());
    poll(FALLBACK_POLL, shared, "poll-fallback")
}

/// A thread that asks the cook thread for a metadata scan every `interval`.
fn poll(interval: Duration, shared: &Arc<Shared>, mode: &str) -> Watch {
    if let Ok(mut m) = shared.watch_mode.lock() {
        *m = mode.to_string();
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (s, st) = (Arc::clone(shared), Arc::clone(&stop));
    std::thread::spawn(move || ticker(interval, &s, &st, false));
    Watch::Poll { interval, stop }
}

/// Every `interval`, a scan (and, with `resolve`, a re-expansion of the
/// manifest's globs), until `stop`.
pub fn ticker(interval: Duration, shared: &Shared, stop: &AtomicBool, resolve: bool) {
    while !stop.load(Ordering::Relaxed) {
        std::thread::sleep(interval);
        let shutdown = shared.pending.lock().map(|p| p.shutdown).unwrap_or(true);
        if shutdown {
            return;
        }
        shared.submit(|p| {
            p.scan = true;
            p.resolve |= resolve;
        });
    }
}

fn events(shared: &Arc<Shared>) -> notify::Result<RecommendedWatcher> {
    if let Ok(mut m) = shared.watch_mode.lock() {
        *m = "events".into();
    }
    let s = Arc::clone(shared);
    notify::recommended_watcher(move |r: notify::Result<Event>| match r {
        Ok(e) => on_event(&s, e),
        // Lost events (queue overflow): heal with a scan.
        Err(_) => s.submit(|p| p.scan = true),
    })
}

fn on_event(shared: &Shared, e: Event) {
    if e.need_rescan() {
        shared.submit(|p| p.scan = true);
        return;
    }
    let Some(writer) = writer_of(e.kind) else {
        return;
    };
    if e.paths.is_empty() {
        return;
    }
    let now = Instant::now();
    shared.submit(|p| {
        for path in e.paths {
            p.hint(path, now, writer);
        }
    });
}

/// What an event says about the file's writer; `None`: nothing to act on
/// (reads, opens, and the paired rename event, whose halves come as their
/// own events).
fn writer_of(kind: EventKind) -> Option<Writer> {
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => Some(Writer::Done),
        EventKind::Access(_) => None,
        EventKind::Modify(ModifyKind::Name(RenameMode::To)) => Some(Writer::Done),
        EventKind::Modify(ModifyKind::Name(RenameMode::Both)) => None,
        EventKind::Modify(ModifyKind::Metadata(_)) => Some(Writer::Metadata),
        _ => Some(Writer::Writing),
    }
}
