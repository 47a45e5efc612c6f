//! Contact detection over a whole clip, and plant targets for the target.
//!
//! A source joint is in contact at a frame when it is within
//! `height_threshold * H_s` of its lowest point in the clip and its
//! horizontal speed is below `speed_threshold * H_s` per second (`H_s` the
//! source character height). One-frame blips and one-frame gaps are
//! removed. Contacts less than `blend_s` apart are one plant (the foot
//! cannot travel between two plant positions in so short a gap without
//! popping). During a plant the target joint holds one horizontal
//! position, the mean of its transferred (FK) positions over the plant
//! (its height is set elsewhere: [`crate::planting`]). Between two plants
//! up to a swing apart the foot travels from one to the other over the
//! whole gap, at rest at both ends; a plant alone is eased into and out of
//! by position (see [`plant_target`]).
//! For a clip detected as a loop, a contact across the seam is one plant
//! (shifted by the clip's displacement at the end), so the seam closes.

use ludus_anim_format::math::Vec3;

/// Contact flags for canonical positions `pos` (Y up) at `times`: within
/// `max_height` (m) of the lowest position and slower than `max_speed`
/// (m/s) horizontally.
pub(crate) fn detect(pos: &[Vec3], times: &[f32], max_height: f32, max_speed: f32) -> Vec<bool> {
    let floor = pos.iter().map(|p| p.y).fold(f32::INFINITY, f32::min);
    let speed = horizontal_speeds(pos, times);
    let mut c: Vec<bool> = pos
        .iter()
        .zip(&speed)
        .map(|(p, &v)| p.y - floor < max_height && v < max_speed)
        .collect();
    let n = c.len();
    for i in 1..n.saturating_sub(1) {
        if c[i - 1] && c[i + 1] {
            c[i] = true;
        }
    }
    for i in 0..n {
        let prev = i > 0 && c[i - 1];
        let next = i + 1 < n && c[i + 1];
        if c[i] && !prev && !next && n > 1 {
            c[i] = false;
        }
    }
    c
}

/// Horizontal (XZ) speed at each frame: central differences, one-sided at
/// the ends.
pub(crate) fn horizontal_speeds(pos: &[Vec3], times: &[f32]) -> Vec<f32> {
    let n = pos.len();
    (0..n)
        .map(|i| {
            let (a, b) = (i.saturating_sub(1), (i + 1).min(n.saturating_sub(1)));
            let dt = times
                .get(b)
                .zip(times.get(a))
                .map_or(0.0, |(tb, ta)| tb - ta);
            if b == a || dt <= 0.0 {
                return 0.0;
            }
            let d = pos[b] - pos[a];
            (d.x * d.x + d.z * d.z).sqrt() / dt
        })
        .collect()
}

/// A contact interval and its plant.
pub(crate) struct Plant {
    pub t0: f32,
    pub t1: f32,
    /// Horizontal plant position (`y` = 0).
    pub at: Vec3,
    /// `at` minus the FK position at the first and the last contact frame,
    /// horizontally (where the transferred foot lands and lifts off, for
    /// the swing between two plants).
    pub off0: Vec3,
    pub off1: Vec3,
}

/// Runs of `true`, as (first, last) frame indices.
pub(crate) fn runs(flags: &[bool]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start = None;
    for (i, &f) in flags.iter().enumerate() {
        match (f, start) {
            (true, None) => start = Some(i),
            (false, Some(s)) => {
                out.push((s, i - 1));
                start = None;
            }
            _ => {}
        }
    }
    if let Some(s) = start {
        out.push((s, flags.len() - 1));
    }
    out
}

/// Inputs for [`plants`]: canonical target FK positions of the joint and
/// the loop displacement (canonical, horizontal) when the clip loops.
pub(crate) struct PlantInput<'a> {
    pub flags: &'a [bool],
    pub times: &'a [f32],
    pub fk: &'a [Vec3],
    pub loop_shift: Option<Vec3>,
    /// Contacts separated by less than this (seconds) are one plant: the
    /// foot cannot travel between two plant positions in so short a gap
    /// without popping, and a source foot that lifts that briefly has not
    /// stepped.
    pub merge_gap_s: f32,
}

