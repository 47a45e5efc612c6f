//! Build farm, end to end through the `ludus-anim` binary:
//! - outputs and stage keys do not depend on the checkout root or on how
//!   an input path was spelled;
//! - machine A cooks the shared fixtures into a real nginx (WebDAV PUT);
//!   machine B (another empty local cache, another checkout path, another
//!   working directory) downloads everything and computes nothing;
//! - a server that is down, answers 500, cuts bodies short, holds
//!   corrupted objects or never answers costs a bounded time and a notice,
//!   never a wrong output;
//! - three shards on three caches, merged, equal an unsharded cook;
//! - four cooks against one server at once are all correct.
//!
//! With `LUDUS_FAULT_TABLE=FILE`, each faulty-server cook appends a row
//! (fault, wall time, result, notices) to FILE: the fault table of
//! `docs/perf/farm.md` is these rows (run with `--test-threads 1`).
//!
//! Servers come from the remote-cache crate's test harness (a private
//! nginx on 127.0.0.1, installed with apt-get when missing, and scripted
//! fake servers), shared by path rather than copied.

mod common;
#[path = "../remote-cache/tests/common/mod.rs"]
mod servers;

use common::*;
use ludus_anim_cache::{check_entry, encode_entry, Key, KeyBuilder};
use serde_json::Value;
use servers::{free_port, FakeServer, Nginx, Reply};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Report fields that say how this run got its results (which cache tier,
/// what went wrong on the way), not what the results are.
const ACCOUNTING: &[&str] = &["stages", "remote", "cache_notices"];

/// A cook's outputs: packages by name, manifest bytes, the report without
/// timings (`report`) and also without cache accounting (`results`).
#[derive(Clone)]
struct Outputs {
    packages: Vec<(String, Vec<u8>)>,
    manifest: Vec<u8>,
    report: Value,
    results: Value,
}

fn outputs(out: &Path) -> Outputs {
    let mut r = report(out);
    strip(&mut r, TIMING);
    let mut results = r.clone();
    strip(&mut results, ACCOUNTING);
    Outputs {
        packages: packages(out),
        manifest: std::fs::read(out.join("manifest.json")).expect("manifest.json"),
        report: r,
        results,
    }
}

fn assert_same_results(a: &Outputs, b: &Outputs, what: &str) {
    let names = |o: &Outputs| o.packages.iter().map(|p| p.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(a), names(b), "{what}: package names");
    assert!(a.packages == b.packages, "{what}: package bytes differ");
    assert!(
        a.manifest == b.manifest,
        "{what}: manifest.json differs:\n{}\n---\n{}",
        String::from_utf8_lossy(&a.manifest),
        String::from_utf8_lossy(&b.manifest)
    );
    assert_eq!(a.results, b.results, "{what}: report.json differs");
}

/// The `ludus-anim` command in `cwd`, with no remote cache settings
/// inherited from the environment.
fn cmd(cwd: &Path, args: &[&str]) -> Command {
    let mut c = command(args, cwd);
    for v in [
        "LUDUS_ANIM_REMOTE_CACHE",
        "LUDUS_ANIM_REMOTE_CACHE_MODE",
        "LUDUS_ANIM_REMOTE_CACHE_AUTH",
        "LUDUS_ANIM_REMOTE_CACHE_TIMEOUT",
        "LUDUS_ANIM_REMOTE_CACHE_WAIT",
    ] {
        c.env_remove(v);
    }
    c
}

thread_local! {
    /// What the next `cook_against` of this test faces (its table row).
    static FAULT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Names the fault the next `cook_against` of this test faces, for the
/// fault table (one row: the name is used once).
fn fault(name: &str) {
    FAULT.with(|f| *f.borrow_mut() = Some(name.to_string()));
}

/// Appends a fault-table row when `LUDUS_FAULT_TABLE` names a file: the
/// cook has already been checked to ship exactly the cold cook's outputs.
fn table_row(took: Duration, r: &Value) {
    let (Ok(path), Some(name)) = (
        std::env::var("LUDUS_FAULT_TABLE"),
        FAULT.with(|f| f.borrow_mut().take()),
    ) else {
        return;
    };
    let said: Vec<&str> = r["cache_notices"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    // The first notice, without the server's port and the key's tail.
    let first: String = said.first().map_or(String::new(), |n| {
        n.chars().take(150).collect::<String>().replace('|', "/")
    });
    let row = format!(
        "| {name} | {:.2} s | exit 0, outputs as the cold cook's | {} | {first} |\n",
        took.as_secs_f64(),
        said.len(),
    );
    use std::io::Write;
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(row.as_bytes());
    }
}

/// Runs a cook that must succeed; its output and wall time.
fn cook_ok(c: &mut Command) -> (Output, Duration) {
    let start = Instant::now();
    let o = c.output().expect("run ludus-anim");
    let took = start.elapsed();
    assert!(o.status.success(), "{}", text(&o));
    (o, took)
}

fn events(o: &Output) -> Vec<Value> {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Every shared fixture (as MANIFEST.tsv lists them) copied into
/// `dir`, with a manifest naming each; `dir` is the project root.
fn fixture_project(fx: &Path, dir: &Path) {
    let mut sources = Vec::new();
    for prefix in ["gltf", "fbx", "bvh"] {
        copy_tree(&fx.join(prefix), &dir.join(prefix));
        for f in manifest_files(fx, &format!("{prefix}/")) {
            sources.push(format!("\"{}\"", s(f.strip_prefix(fx).unwrap())));
        }
    }
    let toml = format!(
        "[project]\noutput = \"out\"\n\n[[asset]]\nsources = [{}]\n",
        sources.join(", ")
    );
    std::fs::write(dir.join("ludus-anim.toml"), toml).unwrap();
}

/// The shared-fixture project cooked without a cache, once per test run.
fn fixture_reference(fx: &Path) -> &'static Outputs {
    static REF: OnceLock<Outputs> = OnceLock::new();
    REF.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let proj = tmp.path().join("proj");
        fixture_project(fx, &proj);
        cook_ok(&mut cmd(&proj, &["cook", "--no-cache"]));
        outputs(&proj.join("out"))
    })
}

