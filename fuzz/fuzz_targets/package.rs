//! Package bytes -> `Package::load`; every clip that loads is sampled at
//! edge times (negative, NaN, infinite, huge, every sample and midpoint
//! near the ends) through the decode paths (rest pose, static pose,
//! packed static tracks, a 20-joint subset, a decode context with a track
//! cache checked bit for bit against one without), its curves evaluated, its
//! events crossed forward, backward and across loops, its root-motion
//! deltas taken, and the pose run through FK. Any panic is a bug: the
//! runtime's contract is a valid view or a typed error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ludus_anim_runtime::events::{crossed_events, Crossing, PlaybackLatch};
use ludus_anim_format::math::{Affine3A, Transform};
use ludus_anim_runtime::package::Package;
use ludus_anim_runtime::codec::vbr::CachedTrack;
use ludus_anim_runtime::DecodeContext;

const TIMES: [f32; 10] = [
    0.0,
    -1.0,
    -0.0,
    1e-7,
    0.5,
    1e9,
    -1e30,
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
];

fuzz_target!(|data: &[u8]| {
    let Ok(p) = Package::load(data) else { return };
    let skeleton = p.skeleton();
    let n = skeleton.joint_count();
    let mut out = vec![Transform::IDENTITY; n];
    let mut fixed = vec![Transform::IDENTITY; n];
    let mut comp = vec![Affine3A::IDENTITY; n];
    let mut crossings = [Crossing::EMPTY; 8];
    for c in p.clips() {
        let defaults = p.sample_defaults(c);
        c.static_pose(defaults, &mut fixed);
        let statics = c.static_tracks(defaults);
        let subset: Vec<u32> = (0..n.min(20)).map(|k| (k * 7 % n.max(1)) as u32).collect();
        let mut sub = vec![Transform::IDENTITY; subset.len()];
        let d = c.duration_s();
        let edges = [d, d * 0.5, d + 1e-3, -d, d * 1e6];
        for t in TIMES.iter().chain(&edges) {
            c.sample(*t, defaults, &mut out);
            c.sample_static(*t, &fixed, &mut out);
            if let Some(st) = &statics {
                let _ = c.sample_packed(*t, st, &mut out);
            }
            let _ = c.sample_joints_static(*t, &fixed, &subset, &mut sub);
            skeleton.local_to_component(&out, &mut comp);
            for ch in p.clip_curves(c) {
                ch.evaluate(c.position(*t));
            }
        }
        // A playing instance with a track cache, played forward (fills
        // and hits) and seeking back: the bits of the uncached requests.
        let mut ctx = DecodeContext::new(c);
        let mut tracks = c.track_cache();
        // And one over entries in the instance's own memory.
        let mut placed = c.track_cache_in([CachedTrack::EMPTY; 24]);
        let mut want = vec![Transform::IDENTITY; n];
        for k in 0..24 {
            let t = if k < 20 { d * k as f32 / 19.0 } else { TIMES[k % TIMES.len()] };
            ctx.seek(t);
            if ctx.sample_static(&fixed, &mut want) {
                assert!(ctx.sample_static_cached(&mut tracks, &fixed, &mut out));
                assert_eq!(bits(&want), bits(&out), "cached static pose at {t}");
                assert!(ctx.sample_static_cached(&mut placed, &fixed, &mut out));
                assert_eq!(bits(&want), bits(&out), "placed cache at {t}");
            }
            if let Some(st) = &statics {
                if ctx.sample_packed(st, &mut want) {
                    assert!(ctx.sample_packed_cached(&mut tracks, st, &mut out));
                    assert_eq!(bits(&want), bits(&out), "cached packed pose at {t}");
                }
            }
        }
        let track = c.event_track();
        let mut latch = PlaybackLatch::new();
        let f = f64::from(d);
        for (a, b) in [
            (0.0, f),
            (f, 0.0),
            (-f, 3.0 * f),
            (0.0, 1e12),
            (f64::NAN, 1.0),
        ] {
            let _ = crossed_events(&track, a, b, &mut latch, &mut crossings);
        }
        if let Some(traj) = c.trajectory() {
            for (a, b) in [(0.0, f), (f, -f), (0.0, 1e9), (f64::NAN, 0.0)] {
                let _ = traj.delta(a, b, true);
                let _ = traj.delta(a, b, false);
            }
            for t in TIMES {
                let _ = traj.sample(t);
            }
        }
        for m in c.markers() {
            let _ = m;
        }
    }
});

fn bits(p: &[Transform]) -> Vec<u32> {
    p.iter()
        .flat_map(|x| x.to_array().map(f32::to_bits))
        .collect()
}
