//! The scalar reference evaluator of compiled animation programs
//! (`ludus-anim-program`'s [`Program`](ludus_anim_program::Program)):
//! control (input snapshot, transition selection in the compiled order,
//! entries, cross-fades and inertialization, players advanced once per
//! tick with marker sync and event crossings through the runtime) and the
//! plan's pose operations in the seed's exact math (`kernels`). Clips are
//! decoded only through the runtime's one playback API (`Player`).
//! Nothing allocates after [`eval::Evaluator::new`]
//! (`tests/no_alloc.rs`); `verify` runs the checks the cooker applies to
//! every compiled program.
//!
//! Data flow: `kernels` → `eval` → `verify`.

pub mod eval;
pub mod kernels;
pub mod verify;

pub use eval::{BindError, EvalError, Evaluator, Stats, TickReport};
