//! Counters per tag (the cooker's stage name), so the report can say which
//! stages the remote cache served.

use std::sync::Mutex;

/// One tag's remote traffic. Every [`RemoteCache::fetch`](crate::RemoteCache::fetch)
/// counts exactly one of `hits`, `misses`, `corrupt`, `errors` or
/// `skipped`; every upload request exactly one of `uploads`,
/// `upload_errors`, `dropped_uploads` or `skipped_uploads`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TagStats {
    /// Downloads that passed the entry check.
    pub hits: u64,
    /// Objects the server does not have (404).
    pub misses: u64,
    /// Downloads that failed the entry check or the size limit (a miss).
    pub corrupt: u64,
    /// Lookups that failed: network, timeout, unexpected status (a miss).
    pub errors: u64,
    /// Lookups not sent because the remote was disabled (a miss).
    pub skipped: u64,
    /// Entry bytes downloaded by hits (headers included).
    pub bytes_down: u64,
    /// Entries stored on the server.
    pub uploads: u64,
    /// Entry bytes uploaded (headers included).
    pub bytes_up: u64,
    /// Uploads the server or the network refused.
    pub upload_errors: u64,
    /// Uploads dropped because the write-behind queue was full.
    pub dropped_uploads: u64,
    /// Uploads not sent: the remote was disabled, or closed before they
    /// were sent.
    pub skipped_uploads: u64,
}

impl TagStats {
    /// Lookups that found no usable entry, whatever the reason.
    pub fn all_misses(&self) -> u64 {
        self.misses + self.corrupt + self.errors + self.skipped
    }

    fn add(&mut self, o: &TagStats) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.corrupt += o.corrupt;
        self.errors += o.errors;
        self.skipped += o.skipped;
        self.bytes_down += o.bytes_down;
        self.uploads += o.uploads;
        self.bytes_up += o.bytes_up;
        self.upload_errors += o.upload_errors;
        self.dropped_uploads += o.dropped_uploads;
        self.skipped_uploads += o.skipped_uploads;
    }
}

/// A snapshot of all counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RemoteStats {
    /// Per tag, sorted by tag.
    pub by_tag: Vec<(&'static str, TagStats)>,
    /// Whether the remote was disabled during the run (it was unreachable).
    pub disabled: bool,
}

impl RemoteStats {
    /// The sum over all tags.
    pub fn total(&self) -> TagStats {
        let mut t = TagStats::default();
        for (_, s) in &self.by_tag {
            t.add(s);
        }
        t
    }

    /// One tag's counters (zero if it never appeared).
    pub fn tag(&self, tag: &str) -> TagStats {
        self.by_tag
            .iter()
            .find(|(t, _)| *t == tag)
            .map(|(_, s)| *s)
            .unwrap_or_default()
    }
}

/// The live table. A mutex over a short vector: a handful of tags, and
/// every update sits next to a network round trip.
#[derive(Default)]
pub(crate) struct StatsTable {
    rows: Mutex<Vec<(&'static str, TagStats)>>,
}

impl StatsTable {
    pub fn update(&self, tag: &'static str, f: impl FnOnce(&mut TagStats)) {
        let Ok(mut rows) = self.rows.lock() else {
            return;
        };
        match rows.iter_mut().find(|(t, _)| *t == tag) {
            Some((_, s)) => f(s),
            None => {
                let mut s = TagStats::default();
                f(&mut s);
                rows.push((tag, s));
            }
        }
    }

    pub fn snapshot(&self, disabled: bool) -> RemoteStats {
        let mut by_tag = self.rows.lock().map(|r| r.clone()).unwrap_or_default();
        by_tag.sort_by_key(|(t, _)| *t);
        RemoteStats { by_tag, disabled }
    }
}
