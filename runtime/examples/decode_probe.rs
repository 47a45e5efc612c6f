//! Decoder tuning aid (timings live in `ludus-anim bench` and
//! `tools/acl-harness`).
//!
//! `cargo run --release -p ludus-anim-runtime --example decode_probe -- MODE PKG...`
//! - `dump`: print every clip's decoded poses (full pose and a joint
//!   subset) at 4,000 times as f32 bit patterns, one line per pose. A
//!   decoder change that must not change results keeps this output
//!   byte-identical (diff it before and after). The full pose is
//!   `Clip::sample`'s; the subset a `Player`'s `Request::Joints`. Also
//!   checks that a `Player`'s whole pose (`Request::Pose`, its track
//!   cache filled by the sweep and passed by at the random times) and a
//!   masked pose (`Request::Mask`) give exactly the bits of `Clip::sample`,
//!   as does `Clip::sample` over a copy of the defaults (which decodes
//!   every track, not from the static base), and exits with status 1
//!   where they do not.
//! - `loop N` / `loop-player N` / `loop-joints N`: decode one clip of the
//!   first package N times at pseudo-random times with `Clip::sample` /
//!   a `Player`'s whole pose / its `Request::Joints` of the five joints
//!   `dump` picks for pose 0 (`loop-joint=J`: joint J, by default the
//!   last; `loop-sub10`: ten joints spread over the skeleton), nothing
//!   else: a steady target for `perf record` or `valgrind
//!   --tool=callgrind` instruction counts. The clip is the first one
//!   unless `--clip NAME` follows N. Instructions per pose: the difference
//!   of two runs' totals over the difference of their N.

use std::fmt::Write as _;
use std::io::Write as _;

use ludus_anim_runtime::{Package, Player, Request, Transform};

fn fail(msg: String) -> ! {
    eprintln!("decode_probe: {msg}");
    std::process::exit(2)
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (mode, rest) = args
        .split_first()
        .unwrap_or_else(|| fail("usage: decode_probe dump|loop N PKG...".into()));
    let (count, paths) = match mode.as_str() {
        "dump" => (0usize, rest),
        m if m.starts_with("loop") => {
            let (n, paths) = rest
                .split_first()
                .unwrap_or_else(|| fail("loop needs a count".into()));
            let n = n
                .parse()
                .unwrap_or_else(|_| fail(format!("not a count: {n}")));
            (n, paths)
        }
        other => fail(format!("unknown mode {other}")),
    };
    let (only_clip, paths) = match paths {
        [flag, name, rest @ ..] if flag == "--clip" => (Some(name.as_str()), rest),
        _ => (None, paths),
    };
    let mut stdout = std::io::stdout().lock();
    for path in paths {
        let bytes = std::fs::read(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
        let package = Package::load(&bytes).unwrap_or_else(|e| fail(format!("{path}: {e}")));
        let joints = package.skeleton().joint_count();
        let mut out = vec![Transform::IDENTITY; joints];
        for clip in package.clips() {
            if only_clip.is_some_and(|name| name != clip.name()) {
                continue;
            }
            let mut seed = 0x2545_f491_4f6c_dd1du64;
            let mut next_time = || {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 40) as f32 / (1u64 << 24) as f32 * clip.duration_s()
            };
            let rest_pose = package.sample_defaults(clip);
            let mut player = Player::new(clip, rest_pose)
                .unwrap_or_else(|e| fail(format!("{path}: {}: {e}", clip.name())));
            if mode.starts_with("loop") {
                let times: Vec<f32> = (0..1024).map(|_| next_time()).collect();
                let picked: Vec<u32> = (0..5).map(|k| ((k * 13) % joints) as u32).collect();
                // `loop-joint=J`: joint J (default: the last).
                let one = mode
                    .split_once('=')
                    .and_then(|(_, j)| j.parse::<u32>().ok())
                    .unwrap_or(joints as u32 - 1)
                    .min(joints as u32 - 1);
                let last = [one];
                let ten: Vec<u32> = (0..joints.min(10))
                    .map(|k| (k * joints / joints.min(10)) as u32)
                    .collect();
                let mut sub = vec![Transform::IDENTITY; picked.len().max(ten.len())];
                let kind = mode.split('=').next().unwrap_or("");
                for i in 0..count {
                    let t = times[i % times.len()];
                    player.seek(t);
                    let ok = match kind {
                        "loop" => clip.sample(t, rest_pose, &mut out),
                        "loop-player" => player.decode(Request::Pose, &mut out),
                        "loop-joint" => player.decode(Request::Joints(&last), &mut sub[..1]),
                        "loop-sub10" => {
                            let n = ten.len();
                            player.decode(Request::Joints(&ten), &mut sub[..n])
                        }
                        "loop-joints" => player.decode(Request::Joints(&picked), &mut sub[..5]),
                        other => fail(format!("unknown mode {other}")),
                    };
                    std::hint::black_box((ok.is_ok(), &out, &sub));
                }
                return;
            }
            let mut sub = vec![Transform::IDENTITY; 5];
            let mut cached = vec![Transform::IDENTITY; joints];
            let mut masked = vec![Transform::IDENTITY; joints];
            // The same defaults in other memory: `Clip::sample` decodes
            // every track instead of starting from the static base.
            let rest_copy = rest_pose.to_vec();
            let mut full = vec![Transform::IDENTITY; joints];
            let bits = |p: &[Transform]| {
                p.iter()
                    .flat_map(|x| x.to_array().map(f32::to_bits))
                    .collect::<Vec<_>>()
            };
            for i in 0..4000usize {
                let t = if i < 64 {
                    i as f32 / 63.0 * clip.duration_s()
                } else {
                    next_time()
                };
                let picked: Vec<u32> = (0..5).map(|k| ((i * 7 + k * 13) % joints) as u32).collect();
                // Every third joint, offset by the pose: sparse and dense masks.
                let mut mask = vec![0u64; joints.div_ceil(64)];
                for j in (i % 3..joints).step_by(3) {
                    mask[j / 64] |= 1 << (j % 64);
                }
                player.seek(t);
                let decoded = clip.sample(t, rest_pose, &mut out).and_then(|()| {
                    clip.sample(t, &rest_copy, &mut full)?;
                    player.decode(Request::Pose, &mut cached)?;
                    player.decode(Request::Mask(&mask), &mut masked)?;
                    player.decode(Request::Joints(&picked), &mut sub)
                });
                if let Err(e) = decoded {
                    fail(format!("{path}: {}: t = {t}: {e}", clip.name()));
                }
                let in_mask = |j: usize| mask[j / 64] >> (j % 64) & 1 == 1;
                let mask_ok = (0..joints)
                    .filter(|&j| in_mask(j))
                    .all(|j| bits(&out[j..j + 1]) == bits(&masked[j..j + 1]));
                if bits(&out) != bits(&cached) || bits(&out) != bits(&full) || !mask_ok {
                    eprintln!(
                        "{path}: {}: player, masked or full decode differs at t = {t}",
                        clip.name()
                    );
                    std::process::exit(1);
                }
                let mut line = format!("{} {i}", clip.name());
                for x in out.iter().chain(&sub) {
                    for v in x.to_array() {
                        // +0.0 folds -0.0 into 0.0: both decode the same pose.
                        let _ = write!(line, " {:08x}", (v + 0.0).to_bits());
                    }
                }
                if writeln!(stdout, "{line}").is_err() {
                    return;
                }
            }
        }
    }
}
