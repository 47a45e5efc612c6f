//! The staged, cached, parallel pipeline end to end: which stages re-run
//! for which change, determinism across thread counts and repeats,
//! concurrent cooks sharing a cache, corruption healing, shards, and cooks
//! killed at random points.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// A project in `dir`: the bundled biped under two names, a custom profile
/// (a copy of `standard`) and a manifest with per-clip settings.
fn project(dir: &Path, manifest_extra: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let biped = std::fs::read(repo().join("fixtures/biped.glb")).unwrap();
    std::fs::write(dir.join("src/hero.glb"), &biped).unwrap();
    std::fs::write(dir.join("src/npc.glb"), &biped).unwrap();
    let standard = std::fs::read_to_string(repo().join("profiles/standard.toml")).unwrap();
    std::fs::write(
        dir.join("custom.toml"),
        standard.replace("name = \"standard\"", "name = \"custom\""),
    )
    .unwrap();
    std::fs::write(
        dir.join("ludus-anim.toml"),
        format!(
            r#"[project]
output = "out"
cache = "cache"
profile = "custom.toml"

[[asset]]
sources = ["src/*.glb"]
{manifest_extra}
"#
        ),
    )
    .unwrap();
}

fn stages(r: &Value) -> Vec<(String, u64, u64)> {
    r["stages"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(k, v)| {
            (
                k.clone(),
                v["hits"].as_u64().unwrap(),
                v["misses"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn misses(r: &Value, stage: &str) -> u64 {
    r["stages"][stage]["misses"].as_u64().unwrap()
}

/// A cook that always runs (a `--json` event stream), never the
/// up-to-date shortcut: its report counts this cook's cache hits.
fn cook_json(dir: &Path) -> Value {
    let o = ludus_anim(&["cook", "--json"], dir);
    assert!(o.status.success(), "{}", text(&o));
    report(&dir.join("out"))
}

fn cook_project(dir: &Path) -> Value {
    let o = ludus_anim(&["cook"], dir);
    assert!(o.status.success(), "{}", text(&o));
    report(&dir.join("out"))
}

#[test]
fn each_setting_reruns_exactly_the_stages_that_read_it() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    let cold = cook_project(d);
    for s in [
        "import",
        "normalize",
        "resample",
        "prepare",
        "encode",
        "verify",
        "package",
    ] {
        assert!(
            misses(&cold, s) > 0,
            "cold cook runs {s}: {:?}",
            stages(&cold)
        );
    }
    let first = packages(&d.join("out"));

    // Nothing changed, or only a file's mtime: nothing re-runs.
    let f = std::fs::File::options()
        .append(true)
        .open(d.join("src/hero.glb"))
        .unwrap();
    f.set_modified(std::time::SystemTime::now() + Duration::from_secs(5))
        .unwrap();
    drop(f);
    let warm = cook_project(d);
    for (s, _, m) in stages(&warm) {
        assert_eq!(m, 0, "no-op cook re-ran {s}: {:?}", stages(&warm));
    }
    assert_eq!(warm["stages"]["package"]["hits"], 2);
    assert_eq!(packages(&d.join("out")), first);

    // Which stages re-run (misses > 0) for each change. Import and
    // resample outputs are not stored (normalize and prepare carry what
    // is read of them): they run again exactly when the stage after them
    // misses.
    let cases: Vec<Case> = vec![
        (
            "quality threshold",
            Box::new(|d: &Path| {
                edit(
                    d,
                    "custom.toml",
                    "error_threshold_m = 0.0001",
                    "error_threshold_m = 0.0002",
                )
            }),
            &["encode", "verify", "package"],
        ),
        (
            "clip loop flag",
            Box::new(|d: &Path| {
                append(
                    d,
                    "ludus-anim.toml",
                    "[asset.clips.walk]\nloop = \"loop\"\n",
                )
            }),
            &["resample", "prepare", "encode", "verify", "package"],
        ),
        (
            "resampling tolerance",
            Box::new(|d: &Path| {
                edit(
                    d,
                    "custom.toml",
                    "max_resample_error_m = 0.0001",
                    "max_resample_error_m = 0.0002",
                )
            }),
            &["resample", "prepare", "encode", "verify", "package"],
        ),
        (
            "units",
            Box::new(|d: &Path| {
                edit(
                    d,
                    "ludus-anim.toml",
                    "sources = [\"src/*.glb\"]",
                    "sources = [\"src/*.glb\"]\nunits = \"cm\"",
                )
            }),
            &[
                "import",
                "normalize",
                "resample",
                "prepare",
                "encode",
                "verify",
                "package",
            ],
        ),
        (
            "source bytes",
            Box::new(|d: &Path| {
                let mut b = std::fs::read(d.join("src/npc.glb")).unwrap();
                // New bytes, same motion: one letter of asset.generator.
                let at = b.windows(10).position(|w| w == b"generator\"").unwrap() + 12;
                b[at] = b'L';
                std::fs::write(d.join("src/npc.glb"), b).unwrap();
            }),
            &[
                "import",
                "normalize",
                "resample",
                "prepare",
                "encode",
                "verify",
                "package",
            ],
        ),
    ];
    for (what, change, expect) in cases {
        change(d);
        let r = cook_project(d);
        for (s, _, m) in stages(&r) {
            assert_eq!(
                m > 0,
                expect.contains(&s.as_str()),
                "{what}: stage {s} misses {m}; expected re-runs {expect:?}; {:?}",
                stages(&r)
            );
        }
    }
}

/// A change to a project, and the stages it must re-run.
type Case = (&'static str, Box<dyn Fn(&Path)>, &'static [&'static str]);

fn edit(d: &Path, file: &str, from: &str, to: &str) {
    let p = d.join(file);
    let s = std::fs::read_to_string(&p).unwrap();
    assert!(s.contains(from), "{file} lacks {from}");
    std::fs::write(p, s.replacen(from, to, 1)).unwrap();
}

fn append(d: &Path, file: &str, text: &str) {
    let p = d.join(file);
    let s = std::fs::read_to_string(&p).unwrap();
    std::fs::write(p, s + text).unwrap();
}

#[test]
fn packages_and_manifest_are_identical_for_any_thread_count_and_repeat() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    let mut outs = Vec::new();
    for (i, jobs) in ["1", "8", "2"].iter().enumerate() {
        let out = format!("o{i}");
        let o = ludus_anim(&["cook", "--no-cache", "--jobs", jobs, "--out", &out], d);
        assert!(o.status.success(), "{}", text(&o));
        outs.push((
            packages(&d.join(&out)),
            std::fs::read(d.join(&out).join("manifest.json")).unwrap(),
        ));
    }
    assert!(!outs[0].0.is_empty());
    for o in &outs[1..] {
        assert!(o.0 == outs[0].0, "packages differ across thread counts");
        assert!(
            o.1 == outs[0].1,
            "manifest.json differs across thread counts"
        );
    }
}

#[test]
fn concurrent_cooks_into_one_cache_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    let children: Vec<_> = (0..3)
        .map(|i| {
            command(&["cook", "--out", &format!("c{i}"), "--jobs", "2"], d)
                .spawn()
                .unwrap()
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    let a = packages(&d.join("c0"));
    assert!(!a.is_empty());
    for i in 1..3 {
        assert!(
            packages(&d.join(format!("c{i}"))) == a,
            "concurrent cook {i} differs"
        );
    }
    // And the same as a cook without any cache.
    let o = ludus_anim(&["cook", "--no-cache", "--out", "plain"], d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(packages(&d.join("plain")) == a);
}

#[test]
fn corrupted_cache_entries_are_detected_and_healed() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    let first = {
        cook_project(d);
        packages(&d.join("out"))
    };
    // Corrupt every cache entry: flip one byte past the header.
    let mut n = 0;
    for f in all_files(&d.join("cache/objects")) {
        let mut b = std::fs::read(&f).unwrap();
        if b.len() > 100 && !f.file_name().unwrap().to_string_lossy().starts_with('.') {
            let i = b.len() - 1;
            b[i] ^= 0x5a;
            std::fs::write(&f, b).unwrap();
            n += 1;
        }
    }
    assert!(n > 5);
    let r = cook_json(d);
    let notices = r["cache_notices"].as_array().unwrap();
    assert!(
        notices
            .iter()
            .any(|m| m.as_str().unwrap().contains("corrupt")),
        "{notices:?}"
    );
    assert_eq!(packages(&d.join("out")), first);
    // Healed: the next cook hits again.
    let r = cook_json(d);
    assert_eq!(r["stages"]["package"]["hits"], 2, "{:?}", stages(&r));
    assert!(r["cache_notices"].as_array().unwrap().is_empty());
}

#[test]
fn shards_with_a_shared_cache_give_the_packages_of_one_machine() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    // More assets, so both shards get some.
    for i in 0..6 {
        std::fs::copy(
            repo().join("fixtures/biped.glb"),
            d.join(format!("src/extra{i}.glb")),
        )
        .unwrap();
    }
    let o = ludus_anim(&["cook", "--no-cache", "--out", "single"], d);
    assert!(o.status.success(), "{}", text(&o));
    let mut counts = Vec::new();
    for (i, shard) in ["1/2", "2/2"].iter().enumerate() {
        let o = ludus_anim(&["cook", "--shard", shard, "--out", "farm"], d);
        assert!(o.status.success(), "{}", text(&o));
        // Shards write their own report, so they never overwrite each other.
        let file = d.join(format!("farm/report.shard-{}-of-2.json", i + 1));
        let r: serde_json::Value = serde_json::from_slice(&std::fs::read(file).unwrap()).unwrap();
        counts.push(r["assets"].as_array().unwrap().len());
    }
    assert_eq!(
        counts.iter().sum::<usize>(),
        8,
        "every asset in exactly one shard: {counts:?}"
    );
    assert!(counts.iter().all(|&c| c > 0), "{counts:?}");
    assert!(packages(&d.join("farm")) == packages(&d.join("single")));
}

/// What a reader may see at any moment: only complete packages; a
/// manifest that parses and names packages that are there and load; a
/// report that parses.
fn check_visible(out: &Path, trial: usize) {
    for (name, bytes) in packages(out) {
        assert!(
            name.ends_with(".ludanim"),
            "trial {trial}: stray file {name} in packages/"
        );
        assert!(
            ludus_anim_runtime::Package::load(&bytes).is_ok(),
            "trial {trial}: partial package {name}"
        );
    }
    if let Ok(b) = std::fs::read(out.join("manifest.json")) {
        let m: Value = serde_json::from_slice(&b).expect("manifest.json parses");
        for a in m["assets"].as_array().unwrap() {
            let p = out.join(a["package"].as_str().unwrap());
            assert!(p.is_file(), "trial {trial}: manifest names missing {p:?}");
        }
    }
    if let Ok(b) = std::fs::read(out.join("report.json")) {
        serde_json::from_slice::<Value>(&b).expect("report.json parses");
    }
}

/// SIGKILL cooks sharing one cache and output directory at 100
/// pseudo-random points (cold and warm cache, cooking and publishing);
/// a reader never sees a partial or inconsistent output, and a re-cook is
/// byte for byte a clean cook (packages, manifest.json; report.json
/// without timings and cache counters).
#[test]
fn killed_cooks_leave_no_partial_files_and_the_next_cook_completes() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    for i in 0..4 {
        std::fs::copy(
            repo().join("fixtures/biped.glb"),
            d.join(format!("src/extra{i}.glb")),
        )
        .unwrap();
    }
    let timed = |args: &[&str]| {
        let start = std::time::Instant::now();
        let o = ludus_anim(args, d);
        assert!(o.status.success(), "{}", text(&o));
        (start.elapsed().as_millis() as u64).clamp(20, 1500)
    };
    let cold_ms = timed(&["cook", "--no-cache", "--jobs", "2", "--out", "reference"]);
    let reference = (
        packages(&d.join("reference")),
        std::fs::read(d.join("reference/manifest.json")).unwrap(),
        without_timings(report(&d.join("reference"))),
    );
    timed(&["cook", "--jobs", "2", "--out", "warm"]);
    let warm_ms = timed(&["cook", "--jobs", "2", "--out", "warm"]);
    // Kill until 100 cooks died before finishing: even trials start from
    // a cold cache (kills land in cooking), odd ones from what the last
    // cooks left (kills land in cache hits and publishing).
    let mut seed = 0x853c_49e6_748f_ea9bu64;
    let (mut killed, mut trial) = (0, 0);
    while killed < 100 && trial < 300 {
        seed = seed
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let cold = trial % 2 == 0;
        if cold {
            let _ = std::fs::remove_dir_all(d.join("cache"));
        }
        let delay = (seed >> 33) % if cold { cold_ms } else { warm_ms };
        let mut child = command(&["cook", "--jobs", "2", "-q"], d).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(delay));
        if child.try_wait().ok().flatten().is_none() {
            killed += 1;
        }
        let _ = child.kill();
        let _ = child.wait();
        check_visible(&d.join("out"), trial);
        if trial % 10 == 9 {
            recook_equals(d, trial, &reference);
        }
        trial += 1;
    }
    recook_equals(d, trial, &reference);
    eprintln!(
        "{killed} cooks killed before they finished, in {trial} trials (cold cook {cold_ms} ms, warm {warm_ms} ms)"
    );
    assert_eq!(killed, 100, "only {killed} kills landed in {trial} trials");
}

type Outputs = (Vec<(String, Vec<u8>)>, Vec<u8>, Value);

/// A cook completes, and its outputs are byte for byte the reference's
/// (the report without timings and cache counters); no cache problem is
/// met and nothing is left in `.tmp`.
fn recook_equals(d: &Path, trial: usize, reference: &Outputs) {
    let o = ludus_anim(&["cook", "--jobs", "2"], d);
    assert!(o.status.success(), "trial {trial}: {}", text(&o));
    let r = report(&d.join("out"));
    assert!(
        r["cache_notices"].as_array().unwrap().is_empty(),
        "trial {trial}: {:?}",
        r["cache_notices"]
    );
    let again = (
        packages(&d.join("out")),
        std::fs::read(d.join("out/manifest.json")).unwrap(),
        without_timings(r),
    );
    assert!(again.0 == reference.0, "trial {trial}: packages differ");
    assert!(
        again.1 == reference.1,
        "trial {trial}: manifest.json differs"
    );
    assert_eq!(again.2, reference.2, "trial {trial}: report.json differs");
    // (A cook killed between creating its staging directory and locking
    // it, a window of microseconds, leaves `new-*` for a minute: not an
    // output, and removed later.)
    let leftovers: Vec<_> = all_files(&d.join("out/.tmp"))
        .into_iter()
        .filter(|p| !p.to_string_lossy().contains("/new-"))
        .collect();
    assert!(leftovers.is_empty(), "trial {trial}: {leftovers:?}");
}

#[test]
fn json_event_stream_and_cache_commands() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    let o = ludus_anim(&["cook", "--json"], d);
    assert!(o.status.success(), "{}", text(&o));
    let events: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    for k in ["asset_start", "stage", "asset_done", "summary"] {
        assert!(kinds.contains(&k), "{kinds:?}");
    }
    assert_eq!(*kinds.last().unwrap(), "summary");
    assert!(events
        .iter()
        .any(|e| e["event"] == "stage" && e["cache"] == "miss" && e["stage"] == "encode"));

    let o = ludus_anim(&["cache", "stats", "--cache", "cache"], d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("entries"));
    let o = ludus_anim(&["cache", "gc", "--max-size", "0", "--cache", "cache"], d);
    assert!(o.status.success(), "{}", text(&o));
    let o = ludus_anim(&["cache", "stats", "--cache", "cache"], d);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(": 0 entries"),
        "{}",
        text(&o)
    );
    let o = ludus_anim(
        &["cache", "gc", "--max-size", "lots", "--cache", "cache"],
        d,
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn manifest_errors_are_clear() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "unit = \"cm\"");
    let o = ludus_anim(&["cook"], d);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("ludus-anim.toml") && e.contains("did you mean `units`"),
        "{e}"
    );
}

