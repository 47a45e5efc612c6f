//! [`RemoteCache`]: the HTTP client with the failure policy, write-behind
//! uploads, counters and notices around it.
//!
//! Adapted ideas: the circuit breaker of Michael Nygard's *Release It!*,
//! kept one-way (open for the rest of the process, no half-open probing)
//! because a cook is short and a flapping server would cost a timeout per
//! probe; the object layout and status codes of Bazel's HTTP remote cache.

use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ludus_anim_cache::{check_entry_allowing, encode_entry, Backend, CacheError, Key, FLAG_SIGNED};

use crate::auth::Auth;
use crate::config::{Mode, RemoteConfig};
use crate::error::RemoteError;
use crate::http::HttpClient;
use crate::lookups::{Answer, Got, Lookups, Source};
use crate::notices::Notices;
use crate::signing::{strip_signature, SigningKey};
use crate::stats::{RemoteStats, StatsTable};
use crate::uploader::{Job, Sink, Uploader};
use crate::url::BaseUrl;

/// What became of an upload request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Upload {
    /// Queued; a background thread sends it.
    Queued,
    /// The queue was full: not shared (counted in `dropped_uploads`).
    Dropped,
    /// The remote, or uploading to it, is disabled (counted in
    /// `skipped_uploads`).
    Disabled,
    /// [`Mode::Read`]: nothing is ever uploaded (not counted).
    ReadOnly,
}

/// What [`RemoteCache::flush`] achieved.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FlushReport {
    /// Uploads still queued or in flight when the time ran out; they are
    /// abandoned when the cache is dropped.
    pub pending: usize,
    /// How long the flush waited.
    pub waited: Duration,
}

/// A shared remote cache speaking the Bazel HTTP protocol.
///
/// # Failure policy
/// - Nothing here fails a cook. A failed or refused download is a miss; a
///   failed upload is an entry not shared. Each problem is counted per tag
///   and described in a notice ([`RemoteCache::take_notices`]).
/// - **Circuit breaker:** the first connection failure or timeout disables
///   the remote for the rest of the process, with one notice. A dead server
///   therefore costs one connect timeout per cook (per thread that was
///   already waiting on it), not one per entry. A server that refuses the
///   credentials on a download is disabled the same way; one that refuses
///   uploads (401/403/405) only loses uploads.
/// - **Latency budget:** lookups run on background threads, several at
///   once ([`RemoteCache::prefetch`] starts them as soon as a key is
///   known); [`RemoteCache::fetch`] waits for an answer at most
///   [`RemoteConfig::lookup_wait`](crate::RemoteConfig) while the server
///   answers nothing, then the remote is off for the rest of the run (one
///   notice with the measured latency) and the caller cooks locally. With
///   a [`WaitBudget`](crate::WaitBudget), waits before the server's first
///   answer also stop when the run's budget is spent (a miss, not held
///   against the server), and the flush turns a server still silent off
///   with the same notice. The end-of-run flush
///   ([`RemoteCache::flush_budgeted`]) waits for uploads at most half as
///   long as the run took so far.
/// - **Integrity:** every download goes through
///   [`check_entry`](ludus_anim_cache::check_entry), the local store's own
///   entry check; a corrupt, truncated or misplaced object is a miss with a
///   notice, never a value.
///
/// Dropping the cache abandons uploads still queued; call
/// [`RemoteCache::flush`] first.
pub struct RemoteCache {
    inner: Arc<Inner>,
    uploader: Option<Uploader>,
    /// `None` if no lookup thread could start: lookups run on the
    /// caller's thread then.
    lookups: Option<Lookups>,
    opened: Instant,
}

/// Answers that came too late to use before the remote is turned off
/// (a server that answers, but slower than cooking).
const LATE_LIMIT: u64 = 8;
/// The shortest budgeted flush (see [`RemoteCache::flush_budgeted`]).
const MIN_FLUSH_WAIT: Duration = Duration::from_millis(100);

