//! Package bytes -> `Package::load`; every clip that loads is sampled at
//! edge times (negative, NaN, infinite, huge, every sample and midpoint
//! near the ends) one-shot (`Clip::sample`) and through a `Player` (whole
//! pose, a 20-joint subset, a mask), the player's poses checked bit for bit
//! against the one-shot's while it plays forward (its track cache filling
//! and hitting) and seeks back; its curves evaluated, its events crossed
//! forward, backward and across loops, its root-motion deltas taken, and
//! the pose run through FK. Any panic is a bug: the runtime's contract is
//! a valid view or a typed error.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ludus_anim_runtime::events::{Crossing, PlaybackLatch};
use ludus_anim_runtime::{Affine3A, Package, Player, Request, Transform};

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
    let mut crossings = [Crossing::default(); 8];
    for c in p.clips() {
        let defaults = p.sample_defaults(c);
        let Ok(mut player) = Player::new(c, defaults) else {
            continue;
        };
        let subset: Vec<u32> = (0..n.min(20)).map(|k| (k * 7 % n.max(1)) as u32).collect();
        let mut sub = vec![Transform::IDENTITY; subset.len()];
        let mask = vec![0x9249_2492_4924_9249u64; n.div_ceil(64)];
        let d = c.duration_s();
        let edges = [d, d * 0.5, d + 1e-3, -d, d * 1e6];
        for t in TIMES.iter().chain(&edges) {
            let _ = c.sample(*t, defaults, &mut out);
            player.seek(*t);
            let _ = player.decode(Request::Joints(&subset), &mut sub);
            let _ = player.decode(Request::Mask(&mask), &mut fixed);
            skeleton.local_to_component(&out, &mut comp);
            for ch in p.clip_curves(c) {
                ch.evaluate(c.position(*t));
            }
        }
        // Played forward (the track cache fills and hits) and seeking
        // back: the bits of the one-shot decode.
        let mut want = vec![Transform::IDENTITY; n];
        for k in 0..24 {
            let t = if k < 20 { d * k as f32 / 19.0 } else { TIMES[k % TIMES.len()] };
            player.seek(t);
            if c.sample(t, defaults, &mut want).is_ok() {
                assert!(player.decode(Request::Pose, &mut out).is_ok());
                assert_eq!(bits(&want), bits(&out), "player pose at {t}");
            }
        }
        let mut latch = PlaybackLatch::default();
        let f = f64::from(d);
        for (a, b) in [
            (0.0, f),
            (f, 0.0),
            (-f, 3.0 * f),
            (0.0, 1e12),
            (f64::NAN, 1.0),
        ] {
            let _ = c.crossed_events(a, b, &mut latch, &mut crossings);
            let _ = c.root_motion_delta(a, b);
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
