//! Every FBX and BVH file in ../shared/fixtures cooks, loads and verifies
//! through the CLI; the same motion delivered in two formats cooks to the
//! same component-space joint positions.

mod common;
use common::*;
use ludus_anim_format::math::Vec3;
use ludus_anim_runtime::{Affine3A, Package, Transform};
use std::path::Path;

fn cook_all(prefix: &str, extra: &[&str]) {
    let Some(fx) = shared_fixtures() else { return };
    let files = manifest_files(&fx, prefix);
    assert!(!files.is_empty());
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        let out = tmp.path().join(format!("o{i}"));
        let mut args = vec!["cook", f.to_str().unwrap(), "--out", out.to_str().unwrap()];
        args.extend_from_slice(extra);
        let o = ludus_anim(&args, tmp.path());
        if !o.status.success() {
            failures.push(format!("{name}: {}", text(&o)));
            continue;
        }
        let r = report(&out);
        let a = &r["assets"][0];
        for c in a["clips"].as_array().unwrap() {
            let (err, thr) = (
                c["max_error_m"].as_f64().unwrap(),
                c["threshold_m"].as_f64().unwrap(),
            );
            if err > thr {
                failures.push(format!("{name} clip {}: error {err} > {thr}", c["name"]));
            }
        }
        let bytes = std::fs::read(package_path(&out, &r, 0)).unwrap();
        match Package::load(&bytes) {
            Ok(p) => eprintln!(
                "ok: {name}: {} joints, {} clips",
                p.skeleton().joint_count(),
                p.clips().len()
            ),
            Err(e) => failures.push(format!("{name}: package does not load: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_fbx_fixture_cooks_loads_and_verifies() {
    cook_all("fbx/", &[]);
}

#[test]
fn every_bvh_fixture_cooks_loads_and_verifies() {
    cook_all("bvh/", &[]);
}

fn cook_one(file: &Path, dir: &Path, name: &str) -> Vec<u8> {
    let out = dir.join(name);
    let o = ludus_anim(
        &[
            "cook",
            file.to_str().unwrap(),
            "--out",
            out.to_str().unwrap(),
        ],
        dir,
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&out);
    std::fs::read(package_path(&out, &r, 0)).unwrap()
}

fn component_positions(p: &Package<'_>, clip: &str, t: f32) -> Vec<(String, Vec3)> {
    let sk = p.skeleton();
    let c = p.clip(clip).unwrap_or_else(|| panic!("clip {clip}"));
    let mut local = vec![Transform::IDENTITY; sk.joint_count()];
    assert!(c.sample(t, sk.rest_pose(), &mut local).is_ok());
    let mut comp = vec![Affine3A::IDENTITY; sk.joint_count()];
    sk.local_to_component(&local, &mut comp);
    (0..sk.joint_count())
        .map(|j| (sk.name(j).to_string(), Vec3::from(comp[j].translation)))
        .collect()
}

/// The Quaternius Knight ships as .glb and .fbx from the same Blender
/// scene. Joints present in both, sampled at the same times, must sit at
/// the same place in component space (meters, +Y up).
#[test]
fn knight_glb_and_fbx_cook_to_the_same_motion() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let glb = cook_one(
        &fx.join("gltf/quaternius_KnightCharacter.glb"),
        tmp.path(),
        "g",
    );
    let fbx = cook_one(
        &fx.join("fbx/quaternius_KnightCharacter.fbx"),
        tmp.path(),
        "f",
    );
    let (g, f) = (Package::load(&glb).unwrap(), Package::load(&fbx).unwrap());
    // Stated tolerance: 1 mm (measured: 0.19 mm worst over ~15,800 joint
    // positions). Each codec may add up to 0.1 mm; the rest is the two
    // exporters' own rounding.
    const TOL: f32 = 0.001;
    let mut compared = 0;
    let mut worst = (0.0f32, String::new());
    for clip in g.clips() {
        let Some(fc) = f.clip(clip.name()) else {
            continue;
        };
        let d = clip.duration_s().min(fc.duration_s());
        // At the exported frames (24 fps). Between frames the two files
        // genuinely differ: Blender wrote the FBX as Euler curves that ufbx
        // interpolates per angle (some wrap through a full turn within one
        // frame), the glTF as quaternion keys.
        let frames = (d * 24.0).round() as i32;
        for k in 0..=frames {
            let t = k as f32 / 24.0;
            let a = component_positions(&g, clip.name(), t);
            let b = component_positions(&f, clip.name(), t);
            for (name, pa) in &a {
                if let Some((_, pb)) = b.iter().find(|(n, _)| n == name) {
                    let e = (*pa - *pb).length();
                    if e > worst.0 {
                        worst = (e, format!("clip '{}' joint '{name}' t={t}", clip.name()));
                    }
                    compared += 1;
                }
            }
        }
    }
    eprintln!(
        "compared {compared} joint positions; worst {:.3} mm at {}",
        worst.0 * 1000.0,
        worst.1
    );
    assert!(compared > 1000, "too few shared joints/clips: {compared}");
    assert!(worst.0 <= TOL, "worst {} m at {}", worst.0, worst.1);
}

#[test]
fn acl_sjson_clips_cook_with_units_and_file_shell_distances() {
    let Some(anchors) = shared_anchors() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut args: Vec<String> = vec![
        "cook".into(),
        "--units".into(),
        "cm".into(),
        "--out".into(),
        "o".into(),
    ];
    let mut files: Vec<_> = std::fs::read_dir(anchors.join("acl-clips"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    files.sort();
    args.extend(files.iter().map(|p| p.display().to_string()));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = ludus_anim(&refs, tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&tmp.path().join("o"));
    assert_eq!(r["totals"]["clips"], files.len());
    for a in r["assets"].as_array().unwrap() {
        for c in a["clips"].as_array().unwrap() {
            assert!(
                c["max_error_m"].as_f64().unwrap() <= 0.0001,
                "{} {}",
                a["source"],
                c["name"]
            );
        }
    }
}

/// Custom animated FBX properties the manifest asks for become scalar
/// curves in the package (the ozz robot's `grasp` and `lock_orientation`).
#[test]
fn manifest_requested_fbx_properties_become_curves() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(fx.join("fbx/ozz_robot.fbx"), d.join("robot.fbx")).unwrap();
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[[asset]]\nsources = [\"robot.fbx\"]\ncurves = [\"grasp\", \"lock_orientation\"]\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&d.join("out"));
    let c = &r["assets"][0]["clips"][0];
    assert_eq!(c["curves"]["count"], 2, "{}", c["curves"]);
    let bytes = std::fs::read(package_path(&d.join("out"), &r, 0)).unwrap();
    let p = Package::load(&bytes).unwrap();
    let clip = &p.clips()[0];
    let names: Vec<&str> = p.clip_curves(clip).iter().map(|c| c.name()).collect();
    assert!(
        names.iter().any(|n| n.ends_with("/grasp"))
            && names.iter().any(|n| n.ends_with("/lock_orientation")),
        "{names:?}"
    );
}

/// A CMU BVH read in centimetres is a 22 cm person: inside the 0.3-4 m a
/// rig of unknown kind is judged by, but a humanoid is judged by its
/// height from feet to head, and the warning names the likely unit.
#[test]
fn a_cmu_bvh_read_in_centimetres_is_warned_as_a_tiny_humanoid() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let bvh = fx.join("bvh/cmu_12_01_walk.bvh");
    let bvh = bvh.to_str().unwrap();
    let o = ludus_anim(&["cook", bvh, "--units", "cm", "--out", "o"], tmp.path());
    assert!(o.status.success(), "a warning, not a failure: {}", text(&o));
    let r = report(&tmp.path().join("o"));
    let w = r["assets"][0]["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["code"] == "implausible_units")
        .unwrap_or_else(|| panic!("no unit warning: {}", text(&o)));
    let m = w["message"].as_str().unwrap();
    for part in ["humanoid", "from feet to head", "--units cmu"] {
        assert!(m.contains(part), "{part}: {m}");
    }
    // Read with its convention, the same file is a plausible person.
    let o = ludus_anim(&["cook", bvh, "--units", "cmu", "--out", "p"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(!text(&o).contains("implausible_units"), "{}", text(&o));
}
