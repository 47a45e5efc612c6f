//! Per-clip retarget quality metrics (definitions in `schemas/retarget.md`)
//! and their budgets. A breach becomes an error diagnostic naming the
//! clip, the joint and the time, like the codec's error threshold.

use crate::contacts::{detect, horizontal_speeds};
use crate::profile::{BreachPolicy, Budgets, ContactSpec, Role};
use crate::rig::PoseFk;
use crate::side::Side;
use crate::transfer::Ctx;
use ludus_anim_format::math::{rotation_angle, Vec3};
use ludus_anim_model::Diagnostic;
use serde::Serialize;

/// A worst value and where it happened.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct Worst {
    pub value: f32,
    pub joint: String,
    pub time_s: f32,
}

impl Worst {
    fn offer(&mut self, value: f32, joint: &str, time_s: f32) {
        if value > self.value {
            *self = Worst {
                value,
                joint: joint.to_string(),
                time_s,
            };
        }
    }
}

/// Contact metrics of one contact joint (target name).
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct ContactMetrics {
    pub joint: String,
    pub source_contact_frames: usize,
    /// Fraction of source-contact frames in which the joint moves faster
    /// than the skate speed, on the source and on the target.
    pub source_skate_fraction: f32,
    pub target_skate_fraction: f32,
    /// Fraction of source-contact frames in which the target skates and
    /// the source does not: the skating the retarget added (budgeted).
    pub added_skate_fraction: f32,
    /// Horizontal distance travelled during source-contact frames, in
    /// meters and in source character heights (the target's divided by
    /// the horizontal scale, so that the two compare).
    pub source_skate_distance_m: f32,
    pub target_skate_distance_m: f32,
    pub source_skate_distance_h: f32,
    pub target_skate_distance_h: f32,
    /// Fraction of source-contact frames that are contacts on the target.
    pub preservation: f32,
    /// First source-contact time where the target skates.
    pub first_skate_s: Option<f32>,
}

