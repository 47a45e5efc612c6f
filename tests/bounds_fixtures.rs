//! Motion bounds, skins, rest vs bind and sockets on every shared skinned
//! fixture from the command line (#45 items 4 and 7), checked against
//! what a renderer has: the package's SKIN section (palette joints and
//! inverse binds) applied to the source mesh (read again by the importer)
//! on the package's clips decoded as a game would; the bounds must hold
//! every skinned vertex at every checked time (each sample and each
//! midpoint). Rest and bind: the package's rest is the authored rest and
//! its SKIN bind pose the file's, both exactly, and they differ on the
//! files whose bind pose is not their rest. `inspect --json` and the
//! report show skins, bounds and sockets. On the bundled locomotion
//! project: a walk's box is relative to the extracted root (smaller than
//! the distance travelled), an additive clip has bounds applied on the
//! rest, and `joint_radius_m` grows a meshless asset's box by the radius.
//! Prints per-fixture figures with `--nocapture`.

mod common;
use common::*;
use ludus_anim_format::math::{Affine3A, Transform, Vec3};
use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_model::skin::affine;
use ludus_anim_runtime::package::Package;
use std::path::Path;

const SKINNED: &[&str] = &[
    "gltf/khronos_Fox.glb",
    "gltf/quaternius_KnightCharacter.glb",
    "gltf/khronos_RiggedSimple_embedded.gltf",
    "gltf/khronos_SimpleSkin.gltf",
    "fbx/quaternius_KnightCharacter.fbx",
    "fbx/ufbx_blender_293_barbarian_7400.fbx",
    "fbx/ufbx_maya_game_sausage_7500_combined.fbx",
    "fbx/ufbx_blender_279_sausage_7400.fbx",
    "fbx/assimp_animation_with_skeleton.fbx",
];

/// Largest distance a point lies outside `[lo, hi]` (0 inside).
fn outside(v: Vec3, lo: Vec3, hi: Vec3) -> f32 {
    (lo - v).max(v - hi).max(Vec3::ZERO).length()
}