/// The small feature project (`common::feature_project`) cooked without a
/// cache, once per test run.
fn small_reference(fx: &Path) -> &'static Outputs {
    static REF: OnceLock<Outputs> = OnceLock::new();
    REF.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let proj = tmp.path().join("proj");
        feature_project(fx, &proj);
        cook_ok(&mut cmd(&proj, &["cook", "--no-cache"]));
        outputs(&proj.join("out"))
    })
}

/// `plan` events (the stage key chain of each asset), sorted.
fn plans(o: &Output) -> Vec<Value> {
    let mut p: Vec<Value> = events(o)
        .into_iter()
        .filter(|e| e["event"] == "plan")
        .collect();
    p.sort_by_key(|e| e["source"].as_str().unwrap_or("").to_string());
    p
}

#[test]
fn outputs_and_keys_do_not_depend_on_root_or_spelling() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let make = |root: &Path| {
        let interp = root.join("gltf/interp");
        copy_tree(&fx.join("gltf/khronos_InterpolationTest"), &interp);
        std::fs::create_dir_all(root.join("fbx")).unwrap();
        std::fs::copy(fx.join("fbx/ozz_robot.fbx"), root.join("fbx/robot.fbx")).unwrap();
        std::fs::write(
            root.join("ludus-anim.toml"),
            "[[asset]]\nsources = [\"fbx/robot.fbx\", \"gltf/interp/interpolation_test.gltf\"]\n",
        )
        .unwrap();
    };
    let a = tmp.path().join("checkout-a/proj");
    let b = tmp.path().join("b/much/deeper/checkout/proj");
    make(&a);
    make(&b);
    let abs = |p: &Path, f: &str| s(&p.join(f));
    let (fbx, gltf) = ("fbx/robot.fbx", "gltf/interp/interpolation_test.gltf");
    let spellings: Vec<(&str, PathBuf, Vec<String>)> = vec![
        ("plain", a.clone(), vec![fbx.into(), gltf.into()]),
        (
            "dotted",
            a.clone(),
            vec![
                "./fbx/robot.fbx".into(),
                "./gltf/../gltf/interp/./interpolation_test.gltf".into(),
            ],
        ),
        ("absolute", a.clone(), vec![abs(&a, fbx), abs(&a, gltf)]),
        (
            "other cwd, manifest",
            tmp.path().to_path_buf(),
            vec!["--manifest".into(), abs(&a, "ludus-anim.toml")],
        ),
        (
            "other root, relative manifest",
            b.join("../.."),
            vec!["--manifest".into(), "checkout/proj/ludus-anim.toml".into()],
        ),
    ];
    let mut first: Option<(Outputs, Vec<Value>)> = None;
    for (i, (label, cwd, args)) in spellings.iter().enumerate() {
        let out = tmp.path().join(format!("out{i}"));
        let mut all = vec!["cook", "--no-cache", "--json", "--out"];
        let out_s = s(&out);
        all.push(&out_s);
        all.extend(args.iter().map(String::as_str));
        let (o, _) = cook_ok(&mut cmd(cwd, &all));
        let got = (outputs(&out), plans(&o));
        assert_eq!(got.1.len(), 2, "{label}: {}", text(&o));
        let sources: Vec<&str> = got.1.iter().filter_map(|p| p["source"].as_str()).collect();
        assert_eq!(sources, [fbx, gltf], "{label}");
        match &first {
            None => first = Some(got),
            Some((o0, p0)) => {
                assert_same_results(o0, &got.0, label);
                assert_eq!(o0.report, got.0.report, "{label}: report");
                assert_eq!(p0, &got.1, "{label}: stage keys differ");
            }
        }
    }
}

