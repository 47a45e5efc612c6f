//! Decode-time harness for ludus-anim packages, measuring our runtime the way ACL's
//! `acl_decompressor` (tools/acl_decompressor/sources/benchmark.cpp, ACL 0f855f01) measures ACL:
//!
//! - 220 copies of the package, each at the start of its own 16 MiB slot in one 2 MiB-aligned
//!   allocation; per copy a clip view and a `Player` bound to it (ACL: one decompression context
//!   per copy);
//! - sample times: 100 points evenly from 0 to the clip's duration; forward playback;
//! - iteration i decodes copy (i mod 220) at the current sample time, timed alone with two clock
//!   reads (ACL: high_resolution_clock around seek + decompress); after every 220 iterations the
//!   sample time advances and the caches are flushed by a 32 MiB memset (ACL's `memset_impl` loop,
//!   which GCC -O3 compiles into a call to glibc memset: here `write_bytes`, also glibc memset);
//!   one flush before the first iteration;
//! - a run is 10,000 iterations and reports the mean ns per iteration; 3 runs; the figure is the
//!   median of the 3 (google benchmark's `median` aggregate, what ACL reports).
//!
//! Functions (as ACL's DecompressionFunction): `pose` = the one-shot whole pose (`Clip::sample`,
//! no player); `cached` = a playing instance's whole pose (the copy's `Player`: seek, then
//! `Request::Pose`); `bone` = the whole pose one joint at a time through the copy's player
//! (`Request::Joints` of one joint, ACL's DecompressBone); `one:J` = a single joint J through the
//! copy's player (ACL: one decompress_track call); `mask:NAME` = a cooked mask's sample set
//! (`Package::bindings().joint_sets`, the copy's own words) through the copy's player
//! (`Request::Mask`); `lod:L` = LOD level L's retained joints the same way.
//! `--flush-mib N --flush-rmw` change the flush (N MiB, read-modify-write one byte per 64 B line
//! instead of memset) for the sensitivity check.
//!
//! usage: decode-harness PACKAGE [--clip 0] [--funcs pose,bone,one:NAME,mask:NAME,lod:L] [--flush-mib 32] [--flush-rmw]
//! prints one JSON line per function.
use ludus_anim_runtime::{Package, Player, Request, Transform};
use std::time::Instant;