#[test]
fn every_shared_skinned_fixture_keeps_its_vertices_in_bounds_and_rest_apart_from_bind() {
    let Some(fx) = shared_fixtures() else { return };
    println!(
        "| file | clips | checked vertex-times | max outside mm | rest-vs-bind max mm | sockets |"
    );
    println!("|---|---|---|---|---|---|");
    let mut differing = 0;
    for f in SKINNED {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let name = Path::new(f)
            .file_name()
            .unwrap()
            .to_string_lossy()
            .to_string();
        std::fs::copy(fx.join(f), dir.join(&name)).unwrap();
        let o = ludus_anim(&["cook", &name, "--out", "out"], dir);
        assert!(o.status.success(), "{f}: {}", text(&o));
        let r = report(&dir.join("out"));
        let pkg = package_path(&dir.join("out"), &r, 0);
        let bytes = std::fs::read(&pkg).unwrap();
        let p = Package::load(&bytes).unwrap();
        let sk = p.skeleton();

        // The source, read again: its mesh, authored rest and bind pose.
        let asset = import_file(&fx.join(f), &ImportOptions::default()).unwrap();
        let norm = ludus_anim_normalize::normalize(&asset, None).unwrap();
        assert_eq!(
            norm.skeleton.identity(),
            sk.identity(),
            "{f}: same skeleton"
        );
        let skins = &p.bindings().skins;
        assert_eq!(skins.len(), norm.skins.len(), "{f}");

        // Rest is the authored rest, bind the file's bind, exactly.
        let mut rest_world = vec![Affine3A::IDENTITY; sk.joint_count()];
        assert!(sk.local_to_component(sk.rest_pose(), &mut rest_world));
        let mut rest_vs_bind = 0.0f32;
        for (packaged, source) in skins.iter().zip(&norm.skins) {
            for (i, &j) in packaged.joints.iter().enumerate() {
                let bind = Affine3A::from_cols_array(&packaged.bind_world[i]);
                let src = affine(&source.bind_world[i]);
                assert!(
                    bind.abs_diff_eq(src, 1e-6),
                    "{f}: palette {i} bind pose is not the file's"
                );
                let d = bind
                    .translation
                    .distance(rest_world[j as usize].translation);
                rest_vs_bind = rest_vs_bind.max(d);
            }
        }
        for (a, b) in sk.rest_pose().iter().zip(norm.skeleton.rest_pose()) {
            assert_eq!(a, b, "{f}: the package's rest is the authored rest");
        }
        if rest_vs_bind > 1e-4 {
            differing += 1;
        }

        // Every skinned vertex inside its clip's bounds at every checked
        // time, skinned with the package's palette.
        let bounds = &p.bindings().clip_bounds;
        assert_eq!(bounds.len(), p.clips().len(), "{f}");
        let (mut checked, mut worst) = (0usize, 0.0f32);
        for (clip, b) in p.clips().iter().zip(bounds) {
            let b = b.unwrap_or_else(|| panic!("{f}: clip {} has no bounds", clip.name()));
            let (lo, hi) = (Vec3::from_array(b.min), Vec3::from_array(b.max));
            let n = clip.num_samples().max(1);
            let mut locals = vec![Transform::IDENTITY; sk.joint_count()];
            let mut world = vec![Affine3A::IDENTITY; sk.joint_count()];
            for k in 0..2 * n - 1 {
                let t = (k as f32 * 0.5 / clip.sample_rate_hz()).min(clip.duration_s());
                clip.sample(t, p.sample_defaults(clip), &mut locals)
                    .unwrap();
                assert!(sk.local_to_component(&locals, &mut world));
                for (packaged, source) in skins.iter().zip(&norm.skins) {
                    let Some(mesh) = &source.mesh else { continue };
                    let palette: Vec<Affine3A> = packaged
                        .joints
                        .iter()
                        .zip(&packaged.inverse_bind)
                        .map(|(&j, m)| world[j as usize] * Affine3A::from_cols_array(m))
                        .collect();
                    for (v, &pos) in mesh.positions.iter().enumerate() {
                        let inf = mesh.vertex(v);
                        let sum: f32 = inf.iter().map(|(_, w)| w).sum();
                        if sum == 0.0 {
                            continue;
                        }
                        let mut s = Vec3::ZERO;
                        for &(i, w) in inf {
                            s += (w / sum) * palette[i as usize].transform_point3(pos);
                        }
                        worst = worst.max(outside(s, lo, hi));
                        checked += 1;
                    }
                }
            }
        }
        println!(
            "| {f} | {} | {checked} | {:.6} | {:.3} | {} |",
            p.clips().len(),
            worst * 1e3,
            rest_vs_bind * 1e3,
            p.bindings().sockets.len()
        );
        assert!(checked > 0, "{f}");
        assert_eq!(worst, 0.0, "{f}: a vertex {worst} m outside its bounds");

        // inspect and the report show skins, bounds and sockets.
        let o = ludus_anim(&["inspect", "--json", pkg.to_str().unwrap()], dir);
        assert!(o.status.success(), "{f}");
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        assert_eq!(v["skins"].as_array().unwrap().len(), skins.len(), "{f}");
        let cb = v["clip_bounds"].as_array().unwrap();
        assert!(cb.iter().all(|b| b["radius"].is_number()), "{f}");
        assert_eq!(
            v["sockets"].as_array().unwrap().len(),
            p.bindings().sockets.len(),
            "{f}"
        );
        let a = &r["assets"][0];
        assert!(
            !a["skeleton"]["skins"].as_array().unwrap().is_empty(),
            "{f}"
        );
        for c in a["clips"].as_array().unwrap() {
            assert!(c["bounds"]["radius"].is_number(), "{f}");
            assert_eq!(
                c["sockets"].as_array().map_or(0, Vec::len),
                p.bindings().sockets.len(),
                "{f}"
            );
        }
    }
    assert!(
        differing >= 2,
        "rest and bind differ on several fixtures ({differing}): kept apart"
    );
}

