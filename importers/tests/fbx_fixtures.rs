//! FBX importer against the shared fixture corpus: every file imports
//! cleanly, clip counts match the manifest, rest-pose FK matches ufbx's own
//! node (or bind) matrices, and the binary/ASCII twins agree.

use ludus_anim_format::math::Affine3A;
use ludus_anim_importers::{fbx, ImportOptions, Importer};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::{SourceAsset, Transform};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

fn fixtures_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("LUDUS_SHARED_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures"),
    };
    dir.join("fbx").is_dir().then_some(dir)
}

/// `(local_path, clips)` for the FBX rows of MANIFEST.tsv.
fn manifest(dir: &Path) -> Vec<(String, usize)> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).expect("MANIFEST.tsv");
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split('\t').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .expect("manifest column")
    };
    let (path_col, clips_col) = (col("local_path"), col("clips"));
    lines
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            let p = f.get(path_col)?;
            if !p.starts_with("fbx/") {
                return None;
            }
            Some((p.to_string(), f.get(clips_col)?.parse().ok()?))
        })
        .collect()
}

fn import(dir: &Path, rel: &str) -> SourceAsset {
    let path = dir.join(rel);
    let bytes = std::fs::read(&path).expect("read fixture");
    fbx::FBX
        .import(
            &path,
            &bytes,
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Component-space matrices of the rest pose, parents first.
fn rest_worlds(a: &SourceAsset) -> Vec<Affine3A> {
    let locals: Vec<Transform> = a.skeleton.joints.iter().map(|j| j.rest).collect();
    worlds(a, &locals)
}

fn worlds(a: &SourceAsset, locals: &[Transform]) -> Vec<Affine3A> {
    let n = a.skeleton.joints.len();
    let mut out: Vec<Option<Affine3A>> = vec![None; n];
    for _ in 0..n {
        for (i, j) in a.skeleton.joints.iter().enumerate() {
            if out[i].is_some() {
                continue;
            }
            let local = locals[i].to_affine();
            match j.parent {
                None => out[i] = Some(local),
                Some(p) => {
                    if let Some(pw) = out[p] {
                        out[i] = Some(pw * local);
                    }
                }
            }
        }
    }
    out.into_iter()
        .map(|w| w.expect("hierarchy resolves"))
        .collect()
}

/// The importer's load options, duplicated on purpose: the reference must
/// come from ufbx itself, not from the code under test.
fn load_reference(bytes: &[u8]) -> ufbx::SceneRoot {
    let opts = ufbx::LoadOpts {
        ignore_geometry: true,
        target_axes: ufbx::CoordinateAxes {
            right: ufbx::CoordinateAxis::PositiveX,
            up: ufbx::CoordinateAxis::PositiveY,
            front: ufbx::CoordinateAxis::PositiveZ,
        },
        space_conversion: ufbx::SpaceConversion::AdjustTransforms,
        handedness_conversion_axis: ufbx::MirrorAxis::Z,
        inherit_mode_handling: ufbx::InheritModeHandling::Compensate,
        ..Default::default()
    };
    ufbx::load_memory(bytes, opts).expect("reference load")
}

fn ufbx_affine(m: &ufbx::Matrix) -> Affine3A {
    Affine3A::from_cols_array(&[
        m.m00 as f32,
        m.m10 as f32,
        m.m20 as f32,
        m.m01 as f32,
        m.m11 as f32,
        m.m21 as f32,
        m.m02 as f32,
        m.m12 as f32,
        m.m22 as f32,
        m.m03 as f32,
        m.m13 as f32,
        m.m23 as f32,
    ])
}

fn node_joint_name(n: &ufbx::Node) -> String {
    if n.is_scale_helper {
        let p = n
            .parent
            .as_ref()
            .map(|p| p.element.name.to_string())
            .unwrap_or_default();
        format!("{p}_ScaleHelper")
    } else {
        n.element.name.to_string()
    }
}

fn max_affine_diff(a: &Affine3A, b: &Affine3A) -> f32 {
    let scale = 1.0 + b.translation.abs().max_element();
    let dt = (a.translation - b.translation).abs().max_element() / scale;
    let dm = (a.matrix3 - b.matrix3)
        .to_cols_array()
        .iter()
        .fold(0.0f32, |m, v| m.max(v.abs()));
    dt.max(dm)
}

#[test]
fn every_fixture_imports_cleanly_with_manifest_clip_counts() {
    let Some(dir) = fixtures_dir() else {
        println!("skipped: shared fixtures not found (set LUDUS_SHARED_FIXTURES)");
        return;
    };
    let rows = manifest(&dir);
    assert!(!rows.is_empty(), "manifest lists no FBX files");
    let mut failures = Vec::new();
    for (rel, clips) in &rows {
        let a = import(&dir, rel);
        let mut diags = validate_asset(&a);
        diags.extend(a.diagnostics.clone());
        let errors: Vec<String> = diags.errors().map(|d| d.to_string()).collect();
        let tracks: usize = a.clips.iter().map(|c| c.tracks.len()).sum();
        let curves: usize = a.clips.iter().map(|c| c.curves.len()).sum();
        println!(
            "{rel}: {} joints, {} clips, {tracks} tracks, {curves} curves, unit {} m, axes '{}', {} decisions",
            a.skeleton.joints.len(),
            a.clips.len(),
            a.unit_scale_m,
            a.source_axes.description,
            a.decisions.len()
        );
        for w in diags.warnings() {
            println!("    {w}");
        }
        if !errors.is_empty() {
            failures.push(format!("{rel}: {}", errors.join("; ")));
        }
        if a.clips.len() != *clips {
            failures.push(format!(
                "{rel}: {} clips, manifest says {clips}",
                a.clips.len()
            ));
        }
        for c in &a.clips {
            assert!(
                c.frame_rate_hz.is_some(),
                "{rel}: clip {} has no frame rate",
                c.name
            );
            assert!(!c.name.is_empty());
        }
    }
    assert!(
        failures.is_empty(),
        "fixture failures:\n{}",
        failures.join("\n")
    );
}

/// Rest FK against ufbx: always the scene's `node_to_world` (the rest is
/// the default local transforms, never the bind pose); each skin's bind
/// matrices are its clusters' `bind_to_world` and its inverse binds their
/// `geometry_to_bone`.
#[test]
fn rest_pose_fk_matches_ufbx_globals() {
    let Some(dir) = fixtures_dir() else {
        println!("skipped: shared fixtures not found (set LUDUS_SHARED_FIXTURES)");
        return;
    };
    let files = [
        "fbx/pab_locomotions.fbx",
        "fbx/ozz_robot.fbx",
        "fbx/ufbx_maya_game_sausage_7500_combined.fbx",
        "fbx/ufbx_blender_279_sausage_7400.fbx",
        "fbx/quaternius_Skeleton.fbx",
        "fbx/assimp_animation_with_skeleton.fbx",
        "fbx/ufbx_maya_slime_7500.fbx",
        "fbx/quaternius_KnightCharacter.fbx",
        "fbx/ufbx_blender_293_barbarian_7400.fbx",
    ];
    for rel in files {
        let a = import(&dir, rel);
        let bytes = std::fs::read(dir.join(rel)).unwrap();
        let scene = load_reference(&bytes);
        assert!(
            a.decisions
                .iter()
                .any(|d| d.kind == "rest_pose" && d.detail.contains("default local transforms")),
            "{rel}: rest_pose decision"
        );
        let mut by_name: HashMap<String, Vec<&ufbx::Node>> = HashMap::new();
        for n in scene.nodes.iter() {
            by_name.entry(node_joint_name(n)).or_default().push(n);
        }
        let fk = rest_worlds(&a);
        let mut compared = 0;
        for (j, w) in a.skeleton.joints.iter().zip(&fk) {
            let Some([node]) = by_name.get(&j.name).map(|v| v.as_slice()) else {
                continue;
            };
            let d = max_affine_diff(w, &ufbx_affine(&node.node_to_world));
            assert!(
                d < 1e-3,
                "{rel}: joint {} rest FK differs from ufbx by {d}",
                j.name
            );
            compared += 1;
        }
        assert!(
            compared * 2 >= a.skeleton.joints.len(),
            "{rel}: too few joints compared ({compared})"
        );
        // Skins: palette joints and matrices are the clusters'.
        let mut clusters: HashMap<(String, String), &ufbx::SkinCluster> = HashMap::new();
        for node in scene.nodes.iter() {
            let Some(mesh) = node.mesh.as_ref() else {
                continue;
            };
            for d in mesh.skin_deformers.iter() {
                for c in d.clusters.iter() {
                    if let Some(b) = c.bone_node.as_ref() {
                        clusters.insert((node_joint_name(node), node_joint_name(b)), c);
                    }
                }
            }
        }
        let mut checked = 0;
        for skin in &a.skins {
            assert_eq!(skin.joints.len(), skin.inverse_bind.len(), "{rel}");
            for (i, &j) in skin.joints.iter().enumerate() {
                let key = (skin.name.clone(), a.skeleton.joints[j].name.clone());
                let Some(c) = clusters.get(&key) else {
                    continue;
                };
                let bind = ludus_anim_model::skin::affine(&skin.bind_world[i]);
                let ibm = ludus_anim_model::skin::affine(&skin.inverse_bind[i]);
                assert!(
                    max_affine_diff(&bind, &ufbx_affine(&c.bind_to_world)) < 1e-3,
                    "{rel}"
                );
                assert!(
                    max_affine_diff(&ibm, &ufbx_affine(&c.geometry_to_bone)) < 1e-3,
                    "{rel}"
                );
                checked += 1;
            }
        }
        println!(
            "{rel}: {compared}/{} joints against node_to_world, {} skins, {checked} palette entries against clusters",
            a.skeleton.joints.len(),
            a.skins.len()
        );
        assert_eq!(
            a.skins.is_empty(),
            scene.skin_clusters.is_empty(),
            "{rel}: skins kept"
        );
    }
}

/// Where an FBX's bind pose differs from its rest pose, both are kept:
/// the rest FK is the scene's and the skin's bind matrix the cluster's
/// (the importer once used the bind pose as the rest).
#[test]
fn rest_and_bind_pose_stay_distinct() {
    let Some(dir) = fixtures_dir() else {
        println!("skipped: shared fixtures not found (set LUDUS_SHARED_FIXTURES)");
        return;
    };
    let mut differing = Vec::new();
    for (rel, _) in manifest(&dir) {
        let a = import(&dir, &rel);
        let fk = rest_worlds(&a);
        let mut worst = 0.0f32;
        for skin in &a.skins {
            for (i, &j) in skin.joints.iter().enumerate() {
                let bind = ludus_anim_model::skin::affine(&skin.bind_world[i]);
                worst = worst.max(max_affine_diff(&bind, &fk[j]));
            }
        }
        if worst > 1e-2 {
            differing.push(format!("{rel} ({worst:.3})"));
        }
    }
    println!("bind differs from rest: {differing:?}");
    assert!(
        differing
            .iter()
            .any(|d| d.contains("quaternius_KnightCharacter.fbx")),
        "expected the Knight FBX's bind pose to differ from its rest: {differing:?}"
    );
}

/// Local pose of every joint at time `t` (track or rest).
fn pose_at(a: &SourceAsset, clip: usize, t: f32) -> Vec<Transform> {
    let mut locals: Vec<Transform> = a.skeleton.joints.iter().map(|j| j.rest).collect();
    for tr in &a.clips[clip].tracks {
        let l = &mut locals[tr.joint];
        if let Some(c) = &tr.translation {
            l.translation = c.evaluate(t).unwrap();
        }
        if let Some(c) = &tr.rotation {
            l.rotation = c.evaluate(t).unwrap();
        }
        if let Some(c) = &tr.scale {
            l.scale = c.evaluate(t).unwrap();
        }
    }
    locals
}

#[test]
fn binary_and_ascii_twins_agree() {
    let Some(dir) = fixtures_dir() else {
        println!("skipped: shared fixtures not found (set LUDUS_SHARED_FIXTURES)");
        return;
    };
    let bin = import(&dir, "fbx/ufbx_maya_game_sausage_7500_combined.fbx");
    let asc = import(&dir, "fbx/ufbx_maya_game_sausage_7500_combined_ASCII.fbx");
    assert_eq!(bin.skeleton.joints.len(), asc.skeleton.joints.len());
    for (a, b) in bin.skeleton.joints.iter().zip(&asc.skeleton.joints) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.parent, b.parent);
        let d = max_affine_diff(&a.rest.to_affine(), &b.rest.to_affine());
        assert!(d < 1e-4, "joint {} rest differs by {d}", a.name);
    }
    assert_eq!(bin.unit_scale_m, asc.unit_scale_m);
    assert_eq!(bin.clips.len(), asc.clips.len());
    for (ci, (ca, cb)) in bin.clips.iter().zip(&asc.clips).enumerate() {
        assert_eq!(ca.name, cb.name);
        assert!((ca.duration_s - cb.duration_s).abs() < 1e-5);
        assert_eq!(ca.frame_rate_hz, cb.frame_rate_hz);
        let steps = 64;
        for s in 0..=steps {
            let t = ca.duration_s * s as f32 / steps as f32;
            let wa = worlds(&bin, &pose_at(&bin, ci, t));
            let wb = worlds(&asc, &pose_at(&asc, ci, t));
            for (j, (x, y)) in wa.iter().zip(&wb).enumerate() {
                let d = max_affine_diff(x, y);
                assert!(
                    d < 1e-4,
                    "clip {} joint {} t={t}: differs by {d}",
                    ca.name,
                    bin.skeleton.joints[j].name
                );
            }
        }
    }
}

/// Not an assertion: how long the largest mocap file takes to import.
#[test]
fn timing_pab_locomotions() {
    let Some(dir) = fixtures_dir() else {
        println!("skipped: shared fixtures not found (set LUDUS_SHARED_FIXTURES)");
        return;
    };
    let path = dir.join("fbx/pab_locomotions.fbx");
    let bytes = std::fs::read(&path).unwrap();
    let start = std::time::Instant::now();
    let a = fbx::FBX
        .import(
            &path,
            &bytes,
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .unwrap();
    let el = start.elapsed();
    let keys: usize = a
        .clips
        .iter()
        .flat_map(|c| &c.tracks)
        .map(|t| {
            t.translation.as_ref().map_or(0, |c| c.keys.len())
                + t.rotation.as_ref().map_or(0, |c| c.keys.len())
                + t.scale.as_ref().map_or(0, |c| c.keys.len())
        })
        .sum();
    println!(
        "timing: pab_locomotions.fbx imported in {:.1} ms ({} joints, {} clips, {keys} keys; debug={})",
        el.as_secs_f64() * 1e3,
        a.skeleton.joints.len(),
        a.clips.len(),
        cfg!(debug_assertions)
    );
}
