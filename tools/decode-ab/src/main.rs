//! The decoder as it was when #17 was filed (A) against this checkout's
//! (B), interleaved in one process chunk by chunk with ACL's method
//! (COPIES copies of each package in rotation, so clip data is cold), so
//! that the shared machine's slow phases hit both alike. A runs from a
//! static pose (`Clip::sample_static`) or a joint from the rest pose
//! (`Clip::sample_joints`), the requests the #17 anchor figures timed.
//!
//! `decode-ab A_MODE A_PKG B_MODE B_PKG [COPIES] [PASSES]` (COPIES: ACL's
//! count for the rig unless given, see `acl_copies`)
//! A modes: `pose`, `joint[=J]`. B modes: `packed`, `pose` (through a
//! `DecodeContext`), `pose-cached` and `packed-cached` (the same with a
//! `TrackCache` per copy), `pose-out` (the same, each copy writing its own
//! output, as cold as its clip), `pose-shared`, `pose-blob0` (every
//! context over copy 0's clip bytes: warm clip data), `clip-pose`,
//! `clip-packed`, `joint[=J]`, `clip-joint`. `DECODE_ISA` (`sse2`,
//! `avx2`) sets the level B's contexts decode at.
//! Where B's per-copy state lies: by default the contexts in one array
//! and the caches beside it, both in copy order; `SHUFFLE_CACHES=1`
//! makes the caches in a scrambled order; `INSTANCES=order|scatter`
//! puts each copy's context and cache (entries inline) in one
//! allocation, made in copy order or scrambled.
//! Prints each side's median and 10th percentile ns per decode and the
//! median (and quartiles) of the ratios B/A of adjacent chunks.
//!
//! Measured here: a filing-against-filing control gives 0.99-1.02, but
//! where the per-copy state lies moves a ratio a lot. Views that own a
//! clone of each clip (the clone allocates the clip's index between the
//! static poses) against views that borrow the package's clip took
//! zombieWalk1's static pose from 1.2-1.4x to 0.89-0.93x and Knight's from
//! 1.2x to 1.25-1.57x. Warm (16 copies) the two decoders' static poses
//! are 0.94-0.98x apart, as their instruction counts say; the gap cold
//! grows with the copy count (1,000: 1.2-1.3x, 4,000: 1.5-1.8x for the
//! walk without its tracks), and 2 MiB pages (`HUGE`) do not close it.
use ludus_anim_runtime as rtb;
use std::time::Instant;

/// Animated tracks an `INSTANCES` copy's inline track cache holds.
const INLINE: usize = 32;

/// One copy's whole decode state in one allocation (`INSTANCES`).
struct Instance<'p> {
    ctx: rtb::DecodeContext<'p, 'p>,
    tc: rtb::codec::vbr::TrackCache<'p, [rtb::codec::vbr::CachedTrack; INLINE]>,
}

/// The copies' indices in order, or scrambled (a fixed xorshift, so runs
/// compare).
fn copy_order(n: usize, scramble: bool) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    if scramble {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in (1..order.len()).rev() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            order.swap(i, (x % (i as u64 + 1)) as usize);
        }
    }
    order
}

/// B's copy `x` (its context and track cache, wherever they lie) decodes
/// request `kb` at `t` into `ob` (or `own`, the copy's own output).
#[allow(clippy::too_many_arguments)]
fn decode_b<S: AsMut<[rtb::codec::vbr::CachedTrack]>>(
    kb: &str,
    x: &mut rtb::DecodeContext<'_, '_>,
    tc: &mut rtb::codec::vbr::TrackCache<'_, S>,
    (p, c, sp, st): (
        &rtb::package::Package<'_>,
        &rtb::Clip<'_>,
        &[rtb::Transform],
        &rtb::codec::vbr::StaticTracks<'_>,
    ),
    (shared, jb): (&[rtb::Transform], &[u32]),
    own: Option<&mut Vec<rtb::Transform>>,
    t: f32,
    ob: &mut [rtb::Transform],
) -> bool {
    match kb {
        "pose-cached" => {
            x.seek(t);
            x.sample_static_cached(tc, sp, ob)
        }
        "packed-cached" => {
            x.seek(t);
            x.sample_packed_cached(tc, st, ob)
        }
        // The static pose of copy 0 for every copy: what the
        // cold per-copy static pose costs a decode.
        "pose-shared" => {
            x.seek(t);
            x.sample_static(shared, ob)
        }
        "packed" => {
            x.seek(t);
            x.sample_packed(st, ob)
        }
        "pose" | "pose-blob0" => {
            x.seek(t);
            x.sample_static(sp, ob)
        }
        "pose-out" => {
            x.seek(t);
            match own {
                Some(o) => x.sample_static(sp, o),
                None => false,
            }
        }
        "clip-pose" => c.sample_static(t, sp, ob),
        "clip-packed" => c.sample_packed(t, st, ob),
        "joint" => {
            x.seek(t);
            x.sample_joints_static(sp, jb, &mut ob[..1])
        }
        "clip-joint" => c.sample_joints(t, p.sample_defaults(c), jb, &mut ob[..1]),
        other => fail(format!("unknown B mode {other}")),
    }
}

