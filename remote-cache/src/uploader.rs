//! Write-behind uploads: a bounded queue drained by a few background
//! threads, so a cook never waits for the network to store what it
//! computed, and never holds unbounded memory for a slow server.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use ludus_anim_cache::Key;

/// One queued upload: a framed entry and the tag it is counted under.
pub(crate) struct Job {
    pub key: Key,
    pub entry: Vec<u8>,
    pub tag: &'static str,
    /// A refill: sent only if the server lacks the key (HEAD first).
    pub refill: bool,
}

/// What the worker threads hand jobs to.
pub(crate) trait Sink: Send + Sync + 'static {
    /// Send the job to the server.
    fn upload(&self, job: Job);
    /// Count the job as not sent (the queue is closing).
    fn skip(&self, job: Job);
}

/// State shared by the queue's owner and its workers.
struct Shared {
    /// Jobs queued or in flight; [`Uploader::flush`] waits for zero.
    pending: Mutex<usize>,
    idle: Condvar,
    queued_bytes: AtomicU64,
    closing: AtomicBool,
}

/// The queue and its worker threads.
pub(crate) struct Uploader {
    tx: Option<SyncSender<Job>>,
    shared: Arc<Shared>,
    max_bytes: u64,
}

impl Uploader {
    /// Starts `threads` workers (at least one) over a queue of `entries`
    /// jobs and `max_bytes` bytes. `None` if no thread could be started.
    pub fn start(
        sink: Arc<dyn Sink>,
        threads: usize,
        entries: usize,
        max_bytes: u64,
    ) -> Option<Uploader> {
        let (tx, rx) = mpsc::sync_channel(entries.max(1));
        let rx = Arc::new(Mutex::new(rx));
        let shared = Arc::new(Shared {
            pending: Mutex::new(0),
            idle: Condvar::new(),
            queued_bytes: AtomicU64::new(0),
            closing: AtomicBool::new(false),
        });
        let mut started = 0;
        for i in 0..threads.max(1) {
            let (rx, shared, sink) = (rx.clone(), shared.clone(), sink.clone());
            let spawned = thread::Builder::new()
                .name(format!("remote-cache-upload-{i}"))
                .spawn(move || work(&rx, &shared, &*sink));
            started += usize::from(spawned.is_ok());
        }
        (started > 0).then_some(Uploader {
            tx: Some(tx),
            shared,
            max_bytes,
        })
    }

    /// Queues `job`, or hands it back if the queue is full (in entries or
    /// bytes) or closed: the caller counts it as dropped. Never blocks.
    pub fn enqueue(&self, job: Job) -> Result<(), Job> {
        let Some(tx) = &self.tx else {
            return Err(job);
        };
        let len = job.entry.len() as u64;
        let before = self.shared.queued_bytes.fetch_add(len, Ordering::AcqRel);
        if before.saturating_add(len) > self.max_bytes {
            self.shared.queued_bytes.fetch_sub(len, Ordering::AcqRel);
            return Err(job);
        }
        self.add_pending(1);
        match tx.try_send(job) {
            Ok(()) => Ok(()),
            Err(TrySendError::Full(job) | TrySendError::Disconnected(job)) => {
                self.shared.queued_bytes.fetch_sub(len, Ordering::AcqRel);
                finish_one(&self.shared);
                Err(job)
            }
        }
    }

    fn add_pending(&self, n: usize) {
        if let Ok(mut p) = self.shared.pending.lock() {
            *p += n;
        }
    }

    /// Waits until every queued upload is done, at most `timeout`, and no
    /// longer once `give_up` says so (polled every few milliseconds).
    /// Returns how many are still queued or in flight.
    pub fn flush(&self, timeout: Duration, give_up: &dyn Fn() -> bool) -> usize {
        let deadline = Instant::now() + timeout;
        let Ok(mut pending) = self.shared.pending.lock() else {
            return 0;
        };
        while *pending > 0 {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() || give_up() {
                break;
            }
            let tick = left.min(Duration::from_millis(20));
            pending = match self.shared.idle.wait_timeout(pending, tick) {
                Ok((p, _)) => p,
                Err(_) => return 0,
            };
        }
        *pending
    }