/// `runs` with every gap shorter than `gap_s` (by `times`) filled, then
/// without the runs shorter than `gap_s`: a foot that slows for a moment
/// mid-stride (a hop's shuffle) passes through; planting it there would
/// stop it and send it to the next plant at a run.
fn merge_runs(rs: Vec<(usize, usize)>, times: &[f32], gap_s: f32) -> Vec<(usize, usize)> {
    let mut out: Vec<(usize, usize)> = Vec::with_capacity(rs.len());
    for r in rs {
        match out.last_mut() {
            Some(last) if times[r.0] - times[last.1] < gap_s => last.1 = r.1,
            _ => out.push(r),
        }
    }
    out
}

pub(crate) fn plants(inp: &PlantInput) -> Vec<Plant> {
    let mut rs = merge_runs(runs(inp.flags), inp.times, inp.merge_gap_s);
    let n = inp.flags.len();
    let dur = inp.times.last().copied().unwrap_or(0.0);
    let mut seam: Option<((usize, usize), (usize, usize))> = None;
    if let Some(shift) = inp.loop_shift {
        if rs.len() >= 2 && rs[0].0 == 0 && rs[rs.len() - 1].1 == n - 1 {
            let last = rs.pop();
            let first = rs.remove(0);
            seam = last.map(|l| (l, first));
            let _ = shift;
        }
    }
    let mut out: Vec<Plant> = rs
        .iter()
        .map(|&(a, b)| {
            let frames: Vec<Vec3> = (a..=b).map(|i| inp.fk[i]).collect();
            let at = plant_at(&frames);
            Plant {
                t0: inp.times[a],
                t1: inp.times[b],
                at,
                off0: flat(at - inp.fk[a]),
                off1: flat(at - inp.fk[b]),
            }
        })
        .collect();
    if let (Some(((la, lb), (fa, fb))), Some(shift)) = (seam, inp.loop_shift) {
        // End part as is, start part moved one cycle on.
        let mut frames: Vec<Vec3> = (la..=lb).map(|i| inp.fk[i]).collect();
        frames.extend((fa..=fb).map(|i| inp.fk[i] + shift));
        let at = plant_at(&frames);
        let off0 = flat(at - inp.fk[la]);
        let off1 = flat(at - (inp.fk[fb] + shift));
        out.push(Plant {
            t0: inp.times[la],
            t1: dur + inp.times[fb],
            at,
            off0,
            off1,
        });
        out.push(Plant {
            t0: inp.times[la] - dur,
            t1: inp.times[fb],
            at: at - shift,
            off0,
            off1,
        });
    }
    out
}

/// Mean horizontal position (y = 0).
fn plant_at(frames: &[Vec3]) -> Vec3 {
    let k = frames.len().max(1) as f32;
    let sum = frames.iter().fold(Vec3::ZERO, |s, p| s + *p);
    Vec3::new(sum.x / k, 0.0, sum.z / k)
}

fn flat(v: Vec3) -> Vec3 {
    Vec3::new(v.x, 0.0, v.z)
}

/// Longest gap between two plants taken as one step's swing, the foot
/// travelling from plant to plant over the whole gap (a walk's or run's
/// swing lasts 0.3-0.5 s). Longer gaps (a jump, a foot held up) ease each
/// plant's offset out over `blend` and leave the transferred foot alone
/// between.
const MAX_SWING_S: f32 = 0.5;

