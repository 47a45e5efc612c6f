//! Velocity error: how far a joint's decoded motion departs from the
//! authored one in speed and direction, not only in place (the seed:
//! "measure position, rotation, and temporal deviation where the content
//! needs it"). A decoded foot can stay within a tenth of a millimetre of
//! its authored place and still jitter at a speed a contact solver or a
//! motion-matching search reads as movement.
//!
//! Measured on joint origins in component space (f64 chains, as the
//! position metric), between consecutive times of a list the caller
//! gives (the clip's samples and its end): the velocity over each
//! interval is the displacement across it over its length, for the
//! reference and the decoded pose alike; the error is the length of their
//! difference, in meters per second.

use crate::{fk64, Scratch};
use glam::DVec3;
use ludus_anim_format::math::Transform;
use ludus_anim_runtime::Skeleton;
use serde::{Deserialize, Serialize};

/// Intervals shorter than this (seconds) are skipped: a velocity over them
/// is rounding.
const MIN_INTERVAL_S: f32 = 1e-5;

/// What the velocity check found for one clip.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct VelocityStats {
    /// Largest velocity error of any joint over any interval, m/s.
    pub max_error_mps: f32,
    pub worst_joint: usize,
    /// Middle of the worst interval.
    pub worst_time_s: f32,
    /// Each joint's largest velocity error, m/s.
    pub per_joint_max_mps: Vec<f32>,
    /// Intervals measured.
    pub intervals: usize,
}

/// Velocity errors over the intervals between consecutive `times`
/// (ascending). `poses(t, expected, actual)` fills both local poses
/// (false: `actual` could not be produced, an infinite error).
pub fn velocity_errors(
    skeleton: &Skeleton,
    times: &[f32],
    mut poses: impl FnMut(f32, &mut [Transform], &mut [Transform]) -> bool,
) -> VelocityStats {
    let n = skeleton.joint_count();
    let mut stats = VelocityStats {
        per_joint_max_mps: vec![0.0; n],
        ..VelocityStats::default()
    };
    let mut scratch = Scratch::new(n);
    let (mut expected, mut actual) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    let mut before: Option<(f32, Vec<DVec3>, Vec<DVec3>, bool)> = None;
    for &t in times {
        let ok = poses(t, &mut expected, &mut actual);
        fk64(skeleton.parents(), &expected, &mut scratch.a);
        fk64(skeleton.parents(), &actual, &mut scratch.b);
        let (pe, pa): (Vec<DVec3>, Vec<DVec3>) = scratch
            .a
            .iter()
            .zip(&scratch.b)
            .map(|(e, a)| (e.translation, a.translation))
            .unzip();
        if let Some((t0, pe0, pa0, ok0)) = &before {
            let dt = t - t0;
            if dt >= MIN_INTERVAL_S {
                let at = 0.5 * (t + t0);
                interval(&mut stats, dt, at, ok && *ok0, (pe0, &pe), (pa0, &pa));
            }
        }
        before = Some((t, pe, pa, ok));
    }
    stats
}

/// Fold one interval's errors into `stats`.
fn interval(
    stats: &mut VelocityStats,
    dt: f32,
    at: f32,
    ok: bool,
    expected: (&[DVec3], &[DVec3]),
    actual: (&[DVec3], &[DVec3]),
) {
    stats.intervals += 1;
    let inv = 1.0 / dt as f64;
    for j in 0..stats.per_joint_max_mps.len() {
        let e = if ok {
            let ve = (expected.1[j] - expected.0[j]) * inv;
            let va = (actual.1[j] - actual.0[j]) * inv;
            let e = (va - ve).length() as f32;
            if e.is_finite() {
                e
            } else {
                f32::INFINITY
            }
        } else {
            f32::INFINITY
        };
        stats.per_joint_max_mps[j] = stats.per_joint_max_mps[j].max(e);
        if e > stats.max_error_mps {
            stats.max_error_mps = e;
            stats.worst_joint = j;
            stats.worst_time_s = at;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_format::math::Vec3;
    use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};

    fn skeleton() -> Skeleton {
        Skeleton::new(
            vec![NO_PARENT, 0],
            vec![JointId(1), JointId(2)],
            vec![Transform::IDENTITY; 2],
            vec!["root".into(), "child".into()],
        )
        .unwrap()
    }

    /// The child moves at 1 m/s along x; the decoded child lags a constant
    /// 1 mm (no velocity error) or jitters ±1 mm every 0.1 s (0.02 m/s).
    #[test]
    fn a_constant_offset_has_no_velocity_error_and_jitter_has() {
        let sk = skeleton();
        let times: Vec<f32> = (0..=10).map(|i| i as f32 * 0.1).collect();
        let run = |jitter: bool| {
            velocity_errors(&sk, &times, |t, e, a| {
                e[1].translation = Vec3::new(t, 0.0, 0.0);
                let k = (t * 10.0).round() as i32;
                let off = if jitter && k % 2 == 1 { 0.001 } else { -0.001 };
                a[1].translation = Vec3::new(t + off, 0.0, 0.0);
                true
            })
        };
        let steady = run(false);
        assert_eq!(steady.intervals, 10);
        assert!(steady.max_error_mps < 1e-4, "{steady:?}");
        let jittery = run(true);
        assert!((jittery.max_error_mps - 0.02).abs() < 1e-4, "{jittery:?}");
        assert_eq!(jittery.worst_joint, 1);
        assert_eq!(jittery.per_joint_max_mps[0], 0.0);
    }

    #[test]
    fn a_failed_decode_is_an_infinite_error() {
        let sk = skeleton();
        let s = velocity_errors(&sk, &[0.0, 0.5, 1.0], |t, _, _| t < 0.9);
        assert!(s.max_error_mps.is_infinite());
        assert_eq!(s.worst_time_s, 0.75);
    }
}
