//! Counters per tag (the cooker's stage name), so the report can say which
//! stages the remote cache served.

use std::sync::Mutex;

/// One tag's remote traffic: the report's per-stage type, so the
/// report carries these counters as they are. Every
/// [`RemoteCache::fetch`](crate::RemoteCache::fetch) counts exactly one of
/// `hits`, `misses`, `corrupt`, `errors` or `skipped`; every upload request
/// exactly one of `uploads`, `upload_errors`, `dropped_uploads` or
/// `skipped_uploads`.
pub use ludus_anim_report::RemoteStageStats as TagStats;

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
