//! `ludus-anim-cache`: the local content-addressed store the cooker caches
//! stage outputs in.
//!
//! **Owns:** cache keys ([`Key`], built field by field with [`KeyBuilder`]),
//! the on-disk entry format (header with magic, layout version, payload
//! length and blake3 of the payload), and the [`Store`]: atomic puts,
//! checksummed gets that detect and remove (heal) corrupted entries,
//! statistics, and least-recently-used garbage collection that also sweeps
//! temp files left by crashed writers. The [`Backend`] trait is the
//! shape every cache tier shares (the store implements it; a remote cache
//! and a layered local-then-remote backend live in
//! `ludus-anim-remote-cache`), and [`encode_entry`] / [`check_entry`] are
//! the entry framing and integrity check those tiers reuse.
//!
//! **Does not own:** what a key means or what the bytes are. The cooker
//! decides which fields go into a stage's key (stage name, stage code
//! version, input content hashes, the settings the stage reads) and how a
//! stage output is serialized; this crate stores opaque bytes under a key.
//!
//! **Invariants:**
//! - Depends on no other ludus crate (and on nothing but `blake3` and
//!   `thiserror`), so cache behaviour can never drift with pipeline code and
//!   the store can be reused by any tool.
//! - Build farms share one cache directory between many processes and
//!   machines (local disk or a network file system). A reader only ever sees
//!   a complete entry written by one `put`, or a miss; a partially written
//!   or corrupted file is never returned as a value.
//! - Never panics on I/O failures or on any bytes found on disk.
//!
//! See [`Store`] for the on-disk layout and the concurrency argument.

#![forbid(unsafe_code)]

mod backend;
mod entry;
mod error;
mod key;
mod store;

pub use backend::Backend;
pub use entry::{
    check_entry, check_entry_allowing, encode_entry, encode_entry_with_flags, FLAG_SIGNED,
    HEADER_LEN, LAYOUT_VERSION, MAGIC,
};
pub use error::{CacheError, CorruptReason};
pub use key::{Key, KeyBuilder};
pub use store::{
    EvictedEntry, GcReport, Stats, Store, StoreOptions, DEFAULT_STALE_TEMP_AGE,
    DEFAULT_TOUCH_GRANULARITY,
};
