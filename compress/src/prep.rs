//! Input validation and the raw reference the whole search measures
//! against: component-space transforms at every sample and at every
//! midpoint between consecutive samples, and per-joint dominant shells.

use crate::{EncodeError, EncodeSettings};
use ludus_anim_format::math::{interpolate, Affine3A, Transform};
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::Skeleton;

/// Fraction of each threshold the search aims for. The search measures at
/// samples and midpoints exactly as the decoder reconstructs them; the
/// margin covers other blend factors between samples, where the error
/// interpolates almost linearly between the measured points.
pub const SAFETY: f32 = 0.99;

/// The encoder aims this many f32 floors below each threshold: one for the
/// noise verification's extra times and peak search can land on (the
/// encoder's own checks see it only at its own times), one for the floor
/// the report adds to what verification measured.
pub const FLOOR_MARGIN: f32 = 2.0;

/// The f32 margin may take at most this share of a threshold: beyond it the
/// encoder aims at what is left and verification reports the honest total
/// (a rig so far from the origin cannot hold the threshold at every time
/// in f32 whatever the codec does).
pub const MAX_FLOOR_SHARE: f32 = 0.75;

pub(crate) struct Prep<'a> {
    pub j: usize,
    pub n: usize,
    pub parents: &'a [u32],
    pub subtree_end: &'a [u32],
    pub rest: &'a [Transform],
    /// `samples[s * j + joint]`, as given.
    pub raw: &'a [Transform],
    /// Raw component transforms at every sample (`s * j + joint`).
    pub raw_comp: Vec<Affine3A>,
    /// Raw component transforms at the midpoint after each sample
    /// (`s * j + joint`, `s < n - 1`), blending locals like the runtime.
    pub raw_mid_comp: Vec<Affine3A>,
    /// Raw local transforms at those midpoints (`s * j + joint`).
    pub raw_mid: Vec<Transform>,
    /// User thresholds (meters).
    pub threshold: Vec<f32>,
    /// What the decoded error may reach at the checked times: the
    /// threshold less [`FLOOR_MARGIN`] times the clip's f32 floor
    /// (`ludus_anim_verify::f32_floor`, which verification adds back), at
    /// least `1 - MAX_FLOOR_SHARE` of it.
    pub aim: Vec<f32>,
    /// The clip's f32 floor (meters).
    pub floor: f32,
    /// Thresholds the search enforces (`aim * SAFETY`).
    pub limit: Vec<f32>,
    pub shell: Vec<f32>,
    /// Dominant shell: the distance and limit of the vertex (own or of a
    /// descendant) most sensitive to a rigid error at this joint, found as
    /// the largest `(distance + shell) / limit` over the subtree.
    pub dom_shell: Vec<f32>,
    pub dom_limit: Vec<f32>,
}

impl<'a> Prep<'a> {
    pub fn new(
        skeleton: &'a Skeleton,
        clip: &'a ResampledClip,
        settings: &EncodeSettings,
    ) -> Result<Prep<'a>, EncodeError> {
        let j = skeleton.joint_count();
        if clip.joint_count != j {
            return Err(EncodeError::JointCountMismatch {
                skeleton: j,
                clip: clip.joint_count,
            });
        }
        if clip.num_samples == 0 {
            return Err(EncodeError::EmptyClip);
        }
        let n = clip.num_samples as usize;
        if n.checked_mul(j) != Some(clip.samples.len()) {
            return Err(EncodeError::SampleCountMismatch {
                declared: clip.num_samples,
                held: clip.samples.len(),
                joints: j,
            });
        }
        for (what, len) in [
            ("joint_threshold_m", settings.joint_threshold_m.len()),
            ("joint_shell_m", settings.joint_shell_m.len()),
        ] {
            if len != j {
                return Err(EncodeError::SettingsLength {
                    what,
                    len,
                    joints: j,
                });
            }
        }
        for jt in 0..j {
            let t = settings.joint_threshold_m[jt];
            let s = settings.joint_shell_m[jt];
            if !(t.is_finite() && t > 0.0 && s.is_finite() && s >= 0.0) {
                return Err(EncodeError::BadTolerance { joint: jt });
            }
        }
        if settings.max_segment_samples == 0 {
            return Err(EncodeError::BadSegmentSize);
        }
        // The format stores counts as u32 and bit offsets in usize.
        if n.checked_mul(j)
            .and_then(|x| x.checked_mul(3 * 128))
            .is_none()
            || j > u32::MAX as usize
        {
            return Err(EncodeError::TooLarge);
        }
        for (i, t) in clip.samples.iter().enumerate() {
            if !t.is_finite() {
                return Err(EncodeError::NonFinite {
                    joint: i % j,
                    sample: i / j,
                });
            }
        }

        let mut raw_comp = vec![Affine3A::IDENTITY; n * j];
        for s in 0..n {
            skeleton.local_to_component(
                &clip.samples[s * j..(s + 1) * j],
                &mut raw_comp[s * j..(s + 1) * j],
            );
        }
        let mut raw_mid_comp = vec![Affine3A::IDENTITY; n.saturating_sub(1) * j];
        let mut raw_mid = vec![Transform::IDENTITY; n.saturating_sub(1) * j];
        for s in 0..n.saturating_sub(1) {
            let mid = &mut raw_mid[s * j..(s + 1) * j];
            for (k, m) in mid.iter_mut().enumerate() {
                *m = interpolate(
                    &clip.samples[s * j + k],
                    &clip.samples[(s + 1) * j + k],
                    0.5,
                );
            }
            skeleton.local_to_component(mid, &mut raw_mid_comp[s * j..(s + 1) * j]);
        }

        let threshold = settings.joint_threshold_m.clone();
        let shell = settings.joint_shell_m.clone();
        let floor = ludus_anim_verify::f32_floor(skeleton, &clip.samples, clip.num_samples, &shell);
        let aim: Vec<f32> = threshold
            .iter()
            .map(|t| (t - FLOOR_MARGIN * floor).max(t * (1.0 - MAX_FLOOR_SHARE)))
            .collect();
        let limit: Vec<f32> = aim.iter().map(|t| t * SAFETY).collect();
        let subtree_end = skeleton.subtree_ends();

        // Dominant shells (ACL 2.x computes a similar per-joint "rigid
        // shell" from descendants; this is our variant: the largest
        // distance-over-limit ratio among the joint and its descendants).
        let mut dom_shell = shell.clone();
        let mut dom_limit = limit.clone();
        for a in 0..j {
            let end = subtree_end[a] as usize;
            let mut best = dom_shell[a] / dom_limit[a];
            for d in a + 1..end {
                let mut dist = 0.0f32;
                for s in 0..n {
                    let pa = raw_comp[s * j + a].translation;
                    let pd = raw_comp[s * j + d].translation;
                    dist = dist.max((pd - pa).length());
                }
                let reach = dist + shell[d];
                let ratio = reach / limit[d];
                if ratio > best {
                    best = ratio;
                    dom_shell[a] = reach;
                    dom_limit[a] = limit[d];
                }
            }
        }

        Ok(Prep {
            j,
            n,
            parents: skeleton.parents(),
            subtree_end,
            rest: skeleton.rest_pose(),
            raw: &clip.samples,
            raw_comp,
            raw_mid_comp,
            raw_mid,
            threshold,
            aim,
            floor,
            limit,
            shell,
            dom_shell,
            dom_limit,
        })
    }
}