#[test]
fn machine_b_downloads_everything_machine_a_cooked() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(nginx) = Nginx::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj_a = tmp.path().join("a/checkout/proj");
    let proj_b = tmp.path().join("b/elsewhere/deeper/proj");
    fixture_project(&fx, &proj_a);
    fixture_project(&fx, &proj_b);

    let cache_a = s(&tmp.path().join("a/cache"));
    let url = nginx.url();
    let (oa, ta) = cook_ok(&mut cmd(
        &proj_a,
        &[
            "cook",
            "--json",
            "--cache",
            &cache_a,
            "--remote-cache",
            &url,
            "--remote-cache-mode",
            "read-write",
        ],
    ));
    let ra = report(&proj_a.join("out"));
    let up = &ra["remote"];
    assert_eq!(up["mode"], "read-write", "{up}");
    assert_eq!(up["pending_uploads"], 0, "{up}");
    let uploads: u64 = stage_sum(up, "uploads");
    assert!(uploads > 0 && stage_sum(up, "upload_errors") == 0, "{up}");
    let log = nginx.access_log_with("\"PUT ", uploads as usize);
    assert_eq!(
        log.matches("\"PUT ").count() as u64,
        uploads,
        "every upload stored"
    );

    // Machine B: the URL from the environment, read mode by default, the
    // manifest named from another directory.
    let cache_b = s(&tmp.path().join("b/cache"));
    let (ob, tb) = cook_ok(
        cmd(
            &tmp.path().join("b"),
            &[
                "cook",
                "--json",
                "--cache",
                &cache_b,
                "--manifest",
                "elsewhere/deeper/proj/ludus-anim.toml",
            ],
        )
        .env("LUDUS_ANIM_REMOTE_CACHE", &url),
    );
    let rb = report(&proj_b.join("out"));
    assert_conforms(&ra, "report.schema.json");
    assert_conforms(&rb, "report.schema.json");
    for (stage, st) in rb["stages"].as_object().unwrap() {
        assert_eq!(st["misses"], 0, "B ran {stage}: {}", rb["stages"]);
    }
    let down = &rb["remote"];
    assert_eq!(down["mode"], "read");
    assert!(stage_sum(down, "hits") > 0, "{down}");
    for bad in ["misses", "corrupt", "errors", "uploads"] {
        assert_eq!(stage_sum(down, bad), 0, "{bad}: {down}");
    }
    let stage_events: Vec<Value> = events(&ob)
        .into_iter()
        .filter(|e| e["event"] == "stage")
        .collect();
    assert!(!stage_events.is_empty());
    assert!(stage_events.iter().all(|e| e["cache"] == "remote"));
    let summary = events(&ob).pop().unwrap();
    assert_eq!(summary["event"], "summary");
    assert_eq!(summary["remote"], rb["remote"]);
    assert!(!events(&oa).iter().any(|e| e["cache"] == "remote"));

    assert_same_results(
        &outputs(&proj_a.join("out")),
        &outputs(&proj_b.join("out")),
        "A vs B",
    );
    assert_same_results(
        fixture_reference(&fx),
        &outputs(&proj_b.join("out")),
        "reference vs B",
    );
    eprintln!("A cold {ta:?}, B warm-remote {tb:?}");
}

/// `v` conforms to `schemas/<schema>`.
fn assert_conforms(v: &Value, schema: &str) {
    let s: Value =
        serde_json::from_slice(&std::fs::read(repo().join("schemas").join(schema)).unwrap())
            .unwrap();
    let errors = ludus_anim_report::schema::validate(&s, v);
    assert!(errors.is_empty(), "{schema}: {}", errors.join("\n"));
}

fn json_file(p: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(p).unwrap()).unwrap()
}

fn stage_sum(remote: &Value, field: &str) -> u64 {
    remote["stages"]
        .as_object()
        .map(|m| m.values().filter_map(|s| s[field].as_u64()).sum())
        .unwrap_or(0)
}

/// Cooks the small project in a fresh directory against `url` (with
/// `extra` arguments and environment); checks the outputs against the
/// reference and returns the report and the wall time.
fn cook_against(fx: &Path, url: &str, extra: &[&str], env: &[(&str, &str)]) -> (Value, Duration) {
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    feature_project(fx, &proj);
    let cache = s(&tmp.path().join("cache"));
    let mut args = vec!["cook", "--cache", &cache, "--remote-cache", url];
    args.extend(extra);
    let mut c = cmd(&proj, &args);
    for (k, v) in env {
        c.env(k, v);
    }
    let (_, took) = cook_ok(&mut c);
    assert_same_results(small_reference(fx), &outputs(&proj.join("out")), url);
    let r = report(&proj.join("out"));
    table_row(took, &r);
    (r, took)
}

