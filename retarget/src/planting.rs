//! Contact-aware planting over a whole clip: detect source contacts, plant
//! the target joints during them with two-bone IK, lower the pelvis where
//! a plant is out of reach.

use crate::contacts::{detect, plant_target, plants, PlantInput};
use crate::ik::{required_drop, smooth_drop, solve, TwoBone};
use crate::profile::ContactSpec;
use crate::rig::PoseFk;
use crate::setup::ContactPlan;
use crate::transfer::Ctx;
use ludus_anim_format::math::Vec3;

/// Source contact flags, one list per contact joint.
pub(crate) fn source_contacts(
    ctx: &Ctx,
    spec: &ContactSpec,
    times: &[f32],
    src: &[PoseFk],
) -> Vec<Vec<bool>> {
    let h = ctx.s.height;
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
                spec.height_threshold * h,
                spec.speed_threshold * h,
            )
        })
        .collect()
}

/// A ground is a height a joint holds: a single reference frame or spike
/// below it (CMU's first frame, a T-pose) does not set it.
const GROUND_HOLD_S: f32 = 0.1;

/// Per contact joint with contacts in the clip: its source ground, the
/// lowest height (canonical up) it holds for [`GROUND_HOLD_S`] (min over
/// windows of the window's max); `None` without contacts.
pub(crate) fn source_grounds(
    ctx: &Ctx,
    times: &[f32],
    src: &[PoseFk],
    flags: &[Vec<bool>],
) -> Vec<Option<f32>> {
    ctx.setup
        .contacts
        .iter()
        .zip(flags)
        .map(|(c, fl)| {
            if !fl.iter().any(|&f| f) {
                return None;
            }
            let ys: Vec<f32> = src
                .iter()
                .map(|f| ctx.s.canon(f.position(c.source)).y)
                .collect();
            held_minimum(&ys, times, GROUND_HOLD_S)
        })
        .collect()
}

/// The lowest value `ys` stays at or below for `hold` seconds: min over
/// windows spanning `hold` of the window's max (the plain min when the
/// clip is shorter).
fn held_minimum(ys: &[f32], times: &[f32], hold: f32) -> Option<f32> {
    let mut best: Option<f32> = None;
    let mut end = 0;
    for i in 0..ys.len() {
        end = end.max(i);
        while end < ys.len() && times[end] - times[i] < hold {
            end += 1;
        }
        if end == ys.len() {
            break;
        }
        let m = ys[i..=end]
            .iter()
            .copied()
            .fold(f32::NEG_INFINITY, f32::max);
        best = Some(best.map_or(m, |b: f32| b.min(m)));
    }
    best.or_else(|| ys.iter().copied().reduce(f32::min))
}

/// Vertical offset of the target pelvis that puts the source's grounded
/// contact joints at the target's own ground: the target joint's height
/// above its floor in the retarget pose (which stands on the floor) minus
/// the scaled source ground height above its floor, averaged over contact
/// joints with contacts (0 without any: the declared floors map).
pub(crate) fn ground_lift(ctx: &Ctx, grounds: &[Option<f32>]) -> f32 {
    let lifts: Vec<f32> = ctx
        .setup
        .contacts
        .iter()
        .zip(grounds)
        .filter_map(|(c, g)| Some(joint_lift(ctx, c, (*g)?)))
        .collect();
    if lifts.is_empty() {
        0.0
    } else {
        lifts.iter().sum::<f32>() / lifts.len() as f32
    }
}

/// The lift that would ground this one contact joint on its own.
fn joint_lift(ctx: &Ctx, c: &ContactPlan, ground: f32) -> f32 {
    let (s, v) = (ctx.s, ctx.setup.scales.vertical);
    target_ground(ctx, c.target) - v * (ground - s.floor)
}

