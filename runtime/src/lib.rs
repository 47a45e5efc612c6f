//! `ludus-anim-runtime`: the only crate game code links.
//!
//! It owns pose math in the Ludus conventions, the validated skeleton, the
//! package reader, clip decoders (the uncompressed reference codec and the
//! variable-bit-rate codec), the sampler and FK. Every count, offset and
//! size in a package is validated once at load; decoding then works over
//! validated views into caller-owned buffers and never allocates.
//!
//! Invariants: depends on nothing heavier than glam; never does I/O; never
//! panics on any input bytes; the cooker verifies through this same code.

pub mod hash;
pub mod math;
pub mod skeleton;
pub mod timing;

pub use math::{Affine3A, Quat, Transform, Vec3};
pub use skeleton::{JointId, Skeleton, SkeletonError, SkeletonIdentity, NO_PARENT};
pub use timing::{sample_position, LoopMode, SamplePosition};
pub mod additive;
pub mod codec;
pub mod events;
pub mod package;
pub mod root_motion;

pub use package::{Clip, Package, PackageError};
