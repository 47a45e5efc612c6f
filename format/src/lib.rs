//! `ludus-anim-format`: what the runtime (`ludus-anim-runtime`) and the
//! cook side (`ludus-anim-compress`, the cooker) must agree on bit for bit,
//! in one small crate both depend on (the role of ACL's `core/`).
//!
//! - [`math`]: the pose math in the Ludus conventions ([`math::Transform`],
//!   the blends the decoder uses), and [`rigid`]: the root-motion value.
//! - [`timing`]: a clip-local time to its bracketing samples (loop modes).
//! - [`additive`]: the additive convention (construction and application).
//! - [`trajectory`]: root-motion trajectories (validation, sampling, the
//!   playback delta; extraction and normalization for the cook side).
//! - [`events`]: authored markers and the rules of a clip's event track.
//! - [`sync`]: sync groups as a package stores them.
//! - [`skin`]: skin bindings and motion bounds; [`sockets`]: sockets.
//! - [`joint_sets`]: cooked masks and LOD levels (the JSET section).
//! - [`hash`]: FNV-1a 64 (joint ids, package checksum) and 128 (skeleton
//!   identity).
//! - [`package`]: the package v2 byte layout and the checksum, and the
//!   plain values a reader fills from its records (provenance, cook-time
//!   figures, root-motion and curve descriptions) for tools.
//! - [`vbr`]: the VBR blob layout, rate bytes and reconstruction formulas;
//!   [`vbr_layout`]: a cook-side reader of a blob's structure.
//! - [`codec`]: the codec ids; [`reference`]: the reference codec's layout
//!   and encoder.
//! - Cook-side helpers, kept beside the formulas they must match:
//!   [`additive::make_additive`], [`trajectory::normalize_trajectory`].
//!
//! A game links this crate only through the runtime; it never allocates in
//! anything the runtime's decode calls.
#![deny(unsafe_code)]

pub mod additive;
pub mod codec;
pub mod events;
pub mod hash;
pub mod joint_sets;
pub mod math;
pub mod package;
pub mod reference;
pub mod rigid;
pub mod skin;
pub mod sockets;
pub mod sync;
pub mod timing;
pub mod trajectory;
pub mod vbr;
pub mod vbr_layout;
