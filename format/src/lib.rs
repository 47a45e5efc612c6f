//! `ludus-anim-format`: what the runtime (`ludus-anim-runtime`) and the
//! cook side (`ludus-anim-compress`, the cooker) must agree on bit for bit,
//! in one small crate both depend on (the role of ACL's `core/`).
//!
//! - [`math`]: the pose math in the Ludus conventions ([`math::Transform`],
//!   the blends the decoder uses), and [`rigid`]: the root-motion value.
//! - [`hash`]: FNV-1a 64 (joint ids, package checksum) and 128 (skeleton
//!   identity).
//! - [`package`]: the package v2 byte layout and the checksum.
//! - [`vbr`]: the VBR blob layout, rate bytes and reconstruction formulas;
//!   [`vbr_layout`]: a cook-side reader of a blob's structure.
//! - [`codec`]: the codec ids; [`reference`]: the reference codec's layout
//!   and encoder.
//! - Cook-side helpers, kept beside the formulas they must match:
//!   [`additive::make_additive`], [`trajectory`] extraction.
//!
//! A game links this crate only through the runtime; it never allocates in
//! anything the runtime's decode calls.
#![deny(unsafe_code)]

pub mod additive;
pub mod codec;
pub mod hash;
pub mod math;
pub mod package;
pub mod reference;
pub mod rigid;
pub mod trajectory;
pub mod vbr;
pub mod vbr_layout;
