//! The `retarget` part of `OUT/report-sidecar.json`: per retargeted clip,
//! the target feet at the retarget profile's bake rate (height above the
//! floor, ground-plane speed), the source contacts as time spans and the
//! spans where the target skates (layout: `schemas/dashboard.md`,
//! `ludus_anim_report::sidecar::RetargetSidecar`).
//!
//! The retarget stage computes the tracks per source clip
//! ([`FootTracks`]); [`clip_part`] cuts them to a cooked clip, the clip's
//! job carries the part, and the clip's sidecar record takes its `retarget`
//! block (`pipeline/clip.rs`), cached with the rest of the asset's
//! sidecar, so a warm cook writes the same sidecar.

use ludus_anim_report::packed::F32s;
use ludus_anim_report::sidecar::{ClipSidecar, FootTrack, RetargetSidecar, Skate, TimeSpan};
use ludus_anim_retarget::{FootSeries, FootTracks};

/// The sidecar record of one cooked clip holding only its retarget block.
/// `range` is the clip's cut of the source clip (seconds), if any;
/// `profile` the quality profile the report names the clip with.
pub fn clip_part(
    tracks: &FootTracks,
    retarget_profile: &str,
    source: &str,
    clip: &str,
    profile: &str,
    range: Option<(f32, f32)>,
) -> ClipSidecar {
    let rate = tracks.rate_hz;
    let n = tracks.feet.first().map_or(0, |f| f.height_m.len());
    let (first, last) = match range {
        Some((a, b)) => (
            ((a * rate) - 1e-3).ceil().max(0.0) as usize,
            ((b * rate) + 1e-3).floor().max(0.0) as usize,
        ),
        None => (0, n.saturating_sub(1)),
    };
    let last = last.min(n.saturating_sub(1));
    let keep = first..(last + 1).max(first);
    let duration = range.map_or(tracks.duration_s, |(a, b)| (b - a).max(0.0));
    let feet = tracks
        .feet
        .iter()
        .map(|f| foot(f, keep.clone(), rate, duration))
        .collect();
    let mut c = ClipSidecar::new(source, clip, profile, duration);
    c.retarget = Some(RetargetSidecar {
        profile: retarget_profile.to_string(),
        rate_hz: rate,
        feet,
        axes: None,
    });
    c
}

fn slice<T: Copy>(v: &[T], keep: std::ops::Range<usize>) -> Vec<T> {
    v.get(keep).map(<[T]>::to_vec).unwrap_or_default()
}

/// One foot cut to `keep`, times shifted so the cut starts at 0. Sample
/// `i` stands for `[i, i + 1) / rate`: a span of samples `a..=b` is
/// `[a / rate, min((b + 1) / rate, duration)]`.
fn foot(f: &FootSeries, keep: std::ops::Range<usize>, rate: f32, duration: f32) -> FootTrack {
    let speed = slice(&f.speed_mps, keep.clone());
    let contact = slice(&f.contact, keep.clone());
    let skate = slice(&f.skate, keep.clone());
    let time = |i: usize| (i as f32 / rate).min(duration);
    FootTrack {
        joint: f.joint.clone(),
        height_m: F32s::from(slice(&f.height_m, keep)),
        contacts: runs(&contact)
            .into_iter()
            .map(|(a, b)| TimeSpan {
                start_s: time(a),
                end_s: time(b + 1),
            })
            .collect(),
        skates: runs(&skate)
            .into_iter()
            .map(|(a, b)| Skate {
                start_s: time(a),
                end_s: time(b + 1),
                // Each sample's speed over its step.
                slide_m: speed
                    .get(a..=b)
                    .map_or(0.0, |v| v.iter().fold(0.0, |s, x| s + x) / rate),
            })
            .collect(),
        speed_mps: F32s::from(speed),
    }
}

/// Runs of `true` as (first, last) sample indices.
fn runs(flags: &[bool]) -> Vec<(usize, usize)> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn tracks() -> FootTracks {
        FootTracks {
            clip: "walk".into(),
            rate_hz: 10.0,
            duration_s: 1.0,
            skate_speed_mps: 0.1,
            feet: vec![FootSeries {
                joint: "Foot.L".into(),
                height_m: (0..11).map(|i| i as f32 * 0.01).collect(),
                speed_mps: vec![0.0, 0.0, 0.5, 0.5, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 0.0],
                contact: [1, 1, 1, 1, 0, 0, 1, 1, 1, 1, 1].map(|b| b == 1).to_vec(),
                skate: [0, 0, 1, 1, 0, 0, 0, 1, 1, 1, 0].map(|b| b == 1).to_vec(),
            }],
        }
    }

    #[test]
    fn spans_skates_and_cuts() {
        let c = clip_part(
            &tracks(),
            "cmu -> knight",
            "a.bvh",
            "walk",
            "standard",
            None,
        );
        let r = c.retarget.as_ref().unwrap();
        let f = &r.feet[0];
        assert_eq!(f.height_m.len(), 11);
        assert_eq!(f.contacts.len(), 2);
        assert_eq!((f.contacts[1].start_s, f.contacts[1].end_s), (0.6, 1.0));
        assert_eq!(f.skates.len(), 2);
        assert!((f.skates[1].slide_m - 0.3).abs() < 1e-6, "{:?}", f.skates);
        assert_eq!((f.skates[0].start_s, f.skates[0].end_s), (0.2, 0.4));
        c.check().unwrap();
        // A cut from 0.6 s to 1.0 s starts at 0 and keeps 5 samples.
        let cut = clip_part(&tracks(), "p", "a.bvh", "w2", "standard", Some((0.6, 1.0)));
        let f = &cut.retarget.as_ref().unwrap().feet[0];
        assert_eq!(f.height_m.len(), 5);
        assert_eq!(f.contacts[0].start_s, 0.0);
        assert!((f.contacts[0].end_s - 0.4).abs() < 1e-6, "{:?}", f.contacts);
        assert!((cut.duration_s - 0.4).abs() < 1e-6);
    }
}
