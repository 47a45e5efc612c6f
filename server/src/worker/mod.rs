//! The cook thread: one plain thread that takes what changed, works out
//! which assets it reaches, cooks exactly those (through the cooker's
//! rayon pool) and publishes a generation when the results changed
//! anything. Changes that arrive during a cook wait in [`Pending`] (sets,
//! so the backlog is bounded) and are cooked right after: coalescing
//! without an unbounded queue.

mod changes;
mod health;
mod publish;
mod snapshot;

pub use snapshot::AssetState;

use crate::args::Settings;
use crate::deps::Deps;
use crate::generation::Generations;
use crate::reader::{Meta, Stamp};
use crate::state::{Pending, Quiet, Shared};
use crate::watch::Watch;
use ludus_anim_cooker::manifest::AssetJob;
use ludus_anim_cooker::project::{Project, ProjectArgs};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The diagnostic code of an asset whose source file vanished.
pub const SOURCE_MISSING: &str = "source_missing";

/// How the project was resolved, to resolve it again on manifest changes.
pub struct Resolver {
    pub args: ProjectArgs,
    pub cwd: PathBuf,
    pub fixtures: PathBuf,
}

pub struct Worker {
    shared: Arc<Shared>,
    settings: Settings,
    resolver: Resolver,
    project: Project,
    /// Asset name → job, and the names in project order.
    jobs: BTreeMap<String, AssetJob>,
    order: Vec<String>,
    assets: BTreeMap<String, AssetState>,
    deps: Deps,
    /// The manifest and the stamp of its last version that resolved.
    manifest: Option<(PathBuf, Option<Stamp>)>,
    /// The last generation that could not be written, until one is.
    unpublished: Option<health::Unpublished>,
    /// Metadata seen by the previous scan, per watched file.
    seen: HashMap<PathBuf, Option<Meta>>,
    gens: Generations,
    format_version: u32,
    /// The last cook's report without assets: build, profile, stage
    /// counters and notices for the next generation's report.
    template: Option<ludus_anim_cooker::report::Report>,
    /// The served generation has no sidecar yet (see
    /// [`Worker::finish_outputs`]).
    sidecar_missing: bool,
    watch: Watch,
}

/// Where a batch's time went, from its earliest path's last event to the
/// generation it published (`generation_published`'s `latency_ms`).
#[derive(Clone, Copy, Debug)]
pub(super) struct Stopwatch {
    /// The last event of the batch's earliest path (none: not a change).
    first_event: Option<Instant>,
    /// When the cook thread took the batch.
    taken: Instant,
    /// When the cook started and ended (after what it reaches was found).
    cook: Option<(Instant, Instant)>,
}

/// One batch of work taken from [`Pending`].
#[derive(Default)]
struct Work {
    paths: Vec<PathBuf>,
    first_event: Option<Instant>,
    assets: BTreeSet<String>,
    all: bool,
    scan: bool,
    resolve: bool,
    shutdown: bool,
}

impl Worker {
    pub fn new(
        shared: Arc<Shared>,
        settings: Settings,
        resolver: Resolver,
        project: Project,
        gens: Generations,
        watch: Watch,
    ) -> Worker {
        let manifest = project
            .manifest_path
            .as_ref()
            .map(|p| (crate::reader::absolute(p), None));
        let mut w = Worker {
            shared,
            settings,
            resolver,
            project,
            jobs: BTreeMap::new(),
            order: Vec::new(),
            assets: BTreeMap::new(),
            deps: Deps::default(),
            manifest,
            unpublished: None,
            seen: HashMap::new(),
            gens,
            format_version: 0,
            template: None,
            sidecar_missing: false,
            watch,
        };
        w.set_jobs();
        w.restore();
        w.stamp_manifest();
        // Queued before HTTP answers: `/status` never shows a starting
        // server as idle.
        w.shared.submit(|p| p.all = true);
        w
    }

    /// Run until shut down.
    pub fn run(mut self) {
        loop {
            let work = self.next_work();
            if work.shutdown {
                break;
            }
            self.handle(work);
        }
        self.watch.stop();
    }

    fn handle(&mut self, work: Work) {
        let mut clock = Stopwatch {
            first_event: work.first_event,
            taken: Instant::now(),
            cook: None,
        };
        if work.scan {
            self.scan();
            if self.unpublished.is_some() {
                self.publish_if_changed(None);
            }
        }
        let mut dirty = BTreeSet::new();
        let manifest_changed = self.manifest_changed(&work.paths);
        if work.resolve || manifest_changed {
            self.reresolve(&mut dirty, manifest_changed);
        }
        self.dirty_from_paths(&work.paths, &mut dirty);
        if work.all {
            dirty.extend(self.order.iter().cloned());
        }
        dirty.extend(
            work.assets
                .into_iter()
                .filter(|a| self.jobs.contains_key(a)),
        );
        if !dirty.is_empty() {
            self.cook(&dirty, &mut clock);
            self.update_watches();
        }
        self.set_cooking(None);
    }

    /// Wait for work: paths quiet for a settle period after their writer
    /// finished, or for the debounce period otherwise; named assets, a
    /// scan, or shutdown.
    fn next_work(&self) -> Work {
        let quiet = Quiet {
            first: self.settings.first_settle,
            settle: self.settings.settle,
            debounce: self.quiet_period(),
        };
        let Ok(mut p) = self.shared.pending.lock() else {
            return Work {
                shutdown: true,
                ..Work::default()
            };
        };
        loop {
            if p.shutdown {
                return Work {
                    shutdown: true,
                    ..Work::default()
                };
            }
            let now = Instant::now();
            let work = take_ready(&mut p, now, &quiet);
            if work.all
                || work.scan
                || work.resolve
                || !work.paths.is_empty()
                || !work.assets.is_empty()
            {
                // Busy from the moment the work leaves the queue (still
                // under its lock): `/status` never shows an idle server
                // between taking work and starting its cook.
                self.set_cooking(Some(&[]));
                return work;
            }
            let wait = p
                .paths
                .values()
                .map(|h| h.ready_at(&quiet).saturating_duration_since(now))
                .min()
                .unwrap_or(Duration::from_secs(3600))
                .max(Duration::from_millis(1));
            p = match self.shared.wake.wait_timeout(p, wait) {
                Ok((g, _)) => g,
                Err(_) => {
                    return Work {
                        shutdown: true,
                        ..Work::default()
                    }
                }
            };
        }
    }

    /// How long a file must be quiet before it is re-hashed. When polling,
    /// a change is seen one interval late, so the period covers one more
    /// poll (a writer still writing is seen again before the re-hash).
    fn quiet_period(&self) -> Duration {
        match self.watch.poll_interval() {
            Some(i) => self.settings.debounce + i,
            None => self.settings.debounce,
        }
    }
}

fn take_ready(p: &mut Pending, now: Instant, quiet: &Quiet) -> Work {
    let ready: Vec<(PathBuf, Instant)> = p
        .paths
        .iter()
        .filter(|(_, h)| h.ready_at(quiet) <= now)
        .map(|(k, h)| (k.clone(), h.last))
        .collect();
    for (k, last) in &ready {
        p.paths.remove(k);
        p.taken(k.clone(), *last, now, quiet.debounce);
    }
    Work {
        first_event: ready.iter().map(|(_, t)| *t).min(),
        paths: ready.into_iter().map(|(k, _)| k).collect(),
        assets: std::mem::take(&mut p.assets),
        all: std::mem::take(&mut p.all),
        scan: std::mem::take(&mut p.scan),
        resolve: std::mem::take(&mut p.resolve),
        shutdown: false,
    }
}
