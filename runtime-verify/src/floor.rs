//! The f32 floor of a clip: how far the runtime's own f32 arithmetic moves
//! the virtual vertices, whatever the codec does.
//!
//! A decoded rotation is an f32 quaternion normalized in f32 (`nlerp`):
//! its length is 1 only to a few ulps, and the rotation matrix of a
//! quaternion of length `1 + d` is `R + 2d (I - R)` to first order, so a
//! joint whose vertices lie `r` meters from its parent's origin moves them
//! by up to about `4 d r`; every joint up the chain adds its share, and
//! translations are rounded to their own ulp. On a rig a meter or two from
//! the origin this is a fraction of a micrometre; on a rig 50 to 70 m
//! from the origin (a character authored in centimetres and declared in
//! meters) it is tens of micrometres, and it changes from one time to the
//! next (measured on the Khronos Fox: the error swings by ±0.03 mm within
//! 100 µs). Checked times alone cannot bound it, so it is measured per
//! clip ([`f32_floor`]) and budgeted: the encoder aims that far below each
//! threshold, and the report adds it to what verification measured.

use crate::{fk64, Scratch};
use glam::{DAffine3, DQuat};
use ludus_anim_format::math::{interpolate, Transform};
use ludus_anim_runtime::Skeleton;

/// Blend factors probed in every interval (0 is the normalization of a
/// sample alone, what the runtime outputs at a sample time).
const PROBES: [f32; 6] = [0.0, 0.137, 0.25, 0.5, 0.671, 0.875];

/// At most this many probed poses per clip (long clips probe a stride of
/// their intervals).
const MAX_PROBES: usize = 6_000;

/// The allowance is this many times the largest one-sided noise the
/// probes find. Measured on the three Khronos Fox clips (joints 50-70 m
/// from the origin; one-sided noise 0.029, 0.037 and 0.035 mm): over
/// 20,000 evenly spread times the worst decoded error exceeded the worst
/// at the checked times by 0.015, 0.026 and 0.020 mm, 0.5 to 0.75 times
/// the noise; so the noise itself, once.
pub const FLOOR_FACTOR: f32 = 1.0;

/// The exact (f64) blend of two f32 samples, as the runtime would compute
/// it with real numbers: nlerp on the shorter arc, lerp.
fn exact_blend(a: &Transform, b: &Transform, alpha: f64) -> DAffine3 {
    let qa = a.rotation.as_dquat();
    let mut qb = b.rotation.as_dquat();
    if qa.dot(qb) < 0.0 {
        qb = -qb;
    }
    let q: DQuat = (qa * (1.0 - alpha) + qb * alpha).normalize();
    let t = a
        .translation
        .as_dvec3()
        .lerp(b.translation.as_dvec3(), alpha);
    let s = a.scale.as_dvec3().lerp(b.scale.as_dvec3(), alpha);
    DAffine3::from_scale_rotation_translation(s, q, t)
}

/// The clip's f32 allowance (meters): [`FLOOR_FACTOR`] × the largest
/// vertex error between the runtime's f32 blend of `samples` (pose-major,
/// `num_samples` poses) and the exact blend, over probed blend factors of
/// every interval, in component space with the project's metric.
pub fn f32_floor(
    skeleton: &Skeleton,
    samples: &[Transform],
    num_samples: u32,
    shells: &[f32],
) -> f32 {
    let j = skeleton.joint_count();
    let n = num_samples as usize;
    if j == 0 || n == 0 || samples.len() != n * j || shells.len() != j {
        return 0.0;
    }
    let parents = skeleton.parents();
    let intervals = n.saturating_sub(1).max(1);
    let stride = (intervals * PROBES.len()).div_ceil(MAX_PROBES).max(1);
    let mut scratch = Scratch::new(j);
    let mut blended = vec![Transform::IDENTITY; j];
    let mut worst = 0.0f64;
    for i in (0..intervals).step_by(stride) {
        let (a, b) = (
            &samples[i * j..(i + 1) * j],
            &samples[(i + 1).min(n - 1) * j..],
        );
        for &alpha in &PROBES {
            for k in 0..j {
                blended[k] = interpolate(&a[k], &b[k], alpha);
                let m = exact_blend(&a[k], &b[k], alpha as f64);
                let p = parents[k] as usize;
                scratch.a[k] = if p < k { scratch.a[p] * m } else { m };
            }
            fk64(parents, &blended, &mut scratch.b);
            for (k, &shell) in shells.iter().enumerate() {
                let e = crate::virtual_vertex_error64(&scratch.a[k], &scratch.b[k], shell as f64);
                if e.is_finite() {
                    worst = worst.max(e);
                }
            }
        }
    }
    (worst * FLOOR_FACTOR as f64) as f32
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_format::math::{Quat, Vec3};
    use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};

    fn chain(reach: f32) -> Skeleton {
        Skeleton::new(
            vec![NO_PARENT, 0, 1],
            vec![JointId(1), JointId(2), JointId(3)],
            vec![
                Transform::IDENTITY,
                Transform::new(Vec3::new(0.0, reach, 0.0), Quat::IDENTITY, Vec3::ONE),
                Transform::new(Vec3::new(0.0, reach, 0.0), Quat::IDENTITY, Vec3::ONE),
            ],
            vec!["a".into(), "b".into(), "c".into()],
        )
        .unwrap()
    }

    fn clip(reach: f32) -> Vec<Transform> {
        (0..8)
            .flat_map(|i| {
                let q =
                    Quat::from_rotation_z(0.3 * i as f32) * Quat::from_rotation_x(0.1 * i as f32);
                let t = Transform::new(Vec3::new(0.0, reach, 0.0), q, Vec3::ONE);
                [Transform::new(Vec3::ZERO, q, Vec3::ONE), t, t]
            })
            .collect()
    }

    #[test]
    fn the_floor_grows_with_the_distance_from_the_origin() {
        let near = f32_floor(&chain(0.5), &clip(0.5), 8, &[0.03; 3]);
        let far = f32_floor(&chain(50.0), &clip(50.0), 8, &[0.03; 3]);
        assert!(near < 1e-6, "{near}");
        assert!(far > 30.0 * near && far > 1e-6, "{near} {far}");
    }
}
