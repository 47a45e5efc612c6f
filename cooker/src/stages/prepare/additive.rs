//! Additive conversion against a named, revisioned reference (the seed's
//! local convention: dT = tA - tR, dQ = inverse(qR) * qA, dS = sA / sR),
//! and its verification applied onto the base.

use super::root_motion::hemisphere_continuity;
use super::{check_grid, AdditiveReference, PrepareError, Prepared};
use ludus_anim_format::additive::make_additive;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_format::math::Transform;
use ludus_anim_format::timing::LoopMode;
use ludus_anim_model::{Decision, ResampledClip};
use ludus_anim_runtime::package::Clip;
use ludus_anim_runtime::Skeleton;
use ludus_anim_verify::{verify_poses, ErrorStats};
use serde::{Deserialize, Serialize};

/// An additive clip's reference.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PreparedAdditive {
    /// Named and revisioned description, e.g. `clip 'idle' rev 0123…`
    /// (the revision is FNV-1a 64 of the reference values used).
    pub reference: String,
    /// The representative base pose verification applies the deltas onto:
    /// the reference's pose at each sample of the prepared clip
    /// (`num_samples * joint_count`, sample-major).
    pub base: Vec<Transform>,
}

/// FNV-1a 64 over the bit patterns of reference transforms: the
/// reference's revision (changes whenever the values used change).
fn revision(values: &[Transform]) -> u64 {
    let mut bytes = Vec::with_capacity(values.len() * 40);
    for t in values {
        for v in t.to_array() {
            let v = if v == 0.0 { 0.0f32 } else { v };
            bytes.extend_from_slice(&v.to_bits().to_le_bytes());
        }
    }
    fnv1a64(&bytes)
}

pub(super) fn convert_additive(
    skeleton: &Skeleton,
    clip: &mut ResampledClip,
    reference: &AdditiveReference,
    reference_clip: &dyn Fn(&str) -> Option<ResampledClip>,
    decisions: &mut Vec<Decision>,
) -> Result<PreparedAdditive, PrepareError> {
    let name = clip.name.clone();
    let joints = clip.joint_count;
    let n = clip.num_samples as usize;
    let fetch = |r: &str| -> Result<ResampledClip, PrepareError> {
        let c = reference_clip(r).ok_or_else(|| PrepareError::MissingReference {
            clip: name.clone(),
            reference: r.to_string(),
        })?;
        check_grid(&c, joints).map_err(|what| PrepareError::BadReference {
            clip: name.clone(),
            reference: r.to_string(),
            what,
        })?;
        Ok(c)
    };
    let frame_of = |src: &ResampledClip, r: &str, t: f32| -> Result<Vec<Transform>, PrepareError> {
        if !(t.is_finite() && t >= 0.0 && t <= src.duration_s) {
            return Err(PrepareError::BadReference {
                clip: name.clone(),
                reference: r.to_string(),
                what: format!(
                    "frame time {t} s is outside the reference's [0, {}] s",
                    src.duration_s
                ),
            });
        }
        let mut out = vec![Transform::IDENTITY; joints];
        src.blend_grid(&src.samples, src.position(t, LoopMode::Once), &mut out);
        Ok(out)
    };
    // The reference pose at every sample of this clip.
    let (label, base): (String, Vec<Transform>) = match reference {
        AdditiveReference::RestPose => ("rest".to_string(), skeleton.rest_pose().repeat(n)),
        AdditiveReference::Frame { clip: None, time_s } => {
            let f = frame_of(clip, &name, *time_s)?;
            (format!("frame '{name}'@{time_s}s"), f.repeat(n))
        }
        AdditiveReference::Frame {
            clip: Some(r),
            time_s,
        } => {
            let src = fetch(r)?;
            let f = frame_of(&src, r, *time_s)?;
            (format!("frame '{r}'@{time_s}s"), f.repeat(n))
        }
        AdditiveReference::Clip { name: r } => {
            let src = fetch(r)?;
            let mut base = vec![Transform::IDENTITY; n * joints];
            for i in 0..n {
                // Same time, clamped to the reference's duration.
                let t = (i as f32 / clip.sample_rate_hz).min(src.duration_s);
                src.blend_grid(
                    &src.samples,
                    src.position(t, LoopMode::Once),
                    &mut base[i * joints..(i + 1) * joints],
                );
            }
            (format!("clip '{r}'"), base)
        }
    };
    for (a, r) in clip.samples.iter_mut().zip(&base) {
        *a = make_additive(a, r);
    }
    hemisphere_continuity(clip);
    let description = format!("{label} rev {:016x}", revision(&base));
    decisions.push(Decision::new(
        "additive_converted",
        format!(
            "clip '{name}': converted to additive deltas (Ludus local convention: dT = tA - tR, dQ = inverse(qR) * qA, dS = sA / sR) against {description}"
        ),
    ));
    Ok(PreparedAdditive {
        reference: description,
        base,
    })
}

/// Verify an additive clip in the seed's terms ("additive error checks must
/// use Ludus's actual additive equations and a representative base pose"):
/// at each of `times` the decoded deltas and the prepared deltas are both
/// applied at weight one onto the base pose (the reference at that time),
/// and the two results are compared in component space with the project's
/// one metric (`pose_errors`, virtual vertices at each joint's shell).
/// `defaults` are what the decoder fills untracked joints with
/// (`Package::sample_defaults`: the additive identity). `None` if the
/// prepared clip is not additive or a length disagrees.
pub fn verify_additive(
    skeleton: &Skeleton,
    prepared: &Prepared,
    decoded: &Clip<'_>,
    defaults: &[Transform],
    times: &[f32],
    shells: &[f32],
    thresholds: &[f32],
) -> Option<ErrorStats> {
    let n = skeleton.joint_count();
    if prepared.additive.is_none() || shells.len() != n || thresholds.len() != n {
        return None;
    }
    let mut delta = vec![Transform::IDENTITY; n];
    let mut expected_delta = vec![Transform::IDENTITY; n];
    let c = &prepared.clip;
    // Peak search within a quarter interval of the worst times.
    Some(verify_poses(
        skeleton,
        times,
        0.25 / c.sample_rate_hz,
        shells,
        thresholds,
        |t, expected, got| {
            decoded.sample(t, defaults, &mut delta).is_ok()
                && c.blend_grid(&c.samples, c.position(t, c.loop_mode), &mut expected_delta)
                && prepared.apply_onto_base(t, &expected_delta, expected)
                && prepared.apply_onto_base(t, &delta, got)
        },
    ))
}

/// A copy of `skeleton` whose rest pose is the additive identity. The VBR
/// encoder strips tracks equal to the skeleton's rest value and the
/// decoder fills them from the caller's defaults; encoding (and verifying)
/// an additive clip against this skeleton makes the stripped value
/// [`ludus_anim_format::additive::ADDITIVE_IDENTITY`], the value
/// `Package::sample_defaults` hands the decoder for additive clips.
pub fn additive_skeleton(
    skeleton: &Skeleton,
) -> Result<Skeleton, ludus_anim_runtime::SkeletonError> {
    Skeleton::new(
        skeleton.parents().to_vec(),
        skeleton.ids().to_vec(),
        vec![ludus_anim_format::additive::ADDITIVE_IDENTITY; skeleton.joint_count()],
        skeleton.names().to_vec(),
    )
}
