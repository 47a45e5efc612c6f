//! Which way a character faces, read from its own body rather than from
//! the declared axes, and whether a retarget kept it.
//!
//! Cues (component space, horizontal): feet point forward (ankle to toe),
//! knees bend forward (the knee's offset from the hip-ankle line, at rest
//! and over a clip), the body's left side is named left (forward =
//! left x up), and locomotion travels forward (pelvis displacement over a
//! clip). `suggest` votes them into the declared `forward`; the metric uses
//! the rest-pose cues of each side to measure a retarget's facing
//! agreement independently of what the profile declares, so a wrong
//! declaration shows as a mirrored result instead of cooking green.

use crate::rig::PoseFk;
use crate::transfer::Ctx;
use ludus_anim_format::math::Vec3;
use ludus_anim_runtime::Skeleton;
use serde::Serialize;

/// One leg of a body: thigh (hip joint), optional knee, foot, optional toe.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Leg {
    pub left: bool,
    pub thigh: usize,
    pub knee: Option<usize>,
    pub foot: usize,
    pub toe: Option<usize>,
}

/// The joints the facing cues read.
#[derive(Clone, Debug, Default)]
pub(crate) struct Body {
    pub pelvis: usize,
    pub legs: Vec<Leg>,
    pub hands: Vec<usize>,
    pub head: Option<usize>,
}

/// One cue: what it is and the forward it points to (unit, horizontal).
#[derive(Clone, Debug)]
pub(crate) struct Cue {
    pub what: &'static str,
    pub dir: Vec3,
    pub weight: f32,
}

fn horiz(v: Vec3, up: Vec3) -> Vec3 {
    v - up * v.dot(up)
}

/// A cue from a horizontal vector that is long enough to mean something.
fn cue(what: &'static str, v: Vec3, up: Vec3, min_len: f32, weight: f32) -> Option<Cue> {
    let h = horiz(v, up);
    (h.length() > min_len).then(|| Cue {
        what,
        dir: h.normalize(),
        weight,
    })
}

fn leg_length(fk: &PoseFk, l: &Leg) -> f32 {
    (fk.position(l.foot) - fk.position(l.thigh))
        .length()
        .max(1e-6)
}

/// The knee's offset from the hip-ankle line (points where the knee bends).
fn knee_offset(fk: &PoseFk, l: &Leg) -> Option<Vec3> {
    let k = fk.position(l.knee?);
    let (h, f) = (fk.position(l.thigh), fk.position(l.foot));
    let axis = (f - h).try_normalize()?;
    let rel = k - h;
    Some(rel - axis * rel.dot(axis))
}

/// The farthest child of `foot`, standing in for a toe when none is named.
pub(crate) fn toe_of(skel: &Skeleton, fk: &PoseFk, foot: usize) -> Option<usize> {
    (0..skel.joint_count())
        .filter(|&j| skel.parent(j) == Some(foot))
        .map(|j| (j, (fk.position(j) - fk.position(foot)).length()))
        .filter(|(_, d)| *d > 1e-6)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(j, _)| j)
}

/// Cues of one pose (the rest or retarget pose).
pub(crate) fn pose_cues(fk: &PoseFk, up: Vec3, body: &Body) -> Vec<Cue> {
    let mut out = Vec::new();
    let mut toes = Vec3::ZERO;
    let mut knees = Vec3::ZERO;
    let mut len = 0.0f32;
    for l in &body.legs {
        let ll = leg_length(fk, l);
        len = len.max(ll);
        if let Some(t) = l.toe {
            toes += horiz(fk.position(t) - fk.position(l.foot), up) / ll;
        }
        if let Some(k) = knee_offset(fk, l) {
            knees += horiz(k, up) / ll;
        }
    }
    out.extend(cue("toes", toes, up, 0.02, 2.0));
    out.extend(cue("knee bend (rest)", knees, up, 0.03, 1.0));
    let thigh = |left: bool| body.legs.iter().find(|l| l.left == left).map(|l| l.thigh);
    if let (Some(a), Some(b)) = (thigh(true), thigh(false)) {
        let left = fk.position(a) - fk.position(b);
        out.extend(cue("left side", left.cross(up), up, 0.01 * len, 1.0));
    }
    out
}

