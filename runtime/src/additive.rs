//! Additive layers: an additive clip's decoded deltas applied onto a base
//! pose. The convention (seed: "Additive convention") and the per-joint
//! formula are `ludus_anim_format::additive`'s, shared with the cooker.
//!
//! Weights: the seed forbids passing out-of-range weights into `[0, 1]`
//! APIs, so [`apply_additive_pose`] refuses (returns `false` and writes
//! nothing) when `w` is outside `[0, 1]` or not finite: a bad weight
//! reaches the caller as a rejected call rather than a silent clamp.

use crate::math::Transform;
use ludus_anim_format::additive::apply_additive;

/// `out[i]` = `base[i]` with `delta[i]` applied at weight `w` (an additive
/// clip's decoded pose is the delta). Returns `false` and writes nothing
/// if the three slices differ in length or `w` is not in `[0, 1]` (NaN
/// included). Never allocates.
#[must_use = "false means nothing was written: a length or the weight was out of range"]
pub fn apply_additive_pose(
    base: &[Transform],
    delta: &[Transform],
    w: f32,
    out: &mut [Transform],
) -> bool {
    if base.len() != delta.len() || base.len() != out.len() || !(0.0..=1.0).contains(&w) {
        return false;
    }
    for ((o, b), d) in out.iter_mut().zip(base).zip(delta) {
        *o = apply_additive(b, d, w);
    }
    true
}