#[test]
fn per_clip_profile_and_cut_clips_from_the_manifest() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "[asset.clips.idle]\nprofile = \"hero\"\n\n[asset.clips.walk_start]\nfrom = \"walk\"\nrange = [0.0, 0.6]\n\n[asset.clips.run]\nskip = true\n");
    let r = cook_project(d);
    let clips = r["assets"][0]["clips"].as_array().unwrap();
    let by_name = |n: &str| clips.iter().find(|c| c["name"] == n).cloned();
    assert_eq!(by_name("idle").unwrap()["profile"], "hero");
    assert_eq!(by_name("walk").unwrap()["profile"], "custom");
    let cut = by_name("walk_start").unwrap();
    assert!((cut["duration_s"].as_f64().unwrap() - 0.6).abs() < 1e-6);
    assert!(by_name("run").is_none());
}

/// The sidecar on a no-op cook is the published file itself (its header
/// names its content, so no record is read); an edit rebuilds it; a cache
/// that lost an asset's record still gives the same document (the asset
/// goes through its clip stages again).
#[test]
fn the_sidecar_is_kept_when_unchanged_and_rebuilt_whole_otherwise() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    let side = d.join("out/report-sidecar.json");
    cook_project(d);
    let first = std::fs::read(&side).unwrap();
    let doc: Value = serde_json::from_slice(&first).unwrap();
    assert_eq!(doc["content"].as_str().unwrap().len(), 64);
    assert_eq!(doc["clips"].as_array().unwrap().len(), 6);
    let inode = std::fs::metadata(&side).unwrap().ino();
    let r = cook_json(d);
    assert_eq!(r["stages"]["package"]["hits"], 2);
    assert_eq!(std::fs::metadata(&side).unwrap().ino(), inode, "kept");
    // Lose every sidecar record from the cache: a changed limit forces
    // a rebuild, which must recook the records, not drop them.
    for e in all_files(&d.join("cache/objects")) {
        let b = std::fs::read(&e).unwrap();
        if b.windows(9).any(|w| w == b"\"clip\":\"w") && !b.windows(7).any(|w| w == b"report\"") {
            std::fs::remove_file(&e).unwrap();
        }
    }
    append(d, "ludus-anim.toml", "\n[report]\nsidecar_max_mb = 500\n");
    cook_project(d);
    let rebuilt = std::fs::read(&side).unwrap();
    let back: Value = serde_json::from_slice(&rebuilt).unwrap();
    assert_ne!(back["content"], doc["content"], "the limit is part of it");
    assert_eq!(back["clips"], doc["clips"]);
    assert_ne!(std::fs::metadata(&side).unwrap().ino(), inode);
}

