//! Hostile input through the CLI (issue #12): each class the fuzzing and
//! hostile-input run found ends in a typed diagnostic and a non-zero exit,
//! within 10 s and 1 GB of RSS (the process's own peak, from
//! `report.json`), with no panic and no read outside the asset's tree.
//! Every input is generated here, most a few hundred bytes.

mod common;
use common::*;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

const TIME_BOUND: Duration = Duration::from_secs(10);
const RSS_BOUND_MB: f64 = 1024.0;

struct Run {
    out: Output,
    report: Value,
    took: Duration,
}

impl Run {
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    /// Every diagnostic code of every asset.
    fn codes(&self) -> Vec<String> {
        self.report["assets"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|a| a["diagnostics"].as_array().into_iter().flatten())
            .filter_map(|d| d["code"].as_str().map(str::to_string))
            .collect()
    }
    fn messages(&self) -> String {
        self.report["assets"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|a| a["diagnostics"].as_array().into_iter().flatten())
            .filter_map(|d| d["message"].as_str())
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// Cook `args` in `dir`, checking the bounds every run must keep.
fn cook(dir: &Path, args: &[&str]) -> Run {
    let out_dir = dir.join("out");
    let _ = std::fs::remove_dir_all(&out_dir);
    let mut all = vec!["cook", "--no-cache", "--out", "out"];
    all.extend_from_slice(args);
    let start = Instant::now();
    let out = ludus_anim(&all, dir);
    let took = start.elapsed();
    let report: Value = std::fs::read(out_dir.join("report.json"))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or(Value::Null);
    let run = Run { out, report, took };
    let err = run.stderr();
    assert!(!err.contains("panicked"), "{args:?} panicked:\n{err}");
    assert!(run.took < TIME_BOUND, "{args:?} took {:?}", run.took);
    let rss = run.report["totals"]["peak_rss_mb"].as_f64().unwrap_or(0.0);
    assert!(rss < RSS_BOUND_MB, "{args:?}: peak RSS {rss} MB");
    eprintln!(
        "{args:?}: {:?}, {rss:.0} MB, exit {:?}",
        run.took,
        run.out.status.code()
    );
    run
}

/// A failed cook whose report carries `code`.
fn fails_with(dir: &Path, args: &[&str], code: &str) -> Run {
    let run = cook(dir, args);
    assert_eq!(
        run.out.status.code(),
        Some(1),
        "{args:?}:\n{}",
        run.stderr()
    );
    assert!(
        run.codes().iter().any(|c| c == code),
        "{args:?}: expected {code}, got {:?}\n{}",
        run.codes(),
        run.messages()
    );
    run
}

fn gltf(times: &[f32], uri: Option<&str>) -> Value {
    let mut buf: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    let t_len = buf.len();
    for _ in times {
        for c in [0.0f32, 0.0, 0.0, 1.0] {
            buf.extend(c.to_le_bytes());
        }
    }
    use base64::Engine;
    let data = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&buf)
    );
    json!({
        "asset": {"version": "2.0"},
        "nodes": [{"name": "j0"}],
        "scenes": [{"nodes": [0]}],
        "buffers": [{"byteLength": buf.len(), "uri": uri.map_or(data, str::to_string)}],
        "bufferViews": [
            {"buffer": 0, "byteLength": t_len},
            {"buffer": 0, "byteOffset": t_len, "byteLength": buf.len() - t_len}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": times.len(), "type": "SCALAR"},
            {"bufferView": 1, "componentType": 5126, "count": times.len(), "type": "VEC4"}
        ],
        "animations": [{"name": "a",
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
            "samplers": [{"input": 0, "output": 1}]}]
    })
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec(v).unwrap()).unwrap();
}

fn chain_bvh(joints: usize, frames: usize) -> String {
    let mut s = String::from(
        "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n",
    );
    for i in 1..joints {
        s.push_str(&format!(
            "JOINT j{i}\n{{\nOFFSET 0 1 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n"
        ));
    }
    s.push_str("End Site\n{\nOFFSET 0 1 0\n}\n");
    s.push_str(&"}\n".repeat(joints));
    s.push_str(&format!(
        "MOTION\nFrames: {frames}\nFrame Time: 0.0333333\n"
    ));
    for f in 0..frames {
        let mut line = String::from("0 0 0 0 0 0");
        for i in 1..joints {
            let a = 10.0 * ((f as f32) * 0.2 + i as f32 * 0.1).sin();
            let b = 5.0 * ((f as f32) * 0.1 + i as f32).cos();
            line.push_str(&format!(" {a:.3} {b:.3} 0"));
        }
        s.push_str(&line);
        s.push('\n');
    }
    s
}

