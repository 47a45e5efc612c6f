//! The benchmark (ignored in the normal run; `tools/bench-server.sh`
//! runs it): on a generated 1,000-clip project, edit-to-published latency
//! of a one-clip edit, a 12-clip FBX edit and a profile change (median and
//! p99 over 20 edits each, next to the cook time the server reports for
//! that cook), then the daemon's idle CPU and RSS.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// BVH assets (one clip each), Knight FBX copies (12 clips each): 964 + 36
/// = 1,000 clips. The first `ON_PROFILE` BVH assets use `bench.toml`.
const BVHS: usize = 964;
const FBXS: usize = 3;
const ON_PROFILE: usize = 100;
const EDITS: u32 = 20;

/// Generate the project in `dir` from the shared fixtures.
fn generate(fixtures: &Path, dir: &Path) {
    let bvh = std::fs::read(fixtures.join("bvh/makehuman_zombieWalk1.bvh")).unwrap();
    let fbx = std::fs::read(fixtures.join("fbx/quaternius_KnightCharacter.fbx")).unwrap();
    for sub in ["a", "b", "fbx"] {
        std::fs::create_dir_all(dir.join(sub)).unwrap();
    }
    for i in 0..BVHS {
        let sub = if i < ON_PROFILE { "b" } else { "a" };
        // Distinct content per asset (no whole-asset cache sharing).
        let bytes = edited_bvh(&bvh, 1000 + i as u32);
        std::fs::write(dir.join(format!("{sub}/clip{i:04}.bvh")), bytes).unwrap();
    }
    for i in 0..FBXS {
        std::fs::write(
            dir.join(format!("fbx/knight{i}.fbx")),
            fbx_variant(&fbx, i as u32),
        )
        .unwrap();
    }
    let standard = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/standard.toml"),
    )
    .unwrap();
    std::fs::write(
        dir.join("bench.toml"),
        standard.replace("name = \"standard\"", "name = \"bench\""),
    )
    .unwrap();
    std::fs::write(
        dir.join("ludus-anim.toml"),
        "[project]\noutput = \"out\"\ncache = \"cache\"\n\n[[asset]]\nsources = [\"a/*.bvh\", \"fbx/*.fbx\"]\n\n[[asset]]\nsources = [\"b/*.bvh\"]\nprofile = \"bench.toml\"\n",
    )
    .unwrap();
}

/// The FBX with letters of its creator string changed: new bytes, the
/// same scene (the import, and so every stage, runs again).
fn fbx_variant(fbx: &[u8], n: u32) -> Vec<u8> {
    let needle = b"Blender (stable FBX IO)";
    let at = fbx.windows(needle.len()).position(|w| w == needle).unwrap();
    let mut v = fbx.to_vec();
    // Four letters, base 26: distinct for every n below 456,976 (the
    // per-run salt times the edits stays below 20,000: no wrap-around).
    v[at] = b'A' + (n % 26) as u8;
    for k in 1..4 {
        v[at + k] = b'a' + (n / 26u32.pow(k as u32) % 26) as u8;
    }
    v
}

/// Differs between runs, so that a kept project's (`LUDUS_BENCH_DIR`)
/// edits are new bytes and cook (cache misses), not the previous run's
/// cache hits.
fn run_salt() -> u32 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    (secs % 997) as u32
}

fn percentile(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    v[((v.len() - 1) as f64 * p).round() as usize]
}

/// Per edit: the time from the write to the generation_published event's
/// arrival, the cooker's own cook time, and the event's `latency_ms`
/// breakdown.
#[derive(Default)]
struct Samples {
    latency: Vec<f64>,
    cook: Vec<f64>,
    phases: Vec<serde_json::Value>,
}

/// Write `edit(i)`'s bytes to its file `EDITS` times; per edit, the time
/// from the start of the write to the arrival of the generation_published
/// event naming an asset starting with `asset` (the bytes are made before
/// the clock starts; the arrival is stamped by the stream's reader, not
/// by the 50 ms poll that waits for it), and the cook's own time.
fn measure(s: &Server, asset: &str, mut edit: impl FnMut(u32) -> (PathBuf, Vec<u8>)) -> Samples {
    let ev = Events::open(s);
    let mut out = Samples::default();
    for i in 0..EDITS {
        s.wait_idle(120);
        std::thread::sleep(Duration::from_millis(300));
        let (file, bytes) = edit(i);
        let from = ev.len();
        let t = Instant::now();
        std::fs::write(file, bytes).unwrap();
        let (published, at) = wait_for(120, "the edit's generation", || {
            ev.first_since(from, |e| {
                e["event"] == "generation_published"
                    && e["changed"].as_array().is_some_and(|c| {
                        c.iter()
                            .any(|x| x.as_str().is_some_and(|x| x.starts_with(asset)))
                    })
            })
        });
        out.latency.push((at - t).as_secs_f64() * 1000.0);
        out.phases.push(published["latency_ms"].clone());
        let summary = ev
            .since(from)
            .into_iter()
            .rfind(|e| e["event"] == "summary")
            .unwrap();
        out.cook.push(summary["cook_ms"].as_f64().unwrap());
    }
    out
}