/// What the caller's threads and the upload threads share.
struct Inner {
    http: HttpClient,
    url: BaseUrl,
    mode: Mode,
    /// Signs uploads and admits only downloads it signed.
    signing: Option<SigningKey>,
    /// The circuit breaker: set once, never cleared.
    disabled: AtomicBool,
    /// Uploads refused by the server; downloads go on.
    uploads_disabled: AtomicBool,
    stats: StatsTable,
    notices: Notices,
    /// Dropped uploads already mentioned in a notice.
    dropped_noticed: AtomicU64,
    /// Answers that came after their wait gave up.
    late: AtomicU64,
}

impl RemoteCache {
    /// Loads the credentials and, in read-write mode, starts the upload
    /// threads. Makes no request: an unreachable server shows on first
    /// use, as a miss.
    pub fn open(config: RemoteConfig) -> Result<RemoteCache, RemoteError> {
        let auth = config.auth.clone().map(Auth::load).transpose()?;
        let signing = config.signing.as_ref().map(SigningKey::load).transpose()?;
        let inner = Arc::new(Inner {
            http: HttpClient::new(&config, auth),
            url: config.url.clone(),
            mode: config.mode,
            signing,
            disabled: AtomicBool::new(false),
            uploads_disabled: AtomicBool::new(false),
            stats: StatsTable::default(),
            notices: Notices::new(config.max_notices),
            dropped_noticed: AtomicU64::new(0),
            late: AtomicU64::new(0),
        });
        let source: Arc<dyn Source> = inner.clone();
        let lookups = Lookups::start(
            source,
            config.lookup_threads,
            config.lookup_wait,
            config.lookup_timeout.max(config.lookup_wait),
            config.wait_budget,
        );
        let uploader = if config.mode.writes() {
            let sink: Arc<dyn Sink> = inner.clone();
            let uploader = Uploader::start(
                sink,
                config.upload_threads,
                config.queue_entries,
                config.queue_bytes,
            );
            if uploader.is_none() {
                inner.notices.push(format!(
                    "remote cache {}: no upload thread could be started; uploads are off",
                    inner.url
                ));
            }
            uploader
        } else {
            None
        };
        Ok(RemoteCache {
            inner,
            uploader,
            lookups,
            opened: Instant::now(),
        })
    }

    pub fn url(&self) -> &BaseUrl {
        &self.inner.url
    }

    pub fn mode(&self) -> Mode {
        self.inner.mode
    }

    /// Whether the circuit breaker has disabled the remote.
    pub fn is_disabled(&self) -> bool {
        self.inner.disabled.load(Ordering::Acquire)
    }

    /// Starts downloading `key`'s entry in the background, so a later
    /// [`RemoteCache::fetch`] finds the answer there. Never blocks.
    pub fn prefetch(&self, key: &Key) {
        if let Some(l) = self.lookups.as_ref().filter(|_| !self.is_disabled()) {
            l.request(key);
        }
    }

    /// Downloads and checks `key`'s entry; returns its payload. Waits for
    /// the answer within the latency budget (see the failure policy).
    ///
    /// `Ok(None)` is a miss, also when the remote is disabled. `Err` is a
    /// miss too, already counted and noticed; it says why.
    pub fn fetch(&self, key: &Key, tag: &'static str) -> Result<Option<Vec<u8>>, RemoteError> {
        let inner = &*self.inner;
        if self.is_disabled() {
            inner.stats.update(tag, |s| s.skipped += 1);
            return Ok(None);
        }
        let got = match &self.lookups {
            None => inner.http.get(key),
            Some(l) => match l.wait(key, &|| self.is_disabled()) {
                Answer::Got(got) => got,
                Answer::Off => {
                    inner.stats.update(tag, |s| s.skipped += 1);
                    return Ok(None);
                }
                Answer::Late {
                    silent,
                    early,
                    in_flight,
                } => {
                    inner.stats.update(tag, |s| s.errors += 1);
                    return Err(self.late(l, silent, early, in_flight));
                }
            },
        };
        match got {
            Ok(None) => {
                inner.stats.update(tag, |s| s.misses += 1);
                Ok(None)
            }
            Ok(Some(entry)) => inner.verify(key, entry, tag).map(Some),
            Err(e @ RemoteError::TooLarge { .. }) => {
                inner.stats.update(tag, |s| s.corrupt += 1);
                inner.notices.push(e.to_string());
                Err(e)
            }
            Err(e) => {
                inner.stats.update(tag, |s| s.errors += 1);
                inner.failed("download", &e);
                Err(e)
            }
        }
    }

