//! Verify: load the written package bytes through the runtime and compare
//! every clip, decoded, with its resampled source (codec error) and with
//! the authored curves (total error), at every sample, every midpoint and
//! across loop seams.

use super::resample::SourcePose;
use ludus_anim_model::{ResampledClip, SourceClip};
use ludus_anim_runtime::math::interpolate;
use ludus_anim_runtime::package::Clip;
use ludus_anim_runtime::timing::{sample_position, LoopMode};
use ludus_anim_runtime::{Skeleton, Transform};
use ludus_anim_verify::{check_times, verify_clip, ErrorStats};
use std::time::Instant;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct ClipVerification {
    pub codec: ErrorStats,
    pub source_error_m: f32,
    pub decode_ns_per_pose: f64,
}

/// Verify one decoded clip.
pub fn verify(
    skeleton: &Skeleton,
    decoded: &Clip<'_>,
    resampled: &ResampledClip,
    source: &SourceClip,
    thresholds: &[f32],
    shells: &[f32],
) -> ClipVerification {
    let looping = resampled.loop_mode == LoopMode::Loop;
    let times = check_times(
        resampled.duration_s,
        resampled.sample_rate_hz,
        resampled.num_samples,
        looping,
    );
    let codec = verify_clip(skeleton, decoded, &times, shells, thresholds, |t, out| {
        let p = sample_position(
            t,
            resampled.duration_s,
            resampled.sample_rate_hz,
            resampled.num_samples,
            resampled.loop_mode,
        );
        let a = resampled.pose(p.i0 as usize);
        let b = resampled.pose(p.i1 as usize);
        for (j, o) in out.iter_mut().enumerate() {
            // At exact sample times the stored sample is the answer (as in
            // every runtime decoder), not a renormalized copy of it.
            *o = if p.alpha == 0.0 {
                a[j]
            } else {
                interpolate(&a[j], &b[j], p.alpha)
            };
        }
    });
    let src = SourcePose::new(source, skeleton);
    let dur = resampled.duration_s;
    let total = verify_clip(skeleton, decoded, &times, shells, thresholds, |t, out| {
        let t = if looping && dur > 0.0 {
            t.rem_euclid(dur)
        } else {
            t
        };
        src.evaluate(t, out)
    });
    ClipVerification {
        codec,
        source_error_m: total.max_error_m,
        decode_ns_per_pose: decode_timing(skeleton, decoded),
    }
}

/// Median time to decode a full pose at pseudo-random times (fixed seed),
/// warm cache: the figure the report shows beside bytes and error.
pub fn decode_timing(skeleton: &Skeleton, clip: &Clip<'_>) -> f64 {
    let n = skeleton.joint_count();
    let mut out = vec![Transform::IDENTITY; n];
    let rest = skeleton.rest_pose();
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut times = [0.0f32; 256];
    for t in times.iter_mut() {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        *t = (seed >> 40) as f32 / (1u64 << 24) as f32 * clip.duration_s;
    }
    let mut batches = Vec::with_capacity(9);
    for _ in 0..9 {
        let start = Instant::now();
        for &t in &times {
            clip.sample(t, rest, &mut out);
            std::hint::black_box(&out);
        }
        batches.push(start.elapsed().as_nanos() as f64 / times.len() as f64);
    }
    batches.sort_by(f64::total_cmp);
    batches[batches.len() / 2]
}
