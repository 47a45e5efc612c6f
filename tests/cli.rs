//! End-to-end tests of the `ludus-anim` command line.

mod common;
use common::*;
use ludus_anim_runtime::Package;

#[test]
fn cook_without_arguments_cooks_the_bundled_fixtures() {
    let tmp = tempfile::tempdir().unwrap();
    // Run from an empty directory: the bundled fixtures are found anyway
    // and the default output directory is ./out.
    let o = ludus_anim(&["cook"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = tmp.path().join("out");
    let r = report(&out);
    assert_eq!(r["totals"]["assets_failed"], 0);
    let a = &r["assets"][0];
    assert_eq!(a["status"], "ok");
    let clips: Vec<&str> = a["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for want in ["idle", "walk", "run"] {
        assert!(clips.contains(&want), "{clips:?}");
    }
    let bytes = std::fs::read(package_path(&out, &r, 0)).unwrap();
    let p = Package::load(&bytes).unwrap();
    assert!(p.skeleton().joint_count() >= 20);
    // A joint subset decodes exactly as the full pose does.
    let walk = p.clip("walk").unwrap();
    let n = p.skeleton().joint_count();
    let mut full = vec![ludus_anim_runtime::Transform::IDENTITY; n];
    let subset = [n as u32 - 1, 0, 5];
    let mut part = vec![ludus_anim_runtime::Transform::IDENTITY; subset.len()];
    let rest = p.skeleton().rest_pose();
    let mut player = ludus_anim_runtime::Player::new(walk, rest).unwrap();
    for t in [0.0, 0.37, 1.1] {
        assert!(walk.sample(t, rest, &mut full).is_ok());
        player.seek(t);
        let joints = ludus_anim_runtime::Request::Joints(&subset);
        assert!(player.decode(joints, &mut part).is_ok());
        for (k, &j) in subset.iter().enumerate() {
            assert_eq!(part[k], full[j as usize], "joint {j} at t={t}");
        }
    }
    // The morph weight curve made it into the package.
    let idle = p.clip("idle").unwrap();
    assert!(p
        .clip_curves(idle)
        .iter()
        .any(|c| c.name().contains("Breathe")));
}

#[test]
fn cooking_twice_gives_identical_packages() {
    let tmp = tempfile::tempdir().unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let b = biped.to_str().unwrap();
    for out in ["a", "b"] {
        let o = ludus_anim(&["cook", b, "--out", out], tmp.path());
        assert!(o.status.success(), "{}", text(&o));
    }
    let ra = report(&tmp.path().join("a"));
    let rb = report(&tmp.path().join("b"));
    assert_eq!(ra["assets"][0]["package"], rb["assets"][0]["package"]);
    let pa = std::fs::read(package_path(&tmp.path().join("a"), &ra, 0)).unwrap();
    let pb = std::fs::read(package_path(&tmp.path().join("b"), &rb, 0)).unwrap();
    assert!(pa == pb, "packages differ between identical cooks");
}

#[test]
fn inspect_prints_text_and_json() {
    let tmp = tempfile::tempdir().unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let o = ludus_anim(&["cook", biped.to_str().unwrap(), "--out", "o"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&tmp.path().join("o"));
    let pkg = package_path(&tmp.path().join("o"), &r, 0);
    let o = ludus_anim(&["inspect", pkg.to_str().unwrap()], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let s = String::from_utf8_lossy(&o.stdout);
    assert!(
        s.contains("skeleton:") && s.contains("walk:") && s.contains("Breathe"),
        "{s}"
    );
    let o = ludus_anim(&["inspect", "--json", pkg.to_str().unwrap()], tmp.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["format_version"],
        ludus_anim_format::package::FORMAT_VERSION
    );
    assert_eq!(v["clips"].as_array().unwrap().len(), 3);
}

#[test]
fn inspect_rejects_a_corrupted_package_with_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bad.ludanim"), b"LUDANIM\0garbage").unwrap();
    let o = ludus_anim(&["inspect", "bad.ludanim"], tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("bad.ludanim"));
}

#[test]
fn unknown_profile_and_bad_profile_file_exit_2() {
    let tmp = tempfile::tempdir().unwrap();
    let o = ludus_anim(&["cook", "--profile", "nope"], tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("unknown profile 'nope'"));
    std::fs::write(
        tmp.path().join("p.toml"),
        "name = 'x'\ncodec = 'vbr'\nerror_threshold = 1\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook", "--profile", "p.toml"], tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("p.toml"),
        "{}",
        text(&o)
    );
}

/// Writes a small glTF (node animation, one buffer as a data URI) with the
/// given node JSON and animation output values, for malformed-input tests.
fn tiny_gltf(nodes: &str, scene_nodes: &str, times: &[f32], values: &[f32], path: &str) -> String {
    let mut buf = Vec::new();
    for t in times {
        buf.extend_from_slice(&t.to_le_bytes());
    }
    let out_off = buf.len();
    for v in values {
        buf.extend_from_slice(&v.to_le_bytes());
    }
    let b64 = base64_encode(&buf);
    let n = times.len();
    let (tmin, tmax) = (times[0], times[n - 1]);
    let (ty, comps) = if path == "rotation" {
        ("VEC4", 4)
    } else {
        ("VEC3", 3)
    };
    assert_eq!(values.len(), n * comps);
    format!(
        r#"{{"asset":{{"version":"2.0"}},"scene":0,"scenes":[{{"nodes":{scene_nodes}}}],
        "nodes":{nodes},
        "buffers":[{{"byteLength":{len},"uri":"data:application/octet-stream;base64,{b64}"}}],
        "bufferViews":[{{"buffer":0,"byteOffset":0,"byteLength":{tl}}},{{"buffer":0,"byteOffset":{out_off},"byteLength":{ol}}}],
        "accessors":[{{"bufferView":0,"componentType":5126,"count":{n},"type":"SCALAR","min":[{tmin}],"max":[{tmax}]}},
                     {{"bufferView":1,"componentType":5126,"count":{n},"type":"{ty}"}}],
        "animations":[{{"name":"clip","samplers":[{{"input":0,"output":1,"interpolation":"LINEAR"}}],
                        "channels":[{{"sampler":0,"target":{{"node":1,"path":"{path}"}}}}]}}]}}"#,
        len = buf.len(),
        tl = n * 4,
        ol = values.len() * 4,
    )
}

