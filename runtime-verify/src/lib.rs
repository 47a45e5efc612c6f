//! Verification: decode cooked clips through the runtime's own package
//! view and decoder, and measure how far the result is from a reference in
//! component space, on virtual vertices at each joint's shell distance.
//!
//! Invariants: this crate never decodes by any other path than
//! `ludus_anim_runtime` (what it measures is what the game gets); it never
//! writes files.
//!
//! Error metric adapted from Nicholas Frechette's ACL documentation ("Error
//! metrics"): virtual vertices at a shell distance in object space, parents
//! decompressed. Departure: full affine matrices for every joint (no QVV
//! shortcut), matching Ludus's affine composition when scale shears.

#![forbid(unsafe_code)]

pub mod floor;
pub mod times;
pub mod velocity;

pub use floor::{f32_floor, FLOOR_FACTOR};
pub use times::{
    check_plan, golden_max, CheckTimes, Grid, TimeCounts, CODEC_FRACTIONS, SOURCE_FRACTIONS,
};
pub use velocity::{velocity_errors, VelocityStats};

use glam::{DAffine3, DQuat, DVec3};
use ludus_anim_format::math::{rotation_angle, Quat, Transform};
use ludus_anim_runtime::package::Clip;
use ludus_anim_runtime::{Player, Request, Skeleton};
use serde::{Deserialize, Serialize};

/// Reusable buffers for pose comparisons (allocated once per clip).
///
/// Component transforms are composed in f64: the metric measures how far
/// the decoded local values move each virtual vertex, not the rounding of
/// an f32 FK chain (which, on a large rig far from the origin, is itself
/// tens of micrometres and would make the verdict depend on operation
/// order).
pub struct Scratch {
    pub(crate) a: Vec<DAffine3>,
    pub(crate) b: Vec<DAffine3>,
    qa: Vec<Quat>,
    qb: Vec<Quat>,
}

impl Scratch {
    pub fn new(joints: usize) -> Scratch {
        Scratch {
            a: vec![DAffine3::IDENTITY; joints],
            b: vec![DAffine3::IDENTITY; joints],
            qa: vec![Quat::IDENTITY; joints],
            qb: vec![Quat::IDENTITY; joints],
        }
    }
}

fn to_daffine(t: &Transform) -> DAffine3 {
    let q = DQuat::from_xyzw(
        t.rotation.x as f64,
        t.rotation.y as f64,
        t.rotation.z as f64,
        t.rotation.w as f64,
    );
    // The runtime normalizes nothing here either; a decoder's quaternion is
    // unit to f32 precision. A unit scale (most joints) multiplies by
    // nothing: the same bits as `from_scale_rotation_translation`.
    if t.scale == glam::Vec3::ONE {
        DAffine3 {
            matrix3: glam::DMat3::from_quat(q),
            translation: t.translation.as_dvec3(),
        }
    } else {
        DAffine3::from_scale_rotation_translation(t.scale.as_dvec3(), q, t.translation.as_dvec3())
    }
}

/// f64 component transforms of a local pose (parents before children).
pub(crate) fn fk64(parents: &[u32], local: &[Transform], out: &mut [DAffine3]) {
    for j in 0..parents.len().min(local.len()).min(out.len()) {
        let m = to_daffine(&local[j]);
        let p = parents[j] as usize;
        out[j] = if p < j { out[p] * m } else { m };
    }
}

/// Virtual-vertex error between two f64 component transforms: the
/// largest distance between the images of the six points at `shell` on
/// both sides of each local axis (±x, ±y, ±z), which bounds the joint
/// origin's displacement too (the mean of two opposite vertices'). Full
/// affine matrices (shear included). Same formula as the runtime's f32
/// `math::virtual_vertex_error`, which the encoder measures with.
pub fn virtual_vertex_error64(reference: &DAffine3, other: &DAffine3, shell: f64) -> f64 {
    let dt = reference.translation - other.translation;
    let m = reference.matrix3 - other.matrix3;
    let d2 = dt.length_squared();
    let e = |a: DVec3| d2 + shell * shell * a.length_squared() + 2.0 * shell * dt.dot(a).abs();
    e(m.x_axis).max(e(m.y_axis)).max(e(m.z_axis)).sqrt()
}

