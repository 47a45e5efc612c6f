//! The per-joint pose math of the plan's operations, in the seed's exact
//! conventions ("Blending and transition math", "Additive convention"),
//! over `ludus-anim-format`'s pose math. Weight 0 and 1 return an input
//! unchanged, bit for bit.

use ludus_anim_format::additive::{apply_additive, make_additive};
use ludus_anim_format::math::{interpolate, Quat, Transform, Vec3};

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

/// An inertialization offset's rates at the switch, per joint: the
/// translation offset's velocity (m/s) and the rotation offset's angular
/// velocity as a rotation vector (rad/s), both taken from the source's two
/// last outputs (the destination held still, as in Bollo's method).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct InertialRates {
    pub translation: Vec3,
    pub rotation: Vec3,
}

/// The rates of `offset` (the source's last output against the new pose)
/// from `older` (the source's output one sample earlier against the same
/// new pose), `dt` seconds apart. `dt` not positive and finite: at rest.
#[inline]
pub fn inertial_rates(offset: &Transform, older: &Transform, dt: f32) -> InertialRates {
    if !(dt.is_finite() && dt > 0.0) {
        return InertialRates::default();
    }
    let r0 = offset.rotation.to_scaled_axis();
    // The older rotation on the offset's hemisphere, so the difference is
    // the short way round.
    let o = if older.rotation.dot(offset.rotation) < 0.0 {
        -older.rotation
    } else {
        older.rotation
    };
    let r1 = o.to_scaled_axis();
    let rates = InertialRates {
        translation: (offset.translation - older.translation) / dt,
        rotation: (r0 - r1) / dt,
    };
    if rates.translation.is_finite() && rates.rotation.is_finite() {
        rates
    } else {
        InertialRates::default()
    }
}

/// One coordinate of a decaying offset `t` seconds after it was `x0`
/// moving at `v0`, reaching 0 with zero velocity and acceleration at `t1`
/// and staying there.
///
/// Adapted from David Bollo, "Inertialization: High-Performance Animation
/// Transitions in Gears of War" (GDC 2018): the quintic through `x0` with
/// initial velocity `v0` and initial acceleration
/// `a0 = max(0, (-8 v0 t1 - 20 x0) / t1^2)` (for `x0 >= 0`; mirrored for
/// `x0 < 0`), ending at rest at `t1`. Adopted: the polynomial and the
/// acceleration clamp. Not adopted: his shortening of `t1` to
/// `-5 x0 / v0` against overshoot (it collapses the duration when one
/// coordinate is near 0 but moving, and every coordinate here is decayed
/// on its own), so a fast approach may overshoot 0 before settling. With
/// `v0 = 0` this is `x0 (1 - 10 s^3 + 15 s^4 - 6 s^5)`, `s = t / t1`.
#[inline]
pub fn inertial_curve(x0: f32, v0: f32, t: f32, t1: f32) -> f32 {
    if t.is_nan() || t1.is_nan() || t1 <= 0.0 || t >= t1 {
        return 0.0;
    }
    let t = t.max(0.0);
    let (sign, x0, v0) = if x0 < 0.0 {
        (-1.0, -x0, -v0)
    } else {
        (1.0, x0, v0)
    };
    let t12 = t1 * t1;
    let a0 = ((-8.0 * v0 * t1 - 20.0 * x0) / t12).max(0.0);
    let a = -(a0 * t12 + 6.0 * v0 * t1 + 12.0 * x0) / (2.0 * t12 * t12 * t1);
    let b = (3.0 * a0 * t12 + 16.0 * v0 * t1 + 30.0 * x0) / (2.0 * t12 * t12);
    let c = -(3.0 * a0 * t12 + 12.0 * v0 * t1 + 20.0 * x0) / (2.0 * t12 * t1);
    let x = (((((a * t + b) * t + c) * t + 0.5 * a0) * t + v0) * t) + x0;
    sign * x
}

