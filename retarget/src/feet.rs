//! Per-frame foot data of a retargeted clip at a fixed rate, for plots
//! (the dashboard's retarget panel): the target contact joint's height
//! above the target floor, its ground-plane speed, the source's contact
//! flag and the skate flag the metrics count (a source-contact frame in
//! which the target moves faster than the skate speed).
//!
//! The bake times follow the source keys (CMU: 120 Hz); these tracks are
//! resampled onto `i / rate_hz`: height and speed linearly, the flags from
//! the bake frame at or before the time, so a one-frame contact is not
//! smeared.

use crate::contacts::horizontal_speeds;
use crate::metrics::{skate_speed, ClipData};
use crate::profile::ContactSpec;
use crate::transfer::Ctx;
use ludus_anim_format::math::Vec3;
use serde::{Deserialize, Serialize};

/// One target contact joint, sampled at `i / rate_hz`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FootSeries {
    /// Target joint name.
    pub joint: String,
    /// Height above the target's declared floor (meters).
    pub height_m: Vec<f32>,
    /// Ground-plane speed (meters per second).
    pub speed_mps: Vec<f32>,
    /// The source joint is in contact.
    pub contact: Vec<bool>,
    /// A source-contact sample where the target skates.
    pub skate: Vec<bool>,
}

/// The foot tracks of one retargeted (source) clip.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct FootTracks {
    pub clip: String,
    /// Samples at `i / rate_hz`, the last at or before the duration.
    pub rate_hz: f32,
    /// The clip's duration (the last bake time).
    pub duration_s: f32,
    /// Skate speed on the target (m/s): faster during a contact is a skate.
    pub skate_speed_mps: f32,
    pub feet: Vec<FootSeries>,
}

/// Fixed-rate sample times over `[0, end]`.
fn grid(end: f32, rate_hz: f32) -> Vec<f32> {
    if !(end.is_finite() && rate_hz.is_finite() && rate_hz > 0.0) {
        return vec![0.0];
    }
    let n = (end * rate_hz + 1e-3).floor().max(0.0) as usize;
    (0..=n).map(|i| i as f32 / rate_hz).collect()
}

/// Index of the last time `<= t` (0 before the first).
fn at_or_before(times: &[f32], t: f32) -> usize {
    times.partition_point(|&x| x <= t + 1e-6).saturating_sub(1)
}

/// `values` (at `times`) linearly at `t`.
fn lerp_at(times: &[f32], values: &[f32], t: f32) -> f32 {
    let i = at_or_before(times, t);
    let (Some(&a), Some(&ta)) = (values.get(i), times.get(i)) else {
        return 0.0;
    };
    match (values.get(i + 1), times.get(i + 1)) {
        (Some(&b), Some(&tb)) if tb > ta => a + (b - a) * ((t - ta) / (tb - ta)).clamp(0.0, 1.0),
        _ => a,
    }
}

pub(crate) fn foot_tracks(ctx: &Ctx, spec: &ContactSpec, rate_hz: f32, d: &ClipData) -> FootTracks {
    let t = ctx.t;
    let skate = skate_speed(ctx, spec);
    let end = d.times.last().copied().unwrap_or(0.0);
    let grid = grid(end, rate_hz);
    let feet = ctx
        .setup
        .contacts
        .iter()
        .zip(d.flags)
        .map(|(c, fl)| {
            let pt: Vec<Vec3> = d
                .tgt
                .iter()
                .map(|f| t.canon(f.position(c.target)))
                .collect();
            let heights: Vec<f32> = pt.iter().map(|p| p.y - t.floor).collect();
            let speeds = horizontal_speeds(&pt, d.times);
            let flag = |time: f32| fl.get(at_or_before(d.times, time)).copied();
            let skating = |time: f32| {
                let i = at_or_before(d.times, time);
                fl.get(i).copied().unwrap_or(false) && speeds.get(i).is_some_and(|&v| v > skate)
            };
            FootSeries {
                joint: t.skel.name(c.target).to_string(),
                height_m: grid
                    .iter()
                    .map(|&g| lerp_at(d.times, &heights, g))
                    .collect(),
                speed_mps: grid.iter().map(|&g| lerp_at(d.times, &speeds, g)).collect(),
                contact: grid.iter().map(|&g| flag(g).unwrap_or(false)).collect(),
                skate: grid.iter().map(|&g| skating(g)).collect(),
            }
        })
        .collect();
    FootTracks {
        clip: d.name.to_string(),
        rate_hz,
        duration_s: end,
        skate_speed_mps: skate,
        feet,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grid_and_interpolation() {
        assert_eq!(grid(0.1, 30.0).len(), 4);
        assert_eq!(grid(f32::NAN, 30.0), vec![0.0]);
        let times = [0.0, 0.5, 1.0];
        assert_eq!(lerp_at(&times, &[0.0, 1.0, 3.0], 0.75), 2.0);
        assert_eq!(lerp_at(&times, &[0.0, 1.0, 3.0], 2.0), 3.0);
        assert_eq!(at_or_before(&times, 0.49), 0);
        assert_eq!(at_or_before(&times, 0.5), 1);
    }
}