/// One target joint's rotation change between two consecutive frames.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct JumpMetric {
    pub joint: String,
    /// Time of the later frame.
    pub time_s: f32,
    pub target_deg: f32,
    /// The same frame's change of the source joints that drive this joint
    /// (plus any twist it takes): what the source itself does.
    pub source_deg: f32,
    /// `max(max_angular_jump_deg, source_deg + 1)`.
    pub limit_deg: f32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct TwistMetrics {
    pub joint: String,
    pub range_deg: f32,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct ClipMetrics {
    pub clip: String,
    pub frames: usize,
    pub looping: bool,
    pub contacts: Vec<ContactMetrics>,
    /// Hands and feet: distance from where the source's limb bone
    /// directions put them on the target's limb, in target limb lengths.
    pub end_effector_error: Worst,
    /// Meters, joints whose translation mode keeps bone lengths.
    pub bone_length_deviation_m: Worst,
    /// Flip detector (degrees of component rotation between two baked
    /// frames): the largest target jump, with its source allowance...
    pub max_angular_jump: JumpMetric,
    /// ...and the joint and frame closest to (or furthest over) its limit
    /// `max(budget, source allowance + 1 deg)`: a breach when over.
    pub angular_jump_least_headroom: JumpMetric,
    pub twists: Vec<TwistMetrics>,
    /// Facing agreement of source and result (`None` without legs).
    #[serde(default)]
    pub facing: Option<crate::facing::FacingMetrics>,
    /// The source's first frame is a reference pose (a T-pose before the
    /// take): left out of the jump, foot-speed and floor checks.
    #[serde(default)]
    pub reference_first_frame: bool,
    /// Per contact joint: peak speed against the source's, toe slide.
    #[serde(default)]
    pub foot_speeds: Vec<crate::quality::FootSpeed>,
    /// Deepest joint under the floor, target and source.
    #[serde(default)]
    pub floor_penetration: crate::quality::Penetration,
}

/// Skate speed: half the contact speed threshold (heights per second).
const SKATE_OF_CONTACT_SPEED: f32 = 0.5;

pub(crate) use crate::clip_data::ClipData;

pub(crate) fn measure(
    ctx: &Ctx,
    spec: &ContactSpec,
    budgets: &Budgets,
    d: &ClipData,
) -> ClipMetrics {
    let (max_angular_jump, angular_jump_least_headroom) =
        jumps(ctx, d, budgets.max_angular_jump_deg);
    ClipMetrics {
        clip: d.name.to_string(),
        frames: d.times.len(),
        looping: d.looping,
        contacts: contact_metrics(ctx, spec, d),
        end_effector_error: end_effectors(ctx, d),
        bone_length_deviation_m: bone_lengths(ctx, d),
        max_angular_jump,
        angular_jump_least_headroom,
        twists: twist_metrics(ctx, d),
        facing: crate::facing::measure(ctx, d.times, d.src, d.tgt),
        reference_first_frame: d.first > 0,
        foot_speeds: crate::quality::foot_speeds(ctx, d),
        floor_penetration: crate::quality::penetration(ctx, d),
    }
}

/// Target horizontal lengths in source heights: the source height mapped
/// by the horizontal scale (not the target's own height, which carries its
/// proportions: the Knight's head).
fn target_length(ctx: &Ctx) -> f32 {
    ctx.s.height * ctx.setup.scales.horizontal
}

/// The target's skate speed (m/s): faster during a source contact is a
/// skate.
pub(crate) fn skate_speed(ctx: &Ctx, spec: &ContactSpec) -> f32 {
    spec.speed_threshold * SKATE_OF_CONTACT_SPEED * target_length(ctx)
}

fn contact_metrics(ctx: &Ctx, spec: &ContactSpec, d: &ClipData) -> Vec<ContactMetrics> {
    let (s, t, sc) = (ctx.s, ctx.t, ctx.setup.scales);
    let skate = spec.speed_threshold * SKATE_OF_CONTACT_SPEED;
    let t_len = target_length(ctx);
    ctx.setup
        .contacts
        .iter()
        .zip(d.flags)
        .map(|(c, fl)| {
            let ps: Vec<Vec3> = d
                .src
                .iter()
                .map(|f| s.canon(f.position(c.source)))
                .collect();
            let pt: Vec<Vec3> = d
                .tgt
                .iter()
                .map(|f| t.canon(f.position(c.target)))
                .collect();
            // The source's detector mapped through the retarget's scales:
            // thresholds in source heights, times the vertical scale for
            // heights and the horizontal scale for speeds.
            let mut tflags = detect(
                &pt,
                d.times,
                spec.height_threshold * s.height * sc.vertical,
                spec.speed_threshold * t_len,
            );
            // The same loop rule as the source's flags: the last frame of
            // a loop is its first.
            if d.looping {
                if let (Some(&first), Some(last)) = (tflags.first(), tflags.len().checked_sub(1)) {
                    tflags[last] = first;
                }
            }
            let (vs, vt) = (
                horizontal_speeds(&ps, d.times),
                horizontal_speeds(&pt, d.times),
            );
            let step = |p: &[Vec3], i: usize| {
                let q = p[i] - p[i - 1];
                (q.x * q.x + q.z * q.z).sqrt()
            };
            let mut m = ContactMetrics {
                joint: t.skel.name(c.target).to_string(),
                ..Default::default()
            };
            let (mut ss, mut ts, mut kept, mut added) = (0usize, 0usize, 0usize, 0usize);
            for i in 0..fl.len() {
                if !fl[i] {
                    continue;
                }
                m.source_contact_frames += 1;
                let src_skates = vs[i] > skate * s.height;
                ss += usize::from(src_skates);
                if vt[i] > skate * t_len {
                    ts += 1;
                    if !src_skates {
                        added += 1;
                        m.first_skate_s.get_or_insert(d.times[i]);
                    }
                }
                kept += usize::from(tflags[i]);
                if i > 0 && fl[i - 1] {
                    m.source_skate_distance_m += step(&ps, i);
                    m.target_skate_distance_m += step(&pt, i);
                }
            }
            let n = m.source_contact_frames.max(1) as f32;
            m.source_skate_fraction = ss as f32 / n;
            m.target_skate_fraction = ts as f32 / n;
            m.added_skate_fraction = added as f32 / n;
            m.preservation = if m.source_contact_frames == 0 {
                1.0
            } else {
                kept as f32 / n
            };
            m.source_skate_distance_h = m.source_skate_distance_m / s.height;
            m.target_skate_distance_h = m.target_skate_distance_m / t_len;
            m
        })
        .collect()
}

/// One limb on both sides: (source points, target points), each the limb's
/// joints from its root (shoulder or hip) to its end effector (hand, foot).
pub(crate) type Limb = (Vec<usize>, Vec<usize>);

/// Arms: the arm chain. Legs: the leg chain, then the end of the foot
/// chain of the same side when one is mapped (the foot may be an IK
/// control outside the leg), so a leg split at the shin still ends at the
/// foot.
pub(crate) fn limbs(ctx: &Ctx) -> Vec<Limb> {
    let setup = ctx.setup;
    // Source chain driving target chain `ti`.
    let source_of = |ti: usize| {
        setup.tgt_chains[ti].joints.iter().find_map(|&k| {
            setup.drives[k]
                .filter(|d| d.tgt_chain == ti)
                .and_then(|d| setup.src_chains.get(d.src_chain))
        })
    };
    let mut out = Vec::new();
    for (ti, c) in setup.tgt_chains.iter().enumerate() {
        if !(c.role.is_arm() || c.role.is_leg()) {
            continue;
        }
        let Some(sc) = source_of(ti) else { continue };
        let (mut s_pts, mut t_pts) = (sc.joints.clone(), c.joints.clone());
        if c.role.is_leg() {
            let foot = if c.role == Role::LegL {
                Role::FootL
            } else {
                Role::FootR
            };
            let mapped_foot = setup
                .tgt_chains
                .iter()
                .enumerate()
                .filter(|(_, f)| f.role == foot)
                .find_map(|(fi, f)| source_of(fi).map(|sf| (sf, f)));
            if let Some((sf, f)) = mapped_foot {
                s_pts.extend(sf.joints.last().filter(|j| !s_pts.contains(j)));
                t_pts.extend(f.joints.last().filter(|j| !t_pts.contains(j)));
            }
        }
        if s_pts.len() >= 2 && t_pts.len() >= 2 {
            out.push((s_pts, t_pts));
        }
    }
    out
}

/// Cumulative pose length of each limb point over the limb's length.
fn limb_params(side: &Side, pts: &[usize]) -> Vec<f32> {
    let mut cum = vec![0.0f32];
    for w in pts.windows(2) {
        let l = (side.pose.position(w[1]) - side.pose.position(w[0])).length();
        cum.push(cum[cum.len() - 1] + l);
    }
    let total = cum[cum.len() - 1].max(1e-6 * side.height);
    cum.iter().map(|c| c / total).collect()
}

/// Per target limb segment: the source points it spans (indices into the
/// source limb), the target segment's pose length, and the source span's.
/// With as many segments or more on the target, each target segment takes
/// the source segment at the same normalized length (its midpoint). A
/// target limb with fewer segments than its source (a leg without a knee:
/// one bone from hip to ankle) spans the whole source limb: its one bone
/// goes where the source's limb points, hip to end.
fn segment_pairs(s: &Side, sp: &[usize], t: &Side, tp: &[usize]) -> Vec<(usize, usize, f32, f32)> {
    let (us, ut) = (limb_params(s, sp), limb_params(t, tp));
    let len =
        |side: &Side, a: usize, b: usize| (side.pose.position(b) - side.pose.position(a)).length();
    if tp.len() == 2 && sp.len() > 2 {
        let last = sp.len() - 1;
        return vec![(0, last, len(t, tp[0], tp[1]), len(s, sp[0], sp[last]))];
    }
    (0..tp.len() - 1)
        .map(|i| {
            let mid = 0.5 * (ut[i] + ut[i + 1]);
            let j = us[1..us.len() - 1].partition_point(|&u| u <= mid);
            (j, j + 1, len(t, tp[i], tp[i + 1]), len(s, sp[j], sp[j + 1]))
        })
        .collect()
}

fn end_effectors(ctx: &Ctx, d: &ClipData) -> Worst {
    let (s, t) = (ctx.s, ctx.t);
    let mut w = Worst::default();
    for (sp, tp) in limbs(ctx) {
        let pairs = segment_pairs(s, &sp, t, &tp);
        let length: f32 = pairs.iter().map(|p| p.2).sum::<f32>().max(1e-6 * t.height);
        let floor = 1e-6 * s.height;
        let name = tp.last().map_or("", |&k| t.skel.name(k));
        let (root, end) = (tp[0], tp[tp.len() - 1]);
        for (f, time) in d.times.iter().enumerate() {
            let (fs, ft) = (&d.src[f], &d.tgt[f]);
            // Where the source's segments put the end on the target's own
            // bones, from the target's limb root: each source segment's
            // direction, at the target's pose length times the source's
            // stretch (1 for a bone; an IK foot control may not be rigid).
            let predicted: Vec3 = pairs
                .iter()
                .map(|&(a, b, len_t, len_s)| {
                    let seg = s.canon(fs.position(sp[b]) - fs.position(sp[a]));
                    // A span over a joint bends: its direction only.
                    if len_s > floor && b == a + 1 {
                        seg * (len_t / len_s)
                    } else {
                        seg.normalize_or_zero() * len_t
                    }
                })
                .sum();
            let actual = t.canon(ft.position(end) - ft.position(root));
            w.offer((actual - predicted).length() / length, name, *time);
        }
    }
    w
}

fn bone_lengths(ctx: &Ctx, d: &ClipData) -> Worst {
    let (t, setup) = (ctx.t, ctx.setup);
    let rest = t.skel.rest_pose();
    let root_like = |k: usize| {
        k == setup.pelvis.1
            || setup.motion_root.is_some_and(|m| m.1 == k)
            || setup.followers.iter().any(|f| f.joint == k)
            || t.skel.parent(k).is_none()
    };
    let keeps = |k: usize| match setup.drives[k] {
        Some(dr) => dr.trans == crate::profile::TranslationMode::None,
        None => true,
    };
    let mut w = Worst::default();
    for (f, time) in d.times.iter().enumerate() {
        for k in (0..t.skel.joint_count()).filter(|&k| keeps(k) && !root_like(k)) {
            let dev = (d.tgt[f].local[k].translation - rest[k].translation).length();
            w.offer(dev, t.skel.name(k), *time);
        }
    }
    w
}

/// Degrees between a joint's component rotations at frames `f - 1`, `f`.
fn step_deg(frames: &[PoseFk], f: usize, j: usize) -> f32 {
    rotation_angle(frames[f - 1].rot[j], frames[f].rot[j]).to_degrees()
}

/// What feeds each target joint's component rotation: the source joints of
/// its delta, or (keeping its retarget-pose local rotation) its parent's
/// feed, or for an undriven follower the followed joint's; plus twist.
struct Feed {
    sources: Vec<usize>,
    /// Inherits from this target joint (parent or followed joint).
    from: Option<usize>,
    /// (twist plan, weight) applied on top.
    twists: Vec<(usize, f32)>,
}

fn feeds(ctx: &Ctx) -> Vec<Feed> {
    let (t, setup) = (ctx.t, ctx.setup);
    let mut out: Vec<Feed> = (0..t.skel.joint_count())
        .map(|k| match setup.drives[k].and_then(|d| d.rot) {
            Some(dl) => Feed {
                sources: vec![dl.a, dl.b],
                from: None,
                twists: Vec::new(),
            },
            None => Feed {
                sources: Vec::new(),
                from: setup
                    .followers
                    .iter()
                    .find(|f| f.joint == k)
                    .map(|f| f.follow)
                    .or_else(|| t.skel.parent(k)),
                twists: Vec::new(),
            },
        })
        .collect();
    for (i, plan) in setup.twists.iter().enumerate() {
        for &(k, _, w) in &plan.targets {
            out[k].twists.push((i, w));
        }
    }
    out
}

/// Flip detector. A target joint driven by source joint `a` has component
/// rotation `D_a(t) G_k(pose)`, so its frame-to-frame change equals the
/// source joint's exactly: the allowance is the source's own change at
/// the same frame (max over the delta's two joints; a joint keeping its
/// pose local rotation inherits its parent's, an undriven follower the
/// followed joint's; twist adds `|w * dtheta|`, the source's twist step). A fast source motion is
/// therefore never a target flip; IK, blends and twist get 1 degree.
fn jumps(ctx: &Ctx, d: &ClipData, budget: f32) -> (JumpMetric, JumpMetric) {
    let t = ctx.t;
    let feeds = feeds(ctx);
    let n = t.skel.joint_count();
    let mut worst = JumpMetric::default();
    let mut tight = JumpMetric {
        limit_deg: f32::INFINITY,
        ..Default::default()
    };
    let mut headroom = f32::INFINITY;
    let mut allow = vec![None::<f32>; n];
    for f in (1 + d.first)..d.tgt.len() {
        allow.iter_mut().for_each(|a| *a = None);
        // Inheritance may point forward (a follower before the joint it
        // follows): resolve to a fixed point, at most n passes.
        for _ in 0..n {
            let mut changed = false;
            for k in 0..n {
                if allow[k].is_some() {
                    continue;
                }
                let fe = &feeds[k];
                let base = match fe.from {
                    None => Some(
                        fe.sources
                            .iter()
                            .map(|&j| step_deg(d.src, f, j))
                            .fold(0.0, f32::max),
                    ),
                    Some(p) => allow[p],
                };
                if let Some(b) = base {
                    let tw: f32 = fe
                        .twists
                        .iter()
                        .map(|&(i, w)| {
                            // The source's own twist step (wrapped: an
                            // unwrapping slip must not excuse itself).
                            let step = crate::twist::wrap(d.twist[f][i] - d.twist[f - 1][i]);
                            (w * step).abs().to_degrees()
                        })
                        .sum();
                    allow[k] = Some(b + tw);
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
        for (k, a) in allow.iter().enumerate() {
            let source_deg = a.unwrap_or(0.0);
            let target_deg = step_deg(d.tgt, f, k);
            let m = JumpMetric {
                joint: t.skel.name(k).to_string(),
                time_s: d.times[f],
                target_deg,
                source_deg,
                limit_deg: budget.max(source_deg + 1.0),
            };
            if target_deg > worst.target_deg {
                worst = m.clone();
            }
            if m.limit_deg - target_deg < headroom {
                headroom = m.limit_deg - target_deg;
                tight = m;
            }
        }
    }
    if !headroom.is_finite() {
        tight.limit_deg = budget;
    }
    (worst, tight)
}

fn twist_metrics(ctx: &Ctx, d: &ClipData) -> Vec<TwistMetrics> {
    let mut out = Vec::new();
    for (i, plan) in ctx.setup.twists.iter().enumerate() {
        let angles: Vec<f32> = d.twist.iter().filter_map(|f| f.get(i).copied()).collect();
        let lo = angles.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = angles.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        for &(k, _, w) in &plan.targets {
            let range = if angles.is_empty() {
                0.0
            } else {
                (hi - lo) * w.abs()
            };
            out.push(TwistMetrics {
                joint: ctx.t.skel.name(k).to_string(),
                range_deg: range.to_degrees(),
            });
        }
    }
    out
}

impl ClipMetrics {
    /// Budget breaches as diagnostics (code, clip, joint, time): errors,
    /// or warnings when the budgets say `on_breach = "warn"`.
    pub fn breaches(&self, b: &Budgets) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        let mut push = |code: &str, msg: String, joint: &str, t: Option<f32>| {
            let mut d = match b.on_breach {
                BreachPolicy::Fail => Diagnostic::error(code, msg),
                BreachPolicy::Warn => Diagnostic::warning(
                    code,
                    format!("{msg} (budgets.on_breach = \"warn\": package written)"),
                ),
            }
            .clip(&self.clip)
            .joint(joint);
            if let Some(t) = t {
                d = d.time(t);
            }
            out.push(d);
        };
        for c in &self.contacts {
            if c.source_contact_frames > 0 && c.added_skate_fraction > b.max_skate_fraction {
                push("retarget_foot_skate", format!("target skates (and the source does not) in {:.1}% of source-contact frames (budget {:.1}%)", c.added_skate_fraction * 100.0, b.max_skate_fraction * 100.0), &c.joint, c.first_skate_s);
            }
            if c.source_contact_frames > 0 && c.preservation < b.min_contact_preservation {
                push(
                    "retarget_contacts",
                    format!(
                        "{:.1}% of source contacts preserved (budget {:.1}%)",
                        c.preservation * 100.0,
                        b.min_contact_preservation * 100.0
                    ),
                    &c.joint,
                    None,
                );
            }
        }
        let checks = [
            (
                "retarget_end_effector",
                "end-effector error",
                &self.end_effector_error,
                b.max_end_effector_error,
                "limb lengths",
            ),
            (
                "retarget_bone_length",
                "bone-length deviation",
                &self.bone_length_deviation_m,
                b.max_bone_length_deviation_m,
                "m",
            ),
        ];
        for (code, what, w, budget, unit) in checks {
            if w.value > budget {
                push(
                    code,
                    format!(
                        "{what} {:.4} {unit} exceeds the budget {budget} {unit}",
                        w.value
                    ),
                    &w.joint,
                    Some(w.time_s),
                );
            }
        }
        // A jump the source itself makes at that frame is not the retarget's.
        let j = &self.angular_jump_least_headroom;
        let limit = b.max_angular_jump_deg.max(j.source_deg + 1.0);
        if j.target_deg > limit {
            push(
                "retarget_angular_jump",
                format!(
                    "angular jump {:.1} deg per frame exceeds max(budget {} deg, the source's own {:.1} deg + 1)",
                    j.target_deg, b.max_angular_jump_deg, j.source_deg
                ),
                &j.joint,
                Some(j.time_s),
            );
        }
        if let Some((f, a)) = self.facing.as_ref().and_then(|f| Some((f, f.agreement?))) {
            if a < b.min_facing_agreement {
                let show = |v: Option<f32>| v.map_or("-".to_string(), |v| format!("{v:.2}"));
                push(
                    "retarget_facing",
                    format!(
                        "facing agreement {a:.2} is below {} (travel {}, pose {}; forward travel source {:.2} m, target {:.2} m): the result moves or leans the other way from the source; check source/target `forward`",
                        b.min_facing_agreement,
                        show(f.travel),
                        show(f.pose),
                        f.source_travel_m,
                        f.target_travel_m
                    ),
                    "",
                    None,
                );
            }
        }
        for f in &self.foot_speeds {
            if f.peak_ratio > b.max_foot_speed_ratio {
                push(
                    "retarget_foot_pop",
                    format!(
                        "foot moves at {:.2} m/s during a contact where the source moves {:.2} m/s (over 1.5x the source + 0.5 leg lengths/s by {:.2}x)",
                        f.target_peak_mps, f.source_at_peak_mps, f.peak_ratio
                    ),
                    &f.joint,
                    Some(f.peak_time_s),
                );
            }
        }
        let p = &self.floor_penetration;
        if p.target_m > b.max_floor_penetration_m + p.source_m {
            push(
                "retarget_floor",
                format!(
                    "{:.3} m under the floor (budget {} m beyond the source's own {:.3} m)",
                    p.target_m, b.max_floor_penetration_m, p.source_m
                ),
                &p.joint,
                Some(p.time_s),
            );
        }
        for tw in &self.twists {
            if tw.range_deg > b.max_twist_range_deg {
                push(
                    "retarget_twist_range",
                    format!(
                        "twist range {:.1} deg exceeds the budget {} deg",
                        tw.range_deg, b.max_twist_range_deg
                    ),
                    &tw.joint,
                    None,
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::poses::RetargetPoses;
    use crate::rig::sample_clip;
    use ludus_anim_format::math::Quat;

    /// The flip detector compares each joint with its own source at the
    /// same frame: a fast source motion passes, a jump the retarget adds
    /// is caught even when it is smaller than the source's fastest joint
    /// (which a clip-wide "source max + 1" rule let through).
    #[test]
    fn flip_detector_allows_the_sources_own_jumps_and_catches_added_ones() {
        let asset =
            ludus_anim_fixture_gen::rigs::build(&ludus_anim_fixture_gen::rigs::RigSpec::default());
        let n = ludus_anim_normalize::normalize(&asset, None).unwrap();
        let skel = &n.skeleton;
        let mut profile = crate::suggest(skel, "a", skel, "b");
        profile.contacts.plant = false;
        let poses = RetargetPoses::rest(skel, skel);
        let s = Side::new("source", skel, &profile.source, &poses.source).unwrap();
        let t = Side::new("target", skel, &profile.target, &poses.target).unwrap();
        let setup = crate::setup::setup(&profile, &s, &t).unwrap();
        let ctx = Ctx {
            setup: &setup,
            s: &s,
            t: &t,
            lift: 0.0,
        };
        let clip = &n.clips[0];
        let times: Vec<f32> = (0..40).map(|i| i as f32 / 30.0).collect();
        let fore = skel.find_by_name("LeftForeArm").unwrap();
        let head = skel.find_by_name("Head").unwrap();
        let mut buf = skel.rest_pose().to_vec();
        let src: Vec<PoseFk> = times
            .iter()
            .enumerate()
            .map(|(f, &time)| {
                sample_clip(skel, clip, time, &mut buf);
                // A fast source motion: the forearm turns 60 deg a frame.
                let spin = Quat::from_rotation_x((60.0 * f as f32).to_radians());
                buf[fore].rotation = (buf[fore].rotation * spin).normalize();
                PoseFk::new(skel, buf.clone())
            })
            .collect();
        let mut tgt: Vec<PoseFk> = src
            .iter()
            .map(|f| {
                let mut out = t.pose.clone();
                ctx.frame(f, &[], &mut out);
                out
            })
            .collect();
        let no_twist = vec![Vec::new(); times.len()];
        let data = |tgt: &[PoseFk]| {
            let (worst, tight) = jumps(
                &ctx,
                &ClipData {
                    name: "t",
                    times: &times,
                    src: &src,
                    tgt,
                    flags: &[],
                    twist: &no_twist,
                    looping: false,
                    first: 0,
                },
                45.0,
            );
            (worst, tight)
        };
        let (worst, tight) = data(&tgt);
        assert!(worst.target_deg > 59.0, "{worst:?}");
        assert!(
            (worst.target_deg - worst.source_deg).abs() < 0.01,
            "{worst:?}"
        );
        assert!(tight.target_deg <= tight.limit_deg, "no breach: {tight:?}");
        // The retarget adds a 50 deg jump to the head (its source is slow).
        let r = Quat::from_rotation_y(50f32.to_radians());
        tgt[20].local[head].rotation = (tgt[20].local[head].rotation * r).normalize();
        tgt[20].fk_from(skel, 0);
        let (_, tight) = data(&tgt);
        assert_eq!(tight.joint, "Head", "{tight:?}");
        assert!(
            tight.target_deg > 45.0 && tight.target_deg > tight.limit_deg,
            "{tight:?}"
        );
        assert!(tight.source_deg < 10.0 && tight.target_deg < worst.source_deg + 1.0);
    }
}