/// Per-joint component-space errors between two local poses: position
/// error of virtual vertices (meters) into `pos_err`, and the angle between
/// component rotations (radians, from the chain of local rotations) into
/// `rot_err`. This is the one error metric of the project: verification,
/// resampling checks and the encoder's final check all call it (the last
/// two through [`position_errors`], the same figures without the angles).
pub fn pose_errors(
    skeleton: &Skeleton,
    reference: &[Transform],
    other: &[Transform],
    shells: &[f32],
    scratch: &mut Scratch,
    pos_err: &mut [f32],
    rot_err: &mut [f32],
) {
    position_errors(skeleton, reference, other, shells, scratch, pos_err);
    for j in 0..skeleton.parents().len() {
        let (pa, pb) = match skeleton.parent(j) {
            Some(p) => (scratch.qa[p], scratch.qb[p]),
            None => (Quat::IDENTITY, Quat::IDENTITY),
        };
        scratch.qa[j] = pa * reference[j].rotation;
        scratch.qb[j] = pb * other[j].rotation;
        rot_err[j] = rotation_angle(scratch.qa[j], scratch.qb[j]);
    }
}

/// [`pose_errors`]' position errors alone (virtual vertices, meters), for
/// callers that judge by them only: the component rotations' angles cost
/// a quaternion chain and an arc cosine per joint.
pub fn position_errors(
    skeleton: &Skeleton,
    reference: &[Transform],
    other: &[Transform],
    shells: &[f32],
    scratch: &mut Scratch,
    pos_err: &mut [f32],
) {
    let parents = skeleton.parents();
    fk64(parents, reference, &mut scratch.a);
    fk64(parents, other, &mut scratch.b);
    for j in 0..parents.len() {
        pos_err[j] = virtual_vertex_error64(&scratch.a[j], &scratch.b[j], shells[j] as f64) as f32;
    }
}

/// What verification found for one clip.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct ErrorStats {
    pub max_error_m: f32,
    pub p99_error_m: f32,
    pub worst_joint: usize,
    pub worst_time_s: f32,
    pub max_rotation_error_deg: f32,
    /// Worst error per joint over all checked times.
    pub per_joint_max_m: Vec<f32>,
    pub times_checked: usize,
    /// The checked times by kind (`refined`: the peak search's).
    #[serde(default)]
    pub counts: TimeCounts,
    /// Every checked time, ascending, and the error of every joint there,
    /// time-major (`errors_m[t * joints + j]`): the dashboard's sidecar.
    #[serde(default)]
    pub times_s: Vec<f32>,
    #[serde(default)]
    pub errors_m: Vec<f32>,
    /// Joints whose error exceeded their threshold: (joint, time, error,
    /// threshold), worst first, at most 16.
    pub violations: Vec<Violation>,
}

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Violation {
    pub joint: usize,
    pub time_s: f32,
    pub error_m: f32,
    pub threshold_m: f32,
}

/// Every time verification checks for a clip's codec error: each sample,
/// the quarter points of every interval (a wrap loop's seam interval
/// included), the end, both sides of a loop seam, and seeded random times
/// ([`times::check_plan`] with [`CODEC_FRACTIONS`]).
///
/// A grid whose last sample lies before the duration is a wrap loop
/// (`LoopMode::LoopWrap`: no duplicated end sample, the sample after the
/// last is the first; no other valid clip has such a grid). Its seam
/// interval — last sample → duration, which the runtime blends towards
/// sample 0 — is checked at its quarter points, at the duration itself
/// and just past it (times across the wrap), whatever `looping` says.
pub fn check_times(
    duration_s: f32,
    sample_rate_hz: f32,
    num_samples: u32,
    looping: bool,
) -> Vec<f32> {
    let grid = Grid {
        duration_s,
        sample_rate_hz,
        num_samples,
        looping,
    };
    check_plan(grid, &CODEC_FRACTIONS, &[]).times
}

/// Peak searches after the listed times: around this many of the worst.
pub const PEAK_SEARCHES: usize = 8;

