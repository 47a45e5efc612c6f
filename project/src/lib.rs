//! The ludus-anim project model: what a project is before anything is
//! cooked. The manifest (assets, their settings, remote cache and serve
//! options), the quality profiles, the per-asset settings, the source
//! files read through one confined reader with change stamps, and the key
//! writer every stage key is built with.
//!
//! It sits below the cooker and knows nothing of stages: the cooker derives
//! each stage's key from these types (`KeyInput`), the server and the farm
//! tools read manifests through it. Data flows one way: this crate reads
//! files and text; it never writes outputs.

#![forbid(unsafe_code)]

pub mod clip_semantics;
pub mod curve_schema;
pub mod joint_sets;
pub mod keys;
pub mod manifest;
pub mod paths;
pub mod profile;
pub mod settings;
pub mod sockets;
pub mod source;
pub mod stamps;
