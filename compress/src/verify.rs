//! Final verification through the runtime decoder, with exactly the times
//! and the metric the cooker's verification stage uses
//! (`ludus_anim_verify::check_times` and `position_errors`): every sample,
//! every midpoint, the clip end and, for looping clips, both sides of the
//! seam. A blob this accepts is a blob verification accepts.

use ludus_anim_format::codec::CodecId;
use ludus_anim_format::math::{interpolate, Transform};
use ludus_anim_format::timing::sample_position;
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::package::CodecError;
use ludus_anim_runtime::{Clip, Player, Request, Skeleton};
use ludus_anim_verify::{check_times, position_errors, Scratch};

/// Errors measured through the runtime decoder.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ErrorReport {
    /// Largest error per joint (meters).
    pub per_joint: Vec<f32>,
    /// Largest error of any joint (meters).
    pub max_error_m: f32,
    /// Joint with the largest `error / threshold`.
    pub worst_joint: usize,
    pub worst_ratio: f32,
    /// Samples bracketing where that happened.
    pub worst_sample: (u32, u32),
}

/// Decode `blob` at every time verification checks and measure every
/// joint's virtual-vertex error against `clip` (`thresholds` and `shells`
/// per joint, meters). `blob` must be a VBR blob for this skeleton and clip.
pub fn measure_errors(
    blob: &[u8],
    skeleton: &Skeleton,
    clip: &ResampledClip,
    thresholds: &[f32],
    shells: &[f32],
) -> Result<ErrorReport, CodecError> {
    let j = skeleton.joint_count();
    let n = clip.num_samples;
    let timing = (clip.duration_s, clip.sample_rate_hz, n, clip.loop_mode);
    let decoder = Clip::from_blob(CodecId::Vbr, blob, j, timing)?;
    let mut report = ErrorReport {
        per_joint: vec![0.0; j],
        ..Default::default()
    };
    let mut decoded = vec![Transform::IDENTITY; j];
    let mut raw = vec![Transform::IDENTITY; j];
    let mut scratch = Scratch::new(j);
    let mut pos_err = vec![0.0f32; j];
    let failed = |_| CodecError::Invalid {
        what: "vbr decode failed",
    };
    // A player keeps its track cache across the ascending check times;
    // it gives the same bits as `Clip::sample` (the runtime's contract).
    let mut player = Player::new(&decoder, skeleton.rest_pose()).map_err(failed)?;
    let looping = clip.loop_mode.is_looping();
    for t in check_times(clip.duration_s, clip.sample_rate_hz, n, looping) {
        let pos = sample_position(t, clip.duration_s, clip.sample_rate_hz, n, clip.loop_mode);
        // The player maps `t` to `pos` with this same function.
        player.seek(t);
        player.decode(Request::Pose, &mut decoded).map_err(failed)?;
        let a = clip.pose(pos.i0 as usize);
        let b = clip.pose(pos.i1 as usize);
        for k in 0..j {
            raw[k] = if pos.alpha == 0.0 {
                a[k]
            } else {
                interpolate(&a[k], &b[k], pos.alpha)
            };
        }
        position_errors(skeleton, &raw, &decoded, shells, &mut scratch, &mut pos_err);
        for (k, &e) in pos_err.iter().enumerate() {
            let ratio = e / thresholds.get(k).copied().unwrap_or(f32::MIN_POSITIVE);
            report.per_joint[k] = report.per_joint[k].max(e);
            report.max_error_m = report.max_error_m.max(e);
            if ratio > report.worst_ratio || !ratio.is_finite() {
                report.worst_ratio = if ratio.is_finite() {
                    ratio
                } else {
                    f32::INFINITY
                };
                report.worst_joint = k;
                report.worst_sample = (pos.i0, pos.i1);
            }
        }
    }
    Ok(report)
}
