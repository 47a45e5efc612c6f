//! Trajectory extraction, cook side: the root-motion trajectory is
//! normalized so its first key is the identity, and the planar policy keeps
//! ground-plane translation and heading.

use crate::math::{Quat, Vec3};
use crate::rigid::RigidTransform;

/// Normalize trajectory keys in place so key 0 becomes the
/// identity (`key_i := inverse(key_0) * key_i`) and return the removed
/// reference offset `key_0` for the package to store explicitly.
pub fn normalize_trajectory(keys: &mut [RigidTransform]) -> RigidTransform {
    let Some(first) = keys.first().copied() else {
        return RigidTransform::IDENTITY;
    };
    let inv = first.inverse();
    for k in keys.iter_mut() {
        *k = inv.compose(k);
    }
    if let Some(k0) = keys.first_mut() {
        *k0 = RigidTransform::IDENTITY;
    }
    first
}

/// Cook-time (feature `cook`), "planar" motion policy: keep the ground-plane translation
/// (x, z; y = 0) and the heading (rotation about +Y) of a motion root.
pub fn extract_planar(root_world: RigidTransform) -> RigidTransform {
    let t = root_world.translation;
    RigidTransform {
        rotation: yaw_twist(root_world.rotation),
        translation: Vec3::new(t.x, 0.0, t.z),
    }
}

/// The twist of `q` about +Y in a swing-twist decomposition
/// `q = swing * twist` (swing axis in the XZ plane, twist about Y).
///
/// Method: project the quaternion onto the Y rotation subspace, i.e. keep
/// `(0, q.y, 0, q.w)` and normalize. This is singular when
/// `q.y^2 + q.w^2 ~ 0`, i.e. the swing is a 180-degree turn about a
/// horizontal axis (the root is upside down) and the heading is
/// genuinely ambiguous. There `q ~ (x, 0, z, 0)`, which factors exactly as
/// `swing_X(180) * twist_Y(theta)` with `(x, z) = (cos theta/2,
/// sin theta/2)`; we pick that swing-about-+X convention, giving the twist
/// `(0, z, 0, x)` normalized. Sign is canonicalized to `w >= 0`.
/// Non-finite input gives the identity.
pub fn yaw_twist(q: Quat) -> Quat {
    if !q.is_finite() {
        return Quat::IDENTITY;
    }
    let yw = q.y * q.y + q.w * q.w;
    let twist = if yw > 1e-10 {
        Quat::from_xyzw(0.0, q.y, 0.0, q.w) * yw.sqrt().recip()
    } else {
        let xz = q.x * q.x + q.z * q.z;
        if xz > 1e-20 {
            Quat::from_xyzw(0.0, q.z, 0.0, q.x) * xz.sqrt().recip()
        } else {
            Quat::IDENTITY
        }
    };
    if twist.w < 0.0 {
        -twist
    } else {
        twist
    }
}