fn base64_encode(b: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in b.chunks(3) {
        let v = (c[0] as u32) << 16
            | (*c.get(1).unwrap_or(&0) as u32) << 8
            | *c.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= c.len() {
                s.push(T[(v >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

const TWO_NODES: &str = r#"[{"name":"root","children":[1]},{"name":"arm","translation":[0,1,0]}]"#;

/// Cook `file` (written into a fresh dir) and expect a failure whose
/// diagnostics include `code`, exit status 1, and no package or temp file.
fn expect_failure(name: &str, contents: &[u8], code: &str) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join(name), contents).unwrap();
    let o = ludus_anim(&["cook", name, "--out", "out"], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{name}: {}", text(&o));
    let r = report(&tmp.path().join("out"));
    let a = &r["assets"][0];
    assert_eq!(a["status"], "failed", "{name}");
    let codes: Vec<&str> = a["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert!(
        codes.contains(&code),
        "{name}: expected diagnostic {code}, got {codes:?}\n{}",
        text(&o)
    );
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains(name),
        "{name}: stderr must name the file: {stderr}"
    );
    // Only the cook's own records (and the publication's lock and
    // generation files): no package, no temp file.
    let files = all_files(&tmp.path().join("out"));
    let records = [
        "report.json",
        "manifest.json",
        "report-sidecar.json",
        ".lock",
        ".generation",
    ];
    assert_eq!(
        files
            .iter()
            .filter(|f| !records.iter().any(|r| f.ends_with(r)))
            .count(),
        0,
        "{name}: files left behind: {files:?}"
    );
}

#[test]
fn nan_key_is_an_error_naming_clip_joint_and_time() {
    let g = tiny_gltf(
        TWO_NODES,
        "[0]",
        &[0.0, 0.5],
        &[0.0, 1.0, 0.0, f32::NAN, 1.0, 0.0],
        "translation",
    );
    expect_failure("nan.gltf", g.as_bytes(), "bad_key");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("nan.gltf"), &g).unwrap();
    let o = ludus_anim(&["cook", "nan.gltf"], tmp.path());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("clip 'clip'")
            && stderr.contains("joint 'arm'")
            && stderr.contains("t=0.5"),
        "{stderr}"
    );
}

#[test]
fn negative_scale_is_an_error() {
    let g = tiny_gltf(
        TWO_NODES,
        "[0]",
        &[0.0, 1.0],
        &[1.0, 1.0, 1.0, 1.0, -1.0, 1.0],
        "scale",
    );
    expect_failure("negscale.gltf", g.as_bytes(), "bad_scale");
}

#[test]
fn cyclic_and_multi_parent_hierarchies_are_errors() {
    let cyclic = r#"[{"name":"a","children":[1]},{"name":"b","children":[0]}]"#;
    let g = tiny_gltf(cyclic, "[0]", &[0.0, 1.0], &[0.0; 6], "translation");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("cyclic.gltf"), &g).unwrap();
    let o = ludus_anim(&["cook", "cyclic.gltf", "--out", "out"], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(all_files(&tmp.path().join("out/packages")).is_empty());

    let multi = r#"[{"name":"a","children":[2]},{"name":"b","children":[2]},{"name":"c"}]"#;
    let g = tiny_gltf(multi, "[0,1]", &[0.0, 1.0], &[0.0; 6], "translation");
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("multi.gltf"), &g).unwrap();
    let o = ludus_anim(&["cook", "multi.gltf", "--out", "out"], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(all_files(&tmp.path().join("out/packages")).is_empty());
}

#[test]
fn truncated_glb_and_bad_accessor_are_errors() {
    let biped = std::fs::read(repo().join("fixtures/biped.glb")).unwrap();
    for cut in [10, 100, biped.len() / 2, biped.len() - 1] {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join("cut.glb"), &biped[..cut]).unwrap();
        let o = ludus_anim(&["cook", "cut.glb", "--out", "out"], tmp.path());
        assert_eq!(o.status.code(), Some(1), "cut at {cut}: {}", text(&o));
        assert!(all_files(&tmp.path().join("out/packages")).is_empty());
    }
    // An accessor that reads past its buffer view.
    let g = tiny_gltf(TWO_NODES, "[0]", &[0.0, 1.0], &[0.0; 6], "translation")
        .replace(r#""count":2,"type":"VEC3""#, r#""count":9,"type":"VEC3""#);
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("acc.gltf"), &g).unwrap();
    let o = ludus_anim(&["cook", "acc.gltf", "--out", "out"], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(all_files(&tmp.path().join("out/packages")).is_empty());
}

#[test]
fn a_good_asset_still_cooks_beside_a_bad_one() {
    let tmp = tempfile::tempdir().unwrap();
    let g = tiny_gltf(
        TWO_NODES,
        "[0]",
        &[0.0, 1.0],
        &[1.0, 1.0, 1.0, 1.0, -1.0, 1.0],
        "scale",
    );
    std::fs::write(tmp.path().join("bad.gltf"), g).unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let o = ludus_anim(
        &["cook", "bad.gltf", biped.to_str().unwrap(), "--out", "out"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = report(&tmp.path().join("out"));
    assert_eq!(r["assets"][0]["status"], "failed");
    assert_eq!(r["assets"][1]["status"], "ok");
    assert!(package_path(&tmp.path().join("out"), &r, 1).is_file());
}

#[test]
fn verification_failure_fails_the_cook() {
    // The encoder aims 50x above the profile's threshold; verification,
    // which keeps the profile's threshold, must catch it.
    let tmp = tempfile::tempdir().unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let o = ludus_anim(
        &[
            "cook",
            biped.to_str().unwrap(),
            "--out",
            "out",
            "--debug-encoder-slack",
            "50",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("verification_failed") && stderr.contains("exceeds the profile"),
        "{stderr}"
    );
    assert!(all_files(&tmp.path().join("out/packages")).is_empty());
}

/// `bench --packages DIR` measures every package under the directory, and
/// a package that does not load is named on stderr with the reason and
/// fails the run, while the others are still measured.
#[test]
fn bench_measures_a_directory_of_packages_and_names_a_bad_one() {
    let tmp = tempfile::tempdir().unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let cook = ludus_anim(&["cook", biped.to_str().unwrap(), "-o", "out"], tmp.path());
    assert!(cook.status.success(), "{}", text(&cook));
    let args = [
        "bench",
        "--packages",
        "out/packages",
        "--no-acl",
        "--cold-iterations",
        "3",
    ];
    // A link back up the tree is not followed (the walk would not end).
    #[cfg(unix)]
    std::os::unix::fs::symlink("..", tmp.path().join("out/packages/up")).unwrap();
    let o = ludus_anim(&args, tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    assert_eq!(table.matches(".ludanim:").count(), 3, "{table}");
    for clip in [":idle", ":walk", ":run"] {
        assert!(table.contains(clip), "{clip} missing from\n{table}");
    }
    std::fs::write(tmp.path().join("out/packages/broken.ludanim"), b"LUDANIM?").unwrap();
    let o = ludus_anim(&args, tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("broken.ludanim") && stderr.contains("does not load"),
        "{stderr}"
    );
    assert!(String::from_utf8_lossy(&o.stdout).contains(":walk"));
    let missing = ludus_anim(
        &["bench", "--packages", "nothing-here", "--no-acl"],
        tmp.path(),
    );
    assert_eq!(missing.status.code(), Some(1), "{}", text(&missing));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("nothing-here"));
    std::fs::create_dir(tmp.path().join("empty")).unwrap();
    let empty = ludus_anim(&["bench", "--packages", "empty", "--no-acl"], tmp.path());
    assert_eq!(empty.status.code(), Some(2), "{}", text(&empty));
}

/// `bench` runs from the command line, prints its table and writes the
/// same figures as JSON: every column present and plausible, for the
/// bundled biped and, where the ACL anchors exist, one ACL clip beside
/// ACL's own figures.
#[test]
fn bench_prints_the_table_and_its_json() {
    let tmp = tempfile::tempdir().unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let mut args = vec![
        "bench".to_string(),
        biped.to_str().unwrap().to_string(),
        "--profiles".into(),
        "crowd".into(),
        "--cold-iterations".into(),
        "5".into(),
        "--out".into(),
        "bench.json".into(),
    ];
    let anchors = shared_anchors();
    match &anchors {
        Some(dir) => {
            // A one-clip anchor directory keeps the side-by-side quick.
            let mini = tmp.path().join("anchors");
            std::fs::create_dir_all(mini.join("acl-clips")).unwrap();
            let clip = "quaternius_KnightCharacter__HumanArmature_Idle.acl.sjson";
            std::fs::copy(
                dir.join("acl-clips").join(clip),
                mini.join("acl-clips").join(clip),
            )
            .unwrap();
            std::fs::copy(dir.join("acl.md"), mini.join("acl.md")).unwrap();
            std::fs::copy(
                dir.join("acl_dev_clips.csv"),
                mini.join("acl_dev_clips.csv"),
            )
            .unwrap();
            args.extend(["--anchors".into(), mini.to_str().unwrap().to_string()]);
        }
        None => {
            eprintln!("skipped: the ACL side-by-side (../shared/anchors not found)");
            args.push("--no-acl".into());
        }
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ludus_anim(&args, tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let table = String::from_utf8_lossy(&o.stdout);
    for column in [
        "ours B",
        "max mm",
        "p99 mm",
        "comp ms",
        "warm ns",
        "strict ns",
        "copies ns",
        "sub10",
        "by-joint",
    ] {
        assert!(table.contains(column), "{column} missing from\n{table}");
    }
    let json: serde_json::Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("bench.json")).unwrap()).unwrap();
    let rows = json["fixtures"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3, "idle, walk, run");
    // The load and method the figures were taken under, in both outputs.
    let conditions = &json["conditions"];
    assert!(conditions["usable_cpus"].as_u64().unwrap() >= 1);
    assert!(conditions["method"]
        .as_str()
        .unwrap()
        .contains("ACL's method"));
    if cfg!(target_os = "linux") {
        for k in ["load_before", "load_after"] {
            assert_eq!(conditions[k].as_array().map(Vec::len), Some(3), "{k}");
        }
    }
    assert!(
        table.contains("conditions: ") && table.contains("load average"),
        "{table}"
    );
    for r in rows {
        assert_eq!(r["profile"], "crowd");
        assert!(r["compressed_bytes"].as_u64().unwrap() > 0);
        assert!(r["compressed_bytes"].as_u64() < r["raw_bytes"].as_u64());
        assert!(r["max_error_m"].as_f64().unwrap() <= r["threshold_m"].as_f64().unwrap());
        for k in ["decode_warm_ns", "decode_cold_ns", "decode_copies_ns"] {
            let ns = r[k].as_f64().unwrap();
            assert!(ns > 0.0 && ns < 1e6, "{k} = {ns}");
        }
        let [fast, slow] = [0, 1].map(|i| r["decode"]["pose_passes_ns"][i].as_f64().unwrap());
        let pose = r["decode"]["pose_ns"].as_f64().unwrap();
        assert!(
            fast > 0.0 && fast <= pose && pose <= slow,
            "{fast} {pose} {slow}"
        );
        assert!(r["decode"]["copies"].as_u64().unwrap() >= 16);
        for k in [
            "pose_ns",
            "oneshot_pose_ns",
            "first_joint_ns",
            "middle_joint_ns",
            "last_joint_ns",
            "subset10_ns",
            "joint_by_joint_ns",
            "strict_pose_ns",
            "strict_last_joint_ns",
        ] {
            let ns = r["decode"][k].as_f64().unwrap();
            assert!(ns > 0.0 && ns < 1e7, "decode.{k} = {ns}");
        }
    }
    if anchors.is_some() {
        let rows = json["acl"]["rows"].as_array().unwrap();
        assert_eq!(rows.len(), 1);
        assert_eq!(rows[0]["acl_bytes"], 4982);
        // No stored ACL decode figure, and no ratio to one: ours alone
        // (the sizes are still set against ACL's).
        assert!(rows[0].get("acl_decode").is_none());
        assert!(!table.contains("geomean"), "{table}");
        assert!(conditions["acl_basis"]
            .as_str()
            .unwrap()
            .contains("ACL ran beside ours"));
        assert!(table.contains("ACL ran beside ours"), "{table}");
    }
}
