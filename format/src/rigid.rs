//! Rigid transforms (rotation then translation, no scale): the root-motion
//! trajectory value, shared by the runtime's trajectory queries and the
//! cooker's trajectory extraction.

use crate::math::{Quat, Transform, Vec3};
use std::ops::Mul;

/// A rotation followed by a translation (no scale): the trajectory value.
///
/// Composition follows column vectors: `a * b` applies `b` first, then `a`:
/// `(Ra, ta) * (Rb, tb) = (Ra Rb, ta + Ra tb)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidTransform {
    pub rotation: Quat,
    pub translation: Vec3,
}

impl RigidTransform {
    pub const IDENTITY: RigidTransform = RigidTransform {
        rotation: Quat::IDENTITY,
        translation: Vec3::ZERO,
    };

    #[inline]
    pub fn new(rotation: Quat, translation: Vec3) -> Self {
        RigidTransform {
            rotation,
            translation,
        }
    }

    /// The rigid part of a local transform (scale dropped).
    #[inline]
    pub fn from_transform(t: &Transform) -> Self {
        RigidTransform {
            rotation: t.rotation,
            translation: t.translation,
        }
    }

    /// `(R, t)^-1 = (R^-1, -(R^-1 t))`; `R` is assumed unit.
    #[inline]
    pub fn inverse(&self) -> Self {
        let r = self.rotation.conjugate();
        RigidTransform {
            rotation: r,
            translation: -(r * self.translation),
        }
    }

    /// `self * rhs` (apply `rhs` first). The rotation is renormalized so
    /// long chains of compositions stay unit length.
    #[inline]
    pub fn compose(&self, rhs: &RigidTransform) -> Self {
        RigidTransform {
            rotation: renormalize(self.rotation * rhs.rotation),
            translation: self.translation + self.rotation * rhs.translation,
        }
    }

    /// `self^n` by exponentiation by squaring: `O(log n)` compositions, so
    /// any cycle count costs at most 64 squarings.
    #[inline]
    pub fn pow(&self, mut n: u64) -> Self {
        let mut result = RigidTransform::IDENTITY;
        let mut base = *self;
        while n > 0 {
            if n & 1 == 1 {
                result = result.compose(&base);
            }
            n >>= 1;
            if n > 0 {
                base = base.compose(&base);
            }
        }
        result
    }

    #[inline]
    pub fn transform_point(&self, p: Vec3) -> Vec3 {
        self.translation + self.rotation * p
    }

    #[inline]
    pub fn transform_vector(&self, v: Vec3) -> Vec3 {
        self.rotation * v
    }

    #[inline]
    pub fn is_finite(&self) -> bool {
        self.rotation.is_finite() && self.translation.is_finite()
    }
}

impl Default for RigidTransform {
    fn default() -> Self {
        RigidTransform::IDENTITY
    }
}

impl Mul for RigidTransform {
    type Output = RigidTransform;
    #[inline]
    fn mul(self, rhs: RigidTransform) -> RigidTransform {
        self.compose(&rhs)
    }
}

#[inline]
fn renormalize(q: Quat) -> Quat {
    let len2 = q.length_squared();
    if len2 > 1e-12 && len2.is_finite() {
        q * len2.sqrt().recip()
    } else {
        Quat::IDENTITY
    }
}
