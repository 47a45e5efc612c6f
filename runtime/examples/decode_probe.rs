//! Decoder tuning aid (timings live in `ludus-anim bench`).
//!
//! `cargo run --release -p ludus-anim-runtime --example decode_probe -- MODE PKG...`
//! - `dump`: print every clip's decoded poses (full pose and a joint
//!   subset) at 4,000 times as f32 bit patterns, one line per pose. A
//!   decoder change that must not change results keeps this output
//!   byte-identical (diff it before and after). Also checks that the
//!   static-pose and packed decodes (`Clip::sample_static`,
//!   `Clip::sample_packed`) and a context's decodes through a track cache
//!   (`sample_static_cached`) give exactly the bits of
//!   `Clip::sample`, and exits with status 1 where it does not.
//! - `loop N` / `loop-static N` / `loop-joints N`: decode one clip of the
//!   first package N times at pseudo-random times with `Clip::sample` /
//!   `Clip::sample_static` / `Clip::sample_joints` (`loop-packed`:
//!   `Clip::sample_packed`) (the five joints `dump`
//!   picks for pose 0), nothing else (also `loop-context`: a
//!   `DecodeContext` pose; `loop-joint=J` / `loop-walk=J`: joint J, by
//!   default the last, through the index / by the walk; `loop-sub10` /
//!   `loop-sub10-walk`: ten joints spread over the skeleton): a steady target for `perf record` or
//!   `valgrind --tool=callgrind` instruction counts. The clip is the first
//!   one unless `--clip NAME` follows N. Instructions per pose: the
//!   difference of two runs' totals over the difference of their N.

use std::fmt::Write as _;
use std::io::Write as _;

use ludus_anim_format::math::Transform;
use ludus_anim_runtime::package::Package;

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
        let rest_pose = package.skeleton().rest_pose();
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
            let mut static_pose = vec![Transform::IDENTITY; joints];
            if !clip.static_pose(rest_pose, &mut static_pose) {
                fail(format!("{path}: {}: no static pose", clip.name()));
            }
            let statics = clip
                .static_tracks(rest_pose)
                .unwrap_or_else(|| fail(format!("{path}: {}: no static tracks", clip.name())));
            if mode.starts_with("loop") {
                let times: Vec<f32> = (0..1024).map(|_| next_time()).collect();
                let picked: Vec<u32> = (0..5).map(|k| ((k * 13) % joints) as u32).collect();
                // `loop-joint=J` / `loop-walk=J`: joint J (default: the last).
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
                let mut ctx = ludus_anim_runtime::DecodeContext::new(clip);
                let kind = mode.split('=').next().unwrap_or("");
                for i in 0..count {
                    let t = times[i % times.len()];
                    let ok = match kind {
                        "loop" => clip.sample(t, rest_pose, &mut out),
                        "loop-static" => clip.sample_static(t, &static_pose, &mut out),
                        "loop-packed" => clip.sample_packed(t, &statics, &mut out),
                        "loop-context" => {
                            ctx.seek(t);
                            ctx.sample_static(&static_pose, &mut out)
                        }
                        "loop-joint" => {
                            clip.sample_joints_static(t, &static_pose, &last, &mut sub[..1])
                        }
                        "loop-walk" => clip.codec().decode_joints(
                            clip.position(t),
                            rest_pose,
                            &last,
                            &mut sub[..1],
                        ),
                        "loop-sub10" => {
                            let n = ten.len();
                            clip.sample_joints_static(t, &static_pose, &ten, &mut sub[..n])
                        }
                        "loop-sub10-walk" => {
                            let n = ten.len();
                            clip.codec().decode_joints(
                                clip.position(t),
                                rest_pose,
                                &ten,
                                &mut sub[..n],
                            )
                        }
                        "loop-joints" => clip.sample_joints(t, rest_pose, &picked, &mut sub[..5]),
                        other => fail(format!("unknown mode {other}")),
                    };
                    std::hint::black_box((ok, &out, &sub));
                }
                return;
            }
            let mut fast = vec![Transform::IDENTITY; joints];
            let mut sub = vec![Transform::IDENTITY; 5];
            // A playing instance with a track cache: the sweep fills and
            // reads it, the random times mostly pass it by.
            let mut ctx = ludus_anim_runtime::DecodeContext::new(clip);
            let mut tracks = clip.track_cache();
            let mut cached = vec![Transform::IDENTITY; joints];
            for i in 0..4000usize {
                let t = if i < 64 {
                    i as f32 / 63.0 * clip.duration_s()
                } else {
                    next_time()
                };
                let picked: Vec<u32> = (0..5).map(|k| ((i * 7 + k * 13) % joints) as u32).collect();
                let mut packed = vec![Transform::IDENTITY; joints];
                if !(clip.sample(t, rest_pose, &mut out)
                    && clip.sample_static(t, &static_pose, &mut fast)
                    && clip.sample_packed(t, &statics, &mut packed))
                {
                    fail(format!("{path}: {}: no pose at t = {t}", clip.name()));
                }
                let bits = |p: &[Transform]| {
                    p.iter()
                        .flat_map(|x| x.to_array().map(f32::to_bits))
                        .collect::<Vec<_>>()
                };
                ctx.seek(t);
                if !ctx.sample_static_cached(&mut tracks, &static_pose, &mut cached) {
                    fail(format!(
                        "{path}: {}: no cached pose at t = {t}",
                        clip.name()
                    ));
                }
                if bits(&out) != bits(&fast)
                    || bits(&out) != bits(&packed)
                    || bits(&out) != bits(&cached)
                {
                    eprintln!(
                        "{path}: {}: static/packed/cached decode differs at t = {t}",
                        clip.name()
                    );
                    std::process::exit(1);
                }
                if !clip.sample_joints(t, rest_pose, &picked, &mut sub) {
                    fail(format!("{path}: {}: no subset at t = {t}", clip.name()));
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