fn fail(msg: String) -> ! {
    eprintln!("decode-ab: {msg}");
    std::process::exit(2)
}

/// COPIES copies of the file, each in its own 128 KiB slot (as ACL's
/// benchmark and decode_rotate lay them out). With `HUGE` set, the slots
/// sit in one arena of 2 MiB pages (hugetlbfs; `vm.nr_hugepages` must be
/// large enough): the same cache lines, next to no TLB misses.
fn copies(path: &str, n: usize) -> Vec<&'static [u8]> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let slot = bytes.len().div_ceil(128 << 10) * (128 << 10);
    if std::env::var_os("HUGE").is_some() {
        let len = (n * slot).div_ceil(2 << 20) * (2 << 20);
        // SAFETY: an anonymous private mapping; checked for failure below.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_HUGETLB,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            fail("mmap(MAP_HUGETLB) failed: raise vm.nr_hugepages".into());
        }
        // SAFETY: the mapping is `len` bytes, writable, never unmapped.
        let arena: &'static mut [u8] = unsafe { std::slice::from_raw_parts_mut(p as *mut u8, len) };
        let mut out = Vec::new();
        let mut rest = arena;
        for _ in 0..n {
            let (head, tail) = rest.split_at_mut(slot);
            head[..bytes.len()].copy_from_slice(&bytes);
            out.push(&head[..bytes.len()]);
            rest = tail;
        }
        return out;
    }
    (0..n)
        .map(|_| {
            let mut b = Vec::with_capacity(slot);
            b.extend_from_slice(&bytes);
            &*Vec::leak(b)
        })
        .collect()
}

/// ACL's copy count (`acl_decompressor`'s benchmark.cpp): a 33 MiB cache
/// divided into poses of 40 bytes a joint, halved, and at least 4,000.
/// Fewer copies leave part of a request's lines in the last-level cache
/// from one pass to the next: a single joint of Knight Idle took 38 ns
/// over 4,000 copies and 106-110 ns over ACL's 13,953.
fn acl_copies(path: &str) -> usize {
    let bytes = std::fs::read(path).unwrap_or_else(|e| fail(format!("{path}: {e}")));
    let joints = rtb::package::Package::load(&bytes)
        .unwrap_or_else(|e| fail(format!("{path}: {e}")))
        .skeleton()
        .joint_count();
    let pose = (joints * 40).max(1);
    (33usize << 20).div_ceil(pose).div_ceil(2).max(4000)
}

fn joint(mode: &str, joints: usize) -> u32 {
    let last = joints.saturating_sub(1) as u32;
    mode.split_once('=')
        .and_then(|(_, j)| j.parse::<u32>().ok())
        .unwrap_or(last)
        .min(last)
}

fn quantile(v: &[f64], q: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v.get((v.len() as f64 * q) as usize)
        .copied()
        .unwrap_or(f64::NAN)
}