fn row(what: &str, m: &Samples) {
    let (lat, cook) = (&m.latency, &m.cook);
    let over: Vec<f64> = lat.iter().zip(cook).map(|(l, c)| l - c).collect();
    println!(
        "| {what} | {} | {:.0} | {:.0} | {:.0} | {:.0} | {:.0} |",
        lat.len(),
        percentile(lat, 0.5),
        percentile(lat, 0.99),
        percentile(cook, 0.5),
        percentile(&over, 0.5),
        percentile(&over, 0.99)
    );
}

/// Median of each `latency_ms` phase the server reported.
fn phases(what: &str, m: &Samples) {
    let names = ["quiet", "prepare", "cook", "publish", "total"];
    let cells: Vec<String> = names
        .iter()
        .map(|n| {
            let v: Vec<f64> = m.phases.iter().filter_map(|p| p[*n].as_f64()).collect();
            match v.is_empty() {
                true => "-".to_string(),
                false => format!("{:.0} / {:.0}", percentile(&v, 0.5), percentile(&v, 0.99)),
            }
        })
        .collect();
    println!("| {what} | {} |", cells.join(" | "));
}

/// utime + stime of `pid`, in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after = &stat[stat.rfind(')').unwrap() + 2..];
    let f: Vec<&str> = after.split(' ').collect();
    f[11].parse::<u64>().unwrap() + f[12].parse::<u64>().unwrap()
}

fn rss_mb(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let kb: f64 = status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|v| v.parse().ok())
        .unwrap();
    kb / 1024.0
}

#[test]
#[ignore = "minutes: run by tools/bench-server.sh"]
fn edit_to_published_on_a_1000_clip_project() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    // LUDUS_BENCH_DIR keeps the project (and its cache) between runs.
    let tmp = tempfile::tempdir().unwrap();
    let keep = std::env::var_os("LUDUS_BENCH_DIR").map(std::path::PathBuf::from);
    let d = keep.as_deref().unwrap_or(tmp.path());
    generate(&fixtures, d);
    let t = Instant::now();
    let s = Server::start(d, &[]);
    let st = s.wait_idle(1800);
    let clips = s.json("/report")["totals"]["clips"].as_u64().unwrap();
    println!(
        "cold cook: {clips} clips, {} assets, {:.1} s",
        st["counts"]["assets"],
        t.elapsed().as_secs_f64()
    );
    drop(s);
    let t = Instant::now();
    let s = Server::start(d, &[]);
    s.wait_idle(600);
    println!(
        "restart (full scan, cache hits): {:.2} s",
        t.elapsed().as_secs_f64()
    );

    let salt = run_salt();
    println!("edit salt {salt}");
    let bvh_name = "a/clip0500.bvh";
    let bvh = std::fs::read(d.join(bvh_name)).unwrap();
    let one = measure(&s, bvh_name, |i| {
        (d.join(bvh_name), edited_bvh(&bvh, 5000 + salt * EDITS + i))
    });
    let fbx_name = "fbx/knight0.fbx";
    let fbx = std::fs::read(d.join(fbx_name)).unwrap();
    let twelve = measure(&s, fbx_name, |i| {
        (
            d.join(fbx_name),
            fbx_variant(&fbx, 3 * FBXS as u32 + salt * EDITS + i),
        )
    });
    let profile = std::fs::read_to_string(d.join("bench.toml")).unwrap();
    // Thresholds far enough apart that the encodes (and packages) differ.
    let prof = measure(&s, "b/", |i| {
        let t = 0.0002 + 0.00005 * i as f64 + 1e-9 * salt as f64;
        let v = format!("error_threshold_m = {t:.9}");
        let text = profile.replacen("error_threshold_m = 0.0001", &v, 1);
        (d.join("bench.toml"), text.into_bytes())
    });
    println!("| edit | n | edit-to-published p50 ms | p99 ms | cook p50 ms | overhead p50 ms | overhead p99 ms |");
    println!("|---|---|---|---|---|---|---|");
    row("one-clip BVH", &one);
    row("12-clip FBX", &twelve);
    row(&format!("profile ({ON_PROFILE} assets)"), &prof);
    println!("server-side p50 / p99 (ms), from generation_published's latency_ms:");
    println!("| edit | quiet | prepare | cook | publish | total |");
    println!("|---|---|---|---|---|---|");
    phases("one-clip BVH", &one);
    phases("12-clip FBX", &twelve);
    phases("profile", &prof);

    s.wait_idle(120);
    std::thread::sleep(Duration::from_secs(2));
    let pid = s.child.id();
    let ticks = 100.0; // USER_HZ on Linux
    let (c0, t0) = (cpu_ticks(pid), Instant::now());
    std::thread::sleep(Duration::from_secs(30));
    let cpu = (cpu_ticks(pid) - c0) as f64 / ticks / t0.elapsed().as_secs_f64() * 100.0;
    println!(
        "idle over 30 s (one rescan in it): CPU {cpu:.2}% of one core, RSS {:.0} MiB",
        rss_mb(pid)
    );
}