/// The horizontal IK target at time `t` for a joint whose transferred
/// position is `fk` (its height kept): inside a contact the plant.
/// Between two plants at most [`MAX_SWING_S`] (or `2 blend`) apart, the
/// foot goes from one plant to the next over the whole gap ([`swing`]),
/// leaving and landing at zero speed, so two plants at different
/// positions never make a one-frame jump (the nearer plant winning, with
/// eases of `blend` at each end, popped a foot at 4.6 m/s where CMU
/// 01_01's source moved 0.7 m/s: the Knight's transferred foot slides
/// 0.5 m during that contact, so its plant sits 28 cm from where it
/// lands). Otherwise the target eases by position between `fk` and the
/// plant over `blend` (smoothstep): continuous in time, at rest on
/// reaching the plant.
pub(crate) fn plant_target(plants: &[Plant], t: f32, blend: f32, fk: Vec3) -> Vec3 {
    let smooth = |x: f32| {
        let x = x.clamp(0.0, 1.0);
        x * x * (3.0 - 2.0 * x)
    };
    // The plant ending last before `t` and the one starting first after.
    let mut before: Option<&Plant> = None;
    let mut after: Option<&Plant> = None;
    for p in plants {
        if (p.t0..=p.t1).contains(&t) {
            return Vec3::new(p.at.x, fk.y, p.at.z);
        }
        if p.t1 < t && before.is_none_or(|b| p.t1 > b.t1) {
            before = Some(p);
        }
        if p.t0 > t && after.is_none_or(|a| p.t0 < a.t0) {
            after = Some(p);
        }
    }
    // A plant alone (or across a gap longer than a swing) is eased into
    // and out of by position over `blend`: the foot's speed goes to zero
    // at the plant (the transferred foot may land fast: the Knight's at
    // 1.5 m/s where CMU 01_01's moves 0.7).
    let reach = blend.max(1e-6);
    let ease = |dist: f32| smooth(1.0 - dist / reach);
    let toward = |at: Vec3, off: Vec3, w: f32| {
        let k = distrust(off);
        let pull = off * (1.0 - k) + (at - flat(fk)) * k;
        let p = flat(fk) + pull * w;
        Vec3::new(p.x, fk.y, p.z)
    };
    match (before, after) {
        (Some(b), Some(a)) => {
            let gap = a.t0 - b.t1;
            if gap <= MAX_SWING_S.max(2.0 * blend) && gap > 0.0 {
                return swing(b, a, (t - b.t1) / gap, gap, blend, fk);
            }
            // Eases that do not overlap: at most one is non-zero.
            let (wb, wa) = (ease(t - b.t1), ease(a.t0 - t));
            if wb >= wa {
                toward(b.at, b.off1, wb)
            } else {
                toward(a.at, a.off0, wa)
            }
        }
        (Some(b), None) => toward(b.at, b.off1, ease(t - b.t1)),
        (None, Some(a)) => toward(a.at, a.off0, ease(a.t0 - t)),
        (None, None) => fk,
    }
}

/// The foot between plant `b` and the next plant `a`, `u` in [0, 1] of
/// the gap (`gap` seconds): the transferred foot plus an offset faded
/// from `b`'s lift-off offset to `a`'s landing offset by a smoothstep over
/// the gap (so mid-swing it follows the transferred foot's arc, shifted),
/// and within `blend` of either plant drawn to that plant by position
/// (smoothstep): it lifts off and lands at rest, never a jump. Height is
/// `fk`'s.
fn swing(b: &Plant, a: &Plant, u: f32, gap: f32, blend: f32, fk: Vec3) -> Vec3 {
    let smooth = |x: f32| {
        let x = x.clamp(0.0, 1.0);
        x * x * (3.0 - 2.0 * x)
    };
    let u = u.clamp(0.0, 1.0);
    let s = smooth(u);
    let base = flat(fk) + b.off1 * (1.0 - s) + a.off0 * s;
    let window = blend.min(0.5 * gap).max(1e-6);
    let (dt_b, dt_a) = (u * gap, (1.0 - u) * gap);
    let (wb, wa) = (smooth(1.0 - dt_b / window), smooth(1.0 - dt_a / window));
    let (kb, ka) = (distrust(b.off1), distrust(a.off0));
    // Where the faded offset alone lands (`k` = 0): `fk` + the plant's
    // offset, the plant itself at the gap's ends.
    let (lb, la) = (flat(fk) + b.off1, flat(fk) + a.off0);
    let to_b = (b.at - base) * kb + (lb - base) * (1.0 - kb);
    let to_a = (a.at - base) * ka + (la - base) * (1.0 - ka);
    let p = base + to_b * wb + to_a * wa;
    Vec3::new(p.x, fk.y, p.z)
}

