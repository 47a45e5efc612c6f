//! Final verification through the runtime decoder: every sample and every
//! midpoint between consecutive samples, decoded by `VbrClip` and compared
//! in component space against the raw clip blended the same way.

use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::codec::vbr::VbrClip;
use ludus_anim_runtime::codec::CodecError;
use ludus_anim_runtime::math::{interpolate, virtual_vertex_error, Affine3A, Transform};
use ludus_anim_runtime::timing::SamplePosition;
use ludus_anim_runtime::Skeleton;

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

/// Decode `blob` at every sample and midpoint and measure every joint's
/// virtual-vertex error against `clip` (`thresholds` and `shells` per
/// joint, meters). `blob` must be a VBR blob for this skeleton and clip.
pub fn measure_errors(
    blob: &[u8],
    skeleton: &Skeleton,
    clip: &ResampledClip,
    thresholds: &[f32],
    shells: &[f32],
) -> Result<ErrorReport, CodecError> {
    let j = skeleton.joint_count();
    let n = clip.num_samples;
    let vbr = VbrClip::parse(blob, j, n)?;
    let mut report = ErrorReport {
        per_joint: vec![0.0; j],
        ..Default::default()
    };
    let mut decoded = vec![Transform::IDENTITY; j];
    let mut raw = vec![Transform::IDENTITY; j];
    let mut dc = vec![Affine3A::IDENTITY; j];
    let mut rc = vec![Affine3A::IDENTITY; j];
    let rest = skeleton.rest_pose();
    for i in 0..n {
        for (i1, alpha) in [(i, 0.0f32), (i + 1, 0.5)] {
            if i1 >= n {
                continue;
            }
            let pos = SamplePosition { i0: i, i1, alpha };
            if !vbr.decode_pose(pos, rest, &mut decoded) {
                return Err(CodecError::Invalid {
                    what: "vbr decode failed",
                });
            }
            let a = clip.pose(i as usize);
            let b = clip.pose(i1 as usize);
            for k in 0..j {
                raw[k] = if alpha == 0.0 {
                    a[k]
                } else {
                    interpolate(&a[k], &b[k], alpha)
                };
            }
            skeleton.local_to_component(&decoded, &mut dc);
            skeleton.local_to_component(&raw, &mut rc);
            for k in 0..j {
                let e = virtual_vertex_error(&rc[k], &dc[k], shells.get(k).copied().unwrap_or(0.0));
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
                    report.worst_sample = (i, i1);
                }
            }
        }
    }
    Ok(report)
}