fn notices(r: &Value) -> String {
    r["cache_notices"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

#[test]
fn a_server_that_is_not_running_costs_one_failure() {
    let Some(fx) = shared_fixtures() else { return };
    let url = format!("http://127.0.0.1:{}/cache", free_port());
    fault("server not running");
    let (r, took) = cook_against(&fx, &url, &["--remote-cache-mode", "read-write"], &[]);
    assert!(took < Duration::from_secs(20), "{took:?}");
    let n = notices(&r);
    assert!(n.contains("unreachable") && n.contains("disabled"), "{n}");
    assert_eq!(n.matches("unreachable").count(), 1, "{n}");
    assert_eq!(r["remote"]["disabled"], true);
    assert!(stage_sum(&r["remote"], "errors") <= 4, "{}", r["remote"]);
    assert_eq!(stage_sum(&r["remote"], "uploads"), 0);
}

#[test]
fn server_errors_and_cut_bodies_are_misses_with_notices() {
    let Some(fx) = shared_fixtures() else { return };
    let failing = FakeServer::start(|_| Reply::status(500));
    fault("every answer HTTP 500");
    let (r, took) = cook_against(&fx, &failing.url(), &[], &[]);
    assert!(took < Duration::from_secs(30), "{took:?}");
    assert!(notices(&r).contains("HTTP 500"), "{}", notices(&r));
    assert_eq!(
        r["remote"]["disabled"], false,
        "a server that answers is alive"
    );
    assert!(stage_sum(&r["remote"], "errors") > 0);
    assert_eq!(stage_sum(&r["remote"], "hits"), 0);

    let cut = FakeServer::start(|_| Reply::truncated(&[7u8; 400], 100));
    fault("bodies cut short");
    let (r, took) = cook_against(&fx, &cut.url(), &[], &[]);
    assert!(took < Duration::from_secs(30), "{took:?}");
    let remote = &r["remote"];
    assert_eq!(stage_sum(remote, "hits"), 0, "{remote}");
    assert!(
        stage_sum(remote, "errors") + stage_sum(remote, "corrupt") > 0,
        "{remote}"
    );
    assert!(!notices(&r).is_empty());
}

#[test]
fn a_server_that_never_answers_is_bounded() {
    let Some(fx) = shared_fixtures() else { return };
    let hang = FakeServer::start(|_| Reply::Hang);
    fault("never answers (1 s client timeout)");
    let (r, took) = cook_against(
        &fx,
        &hang.url(),
        &["--remote-cache-mode", "read-write"],
        &[("LUDUS_ANIM_REMOTE_CACHE_TIMEOUT", "1")],
    );
    // One 1 s timeout per thread already waiting, then the breaker.
    assert!(took < Duration::from_secs(15), "{took:?}");
    let n = notices(&r);
    assert!(n.contains("timed out") && n.contains("disabled"), "{n}");
    assert_eq!(r["remote"]["disabled"], true);
}

/// A server that answers every lookup after `get` (a miss) and every
/// upload after `put`.
fn slow_server(get: Duration, put: Duration) -> FakeServer {
    FakeServer::start(move |seen| match seen.method.as_str() {
        "PUT" | "MKCOL" => Reply::slow(put, Reply::status(201)),
        _ => Reply::slow(get, Reply::status(404)),
    })
}

#[test]
fn a_slow_server_costs_less_than_a_response() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    feature_project(&fx, &proj);
    let cache = s(&tmp.path().join("cache"));
    let (_, cold) = cook_ok(&mut cmd(&proj, &["cook", "--cache", &cache]));
    // Loose bounds (the figures are in docs/perf/farm.md): far below one
    // slow response, which is what every lookup cost before.
    let bound = cold + Duration::from_millis(1500);
    let rw = ["--remote-cache-mode", "read-write"];
    for secs in [3, 10] {
        let slow = slow_server(Duration::from_secs(secs), Duration::from_secs(secs));
        fault(&format!(
            "every answer after {secs} s (cold here: {:.2} s)",
            cold.as_secs_f64()
        ));
        let (r, took) = cook_against(&fx, &slow.url(), &rw, &[]);
        assert!(took < bound, "{secs} s server: {took:?}, cold {cold:?}");
        let n = notices(&r);
        assert_eq!(n.matches("disabled for the rest").count(), 1, "{n}");
        assert!(n.contains("no answer after"), "{n}");
        assert_eq!(r["remote"]["disabled"], true);
    }
    // Lookups answered at once, uploads slow: the flush is bounded, and
    // the uploads left are told.
    let puts = slow_server(Duration::ZERO, Duration::from_secs(10));
    fault("uploads answered after 10 s");
    let (r, took) = cook_against(&fx, &puts.url(), &rw, &[]);
    assert!(took < bound, "slow uploads: {took:?}, cold {cold:?}");
    let n = notices(&r);
    assert_eq!(n.matches("uploads still pending").count(), 1, "{n}");
    assert!(r["remote"]["pending_uploads"].as_u64() > Some(0), "{n}");
    assert_eq!(r["remote"]["disabled"], false);
}

/// Every entry of a local cache: file name (the key) and bytes.
fn entries(cache: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for dir in std::fs::read_dir(cache.join("objects")).unwrap().flatten() {
        for e in std::fs::read_dir(dir.path()).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if !name.starts_with('.') {
                out.push((name, std::fs::read(e.path()).unwrap()));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn cold_cooks_store_the_same_bytes_under_every_key() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let cook = |name: &str, jobs: &str| {
        let proj = tmp.path().join(name).join("checkout");
        feature_project(&fx, &proj);
        let cache = tmp.path().join(name).join("cache");
        cook_ok(&mut cmd(
            &proj,
            &["cook", "--cache", &s(&cache), "--jobs", jobs],
        ));
        entries(&cache)
    };
    let (a, b) = (cook("a", "1"), cook("machine-b", "3"));
    assert!(!a.is_empty());
    let keys = |e: &[(String, Vec<u8>)]| e.iter().map(|x| x.0.clone()).collect::<Vec<_>>();
    assert_eq!(keys(&a), keys(&b), "the same keys");
    for ((key, x), (_, y)) in a.iter().zip(&b) {
        assert!(x == y, "entry {key} differs between the two cooks");
    }
}

#[test]
fn entries_corrupted_on_the_server_are_recomputed_and_healed() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(nginx) = Nginx::start() else { return };
    let url = nginx.url();
    let rw = ["--remote-cache-mode", "read-write"];
    let (first, _) = cook_against(&fx, &url, &rw, &[]);
    let stored = stage_sum(&first["remote"], "uploads");
    assert!(stored > 0);
    // Bit rot (or a bad disk) on the server: every object loses a byte or
    // has one flipped.
    for (i, e) in std::fs::read_dir(nginx.ac_dir())
        .unwrap()
        .flatten()
        .enumerate()
    {
        let mut b = std::fs::read(e.path()).unwrap();
        if i % 2 == 0 {
            let mid = b.len() / 2;
            b[mid] ^= 0x10;
        } else {
            b.pop();
        }
        std::fs::write(e.path(), b).unwrap();
    }
    fault("every object bit-flipped or truncated on the server (nginx)");
    let (r, _) = cook_against(&fx, &url, &rw, &[]);
    let remote = &r["remote"];
    assert_eq!(stage_sum(remote, "hits"), 0, "{remote}");
    assert!(stage_sum(remote, "corrupt") > 0, "{remote}");
    assert!(notices(&r).contains("corrupt"), "{}", notices(&r));
    // Its uploads replaced the bad objects: a third machine computes nothing.
    let (r, _) = cook_against(&fx, &url, &[], &[]);
    for st in r["stages"].as_object().unwrap().values() {
        assert_eq!(st["misses"], 0, "{}", r["stages"]);
    }
    assert_eq!(stage_sum(&r["remote"], "corrupt"), 0);
}

#[test]
fn four_cooks_at_once_against_one_server() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(nginx) = Nginx::start() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    fixture_project(&fx, &proj);
    let url = nginx.url();
    let children: Vec<_> = (0..4)
        .map(|i| {
            let (out, cache) = (
                s(&tmp.path().join(format!("out{i}"))),
                s(&tmp.path().join(format!("cache{i}"))),
            );
            cmd(
                &proj,
                &[
                    "cook",
                    "--quiet",
                    "--jobs",
                    "1",
                    "--out",
                    &out,
                    "--cache",
                    &cache,
                    "--remote-cache",
                    &url,
                    "--remote-cache-mode",
                    "read-write",
                ],
            )
            .spawn()
            .expect("spawn")
        })
        .collect();
    for c in children {
        let o = c.wait_with_output().expect("wait");
        assert!(o.status.success(), "{}", text(&o));
    }
    for i in 0..4 {
        let got = outputs(&tmp.path().join(format!("out{i}")));
        assert_same_results(fixture_reference(&fx), &got, &format!("cook {i}"));
    }
}

/// Cooks `args` of the shared-fixture project in `proj` with a fresh cache.
fn shard_cook(proj: &Path, cache: &Path, out: &Path, shard: Option<&str>) {
    let (c, o) = (s(cache), s(out));
    let mut args = vec!["cook", "--quiet", "--cache", &c, "--out", &o];
    if let Some(sh) = shard {
        args.extend(["--shard", sh]);
    }
    cook_ok(&mut cmd(proj, &args));
}

fn merge(cwd: &Path, args: &[&str]) -> Output {
    let mut all = vec!["merge"];
    all.extend(args);
    cmd(cwd, &all).output().expect("run merge")
}

/// A shard file's split is complete and balanced: no shard's estimated
/// load exceeds another's by more than the largest job.
fn assert_balanced(info: &Value) {
    let count = info["count"].as_u64().unwrap() as usize;
    let costs: Vec<u64> = serde_json::from_value(info["costs"].clone()).unwrap();
    let split: Vec<usize> = serde_json::from_value(info["assignment"].clone()).unwrap();
    assert_eq!(costs.len(), info["jobs"].as_array().unwrap().len());
    assert_eq!(costs.len(), split.len());
    let mut load = vec![0u64; count];
    for (c, s) in costs.iter().zip(&split) {
        load[s - 1] += c;
    }
    let (max, min) = (*load.iter().max().unwrap(), *load.iter().min().unwrap());
    let largest = *costs.iter().max().unwrap();
    assert!(max - min <= largest, "loads {load:?}, costs {costs:?}");
}

#[test]
fn shards_are_balanced_by_estimated_cost() {
    use ludus_anim_cooker::pipeline::balance;
    // One large job and many small: the large one alone on a shard, the
    // small ones spread over the other two.
    let mut costs = vec![900u64];
    costs.extend([100; 9]);
    let names: Vec<String> = (0..costs.len()).map(|i| format!("a{i}")).collect();
    let split = balance(&costs, &names, 3);
    assert_eq!(split[0], 1);
    let on = |s: u32| split.iter().filter(|&&x| x == s).count();
    assert_eq!((on(1), on(2), on(3)), (1, 5, 4));
    assert_eq!(
        split,
        balance(&costs, &names, 3),
        "the same split every time"
    );
    assert!(balance(&[], &[], 3).is_empty());
}

#[test]
fn three_shards_merge_into_the_unsharded_cook() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let t = tmp.path();
    let proj = t.join("proj");
    fixture_project(&fx, &proj);
    shard_cook(&proj, &t.join("c0"), &t.join("whole"), None);
    // Shards 1 and 2 share an output directory; 3 has its own.
    shard_cook(&proj, &t.join("c1"), &t.join("shared"), Some("1/3"));
    shard_cook(&proj, &t.join("c2"), &t.join("shared"), Some("2/3"));
    shard_cook(&proj, &t.join("c3"), &t.join("third"), Some("3/3"));
    for f in ["manifest.shard-1-of-3.json", "report.shard-2-of-3.json"] {
        assert!(t.join("shared").join(f).is_file(), "{f}");
    }
    assert!(!t.join("shared/manifest.json").exists());
    let shard2 = json_file(&t.join("shared/manifest.shard-2-of-3.json"));
    assert_eq!(shard2["shard"]["index"], 2);
    assert_conforms(&shard2, "package-manifest.schema.json");
    assert_conforms(
        &json_file(&t.join("third/report.shard-3-of-3.json")),
        "report.schema.json",
    );

    assert_balanced(&shard2["shard"]);
    let o = merge(t, &["shared", "third", "--out", "merged"]);
    assert!(o.status.success(), "{}", text(&o));
    let (whole, merged) = (outputs(&t.join("whole")), outputs(&t.join("merged")));
    assert_same_results(&whole, &merged, "merged vs unsharded");
    assert_eq!(whole.report, merged.report, "stage counters add up");
    // The shards' sidecars merge into the unsharded cook's records.
    let clips = |dir: &str| json_file(&t.join(dir).join("report-sidecar.json"))["clips"].clone();
    assert!(clips("whole").as_array().is_some_and(|c| !c.is_empty()));
    assert!(clips("whole") == clips("merged"), "merged sidecar differs");

    // A shard cooked from a checkout where one source has other bytes.
    let other = t.join("other-checkout");
    copy_tree(&proj, &other);
    let bvh = manifest_files(&fx, "bvh/")[0]
        .strip_prefix(&fx)
        .unwrap()
        .to_path_buf();
    let mut bytes = std::fs::read(other.join(&bvh)).unwrap();
    bytes.extend_from_slice(b"\n");
    std::fs::write(other.join(&bvh), bytes).unwrap();
    shard_cook(&other, &t.join("c4"), &t.join("mixed"), Some("3/3"));

    // Refusals name what is wrong.
    let refused = |args: &[&str], says: &str| {
        let o = merge(t, args);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(
            String::from_utf8_lossy(&o.stderr).contains(says),
            "{says}: {}",
            text(&o)
        );
    };
    refused(&["shared", "--out", "x"], "shards 3 of 3 are missing");
    refused(
        &["shared", "mixed", "--out", "x"],
        &format!("'{}' had different bytes", s(&bvh)),
    );
    copy_tree(&t.join("third"), &t.join("third-again"));
    refused(
        &["shared", "third", "third-again", "--out", "x"],
        "shard 3/3 appears twice",
    );
    let edit = |dir: &str, f: &dyn Fn(&mut Value)| {
        let d = t.join(dir);
        copy_tree(&t.join("third"), &d);
        let p = d.join("manifest.shard-3-of-3.json");
        let mut v: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        f(&mut v);
        std::fs::write(&p, serde_json::to_vec_pretty(&v).unwrap()).unwrap();
    };
    edit("old-cooker", &|v| {
        v["cooker_version"] = "ludus-anim 0.0.1".into()
    });
    refused(
        &["shared", "old-cooker", "--out", "x"],
        "differ in cooker version",
    );
    let stolen = whole.manifest.clone();
    edit("conflict", &|v| {
        let whole: Value = serde_json::from_slice(&stolen).unwrap();
        let other = whole["assets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| {
                !v["assets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|b| b["source"] == a["source"])
            })
            .unwrap()
            .clone();
        let mut other = other;
        other["package_hash"] = "00".repeat(32).into();
        v["assets"].as_array_mut().unwrap().push(other);
    });
    refused(
        &["shared", "conflict", "--out", "x"],
        "was cooked differently by",
    );
}