const NUM_COPIES: usize = 220;
const SLOT: usize = 16 << 20;
const ALIGN: usize = 2 << 20;
const ITERS: usize = 10_000;
const REPS: usize = 3;
const SAMPLES: usize = 100;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let path = &args[1];
    let mut clip_index = 0usize;
    let mut funcs = "pose,bone".to_string();
    let mut flush_mib = 32usize;
    let mut rmw = false;
    let mut i = 2;
    while i < args.len() {
        match args[i].as_str() {
            "--clip" => { clip_index = args[i + 1].parse().unwrap(); i += 1; }
            "--funcs" => { funcs = args[i + 1].clone(); i += 1; }
            "--flush-mib" => { flush_mib = args[i + 1].parse().unwrap(); i += 1; }
            "--flush-rmw" => rmw = true,
            a => panic!("unknown argument {a}"),
        }
        i += 1;
    }
    let bytes = std::fs::read(path).expect("read package");
    let first = Package::load(&bytes).expect("package loads");
    let joints = first.skeleton().joint_count();
    let duration = first.clips()[clip_index].duration_s();
    let names: Vec<String> = first.skeleton().names().to_vec();
    assert!(bytes.len() <= SLOT);

    // One big allocation: NUM_COPIES slots of 16 MiB, 2 MiB aligned (mmap'd, untouched pages stay unbacked).
    let total = NUM_COPIES * SLOT + ALIGN;
    let layout = std::alloc::Layout::from_size_align(total, ALIGN).unwrap();
    let base = unsafe { std::alloc::alloc(layout) };
    assert!(!base.is_null());
    let slices: Vec<&[u8]> = (0..NUM_COPIES)
        .map(|c| unsafe {
            let p = base.add(c * SLOT);
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            std::slice::from_raw_parts(p, bytes.len())
        })
        .collect();
    let packages: Vec<Package<'_>> = slices
        .iter()
        .map(|s| Package::load(s).expect("copy loads"))
        .collect();
    // Per copy: clip view and defaults (for the one-shot `pose`).
    let views: Vec<ludus_anim_runtime::Clip<'_>> =
        packages.iter().map(|p| p.clips()[clip_index].clone()).collect();
    let defaults: Vec<&[Transform]> = packages
        .iter()
        .map(|p| p.sample_defaults(&p.clips()[clip_index]))
        .collect();

    // Per copy: a player (`cached`, `bone`, `one`), made in copy order into one array, as ACL keeps
    // one decompression context per copy in one array.
    let mut players: Vec<Player<'_, '_>> = views
        .iter()
        .zip(&defaults)
        .map(|(c, d)| Player::new(c, d).expect("player binds"))
        .collect();
    // ACL's flush buffer: 16 MiB padding either side of the flushed region.
    let pad = 16usize << 20;
    let mut flush = vec![0u8; pad + (flush_mib << 20) + pad];
    let mut flush_value = 1u8;
    let mut do_flush = |v: u8| {
        let region = &mut flush[pad..pad + (flush_mib << 20)];
        if rmw {
            for k in (0..region.len()).step_by(64) {
                region[k] = region[k].wrapping_add(v);
            }
        } else {
            unsafe { std::ptr::write_bytes(region.as_mut_ptr(), v, region.len()) };
        }
        std::hint::black_box(&flush);
    };
    let times: Vec<f32> = (0..SAMPLES)
        .map(|s| (s as f32 / (SAMPLES - 1) as f32).clamp(0.0, 1.0) * duration)
        .collect();
    let mut out = vec![Transform::IDENTITY; joints];

    for f in funcs.split(',') {
        let (kind, joint) = if let Some(n) = f.strip_prefix("one:") {
            let j = names.iter().position(|x| x == n).unwrap_or_else(|| n.parse().expect("joint name or index"));
            ("one", j)
        } else if let Some(n) = f.strip_prefix("mask:") {
            let sets = &first.bindings().joint_sets;
            ("mask", sets.masks.iter().position(|m| m.name == n).expect("a mask of the package"))
        } else if let Some(l) = f.strip_prefix("lod:") {
            let l: usize = l.parse().expect("LOD level");
            assert!(l < first.bindings().joint_sets.lods.len(), "no LOD level {l}");
            ("lod", l)
        } else {
            (f, 0)
        };
        // Per copy: the words of the request, read from the copy's own package.
        let words: Vec<&[u64]> = packages
            .iter()
            .map(|p| match kind {
                "mask" => p.bindings().joint_sets.masks[joint].sample.as_slice(),
                "lod" => p.bindings().joint_sets.lods[joint].retained.as_slice(),
                _ => &[],
            })
            .collect();
        let decoded = match kind {
            "mask" | "lod" => words[0].iter().map(|w| w.count_ones() as usize).sum(),
            "one" => 1,
            _ => joints,
        };
        let one = [joint as u32];
        let all: Vec<[u32; 1]> = (0..joints as u32).map(|j| [j]).collect();
        let mut runs = Vec::new();
        for _rep in 0..REPS {
            // Fresh state per benchmark run, as google benchmark re-enters the function.
            let (mut ctx, mut sample) = (0usize, 0usize);
            do_flush(flush_value);
            flush_value = flush_value.wrapping_add(1);
            let mut sum = 0f64;
            for _ in 0..ITERS {
                let start = Instant::now();
                let t = times[sample];
                let c = &views[ctx];
                match kind {
                    "pose" => { let _ = c.sample(t, defaults[ctx], &mut out); }
                    "cached" => {
                        let p = &mut players[ctx];
                        p.seek(t);
                        let _ = p.decode(Request::Pose, &mut out);
                    }
                    "bone" => {
                        let p = &mut players[ctx];
                        p.seek(t);
                        for j in 0..joints {
                            let _ = p.decode(Request::Joints(&all[j]), &mut out[j..j + 1]);
                        }
                    }
                    "one" => {
                        let p = &mut players[ctx];
                        p.seek(t);
                        let _ = p.decode(Request::Joints(&one), &mut out[..1]);
                    }
                    "mask" | "lod" => {
                        let p = &mut players[ctx];
                        p.seek(t);
                        let _ = p.decode(Request::Mask(words[ctx]), &mut out);
                    }
                    _ => panic!("unknown function {kind}"),
                }
                std::hint::black_box(&out);
                sum += start.elapsed().as_nanos() as f64;
                ctx += 1;
                if ctx >= NUM_COPIES {
                    ctx = 0;
                    sample = (sample + 1) % SAMPLES;
                    do_flush(flush_value);
                    flush_value = flush_value.wrapping_add(1);
                }
            }
            runs.push(sum / ITERS as f64);
        }
        let mut s = runs.clone();
        s.sort_by(f64::total_cmp);
        println!(
            "{{\"func\":\"{}\",\"request\":\"{f}\",\"decoded_joints\":{decoded},\"joint\":{},\"joint_name\":\"{}\",\"joints\":{},\"median_ns\":{:.1},\"runs_ns\":[{}],\"flush_mib\":{},\"flush_rmw\":{},\"blob_bytes\":{}}}",
            kind, if kind == "one" { joint as i64 } else { -1 }, if kind == "one" { names[joint].as_str() } else { "" },
            joints, s[REPS / 2], runs.iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join(","),
            flush_mib, rmw, first.clips()[clip_index].cook_info().blob_size
        );
    }
}
