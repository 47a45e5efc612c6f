//! Per-asset hermetic actions, end to end through the `ludus-anim` binary:
//! - `query` lists every file each asset's cook reads (a `.gltf`'s
//!   buffers, profile files, the retarget profile and target, the
//!   manifest): `cook-asset` given exactly those inputs cooks every asset;
//! - `cook-asset` refuses to read anything undeclared (the asset fails
//!   naming the file), and writes only its fixed-name outputs;
//! - `merge` joins the fragments into the packages, `manifest.json`,
//!   `report.json` (timings aside) and `report-sidecar.json` an unsharded
//!   `cook` writes, byte for byte; it refuses duplicates, strangers,
//!   missing assets and packages that do not match their hash.

mod common;

use common::hermetic::hermetic_project;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn query(proj: &Path) -> Value {
    let o = ludus_anim(&["query"], proj);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("query prints JSON")
}

/// `cook-asset` for one queried asset with `inputs` declared, into
/// `frags/<name>`.
fn cook_asset(proj: &Path, asset: &Value, inputs: &[&str]) -> std::process::Output {
    let out = format!("frags/{}", asset["name"].as_str().unwrap());
    let mut args = vec![
        "--quiet",
        "cook-asset",
        asset["source"].as_str().unwrap(),
        "--manifest",
        "ludus-anim.toml",
        "--out",
        &out,
    ];
    for i in inputs {
        args.extend(["--input", i]);
    }
    ludus_anim(&args, proj)
}

fn all_inputs(asset: &Value) -> Vec<&str> {
    asset["all_inputs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect()
}

fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn query_lists_each_assets_inputs() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    hermetic_project(&fx, &proj);
    let q = query(&proj);
    let assets = q["assets"].as_array().unwrap();
    let sources: Vec<&str> = assets
        .iter()
        .map(|a| a["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        [
            "src/cmu_walk.bvh",
            "gltf/blenderio_06_parent-inverse-anim/06_parent-inverse-anim.gltf",
            "gltf/khronos_InterpolationTest/interpolation_test.gltf",
            "biped.glb",
            "robot.fbx"
        ],
        "job order"
    );
    let walk = &assets[0]["inputs"];
    assert_eq!(walk["retarget_profile"], "cmu_to_knight.toml");
    assert_eq!(walk["retarget_target"], "rig/knight.glb");
    assert_eq!(walk["profiles"], serde_json::json!(["custom.toml"]));
    assert_eq!(walk["manifest"], "ludus-anim.toml");
    assert_eq!(
        assets[2]["inputs"]["companions"],
        serde_json::json!(["gltf/khronos_InterpolationTest/interpolation_test.bin"])
    );
    // The default profile file is read by every cook, used or not.
    assert_eq!(
        all_inputs(&assets[4]),
        ["custom.toml", "ludus-anim.toml", "robot.fbx"]
    );
    assert_eq!(assets[3]["name"], "biped_glb");
    assert_eq!(assets[3]["outputs"]["package"], "asset.ludanim");
    assert_eq!(assets[3]["outputs"]["sidecar"], "asset.sidecar.part");
}

