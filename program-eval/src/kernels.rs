//! The per-joint pose math of the plan's operations, in the seed's exact
//! conventions ("Blending and transition math", "Additive convention"),
//! over `ludus-anim-format`'s pose math. Weight 0 and 1 return an input
//! unchanged, bit for bit.

use ludus_anim_format::additive::{apply_additive, make_additive};
use ludus_anim_format::math::{interpolate, slerp_shortest, Quat, Transform, Vec3};

/// Pair blend: lerp translation and scale, hemisphere-corrected nlerp
/// rotation; `w <= 0` is `a`, `w >= 1` is `b` (NaN counts as 0).
#[inline]
pub fn blend_pair(a: &Transform, b: &Transform, w: f32) -> Transform {
    if w.is_nan() || w <= 0.0 {
        *a
    } else if w >= 1.0 {
        *b
    } else {
        interpolate(a, b, w)
    }
}

/// Override layer: `blend_pair(base, layer, layer_weight * mask_weight)`.
#[inline]
pub fn override_joint(base: &Transform, layer: &Transform, a: f32) -> Transform {
    blend_pair(base, layer, a)
}

/// Additive layer: the delta of `src` (against `reference` when given,
/// else `src` is already a delta) applied on `base` at `w`.
#[inline]
pub fn add_local_joint(
    base: &Transform,
    src: &Transform,
    reference: Option<&Transform>,
    w: f32,
) -> Transform {
    let delta = match reference {
        Some(r) => make_additive(src, r),
        None => *src,
    };
    apply_additive(base, &delta, w)
}

/// N-way normalized blend of one joint (seed: normalize finite
/// nonnegative weights; align hemispheres to a stable reference — the
/// first input with a positive weight, in declared order; accumulate in
/// that order; normalize once). Returns `None` when the weights or the
/// rotation sum vanish (the caller falls back to `rest` and counts it).
#[inline]
pub fn blend_n(
    inputs: impl Iterator<Item = (Transform, f32)> + Clone,
    rest: &Transform,
) -> (Transform, bool) {
    let mut sum = 0.0f32;
    let mut reference: Option<Quat> = None;
    let mut only: Option<Transform> = None;
    let mut count = 0;
    for (t, w) in inputs.clone() {
        if w.is_finite() && w > 0.0 {
            sum += w;
            count += 1;
            reference.get_or_insert(t.rotation);
            only = Some(t);
        }
    }
    let Some(reference) = reference.filter(|_| sum > 1e-6) else {
        return (*rest, false);
    };
    if count == 1 {
        if let Some(t) = only {
            return (t, true);
        }
    }
    let (mut tr, mut sc) = (Vec3::ZERO, Vec3::ZERO);
    let mut q = [0f32; 4];
    for (t, w) in inputs {
        if !(w.is_finite() && w > 0.0) {
            continue;
        }
        let w = w / sum;
        tr += t.translation * w;
        sc += t.scale * w;
        let r = if reference.dot(t.rotation) < 0.0 {
            -t.rotation
        } else {
            t.rotation
        };
        q[0] += r.x * w;
        q[1] += r.y * w;
        q[2] += r.z * w;
        q[3] += r.w * w;
    }
    let q = Quat::from_xyzw(q[0], q[1], q[2], q[3]);
    let len2 = q.length_squared();
    if !(len2 > 1e-12 && len2.is_finite()) {
        return (
            Transform {
                rotation: rest.rotation,
                translation: tr,
                scale: sc,
            },
            false,
        );
    }
    (
        Transform {
            rotation: q * len2.sqrt().recip(),
            translation: tr,
            scale: sc,
        },
        true,
    )
}

/// The inertialization offset that takes `current` to `previous`:
/// translation difference, rotation `previous * inverse(current)` (on the
/// shorter arc), scale ratio.
#[inline]
pub fn inertial_offset(previous: &Transform, current: &Transform) -> Transform {
    let p = if previous.rotation.dot(current.rotation) < 0.0 {
        -previous.rotation
    } else {
        previous.rotation
    };
    let ratio = |a: f32, b: f32| if b > 0.0 && b.is_finite() { a / b } else { 1.0 };
    Transform {
        translation: previous.translation - current.translation,
        rotation: (p * current.rotation.conjugate()).normalize(),
        scale: Vec3::new(
            ratio(previous.scale.x, current.scale.x),
            ratio(previous.scale.y, current.scale.y),
            ratio(previous.scale.z, current.scale.z),
        ),
    }
}

/// `current` plus `offset` scaled by `d` in [0, 1] (1: all of the
/// offset, so the output starts at the previous pose; 0: `current`).
#[inline]
pub fn apply_inertial(current: &Transform, offset: &Transform, d: f32) -> Transform {
    if d.is_nan() || d <= 0.0 {
        return *current;
    }
    let d = d.min(1.0);
    Transform {
        translation: current.translation + offset.translation * d,
        rotation: (slerp_shortest(Quat::IDENTITY, offset.rotation, d) * current.rotation)
            .normalize(),
        scale: current.scale * Vec3::ONE.lerp(offset.scale, d),
    }
}

/// The offset's remaining share at `x` = elapsed / duration: a quintic
/// from 1 to 0 with zero slope and curvature at both ends.
///
/// Adapted idea: David Bollo, "Inertialization: High-Performance
/// Animation Transitions in Gears of War" (GDC 2018): switch to the
/// destination at once and decay the captured offset to zero over a
/// finite time. His quintic also matches the offset's velocity; this one
/// starts at rest (no velocity history is kept in this version).
#[inline]
pub fn inertial_decay(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    1.0 - x * x * x * (10.0 - 15.0 * x + 6.0 * x * x)
}
