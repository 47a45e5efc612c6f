//! Platform-independent scalar math used by the generator.
//!
//! The committed fixture must be byte-identical on every machine that runs the
//! generator (CI compares it bit for bit). `f64::sin`/`cos` call the platform
//! libm, whose last-bit results differ between glibc, musl, macOS and Windows,
//! so the generator never calls them. Instead it evaluates its own series using
//! only IEEE-754 basic operations (`+ - * /`, `sqrt`, `round`), which are
//! correctly rounded and therefore reproducible everywhere. glam's `f64` types
//! are scalar (no SIMD), so their arithmetic is equally reproducible as long as
//! we avoid the glam constructors that call libm (`from_axis_angle`,
//! `from_rotation_*`): use [`quat_axis_angle`] and friends instead.

use glam::{DQuat, DVec3};
use std::f64::consts::{FRAC_PI_2, PI, TAU};

/// Deterministic sine, accurate to a few ulp for the small arguments used here.
pub fn sin(x: f64) -> f64 {
    // Reduce to [-pi, pi], then fold into [-pi/2, pi/2] where the series
    // converges fast. Arguments here stay below ~100 rad, so the reduction with
    // a rounded TAU costs at most ~1e-14 absolute error, far below f32 output
    // precision.
    let mut r = x - (x / TAU).round() * TAU;
    if r > FRAC_PI_2 {
        r = PI - r;
    } else if r < -FRAC_PI_2 {
        r = -PI - r;
    }
    // Taylor series in Horner form:
    // sin r = r (1 - r^2/(2*3) (1 - r^2/(4*5) (1 - ...))).
    // Eleven factors put the truncation error below 1e-18 on [-pi/2, pi/2].
    let r2 = r * r;
    let mut acc = 1.0;
    for k in (1..=11u32).rev() {
        let denom = f64::from(2 * k) * f64::from(2 * k + 1);
        acc = 1.0 - r2 / denom * acc;
    }
    r * acc
}

/// Deterministic cosine (see [`sin`]).
pub fn cos(x: f64) -> f64 {
    sin(x + FRAC_PI_2)
}

/// Unit quaternion for a rotation of `angle` radians about the unit `axis`.
pub fn quat_axis_angle(axis: DVec3, angle: f64) -> DQuat {
    let half = 0.5 * angle;
    let s = sin(half);
    DQuat::from_xyzw(axis.x * s, axis.y * s, axis.z * s, cos(half))
}

/// Rotation about the X axis (pitch; for this Y-up, +Z-forward rig a positive
/// angle tips +Y towards +Z).
pub fn rx(angle: f64) -> DQuat {
    quat_axis_angle(DVec3::X, angle)
}

/// Rotation about the Y axis (yaw).
pub fn ry(angle: f64) -> DQuat {
    quat_axis_angle(DVec3::Y, angle)
}

/// Rotation about the Z axis (roll; a positive angle tips +X towards +Y).
pub fn rz(angle: f64) -> DQuat {
    quat_axis_angle(DVec3::Z, angle)
}

/// Mirrors a local rotation across the character's sagittal (YZ) plane, so a
/// pose authored for the left limbs can be reused for the right ones.
/// Reflecting x -> -x maps a rotation about axis (x, y, z) by angle a to a
/// rotation about (x, -y, -z) by the same angle.
pub fn mirror_rotation(q: DQuat) -> DQuat {
    DQuat::from_xyzw(q.x, -q.y, -q.z, q.w)
}

/// `0.5 - 0.5 cos(theta)`: a smooth 0..1..0 pulse over one period, used for
/// breathing and knee flexion.
pub fn pulse(theta: f64) -> f64 {
    0.5 - 0.5 * cos(theta)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trig_matches_libm_closely() {
        // libm is only the oracle here; the generator never calls it.
        let mut x = -60.0;
        while x < 60.0 {
            assert!((sin(x) - x.sin()).abs() < 1e-13, "sin({x})");
            assert!((cos(x) - x.cos()).abs() < 1e-13, "cos({x})");
            x += 0.0137;
        }
    }

    #[test]
    fn axis_angle_is_unit_and_matches_glam() {
        for i in 0..50 {
            let a = -3.0 + f64::from(i) * 0.13;
            let q = quat_axis_angle(DVec3::new(0.0, 0.6, 0.8), a);
            assert!((q.length() - 1.0).abs() < 1e-14);
            let g = DQuat::from_axis_angle(DVec3::new(0.0, 0.6, 0.8), a);
            assert!(q.abs_diff_eq(g, 1e-13));
        }
    }

    #[test]
    fn mirror_reflects_rotation_axis() {
        let v = DVec3::new(0.3, -0.2, 0.9);
        let q = rx(0.4) * ry(-0.7) * rz(1.1);
        let reflect = |p: DVec3| DVec3::new(-p.x, p.y, p.z);
        let a = reflect(q * v);
        let b = mirror_rotation(q) * reflect(v);
        assert!(a.abs_diff_eq(b, 1e-12));
    }
}
