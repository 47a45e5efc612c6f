//! [`Tiered`]: the local store first, then the remote cache, then compute.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use ludus_anim_cache::{Backend, CacheError, Key, Store};

use crate::remote::{FlushReport, RemoteCache};
use crate::stats::RemoteStats;

/// Where a [`Tiered::lookup`] found its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Lookup {
    /// In the local store.
    Local(Vec<u8>),
    /// On the remote (checked, and now also stored locally).
    Remote(Vec<u8>),
    /// Nowhere: compute it, then [`Backend::put`] it.
    Miss,
}

impl Lookup {
    pub fn into_value(self) -> Option<Vec<u8>> {
        match self {
            Lookup::Local(v) | Lookup::Remote(v) => Some(v),
            Lookup::Miss => None,
        }
    }
}

/// The local store layered over an optional remote cache.
///
/// - `get`: local; on a miss (or a healed local corruption) the remote; a
///   remote hit is checked by the entry check and written to the local
///   store, so the next lookup is local. Otherwise a miss.
/// - `put`: the local store synchronously (the value is cached when `put`
///   returns), then, in read-write mode, a write-behind upload.
///
/// Never returns an error: every problem, local or remote, becomes a
/// notice in [`Tiered::take_notices`] and the lookup a miss. This is what
/// the cooker's stage cache needs: a cache problem can cost time, never a
/// cook.
pub struct Tiered {
    local: Store,
    remote: Option<RemoteCache>,
    notices: Mutex<Vec<String>>,
}

impl Tiered {
    pub fn new(local: Store, remote: Option<RemoteCache>) -> Tiered {
        Tiered {
            local,
            remote,
            notices: Mutex::new(Vec::new()),
        }
    }

    pub fn local(&self) -> &Store {
        &self.local
    }

    pub fn remote(&self) -> Option<&RemoteCache> {
        self.remote.as_ref()
    }

    /// Looks `key` up tier by tier, saying where the value came from. In
    /// read-write mode a local hit is also offered to the remote
    /// ([`RemoteCache::refill`]: uploaded if the server lacks it).
    pub fn lookup(&self, key: &Key, tag: &'static str) -> Lookup {
        match self.local.get(key) {
            Ok(Some(v)) => {
                if let Some(remote) = &self.remote {
                    remote.refill(key, &v, tag);
                }
                return Lookup::Local(v);
            }
            Ok(None) => {}
            Err(e @ CacheError::Corrupt { .. }) => self.notice(e.to_string()),
            Err(e) => self.notice(format!("cache read failed, trying further: {e}")),
        }
        let Some(remote) = &self.remote else {
            return Lookup::Miss;
        };
        // Errors are counted and noticed by the remote itself.
        let Ok(Some(v)) = remote.fetch(key, tag) else {
            return Lookup::Miss;
        };
        if let Err(e) = self.local.put(key, &v) {
            self.notice(format!("cache write of a remote hit failed: {e}"));
        }
        Lookup::Remote(v)
    }

    /// Waits (at most `timeout`) for queued uploads; call before exit.
    /// `None` without a remote.
    pub fn flush(&self, timeout: Duration) -> Option<FlushReport> {
        self.remote.as_ref().map(|r| r.flush(timeout))
    }

    /// [`RemoteCache::flush_budgeted`]: the end of a run, within its
    /// latency budget. `None` without a remote.
    pub fn flush_budgeted(&self, timeout: Duration) -> Option<FlushReport> {
        self.remote.as_ref().map(|r| r.flush_budgeted(timeout))
    }

    /// Starts the remote download of `key` in the background unless the
    /// local store holds it ([`RemoteCache::prefetch`]).
    pub fn prefetch(&self, key: &Key) {
        if let Some(remote) = &self.remote {
            if !self.local.entry_path(key).is_file() {
                remote.prefetch(key);
            }
        }
    }

    /// The remote's counters per tag; `None` without a remote.
    pub fn remote_stats(&self) -> Option<RemoteStats> {
        self.remote.as_ref().map(RemoteCache::stats)
    }

    /// Local notices, then the remote's; each is returned once.
    pub fn take_notices(&self) -> Vec<String> {
        let mut out = self
            .notices
            .lock()
            .map(|mut n| std::mem::take(&mut *n))
            .unwrap_or_default();
        if let Some(remote) = &self.remote {
            out.extend(remote.take_notices());
        }
        out
    }

    fn notice(&self, s: String) {
        if let Ok(mut n) = self.notices.lock() {
            n.push(s);
        }
    }
}

impl Backend for Tiered {
    /// [`Tiered::lookup`] without the tier; never `Err`.
    fn get(&self, key: &Key, tag: &'static str) -> Result<Option<Vec<u8>>, CacheError> {
        Ok(self.lookup(key, tag).into_value())
    }

    /// Local put, then the upload; never `Err` (failures are notices).
    fn put(&self, key: &Key, value: &[u8], tag: &'static str) -> Result<(), CacheError> {
        if let Err(e) = self.local.put(key, value) {
            self.notice(format!("cache write failed (the cook goes on): {e}"));
        }
        if let Some(remote) = &self.remote {
            remote.upload(key, value, tag);
        }
        Ok(())
    }
}

impl fmt::Debug for Tiered {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tiered")
            .field("local", &self.local.dir())
            .field("remote", &self.remote)
            .finish()
    }
}