/// How far to distrust the transferred foot's own speed at a plant's edge,
/// from the plant's offset there (0 below 1 mm, 1 from 5 mm, smoothstep
/// between): a transferred foot that holds its plant (a rig onto a rig of
/// the same proportions) keeps its own landing and lift-off, exactly; one
/// that slides during the plant (proportions differ: the Knight's foot
/// slides 0.5 m in a CMU 01_01 contact) lands no better than it holds, and
/// is brought to rest at the plant by position instead.
fn distrust(off: Vec3) -> f32 {
    let x = ((off.length() - 0.002) / 0.008).clamp(0.0, 1.0);
    x * x * (3.0 - 2.0 * x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_a_still_low_foot_and_drops_blips() {
        let times: Vec<f32> = (0..20).map(|i| i as f32 / 10.0).collect();
        let pos: Vec<Vec3> = (0..20)
            .map(|i| {
                if (5..12).contains(&i) {
                    Vec3::new(0.0, 0.0, 1.0)
                } else {
                    Vec3::new(0.0, 0.3, i as f32 * 0.5)
                }
            })
            .collect();
        let c = detect(&pos, &times, 0.05, 0.2);
        let expect: Vec<bool> = (0..20).map(|i| (6..11).contains(&i)).collect();
        assert_eq!(c, expect);
        assert_eq!(runs(&c), vec![(6, 10)]);
    }

    /// Two plants at different positions with a gap shorter than two
    /// blends: the target moves continuously from one to the other (the
    /// nearest-plant rule jumped by the plants' distance mid-gap).
    #[test]
    fn the_foot_travels_between_plants_without_a_jump_and_lands_at_rest() {
        let times: Vec<f32> = (0..=60).map(|i| i as f32 / 120.0).collect();
        // The transferred foot slides at 1 m/s (a target whose FK foot
        // does not hold still): each plant sits at its frames' mean, so
        // the first plant's exit offset points back and the second's entry
        // offset forward, 23 cm apart.
        let fk: Vec<Vec3> = times.iter().map(|&t| Vec3::new(t, 0.05, 0.0)).collect();
        let flags: Vec<bool> = (0..=60).map(|i| !(28..=32).contains(&i)).collect();
        let pl = plants(&PlantInput {
            flags: &flags,
            times: &times,
            fk: &fk,
            loop_shift: None,
            merge_gap_s: 0.0,
        });
        assert_eq!(pl.len(), 2);
        let blend = 0.1;
        let xs: Vec<f32> = times
            .iter()
            .zip(&fk)
            .map(|(&t, &p)| plant_target(&pl, t, blend, p).x)
            .collect();
        let max_step = xs
            .windows(2)
            .map(|w| (w[1] - w[0]).abs())
            .fold(0.0f32, f32::max);
        // 23 cm over a 5-frame gap: the fade steps < 10 cm a frame; a
        // switch to the nearer plant steps the whole 23 cm at once.
        assert!(max_step < 0.1, "{max_step}: {xs:?}");
        // Inside each plant the target is the plant.
        assert_eq!(xs[0], pl[0].at.x);
        assert_eq!(xs[60], pl[1].at.x);
        // It lifts off and lands at rest: the steps out of the first plant
        // and into the second are below the transferred foot's own step
        // (1/120 m a frame; the window is three frames here), where a fade of
        // offsets lands at the FK's speed and the nearest plant jumps.
        let fk_step = 1.0 / 120.0;
        assert!((xs[28] - xs[27]).abs() < fk_step, "{xs:?}");
        assert!((xs[33] - xs[32]).abs() < fk_step, "{xs:?}");
    }
}