/// Cues of a clip: mean knee bend over its frames (each turned back by the
/// pelvis's turn from the first frame) and the pelvis's travel.
pub(crate) fn clip_cues(frames: &[PoseFk], up: Vec3, body: &Body) -> Vec<Cue> {
    let (Some(first), Some(last)) = (frames.first(), frames.last()) else {
        return Vec::new();
    };
    let len = body
        .legs
        .iter()
        .map(|l| leg_length(first, l))
        .fold(0.0f32, f32::max);
    if len <= 1e-6 {
        return Vec::new();
    }
    let p = body.pelvis;
    let mut knees = Vec3::ZERO;
    for f in frames {
        let back = first.rot[p] * f.rot[p].conjugate();
        for l in &body.legs {
            if let Some(k) = knee_offset(f, l) {
                knees += horiz(back * k, up) / len;
            }
        }
    }
    let n = (frames.len() * body.legs.len().max(1)) as f32;
    let mut out: Vec<Cue> = cue("knee bend (clip)", knees / n, up, 0.03, 1.5)
        .into_iter()
        .collect();
    let travel = last.position(p) - first.position(p);
    out.extend(cue("root travel", travel, up, 0.5 * len, 1.5));
    out
}

/// The weighted vote of the cues (unit, horizontal), if they say anything.
pub(crate) fn vote(cues: &[Cue]) -> Option<Vec3> {
    cues.iter()
        .map(|c| c.dir * c.weight)
        .sum::<Vec3>()
        .try_normalize()
}

/// Facing agreement of one clip (`ClipMetrics::facing`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct FacingMetrics {
    /// Cosine of the pelvis's forward speed series, source vs target
    /// (each along its own body's forward); `None` when the source barely
    /// travels.
    pub travel: Option<f32>,
    /// Cosine of the hands' and head's forward swing (offset from the
    /// pelvis about its clip mean), source vs target; `None` when the
    /// source's barely swing.
    pub pose: Option<f32>,
    /// The smaller of the two: below 0 the result faces the other way.
    pub agreement: Option<f32>,
    /// Pelvis travel along the body's forward over the clip, meters.
    pub source_travel_m: f32,
    pub target_travel_m: f32,
}

/// Forward of a body per frame: its rest forward turned by the pelvis.
fn forwards(frames: &[PoseFk], rest: &PoseFk, pelvis: usize, fwd: Vec3, up: Vec3) -> Vec<Vec3> {
    frames
        .iter()
        .map(|f| {
            let turn = f.rot[pelvis] * rest.rot[pelvis].conjugate();
            horiz(turn * fwd, up).try_normalize().unwrap_or(fwd)
        })
        .collect()
}

/// Per side: forward speeds of the pelvis (heights/s), forward offsets of
/// hands and head (heights), and the travel along forward (m).
struct Series {
    speed: Vec<f32>,
    offsets: Vec<f32>,
    travel: f32,
}

fn series(frames: &[PoseFk], times: &[f32], fwd: &[Vec3], body: &Body, height: f32) -> Series {
    let p = body.pelvis;
    let n = frames.len();
    let mut speed = Vec::with_capacity(n);
    let mut travel = 0.0;
    for f in 1..n {
        let dt = (times[f] - times[f - 1]).max(1e-6);
        let d = (frames[f].position(p) - frames[f - 1].position(p)).dot(fwd[f]);
        travel += d;
        speed.push(d / dt / height);
    }
    // Each end's swing about its clip mean: the rest offsets differ with
    // proportions and rest pose (a T-pose hand, a big head) and say
    // nothing about facing; the swing's phase does.
    let ends: Vec<usize> = body.hands.iter().copied().chain(body.head).collect();
    let mut offsets = Vec::with_capacity(n * ends.len());
    for &e in &ends {
        let o: Vec<f32> = frames
            .iter()
            .zip(fwd)
            .map(|(fr, &fw)| (fr.position(e) - fr.position(p)).dot(fw) / height)
            .collect();
        let mean = o.iter().sum::<f32>() / n.max(1) as f32;
        offsets.extend(o.iter().map(|v| v - mean));
    }
    Series {
        speed,
        offsets,
        travel,
    }
}