fn main() {
    let a: Vec<String> = std::env::args().skip(1).collect();
    let [ma, pa, mb, pb] = [0, 1, 2, 3].map(|k| {
        a.get(k)
            .cloned()
            .unwrap_or_else(|| fail("usage: A_MODE A_PKG B_MODE B_PKG [COPIES] [PASSES]".into()))
    });
    // COPIES defaults to ACL's count for this rig (`acl_copies`).
    let n: usize = a
        .get(4)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| acl_copies(&pb))
        .max(1);
    let passes: usize = a.get(5).and_then(|s| s.parse().ok()).unwrap_or(25).max(3);
    let (ba, bb) = (copies(&pa, n), copies(&pb, n));
    let pka: Vec<_> = ba
        .iter()
        .map(|b| {
            rt_filing::package::Package::load(b).unwrap_or_else(|e| fail(format!("{pa}: {e}")))
        })
        .collect();
    let pkb: Vec<_> = bb
        .iter()
        .map(|b| rtb::package::Package::load(b).unwrap_or_else(|e| fail(format!("{pb}: {e}"))))
        .collect();
    let joints = pka[0].skeleton().joint_count();
    if pkb[0].skeleton().joint_count() != joints {
        fail("the two packages have different skeletons".into());
    }
    let va: Vec<_> = pka
        .iter()
        .map(|p| {
            let c = p
                .clips()
                .first()
                .unwrap_or_else(|| fail("A: no clip".into()));
            let mut sp = vec![rt_filing::math::Transform::IDENTITY; joints];
            if !c.static_pose(p.sample_defaults(c), &mut sp) {
                fail("A: no static pose".into())
            }
            (p, c, sp)
        })
        .collect();
    let vb: Vec<_> = pkb
        .iter()
        .map(|p| {
            let c = p
                .clips()
                .first()
                .unwrap_or_else(|| fail("B: no clip".into()));
            let mut sp = vec![rtb::Transform::IDENTITY; joints];
            if !c.static_pose(p.sample_defaults(c), &mut sp) {
                fail("B: no static pose".into())
            }
            let st = if mb.contains("packed") {
                c.static_tracks(p.sample_defaults(c))
                    .unwrap_or_else(|| fail("B: no static tracks".into()))
            } else {
                Default::default()
            };
            (p, c, sp, st)
        })
        .collect();
    // `pose-blob0`: every context decodes copy 0's clip bytes (warm), each
    // from its own static pose: what the cold clip data costs a pose.
    let mut ctx: Vec<_> = vb
        .iter()
        .map(|v| rtb::DecodeContext::new(if mb == "pose-blob0" { vb[0].1 } else { v.1 }))
        .collect();
    // `-cached` modes: each copy's instance keeps a track cache, made in
    // copy order like the contexts.
    // With `SHUFFLE_CACHES` set they are made in a scrambled order, so
    // that neighbouring copies' caches do not lie next to each other (as
    // in a game whose instances were spawned in another order than they
    // are updated).
    let mut tcs: Vec<_> = vec![Default::default(); vb.len()];
    if mb.ends_with("-cached") {
        for k in copy_order(vb.len(), std::env::var_os("SHUFFLE_CACHES").is_some()) {
            tcs[k] = vb[k].1.track_cache();
        }
    }
    // `INSTANCES=order|scatter`: each copy keeps its context and its track
    // cache (entries inline) in one allocation of its own, as a game
    // keeps an instance's decode state together; `scatter` makes them in
    // a scrambled order, so that neither a copy's context nor its cache
    // lies next to its neighbours' in decode order. Every B mode then
    // decodes through these, cached or not, so both pay the same cold
    // instance.
    let mut insts: Vec<Option<Box<Instance>>> = Vec::new();
    if let Ok(how) = std::env::var("INSTANCES") {
        insts.resize_with(vb.len(), || None);
        for k in copy_order(vb.len(), how == "scatter") {
            let c = vb[k].1;
            if c.track_cache_len() > INLINE {
                fail(format!(
                    "{} animated tracks: more than {INLINE}",
                    c.track_cache_len()
                ));
            }
            insts[k] = Some(Box::new(Instance {
                ctx: ctx[k].clone(),
                tc: c.track_cache_in([rtb::codec::vbr::CachedTrack::EMPTY; INLINE]),
            }));
        }
        ctx.clear();
    }
    // `DECODE_ISA=sse2|avx2`: B's contexts decode at that level
    // (default: the highest the CPU runs).
    if let Ok(name) = std::env::var("DECODE_ISA") {
        let isa = rtb::codec::vbr::Isa::from_name(&name)
            .unwrap_or_else(|| fail(format!("unknown DECODE_ISA {name}")));
        if !ctx.iter_mut().all(|c| c.set_isa(isa)) {
            fail(format!("this CPU does not run {name}"));
        }
    }
    if let Some(c) = ctx
        .first()
        .or(insts.first().and_then(|i| i.as_ref().map(|i| &i.ctx)))
    {
        eprintln!("{n} copies; B decodes at {}", c.isa().name());
    }
    let (ja, jb) = ([joint(&ma, joints)], [joint(&mb, joints)]);
    let ka = ma.split('=').next().unwrap_or("").to_string();
    let kb = mb.split('=').next().unwrap_or("").to_string();
    let mut oa = vec![rt_filing::math::Transform::IDENTITY; joints];
    let mut ob = vec![rtb::Transform::IDENTITY; joints];
    // `pose-out`: each copy writes its own output, as cold as its clip.
    let mut outs = if mb == "pose-out" {
        vec![vec![rtb::Transform::IDENTITY; joints]; n]
    } else {
        Vec::new()
    };
    let dur = va[0].1.duration_s();
    let chunk = 256.min(n);
    let (mut ta, mut tb) = (Vec::new(), Vec::new());
    for pass in 0..passes {
        let t = (pass % 100) as f32 / 99.0 * dur;
        for k in (0..n).step_by(chunk) {
            let e = (k + chunk).min(n);
            let s = Instant::now();
            for (p, c, sp) in &va[k..e] {
                let ok = match ka.as_str() {
                    "pose" => c.sample_static(t, sp, &mut oa),
                    "joint" => c.sample_joints(t, p.sample_defaults(c), &ja, &mut oa[..1]),
                    other => fail(format!("unknown A mode {other}")),
                };
                if !std::hint::black_box(ok) {
                    fail("A: a decode failed".into());
                }
                std::hint::black_box(&oa);
            }
            let da = s.elapsed().as_nanos() as f64 / (e - k) as f64;
            let s = Instant::now();
            for (v, inst) in vb[k..e]
                .iter()
                .zip(insts.get_mut(k..e).unwrap_or_default().iter_mut())
            {
                let Some(inst) = inst.as_deref_mut() else {
                    fail("B: no instance".into())
                };
                let (p, c, sp, st) = v;
                let ok = decode_b(
                    &kb,
                    &mut inst.ctx,
                    &mut inst.tc,
                    (p, c, sp, st),
                    (&vb[0].2, &jb),
                    None,
                    t,
                    &mut ob,
                );
                if !std::hint::black_box(ok) {
                    fail("B: a decode failed".into());
                }
                std::hint::black_box(&ob);
            }
            for (i, (((p, c, sp, st), x), tc)) in vb[k..e]
                .iter()
                .zip(ctx.get_mut(k..e).unwrap_or_default().iter_mut())
                .zip(tcs[k..e].iter_mut())
                .enumerate()
            {
                let o = if kb == "pose-out" {
                    outs.get_mut(k + i)
                } else {
                    None
                };
                let ok = decode_b(&kb, x, tc, (p, c, sp, st), (&vb[0].2, &jb), o, t, &mut ob);
                if !std::hint::black_box(ok) {
                    fail("B: a decode failed".into());
                }
                std::hint::black_box(&ob);
            }
            let db = s.elapsed().as_nanos() as f64 / (e - k) as f64;
            // The first two passes warm code and page tables.
            if pass >= 2 && e - k == chunk {
                ta.push(da);
                tb.push(db);
            }
        }
    }
    let r: Vec<f64> = ta.iter().zip(&tb).map(|(a, b)| b / a).collect();
    println!(
        "A {:.1} (p10 {:.1})  B {:.1} (p10 {:.1})  B/A median {:.3} p25 {:.3} p75 {:.3}",
        quantile(&ta, 0.5),
        quantile(&ta, 0.1),
        quantile(&tb, 0.5),
        quantile(&tb, 0.1),
        quantile(&r, 0.5),
        quantile(&r, 0.25),
        quantile(&r, 0.75)
    );
}
