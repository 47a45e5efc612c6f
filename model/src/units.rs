//! Unit conventions sources are known to use, in meters per unit. Named
//! once here for the manifest's `units` presets and normalize's detection.

/// Meters per unit of the CMU cgspeed BVH conversion: 1/0.45 inch.
pub const CMU_CGSPEED_M: f32 = 0.056_444_44; // 0.0254 / 0.45
/// Meters per unit of MakeHuman's BVH exports: decimetres.
pub const MAKEHUMAN_M: f32 = 0.1;
