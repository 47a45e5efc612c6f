//! The [`Backend`] trait: what a cache tier offers the cooker.

use crate::error::CacheError;
use crate::key::Key;
use crate::store::Store;

/// A place stage outputs can be cached in: the local [`Store`], a remote
/// cache, or a layered combination of both.
///
/// Values are opaque payload bytes; how a backend frames and checks them is
/// its own business, but every backend in this workspace stores the framed
/// entry of [`encode_entry`](crate::encode_entry) and checks it with
/// [`check_entry`](crate::check_entry) on the way out, so a value returned
/// by `get` has passed the same integrity check wherever it came from.
///
/// `tag` says what the entry is for (the cooker passes its stage name) so
/// that backends which keep counters (a remote cache's hits and bytes per
/// stage) can attribute them; the local store ignores it. It is a
/// `&'static str` so counting never allocates.
///
/// `Send + Sync`: the cooker calls one backend from all its worker threads.
pub trait Backend: Send + Sync {
    /// The value stored under `key`, if present and intact.
    ///
    /// Any `Err` means "no usable value": the caller logs it and computes
    /// the value as on a miss. (The local store reports a corrupted entry it
    /// has removed as [`CacheError::Corrupt`]; see [`Store::get`].)
    fn get(&self, key: &Key, tag: &'static str) -> Result<Option<Vec<u8>>, CacheError>;

    /// Stores `value` under `key`. A backend may complete the write later
    /// (a remote upload queue); an `Err` means the value is not cached,
    /// which is never fatal to a cook.
    fn put(&self, key: &Key, value: &[u8], tag: &'static str) -> Result<(), CacheError>;
}

impl Backend for Store {
    fn get(&self, key: &Key, _tag: &'static str) -> Result<Option<Vec<u8>>, CacheError> {
        Store::get(self, key)
    }

    fn put(&self, key: &Key, value: &[u8], _tag: &'static str) -> Result<(), CacheError> {
        Store::put(self, key, value)
    }
}