/// A stage-cache payload's contents (`stage_cache.rs`: `Z`, the raw
/// length as u64 little-endian, a zstd frame).
fn unpack(payload: &[u8]) -> Vec<u8> {
    assert_eq!(payload.first(), Some(&b'Z'));
    zstd::decode_all(&payload[9..]).unwrap()
}

fn pack(raw: &[u8]) -> Vec<u8> {
    let mut v = vec![b'Z'];
    v.extend_from_slice(&(raw.len() as u64).to_le_bytes());
    v.extend(zstd::encode_all(raw, 1).unwrap());
    v
}

/// The key the package bytes of a whole-asset record are stored under (as
/// `cooker/src/pipeline/asset.rs` derives it).
fn package_bytes_key(package: &Key) -> Key {
    KeyBuilder::new().str("package-bytes").key(package).finish()
}

/// Replaces the server's object under `to` with `from`'s payload, framed
/// for `to` (a writer that stores one key's entry under another; the
/// framing itself is then intact) after `edit` of its payload.
fn transplant(nginx: &Nginx, from: &Key, to: &Key, edit: impl Fn(Vec<u8>) -> Vec<u8>) {
    let entry = std::fs::read(nginx.object_path(from)).unwrap();
    let payload = check_entry(from, &entry).unwrap().to_vec();
    std::fs::write(nginx.object_path(to), encode_entry(to, &edit(payload))).unwrap();
}

