//! The ludus-anim cooker: stages, packages, reports. The `ludus-anim`
//! binary is a thin command-line layer over this library.
//!
//! Invariants: data flows one way (importers → model → stages → package →
//! runtime); every output file is written atomically; verification decodes
//! through `ludus-anim-runtime`, the crate games link.

#![forbid(unsafe_code)]

pub mod bench;
pub mod cook;
pub mod fsutil;
pub mod inspect;
pub mod manifest;
pub mod package_writer;
pub mod profile;
pub mod progress;
pub mod report;
pub mod stage_cache;
pub mod stages;
