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

use glam::{DAffine3, DQuat, DVec3};
use ludus_anim_runtime::math::{rotation_angle, Quat, Transform};
use ludus_anim_runtime::package::Clip;
use ludus_anim_runtime::Skeleton;
use serde::{Deserialize, Serialize};

/// Reusable buffers for pose comparisons (allocated once per clip).
///
/// Component transforms are composed in f64: the metric measures how far
/// the decoded local values move each virtual vertex, not the rounding of
/// an f32 FK chain (which, on a large rig far from the origin, is itself
/// tens of micrometres and would make the verdict depend on operation
/// order).
pub struct Scratch {
    a: Vec<DAffine3>,
    b: Vec<DAffine3>,
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
    // unit to f32 precision.
    DAffine3::from_scale_rotation_translation(t.scale.as_dvec3(), q, t.translation.as_dvec3())
}

/// f64 component transforms of a local pose (parents before children).
fn fk64(parents: &[u32], local: &[Transform], out: &mut [DAffine3]) {
    for j in 0..parents.len().min(local.len()).min(out.len()) {
        let m = to_daffine(&local[j]);
        let p = parents[j] as usize;
        out[j] = if p < j { out[p] * m } else { m };
    }
}

/// ACL-style virtual-vertex error between two f64 component transforms:
/// the largest distance between the images of three points at `shell`
/// along the joint's local axes. Full affine matrices (shear included).
pub fn virtual_vertex_error64(reference: &DAffine3, other: &DAffine3, shell: f64) -> f64 {
    let dt = reference.translation - other.translation;
    let m = reference.matrix3 - other.matrix3;
    let e = |axis: DVec3| (dt + axis * shell).length_squared();
    e(m.x_axis).max(e(m.y_axis)).max(e(m.z_axis)).sqrt()
}

