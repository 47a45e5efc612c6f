//! ARCHITECTURE.md: "decoding and sampling never allocate". Checked here
//! with a counting global allocator over real cooked packages: the bundled
//! biped as a project with every clip preparation (loop, root motion,
//! markers, additive clips), and every shared fixture (glTF, FBX, BVH;
//! morph-weight and custom curves) when `../shared` is present. Loading
//! allocates and happens before counting starts; then every clip is
//! decoded at many times through every runtime call a game makes per frame
//! (`Clip::sample`; a `Player`, bound before counting: seek, advance back,
//! whole pose, joint subsets in both orders, a mask), curve evaluation, event crossings, root-motion deltas, FK, additive
//! application), and the test asserts that not one allocation happened.

mod common;
use common::*;

use ludus_anim_runtime::additive::apply_additive_pose;
use ludus_anim_runtime::events::{Crossing, PlaybackLatch};
use ludus_anim_runtime::{Affine3A, Clip, Package, Player, Request, Transform};
use std::path::Path;

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::Counting;

use common::alloc::count;

const PROJECT: &str = r#"
[project]
output = "out"

[[asset]]
sources = ["biped.glb"]

[asset.clips.walk]
loop = "loop"
drop_duplicate_end = true
root_motion = { joint = "Root", policy = "planar" }
markers = [
  { name = "foot_l", time_s = 0.0, kind = "sync" },
  { name = "foot_r", time_s = 0.6, kind = "sync" },
  { name = "step", time_s = 0.3, kind = "event", reversible = true },
]

[asset.clips.walk_once]
from = "walk"
range = [0.0, 0.9]
loop = "once"
root_motion = { joint = "Root", policy = "full" }
markers = [{ name = "end", time_s = 0.5, kind = "event" }]

[asset.clips.idle_additive]
from = "idle"
range = [0.0, 3.0]
additive = { reference = "frame", clip = "idle", time_s = 0.0 }

[asset.clips.walk_rest_additive]
from = "walk"
range = [0.2, 0.9]
additive = { reference = "rest" }
"#;

fn cook(cwd: &Path, args: &[&str]) {
    let o = ludus_anim(args, cwd);
    assert!(o.status.success(), "{}", text(&o));
}

