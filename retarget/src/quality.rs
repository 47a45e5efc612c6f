//! Metrics that match what a person sees in the result: a foot popping
//! faster than the source's foot during a contact, joints under the
//! floor, toes sliding; and the source's reference first frame (a T-pose
//! before the take, CMU's), which is flagged and left out of the
//! per-frame checks instead of failing them.

use crate::clip_data::ClipData;
use crate::facing::toe_of;
use crate::rig::PoseFk;
use crate::transfer::Ctx;
use ludus_anim_format::math::{rotation_angle, Vec3};
use serde::Serialize;

/// Per contact joint: peak speeds during source contacts and toe slide.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct FootSpeed {
    pub joint: String,
    /// Largest target speed (m/s) in a source-contact frame...
    pub target_peak_mps: f32,
    /// ...the source's speed at that frame scaled to the target (m/s)...
    pub source_at_peak_mps: f32,
    /// ...and the worst `target / (1.5 source + 0.5 leg lengths/s)` over
    /// source-contact frames: above 1 the foot pops.
    pub peak_ratio: f32,
    pub peak_time_s: f32,
    /// Horizontal distance the toe (the foot's farthest child) moves in
    /// source-contact frames, target and source scaled to the target (m).
    pub target_toe_slide_m: f32,
    pub source_toe_slide_m: f32,
}

/// Deepest joint under the floor (m), target and source (scaled).
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Penetration {
    pub target_m: f32,
    pub source_m: f32,
    pub joint: String,
    pub time_s: f32,
}

/// Frame 0 is a reference pose, not motion: its step to frame 1 turns
/// some joint by over 30 degrees, three times more than any joint turns in
/// any later step.
pub(crate) fn reference_first_frame(src: &[PoseFk]) -> bool {
    let step = |f: usize| {
        (0..src[f].rot.len())
            .map(|j| rotation_angle(src[f - 1].rot[j], src[f].rot[j]).to_degrees())
            .fold(0.0f32, f32::max)
    };
    if src.len() < 4 {
        return false;
    }
    let first = step(1);
    let rest = (2..src.len()).map(step).fold(0.0f32, f32::max);
    first > 30.0 && first > 3.0 * rest
}

fn speeds(p: &[Vec3], times: &[f32]) -> Vec<f32> {
    (0..p.len())
        .map(|i| {
            if i == 0 {
                return 0.0;
            }
            let dt = (times[i] - times[i - 1]).max(1e-6);
            (p[i] - p[i - 1]).length() / dt
        })
        .collect()
}

fn horizontal(v: Vec3) -> f32 {
    (v.x * v.x + v.z * v.z).sqrt()
}

/// Foot speed and toe slide per contact joint (canonical axes; source
/// distances times the horizontal scale), frames from `d.first`.
pub(crate) fn foot_speeds(ctx: &Ctx, d: &ClipData) -> Vec<FootSpeed> {
    let (s, t, h) = (ctx.s, ctx.t, ctx.setup.scales.horizontal);
    ctx.setup
        .contacts
        .iter()
        .zip(d.flags)
        .map(|(c, fl)| {
            let leg = (t.pose.position(c.target) - t.pose.position(c.upper)).length();
            let path = |side: &crate::side::Side, fr: &[PoseFk], j: usize| -> Vec<Vec3> {
                fr.iter().map(|f| side.canon(f.position(j))).collect()
            };
            let (ps, pt) = (path(s, d.src, c.source), path(t, d.tgt, c.target));
            let (vs, vt) = (speeds(&ps, d.times), speeds(&pt, d.times));
            let mut m = FootSpeed {
                joint: t.skel.name(c.target).to_string(),
                ..FootSpeed::default()
            };
            for i in (d.first + 1)..fl.len() {
                if !(fl[i] || fl[i - 1]) {
                    continue;
                }
                let allowed = 1.5 * vs[i] * h + 0.5 * leg;
                let r = vt[i] / allowed.max(1e-6);
                if r > m.peak_ratio {
                    m.peak_ratio = r;
                    m.target_peak_mps = vt[i];
                    m.source_at_peak_mps = vs[i] * h;
                    m.peak_time_s = d.times[i];
                }
            }
            let toes = (
                toe_of(s.skel, &s.pose, c.source),
                toe_of(t.skel, &t.pose, c.target),
            );
            if let (Some(ts), Some(tt)) = toes {
                let (qs, qt) = (path(s, d.src, ts), path(t, d.tgt, tt));
                for i in (d.first + 1)..fl.len() {
                    if fl[i] && fl[i - 1] {
                        m.source_toe_slide_m += horizontal(qs[i] - qs[i - 1]) * h;
                        m.target_toe_slide_m += horizontal(qt[i] - qt[i - 1]);
                    }
                }
            }
            m
        })
        .collect()
}

/// Deepest joint below each side's floor over frames from `d.first`,
/// relative to where that joint stands in the retarget pose when it is
/// already below the floor there (a rig's floor-level helpers).
pub(crate) fn penetration(ctx: &Ctx, d: &ClipData) -> Penetration {
    let (s, t) = (ctx.s, ctx.t);
    let v = ctx.setup.scales.vertical;
    let depth = |side: &crate::side::Side, fr: &PoseFk, j: usize| {
        let rest = side.canon(side.pose.position(j)).y.min(side.floor);
        rest - side.canon(fr.position(j)).y
    };
    let mut out = Penetration::default();
    for f in d.first..d.tgt.len() {
        for j in 0..t.skel.joint_count() {
            let p = depth(t, &d.tgt[f], j);
            if p > out.target_m {
                out.target_m = p;
                out.joint = t.skel.name(j).to_string();
                out.time_s = d.times[f];
            }
        }
        for j in 0..s.skel.joint_count() {
            out.source_m = out.source_m.max(depth(s, &d.src[f], j) * v);
        }
    }
    out
}