    /// Stops: jobs still queued are skipped, workers exit once the upload
    /// in flight (bounded by the timeouts) ends. Does not wait for them.
    pub fn close(&mut self) {
        self.shared.closing.store(true, Ordering::Release);
        self.tx = None;
    }
}

impl Drop for Uploader {
    fn drop(&mut self) {
        self.close();
    }
}

/// A worker: takes jobs until the queue is closed and empty.
fn work(rx: &Mutex<Receiver<Job>>, shared: &Shared, sink: &dyn Sink) {
    loop {
        // Holding the lock while blocked in recv is the point: exactly one
        // idle worker waits on the channel, the others on the lock.
        let job = match rx.lock() {
            Ok(rx) => match rx.recv() {
                Ok(job) => job,
                Err(_) => return,
            },
            Err(_) => return,
        };
        shared
            .queued_bytes
            .fetch_sub(job.entry.len() as u64, Ordering::AcqRel);
        if shared.closing.load(Ordering::Acquire) {
            sink.skip(job);
        } else {
            sink.upload(job);
        }
        finish_one(shared);
    }
}

fn finish_one(shared: &Shared) {
    if let Ok(mut p) = shared.pending.lock() {
        *p = p.saturating_sub(1);
        if *p == 0 {
            shared.idle.notify_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    /// Uploads block until released, so the queue can be filled.
    struct Gate {
        open: Mutex<bool>,
        cv: Condvar,
        uploaded: AtomicUsize,
        skipped: AtomicUsize,
    }

    impl Sink for Gate {
        fn upload(&self, _job: Job) {
            let mut open = self.open.lock().expect("lock");
            while !*open {
                open = self.cv.wait(open).expect("wait");
            }
            self.uploaded.fetch_add(1, Ordering::SeqCst);
        }
        fn skip(&self, _job: Job) {
            self.skipped.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn job(len: usize) -> Job {
        Job {
            key: Key([1; 32]),
            entry: vec![0; len],
            tag: "t",
            refill: false,
        }
    }

    #[test]
    fn full_queue_drops_instead_of_blocking_and_flush_is_bounded() {
        let gate = Arc::new(Gate {
            open: Mutex::new(false),
            cv: Condvar::new(),
            uploaded: AtomicUsize::new(0),
            skipped: AtomicUsize::new(0),
        });
        let up = Uploader::start(gate.clone(), 1, 4, 1 << 20).expect("start");
        let mut queued = 0;
        let mut dropped = 0;
        for _ in 0..20 {
            match up.enqueue(job(10)) {
                Ok(()) => queued += 1,
                Err(_) => dropped += 1,
            }
        }
        // One in flight (blocked) plus four queued, at most.
        assert!((4..=5).contains(&queued), "queued {queued}");
        assert_eq!(queued + dropped, 20);
        let start = Instant::now();
        assert_eq!(up.flush(Duration::from_millis(100), &|| false), queued);
        assert!(start.elapsed() < Duration::from_secs(2));
        *gate.open.lock().expect("lock") = true;
        gate.cv.notify_all();
        assert_eq!(up.flush(Duration::from_secs(5), &|| false), 0);
        assert_eq!(gate.uploaded.load(Ordering::SeqCst), queued);
    }

    #[test]
    fn byte_bound_drops_large_entries() {
        let gate = Arc::new(Gate {
            open: Mutex::new(true),
            cv: Condvar::new(),
            uploaded: AtomicUsize::new(0),
            skipped: AtomicUsize::new(0),
        });
        let up = Uploader::start(gate.clone(), 2, 100, 1000).expect("start");
        assert!(up.enqueue(job(2000)).is_err(), "larger than the byte bound");
        assert!(up.enqueue(job(500)).is_ok());
        assert_eq!(up.flush(Duration::from_secs(5), &|| false), 0);
        assert_eq!(gate.uploaded.load(Ordering::SeqCst), 1);
    }
}