/// Compare two poses at each of `times`: `poses(t, expected, actual)`
/// fills both local poses (false: `actual` could not be produced, which is
/// reported as an infinite error rather than hidden). Errors are measured
/// with [`pose_errors`]; every joint over its threshold is a violation.
///
/// With `peak_h > 0`, the [`PEAK_SEARCHES`] worst times (by error over
/// threshold) are then each searched for a higher value within `± peak_h`
/// ([`golden_max`]); those evaluations count as checked times
/// (`counts.refined`) like any other.
pub fn verify_poses(
    skeleton: &Skeleton,
    times: &[f32],
    peak_h: f32,
    shells: &[f32],
    thresholds: &[f32],
    poses: impl FnMut(f32, &mut [Transform], &mut [Transform]) -> bool,
) -> ErrorStats {
    let mut m = Measurer::new(skeleton, shells, thresholds, poses);
    let mut worst: Vec<(f32, f32)> = times.iter().map(|&t| (m.measure(t), t)).collect();
    if peak_h > 0.0 {
        worst.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.total_cmp(&b.1)));
        for &(_, t) in worst.iter().take(PEAK_SEARCHES) {
            golden_max(t, peak_h, |x| m.measure(x));
        }
    }
    let refined = m.rows.len() - times.len();
    let mut stats = m.finish();
    stats.counts.refined = refined;
    stats
}

/// Accumulates [`verify_poses`]' measurements.
struct Measurer<'a, F> {
    skeleton: &'a Skeleton,
    shells: &'a [f32],
    thresholds: &'a [f32],
    poses: F,
    scratch: Scratch,
    expected: Vec<Transform>,
    actual: Vec<Transform>,
    pos: Vec<f32>,
    rot: Vec<f32>,
    /// (time, index of its first error in `errors`).
    rows: Vec<(f32, usize)>,
    errors: Vec<f32>,
    stats: ErrorStats,
    violations: Vec<Violation>,
}

impl<'a, F: FnMut(f32, &mut [Transform], &mut [Transform]) -> bool> Measurer<'a, F> {
    fn new(skeleton: &'a Skeleton, shells: &'a [f32], thresholds: &'a [f32], poses: F) -> Self {
        let n = skeleton.joint_count();
        Measurer {
            skeleton,
            shells,
            thresholds,
            poses,
            scratch: Scratch::new(n),
            expected: vec![Transform::IDENTITY; n],
            actual: vec![Transform::IDENTITY; n],
            pos: vec![0.0; n],
            rot: vec![0.0; n],
            rows: Vec::new(),
            errors: Vec::new(),
            stats: ErrorStats {
                per_joint_max_m: vec![0.0; n],
                ..Default::default()
            },
            violations: Vec::new(),
        }
    }

    /// Measure at `t`; the largest error over threshold of any joint.
    fn measure(&mut self, t: f32) -> f32 {
        let n = self.skeleton.joint_count();
        let ok = (self.poses)(t, &mut self.expected, &mut self.actual);
        if ok {
            pose_errors(
                self.skeleton,
                &self.expected,
                &self.actual,
                self.shells,
                &mut self.scratch,
                &mut self.pos,
                &mut self.rot,
            );
        }
        self.rows.push((t, self.errors.len()));
        let stats = &mut self.stats;
        let mut worst = 0.0f32;
        for j in 0..n {
            let e = if ok && self.pos[j].is_finite() {
                self.pos[j]
            } else {
                f32::INFINITY
            };
            self.errors.push(e);
            stats.per_joint_max_m[j] = stats.per_joint_max_m[j].max(e);
            if e > stats.max_error_m {
                stats.max_error_m = e;
                stats.worst_joint = j;
                stats.worst_time_s = t;
            }
            if ok {
                stats.max_rotation_error_deg =
                    stats.max_rotation_error_deg.max(self.rot[j].to_degrees());
            }
            let th = self.thresholds.get(j).copied().unwrap_or(0.0);
            worst = worst.max(if th > 0.0 { e / th } else { e });
            if e > th {
                self.violations.push(Violation {
                    joint: j,
                    time_s: t,
                    error_m: e,
                    threshold_m: th,
                });
            }
        }
        worst
    }

