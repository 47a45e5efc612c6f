//! Pose math in the seed's conventions: right-handed, +Y up, meters, column
//! vectors, Hamilton quaternions stored (x, y, z, w), parent-before-local
//! composition. Component transforms are full affine matrices so that
//! non-uniform scale under rotation keeps its shear instead of being
//! silently decomposed back into TRS.

pub use glam::{Affine3A, Mat3A, Quat, Vec3, Vec3A};

/// Smallest scale component accepted anywhere in a pose (a skeleton's rest
/// pose, an imported source); below it a transform is treated as singular.
pub const MIN_SCALE: f32 = 1e-6;

/// A parent-relative joint transform: translation, unit rotation and
/// strictly positive scale. This is the canonical local pose value.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Transform {
    pub rotation: Quat,
    pub translation: Vec3,
    pub scale: Vec3,
}

impl Transform {
    pub const IDENTITY: Transform = Transform {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
        scale: Vec3::ONE,
    };

    #[inline]
    pub fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Transform {
            rotation,
            translation,
            scale,
        }
    }

    /// The affine matrix `T * R * S` (column vectors: scale first).
    #[inline]
    pub fn to_affine(&self) -> Affine3A {
        Affine3A::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    #[inline]
    pub fn is_finite(&self) -> bool {
        self.rotation.is_finite() && self.translation.is_finite() && self.scale.is_finite()
    }

    /// The ten stored values in the order every Ludus layout uses:
    /// rotation x y z w, translation x y z, scale x y z.
    #[inline]
    pub fn to_array(&self) -> [f32; 10] {
        let (r, t, s) = (self.rotation, self.translation, self.scale);
        [r.x, r.y, r.z, r.w, t.x, t.y, t.z, s.x, s.y, s.z]
    }
}

impl Default for Transform {
    fn default() -> Self {
        Transform::IDENTITY
    }
}

/// Normalized linear interpolation along the shorter arc: the runtime's only
/// rotation blend between samples (seed: "NlerpShortest"). Falls back to `a`
/// if the blend degenerates (antipodal inputs cannot occur after the sign
/// flip, so this only guards non-finite input).
#[inline]
pub fn nlerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let q = Quat::from_xyzw(
        a.x + (b.x - a.x) * t,
        a.y + (b.y - a.y) * t,
        a.z + (b.z - a.z) * t,
        a.w + (b.w - a.w) * t,
    );
    let len2 = q.length_squared();
    if len2 > 1e-12 && len2.is_finite() {
        q * len2.sqrt().recip()
    } else {
        a
    }
}

/// Spherical interpolation along the shorter arc, used where an authored
/// format promises constant angular speed (glTF LINEAR rotation keys) and by
/// the additive convention. Not used by the runtime sampler.
#[inline]
pub fn slerp_shortest(a: Quat, b: Quat, t: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    let d = a.dot(b).clamp(-1.0, 1.0);
    if d > 0.9995 {
        return nlerp_shortest(a, b, t);
    }
    let theta = d.acos();
    let s = theta.sin();
    let wa = ((1.0 - t) * theta).sin() / s;
    let wb = (t * theta).sin() / s;
    (a * wa + b * wb).normalize()
}

/// Blend two local transforms the way the runtime sampler does: lerp
/// translation and scale, hemisphere-corrected nlerp rotation.
#[inline]
pub fn interpolate(a: &Transform, b: &Transform, t: f32) -> Transform {
    Transform {
        rotation: nlerp_shortest(a.rotation, b.rotation, t),
        translation: a.translation.lerp(b.translation, t),
        scale: a.scale.lerp(b.scale, t),
    }
}

/// Virtual-vertex error between two component-space transforms: the
/// largest distance between the images of the six points at `shell`
/// meters on both sides of each of the joint's local axes (±x, ±y, ±z).
/// Vertices on both sides bound the joint origin too: its displacement is
/// the mean of two opposite vertices' (ACL's three vertices on the positive
/// axes can all stay within a threshold while the origin moves up to
/// about 1.07 times as far). Full affine matrices, so shear from
/// non-uniform scale under rotation is measured, not ignored.
///
/// With `d` the origin's displacement and `a` an axis column difference,
/// `|d ± s a|^2 = |d|^2 + s^2 |a|^2 ± 2 s (d . a)`: the larger of each pair
/// takes `|d . a|`.
///
/// Adapted idea: Nicholas Frechette, ACL documentation "Error metrics"
/// (virtual vertices at a shell distance, measured in object space).
#[inline]
pub fn virtual_vertex_error(reference: &Affine3A, other: &Affine3A, shell: f32) -> f32 {
    let dt = reference.translation - other.translation;
    let m = reference.matrix3 - other.matrix3;
    let d2 = dt.length_squared();
    let e = |a: Vec3A| d2 + shell * shell * a.length_squared() + 2.0 * shell * dt.dot(a).abs();
    e(m.x_axis).max(e(m.y_axis)).max(e(m.z_axis)).sqrt()
}

/// Angle in radians between two rotations, ignoring quaternion sign.
#[inline]
pub fn rotation_angle(a: Quat, b: Quat) -> f32 {
    let d = a.dot(b).abs().min(1.0);
    2.0 * d.acos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nlerp_takes_short_arc_across_sign_flip() {
        let a = Quat::from_rotation_y(0.1);
        let b = -Quat::from_rotation_y(0.3);
        let m = nlerp_shortest(a, b, 0.5);
        assert!(rotation_angle(m, Quat::from_rotation_y(0.2)) < 1e-4);
    }

    #[test]
    fn slerp_matches_constant_speed() {
        let a = Quat::IDENTITY;
        let b = Quat::from_rotation_z(2.0);
        let m = slerp_shortest(a, b, 0.25);
        assert!(rotation_angle(m, Quat::from_rotation_z(0.5)) < 1e-5);
    }

    #[test]
    fn virtual_vertex_error_sees_rotation_and_translation() {
        let a = Transform::IDENTITY.to_affine();
        let b = Transform::new(Vec3::new(0.001, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE).to_affine();
        assert!((virtual_vertex_error(&a, &b, 0.03) - 0.001).abs() < 1e-7);
        let c = Transform::new(Vec3::ZERO, Quat::from_rotation_z(0.01), Vec3::ONE).to_affine();
        let e = virtual_vertex_error(&a, &c, 0.03);
        assert!((e - 0.03 * 2.0 * (0.005f32).sin()).abs() < 1e-6);
    }

    #[test]
    fn affine_keeps_nonuniform_scale_order() {
        let t = Transform::new(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            Vec3::new(2.0, 1.0, 1.0),
        );
        let p = t.to_affine().transform_point3(Vec3::X);
        // scale x2 -> (2,0,0), rotate 90 deg about z -> (0,2,0), translate.
        assert!((p - Vec3::new(1.0, 4.0, 3.0)).length() < 1e-5);
    }
}
