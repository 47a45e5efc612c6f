//! Contact-aware planting over a whole clip: detect source contacts, plant
//! the target joints during them with two-bone IK, lower the pelvis where
//! a plant is out of reach.

use crate::contacts::{detect, plant_target, plants, PlantInput};
use crate::ik::{required_drop, smooth_drop, solve, TwoBone};
use crate::profile::ContactSpec;
use crate::rig::PoseFk;
use crate::setup::ContactPlan;
use crate::transfer::Ctx;
use ludus_anim_runtime::math::Vec3;

/// Source contact flags, one list per contact joint.
pub(crate) fn source_contacts(
    ctx: &Ctx,
    spec: &ContactSpec,
    times: &[f32],
    src: &[PoseFk],
) -> Vec<Vec<bool>> {
    ctx.setup
        .contacts
        .iter()
        .map(|c| {
            let p: Vec<Vec3> = src
                .iter()
                .map(|f| ctx.s.canon(f.position(c.source)))
                .collect();
            detect(
                &p,
                times,
                ctx.s.height,
                spec.height_threshold,
                spec.speed_threshold,
            )
        })
        .collect()
}

/// Per contact and frame: IK weight and component-space target.
type Targets = Vec<Vec<Option<Vec3>>>;

fn ik_targets(
    ctx: &Ctx,
    spec: &ContactSpec,
    times: &[f32],
    src: &[PoseFk],
    tgt: &[PoseFk],
    flags: &[Vec<bool>],
    looping: bool,
) -> Targets {
    let (s, t) = (ctx.s, ctx.t);
    let pel = ctx.setup.pelvis.1;
    let loop_shift = looping.then(|| {
        let d = t.canon(tgt[tgt.len() - 1].position(pel)) - t.canon(tgt[0].position(pel));
        Vec3::new(d.x, 0.0, d.z)
    });
    ctx.setup
        .contacts
        .iter()
        .zip(flags)
        .map(|(c, fl)| {
            let ps: Vec<f32> = src
                .iter()
                .map(|f| s.canon(f.position(c.source)).y)
                .collect();
            let low = ps.iter().copied().fold(f32::INFINITY, f32::min);
            let hs: Vec<f32> = ps.iter().map(|y| y - low).collect();
            let fk: Vec<Vec3> = tgt.iter().map(|f| t.canon(f.position(c.target))).collect();
            let pl = plants(&PlantInput {
                flags: fl,
                times,
                fk: &fk,
                src_height: &hs,
                ground_y: t.canon(t.pose.position(c.target)).y,
                vertical_scale: ctx.setup.scales.vertical,
                loop_shift,
            });
            times
                .iter()
                .zip(&fk)
                .map(|(&time, &p)| {
                    plant_target(&pl, time, spec.blend_s, p).map(|at| t.basis.conjugate() * at)
                })
                .collect()
        })
        .collect()
}

/// Plant the target: pelvis correction, then IK, frame by frame.
pub(crate) fn plant(
    ctx: &Ctx,
    spec: &ContactSpec,
    times: &[f32],
    src: &[PoseFk],
    tgt: &mut [PoseFk],
    flags: &[Vec<bool>],
    looping: bool,
) {
    if ctx.setup.contacts.is_empty() || tgt.is_empty() {
        return;
    }
    let targets = ik_targets(ctx, spec, times, src, tgt, flags, looping);
    if spec.pelvis_correction {
        correct_pelvis(ctx, spec, times, tgt, &targets, looping);
    }
    for (f, pose) in tgt.iter_mut().enumerate() {
        for (c, tg) in ctx.setup.contacts.iter().zip(&targets) {
            if let Some(at) = tg[f] {
                let pole = source_pole(ctx, c, &src[f]);
                let ik = TwoBone {
                    upper: c.upper,
                    mid: c.mid,
                    end: c.target,
                };
                solve(ctx.t.skel, pose, &ik, at, pole);
                ctx.place_followers(pose);
            }
        }
    }
}

/// The source knee's offset from its hip-to-ankle line, in target axes.
fn source_pole(ctx: &Ctx, c: &ContactPlan, src: &PoseFk) -> Option<Vec3> {
    let sk = ctx.s.skel;
    let mid = sk.parent(c.source)?;
    let upper = sk.parent(mid)?;
    let (h, k, e) = (
        src.position(upper),
        src.position(mid),
        src.position(c.source),
    );
    let u = (e - h).try_normalize()?;
    let off = (k - h) - u * (k - h).dot(u);
    Some(ctx.setup.a * off)
}

fn correct_pelvis(
    ctx: &Ctx,
    spec: &ContactSpec,
    times: &[f32],
    tgt: &mut [PoseFk],
    targets: &Targets,
    looping: bool,
) {
    let t = ctx.t;
    let up = t.basis.conjugate() * Vec3::Y;
    let reach: Vec<f32> = ctx
        .setup
        .contacts
        .iter()
        .map(|c| {
            let (h, k, e) = (
                t.pose.position(c.upper),
                t.pose.position(c.mid),
                t.pose.position(c.target),
            );
            ((k - h).length() + (e - k).length()) * 0.999
        })
        .collect();
    let n = tgt.len();
    let mut drop: Vec<f32> = (0..n)
        .map(|f| {
            let mut d = 0.0f32;
            for ((c, tg), &r) in ctx.setup.contacts.iter().zip(targets).zip(&reach) {
                if let Some(at) = tg[f] {
                    d = d.max(required_drop(tgt[f].position(c.upper), at, r, up));
                }
            }
            d
        })
        .collect();
    if drop.iter().all(|&d| d == 0.0) {
        return;
    }
    let dt = times.last().copied().unwrap_or(0.0) / (n.max(2) - 1) as f32;
    let radius = if dt > 0.0 {
        (spec.blend_s / dt).round() as usize
    } else {
        0
    };
    if looping && n > 2 {
        let mut periodic = smooth_drop(&drop[..n - 1], radius, true);
        periodic.push(periodic[0]);
        drop = periodic;
    } else {
        drop = smooth_drop(&drop, radius, false);
    }
    let pel = ctx.setup.pelvis.1;
    for (pose, d) in tgt.iter_mut().zip(drop) {
        if d > 0.0 {
            let p = pose.position(pel) - up * d;
            pose.set_position(t.skel, pel, p);
            pose.fk_from(t.skel, pel);
            ctx.place_followers(pose);
        }
    }
}