    /// A lookup given up on: the remote goes off when the server is silent
    /// or has been late too often, with one notice giving the latency. An
    /// `early` give-up (the wait budget spent before any answer came) is
    /// not held against the server: the silence rule judges it.
    fn late(
        &self,
        lookups: &Lookups,
        silent: bool,
        early: bool,
        in_flight: Duration,
    ) -> RemoteError {
        let inner = &*self.inner;
        let late = match early {
            true => inner.late.load(Ordering::Acquire),
            false => inner.late.fetch_add(1, Ordering::AcqRel) + 1,
        };
        let e = RemoteError::Timeout {
            url: inner.url.to_string(),
            phase: format!(
                "no answer to a lookup within {:.2} s",
                in_flight.as_secs_f64()
            ),
        };
        if (silent || late >= LATE_LIMIT) && !inner.disabled.swap(true, Ordering::AcqRel) {
            let answered = match lookups.latency() {
                (0, _, _) => "no lookup answered yet".to_string(),
                (n, median, max) => format!(
                    "{n} answered, median {:.0} ms, slowest {:.0} ms",
                    median.as_secs_f64() * 1000.0,
                    max.as_secs_f64() * 1000.0
                ),
            };
            let why = match silent {
                true => format!(
                    "a lookup had no answer after {:.2} s and none came meanwhile",
                    in_flight.as_secs_f64()
                ),
                false => format!("{late} lookups were answered too late to use"),
            };
            inner.notices.push(format!(
                "remote cache {} timed out: {why} ({answered}); slower than cooking, so the \
                 remote cache is disabled for the rest of this run (cooking goes on with the \
                 local cache)",
                inner.url,
            ));
        }
        e
    }

    /// Whether the server holds an object under `key` (HEAD); not counted.
    /// Errors feed the circuit breaker like any other request.
    pub fn contains(&self, key: &Key) -> Result<bool, RemoteError> {
        if self.is_disabled() {
            return Ok(false);
        }
        self.inner
            .http
            .head(key)
            .inspect_err(|e| self.inner.failed("lookup", e))
    }

    /// Queues `payload` for upload under `key` (framed as a cache entry).
    /// Never blocks and never fails: see [`Upload`].
    pub fn upload(&self, key: &Key, payload: &[u8], tag: &'static str) -> Upload {
        self.enqueue(key, payload, tag, false)
    }

    /// Queues `payload` for upload under `key` only if the server lacks it
    /// (a HEAD first, on the upload thread): what a read-write cook does
    /// with its local hits, so a wiped or evicted server fills up again.
    pub fn refill(&self, key: &Key, payload: &[u8], tag: &'static str) -> Upload {
        self.enqueue(key, payload, tag, true)
    }

    fn enqueue(&self, key: &Key, payload: &[u8], tag: &'static str, refill: bool) -> Upload {
        if !self.inner.mode.writes() {
            return Upload::ReadOnly;
        }
        let Some(uploader) = self
            .uploader
            .as_ref()
            .filter(|_| self.inner.uploads_allowed())
        else {
            self.inner.stats.update(tag, |s| s.skipped_uploads += 1);
            return Upload::Disabled;
        };
        let job = Job {
            key: *key,
            entry: self.inner.frame(key, payload),
            tag,
            refill,
        };
        match uploader.enqueue(job) {
            Ok(()) => Upload::Queued,
            Err(_) => {
                self.inner.stats.update(tag, |s| s.dropped_uploads += 1);
                Upload::Dropped
            }
        }
    }

    /// Uploads `payload` now, on this thread (tests, benchmarks, tools);
    /// counted and noticed like a queued upload. Works in read mode too:
    /// the mode guards what a cook publishes, not what a tool may do.
    pub fn upload_now(
        &self,
        key: &Key,
        payload: &[u8],
        tag: &'static str,
    ) -> Result<(), RemoteError> {
        self.inner
            .put_entry(key, &self.inner.frame(key, payload), tag)
    }

