//! The ludus-anim cooker: stages, packages, reports. The `ludus-anim`
//! binary is a thin command-line layer over this library; the asset server
//! is another.
//!
//! Invariants: data flows one way (importers → model → stages → package →
//! runtime); a cook's outputs are published together or not at all through a
//! [`sink`] ([`publish`]);
//! every source is read through a [`source`] reader; verification decodes
//! through `ludus-anim-runtime`, the crate games link.

#![forbid(unsafe_code)]
// Per-asset and per-clip work fails with a `Diagnostic` (file, clip, joint,
// time): built once per failure, never on a hot path, so its size is not a
// concern and boxing it everywhere would only add noise.
#![allow(clippy::result_large_err)]

pub mod asset_query;
pub mod bench;
pub mod events;
pub mod fault;
pub mod filelock;
pub mod fragment_merge;
pub mod fsutil;
pub mod hermetic;
pub mod inspect;
pub mod inspect_joint_sets;
pub mod inspect_retarget;
pub mod inspect_skins;
pub mod inspect_sockets;
pub mod inspect_sync;
pub mod listing;
pub mod merge;
pub mod package_writer;
pub mod pipeline;
pub mod progress;
pub mod project;
pub mod prune;
pub mod publish;
pub mod remote;
pub mod remote_verify;
pub mod report;
pub mod sidecar_poses;
pub mod sidecar_retarget;
pub mod sink;
pub mod stage;
pub mod stage_cache;
pub mod stages;
pub mod suggest;
pub mod sync_groups;

// The project model lives in its own crate; these re-exports keep the
// cooker's paths (`crate::manifest`, ...) for its modules and callers.
pub use ludus_anim_project::{
    clip_semantics, keys, manifest, paths, profile, settings, source, stamps,
};

/// The cooker's name and version as packages record it. Only what changes
/// package bytes belongs here: the source revision is reported by
/// `--version` and `report.json`, never written into packages or keys.
pub const COOKER_VERSION: &str = concat!("ludus-anim ", env!("CARGO_PKG_VERSION"));

/// The source revision the cooker was built from (`git rev-parse`), or
/// `unknown`. Reported by `--version` and in `report.json`'s `build`.
pub const REVISION: &str = env!("LUDUS_ANIM_REVISION");
