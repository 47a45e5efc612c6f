//! The `retarget` part of `OUT/report-sidecar.json`: per retargeted clip,
//! the target feet at the retarget profile's bake rate (height above the
//! floor, ground-plane speed), the source contacts as time spans and the
//! spans where the target skates (layout: `schemas/dashboard.md`,
//! `ludus_anim_report::sidecar::RetargetSidecar`).
//!
//! The retarget stage computes the tracks per source clip
//! ([`FootTracks`]); [`clip_part`] cuts them to a cooked clip, the clip's
//! result carries the part (and the cached package outcome, so a warm cook
//! writes the same sidecar), and [`merge`] folds the parts into whatever
//! sidecar the cook writes: a clip record the rest of the sidecar already
//! has gets its `retarget` block, any other gets a record of its own with
//! no per-time errors. [`write`] writes a sidecar of these parts alone
//! when the cook has no other sidecar to write (none is written when no
//! clip was retargeted).

use crate::sink::Sink;
use ludus_anim_report::packed::F32s;
use ludus_anim_report::sidecar::{
    ClipSidecar, FootTrack, RetargetSidecar, Sidecar, Skate, TimeSpan, SIDECAR_FILE,
};
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

/// Give each part's retarget block to the matching clip record of
/// `sidecar` (source, clip, profile), or add the part as a record.
pub fn merge(sidecar: &mut Sidecar, parts: impl IntoIterator<Item = ClipSidecar>) {
    for part in parts {
        let found = sidecar
            .clips
            .iter_mut()
            .find(|c| c.source == part.source && c.clip == part.clip && c.profile == part.profile);
        match found {
            Some(c) => c.retarget = part.retarget,
            None => sidecar.clips.push(part),
        }
    }
}

/// Write `OUT/report-sidecar.json` holding `parts` alone (nothing when
/// there are none).
pub fn write(sink: &dyn Sink, parts: Vec<ClipSidecar>) -> std::io::Result<()> {
    if parts.is_empty() {
        return Ok(());
    }
    let mut sidecar = Sidecar::new(crate::COOKER_VERSION);
    merge(&mut sidecar, parts);
    let json = serde_json::to_vec(&sidecar).map_err(std::io::Error::other)?;
    sink.write(SIDECAR_FILE, &json)
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

    #[test]
    fn merge_fills_existing_records_and_adds_the_rest() {
        let mut s = Sidecar::new("test");
        s.clips
            .push(ClipSidecar::new("a.bvh", "walk", "standard", 1.0));
        let part = clip_part(&tracks(), "p", "a.bvh", "walk", "standard", None);
        let other = clip_part(&tracks(), "p", "b.bvh", "walk", "standard", None);
        merge(&mut s, [part, other]);
        assert_eq!(s.clips.len(), 2);
        assert!(s.clips.iter().all(|c| c.retarget.is_some()));
        assert_eq!(s.clips[0].duration_s, 1.0, "the existing record is kept");
    }
}
