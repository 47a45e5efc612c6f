//! Build farm, end to end through the `ludus-anim` binary: outputs and
//! stage keys do not depend on the checkout root or on how an input path
//! was spelled.

mod common;

use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

/// Report fields that measure the machine, not the cook.
const TIMING: &[&str] = &[
    "compress_ms",
    "decode_ns_per_pose",
    "cook_ms",
    "peak_rss_mb",
    "ms",
    "build",
];
/// Report fields that say how this run got its results (which cache tier,
/// what went wrong on the way), not what the results are.
const ACCOUNTING: &[&str] = &["stages", "cache_notices"];

fn strip(v: &mut Value, keys: &[&str]) {
    match v {
        Value::Object(o) => {
            for k in keys {
                o.remove(*k);
            }
            o.values_mut().for_each(|x| strip(x, keys));
        }
        Value::Array(a) => a.iter_mut().for_each(|x| strip(x, keys)),
        _ => {}
    }
}

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
    ] {
        c.env_remove(v);
    }
    c
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
