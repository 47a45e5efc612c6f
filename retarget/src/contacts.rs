//! Contact detection over a whole clip, and plant targets for the target.
//!
//! A source joint is in contact at a frame when it is within
//! `height_threshold * H_s` of its lowest point in the clip and its
//! horizontal speed is below `speed_threshold * H_s` per second (`H_s` the
//! source character height). One-frame blips and one-frame gaps are
//! removed. During a contact the target joint is planted at one horizontal
//! position, the mean of its transferred (FK) positions over the contact
//! (its height is set elsewhere: [`crate::planting`]). Plants ease in and
//! out over `blend_s`.
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
    /// horizontally: outside the contact the IK target is the FK position
    /// plus this offset, eased out, so an already planted foot is left
    /// untouched.
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
}

pub(crate) fn plants(inp: &PlantInput) -> Vec<Plant> {
    let mut rs = runs(inp.flags);
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

/// The horizontal IK target at time `t` for a joint whose transferred
/// position is `fk` (its height kept): inside a contact the plant; outside,
/// `fk` plus the plant's boundary offset eased out over `blend` seconds
/// (smoothstep); the nearest plant wins; `fk` with no plant near.
pub(crate) fn plant_target(plants: &[Plant], t: f32, blend: f32, fk: Vec3) -> Vec3 {
    let mut best: Option<(f32, Vec3)> = None;
    for p in plants {
        let (dist, off) = if t < p.t0 {
            (p.t0 - t, p.off0)
        } else if t > p.t1 {
            (t - p.t1, p.off1)
        } else {
            return Vec3::new(p.at.x, fk.y, p.at.z);
        };
        let w = if blend > 0.0 && dist < blend {
            let x = 1.0 - dist / blend;
            x * x * (3.0 - 2.0 * x)
        } else {
            0.0
        };
        if w > 0.0 && best.map(|(bw, _)| w > bw).unwrap_or(true) {
            best = Some((w, fk + off * w));
        }
    }
    best.map_or(fk, |(_, at)| at)
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
}