/// Height of a target contact joint above the target's floor when the
/// character stands: its retarget-pose height when that pose stands on
/// the floor (its lowest joint within 5% of the height of it), else its
/// height above the pose's lowest joint (a rest pose floating or sunk,
/// like a BVH zero pose with the hips at the origin: taking it as
/// standing would sink the whole result and fail even a rig onto itself).
/// A contact joint standing more than 5% of the height above the lowest
/// contact joint of the pose is a lifted foot, not a ground: it takes the
/// lowest one's (PAB's FBX rest is a mocap frame with the right foot
/// lifted: its planted right foot stood there, 0.39 limb lengths off).
fn target_ground(ctx: &Ctx, joint: usize) -> f32 {
    let t = ctx.t;
    let own = |j: usize| {
        if (t.lowest - t.floor).abs() <= 0.05 * t.height {
            t.canon(t.pose.position(j)).y - t.floor
        } else {
            t.height_above_lowest(j)
        }
    };
    let lowest = ctx
        .setup
        .contacts
        .iter()
        .map(|c| own(c.target))
        .fold(own(joint), f32::min);
    if own(joint) - lowest > 0.05 * t.height {
        lowest
    } else {
        own(joint)
    }
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
    let grounds = source_grounds(ctx, times, src, flags);
    ctx.setup
        .contacts
        .iter()
        .zip(flags)
        .zip(grounds)
        .map(|((c, fl), ground)| {
            let ys: Vec<f32> = src
                .iter()
                .map(|f| s.canon(f.position(c.source)).y)
                .collect();
            // A joint without contacts in this clip is left where the
            // transfer puts it, except never under the target's ground
            // (a short clip whose foot never holds still, PAB's jog onto
            // the Knight: 5.9 cm under the floor).
            let Some(g) = ground else {
                let ground_t = t.floor + target_ground(ctx, c.target);
                return tgt
                    .iter()
                    .map(|f| {
                        let p = t.canon(f.position(c.target));
                        (p.y < ground_t)
                            .then(|| t.basis.conjugate() * Vec3::new(p.x, ground_t, p.z))
                    })
                    .collect();
            };
            // Every frame, the source's height above its ground (the
            // lowest it holds), scaled, above the target's own ground
            // (its retarget-pose height): a flat foot stands at the
            // target's ankle height, a heel-off or a swing rises as the
            // source's does. Transferred FK heights are close (the pelvis
            // lift) but not this map: thigh and shin proportions differ
            // (CMU 43:57, the Knight 54:46), so a bent knee lifts each foot
            // differently, and the source's two feet need not share one
            // ground (2 cm apart in CMU 12_01).
            let ground_t = t.floor + target_ground(ctx, c.target);
            let v = ctx.setup.scales.vertical;
            let fk: Vec<Vec3> = tgt.iter().map(|f| t.canon(f.position(c.target))).collect();
            let pl = plants(&PlantInput {
                flags: fl,
                times,
                fk: &fk,
                loop_shift,
                merge_gap_s: spec.blend_s,
            });
            times
                .iter()
                .zip(&fk)
                .zip(&ys)
                .map(|((&time, &p), &y)| {
                    let mut at = plant_target(&pl, time, spec.blend_s, p);
                    // Never below the target's ground: the ankle is at its
                    // lowest flat on the floor (CMU's first frame, a
                    // reference pose, has it 1.5 cm under its ground).
                    at.y = ground_t + v * (y - g).max(0.0);
                    Some(t.basis.conjugate() * at)
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
    let t = ctx.t;
    let up = t.basis.conjugate() * Vec3::Y;
    for (f, pose) in tgt.iter_mut().enumerate() {
        for (c, tg) in ctx.setup.contacts.iter().zip(&targets) {
            if let Some(at) = tg[f] {
                let pole = source_pole(ctx, c, &src[f]);
                let ik = TwoBone {
                    upper: c.upper,
                    mid: c.mid,
                    end: c.target,
                };
                solve(t.skel, pose, &ik, at, pole);
                ctx.place_followers(pose);
                // The foot's own children (toes, a ball) stay above the
                // floor too: a foot pitched down by the source's heel-off on
                // a longer target foot put MakeHuman's toe 4 cm under it
                // (PAB's run). Raise the target by the deepest and solve
                // again.
                let sink = below_floor(ctx, pose, c.target);
                if sink > 1e-4 {
                    solve(t.skel, pose, &ik, at + up * sink, pole);
                    ctx.place_followers(pose);
                }
            }
        }
    }
}

/// Every joint above the target's floor, not only planted feet: a knee
/// in a kneel or a hop, a leg the contacts do not plant (a foot without a
/// knee to bend, the Quaternius Skeleton's shin 9.7 cm under the floor in
/// CMU 01_01). Per frame, the deepest target joint under the floor
/// (counted from its retarget-pose height when that is already under it,
/// as the floor metric counts it) beyond the source's own deepest (scaled:
/// a rig onto itself keeps its source's toe under the floor) raises the
/// pelvis, and with it the body, by the difference; the raise is a max
/// filter then a box average over `blend_s`, so it never jumps.
pub(crate) fn keep_above_floor(
    ctx: &Ctx,
    spec: &ContactSpec,
    times: &[f32],
    src: &[PoseFk],
    tgt: &mut [PoseFk],
    looping: bool,
) {
    let (s, t) = (ctx.s, ctx.t);
    let v = ctx.setup.scales.vertical;
    let deepest = |side: &crate::side::Side, fr: &PoseFk| {
        (0..side.skel.joint_count())
            .map(|j| {
                let rest = side.canon(side.pose.position(j)).y.min(side.floor);
                rest - side.canon(fr.position(j)).y
            })
            .fold(0.0f32, f32::max)
    };
    let n = tgt.len();
    let mut raise: Vec<f32> = (0..n)
        .map(|f| (deepest(t, &tgt[f]) - v * deepest(s, &src[f])).max(0.0))
        .collect();
    // Below a tenth of a millimetre: quantization, not a pose.
    if raise.iter().all(|&d| d < 1e-4) {
        return;
    }
    let dt = times.last().copied().unwrap_or(0.0) / (n.max(2) - 1) as f32;
    let radius = if dt > 0.0 {
        (spec.blend_s / dt).round() as usize
    } else {
        0
    };
    if looping && n > 2 {
        let mut periodic = smooth_drop(&raise[..n - 1], radius, true);
        periodic.push(periodic[0]);
        raise = periodic;
    } else {
        raise = smooth_drop(&raise, radius, false);
    }
    let up = t.basis.conjugate() * Vec3::Y;
    let pel = ctx.setup.pelvis.1;
    for (pose, d) in tgt.iter_mut().zip(raise) {
        if d > 0.0 {
            let p = pose.position(pel) + up * d;
            pose.set_position(t.skel, pel, p);
            pose.fk_from(t.skel, pel);
            ctx.place_followers(pose);
        }
    }
}

/// How far (m) the deepest joint below `joint` (not itself) is under the
/// target's floor, counted from its retarget-pose height when that is
/// already under it (as the floor metric counts it); 0 when none is.
fn below_floor(ctx: &Ctx, pose: &PoseFk, joint: usize) -> f32 {
    let t = ctx.t;
    let end = t.skel.subtree_ends()[joint] as usize;
    (joint + 1..end)
        .map(|j| {
            let floor = t.canon(t.pose.position(j)).y.min(t.floor);
            floor - t.canon(pose.position(j)).y
        })
        .fold(0.0f32, f32::max)
}

/// Share of the source leg's length by which the pole leans forward: a
/// knee bent less than this (a straight or slightly hyperextended source
/// knee, whose offset from the hip-to-ankle line is noise or points
/// backwards) bends the target's knee forward, never back.
const POLE_FORWARD: f32 = 0.05;

/// The source knee's offset from its hip-to-ankle line, in target axes,
/// plus [`POLE_FORWARD`] leg lengths along the target's forward: CMU
/// 12_01 onto PAB (whose rest knees are bent) flipped the right knee by
/// 105 degrees in one frame where the source's leg straightened past its
/// hip-to-ankle line.
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
    let leg = (k - h).length() + (e - k).length();
    let forward = ctx.t.basis.conjugate() * Vec3::Z;
    Some(ctx.setup.a * off + forward * (POLE_FORWARD * leg))
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

#[cfg(test)]
mod tests {
    use super::held_minimum;

    #[test]
    fn a_held_minimum_ignores_a_one_frame_dip() {
        let times: Vec<f32> = (0..40).map(|i| i as f32 / 30.0).collect();
        let mut ys: Vec<f32> = (0..40)
            .map(|i| if (10..25).contains(&i) { 0.05 } else { 0.3 })
            .collect();
        ys[0] = 0.0; // a reference frame under the floor
        assert_eq!(held_minimum(&ys, &times, 0.1), Some(0.05));
        assert_eq!(held_minimum(&ys[..2], &times[..2], 0.1), Some(0.0));
    }
}