#[test]
fn records_that_do_not_prove_their_key_never_ship() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(nginx) = Nginx::start() else { return };
    let url = nginx.url();
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("a");
    feature_project(&fx, &proj);
    let cache = s(&tmp.path().join("cache-a"));
    let rw = ["--remote-cache-mode", "read-write"];
    let mut args = vec!["cook", "--json", "--cache", &cache, "--remote-cache", &url];
    args.extend(rw);
    let (o, _) = cook_ok(&mut cmd(&proj, &args));
    let package_of = |p: &Value| Key::from_hex(p["keys"]["package"].as_str().unwrap()).unwrap();
    let plans = plans(&o);
    let (a, b) = (package_of(&plans[0]), package_of(&plans[1]));
    let b_source = plans[1]["source"].as_str().unwrap().to_string();
    let b_record = std::fs::read(nginx.object_path(&b)).unwrap();

    // 1. Asset A's record and package bytes stored under asset B's keys.
    transplant(&nginx, &a, &b, |p| p);
    transplant(
        &nginx,
        &package_bytes_key(&a),
        &package_bytes_key(&b),
        |p| p,
    );
    fault("another asset's record and bytes under a key (nginx)");
    let (r, _) = cook_against(&fx, &url, &[], &[]);
    assert_eq!(r["stages"]["package"]["rejected"], 1, "{}", r["stages"]);
    let n = notices(&r);
    assert!(n.contains(&b.to_hex()) && n.contains(&b_source), "{n}");
    assert!(n.contains("stored for key"), "{n}");

    // 2. The same, with the record's own key rewritten to B's (a forger
    //    who knows the format): the other inputs still give it away.
    transplant(&nginx, &a, &b, |p| {
        let raw = String::from_utf8(unpack(&p)).unwrap();
        pack(raw.replace(&a.to_hex(), &b.to_hex()).as_bytes())
    });
    fault("a forged record: another asset's, its key rewritten (nginx)");
    let (r, _) = cook_against(&fx, &url, &[], &[]);
    assert_eq!(r["stages"]["package"]["rejected"], 1, "{}", r["stages"]);
    assert!(notices(&r).contains("stored for source"), "{}", notices(&r));

    // 3. B's own record with another asset's package bytes.
    std::fs::write(nginx.object_path(&b), &b_record).unwrap();
    transplant(
        &nginx,
        &package_bytes_key(&a),
        &package_bytes_key(&b),
        |p| p,
    );
    fault("a record with another asset's package bytes (nginx)");
    let (r, _) = cook_against(&fx, &url, &[], &[]);
    assert!(
        notices(&r).contains("package bytes hash to"),
        "{}",
        notices(&r)
    );
}