/// Package bytes of the project and, when present, the shared fixtures.
fn cooked_packages() -> Vec<(String, Vec<u8>)> {
    let tmp = tempfile::tempdir().unwrap();
    let project = tmp.path().join("project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::copy(repo().join("fixtures/biped.glb"), project.join("biped.glb")).unwrap();
    std::fs::write(project.join("ludus-anim.toml"), PROJECT).unwrap();
    cook(&project, &["cook", "--no-cache"]);
    let mut all = packages(&project.join("out"));
    if let Some(fx) = shared_fixtures() {
        let out = tmp.path().join("fixtures");
        let mut args = vec![
            "cook".to_string(),
            "--no-cache".into(),
            "--out".into(),
            out.display().to_string(),
        ];
        for prefix in ["gltf/", "fbx/", "bvh/"] {
            args.extend(
                manifest_files(&fx, prefix)
                    .iter()
                    .map(|p| p.display().to_string()),
            );
        }
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cook(&fx, &refs);
        all.extend(packages(&out));
    }
    all
}

/// Buffers a game owns for one clip, made before counting.
struct Buffers {
    rest: Vec<Transform>,
    direct: Vec<Transform>,
    fast: Vec<Transform>,
    additive: Vec<Transform>,
    model: Vec<Affine3A>,
    ascending: Vec<u32>,
    descending: Vec<u32>,
    subset: Vec<Transform>,
    crossings: Vec<Crossing>,
}

impl Buffers {
    fn new(p: &Package<'_>) -> Self {
        let n = p.skeleton().joint_count();
        let picked: Vec<u32> = (0..n as u32).step_by(3).collect();
        Buffers {
            rest: p.skeleton().rest_pose().to_vec(),
            direct: vec![Transform::IDENTITY; n],
            fast: vec![Transform::IDENTITY; n],
            additive: vec![Transform::IDENTITY; n],
            model: vec![Affine3A::IDENTITY; n],
            subset: vec![Transform::IDENTITY; picked.len()],
            descending: picked.iter().rev().copied().collect(),
            ascending: picked,
            crossings: vec![Crossing::default(); 256],
        }
    }
}

/// What one frame of a game does with a clip at time `t` (previous frame
/// at `prev`); returns a checksum so nothing is optimized away, and
/// panics (outside the counted region's allocations: a panic message
/// allocates, which also fails the count) on any refused call.
fn frame(
    p: &Package<'_>,
    c: &Clip<'_>,
    player: &mut Player,
    b: &mut Buffers,
    prev: f64,
    t: f64,
) -> f32 {
    let defaults = p.sample_defaults(c);
    let ts = t as f32;
    assert!(c.sample(ts, defaults, &mut b.direct).is_ok());
    player.seek(ts);
    assert!(player.decode(Request::Pose, &mut b.fast).is_ok());
    assert!(player
        .decode(Request::Joints(&b.ascending), &mut b.subset)
        .is_ok());
    assert!(player
        .decode(Request::Joints(&b.descending), &mut b.subset)
        .is_ok());
    let mask = [0x5555_5555_5555_5555u64; 4];
    let words = b.fast.len().div_ceil(64);
    let tail = b.fast.len() % 64;
    let mut m = [0u64; 4];
    if words <= 4 {
        m[..words].copy_from_slice(&mask[..words]);
        if tail != 0 {
            m[words - 1] &= (1u64 << tail) - 1;
        }
        assert!(player
            .decode(Request::Mask(&m[..words]), &mut b.fast)
            .is_ok());
    }
    player.advance(-0.01);
    assert!(player.decode(Request::Pose, &mut b.direct).is_ok());
    let pose = if c.is_additive() {
        assert!(apply_additive_pose(
            &b.rest,
            &b.direct,
            0.5,
            &mut b.additive
        ));
        &b.additive
    } else {
        &b.direct
    };
    assert!(p.skeleton().local_to_component(pose, &mut b.model));
    let mut sum = b.model.last().map_or(0.0, |m| m.translation.x);
    let pos = c.position(ts);
    for ch in p.clip_curves(c) {
        sum += ch.evaluate(pos);
    }
    let mut latch = PlaybackLatch::default();
    let n = c
        .crossed_events(prev, t, &mut latch, &mut b.crossings)
        .unwrap_or(0);
    let back = c
        .crossed_events(t, prev, &mut latch, &mut b.crossings)
        .unwrap_or(0);
    sum += (n + back) as f32;
    sum += c.root_motion_delta(prev, t).translation.x;
    sum + c.markers().len() as f32
}

#[test]
fn decoding_and_sampling_never_allocate() {
    // The counter sees this thread's allocations.
    let (n, v) = count(|| vec![1u8; 16]);
    assert!(n >= 1 && v.len() == 16, "the counting allocator counts");
    drop(v);

    let cooked = cooked_packages();
    assert!(!cooked.is_empty());
    let (mut clips, mut poses, mut with_events, mut with_root, mut additive) = (0, 0, 0, 0, 0);
    let mut curves = 0;
    let mut checksum = 0.0f32;
    for (name, bytes) in &cooked {
        let p = Package::load(bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        let mut b = Buffers::new(&p);
        for c in p.clips() {
            clips += 1;
            with_events += usize::from(!c.markers().is_empty());
            with_root += usize::from(c.root_motion().is_some());
            additive += usize::from(c.is_additive());
            curves += p.clip_curves(c).len();
            let d = c.duration_s() as f64;
            // Bind time (once per clip instance; it allocates), then
            // frames: forward, across loops, at the ends, and non-finite.
            let mut player = Player::new(c, p.sample_defaults(c)).unwrap();
            let (calls, sum) = count(|| {
                let mut sum = 0.0;
                let mut prev = -0.25 * d;
                for k in 0..200 {
                    let t = k as f64 * d * 0.0173 - 0.1 * d;
                    sum += frame(&p, c, &mut player, &mut b, prev, t);
                    prev = t;
                }
                for t in [0.0, d, 2.5 * d, 1e9, f64::NAN] {
                    sum += frame(&p, c, &mut player, &mut b, prev, t);
                }
                sum
            });
            assert_eq!(
                calls,
                0,
                "{name}: clip '{}' allocated {calls} times while decoding",
                c.name()
            );
            poses += 205;
            checksum += sum;
        }
    }
    std::hint::black_box(checksum);
    // The project alone has events, root motion and additive clips.
    assert!(clips >= 5 && poses >= 1000, "{clips} clips, {poses} poses");
    assert!(with_events >= 2 && with_root >= 2 && additive >= 2);
    if shared_fixtures().is_some() {
        assert!(curves > 0, "the shared fixtures have curve channels");
    }
}
