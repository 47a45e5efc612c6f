//! Compare the VBR codec with real ACL on the anchor clips.
//!
//! `cargo run --release -p ludus-anim-compress --example acl_clips [-- DIR]`
//! (DIR defaults to /work/shared/anchors; it holds `acl-clips/*.acl.sjson`
//! and `acl_dev_clips.csv`). Same conditions as the ACL run: 0.01 cm
//! threshold, the file's shell distance (3 cm), the file's sample grid.
//! Errors are measured by decoding every sample and every midpoint through
//! the runtime's decoder (`Clip::from_blob`).

use ludus_anim_compress::{encode_vbr, measure_errors, EncodeSettings};
use ludus_anim_format::codec::CodecId;
use ludus_anim_format::math::{Quat, Transform, Vec3};
use ludus_anim_format::timing::LoopMode;
use ludus_anim_importers::{sjson, ImportOptions, Importer};
use ludus_anim_model::{ResampledClip, SourceAsset};
use ludus_anim_runtime::Clip;
use ludus_anim_runtime::{JointId, Skeleton};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Instant;

const THRESHOLD_M: f32 = 0.0001;

/// Depth-first order of the source joints (children in listed order).
fn depth_first(asset: &SourceAsset) -> Vec<usize> {
    let n = asset.skeleton.joints.len();
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<usize> = (0..n)
        .filter(|&j| asset.skeleton.joints[j].parent.is_none())
        .rev()
        .collect();
    while let Some(j) = stack.pop() {
        order.push(j);
        let kids: Vec<usize> = (0..n)
            .filter(|&c| asset.skeleton.joints[c].parent == Some(j))
            .collect();
        stack.extend(kids.into_iter().rev());
    }
    order
}

struct Loaded {
    skeleton: Skeleton,
    clip: ResampledClip,
    shells: Vec<f32>,
    source_joints: usize,
}

fn load(path: &Path) -> Result<Loaded, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let asset = sjson::SJSON
        .import(
            path,
            &bytes,
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .map_err(|e| e.to_string())?;
    let unit = asset.unit_scale_m;
    let order = depth_first(&asset);
    let src = &asset.skeleton.joints;
    // Several roots: add a synthetic identity root (index 0) above them.
    let synthetic = src.iter().filter(|j| j.parent.is_none()).count() > 1;
    let extra = usize::from(synthetic);
    let mut new_index = vec![usize::MAX; order.len()];
    for (i, &o) in order.iter().enumerate() {
        new_index[o] = i + extra;
    }
    let scaled = |t: Transform| Transform::new(t.translation * unit, t.rotation, t.scale);
    let mut parents: Vec<u32> = Vec::new();
    let mut ids: Vec<JointId> = Vec::new();
    let mut rest: Vec<Transform> = Vec::new();
    let mut names: Vec<String> = Vec::new();
    if synthetic {
        parents.push(u32::MAX);
        ids.push(JointId::from_path("__synthetic_root"));
        rest.push(Transform::IDENTITY);
        names.push("__synthetic_root".into());
    }
    for &o in &order {
        parents.push(
            src[o]
                .parent
                .map_or(if synthetic { 0 } else { u32::MAX }, |p| {
                    new_index[p] as u32
                }),
        );
        ids.push(JointId::from_path(
            &asset.skeleton.path(o).unwrap_or_default(),
        ));
        rest.push(scaled(src[o].rest));
        names.push(src[o].name.clone());
    }
    let skeleton = Skeleton::new(parents, ids, rest.clone(), names).map_err(|e| e.to_string())?;
    let mut shells: Vec<f32> = vec![0.03; extra];
    match &asset.joint_shell_distance {
        Some(s) => shells.extend(order.iter().map(|&o| s[o] * unit)),
        None => shells.extend(order.iter().map(|_| 0.03)),
    }
    let clip = asset.clips.first().ok_or("no clip")?;
    let rate = clip.frame_rate_hz.ok_or("no rate")?;
    let n = ResampledClip::samples_for(clip.duration_s, rate);
    let j = order.len() + extra;
    let mut samples = Vec::with_capacity(n as usize * j);
    for i in 0..n as usize {
        let t = i as f32 / rate;
        if synthetic {
            samples.push(Transform::IDENTITY);
        }
        for (k, &o) in order.iter().enumerate() {
            let mut x = rest[k + extra];
            if let Some(tr) = clip.tracks.iter().find(|tr| tr.joint == o) {
                // Keyed at every sample: take the key itself when it exists.
                if let Some(c) = &tr.rotation {
                    let q: Quat = if c.keys.len() == n as usize {
                        c.keys[i].value
                    } else {
                        c.evaluate(t).unwrap_or(x.rotation)
                    };
                    x.rotation = q;
                }
                if let Some(c) = &tr.translation {
                    let v: Vec3 = if c.keys.len() == n as usize {
                        c.keys[i].value
                    } else {
                        c.evaluate(t).unwrap_or(x.translation)
                    };
                    x.translation = v * unit;
                }
                if let Some(c) = &tr.scale {
                    x.scale = if c.keys.len() == n as usize {
                        c.keys[i].value
                    } else {
                        c.evaluate(t).unwrap_or(x.scale)
                    };
                }
            }
            samples.push(x);
        }
    }
    Ok(Loaded {
        skeleton,
        clip: ResampledClip {
            name: clip.name.clone(),
            sample_rate_hz: rate,
            num_samples: n,
            duration_s: clip.duration_s,
            loop_mode: LoopMode::Once,
            joint_count: j,
            samples,
            curves: Vec::new(),
        },
        shells,
        source_joints: order.len(),
    })
}

