//! The cooker's intermediate model (ozz's "raw" types, in Rust).
//!
//! Importers produce a [`SourceAsset`]: a skeleton, clips whose tracks keep
//! the authored keys and interpolation, diagnostics and the decisions the
//! importer took. Later stages turn it into [`ResampledClip`]s. Nothing here
//! knows a file format: no loader type (gltf, ufbx) ever appears in it.
//!
//! Invariants: no I/O; values are plain data with `validate` functions; the
//! math vocabulary (Transform, Quat, Vec3) is the runtime's so every stage
//! computes exactly what the runtime will.

#![forbid(unsafe_code)]

pub mod curve;
pub mod diagnostics;
pub mod events;
pub mod format;
pub mod limits;
pub mod names;
pub mod resampled;
pub mod skin;
pub mod socket;
pub mod source;
pub mod suggest;
pub mod units;

pub use curve::{Curve, Interpolation, Key};
pub use diagnostics::{Decision, Diagnostic, Diagnostics, Severity};
pub use format::{SourceFormat, SourceKind};
pub use limits::{CompanionRoot, LimitExceeded, LimitOverrides, Limits, MemoryBudget};
pub use resampled::{ResampledClip, ResampledCurve};
pub use skin::{SkinMesh, SourceSkin};
pub use socket::SourceSocket;
pub use source::{
    AxisSystem, JointTracks, ScalarCurve, SourceAsset, SourceClip, SourceJoint, SourceSkeleton,
};

pub use ludus_anim_format::events::MarkerKind;
pub use ludus_anim_format::math::{Quat, Transform, Vec3};
