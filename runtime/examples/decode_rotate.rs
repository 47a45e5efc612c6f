//! Cold-data decode probe: ACL's benchmark method in a small, steady
//! target for `valgrind --tool=cachegrind --cache-sim=yes` and pinned
//! timing (`ludus-anim bench` has the full table).
//!
//! `cargo run --release -p ludus-anim-runtime --example decode_rotate -- MODE N COPIES PKG [CLIP]`
//!
//! The package is copied COPIES times into separate 128 KiB-aligned slots,
//! each copy with its own clip view, static pose and `DecodeContext`; N
//! decodes rotate through the copies (the time moves on after each pass
//! over them), so every decode finds its clip data and context cold while
//! code and output stay warm. Modes: `pose` (`sample_static`), `packed`
//! (`sample_packed`, from the clip's packed static tracks), `rest`
//! (`sample`, from the rest pose), `joint=J` (one joint, default the
//! last), `sub10` (ten joints spread over the skeleton), `sub10-walk` (the same
//! without the index: the walk over every joint before the last). Per-decode figures
//! under a simulator are the difference of two runs' totals over the
//! difference of their N (the setup is the same). With `--time` after the
//! mode, prints the median and 10th percentile over chunks of 256
//! decodes (first two passes excluded) of the mean ns per decode. With
//! `--warm`, every copy shares one package buffer (warm clip data: the
//! decode's compute alone, for comparison with the cold figure).

use ludus_anim_runtime::math::Transform;
use ludus_anim_runtime::package::Package;
use ludus_anim_runtime::DecodeContext;
use std::time::Instant;

fn fail(msg: String) -> ! {
    eprintln!("decode_rotate: {msg}");
    std::process::exit(2)
}

fn parse<T: std::str::FromStr>(s: Option<&String>, what: &str) -> T {
    s.and_then(|s| s.parse().ok())
        .unwrap_or_else(|| fail(format!("need {what}")))
}

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let time = args.iter().any(|a| a == "--time");
    let warm = args.iter().any(|a| a == "--warm");
    args.retain(|a| a != "--time" && a != "--warm");
    let mode = args.first().cloned().unwrap_or_default();
    let n: usize = parse(args.get(1), "N");
    let copies: usize = parse(args.get(2), "COPIES");
    let path = args.get(3).unwrap_or_else(|| fail("need a package".into()));
    let clip_index: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0);
    let bytes = std::fs::read(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let slot = bytes.len().div_ceil(128 << 10) * (128 << 10);
    let buffers: Vec<Vec<u8>> = (0..if warm { 1 } else { copies.max(1) })
        .map(|_| {
            let mut b = Vec::with_capacity(slot);
            b.extend_from_slice(&bytes);
            b
        })
        .collect();
    let packages: Vec<Package<'_>> = buffers
        .iter()
        .cycle()
        .take(copies.max(1))
        .map(|b| Package::load(b).unwrap_or_else(|e| fail(format!("{path}: {e}"))))
        .collect();
    let first = packages.first().unwrap_or_else(|| fail("no copy".into()));
    let joints = first.skeleton().joint_count();
    let views: Vec<_> = packages
        .iter()
        .map(|p| {
            let clip = p
                .clips()
                .get(clip_index)
                .unwrap_or_else(|| fail("no such clip".into()))
                .clone();
            let mut sp = vec![Transform::IDENTITY; joints];
            if !clip.static_pose(p.sample_defaults(&clip), &mut sp) {
                fail("no static pose".into());
            }
            // Only where used: another allocation per copy moves the
            // copies' heap layout and with it the cache-set conflicts.
            let st = if mode == "packed" {
                clip.static_tracks(p.sample_defaults(&clip))
                    .unwrap_or_else(|| fail("no static tracks".into()))
            } else {
                Default::default()
            };
            (p, clip, sp, st)
        })
        .collect();
    let mut contexts: Vec<_> = views.iter().map(|v| DecodeContext::new(&v.1)).collect();
    let kind = mode.split('=').next().unwrap_or("");
    let one = mode
        .split_once('=')
        .and_then(|(_, j)| j.parse::<u32>().ok())
        .unwrap_or(joints as u32 - 1)
        .min(joints as u32 - 1);
    let last = [one];
    let ten: Vec<u32> = (0..joints.min(10))
        .map(|k| (k * joints / joints.min(10)) as u32)
        .collect();
    let mut out = vec![Transform::IDENTITY; joints];
    let duration = views[0].1.duration_s();
    // Timed in chunks of 256 decodes (a pass over thousands of copies is
    // long enough to be preempted on a loaded machine; a chunk rarely is).
    const CHUNK: usize = 256;
    let mut chunks = Vec::new();
    let mut done = 0;
    let mut pass = 0usize;
    while done < n {
        let t = (pass % 100) as f32 / 99.0 * duration;
        let m = (n - done).min(views.len());
        let mut start = Instant::now();
        for (i, ((p, _, sp, st), ctx)) in views.iter().zip(contexts.iter_mut()).take(m).enumerate()
        {
            ctx.seek(t);
            let ok = match kind {
                "pose" => ctx.sample_static(sp, &mut out),
                "packed" => ctx.sample_packed(st, &mut out),
                "rest" => ctx.sample(p.sample_defaults(ctx.clip()), &mut out),
                "joint" => ctx.sample_joints_static(sp, &last, &mut out[..1]),
                "sub10" => ctx.sample_joints_static(sp, &ten, &mut out[..ten.len()]),
                // The walk without the index (what subsets cost before it).
                "sub10-walk" => {
                    let pos = ctx.position();
                    let codec = ctx.clip().codec();
                    codec.decode_joints(pos, sp, &ten, &mut out[..ten.len()])
                }
                other => fail(format!("unknown mode {other}")),
            };
            std::hint::black_box((ok, &out));
            if time && i % CHUNK == CHUNK - 1 {
                if pass >= 2 {
                    chunks.push(start.elapsed().as_nanos() as f64 / CHUNK as f64);
                }
                start = Instant::now();
            }
        }
        done += m;
        pass += 1;
    }
    if time {
        chunks.sort_by(f64::total_cmp);
        let at = |q: f64| {
            chunks
                .get((chunks.len() as f64 * q) as usize)
                .copied()
                .unwrap_or(0.0)
        };
        println!("median {:.1} p10 {:.1}", at(0.5), at(0.1));
    }
}