    fn finish(self) -> ErrorStats {
        let n = self.skeleton.joint_count();
        let mut stats = self.stats;
        let mut rows = self.rows;
        rows.sort_by(|a, b| a.0.total_cmp(&b.0));
        stats.times_checked = rows.len();
        stats.times_s = rows.iter().map(|r| r.0).collect();
        stats.errors_m = Vec::with_capacity(self.errors.len());
        for &(_, at) in &rows {
            stats.errors_m.extend_from_slice(&self.errors[at..at + n]);
        }
        let mut all = self.errors;
        stats.p99_error_m = percentile(&mut all, 0.99);
        let mut violations = self.violations;
        violations.sort_by(|a, b| b.error_m.total_cmp(&a.error_m).then(a.joint.cmp(&b.joint)));
        violations.truncate(16);
        stats.violations = violations;
        stats
    }
}

/// How [`verify_clip`] decodes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decoders {
    /// A playing instance (`Player`, measured) and one-shot
    /// (`Clip::sample`): the two must agree bit for bit; a time where they
    /// do not counts as a failed decode (infinite error), so a divergence
    /// fails the cook.
    Both,
    /// The playing instance alone: for a second pass over a clip whose
    /// two decoders were already compared at the first pass's times.
    Playing,
}

/// Compare `clip` (decoded through the runtime, rest-pose defaults)
/// against `reference` at `times`, then search for peaks within
/// `± peak_h` of the worst ([`verify_poses`]). `reference(t, out)` writes
/// the expected local pose at time `t`; `decoders` says which decoders
/// run and are compared.
#[allow(clippy::too_many_arguments)]
pub fn verify_clip(
    skeleton: &Skeleton,
    clip: &Clip<'_>,
    decoders: Decoders,
    times: &[f32],
    peak_h: f32,
    shells: &[f32],
    thresholds: &[f32],
    mut reference: impl FnMut(f32, &mut [Transform]),
) -> ErrorStats {
    let rest = skeleton.rest_pose();
    let n = skeleton.joint_count();
    let mut player = Player::new(clip, rest).ok();
    let mut direct = vec![Transform::IDENTITY; n];
    verify_poses(
        skeleton,
        times,
        peak_h,
        shells,
        thresholds,
        |t, expected, actual| {
            reference(t, expected);
            let Some(player) = player.as_mut() else {
                return false;
            };
            player.seek(t);
            player.decode(Request::Pose, actual).is_ok()
                && (decoders == Decoders::Playing
                    || clip.sample(t, rest, &mut direct).is_ok()
                        && actual.iter().zip(&direct).all(|(a, b)| {
                            a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits)
                        }))
        },
    )
}

/// The `q` quantile (nearest rank) of `values`; 0 for none. Linear time
/// (selection, not a sort): `values` ends up partitioned around it.
pub fn percentile(values: &mut [f32], q: f32) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((q * values.len() as f32).ceil() as usize).clamp(1, values.len());
    *values.select_nth_unstable_by(rank - 1, f32::total_cmp).1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_nearest_rank() {
        let mut v: Vec<f32> = (1..=100).rev().map(|i| i as f32).collect();
        assert_eq!(percentile(&mut v, 0.99), 99.0);
        assert_eq!(percentile(&mut v, 0.5), 50.0);
        assert_eq!(percentile(&mut [3.0, 1.0, 2.0, 2.0], 1.0), 3.0);
        assert_eq!(percentile(&mut [], 0.99), 0.0);
    }

    #[test]
    fn check_times_cross_a_wrap_seam() {
        // Wrap loop: 4 samples at 4 Hz (0, 0.25, 0.5, 0.75), duration 1 s;
        // the seam interval 0.75 -> 1.0 blends sample 3 into sample 0.
        for looping in [true, false] {
            let t = check_times(1.0, 4.0, 4, looping);
            for want in [0.8125, 0.875, 0.9375, 1.0, 1.0625] {
                assert!(
                    t.iter().any(|&x| (x - want).abs() < 1e-6),
                    "missing {want} in {t:?}"
                );
            }
        }
        // A grid that reaches the duration is not a wrap loop.
        let t = check_times(1.0, 4.0, 5, false);
        assert!(t.iter().all(|&x| x <= 1.0), "{t:?}");
    }

    #[test]
    fn check_times_cover_samples_midpoints_and_seam() {
        let t = check_times(1.0, 2.0, 3, true);
        for want in [0.0, 0.25, 0.5, 0.75, 0.875, 1.0, 1.125] {
            assert!(
                t.iter().any(|&x| (x - want).abs() < 1e-6),
                "missing {want} in {t:?}"
            );
        }
    }
}