#[test]
fn asset_actions_merge_into_the_unsharded_cook() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    hermetic_project(&fx, &proj);
    let o = ludus_anim(&["cook", "--quiet", "--no-cache"], &proj);
    assert!(o.status.success(), "{}", text(&o));
    let q = query(&proj);
    std::fs::write(
        tmp.path().join("query.json"),
        serde_json::to_vec(&q).unwrap(),
    )
    .unwrap();
    let assets = q["assets"].as_array().unwrap();
    // Cooked in reverse order: the merge follows the query's order.
    let mut dirs = Vec::new();
    for a in assets.iter().rev() {
        let o = cook_asset(&proj, a, &all_inputs(a));
        assert!(o.status.success(), "{}: {}", a["source"], text(&o));
        let dir = proj.join("frags").join(a["name"].as_str().unwrap());
        assert_eq!(
            names(&dir),
            [
                "asset.ludanim",
                "asset.manifest.json",
                "asset.report.json",
                "asset.sidecar.part"
            ],
            "only the declared outputs"
        );
        dirs.push(dir.display().to_string());
    }
    assert!(
        !proj.join(".ludus-cache").exists(),
        "no cache unless --cache names one"
    );
    let order = tmp.path().join("query.json").display().to_string();
    let mut args = vec!["merge", "--order", &order, "--out", "merged"];
    args.extend(dirs.iter().map(String::as_str));
    let o = ludus_anim(&args, &proj);
    assert!(o.status.success(), "{}", text(&o));
    let (whole, merged) = (proj.join("out"), proj.join("merged"));
    assert_eq!(packages(&whole), packages(&merged), "packages");
    for f in ["manifest.json", "report-sidecar.json"] {
        assert!(
            std::fs::read(whole.join(f)).unwrap() == std::fs::read(merged.join(f)).unwrap(),
            "{f} differs"
        );
    }
    let (mut a, mut b) = (report(&whole), report(&merged));
    strip(&mut a, TIMING);
    strip(&mut b, TIMING);
    assert_eq!(a, b, "report.json (timings aside; stage counters add up)");
    // Without --order the directories' order is kept.
    let mut args = vec!["merge", "--out", "unordered"];
    args.extend(dirs.iter().map(String::as_str));
    assert!(ludus_anim(&args, &proj).status.success());
    let first = &report(&proj.join("unordered"))["assets"][0]["source"];
    assert_eq!(first, "robot.fbx");
}

#[test]
fn an_undeclared_read_fails_the_action() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    hermetic_project(&fx, &proj);
    let q = query(&proj);
    let assets = q["assets"].as_array().unwrap();
    let without = |a: &Value, left_out: &str| -> Vec<String> {
        all_inputs(a)
            .into_iter()
            .filter(|i| *i != left_out)
            .map(str::to_string)
            .collect()
    };
    let refused = |a: &Value, left_out: &str, code: i32| {
        let inputs = without(a, left_out);
        let refs: Vec<&str> = inputs.iter().map(String::as_str).collect();
        let o = cook_asset(&proj, a, &refs);
        assert_eq!(o.status.code(), Some(code), "{}", text(&o));
        let said = String::from_utf8_lossy(&o.stderr);
        assert!(
            said.contains(&format!("{left_out}' is not a declared input")),
            "{said}"
        );
        let dir = proj.join("frags").join(a["name"].as_str().unwrap());
        assert!(!dir.join("asset.ludanim").exists(), "no package");
    };
    // A glTF buffer, the retarget target, the retarget profile: the asset
    // fails (exit 1) naming the file; a profile file fails the action
    // before any asset (exit 2, as a bad profile fails `cook`).
    refused(
        &assets[2],
        "gltf/khronos_InterpolationTest/interpolation_test.bin",
        1,
    );
    refused(&assets[0], "rig/knight.glb", 1);
    refused(&assets[0], "cmu_to_knight.toml", 1);
    refused(&assets[4], "custom.toml", 2);
    // A previous run's package does not outlive a failed one.
    let biped = &assets[3];
    assert!(cook_asset(&proj, biped, &all_inputs(biped))
        .status
        .success());
    std::fs::write(proj.join("biped.glb"), b"not a glb").unwrap();
    let o = cook_asset(&proj, biped, &all_inputs(biped));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(!proj.join("frags/biped_glb/asset.ludanim").exists());
    // A source no [[asset]] entry matches is refused.
    std::fs::write(proj.join("stray.bvh"), b"").unwrap();
    let o = ludus_anim(
        &[
            "cook-asset",
            "stray.bvh",
            "--manifest",
            "ludus-anim.toml",
            "--out",
            "x",
        ],
        &proj,
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("is not an asset of"), "{}", text(&o));
}