/// Per-joint component-space errors between two local poses: position
/// error of virtual vertices (meters) into `pos_err`, and the angle between
/// component rotations (radians, from the chain of local rotations) into
/// `rot_err`. This is the one error metric of the project: verification,
/// resampling checks and the encoder's final check all call it.
pub fn pose_errors(
    skeleton: &Skeleton,
    reference: &[Transform],
    other: &[Transform],
    shells: &[f32],
    scratch: &mut Scratch,
    pos_err: &mut [f32],
    rot_err: &mut [f32],
) {
    let parents = skeleton.parents();
    fk64(parents, reference, &mut scratch.a);
    fk64(parents, other, &mut scratch.b);
    for j in 0..parents.len() {
        let (pa, pb) = match skeleton.parent(j) {
            Some(p) => (scratch.qa[p], scratch.qb[p]),
            None => (Quat::IDENTITY, Quat::IDENTITY),
        };
        scratch.qa[j] = pa * reference[j].rotation;
        scratch.qb[j] = pb * other[j].rotation;
        pos_err[j] = virtual_vertex_error64(&scratch.a[j], &scratch.b[j], shells[j] as f64) as f32;
        rot_err[j] = rotation_angle(scratch.qa[j], scratch.qb[j]);
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

/// Every time verification checks for a clip: each sample time, each
/// midpoint between samples, quarter points near the end, and (looping
/// clips) times just before and exactly at the loop seam.
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
    let mut t = Vec::with_capacity(num_samples as usize * 2 + 8);
    let dt = 1.0 / sample_rate_hz;
    for i in 0..num_samples {
        let s = (i as f32 * dt).min(duration_s);
        t.push(s);
        let m = (i as f32 + 0.5) * dt;
        if m < duration_s {
            t.push(m);
        }
    }
    t.push(duration_s);
    let last = num_samples.saturating_sub(1) as f32 * dt;
    let wrap = duration_s > 0.0 && last + 1e-3 * dt < duration_s;
    if wrap {
        for q in [0.25, 0.5, 0.75] {
            t.push(last + q * (duration_s - last));
        }
    }
    if (looping || wrap) && duration_s > 0.0 {
        t.push((duration_s - 0.25 * dt).max(0.0));
        t.push(duration_s + 0.25 * dt);
    }
    t.sort_by(f32::total_cmp);
    t.dedup();
    t
}

/// Compare two poses at each of `times`: `poses(t, expected, actual)`
/// fills both local poses (false: `actual` could not be produced, which is
/// reported as an infinite error rather than hidden). Errors are measured
/// with [`pose_errors`]; every joint over its threshold is a violation.
pub fn verify_poses(
    skeleton: &Skeleton,
    times: &[f32],
    shells: &[f32],
    thresholds: &[f32],
    mut poses: impl FnMut(f32, &mut [Transform], &mut [Transform]) -> bool,
) -> ErrorStats {
    let n = skeleton.joint_count();
    let mut scratch = Scratch::new(n);
    let mut expected = vec![Transform::IDENTITY; n];
    let mut actual = vec![Transform::IDENTITY; n];
    let mut pos = vec![0.0f32; n];
    let mut rot = vec![0.0f32; n];
    let mut all = Vec::with_capacity(times.len() * n);
    let mut stats = ErrorStats {
        per_joint_max_m: vec![0.0; n],
        ..Default::default()
    };
    let mut violations = Vec::new();
    for &t in times {
        if !poses(t, &mut expected, &mut actual) {
            stats.max_error_m = f32::INFINITY;
            continue;
        }
        pose_errors(
            skeleton,
            &expected,
            &actual,
            shells,
            &mut scratch,
            &mut pos,
            &mut rot,
        );
        for j in 0..n {
            let e = if pos[j].is_finite() {
                pos[j]
            } else {
                f32::INFINITY
            };
            all.push(e);
            if e > stats.per_joint_max_m[j] {
                stats.per_joint_max_m[j] = e;
            }
            if e > stats.max_error_m {
                stats.max_error_m = e;
                stats.worst_joint = j;
                stats.worst_time_s = t;
            }
            stats.max_rotation_error_deg = stats.max_rotation_error_deg.max(rot[j].to_degrees());
            if e > thresholds[j] {
                violations.push(Violation {
                    joint: j,
                    time_s: t,
                    error_m: e,
                    threshold_m: thresholds[j],
                });
            }
        }
    }
    stats.times_checked = times.len();
    stats.p99_error_m = percentile(&mut all, 0.99);
    violations.sort_by(|a, b| b.error_m.total_cmp(&a.error_m).then(a.joint.cmp(&b.joint)));
    violations.truncate(16);
    stats.violations = violations;
    stats
}

/// Compare `clip` (decoded through the runtime, rest-pose defaults)
/// against `reference` at `times`. `reference(t, out)` writes the expected
/// local pose at time `t`.
///
/// The clip is decoded both ways games can: from its static pose
/// (`Clip::sample_static`, measured) and directly (`Clip::sample`). The two
/// must agree bit for bit; a time where they do not counts as a failed
/// decode (infinite error), so a divergence fails the cook.
pub fn verify_clip(
    skeleton: &Skeleton,
    clip: &Clip<'_>,
    times: &[f32],
    shells: &[f32],
    thresholds: &[f32],
    mut reference: impl FnMut(f32, &mut [Transform]),
) -> ErrorStats {
    let rest = skeleton.rest_pose();
    let n = skeleton.joint_count();
    let mut static_pose = vec![Transform::IDENTITY; n];
    let have_static = clip.static_pose(rest, &mut static_pose);
    let mut direct = vec![Transform::IDENTITY; n];
    verify_poses(
        skeleton,
        times,
        shells,
        thresholds,
        |t, expected, actual| {
            reference(t, expected);
            have_static
                && clip.sample_static(t, &static_pose, actual)
                && clip.sample(t, rest, &mut direct)
                && actual
                    .iter()
                    .zip(&direct)
                    .all(|(a, b)| a.to_array().map(f32::to_bits) == b.to_array().map(f32::to_bits))
        },
    )
}

/// The `q` quantile (nearest rank) of `values`; 0 for none.
pub fn percentile(values: &mut [f32], q: f32) -> f32 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f32::total_cmp);
    let rank = ((q * values.len() as f32).ceil() as usize).clamp(1, values.len());
    values[rank - 1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentile_nearest_rank() {
        let mut v: Vec<f32> = (1..=100).map(|i| i as f32).collect();
        assert_eq!(percentile(&mut v, 0.99), 99.0);
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
