//! Bake times and baked target clips.

use crate::rig::PoseFk;
use ludus_anim_format::math::{Quat, Transform};
use ludus_anim_model::{Curve, Interpolation, JointTracks, SourceClip};

/// The clip's key times, plus a uniform grid at `rate_hz` inside any gap
/// longer than one grid step (IK and planting are not linear between
/// sparse keys), always including 0 and the duration.
pub fn bake_times(clip: &SourceClip, rate_hz: f32) -> Vec<f32> {
    let dur = clip.duration_s.max(0.0);
    let mut keys: Vec<f32> = clip
        .key_times
        .iter()
        .copied()
        .filter(|t| t.is_finite() && (0.0..=dur).contains(t))
        .collect();
    keys.push(0.0);
    keys.push(dur);
    keys.sort_by(f32::total_cmp);
    keys.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
    let step = 1.0 / rate_hz;
    let mut out = Vec::with_capacity(keys.len());
    for w in keys.windows(2) {
        out.push(w[0]);
        let gap = w[1] - w[0];
        let parts = (gap / step - 1e-4).ceil().max(1.0) as usize;
        for i in 1..parts {
            out.push(w[0] + gap * i as f32 / parts as f32);
        }
    }
    if let Some(&last) = keys.last() {
        out.push(last);
    }
    out.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
    out
}

const STILL_T: f32 = 1e-7;
const STILL_R: f32 = 1e-7;

/// A clip on the target from baked frames: a LINEAR track per channel
/// that differs from the target rest anywhere; markers, scalar curves,
/// duration and frame rate carried over unchanged.
pub fn bake_clip(
    source: &SourceClip,
    times: &[f32],
    frames: &[PoseFk],
    rest: &[Transform],
) -> SourceClip {
    let mut tracks = Vec::new();
    for (j, r) in rest.iter().enumerate() {
        let mut tr = JointTracks::new(j);
        let ts: Vec<_> = frames.iter().map(|f| f.local[j].translation).collect();
        if ts
            .iter()
            .any(|t| (*t - r.translation).abs().max_element() > STILL_T)
        {
            tr.translation = Some(Curve::from_values(Interpolation::Linear, times, &ts));
        }
        let mut prev: Option<Quat> = None;
        let qs: Vec<Quat> = frames
            .iter()
            .map(|f| {
                let mut q = f.local[j].rotation.normalize();
                if prev.is_some_and(|p| p.dot(q) < 0.0) {
                    q = -q;
                }
                prev = Some(q);
                q
            })
            .collect();
        if qs.iter().any(|q| q.dot(r.rotation).abs() < 1.0 - STILL_R) {
            tr.rotation = Some(Curve::from_values(Interpolation::Linear, times, &qs));
        }
        let ss: Vec<_> = frames.iter().map(|f| f.local[j].scale).collect();
        if ss
            .iter()
            .any(|s| (*s - r.scale).abs().max_element() > STILL_T)
        {
            tr.scale = Some(Curve::from_values(Interpolation::Linear, times, &ss));
        }
        if tr.translation.is_some() || tr.rotation.is_some() || tr.scale.is_some() {
            tracks.push(tr);
        }
    }
    let mut out = SourceClip {
        name: source.name.clone(),
        duration_s: source.duration_s,
        tracks,
        curves: source.curves.clone(),
        frame_rate_hz: source.frame_rate_hz,
        key_times: Vec::new(),
        markers: source.markers.clone(),
    };
    out.collect_key_times();
    out
}