/// Source stamps (`project/src/stamps.rs`) let an unchanged asset be served
/// without reading its source; a rewrite of the same size right after a
/// cook must still be seen (the stamp changes, or was never recorded for
/// a file that young).
#[test]
fn a_same_size_rewrite_after_stamps_were_recorded_is_cooked() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    // Stamps are recorded only for files older than two seconds.
    std::thread::sleep(Duration::from_millis(2100));
    cook_project(d);
    assert!(d.join("cache/source-stamps").is_file());
    // `--json` cooks even when up to date (`pipeline::uptodate`).
    let r = cook_json(d);
    assert_eq!(r["stages"]["package"]["hits"], 2);
    let before = packages(&d.join("out"));
    // Same length, other bytes: the glb's JSON chunk names a clip "walk";
    // rename it "wolk" in one file.
    let npc = d.join("src/npc.glb");
    let mut b = std::fs::read(&npc).unwrap();
    let at = b.windows(6).position(|w| w == b"\"walk\"").unwrap();
    b[at + 2] = b'o';
    std::fs::write(&npc, &b).unwrap();
    let r = cook_project(d);
    assert_eq!(
        r["stages"]["package"]["hits"], 1,
        "npc must be cooked again"
    );
    let clips: Vec<&str> = r["assets"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|a| a["clips"].as_array().unwrap())
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert!(clips.contains(&"wolk"), "{clips:?}");
    assert_ne!(packages(&d.join("out")), before);
}

