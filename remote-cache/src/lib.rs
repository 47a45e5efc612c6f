//! `ludus-anim-remote-cache`: a cache of stage outputs shared by a build
//! farm, over the Bazel HTTP remote-cache protocol, layered behind the
//! local store.
//!
//! **Owns:** the protocol client ([`RemoteCache`]: `GET`/`PUT`/`HEAD` of
//! `BASE/ac/<64 hex key>`), its failure policy (every failure a miss; a
//! circuit breaker so a dead server costs one timeout per process),
//! background lookups several at a time with a short wait for their
//! answers (a slow server is turned off rather than waited for),
//! credentials that never print ([`Auth`], [`Secret`]), write-behind
//! uploads through a bounded queue with a timed [`RemoteCache::flush`],
//! per-tag counters ([`RemoteStats`]), and [`Tiered`], the local store
//! layered over the remote. Protocol, entry format, failure policy and
//! server settings: `docs/remote-cache.md`.
//!
//! **Does not own:** keys, the entry format and its check (those are
//! `ludus-anim-cache`'s: a remote object is exactly a local entry file, and
//! is checked by the same [`check_entry`](ludus_anim_cache::check_entry)),
//! nor what the cached bytes mean, nor command-line parsing (the cooker
//! maps its flags onto [`RemoteConfig`]).
//!
//! **Invariants:**
//! - A remote problem never fails a cook and never yields a wrong value:
//!   an unusable answer is a miss with a notice.
//! - Credentials appear in no `Debug`, `Display`, error or notice.
//! - Traffic goes only to the configured base URL: no redirects, no proxy
//!   from the environment.
//!
//! **Why `ureq`** (default features off): the cooker is synchronous and
//! parallel through rayon; a small blocking client with per-phase timeouts
//! and a connection pool fits it directly, where an async client would
//! bring a runtime (tokio) and a block-on bridge on every worker thread.
//! Without default features it is plain HTTP/1.1 over `std::net` (no TLS,
//! no gzip: entries are already compact binary); the `tls` feature adds
//! rustls for `https://` (Google Cloud Storage, caches behind TLS
//! proxies). Build-farm caches are mostly plain HTTP on a private network,
//! and rustls with ring is most of the build time, hence off by default.

mod auth;
mod config;
mod error;
mod http;
mod lookups;
mod notices;
mod remote;
mod signing;
mod stats;
mod tiered;
mod uploader;
mod url;

pub use auth::{Auth, AuthSpec, CredentialSource, Scheme, Secret, CREDENTIALS_REFRESH};
pub use config::{
    Mode, RemoteConfig, WaitBudget, DEFAULT_CONNECT_TIMEOUT, DEFAULT_IO_TIMEOUT,
    DEFAULT_LOOKUP_THREADS, DEFAULT_LOOKUP_TIMEOUT, DEFAULT_LOOKUP_WAIT, DEFAULT_REQUEST_TIMEOUT,
};
pub use error::RemoteError;
pub use ludus_anim_cache::Backend;
pub use remote::{FlushReport, RemoteCache, Upload};
pub use signing::{parse_signing_source, SigningKey, SIGNATURE_LEN};
pub use stats::{RemoteStats, TagStats};
pub use tiered::{Lookup, Tiered};
pub use url::BaseUrl;