    /// Waits until queued uploads are sent, at most `timeout` (and not at
    /// all once the remote is disabled); call before the process exits.
    /// Returns at once in read mode.
    pub fn flush(&self, timeout: Duration) -> FlushReport {
        let start = Instant::now();
        self.judge();
        let off = || self.is_disabled();
        let pending = self.uploader.as_ref().map_or(0, |u| u.flush(timeout, &off));
        if pending > 0 {
            self.inner.notices.push(format!(
                "remote cache {}: {pending} uploads still pending after {:.2} s; not shared \
                 (`ludus-anim cache push` uploads them from the local cache)",
                self.inner.url,
                start.elapsed().as_secs_f64()
            ));
        }
        self.notice_dropped();
        FlushReport {
            pending,
            waited: start.elapsed(),
        }
    }

    /// A server that has answered nothing while a lookup was in flight
    /// for the limit goes off now, with the usual notice, even if the run
    /// never waited that long (a wait budget shorter than the limit): its
    /// queued uploads are then skipped, not left pending.
    fn judge(&self) {
        let Some(l) = &self.lookups else { return };
        if let Some(Answer::Late { in_flight, .. }) = l.judge() {
            self.late(l, true, false, in_flight);
        }
    }

    /// One notice for uploads dropped (queue full) since the last one: they
    /// are silent when they happen, so as never to slow the cook.
    fn notice_dropped(&self) {
        let dropped = self.stats().total().dropped_uploads;
        let before = self.inner.dropped_noticed.swap(dropped, Ordering::AcqRel);
        if dropped > before {
            self.inner.notices.push(format!(
                "remote cache {}: {} uploads dropped because the upload queue was full \
                 (the server is slower than the cook); they were cached locally only",
                self.inner.url,
                dropped - before
            ));
        }
    }

    /// [`RemoteCache::flush`] within the run's budget: at most half as
    /// long as the run has taken since the cache was opened (at least
    /// 0.1 s), and at most `timeout`, so uploads to a slow server cannot
    /// make a run more than half again as long.
    pub fn flush_budgeted(&self, timeout: Duration) -> FlushReport {
        let budget = (self.opened.elapsed() / 2).max(MIN_FLUSH_WAIT);
        self.flush(timeout.min(budget))
    }

    /// Counters so far, per tag.
    pub fn stats(&self) -> RemoteStats {
        self.inner.stats.snapshot(self.is_disabled())
    }

    /// Notices so far (corrupt downloads, server errors, the breaker
    /// tripping, unsent uploads); each is returned once.
    pub fn take_notices(&self) -> Vec<String> {
        self.inner.notices.take()
    }
}

impl Inner {
    /// `payload` framed for upload: signed when a signing secret is set.
    fn frame(&self, key: &Key, payload: &[u8]) -> Vec<u8> {
        match &self.signing {
            Some(s) => s.frame(key, payload),
            None => encode_entry(key, payload),
        }
    }

