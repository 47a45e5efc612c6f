//! `ludus-anim bench`: the codec's trade-off on real content, as a table
//! (and JSON): bytes, error, compression time and decode time per pose,
//! and the side-by-side with ACL's own figures on the same clips.
//!
//! Decode time: `decode_warm_ns` is the same clip decoded at many
//! pseudo-random times back to back (median of batches, everything warm);
//! the cold figures are ACL's method and a strict flush, for the whole
//! pose, single joints and a subset ([`decode`]), with ACL's own figures
//! beside them where the anchors have them ([`anchors`]).

pub mod anchors;
pub mod conditions;
pub mod decode;
mod table;

pub use table::render_decode;

use crate::events::Silent;
use crate::manifest::AssetJob;
use crate::pipeline::{cook_asset_job, CookOptions};
use crate::profile::Profile;
use crate::report::AssetStatus;
use crate::stage_cache::StageCache;
use ludus_anim_runtime::{Package, Player, Request, Transform};
use serde::Serialize;
use std::collections::HashMap;
use std::fmt::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

#[derive(Clone, Debug, Serialize)]
pub struct BenchRow {
    pub profile: String,
    pub asset: String,
    pub clip: String,
    pub joints: usize,
    pub samples: u32,
    pub sample_rate_hz: f32,
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    pub ratio: f32,
    pub max_error_m: f32,
    pub p99_error_m: f32,
    pub threshold_m: f32,
    pub compress_ms: f64,
    pub decode_warm_ns: f64,
    /// Whole pose after a strict flush (`decode.strict_pose_ns`).
    pub decode_cold_ns: f64,
    /// Whole pose by ACL's method (`decode.pose_ns`).
    pub decode_copies_ns: f64,
    /// Every cold figure ([`decode::DecodeFigures`]).
    pub decode: decode::DecodeFigures,
    /// ACL's figures for the same clip, where the anchors list it.
    pub acl_bytes: Option<u64>,
    pub acl_max_error_m: Option<f32>,
}

#[derive(Clone, Debug, Default, Serialize)]
pub struct BenchTotals {
    pub clips: usize,
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    pub max_error_m: f32,
    pub compress_ms: f64,
    pub acl_clips: usize,
    pub acl_bytes: u64,
    pub ours_on_acl_clips_bytes: u64,
    pub acl_max_error_m: f32,
}

#[derive(Clone, Debug, Serialize)]
pub struct BenchResult {
    pub rows: Vec<BenchRow>,
    pub totals: Vec<(String, BenchTotals)>,
    pub failures: Vec<String>,
}

/// ACL's measured figures per clip name (`acl_dev_clips.csv`).
pub fn load_acl_csv(path: &Path) -> HashMap<String, (u64, f32)> {
    let mut out = HashMap::new();
    let Ok(text) = std::fs::read_to_string(path) else {
        return out;
    };
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name);
    let (Some(ci), Some(bi), Some(ei)) = (col("clip"), col("acl_bytes"), col("acl_max_error_cm"))
    else {
        return out;
    };
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        if let (Some(c), Some(b), Some(e)) = (f.get(ci), f.get(bi), f.get(ei)) {
            if let (Ok(b), Ok(e)) = (b.parse::<u64>(), e.parse::<f32>()) {
                out.insert(c.to_string(), (b, e / 100.0));
            }
        }
    }
    out
}

/// Median warm decode time of a full pose in nanoseconds.
pub fn decode_warm_ns(package: &Package<'_>, clip: usize) -> f64 {
    let sk = package.skeleton();
    let Some(c) = package.clips().get(clip) else {
        return 0.0;
    };
    // Through a playing instance, bound once as a game binds a clip.
    let Ok(mut player) = Player::new(c, package.sample_defaults(c)) else {
        return 0.0;
    };
    let mut out = vec![Transform::IDENTITY; sk.joint_count()];
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    let mut next_time = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32 * c.duration_s()
    };
    let mut warm = Vec::new();
    for _ in 0..15 {
        let times: Vec<f32> = (0..200).map(|_| next_time()).collect();
        let start = Instant::now();
        for &t in &times {
            player.seek(t);
            std::hint::black_box(player.decode(Request::Pose, &mut out).is_ok());
            std::hint::black_box(&out);
        }
        warm.push(start.elapsed().as_nanos() as f64 / times.len() as f64);
    }
    warm.sort_by(f64::total_cmp);
    warm.get(warm.len() / 2).copied().unwrap_or(0.0)
}

