//! Animation programs (seed: "State trees layers and evaluation plans").
//!
//! Authors write a versioned TOML asset: typed parameters, state machines
//! (hierarchical states, one active leaf, typed transition predicates with
//! priorities and stable IDs, cross-fade or inertialization), producer
//! nodes (clip players, 1D and 2D blendspaces synced by markers), masks
//! and an ordered layer stack (base, masked overrides, local additives).
//! [`compile::compile`] turns it, against the cook output's clips, into a
//! [`plan::Program`]: one bounded linear list of guarded pose operations
//! over numbered buffers, with capacities and a map from every op to its
//! authored node. [`binary`] writes and loads it (validated).
//!
//! Data flow: `asset` → `compile` (with `predicate`, `blendspace`) →
//! `plan` → `dump` / `binary`. No I/O; never depends on the cooker or the
//! runtime (the cook output is given as [`compile::AssetFacts`]).

pub mod asset;
pub mod binary;
pub mod blendspace;
pub mod compile;
pub mod dump;
pub mod located;
pub mod plan;
pub mod predicate;

pub use located::{Diagnostic, ProgramErrors};
pub use plan::Program;
