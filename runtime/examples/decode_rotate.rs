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
//! without the index: the walk over every joint before the last),
//! `clip-pose` and `clip-packed` (`Clip::sample_static` and
//! `Clip::sample_packed`: no context, the segment located on every decode).
//! Per-decode figures
//! under a simulator are the difference of two runs' totals over the
//! difference of their N (the setup is the same). With `--time` after the
//! mode, prints the median and 10th percentile over chunks of 256
//! decodes (first two passes excluded) of the mean ns per decode. With
//! `--warm`, every copy shares one package buffer (warm clip data: the
//! decode's compute alone, for comparison with the cold figure). With
//! `LUDUS_ARENA` set, the copies sit in one arena at a 64-byte stride
//! instead (a few pages for many copies): against the slotted layout, what
//! a cold decode pays for its pages rather than for its cache lines.
//! `--isa L` decodes at instruction-set level L (`sse2`,
//! `avx2`; whole-pose modes); `--isa-ab L1,L2` alternates two levels pass by pass and,
//! timed, prints both and the ratio L2 / L1 of the same chunks.

use ludus_anim_format::math::Transform;
use ludus_anim_runtime::codec::vbr::Isa;
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
    // `--isa L`: decode at level L; `--isa-ab L1,L2`: alternate the two
    // levels pass by pass (timed: each level's median and the median of
    // the ratios L2 / L1 of the same chunk in adjacent passes).
    let flag = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|k| args.get(k + 1).cloned())
    };
    let levels: Vec<Isa> = flag("--isa")
        .or(flag("--isa-ab"))
        .map(|v| {
            v.split(',')
                .map(|n| Isa::from_name(n).unwrap_or_else(|| fail(format!("unknown level {n}"))))
                .collect()
        })
        .unwrap_or_default();
    for name in ["--isa", "--isa-ab"] {
        if let Some(k) = args.iter().position(|a| a == name) {
            args.drain(k..(k + 2).min(args.len()));
        }
    }
    args.retain(|a| a != "--time" && a != "--warm");
    let mode = args.first().cloned().unwrap_or_default();
    let n: usize = parse(args.get(1), "N");
    let copies: usize = parse(args.get(2), "COPIES");
    let path = args.get(3).unwrap_or_else(|| fail("need a package".into()));
    let clip_index: usize = args.get(4).and_then(|s| s.parse().ok()).unwrap_or(0);
    let bytes = std::fs::read(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let slot = bytes.len().div_ceil(128 << 10) * (128 << 10);
    // LUDUS_ARENA=1: every copy in one 2 MiB-aligned arena at a 64-byte
    // stride (few pages, huge pages where the kernel gives them), to
    // separate the TLB's share of a cold decode from the caches'.
    let arena = std::env::var_os("LUDUS_ARENA").is_some();
    let stride = if arena {
        bytes.len().div_ceil(64) * 64
    } else {
        slot
    };
    let count = if warm { 1 } else { copies.max(1) };
    let mut big = vec![0u8; if arena { count * stride + (2 << 20) } else { 0 }];
    let skip = big.as_ptr().align_offset(2 << 20).min(big.len());
    let mut buffers: Vec<&[u8]> = Vec::new();
    let owned: Vec<Vec<u8>> = if arena {
        for k in 0..count {
            let at = skip + k * stride;
            big[at..at + bytes.len()].copy_from_slice(&bytes);
        }
        Vec::new()
    } else {
        (0..count)
            .map(|_| {
                let mut b = Vec::with_capacity(slot);
                b.extend_from_slice(&bytes);
                b
            })
            .collect()
    };
    if arena {
        buffers
            .extend((0..count).map(|k| &big[skip + k * stride..skip + k * stride + bytes.len()]));
    } else {
        buffers.extend(owned.iter().map(|b| b.as_slice()));
    }
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
            let st = if mode.contains("packed") {
                clip.static_tracks(p.sample_defaults(&clip))
                    .unwrap_or_else(|| fail("no static tracks".into()))
            } else {
                Default::default()
            };
            (p, clip, sp, st)
        })
        .collect();
    let mut contexts: Vec<_> = views.iter().map(|v| DecodeContext::new(&v.1)).collect();
    // `-cached` modes: each copy's instance keeps a track cache, made in
    // copy order like the contexts.
    let mut caches: Vec<_> = if mode.ends_with("-cached") {
        views.iter().map(|v| v.1.track_cache()).collect()
    } else {
        vec![Default::default(); views.len()]
    };
    let set_level = |contexts: &mut [DecodeContext<'_, '_>], isa: Isa| {
        if !contexts.iter_mut().all(|c| c.set_isa(isa)) {
            fail(format!("this CPU does not run {}", isa.name()));
        }
    };
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
        if let Some(&isa) = levels.get(pass % levels.len().max(1)) {
            set_level(&mut contexts, isa);
        }
        let mut start = Instant::now();
        for (i, (((p, clip, sp, st), ctx), tc)) in views
            .iter()
            .zip(contexts.iter_mut())
            .zip(caches.iter_mut())
            .take(m)
            .enumerate()
        {
            ctx.seek(t);
            let ok = match kind {
                "pose" => ctx.sample_static(sp, &mut out),
                "pose-cached" => ctx.sample_static_cached(tc, sp, &mut out),
                "packed-cached" => ctx.sample_packed_cached(tc, st, &mut out),
                "packed" => ctx.sample_packed(st, &mut out),
                // The clip's own entry points (no context: the position
                // and the segment are derived on every decode).
                "clip-pose" => clip.sample_static(t, sp, &mut out),
                "clip-packed" => clip.sample_packed(t, st, &mut out),
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
                    chunks.push((pass, i, start.elapsed().as_nanos() as f64 / CHUNK as f64));
                }
                start = Instant::now();
            }
        }
        done += m;
        pass += 1;
    }
    if time {
        report(&chunks, &levels);
    }
}

/// Percentile `q` of `v` (sorted in place).
fn quantile(v: &mut [f64], q: f64) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get((v.len() as f64 * q) as usize).copied().unwrap_or(0.0)
}

/// The timing lines: all chunks, or with two levels each level's chunks
/// and the ratios of a chunk to the same chunk one pass earlier.
fn report(chunks: &[(usize, usize, f64)], levels: &[Isa]) {
    let mut all: Vec<f64> = chunks.iter().map(|c| c.2).collect();
    if levels.len() != 2 {
        println!(
            "median {:.1} p10 {:.1}",
            quantile(&mut all, 0.5),
            quantile(&mut all, 0.1)
        );
        return;
    }
    for (k, isa) in levels.iter().enumerate() {
        let mut v: Vec<f64> = chunks
            .iter()
            .filter(|c| c.0 % 2 == k)
            .map(|c| c.2)
            .collect();
        let (m, p10) = (quantile(&mut v, 0.5), quantile(&mut v, 0.1));
        println!("{} median {m:.1} p10 {p10:.1}", isa.name());
    }
    let mut ratios: Vec<f64> = chunks
        .iter()
        .filter(|c| c.0 % 2 == 1)
        .filter_map(|b| {
            let a = chunks.iter().find(|a| a.0 + 1 == b.0 && a.1 == b.1)?;
            Some(b.2 / a.2)
        })
        .collect();
    let (p25, m, p75) = (
        quantile(&mut ratios, 0.25),
        quantile(&mut ratios, 0.5),
        quantile(&mut ratios, 0.75),
    );
    println!(
        "{} / {}: median {m:.3} quartiles {p25:.3}-{p75:.3} ({} pairs)",
        levels[1].name(),
        levels[0].name(),
        ratios.len()
    );
}
