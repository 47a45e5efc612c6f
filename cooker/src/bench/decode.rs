//! Decode timings by ACL's method (`acl_decompressor`'s benchmark), for
//! every request a game makes: a whole pose (through a playing instance,
//! and one-shot), one joint (first, middle, last), a 10-joint subset and
//! the whole pose joint by joint; and a strict-flush figure per decode.
//!
//! ACL's method: the package is copied thousands of times into separate
//! 128 KiB-aligned slots, each copy with its own `Player` (as ACL keeps
//! one decompression context per copy), and back-to-back decodes rotate through the copies,
//! so each decode finds its clip data and context cold while the code and
//! the output are warm. A figure is the median of 12 passes, each the mean
//! nanoseconds per decode over all copies (ACL reports a run's mean); the
//! time advances through 100 points of the clip between passes.
//!
//! Strict flush: a 128 MiB buffer (four times this machine's 32 MiB
//! last-level cache; ACL's own 32 MiB memset does not empty it) is read,
//! modified and written line by line before each timed decode of a single
//! copy, so code, context, data and output all start cold; median of the
//! runs.

use ludus_anim_runtime::{Clip, Package, Player, Request as Decode, Transform};
use serde::Serialize;
use std::time::Instant;

/// What one timed decode asks for.
#[derive(Clone, Copy, Debug)]
enum Request<'r> {
    /// Every joint through the copy's player (`Request::Pose`).
    Pose,
    /// Every joint, one-shot (`Clip::sample`, no player).
    OneShot,
    /// These joints through the copy's player (`Request::Joints`).
    Joints(&'r [u32]),
    /// Every joint, one single-joint request at a time.
    JointByJoint,
}

/// How the decode figures are taken.
#[derive(Clone, Copy, Debug)]
pub struct DecodeSettings {
    /// Timed decodes per strict-flush figure.
    pub strict_runs: usize,
}

/// The figures of one clip, nanoseconds per decode. Ours alone: a figure
/// against ACL comes only from ACL run beside it (`tools/acl-harness`).
#[derive(Clone, Debug, Default, Serialize)]
pub struct DecodeFigures {
    /// The whole pose through a playing instance (`Player`).
    pub pose_ns: f64,
    /// The whole pose one-shot (`Clip::sample`).
    pub oneshot_pose_ns: f64,
    pub first_joint_ns: f64,
    pub middle_joint_ns: f64,
    pub last_joint_ns: f64,
    /// Ten joints spread evenly over the skeleton (all if fewer).
    pub subset10_ns: f64,
    pub joint_by_joint_ns: f64,
    /// Strict flush (128 MiB read-modify-write before each decode).
    pub strict_pose_ns: f64,
    pub strict_last_joint_ns: f64,
    /// Copies in rotation (ACL's count, capped by the memory budget).
    pub copies: usize,
    /// The fastest and the slowest of the whole pose's timed passes: how
    /// steady the run was (a wide range means a disturbed machine).
    pub pose_passes_ns: [f64; 2],
}

/// One copy: its clip view and the defaults its player binds with.
struct Copy<'p> {
    clip: Clip<'p>,
    defaults: Vec<Transform>,
}

/// Ten joints spread evenly over `joints` (every joint if fewer).
pub fn subset10(joints: usize) -> Vec<u32> {
    let n = joints.min(10);
    (0..n)
        .map(|k| (k * joints / n.max(1)) as u32)
        .collect::<Vec<_>>()
}

#[inline(never)]
fn decode<'p>(
    player: &mut Player<'_, 'p>,
    c: &Copy<'p>,
    t: f32,
    req: Request<'_>,
    out: &mut [Transform],
) -> bool {
    player.seek(t);
    match req {
        Request::Pose => player.decode(Decode::Pose, out).is_ok(),
        Request::OneShot => c.clip.sample(t, &c.defaults, out).is_ok(),
        Request::Joints(j) => {
            let n = j.len().min(out.len());
            out.get_mut(..n)
                .is_some_and(|o| player.decode(Decode::Joints(j), o).is_ok())
        }
        Request::JointByJoint => {
            let mut ok = true;
            for (j, o) in out.iter_mut().enumerate() {
                let one = [j as u32];
                ok &= player
                    .decode(Decode::Joints(&one), std::slice::from_mut(o))
                    .is_ok();
            }
            ok
        }
    }
}

/// Package copies for ACL's method; None if the package does not load.
fn copies(bytes: &[u8], pose_bytes: usize) -> Option<Vec<Vec<u8>>> {
    const CACHE: usize = 33 << 20;
    const SLOT_ALIGN: usize = 128 << 10;
    const MIN_COPIES: usize = 4000;
    const TOUCHED_BUDGET: usize = 256 << 20;
    // ACL's copy count, but never more copies than fit a memory budget:
    // budgeted copies still span many times the last-level cache.
    let n = CACHE
        .div_ceil(pose_bytes.max(1))
        .div_ceil(2)
        .max(MIN_COPIES)
        .min((TOUCHED_BUDGET / bytes.len().max(1)).max(16));
    let slot = bytes.len().max(pose_bytes).div_ceil(SLOT_ALIGN) * SLOT_ALIGN;
    let mut buffers = Vec::with_capacity(n);
    for _ in 0..n {
        let mut b = Vec::new();
        b.try_reserve_exact(slot).ok()?;
        b.extend_from_slice(bytes);
        buffers.push(b);
    }
    Some(buffers)
}