/// The bundled locomotion project: walk and run with root motion, an
/// additive breathing clip; and the BVH walk without a mesh, with and
/// without `joint_radius_m`.
#[test]
fn root_motion_additive_and_joint_radius_bounds() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::create_dir_all(dir.join("loco")).unwrap();
    std::fs::copy(repo().join("fixtures/biped.glb"), dir.join("biped.glb")).unwrap();
    std::fs::copy(
        repo().join("fixtures/locomotion/ludus-anim.toml"),
        dir.join("loco/ludus-anim.toml"),
    )
    .unwrap();
    let loco = dir.join("loco");
    let o = ludus_anim(&["cook"], &loco);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&loco.join("out"));
    let bytes = std::fs::read(package_path(&loco.join("out"), &r, 0)).unwrap();
    let p = Package::load(&bytes).unwrap();
    let bounds = &p.bindings().clip_bounds;
    for (clip, b) in p.clips().iter().zip(bounds) {
        let b = b.expect("every clip has bounds, additive ones too");
        let extent = Vec3::from_array(b.max) - Vec3::from_array(b.min);
        if clip.root_motion().is_some() {
            let travel = clip
                .root_motion_delta(0.0, clip.duration_s() as f64)
                .translation;
            let horizontal = Vec3::new(travel.x, 0.0, travel.z).length();
            println!(
                "{}: box {:?} m, travel {horizontal:.3} m",
                clip.name(),
                extent.to_array()
            );
            // The box moves with the extracted root: it holds one stride's
            // reach, not the ground covered (a box holding the travel
            // would be at least that long horizontally).
            assert!(horizontal > 0.5, "{}: travels", clip.name());
            assert!(
                extent.x.max(extent.z) < horizontal + 1.0,
                "{}: {extent:?} against {horizontal}",
                clip.name()
            );
        }
    }
    let entry = r["assets"][0]["clips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "breathing")
        .unwrap();
    assert!(
        entry["bounds"]["applied_on"]
            .as_str()
            .unwrap()
            .contains("rest pose"),
        "{entry:#}"
    );

    // Meshless: joint positions, then grown by the declared radius.
    let Some(fx) = shared_fixtures() else { return };
    std::fs::copy(fx.join("bvh/cmu_12_01_walk.bvh"), dir.join("walk.bvh")).unwrap();
    let bounds_of = |radius: Option<f32>| {
        let d = dir.join(format!("r{}", radius.unwrap_or(0.0)));
        std::fs::create_dir_all(&d).unwrap();
        std::fs::copy(dir.join("walk.bvh"), d.join("walk.bvh")).unwrap();
        let extra = radius.map_or(String::new(), |r| format!("joint_radius_m = {r}\n"));
        std::fs::write(
            d.join("ludus-anim.toml"),
            format!("[project]\noutput = \"out\"\n[[asset]]\nsources = [\"walk.bvh\"]\n{extra}"),
        )
        .unwrap();
        let o = ludus_anim(&["cook"], &d);
        assert!(o.status.success(), "{}", text(&o));
        report(&d.join("out"))["assets"][0]["clips"][0]["bounds"].clone()
    };
    let plain = bounds_of(None);
    let grown = bounds_of(Some(0.1));
    assert_eq!(plain["points"], "joints");
    assert!(plain["joint_radius_m"].is_null());
    assert_eq!(grown["joint_radius_m"].as_f64().unwrap() as f32, 0.1);
    for k in 0..3 {
        let lo = plain["min"][k].as_f64().unwrap() - grown["min"][k].as_f64().unwrap();
        let hi = grown["max"][k].as_f64().unwrap() - plain["max"][k].as_f64().unwrap();
        assert!(
            (lo - 0.1).abs() < 1e-5 && (hi - 0.1).abs() < 1e-5,
            "{plain} {grown}"
        );
    }
    // A negative radius is refused by the manifest.
    let d = dir.join("r0.1");
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[project]\noutput = \"out\"\n[[asset]]\nsources = [\"walk.bvh\"]\njoint_radius_m = -1\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook"], &d);
    assert!(!o.status.success());
    assert!(text(&o).contains("joint_radius_m"), "{}", text(&o));
}