/// Cosine of two series; `None` when the first has RMS below `min_rms`.
fn cosine(a: &[f32], b: &[f32], min_rms: f32) -> Option<f32> {
    let aa: f32 = a.iter().map(|x| x * x).sum();
    let bb: f32 = b.iter().map(|x| x * x).sum();
    if a.is_empty() || (aa / a.len() as f32).sqrt() < min_rms {
        return None;
    }
    let ab: f32 = a.iter().zip(b).map(|(x, y)| x * y).sum();
    Some(if bb <= 1e-12 {
        0.0
    } else {
        ab / (aa * bb).sqrt()
    })
}

/// Source and target bodies, each with its rest-pose forward (canonical
/// axes of its own declaration: only the cues decide the direction).
pub(crate) struct Facings {
    pub src: (Body, Vec3),
    pub tgt: (Body, Vec3),
}

/// Both sides' bodies from the resolved chains; `None` without legs on
/// either side.
pub(crate) fn facings(ctx: &Ctx) -> Option<Facings> {
    let side = |s: &crate::side::Side, chains: &[crate::plan::Chain], pelvis: usize| {
        let body = body_from_chains(s.skel, &s.pose, chains, pelvis);
        let up = s.basis.conjugate() * Vec3::Y;
        vote(&pose_cues(&s.pose, up, &body)).map(|f| (body, f))
    };
    let (ps, pt) = ctx.setup.pelvis;
    Some(Facings {
        src: side(ctx.s, &ctx.setup.src_chains, ps)?,
        tgt: side(ctx.t, &ctx.setup.tgt_chains, pt)?,
    })
}

fn body_from_chains(
    skel: &Skeleton,
    pose: &PoseFk,
    chains: &[crate::plan::Chain],
    pelvis: usize,
) -> Body {
    use crate::profile::Role;
    let by_role = |r: Role| chains.iter().find(|c| c.role == r);
    let mut body = Body {
        pelvis,
        head: by_role(Role::Head).and_then(|c| c.joints.first().copied()),
        ..Body::default()
    };
    for (arm, leg, foot, left) in [
        (Role::ArmL, Role::LegL, Role::FootL, true),
        (Role::ArmR, Role::LegR, Role::FootR, false),
    ] {
        body.hands
            .extend(by_role(arm).and_then(|c| c.joints.last().copied()));
        let Some(lc) = by_role(leg) else { continue };
        let (Some(&thigh), Some(&end)) = (lc.joints.first(), lc.joints.last()) else {
            continue;
        };
        let foot_j = by_role(foot).and_then(|c| c.joints.first().copied());
        let (knee, foot_j) = match foot_j {
            Some(f) => ((lc.joints.len() >= 2).then_some(end), f),
            None => (lc.joints.get(lc.joints.len().wrapping_sub(2)).copied(), end),
        };
        body.legs.push(Leg {
            left,
            thigh,
            knee: knee.filter(|&k| k != thigh),
            foot: foot_j,
            toe: toe_of(skel, pose, foot_j),
        });
    }
    body
}

/// Facing agreement of a retargeted clip.
pub(crate) fn measure(
    ctx: &Ctx,
    times: &[f32],
    src: &[PoseFk],
    tgt: &[PoseFk],
) -> Option<FacingMetrics> {
    let f = facings(ctx)?;
    let up_s = ctx.s.basis.conjugate() * Vec3::Y;
    let up_t = ctx.t.basis.conjugate() * Vec3::Y;
    let fs = forwards(src, &ctx.s.pose, f.src.0.pelvis, f.src.1, up_s);
    let ft = forwards(tgt, &ctx.t.pose, f.tgt.0.pelvis, f.tgt.1, up_t);
    let a = series(src, times, &fs, &f.src.0, ctx.s.height);
    let b = series(tgt, times, &ft, &f.tgt.0, ctx.t.height);
    // Thresholds: a walk moves its pelvis ~0.8 heights/s; hands swing
    // ~0.1 heights forward and back.
    let travel = cosine(&a.speed, &b.speed, 0.05);
    let pose = if a.offsets.len() == b.offsets.len() {
        cosine(&a.offsets, &b.offsets, 0.01)
    } else {
        None
    };
    let agreement = match (travel, pose) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    };
    Some(FacingMetrics {
        travel,
        pose,
        agreement,
        source_travel_m: a.travel,
        target_travel_m: b.travel,
    })
}