#[test]
fn cache_verify_names_poisoned_entries() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(nginx) = Nginx::start() else { return };
    let url = nginx.url();
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("a");
    feature_project(&fx, &proj);
    let cache = s(&tmp.path().join("cache-a"));
    let rw = ["--remote-cache-mode", "read-write"];
    let mut args = vec!["cook", "--json", "--cache", &cache, "--remote-cache", &url];
    args.extend(rw);
    let (o, _) = cook_ok(&mut cmd(&proj, &args));
    // Everything on the server, whatever the cook's flush left pending.
    cook_ok(&mut cmd(
        &proj,
        &["cache", "--cache", &cache, "push", "--remote-cache", &url],
    ));
    let verify = |sample: &str| {
        let args = [
            "cache",
            "verify",
            "--remote",
            "--sample",
            sample,
            "--remote-cache",
            &url,
        ];
        cmd(&proj, &args).output().unwrap()
    };
    let clean = verify("all");
    assert!(clean.status.success(), "{}", text(&clean));
    assert!(text(&clean).contains(" 0 disagree"), "{}", text(&clean));

    let package_of = |p: &Value| Key::from_hex(p["keys"]["package"].as_str().unwrap()).unwrap();
    let plans = plans(&o);
    let (a, b) = (package_of(&plans[0]), package_of(&plans[1]));
    // A record whose report claims another error than its cook measured
    // (its key and proof intact: a cook would serve it), and package
    // bytes of another asset.
    transplant(&nginx, &b, &b, |p| {
        let mut record: Value = serde_json::from_slice(&unpack(&p)).unwrap();
        record["report"]["clips"][0]["max_error_m"] = serde_json::json!(0.000001);
        pack(&serde_json::to_vec(&record).unwrap())
    });
    transplant(
        &nginx,
        &package_bytes_key(&a),
        &package_bytes_key(&b),
        |p| p,
    );
    let poisoned = verify("all");
    let said = text(&poisoned);
    assert_eq!(poisoned.status.code(), Some(1), "{said}");
    let b_source = plans[1]["source"].as_str().unwrap();
    assert!(
        said.contains(&format!(
            "{} (package of '{b_source}'): report.clips[0].max_error_m",
            b.to_hex()
        )),
        "{said}"
    );
    assert!(
        said.contains(&format!(
            "{} (package of '{b_source}'): output bytes",
            package_bytes_key(&b).to_hex()
        )),
        "{said}"
    );
    assert!(said.contains(" 2 disagree"), "{said}");
    // A sample of one checks one asset, the same one every run.
    let one = text(&verify("1"));
    assert!(one.contains("verified 1 of 3 assets"), "{one}");
    assert_eq!(one, text(&verify("1")));
}

#[test]
fn signed_farms_use_only_what_ci_signed() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(nginx) = Nginx::start() else { return };
    let url = nginx.url();
    let tmp = tempfile::tempdir().unwrap();
    let key_file = tmp.path().join("ci.key");
    std::fs::write(&key_file, "a CI signing secret of 32 chars\n").unwrap();
    let signing = format!("file:{}", s(&key_file));
    let signed = ["--remote-cache-signing", &signing];
    let rw = ["--remote-cache-mode", "read-write"];

    // CI signs what it uploads; an agent with the secret uses all of it.
    let (first, _) = cook_against(&fx, &url, &[&rw[..], &signed[..]].concat(), &[]);
    let stored = stage_sum(&first["remote"], "uploads");
    assert!(stored > 0, "{}", first["remote"]);
    let (r, _) = cook_against(&fx, &url, &signed, &[]);
    assert_eq!(stage_sum(&r["remote"], "corrupt"), 0, "{}", notices(&r));
    for st in r["stages"].as_object().unwrap().values() {
        assert_eq!(st["misses"], 0, "{}", r["stages"]);
    }
    // An agent without the secret reads signed entries too (unverified).
    let (r, _) = cook_against(&fx, &url, &[], &[]);
    assert_eq!(stage_sum(&r["remote"], "corrupt"), 0, "{}", notices(&r));
    assert!(stage_sum(&r["remote"], "hits") > 0);

    // A writer without the secret fills the (wiped) server with unsigned
    // objects (another machine's cook, framed correctly): agents with the
    // secret use none of them, and still ship the right packages.
    let wipe = || {
        for e in std::fs::read_dir(nginx.ac_dir()).unwrap().flatten() {
            std::fs::remove_file(e.path()).unwrap();
        }
    };
    wipe();
    let (_, _) = cook_against(&fx, &url, &rw, &[]);
    fault("unsigned entries, reader requires CI's signature (nginx)");
    let (r, _) = cook_against(&fx, &url, &signed, &[]);
    assert_eq!(stage_sum(&r["remote"], "hits"), 0, "{}", r["remote"]);
    assert!(stage_sum(&r["remote"], "corrupt") > 0, "{}", r["remote"]);
    assert!(notices(&r).contains("not signed"), "{}", notices(&r));

    // Entries signed with another secret are refused the same way.
    let other = tmp.path().join("other.key");
    std::fs::write(&other, "somebody else's secret, 32 chars\n").unwrap();
    let other = format!("file:{}", s(&other));
    wipe();
    let (_, _) = cook_against(
        &fx,
        &url,
        &[&rw[..], &["--remote-cache-signing", &other]].concat(),
        &[],
    );
    let (r, _) = cook_against(&fx, &url, &signed, &[]);
    assert_eq!(stage_sum(&r["remote"], "hits"), 0, "{}", r["remote"]);
    assert!(notices(&r).contains("another secret"), "{}", notices(&r));
}

