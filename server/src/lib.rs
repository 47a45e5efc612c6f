//! `ludus-anim-server`: the asset server. It resolves a project exactly as
//! `ludus-anim cook` does, cooks it once, then watches every file the cook
//! read (sources, glTF companions, quality profiles, the manifest) and
//! re-cooks exactly the assets a change reaches, publishing each result as
//! an immutable *generation* that it serves over HTTP (`schemas/server-api.md`).
//!
//! **Owns:** watching and debouncing (`watch`), what a change reaches
//! (`deps`), the one cook thread with its coalescing dirty set (`worker`),
//! generation directories and the `current` pointer (`generation`), which
//! generations stay (`retention`) and client leases on them (`lease`), the
//! whole-generation dashboard sidecar (`sidecar`), the
//! shared state HTTP reads (`state`), Prometheus counters (`metrics`), and
//! the HTTP API (`http`).
//!
//! **Does not own:** what a cook does or how it is keyed: that is the
//! cooker library, called through `project::resolve` and
//! `pipeline::cook_with` with this crate's `SourceReader`
//! ([`reader::WatchedReader`]), `Sink` ([`generation::PackageSink`]) and
//! `Observer` ([`observer::ServerObserver`]).
//!
//! **Invariants:**
//! - The async runtime (tokio, axum) lives in this crate only; the cooker
//!   and the runtime crates stay free of async dependencies. Cooks run on a
//!   plain thread (the cooker's rayon pool under it), never on a tokio
//!   worker; HTTP handlers only read published, immutable state.
//! - Nothing half-written is ever visible: packages are content-named and
//!   written by temp file + rename; a generation's directory is complete
//!   before the `current` pointer names it, and the pointer is replaced
//!   atomically. A restart after `kill -9` reads `current` and serves it.
//! - A request can never read a file outside the output directory: package
//!   requests are looked up by hash in published manifests, asset requests
//!   by name in the published report; neither is ever joined onto a path.
//! - Cooks read only files under the project's roots (the manifest's
//!   directory, or the named inputs' directories).

#![forbid(unsafe_code)]

pub mod args;
pub mod deps;
pub mod generation;
pub mod health;
pub mod http;
pub mod lease;
pub mod metrics;
pub mod observer;
pub mod reader;
pub mod retention;
pub mod run;
pub mod sidecar;
pub mod state;
pub mod watch;
pub mod worker;