#[test]
fn long_key_spans_and_huge_accessors_are_limit_errors() {
    let dir = tempfile::tempdir().unwrap();
    write_json(&dir.path().join("long.gltf"), &gltf(&[0.0, 1e9], None));
    let run = fails_with(dir.path(), &["long.gltf"], "limit_exceeded");
    assert!(
        run.messages().contains("max_clip_duration_s"),
        "{}",
        run.messages()
    );

    let mut v = gltf(&[0.0, 1.0], None);
    v["nodes"] = json!((0..8)
        .map(|i| json!({"name": format!("j{i}")}))
        .collect::<Vec<_>>());
    v["scenes"][0]["nodes"] = json!((0..8).collect::<Vec<_>>());
    v["accessors"] = json!([
        {"componentType": 5126, "count": 16_000_000, "type": "SCALAR"},
        {"componentType": 5126, "count": 16_000_000, "type": "VEC4"}
    ]);
    v["animations"][0]["channels"] = json!((0..8)
        .map(|i| json!({"sampler": 0, "target": {"node": i, "path": "rotation"}}))
        .collect::<Vec<_>>());
    write_json(&dir.path().join("huge.gltf"), &v);
    let run = fails_with(dir.path(), &["huge.gltf"], "limit_exceeded");
    assert!(run.messages().contains("max_keys_per_channel"));
}

#[test]
fn a_dependency_panic_on_an_invalid_mesh_accessor_never_happens() {
    let dir = tempfile::tempdir().unwrap();
    let mut v = gltf(&[0.0, 1.0], None);
    v["meshes"] = json!([{"primitives": [{"attributes": {"POSITION": 99}}]}]);
    v["nodes"][0]["mesh"] = json!(0);
    write_json(&dir.path().join("mesh.gltf"), &v);
    let run = cook(dir.path(), &["mesh.gltf"]);
    assert!(run.out.status.success(), "{}", run.stderr());
    assert!(run.codes().iter().any(|c| c == "ignored_invalid_data"));
}

#[test]
fn companion_uris_outside_the_asset_directory_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let assets = dir.path().join("assets");
    std::fs::create_dir_all(&assets).unwrap();
    // A readable file next to the asset directory that must stay unread.
    std::fs::write(dir.path().join("secret.bin"), [0u8; 48]).unwrap();
    let uris = [
        "../secret.bin",
        "%2E%2E/secret.bin",
        "/etc/passwd",
        "/dev/zero",
        "/dev/urandom",
        "file:///etc/passwd",
    ];
    for (i, uri) in uris.iter().enumerate() {
        write_json(
            &assets.join(format!("u{i}.gltf")),
            &gltf(&[0.0, 1.0], Some(uri)),
        );
        let run = fails_with(dir.path(), &[&format!("assets/u{i}.gltf")], "refused_uri");
        assert!(
            run.messages().contains(&format!("'{uri}'")),
            "{}",
            run.messages()
        );
    }
}

#[cfg(unix)]
#[test]
fn fifos_devices_and_symlinks_out_of_the_tree_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let assets = dir.path().join("assets");
    std::fs::create_dir_all(&assets).unwrap();
    std::fs::write(dir.path().join("secret.bin"), [0u8; 48]).unwrap();
    std::os::unix::fs::symlink(dir.path().join("secret.bin"), assets.join("link.bin")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", assets.join("zero.bin")).unwrap();
    let fifo = std::process::Command::new("mkfifo")
        .arg(assets.join("fifo.bin"))
        .status()
        .is_ok_and(|s| s.success());
    // Both links lead out of the asset's tree (to a file, to a device):
    // the reader's confinement refuses them on their real paths.
    let mut cases = vec![
        ("link.bin", "outside the allowed root"),
        ("zero.bin", "outside the allowed root"),
    ];
    if fifo {
        cases.push(("fifo.bin", "FIFO"));
    } else {
        eprintln!("skipped the FIFO case: mkfifo is not available");
    }
    for (uri, why) in cases {
        write_json(&assets.join("a.gltf"), &gltf(&[0.0, 1.0], Some(uri)));
        let run = fails_with(dir.path(), &["assets/a.gltf"], "refused_uri");
        assert!(run.messages().contains(why), "{uri}: {}", run.messages());
    }
    if fifo {
        // The source itself a FIFO: refused, never opened for reading.
        std::process::Command::new("mkfifo")
            .arg(dir.path().join("motion.bvh"))
            .status()
            .unwrap();
        let run = fails_with(dir.path(), &["motion.bvh"], "io");
        assert!(run.messages().contains("FIFO"), "{}", run.messages());
    }
}