/// `current` plus the offset decayed to `t` seconds after its capture
/// (of `t1`): every translation coordinate and every rotation-vector
/// coordinate follows [`inertial_curve`] from its value and rate; scale
/// follows the rate-free quintic ([`inertial_decay`]). `t = 0` gives
/// `offset` applied in full (the source's last output), `t >= t1`
/// gives `current` exactly.
#[inline]
pub fn apply_inertial(
    current: &Transform,
    offset: &Transform,
    rates: &InertialRates,
    t: f32,
    t1: f32,
) -> Transform {
    if t.is_nan() || t1.is_nan() || t1 <= 0.0 || t >= t1 {
        return *current;
    }
    let curve = |x: Vec3, v: Vec3| {
        Vec3::new(
            inertial_curve(x.x, v.x, t, t1),
            inertial_curve(x.y, v.y, t, t1),
            inertial_curve(x.z, v.z, t, t1),
        )
    };
    let tr = curve(offset.translation, rates.translation);
    let rv = curve(offset.rotation.to_scaled_axis(), rates.rotation);
    let d = inertial_decay(t / t1);
    Transform {
        translation: current.translation + tr,
        rotation: (Quat::from_scaled_axis(rv) * current.rotation).normalize(),
        scale: current.scale * Vec3::ONE.lerp(offset.scale, d),
    }
}

/// The rate-free quintic share of an offset left at `x` = elapsed /
/// duration (1 at 0, 0 at 1, zero slope and curvature at both ends):
/// [`inertial_curve`] with `v0 = 0`, used for scale.
#[inline]
pub fn inertial_decay(x: f32) -> f32 {
    let x = x.clamp(0.0, 1.0);
    1.0 - x * x * x * (10.0 - 15.0 * x + 6.0 * x * x)
}

/// Two-bone IK in component space: for a chain with root at `a`, middle
/// at `b` and tip at `c`, and the target `t`, the component-space
/// rotations that take the tip to `t` (its distance from the root clamped
/// into the chain's reach): `root` turns the root joint (and everything
/// under it), `bend` turns the middle joint about the chain's bend axis.
/// New component rotations: root `root * r_a`, middle `root * bend * r_b`.
///
/// Adapted from Daniel Holden, "Simple Two Joint IK" (blog, 2017): the
/// law of cosines on the current and the wanted triangle gives the change
/// of the root's and the middle joint's interior angles, applied about
/// the normal of the plane the chain bends in; then the chain swings about
/// `(c - a) × (t - a)` onto the target. Adopted as is, composed in
/// component space; a straight chain bends about an axis perpendicular to
/// it and +Y (or +X).
pub fn two_bone_ik(a: Vec3, b: Vec3, c: Vec3, t: Vec3) -> (Quat, Quat) {
    let lab = (b - a).length();
    let lcb = (c - b).length();
    let eps = 1e-5;
    if lab.is_nan() || lcb.is_nan() || lab <= eps || lcb <= eps || !t.is_finite() {
        return (Quat::IDENTITY, Quat::IDENTITY);
    }
    let lo = (lab - lcb).abs() + eps;
    let hi = lab + lcb - eps;
    let lat = (t - a).length().clamp(lo.min(hi), hi);
    let angle = |u: Vec3, v: Vec3| {
        u.normalize_or_zero()
            .dot(v.normalize_or_zero())
            .clamp(-1.0, 1.0)
            .acos()
    };
    let cos = |x: f32| x.clamp(-1.0, 1.0).acos();
    let ac_ab0 = angle(c - a, b - a);
    let ba_bc0 = angle(a - b, c - b);
    let ac_at0 = angle(c - a, t - a);
    let ac_ab1 = cos((lcb * lcb - lab * lab - lat * lat) / (-2.0 * lab * lat));
    let ba_bc1 = cos((lat * lat - lab * lab - lcb * lcb) / (-2.0 * lab * lcb));
    let mut axis0 = (c - a).cross(b - a);
    if axis0.length_squared() < 1e-12 {
        axis0 = (c - a).cross(Vec3::Y);
        if axis0.length_squared() < 1e-12 {
            axis0 = (c - a).cross(Vec3::X);
        }
    }
    let axis0 = axis0.normalize_or_zero();
    let axis1 = (c - a).cross(t - a);
    let r0 = Quat::from_axis_angle(axis0, ac_ab1 - ac_ab0);
    let r1 = Quat::from_axis_angle(axis0, ba_bc1 - ba_bc0);
    let r2 = if axis1.length_squared() > 1e-12 {
        Quat::from_axis_angle(axis1.normalize(), ac_at0)
    } else {
        Quat::IDENTITY
    };
    ((r2 * r0).normalize(), r1.normalize())
}