/// A warm no-op whose inputs, settings and published outputs are those of
/// the last publication reads no record and writes nothing
/// (`pipeline::uptodate`); any change to them, or to a published file,
/// cooks as usual, and the no-op keeps the last cook's exit status.
#[test]
fn an_up_to_date_cook_writes_nothing_and_any_change_cooks() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, "");
    // Stamps are recorded only for files older than two seconds.
    std::thread::sleep(Duration::from_millis(2100));
    let out = d.join("out");
    let cold = cook_project(d);
    assert!(
        out.join(".cook-state").is_file(),
        "the publication is recorded"
    );
    let generation = || std::fs::read_to_string(out.join(".generation")).unwrap();
    let ino = |f: &str| std::fs::metadata(out.join(f)).unwrap().ino();
    let (g0, report_ino) = (generation(), ino("report.json"));
    let before = packages(&out);

    let noop = ludus_anim(&["cook"], d);
    assert!(noop.status.success(), "{}", text(&noop));
    assert!(text(&noop).contains("up to date"), "{}", text(&noop));
    assert_eq!(generation(), g0, "nothing published");
    assert_eq!(
        ino("report.json"),
        report_ino,
        "the report is the one written"
    );
    assert_eq!(packages(&out), before);

    // The last cook had quality warnings: `--deny warnings` still fails.
    let warned = cold["totals"]["warnings"].as_u64().unwrap();
    let denied = ludus_anim(&["cook", "--deny", "warnings"], d);
    assert_eq!(denied.status.success(), warned == 0, "{}", text(&denied));

    // `--json` streams every asset's events: it cooks (from the cache).
    let json = ludus_anim(&["cook", "--json"], d);
    assert!(json.status.success(), "{}", text(&json));
    assert_ne!(generation(), g0, "a cook publishes");
    assert_eq!(packages(&out), before);

    // A published package removed: cooked again, and restored.
    let g1 = generation();
    let first = all_files(&out.join("packages")).remove(0);
    std::fs::remove_file(&first).unwrap();
    let o = ludus_anim(&["cook"], d);
    assert!(!text(&o).contains("up to date"), "{}", text(&o));
    assert!(first.is_file());
    assert_ne!(generation(), g1);

    // A profile edit: the clip stages run again.
    edit(
        d,
        "custom.toml",
        "error_threshold_m = 0.0001",
        "error_threshold_m = 0.0002",
    );
    let r = cook_project(d);
    assert!(misses(&r, "encode") > 0, "{:?}", stages(&r));
}