#[test]
fn bvh_spans_depths_sjson_and_fbx_headers_over_the_limits_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let one = "HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{\nOFFSET 0 1 0\n}\n}\nMOTION\n";
    std::fs::write(
        d.join("ft.bvh"),
        format!(
            "{one}Frames: 1000\nFrame Time: 1000000\n{}",
            "0 0 0\n".repeat(1000)
        ),
    )
    .unwrap();
    fails_with(d, &["ft.bvh"], "limit_exceeded");
    // A tiny frame time and a large frame count is a short clip: it cooks.
    std::fs::write(
        d.join("tiny.bvh"),
        format!(
            "{one}Frames: 100000\nFrame Time: 0.000000001\n{}",
            "0 0 0\n".repeat(100_000)
        ),
    )
    .unwrap();
    assert!(cook(d, &["tiny.bvh"]).out.status.success());

    let mut deep = String::from(
        "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n",
    );
    for i in 1..100_000 {
        deep.push_str(&format!("JOINT j{i}\n{{\nOFFSET 0 1 0\n"));
    }
    deep.push_str(&"}\n".repeat(100_000));
    deep.push_str("MOTION\nFrames: 2\nFrame Time: 0.0333333\n0 0 0\n1 1 1\n");
    std::fs::write(d.join("deep.bvh"), deep).unwrap();
    let run = fails_with(d, &["deep.bvh"], "limit_exceeded");
    assert!(run.messages().contains("max_hierarchy_depth"));
    let rss = run.report["totals"]["peak_rss_mb"].as_f64().unwrap_or(0.0);
    assert!(rss < 200.0, "100,000-deep hierarchy: {rss} MB");

    std::fs::write(
        d.join("c.sjson"),
        "version = 5\nclip = { name = \"c\" num_samples = 4000000000 sample_rate = 30 is_binary_exact = false }\nbones = [ { name = \"a\" parent = \"\" vertex_distance = 1.0 } ]\ntracks = [ ]\n",
    )
    .unwrap();
    fails_with(d, &["c.sjson"], "limit_exceeded");

    std::fs::write(d.join("span.fbx"), fbx(i64::MAX - 1000)).unwrap();
    let run = fails_with(d, &["span.fbx"], "limit_exceeded");
    assert!(run.messages().contains("max_clip_duration_s"));
}

/// A one-joint ASCII FBX whose animation stack stops at `stop` ticks.
fn fbx(stop: i64) -> String {
    format!(
        "; FBX 7.4.0 project file\nFBXHeaderExtension:  {{\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7400\n}}\n\
         Objects:  {{\n\tNodeAttribute: 1001, \"NodeAttribute::Root\", \"LimbNode\" {{\n\t\tTypeFlags: \"Skeleton\"\n\t}}\n\
         \tModel: 2001, \"Model::Root\", \"LimbNode\" {{\n\t\tVersion: 232\n\t}}\n\
         \tAnimationStack: 3001, \"AnimStack::Take 001\", \"\" {{\n\t\tProperties70:  {{\n\
         \t\t\tP: \"LocalStart\", \"KTime\", \"Time\", \"\",0\n\t\t\tP: \"LocalStop\", \"KTime\", \"Time\", \"\",{stop}\n\t\t}}\n\t}}\n\
         \tAnimationLayer: 3002, \"AnimLayer::BaseLayer\", \"\" {{\n\t}}\n}}\n\
         Connections:  {{\n\tC: \"OO\",2001,0\n\tC: \"OO\",1001,2001\n\tC: \"OO\",3002,3001\n}}\n"
    )
}

