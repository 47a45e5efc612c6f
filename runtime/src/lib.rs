//! `ludus-anim-runtime`: the only crate game code links.
//!
//! It reads packages (validated once at load), decodes clips and runs FK,
//! event crossings, root-motion deltas, curves and additive layers. The
//! byte layouts, reconstruction formulas and plain record values it
//! shares bit for bit with the cook side live in `ludus-anim-format`
//! (some signatures name them: `LoopMode`, `RigidTransform`, `Marker`,
//! `CookInfo`); what only the cook side uses lives in cook-side crates.
//!
//! Invariants: depends on nothing heavier than glam; never does I/O; never
//! panics on any input bytes; the cooker verifies through this same code;
//! decoding never allocates.
//!
//! Feature: `serde` (serialization of `Transform`, `JointId`, `Skeleton`
//! for the cooker's stage cache), off by default.
//!
//! The one way to play a clip: a [`Player`] per playing instance, bound
//! once (it sizes what it keeps from the clip and allocates it), then
//! `seek` or `advance` and `decode` a [`Request`] into caller-owned memory
//! every frame, without allocating. [`Clip::sample`] is the one-shot
//! decode for tools (the same bits). Events and root motion are queries
//! of the clip over the frame's update in absolute, unwrapped time.
//!
//! ```no_run
//! use ludus_anim_runtime::events::{Crossing, PlaybackLatch};
//! use ludus_anim_runtime::{Affine3A, Package, Player, Request, Transform};
//!
//! let bytes = std::fs::read("out/packages/biped-0123456789abcdef.ludanim").unwrap();
//! let package = Package::load(&bytes).expect("a valid package");
//! let skeleton = package.skeleton();
//! let walk = package.clip("walk").expect("the clip");
//!
//! // Once per playing instance: bind the clip over its defaults.
//! let mut player = Player::new(walk, package.sample_defaults(walk)).expect("binds");
//! let mut local = vec![Transform::IDENTITY; skeleton.joint_count()];
//! let mut model = vec![Affine3A::IDENTITY; skeleton.joint_count()];
//! let mut latch = PlaybackLatch::default();
//! let mut crossings = [Crossing::default(); 16];
//! let mut time = 0.0f64;
//!
//! // Every frame: move, decode what is needed, then FK; the markers the
//! // update crossed and how far it moved the character.
//! for _frame in 0..3 {
//!     let dt = 1.0 / 60.0;
//!     player.advance(dt as f32);
//!     player.decode(Request::Pose, &mut local).expect("a pose");
//!     skeleton.local_to_component(&local, &mut model);
//!     let n = walk
//!         .crossed_events(time, time + dt, &mut latch, &mut crossings)
//!         .expect("room for the crossings");
//!     for c in &crossings[..n] {
//!         println!("{}", walk.markers()[c.index as usize].name);
//!     }
//!     let _delta = walk.root_motion_delta(time, time + dt);
//!     time += dt;
//! }
//!
//! // Only some joints (`out[k]` is joint `joints[k]`), or a mask.
//! let mut hands = [Transform::IDENTITY; 2];
//! player.decode(Request::Joints(&[7, 11]), &mut hands).expect("two joints");
//! let mask = vec![0b1011u64; skeleton.joint_count().div_ceil(64)];
//! player.decode(Request::Mask(&mask), &mut local).expect("a masked pose");
//! ```

// All `unsafe` lives in `codec::vbr::simd` (loads, prefetches, lanes) and
// `codec::vbr::isa` (calls into the code of a detected instruction set),
// the two modules allowed it.
#![deny(unsafe_code)]
// ... and each of its unsafe blocks states why it is sound.
#![deny(clippy::undocumented_unsafe_blocks)]
// Every `pub` item is public API (`tests/public_api.rs` lists them).
#![deny(unreachable_pub)]

pub mod skeleton;

pub use skeleton::{JointId, Skeleton, SkeletonError, SkeletonIdentity, NO_PARENT};
pub mod additive;
pub(crate) mod codec;
pub(crate) mod context;
pub mod events;
pub mod package;
mod player;

pub use ludus_anim_format::math::{Affine3A, Transform};
pub(crate) use ludus_anim_format::{hash, math, timing};
pub use package::{Clip, Package, PackageError};
pub use player::{DecodeError, Player, Request};