#[test]
fn inputs_with_a_manifest_cook_with_its_settings_from_anywhere() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    feature_project(&fx, &proj);
    // The whole project as its manifest says, from its own directory.
    cook_ok(&mut cmd(&proj, &["cook", "--no-cache"]));
    let whole = outputs(&proj.join("out"));
    let walk_package = |o: &Outputs| {
        o.packages
            .iter()
            .find(|(n, _)| n.starts_with("walk"))
            .cloned()
            .unwrap()
    };
    let manifest = s(&proj.join("ludus-anim.toml"));
    let input = s(&proj.join("walk.bvh"));
    // One input, named absolutely, with an explicit manifest, from `/`:
    // the same package, manifest entry and profile as in the whole cook.
    let out = tmp.path().join("from-root");
    let o = s(&out);
    cook_ok(&mut cmd(
        Path::new("/"),
        &[
            "cook",
            "--no-cache",
            "--manifest",
            &manifest,
            "--out",
            &o,
            &input,
        ],
    ));
    let one = outputs(&out);
    assert_eq!(one.packages.len(), 1);
    assert!(
        walk_package(&whole) == walk_package(&one),
        "walk.bvh differs"
    );
    assert_eq!(one.report["assets"][0]["source"], "walk.bvh");
    // The same from the project directory, by relative path and with the
    // manifest found there.
    let out2 = tmp.path().join("from-proj");
    let o2 = s(&out2);
    cook_ok(&mut cmd(
        &proj,
        &["cook", "--no-cache", "--out", &o2, "walk.bvh"],
    ));
    assert!(outputs(&out2).packages == one.packages);
    assert!(outputs(&out2).manifest == one.manifest);
    // A manifest's profile applies to inputs too.
    let toml = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        toml.replace("[project]\n", "[project]\nprofile = \"crowd\"\n"),
    )
    .unwrap();
    let out3 = tmp.path().join("crowd");
    let o3 = s(&out3);
    cook_ok(&mut cmd(
        &proj,
        &["cook", "--no-cache", "--out", &o3, "walk.bvh"],
    ));
    assert_eq!(report(&out3)["profile"], "crowd");
    // An input the manifest does not list is refused, naming both.
    std::fs::write(
        proj.join("stray.bvh"),
        std::fs::read(proj.join("walk.bvh")).unwrap(),
    )
    .unwrap();
    let bad = cmd(&proj, &["cook", "--no-cache", "stray.bvh"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2), "{}", text(&bad));
    assert!(text(&bad).contains("stray.bvh") && text(&bad).contains("ludus-anim.toml"));
}

#[test]
fn a_read_write_cook_refills_a_wiped_server() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(nginx) = Nginx::start() else { return };
    let url = nginx.url();
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("ci");
    feature_project(&fx, &proj);
    let cache = s(&tmp.path().join("ci-cache"));
    let args = [
        "cook",
        "--cache",
        &cache,
        "--remote-cache",
        &url,
        "--remote-cache-mode",
        "read-write",
    ];
    cook_ok(&mut cmd(&proj, &args));
    let objects = || std::fs::read_dir(nginx.ac_dir()).unwrap().count();
    let stored = objects();
    assert!(stored > 0);
    // The server is wiped (eviction, a new bucket); CI's local cache is
    // warm, so its next cook computes nothing, and still puts back what
    // the server lacks.
    for e in std::fs::read_dir(nginx.ac_dir()).unwrap().flatten() {
        std::fs::remove_file(e.path()).unwrap();
    }
    cook_ok(&mut cmd(&proj, &args));
    let r = report(&proj.join("out"));
    for st in r["stages"].as_object().unwrap().values() {
        assert_eq!(st["misses"], 0, "{}", r["stages"]);
    }
    assert!(stage_sum(&r["remote"], "uploads") > 0, "{}", r["remote"]);
    assert!(objects() > 0, "nothing refilled");
    // A fresh agent finds the packages on the refilled server.
    fault("server wiped, refilled by CI's warm read-write cook; a fresh agent (nginx)");
    let (r, _) = cook_against(&fx, &url, &[], &[]);
    assert!(stage_sum(&r["remote"], "hits") > 0, "{}", r["remote"]);
    assert_eq!(r["stages"]["package"]["misses"], 0, "{}", r["stages"]);

    // `cache push` puts back everything the local cache holds.
    for e in std::fs::read_dir(nginx.ac_dir()).unwrap().flatten() {
        std::fs::remove_file(e.path()).unwrap();
    }
    let o = cmd(
        &proj,
        &["cache", "--cache", &cache, "push", "--remote-cache", &url],
    )
    .output()
    .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("(0 already there, 0 failed)"),
        "{}",
        text(&o)
    );
    let o = cmd(
        &proj,
        &["cache", "--cache", &cache, "push", "--remote-cache", &url],
    )
    .output()
    .unwrap();
    assert!(text(&o).contains("pushed 0 of"), "{}", text(&o));
    let (r, _) = cook_against(&fx, &url, &[], &[]);
    for st in r["stages"].as_object().unwrap().values() {
        assert_eq!(st["misses"], 0, "{}", r["stages"]);
    }
}