    /// The payload of a checked entry body, if this cache trusts it: with
    /// a signing secret, only entries it signed; without, any (a signed
    /// one loses its signature unverified).
    fn admit<'a>(&self, key: &Key, signed: bool, body: &'a [u8]) -> Result<&'a [u8], &'static str> {
        match (&self.signing, signed) {
            (Some(s), true) => s
                .open(key, body)
                .ok_or("signed with another secret than this cook's"),
            (Some(_), false) => Err("not signed (this cook accepts only signed entries)"),
            (None, true) => strip_signature(body).ok_or("signed but shorter than a signature"),
            (None, false) => Ok(body),
        }
    }

    /// Checks a downloaded entry; a corrupt or untrusted one is a counted,
    /// noticed miss.
    fn verify(&self, key: &Key, entry: Vec<u8>, tag: &'static str) -> Result<Vec<u8>, RemoteError> {
        match check_entry_allowing(key, &entry, FLAG_SIGNED) {
            Ok((flags, body)) => match self.admit(key, flags & FLAG_SIGNED != 0, body) {
                Ok(payload) => {
                    let bytes = entry.len() as u64;
                    self.stats.update(tag, |s| {
                        s.hits += 1;
                        s.bytes_down += bytes;
                    });
                    Ok(payload.to_vec())
                }
                Err(why) => {
                    self.stats.update(tag, |s| s.corrupt += 1);
                    let e = RemoteError::Untrusted {
                        key: *key,
                        url: self.url.entry_url(key),
                        why,
                    };
                    self.notices.push(e.to_string());
                    Err(e)
                }
            },
            Err(reason) => {
                self.stats.update(tag, |s| s.corrupt += 1);
                let e = RemoteError::Corrupt {
                    key: *key,
                    url: self.url.entry_url(key),
                    reason,
                };
                self.notices.push(e.to_string());
                Err(e)
            }
        }
    }

    fn uploads_allowed(&self) -> bool {
        !self.disabled.load(Ordering::Acquire) && !self.uploads_disabled.load(Ordering::Acquire)
    }

    /// Sends one framed entry and counts the outcome.
    fn put_entry(&self, key: &Key, entry: &[u8], tag: &'static str) -> Result<(), RemoteError> {
        match self.http.put(key, entry) {
            Ok(()) => {
                let bytes = entry.len() as u64;
                self.stats.update(tag, |s| {
                    s.uploads += 1;
                    s.bytes_up += bytes;
                });
                Ok(())
            }
            Err(e) => {
                self.stats.update(tag, |s| s.upload_errors += 1);
                self.failed("upload", &e);
                Err(e)
            }
        }
    }

    /// Applies the failure policy to a failed request: trip the breaker
    /// (once, with one notice), stop uploads, or notice a one-off failure.
    fn failed(&self, what: &str, e: &RemoteError) {
        let refused_credentials = matches!(
            e,
            RemoteError::Status {
                status: 401 | 403,
                ..
            }
        );
        if e.disables_remote() || (refused_credentials && what != "upload") {
            if !self.disabled.swap(true, Ordering::AcqRel) {
                self.notices.push(format!(
                    "{e}; remote cache disabled for the rest of this run \
                     (cooking goes on with the local cache)"
                ));
            }
            return;
        }
        if matches!(
            e,
            RemoteError::Status {
                status: 401 | 403 | 405,
                ..
            }
        ) {
            if !self.uploads_disabled.swap(true, Ordering::AcqRel) {
                self.notices.push(format!(
                    "{e}; the server refuses uploads, none will be sent this run \
                     (check the credentials, or enable PUT: docs/remote-cache.md)"
                ));
            }
            return;
        }
        if !self.disabled.load(Ordering::Acquire) {
            self.notices.push(format!("{e}; {what} treated as a miss"));
        }
    }
}

impl Source for Inner {
    fn download(&self, key: &Key) -> Got {
        self.http.get(key)
    }

    fn off(&self) -> bool {
        self.disabled.load(Ordering::Acquire)
    }
}

impl Sink for Inner {
    fn upload(&self, job: Job) {
        if !self.uploads_allowed() {
            return self.skip(job);
        }
        if job.refill {
            match self.http.head(&job.key) {
                Ok(true) => return,
                Ok(false) => {}
                Err(e) => return self.failed("lookup", &e),
            }
        }
        let _ = self.put_entry(&job.key, &job.entry, job.tag);
    }

    fn skip(&self, job: Job) {
        self.stats.update(job.tag, |s| s.skipped_uploads += 1);
    }
}

/// As a [`Backend`]: `get` is [`RemoteCache::fetch`], `put` is
/// [`RemoteCache::upload`] (write-behind; `Ok` even when dropped, which is
/// counted). Errors are also in the notices.
impl Backend for RemoteCache {
    fn get(&self, key: &Key, tag: &'static str) -> Result<Option<Vec<u8>>, CacheError> {
        self.fetch(key, tag).map_err(|e| CacheError::Backend {
            backend: format!("remote cache {}", self.inner.url),
            source: Box::new(e),
        })
    }

    fn put(&self, key: &Key, value: &[u8], tag: &'static str) -> Result<(), CacheError> {
        self.upload(key, value, tag);
        Ok(())
    }
}

impl fmt::Debug for RemoteCache {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteCache")
            .field("url", &self.inner.url)
            .field("mode", &self.inner.mode)
            .field("disabled", &self.is_disabled())
            .field("credentials", &self.inner.http.auth_scheme())
            .finish()
    }
}