/// Every figure of clip `clip` of the package `bytes` (zeros if it does
/// not load).
pub fn measure(bytes: &[u8], clip: usize, settings: &DecodeSettings) -> DecodeFigures {
    let strict_runs = settings.strict_runs;
    let Ok(first) = Package::load(bytes) else {
        return DecodeFigures::default();
    };
    let joints = first.skeleton().joint_count();
    let Some(buffers) = copies(bytes, joints * 40) else {
        return DecodeFigures::default();
    };
    let packages: Vec<Package<'_>> = buffers
        .iter()
        .filter_map(|b| Package::load(b).ok())
        .collect();
    let views: Vec<Copy<'_>> = packages
        .iter()
        .filter_map(|p| {
            let clip = p.clips().get(clip)?.clone();
            let defaults = p.sample_defaults(&clip).to_vec();
            Some(Copy { clip, defaults })
        })
        .collect();
    if views.len() != packages.len() || views.is_empty() {
        return DecodeFigures::default();
    }
    let last = [joints.saturating_sub(1) as u32];
    let sub = subset10(joints);
    let rotate = |req| median(rotation(&views, req, joints));
    let pose = rotation(&views, Request::Pose, joints);
    let fastest = pose.iter().copied().fold(f64::INFINITY, f64::min);
    let slowest = pose.iter().copied().fold(0.0, f64::max);
    DecodeFigures {
        copies: views.len(),
        pose_passes_ns: [fastest.min(slowest), slowest],
        pose_ns: median(pose),
        oneshot_pose_ns: rotate(Request::OneShot),
        first_joint_ns: rotate(Request::Joints(&[0])),
        middle_joint_ns: rotate(Request::Joints(&[(joints / 2) as u32])),
        last_joint_ns: rotate(Request::Joints(&last)),
        subset10_ns: rotate(Request::Joints(&sub)),
        joint_by_joint_ns: rotate(Request::JointByJoint),
        strict_pose_ns: strict(&views, Request::Pose, joints, strict_runs),
        strict_last_joint_ns: strict(&views, Request::Joints(&last), joints, strict_runs),
    }
}

/// ACL's method over the copies (see the module documentation): the timed
/// passes' mean ns per decode.
fn rotation(views: &[Copy<'_>], req: Request<'_>, joints: usize) -> Vec<f64> {
    let mut out = vec![Transform::IDENTITY; joints];
    // One player per copy, made in copy order as a game makes its
    // instances (ACL: one decompression context per copy).
    let mut players: Vec<Player<'_, '_>> = views
        .iter()
        .filter_map(|c| Player::new(&c.clip, &c.defaults).ok())
        .collect();
    let duration = views.first().map_or(0.0, |c| c.clip.duration_s());
    // The first two passes fault the pages in; a pass disturbed by another
    // tenant of the machine does not move the median.
    let mut passes = Vec::with_capacity(12);
    for pass in 0..14 {
        let t = (pass % 100) as f32 / 99.0 * duration;
        let start = Instant::now();
        for (c, player) in views.iter().zip(players.iter_mut()) {
            std::hint::black_box(decode(player, c, t, req, &mut out));
            std::hint::black_box(&out);
        }
        if pass >= 2 {
            passes.push(start.elapsed().as_nanos() as f64 / views.len() as f64);
        }
    }
    passes
}

/// One copy decoded after a 128 MiB read-modify-write, `runs` times (its
/// player made before the flush, as a playing instance's is).
fn strict(views: &[Copy<'_>], req: Request<'_>, joints: usize, runs: usize) -> f64 {
    let Some(c) = views.first() else {
        return 0.0;
    };
    let mut out = vec![Transform::IDENTITY; joints];
    let mut flush = vec![0u8; 128 << 20];
    let mut times = Vec::with_capacity(runs);
    for i in 0..runs {
        let Ok(mut player) = Player::new(&c.clip, &c.defaults) else {
            return 0.0;
        };
        for k in (0..flush.len()).step_by(64) {
            flush[k] = flush[k].wrapping_add(i as u8 | 1);
        }
        std::hint::black_box(&flush);
        let t = (i % 100) as f32 / 99.0 * c.clip.duration_s();
        let start = Instant::now();
        std::hint::black_box(decode(&mut player, c, t, req, &mut out));
        std::hint::black_box(&out);
        times.push(start.elapsed().as_nanos() as f64);
    }
    median(times)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}