fn acl_bytes(csv: &str) -> BTreeMap<String, u64> {
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (Some(ci), Some(bi)) = (col("clip"), col("acl_bytes")) else {
        return BTreeMap::new();
    };
    lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            Some((f.get(ci)?.to_string(), f.get(bi)?.parse().ok()?))
        })
        .collect()
}

/// Track and segment overhead of a v2 blob: animated tracks, segments,
/// clip range bytes, track-segments, ranged / unranged / raw counts and
/// the rate id histogram.
fn blob_stats(name: &str, b: &[u8]) {
    let rd = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
    let (jj, a, s) = (rd(0), rd(8), rd(12));
    let (mut constants, mut clip_ranges) = (0, 0);
    for &t in &b[16..16 + jj] {
        for k in 0..3 {
            match (t >> (2 * k)) & 3 {
                1 => constants += 12,
                2 => clip_ranges += if k == 0 { 12 } else { 24 },
                3 => constants += 16,
                _ => {}
            }
        }
    }
    let table = 16 + jj + constants + clip_ranges;
    let data = table + 8 * s;
    let mut hist = [0usize; 19];
    let (mut ranged, mut unranged) = (0, 0);
    for k in 0..s {
        let off = rd(table + 8 * k);
        for &r in &b[data + off..data + off + a] {
            hist[(r & 0x1f) as usize] += 1;
            if r & 0x20 != 0 {
                unranged += 1;
            } else if (r & 0x1f) < 18 {
                ranged += 1;
            }
        }
    }
    eprintln!(
        "STATS {name} A={a} S={s} AS={} constants={constants} clip_ranges={clip_ranges} \
         ranged={ranged} unranged={unranged} hist={hist:?}",
        a * s
    );
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

fn main() {
    let dir = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "/work/shared/anchors".into()),
    );
    let acl =
        acl_bytes(&std::fs::read_to_string(dir.join("acl_dev_clips.csv")).unwrap_or_default());
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir.join("acl-clips"))
        .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.to_string_lossy().ends_with(".acl.sjson"));
    files.sort();
    // ONLY=substring: just the matching clips.
    if let Ok(only) = std::env::var("ONLY") {
        files.retain(|p| p.to_string_lossy().contains(&only));
    }
    // DECODE_LOOP=n: n extra warm decodes per clip (for profiling).
    let decode_loop: usize = std::env::var("DECODE_LOOP")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    println!(
        "{:<58} {:>4} {:>5} {:>9} {:>8} {:>8} {:>6} {:>9} {:>8} {:>8} {:>8}",
        "clip",
        "jnt",
        "smp",
        "raw B",
        "ours B",
        "ACL B",
        "ratio",
        "err cm",
        "comp ms",
        "warm ns",
        "cold ns"
    );
    let (mut t_raw, mut t_ours, mut t_acl, mut t_ms, mut worst) =
        (0u64, 0u64, 0u64, 0.0f64, 0.0f32);
    let mut worst_ratio = 0.0f32;
    let mut evict = vec![0u8; 16 << 20];
    // FAST=1: one encode per clip and few decode timings (for iterating).
    let fast = std::env::var("FAST").is_ok();
    for path in &files {
        let name = path
            .file_name()
            .map(|f| {
                f.to_string_lossy()
                    .trim_end_matches(".acl.sjson")
                    .to_string()
            })
            .unwrap_or_default();
        let l = match load(path) {
            Ok(l) => l,
            Err(e) => {
                println!("{name}: load failed: {e}");
                continue;
            }
        };
        let j = l.skeleton.joint_count();
        let n = l.clip.num_samples;
        let settings = EncodeSettings {
            joint_threshold_m: vec![THRESHOLD_M; j],
            joint_shell_m: l.shells.clone(),
            max_segment_samples: std::env::var("SEG")
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(16),
        };
        // Compress time: median of 3 runs (one thread).
        let mut times = Vec::new();
        let mut enc = None;
        for _ in 0..if fast { 1 } else { 3 } {
            let t = Instant::now();
            let e = encode_vbr(&l.skeleton, &l.clip, &settings);
            times.push(t.elapsed().as_secs_f64() * 1e3);
            enc = Some(e);
        }
        let enc = match enc {
            Some(Ok(e)) => e,
            other => {
                println!("{name}: encode failed: {:?}", other.map(|r| r.err()));
                continue;
            }
        };
        let ms = median(&mut times);
        let report = measure_errors(
            &enc.blob,
            &l.skeleton,
            &l.clip,
            &settings.joint_threshold_m,
            &settings.joint_shell_m,
        )
        .expect("decodes");
        let timing = (
            l.clip.duration_s,
            l.clip.sample_rate_hz,
            n,
            l.clip.loop_mode,
        );
        let vbr = Clip::from_blob(CodecId::Vbr, &enc.blob, j, timing).expect("parses");
        let rate = l.clip.sample_rate_hz;
        // STATS=1: per-clip overhead breakdown of the blob (layout v2) on stderr.
        if std::env::var("STATS").is_ok() {
            blob_stats(&name, &enc.blob);
        }
        // Decode timing at random times: warm (batches of 64) and cold
        // (caches flushed by streaming 16 MB before each decode).
        let mut out = vec![Transform::IDENTITY; j];
        let mut seed = 0x1234_5678u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let rest = l.skeleton.rest_pose();
        let mut warm = Vec::new();
        for _ in 0..if fast { 10 } else { 300 } {
            let pos: Vec<f32> = (0..64)
                .map(|_| {
                    let i0 = (next() % n as u64) as u32;
                    (i0 as f32 + (next() % 1000) as f32 / 1000.0) / rate
                })
                .collect();
            let t = Instant::now();
            for p in &pos {
                std::hint::black_box(vbr.sample(*p, rest, &mut out).is_ok());
                std::hint::black_box(&out);
            }
            warm.push(t.elapsed().as_secs_f64() * 1e9 / 64.0);
        }
        for k in 0..decode_loop {
            let i0 = (k as u32 * 7919) % n;
            let p = (i0 as f32 + 0.3) / rate;
            std::hint::black_box(vbr.sample(p, rest, &mut out).is_ok());
            std::hint::black_box(&out);
        }
        let mut cold = Vec::new();
        for k in 0..if fast { 5 } else { 60 } {
            for (i, b) in evict.iter_mut().enumerate().step_by(64) {
                *b = b.wrapping_add((i + k) as u8);
            }
            std::hint::black_box(&evict);
            let i0 = (next() % n as u64) as u32;
            let p = (i0 as f32 + 0.5) / rate;
            let t = Instant::now();
            std::hint::black_box(vbr.sample(p, rest, &mut out).is_ok());
            std::hint::black_box(&out);
            cold.push(t.elapsed().as_secs_f64() * 1e9);
        }
        let raw = l.source_joints as u64 * n as u64 * 40;
        let ours = enc.blob.len() as u64;
        let theirs = acl.get(&name).copied().unwrap_or(0);
        t_raw += raw;
        t_ours += ours;
        t_acl += theirs;
        t_ms += ms;
        worst = worst.max(report.max_error_m);
        worst_ratio = worst_ratio.max(report.worst_ratio);
        println!(
            "{:<58} {:>4} {:>5} {:>9} {:>8} {:>8} {:>6.3} {:>9.6} {:>8.2} {:>8.0} {:>8.0}",
            name,
            j,
            n,
            raw,
            ours,
            theirs,
            ours as f64 / theirs.max(1) as f64,
            report.max_error_m * 100.0,
            ms,
            median(&mut warm),
            median(&mut cold)
        );
    }
    println!(
        "{:<58} {:>4} {:>5} {:>9} {:>8} {:>8} {:>6.3} {:>9.6} {:>8.2}",
        format!("TOTAL ({} clips)", files.len()),
        "",
        "",
        t_raw,
        t_ours,
        t_acl,
        t_ours as f64 / t_acl.max(1) as f64,
        worst * 100.0,
        t_ms
    );
    println!("worst error / threshold: {worst_ratio:.4}");
}