/// What [`run`] measures against: ACL's size and error figures
/// (`acl_dev_clips.csv`), by clip name.
#[derive(Clone, Debug, Default)]
pub struct AclAnchors {
    pub sizes: HashMap<String, (u64, f32)>,
}

/// Cook each file with each profile (no files written) and measure.
/// `units_m` applies to every file (the ACL clips are centimetres).
pub fn run(
    files: &[PathBuf],
    profiles: &[Profile],
    units_m: Option<f32>,
    acl: &AclAnchors,
    settings: &decode::DecodeSettings,
) -> BenchResult {
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    let mut totals = Vec::new();
    for profile in profiles {
        let mut options = CookOptions::for_files(vec![], PathBuf::new(), &profile.name);
        options.units_override_m = units_m;
        options.threads = 1;
        // Every stage runs: the bench measures work, not the cache.
        let cache = StageCache::new(None);
        let mut t = BenchTotals::default();
        for f in files {
            let job = AssetJob {
                path: f.clone(),
                settings: Default::default(),
            };
            let (report, package) = match cook_asset_job(&job, &options, &cache, &Silent) {
                Ok(r) => (r.report, r.package),
                Err(e) => {
                    failures.push(format!("{} ({}): {e}", f.display(), profile.name));
                    continue;
                }
            };
            let asset = f
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let Some((_, bytes)) = package.filter(|_| report.status == AssetStatus::Ok) else {
                let why = report
                    .diagnostics
                    .iter()
                    .map(|d| format!("{}: {}", d.code, d.message))
                    .collect::<Vec<_>>()
                    .join("; ");
                failures.push(format!("{} ({}): {why}", f.display(), profile.name));
                continue;
            };
            let Ok(pkg) = Package::load(&bytes) else {
                failures.push(format!("{}: package does not load", f.display()));
                continue;
            };
            for (i, c) in report.clips.iter().enumerate() {
                let warm = decode_warm_ns(&pkg, i);
                let figures = decode::measure(&bytes, i, settings);
                // ACL's clip names: the SJSON file stem without ".acl".
                let key = asset
                    .trim_end_matches(".sjson")
                    .trim_end_matches(".acl")
                    .to_string();
                let a = acl.sizes.get(&key).copied();
                let row = BenchRow {
                    profile: profile.name.clone(),
                    asset: asset.clone(),
                    clip: c.name.clone(),
                    joints: c.joints,
                    samples: c.samples,
                    sample_rate_hz: c.sample_rate_hz,
                    raw_bytes: c.raw_bytes,
                    compressed_bytes: c.compressed_bytes,
                    ratio: c.ratio,
                    max_error_m: c.max_error_m,
                    p99_error_m: c.p99_error_m,
                    threshold_m: c.threshold_m,
                    compress_ms: c.compress_ms,
                    decode_warm_ns: warm,
                    decode_cold_ns: figures.strict_pose_ns,
                    decode_copies_ns: figures.pose_ns,
                    decode: figures,
                    acl_bytes: a.map(|x| x.0),
                    acl_max_error_m: a.map(|x| x.1),
                };
                t.clips += 1;
                t.raw_bytes += row.raw_bytes;
                t.compressed_bytes += row.compressed_bytes;
                t.max_error_m = t.max_error_m.max(row.max_error_m);
                t.compress_ms += row.compress_ms;
                if let Some((b, e)) = a {
                    t.acl_clips += 1;
                    t.acl_bytes += b;
                    t.ours_on_acl_clips_bytes += row.compressed_bytes;
                    t.acl_max_error_m = t.acl_max_error_m.max(e);
                }
                rows.push(row);
            }
        }
        totals.push((profile.name.clone(), t));
    }
    BenchResult {
        rows,
        totals,
        failures,
    }
}