#[test]
fn merge_refuses_what_is_not_one_cook() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    hermetic_project(&fx, &proj);
    let q = query(&proj);
    let qpath = tmp.path().join("query.json");
    std::fs::write(&qpath, serde_json::to_vec(&q).unwrap()).unwrap();
    let assets = q["assets"].as_array().unwrap();
    let mut dirs: Vec<PathBuf> = Vec::new();
    for a in &assets[3..] {
        assert!(cook_asset(&proj, a, &all_inputs(a)).status.success());
        dirs.push(proj.join("frags").join(a["name"].as_str().unwrap()));
    }
    let merge = |extra: &[&str], dirs: &[&Path]| {
        let d: Vec<String> = dirs.iter().map(|p| p.display().to_string()).collect();
        let mut args = vec!["merge", "--out", "m"];
        args.extend(extra);
        args.extend(d.iter().map(String::as_str));
        ludus_anim(&args, &proj)
    };
    let refused = |o: std::process::Output, says: &str| {
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(says), "{says}: {}", text(&o));
    };
    let (biped, robot) = (dirs[0].as_path(), dirs[1].as_path());
    refused(merge(&[], &[biped, biped]), "'biped.glb' has two fragments");
    let order = qpath.display().to_string();
    refused(
        merge(&["--order", &order], &[biped, robot]),
        "no fragment for 'src/cmu_walk.bvh'",
    );
    let mut only_robot = q.clone();
    only_robot["assets"] = serde_json::json!([assets[4].clone()]);
    let qrobot = tmp.path().join("robot.json");
    std::fs::write(&qrobot, serde_json::to_vec(&only_robot).unwrap()).unwrap();
    let qrobot = qrobot.display().to_string();
    refused(merge(&["--order", &qrobot], &[biped, robot]), "'biped.glb'");
    let mut package = std::fs::read(biped.join("asset.ludanim")).unwrap();
    package[40] ^= 1;
    std::fs::write(biped.join("asset.ludanim"), package).unwrap();
    refused(merge(&[], &[biped, robot]), "do not match");
    refused(
        merge(&[], &[biped, &proj]),
        "not a `cook-asset` output directory",
    );
    assert!(!proj.join("m/manifest.json").exists(), "nothing published");
}

/// A build sandbox: each declared input a symbolic link to its real
/// place, in a tree of its own. The action cooks the same package there
/// (companion confinement compares the links' paths, not their targets),
/// and a link that is not declared is still refused.
#[cfg(unix)]
#[test]
fn a_sandbox_of_links_cooks_the_same_package() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let proj = tmp.path().join("proj");
    hermetic_project(&fx, &proj);
    let q = query(&proj);
    let gltf = &q["assets"][2];
    assert!(cook_asset(&proj, gltf, &all_inputs(gltf)).status.success());
    let sandbox = tmp.path().join("sandbox");
    for i in all_inputs(gltf) {
        let link = sandbox.join("proj").join(i);
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(proj.join(i), &link).unwrap();
    }
    let inputs: Vec<String> = all_inputs(gltf)
        .iter()
        .map(|i| format!("proj/{i}"))
        .collect();
    let mut args = vec![
        "--quiet",
        "cook-asset",
        "proj/gltf/khronos_InterpolationTest/interpolation_test.gltf",
        "--manifest",
        "proj/ludus-anim.toml",
        "--out",
        "out",
    ];
    for i in &inputs {
        args.extend(["--input", i]);
    }
    let o = ludus_anim(&args, &sandbox);
    assert!(o.status.success(), "{}", text(&o));
    let name = gltf["name"].as_str().unwrap();
    for f in ["asset.ludanim", "asset.manifest.json"] {
        assert!(
            std::fs::read(sandbox.join("out").join(f)).unwrap()
                == std::fs::read(proj.join("frags").join(name).join(f)).unwrap(),
            "{f} differs in the sandbox"
        );
    }
    // The buffer's link is there but not declared: refused.
    let bin = "proj/gltf/khronos_InterpolationTest/interpolation_test.bin";
    let at = args.iter().position(|a| *a == bin).unwrap();
    args.drain(at - 1..=at);
    let o = ludus_anim(&args, &sandbox);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("is not a declared input"), "{}", text(&o));
}
