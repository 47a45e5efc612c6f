//! Authored curves, evaluated exactly as their source format defines them.
//! The resampling stage compares the runtime's interpolation against these,
//! so their semantics must be the source's, not the runtime's:
//! LINEAR rotation is slerp (glTF), CUBICSPLINE is cubic Hermite with the
//! stored tangents scaled by the key interval (glTF 2.0 spec, Appendix C).

use ludus_anim_format::math::{slerp_shortest, Quat, Vec3};
use serde::{Deserialize, Serialize};

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Interpolation {
    /// Hold each key's value until the next key.
    Step,
    /// Linear for vectors and scalars; spherical (slerp) for rotations.
    Linear,
    /// Cubic Hermite with per-key in/out tangents (units per second).
    CubicSpline,
}

/// One key. Tangents are only read for [`Interpolation::CubicSpline`].
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Key<T> {
    pub time: f32,
    pub value: T,
    pub in_tangent: T,
    pub out_tangent: T,
}

/// Values a curve can hold.
pub trait CurveValue: Copy {
    fn zero() -> Self;
    fn linear(a: Self, b: Self, t: f32) -> Self;
    /// Cubic Hermite: `p0, m0` at the start, `p1, m1` at the end, tangents
    /// already multiplied by the interval length.
    fn hermite(p0: Self, m0: Self, p1: Self, m1: Self, t: f32) -> Self;
    fn is_finite(&self) -> bool;
    /// Plain multiplication by a scalar (tangent scaling).
    fn scale(self, s: f32) -> Self;
}

fn hermite_weights(t: f32) -> [f32; 4] {
    let t2 = t * t;
    let t3 = t2 * t;
    [
        2.0 * t3 - 3.0 * t2 + 1.0,
        t3 - 2.0 * t2 + t,
        -2.0 * t3 + 3.0 * t2,
        t3 - t2,
    ]
}

impl CurveValue for f32 {
    fn zero() -> Self {
        0.0
    }
    fn linear(a: f32, b: f32, t: f32) -> f32 {
        a + (b - a) * t
    }
    fn hermite(p0: f32, m0: f32, p1: f32, m1: f32, t: f32) -> f32 {
        let w = hermite_weights(t);
        w[0] * p0 + w[1] * m0 + w[2] * p1 + w[3] * m1
    }
    fn is_finite(&self) -> bool {
        f32::is_finite(*self)
    }
    fn scale(self, s: f32) -> f32 {
        self * s
    }
}

impl CurveValue for Vec3 {
    fn zero() -> Self {
        Vec3::ZERO
    }
    fn linear(a: Vec3, b: Vec3, t: f32) -> Vec3 {
        a.lerp(b, t)
    }
    fn hermite(p0: Vec3, m0: Vec3, p1: Vec3, m1: Vec3, t: f32) -> Vec3 {
        let w = hermite_weights(t);
        p0 * w[0] + m0 * w[1] + p1 * w[2] + m1 * w[3]
    }
    fn is_finite(&self) -> bool {
        Vec3::is_finite(*self)
    }
    fn scale(self, s: f32) -> Vec3 {
        self * s
    }
}

impl CurveValue for Quat {
    fn zero() -> Self {
        Quat::from_xyzw(0.0, 0.0, 0.0, 0.0)
    }
    fn linear(a: Quat, b: Quat, t: f32) -> Quat {
        slerp_shortest(a, b, t)
    }
    /// Component-wise Hermite, then normalized (glTF's definition).
    fn hermite(p0: Quat, m0: Quat, p1: Quat, m1: Quat, t: f32) -> Quat {
        let w = hermite_weights(t);
        let q = p0 * w[0] + m0 * w[1] + p1 * w[2] + m1 * w[3];
        let l = q.length();
        if l > 1e-12 && l.is_finite() {
            q / l
        } else {
            p0
        }
    }
    fn is_finite(&self) -> bool {
        Quat::is_finite(*self)
    }
    fn scale(self, s: f32) -> Quat {
        self * s
    }
}

/// A keyed curve. Keys are sorted by strictly increasing time (importers
/// validate this); evaluation before the first key holds the first value,
/// after the last key holds the last.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(bound(serialize = "T: Serialize", deserialize = "T: Deserialize<'de>"))]
pub struct Curve<T> {
    pub interpolation: Interpolation,
    pub keys: Vec<Key<T>>,
}

impl<T: CurveValue> Curve<T> {
    pub fn new(interpolation: Interpolation, keys: Vec<Key<T>>) -> Self {
        Curve {
            interpolation,
            keys,
        }
    }

    /// A curve from plain (time, value) pairs.
    pub fn from_values(interpolation: Interpolation, times: &[f32], values: &[T]) -> Self {
        let keys = times
            .iter()
            .zip(values)
            .map(|(&time, &value)| Key {
                time,
                value,
                in_tangent: T::zero(),
                out_tangent: T::zero(),
            })
            .collect();
        Curve {
            interpolation,
            keys,
        }
    }

    /// A single-key curve holding `value`.
    pub fn constant(value: T) -> Self {
        Self::from_values(Interpolation::Step, &[0.0], &[value])
    }