/// Decode figures of already-cooked packages (`bench --packages`): no
/// cook, so the size and error columns are the package's own figures.
/// ACL's clip name is the package file name before `.acl-`.
pub fn run_packages(
    paths: &[PathBuf],
    acl: &AclAnchors,
    settings: &decode::DecodeSettings,
) -> BenchResult {
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for path in paths {
        let bytes = match std::fs::read(path) {
            Ok(b) => b,
            Err(e) => {
                failures.push(format!("{}: {e}", path.display()));
                continue;
            }
        };
        let pkg = match Package::load(&bytes) {
            Ok(p) => p,
            Err(e) => {
                failures.push(format!("{}: package does not load: {e}", path.display()));
                continue;
            }
        };
        let file = path
            .file_name()
            .map(|n| n.to_string_lossy().to_string())
            .unwrap_or_default();
        let key = file.split(".acl-").next().unwrap_or("").to_string();
        for (i, c) in pkg.clips().iter().enumerate() {
            let figures = decode::measure(&bytes, i, settings);
            let joints = pkg.skeleton().joint_count();
            rows.push(BenchRow {
                profile: c.cook_info().profile.to_string(),
                asset: format!("{key}.acl.sjson"),
                clip: c.name().to_string(),
                joints,
                samples: c.num_samples(),
                sample_rate_hz: c.sample_rate_hz(),
                raw_bytes: joints as u64 * u64::from(c.num_samples()) * 40,
                compressed_bytes: c.cook_info().blob_size as u64,
                ratio: 0.0,
                max_error_m: c.cook_info().max_error_m,
                p99_error_m: 0.0,
                threshold_m: 0.0,
                compress_ms: 0.0,
                decode_warm_ns: decode_warm_ns(&pkg, i),
                decode_cold_ns: figures.strict_pose_ns,
                decode_copies_ns: figures.pose_ns,
                decode: figures,
                acl_bytes: acl.sizes.get(&key).map(|x| x.0),
                acl_max_error_m: acl.sizes.get(&key).map(|x| x.1),
            });
        }
    }
    BenchResult {
        rows,
        totals: Vec::new(),
        failures,
    }
}

/// The table, one row per clip and profile, then totals.
pub fn render(r: &BenchResult) -> String {
    let mut s = String::new();
    let acl = r.rows.iter().any(|x| x.acl_bytes.is_some());
    let _ = write!(
        s,
        "{:<9} {:<44} {:>6} {:>7} {:>10} {:>9} {:>7} {:>10} {:>10} {:>9} {:>8} {:>8} {:>9}",
        "profile",
        "clip",
        "joints",
        "samples",
        "raw B",
        "ours B",
        "ratio",
        "max mm",
        "p99 mm",
        "comp ms",
        "warm ns",
        "strict ns",
        "copies ns"
    );
    if acl {
        let _ = write!(s, " {:>9} {:>8} {:>10}", "ACL B", "ours/ACL", "ACL mm");
    }
    s.push('\n');
    for x in &r.rows {
        let name =
            if x.clip == x.asset.trim_end_matches(".acl.sjson") || x.asset.ends_with(".sjson") {
                x.asset.trim_end_matches(".acl.sjson").to_string()
            } else {
                format!("{}:{}", x.asset, x.clip)
            };
        let name: String = name.chars().take(44).collect();
        let _ = write!(
            s,
            "{:<9} {:<44} {:>6} {:>7} {:>10} {:>9} {:>7.2} {:>10.5} {:>10.5} {:>9.2} {:>8.0} {:>8.0} {:>9.0}",
            x.profile,
            name,
            x.joints,
            x.samples,
            x.raw_bytes,
            x.compressed_bytes,
            x.ratio,
            x.max_error_m * 1000.0,
            x.p99_error_m * 1000.0,
            x.compress_ms,
            x.decode_warm_ns,
            x.decode_cold_ns,
            x.decode_copies_ns
        );
        if let (Some(b), Some(e)) = (x.acl_bytes, x.acl_max_error_m) {
            let _ = write!(
                s,
                " {:>9} {:>8.3} {:>10.5}",
                b,
                x.compressed_bytes as f64 / b as f64,
                e * 1000.0
            );
        }
        s.push('\n');
    }
    for (p, t) in &r.totals {
        let _ = writeln!(
            s,
            "total {p}: {} clips, {} -> {} bytes ({:.2}:1), max error {:.5} mm, compress {:.1} ms",
            t.clips,
            t.raw_bytes,
            t.compressed_bytes,
            if t.compressed_bytes > 0 {
                t.raw_bytes as f64 / t.compressed_bytes as f64
            } else {
                0.0
            },
            t.max_error_m * 1000.0,
            t.compress_ms
        );
        if t.acl_clips > 0 {
            let _ = writeln!(
                s,
                "  vs ACL on the same {} clips: ours {} B, ACL {} B, ours/ACL {:.3}; max error ours {:.5} mm, ACL {:.5} mm",
                t.acl_clips,
                t.ours_on_acl_clips_bytes,
                t.acl_bytes,
                t.ours_on_acl_clips_bytes as f64 / t.acl_bytes.max(1) as f64,
                t.max_error_m * 1000.0,
                t.acl_max_error_m * 1000.0
            );
        }
    }
    for f in &r.failures {
        let _ = writeln!(s, "FAILED {f}");
    }
    s
}
