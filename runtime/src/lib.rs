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
//!
//! Features: `serde` (serialization of `Transform`, `JointId`, `Skeleton`
//! for the cooker's stage cache) and `cook`, both off by default. `cook`
//! exposes what only the cooker and the encoder use, kept here because it
//! must agree bit for bit with the decoder: the byte layouts
//! (`package::format`, `codec::vbr::format` with the VBR reconstruction
//! formulas), `codec::reference::encode`, `additive::make_additive`,
//! trajectory extraction (`root_motion::normalize_trajectory`,
//! `extract_planar`, `yaw_twist`), `events::canonicalize_events` and
//! `package::load_ignoring_checksum`. A game links the decoder only.
//!
//! Typical use: load once, make each clip's static pose once (when the clip
//! is bound to its skeleton), then sample every frame without allocating.
//!
//! ```no_run
//! use ludus_anim_runtime::{Affine3A, Package, Transform};
//!
//! let bytes = std::fs::read("out/packages/biped-0123456789abcdef.ludanim").unwrap();
//! let package = Package::load(&bytes).expect("a valid package");
//! let skeleton = package.skeleton();
//! let walk = package.clip("walk").expect("the clip");
//!
//! // Once per clip and skeleton: every track that is not animated.
//! let mut static_pose = vec![Transform::IDENTITY; skeleton.joint_count()];
//! walk.static_pose(package.sample_defaults(walk), &mut static_pose);
//!
//! // Every frame: decode only the animated tracks, then FK.
//! let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
//! let mut model = vec![Affine3A::IDENTITY; skeleton.joint_count()];
//! walk.sample_static(0.25, &static_pose, &mut local);
//! skeleton.local_to_component(&local, &mut model);
//!
//! // A playing instance: a context (seek, play on) and its track cache,
//! // through which the poses in one segment read only its sample rows.
//! let mut ctx = ludus_anim_runtime::DecodeContext::new(walk);
//! let mut tracks = walk.track_cache();
//! for frame in 0..3 {
//!     ctx.seek(frame as f32 / 60.0);
//!     ctx.sample_static_cached(&mut tracks, &static_pose, &mut local);
//! }
//!
//! // Or the cache's entries inside the instance's own memory, beside its
//! // context (a clip with more animated tracks than the array holds
//! // decodes uncached, with the same bits).
//! use ludus_anim_runtime::codec::vbr::CachedTrack;
//! let mut inline = walk.track_cache_in([CachedTrack::EMPTY; 32]);
//! assert!(walk.track_cache_len() <= 32);
//! ctx.seek(0.5);
//! ctx.sample_static_cached(&mut inline, &static_pose, &mut local);
//! ```

// All `unsafe` lives in `codec::vbr::simd` (loads, prefetches, lanes) and
// `codec::vbr::isa` (calls into the code of a detected instruction set),
// the two modules allowed it.
#![deny(unsafe_code)]
// ... and each of its unsafe blocks states why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]

pub mod skeleton;
pub mod timing;

pub use ludus_anim_format::math::{Affine3A, Quat, Transform, Vec3};
pub(crate) use ludus_anim_format::{hash, math};
pub use skeleton::{JointId, Skeleton, SkeletonError, SkeletonIdentity, NO_PARENT};
pub use timing::{sample_position, LoopMode, SamplePosition};
pub mod additive;
pub mod codec;
pub mod context;
pub mod events;
pub mod package;
pub mod root_motion;

pub use context::DecodeContext;
pub use package::{Clip, Package, PackageError};