#[test]
fn absurd_resampling_rates_are_limit_errors_or_tiny_grids_never_panics() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let standard = std::fs::read_to_string(repo().join("profiles/standard.toml")).unwrap();
    let profile = |rate: &str, min: &str, max: &str| {
        standard
            .replace("policy = \"source\"", "policy = \"fixed\"")
            .replace("rate_hz = 30.0", &format!("rate_hz = {rate}"))
            .replace("min_hz = 1.0", &format!("min_hz = {min}"))
            .replace("max_hz = 240.0", &format!("max_hz = {max}"))
    };
    std::fs::write(d.join("fast.toml"), profile("10000.0", "1.0", "10000.0")).unwrap();
    std::fs::write(
        d.join("slow.toml"),
        profile("0.000000001", "0.000000001", "0.000000001"),
    )
    .unwrap();
    // 5e5 s at 10 kHz is 5e9 frames; the duration limit is raised so the
    // resampler's own check is what stops it.
    write_json(&d.join("long.gltf"), &gltf(&[0.0, 5e5], None));
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[project]\nprofile = \"fast.toml\"\nlimits = { max_clip_duration_s = 1000000.0 }\n[[asset]]\nsources = [\"long.gltf\"]\n",
    )
    .unwrap();
    let run = fails_with(d, &[], "limit_exceeded");
    assert!(
        run.messages().contains("max_samples_per_clip"),
        "{}",
        run.messages()
    );
    write_json(&d.join("short.gltf"), &gltf(&[0.0, 1.0], None));
    let run = cook(d, &["--profile", "slow.toml", "short.gltf"]);
    assert!(run.out.status.code().is_some(), "{}", run.stderr());
}

#[test]
fn manifest_limits_raise_and_lower_what_an_asset_may_use() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("chain.bvh"), chain_bvh(40, 10)).unwrap();
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[project]\nlimits = { max_joints = 100 }\n[[asset]]\nsources = [\"chain.bvh\"]\nlimits = { max_hierarchy_depth = 30 }\n",
    )
    .unwrap();
    let run = fails_with(d, &[], "limit_exceeded");
    assert!(
        run.messages().contains("max_hierarchy_depth = 30"),
        "{}",
        run.messages()
    );
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[project]\nlimits = { max_joints = 100 }\n[[asset]]\nsources = [\"chain.bvh\"]\n",
    )
    .unwrap();
    assert!(cook(d, &[]).out.status.success());
}

#[test]
fn limit_flags_override_the_manifest() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::write(d.join("chain.bvh"), chain_bvh(40, 10)).unwrap();
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[project]\nlimits = { max_joints = 100 }\n[[asset]]\nsources = [\"chain.bvh\"]\n",
    )
    .unwrap();
    let run = fails_with(d, &["--limit", "max_joints=20"], "limit_exceeded");
    assert!(
        run.messages().contains("max_joints = 20"),
        "{}",
        run.messages()
    );
    let run = fails_with(d, &["--limit", "max_file_bytes=1K"], "limit_exceeded");
    assert!(
        run.messages().contains("max_file_bytes = 1024"),
        "{}",
        run.messages()
    );
    assert!(cook(d, &["--limit", "max_joints=41"]).out.status.success());
    for bad in [
        "max_jionts=3",
        "max_joints=0",
        "max_file_bytes=lots",
        "max_joints",
    ] {
        let run = cook(d, &["--limit", bad]);
        assert_eq!(run.out.status.code(), Some(2), "{bad}: {}", run.stderr());
        assert!(run.stderr().contains("--limit"), "{bad}: {}", run.stderr());
    }
}

#[test]
fn a_1000_joint_chain_cooks_in_seconds() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("chain.bvh"), chain_bvh(1000, 30)).unwrap();
    let run = cook(dir.path(), &["chain.bvh"]);
    assert!(run.out.status.success(), "{}", run.stderr());
    assert_eq!(run.report["assets"][0]["skeleton"]["joints"], 1000);
    // Measured 2.1 s on two cores (it was 9.2 s before the repair fix,
    // and grew cubically with depth); the bound leaves room for load.
    // Generous for a loaded 2-core CI machine (7 s alone, 17 s beside the
    // robustness test); the super-linear encode it guards took 266 s.
    assert!(run.took < Duration::from_secs(30), "{:?}", run.took);
}
