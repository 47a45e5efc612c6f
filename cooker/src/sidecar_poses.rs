//! The `poses` and `source_poses` of `OUT/report-sidecar.json`: what the
//! dashboard's stick-figure player draws. A cooked clip is sampled as the
//! runtime decodes it from its package (verification's decoded clip,
//! `Clip::sample`, then FK) at [`Poses::sampling`]'s rate; a retargeted
//! clip's source is sampled from its normalized source clip over the same
//! span. Component-space joint positions, quantized per clip
//! ([`Poses::quantize`]; layout: `schemas/dashboard.md`).

use ludus_anim_model::SourceClip;
use ludus_anim_report::sidecar::{Poses, SourcePoses};
use ludus_anim_runtime::package::Clip;
use ludus_anim_runtime::{Affine3A, Skeleton, Transform};

/// Component-space positions of every joint at every frame of
/// [`Poses::sampling`] over `duration_s`, the local pose at time `t`
/// given by `pose(t, out)` (false: no pose, the clip is left out).
fn sample(
    skeleton: &Skeleton,
    duration_s: f32,
    mut pose: impl FnMut(f32, &mut [Transform]) -> bool,
) -> Option<Poses> {
    let n = skeleton.joint_count();
    let (frames, rate_hz) = Poses::sampling(duration_s, n);
    let mut local = vec![Transform::IDENTITY; n];
    let mut component = vec![Affine3A::IDENTITY; n];
    let mut positions = Vec::with_capacity(frames as usize * n);
    for f in 0..frames {
        let t = (f as f32 / rate_hz).min(duration_s.max(0.0));
        if !pose(t, &mut local) || !skeleton.local_to_component(&local, &mut component) {
            return None;
        }
        positions.extend(component.iter().map(|m| m.translation.to_array()));
    }
    Some(Poses::quantize(rate_hz, frames, &positions))
}

/// The clip as the runtime decodes it (`defaults` fill stripped tracks),
/// sampled for the player; `None` if a decode fails.
pub fn decoded_poses(
    skeleton: &Skeleton,
    clip: &Clip<'_>,
    defaults: &[Transform],
) -> Option<Poses> {
    sample(skeleton, clip.duration_s(), |t, out| {
        clip.sample(t, defaults, out).is_ok()
    })
}

/// A retargeted clip's source: `clip` on its own `skeleton` from `start_s`
/// for `duration_s` (the cooked clip's cut of it), sampled like the result.
pub fn source_poses(
    skeleton: &Skeleton,
    clip: &SourceClip,
    start_s: f32,
    duration_s: f32,
) -> Option<SourcePoses> {
    let rest = skeleton.rest_pose();
    let poses = sample(skeleton, duration_s, |t, out| {
        clip.sample_pose(rest, start_s + t, out);
        true
    })?;
    Some(SourcePoses {
        joints: skeleton.names().to_vec(),
        parents: (0..skeleton.joint_count())
            .map(|j| skeleton.parent(j).map_or(-1, |p| p as i32))
            .collect(),
        poses,
    })
}