    pub fn start_time(&self) -> f32 {
        self.keys.first().map(|k| k.time).unwrap_or(0.0)
    }
    pub fn end_time(&self) -> f32 {
        self.keys.last().map(|k| k.time).unwrap_or(0.0)
    }

    /// Evaluate at time `t` with the curve's own interpolation.
    /// Returns `None` only for a curve with no keys.
    pub fn evaluate(&self, t: f32) -> Option<T> {
        let keys = &self.keys;
        let first = keys.first()?;
        let last = keys.last()?;
        if keys.len() == 1 || t.is_nan() || t <= first.time {
            return Some(first.value);
        }
        if t >= last.time {
            return Some(last.value);
        }
        // First key with time > t; t is strictly inside (first, last).
        let hi = keys
            .partition_point(|k| k.time <= t)
            .clamp(1, keys.len() - 1);
        let k0 = &keys[hi - 1];
        let k1 = &keys[hi];
        let dt = k1.time - k0.time;
        if dt.is_nan() || dt <= 0.0 {
            return Some(k1.value);
        }
        let u = ((t - k0.time) / dt).clamp(0.0, 1.0);
        Some(match self.interpolation {
            Interpolation::Step => k0.value,
            Interpolation::Linear => T::linear(k0.value, k1.value, u),
            Interpolation::CubicSpline => {
                let m0 = k0.out_tangent.scale(dt);
                let m1 = k1.in_tangent.scale(dt);
                T::hermite(k0.value, m0, k1.value, m1, u)
            }
        })
    }

    /// Index of the first key whose time is not after the previous one, or
    /// whose value or tangents are not finite; `None` if the curve is sound.
    pub fn first_bad_key(&self) -> Option<(usize, &'static str)> {
        for (i, k) in self.keys.iter().enumerate() {
            if !k.time.is_finite() {
                return Some((i, "non-finite key time"));
            }
            if !k.value.is_finite() || !k.in_tangent.is_finite() || !k.out_tangent.is_finite() {
                return Some((i, "non-finite key value"));
            }
            if i > 0 && k.time <= self.keys[i - 1].time {
                return Some((i, "key times not strictly increasing"));
            }
        }
        None
    }

    /// Shift every key time by `-offset` (clips start at zero after import).
    pub fn shift(&mut self, offset: f32) {
        for k in &mut self.keys {
            k.time -= offset;
        }
    }

    /// Apply `f` to every value and tangent (unit scaling, axis changes).
    pub fn map_values(&mut self, mut f: impl FnMut(T) -> T) {
        for k in &mut self.keys {
            k.value = f(k.value);
            k.in_tangent = f(k.in_tangent);
            k.out_tangent = f(k.out_tangent);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn linear_vec3_and_clamping() {
        let c = Curve::from_values(
            Interpolation::Linear,
            &[0.0, 1.0],
            &[Vec3::ZERO, Vec3::new(2.0, 0.0, 0.0)],
        );
        assert_eq!(c.evaluate(0.25), Some(Vec3::new(0.5, 0.0, 0.0)));
        assert_eq!(c.evaluate(-1.0), Some(Vec3::ZERO));
        assert_eq!(c.evaluate(3.0), Some(Vec3::new(2.0, 0.0, 0.0)));
    }

    #[test]
    fn step_holds_previous_key() {
        let c = Curve::from_values(Interpolation::Step, &[0.0, 1.0, 2.0], &[1.0f32, 2.0, 3.0]);
        assert_eq!(c.evaluate(0.99), Some(1.0));
        assert_eq!(c.evaluate(1.0), Some(2.0));
    }

    #[test]
    fn cubic_uses_tangents_scaled_by_interval() {
        // p(t) on [0, 2] with p0=0, p1=0, out tangent 1/s, in tangent 0:
        // m0 = 2, at u=0.5: (u^3 - 2u^2 + u) * 2 = 0.25.
        let keys = vec![
            Key {
                time: 0.0,
                value: 0.0f32,
                in_tangent: 0.0,
                out_tangent: 1.0,
            },
            Key {
                time: 2.0,
                value: 0.0f32,
                in_tangent: 0.0,
                out_tangent: 0.0,
            },
        ];
        let c = Curve::new(Interpolation::CubicSpline, keys);
        assert!((c.evaluate(1.0).unwrap() - 0.25).abs() < 1e-6);
    }

    #[test]
    fn linear_rotation_is_slerp() {
        let c = Curve::from_values(
            Interpolation::Linear,
            &[0.0, 1.0],
            &[Quat::IDENTITY, Quat::from_rotation_x(2.5)],
        );
        let q = c.evaluate(0.5).unwrap();
        assert!(q.angle_between(Quat::from_rotation_x(1.25)) < 1e-4);
    }

    #[test]
    fn bad_keys_are_found() {
        let c = Curve::from_values(Interpolation::Linear, &[0.0, 0.0], &[1.0f32, 2.0]);
        assert_eq!(c.first_bad_key().map(|b| b.0), Some(1));
        let c = Curve::from_values(Interpolation::Linear, &[0.0, 1.0], &[1.0f32, f32::NAN]);
        assert_eq!(c.first_bad_key().map(|b| b.0), Some(1));
    }
}
