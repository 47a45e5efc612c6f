//! Stage code versions are honest: for fixed inputs, each stage's output
//! fingerprint is recorded in `tests/golden/stage-outputs.txt` with the
//! stage's version. If a stage's output changes while its version did not,
//! this test fails: bump the version in `cooker/src/stage.rs` (stale cache
//! entries would otherwise be served) and refresh the file with
//! `LUDUS_UPDATE_GOLDEN=1 cargo test -p ludus-anim-cooker --test stage_versions`.
//!
//! The inputs cover every path a stage can take: glTF with companion
//! buffers and STEP/LINEAR/CUBICSPLINE keys, FBX with custom curves, BVH,
//! ACL SJSON, cut clips, loops, planar and full root motion, additive
//! references (rest, frame, clip), markers and events. Every stage in the
//! list (`Stage::ALL`) must have seen output.

mod common;
use common::*;
use ludus_anim_cooker::events::Silent;
use ludus_anim_cooker::manifest::{AssetJob, Manifest};
use ludus_anim_cooker::pipeline::{cook_asset_job, CookOptions};
use ludus_anim_cooker::stage::Stage;
use ludus_anim_cooker::stage_cache::StageCache;
use std::path::{Path, PathBuf};

/// Every job of the feature project, plus plain files, cooked with the
/// recording cache; the per-stage fingerprints.
fn fingerprints(fx: &Path, dir: &Path) -> Vec<(Stage, [u8; 32])> {
    feature_project(fx, dir);
    let fx = &fx.canonicalize().unwrap();
    let gltf = dir.join("interp");
    std::fs::create_dir_all(&gltf).unwrap();
    for f in ["interpolation_test.gltf", "interpolation_test.bin"] {
        std::fs::copy(
            fx.join("gltf/khronos_InterpolationTest").join(f),
            gltf.join(f),
        )
        .unwrap();
    }
    // Importers record the paths they were given: cook from inside the
    // project with relative paths so the outputs do not depend on where the
    // temporary directory is (this binary holds one test, so changing the
    // working directory is safe).
    std::env::set_current_dir(dir).unwrap();
    let dir = Path::new(".");
    let text = std::fs::read_to_string(dir.join("ludus-anim.toml")).unwrap();
    let manifest = Manifest::parse(&text, "ludus-anim.toml").unwrap();
    let mut jobs = manifest.jobs(dir).unwrap();
    let plain = |p: PathBuf| AssetJob {
        path: p,
        settings: Default::default(),
    };
    jobs.push(plain(dir.join("interp/interpolation_test.gltf")));
    if let Some(anchors) = shared_anchors() {
        let clip = "quaternius_KnightCharacter__HumanArmature_Idle.acl.sjson";
        std::fs::copy(anchors.join("acl-clips").join(clip), dir.join(clip)).unwrap();
        jobs.push(plain(dir.join(clip)));
    }
    jobs.push(retargeted_job(fx, dir));
    jobs.extend(bound_jobs(dir));
    let mut options = CookOptions::for_files(vec![], dir.join("out"), "standard");
    options.project_root = Some(dir.to_path_buf());
    options.jobs = jobs.clone();
    let cache = StageCache::recording(None);
    for job in &jobs {
        let r = cook_asset_job(job, &options, &cache, &Silent).unwrap();
        assert!(r.package.is_some(), "{:?}", r.report.diagnostics);
    }
    cache.stage_fingerprints()
}

/// The generated biped-split project's walk bound to its rig (`[[skeleton]]`),
/// and the rig's own skeleton package.
fn bound_jobs(dir: &Path) -> Vec<AssetJob> {
    let split = repo().join("fixtures/biped-split");
    std::fs::create_dir_all(dir.join("split")).unwrap();
    for f in ["rig/biped_rig.glb", "anim/biped_walk.glb"] {
        let name = Path::new(f).file_name().unwrap();
        std::fs::copy(split.join(f), dir.join("split").join(name)).unwrap();
    }
    let skeleton = Some("biped".to_string());
    let rig = ludus_anim_cooker::manifest::AssetEntry {
        skeleton: skeleton.clone(),
        skeleton_package: true,
        ..Default::default()
    };
    let walk = ludus_anim_cooker::manifest::AssetEntry {
        skeleton,
        skeleton_source: Some("split/biped_rig.glb".into()),
        ..Default::default()
    };
    vec![
        AssetJob {
            path: dir.join("split/biped_rig.glb"),
            settings: rig,
        },
        AssetJob {
            path: dir.join("split/biped_walk.glb"),
            settings: walk,
        },
    ]
}

/// The CMU walk retargeted onto the Knight with the shipped profile (its
/// skeleton paths pointed at copies in the project).
fn retargeted_job(fx: &Path, dir: &Path) -> AssetJob {
    std::fs::copy(fx.join("bvh/cmu_12_01_walk.bvh"), dir.join("cmu_walk.bvh")).unwrap();
    std::fs::copy(
        fx.join("gltf/quaternius_KnightCharacter.glb"),
        dir.join("knight.glb"),
    )
    .unwrap();
    let profile = std::fs::read_to_string(repo().join("profiles/retarget/cmu_to_knight.toml"))
        .unwrap()
        .replace(
            "../../../shared/fixtures/bvh/cmu_12_01_walk.bvh",
            "cmu_walk.bvh",
        )
        .replace(
            "../../../shared/fixtures/gltf/quaternius_KnightCharacter.glb",
            "knight.glb",
        );
    std::fs::write(dir.join("cmu_to_knight.toml"), profile).unwrap();
    let settings = ludus_anim_cooker::manifest::AssetEntry {
        retarget: Some("cmu_to_knight.toml".into()),
        ..Default::default()
    };
    AssetJob {
        path: dir.join("cmu_walk.bvh"),
        settings,
    }
}

#[test]
fn stage_outputs_change_only_with_their_version() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let current: Vec<(String, u32, String)> = fingerprints(&fx, tmp.path())
        .into_iter()
        .map(|(s, h)| {
            (
                s.name().to_string(),
                s.version(),
                h.iter().map(|b| format!("{b:02x}")).collect(),
            )
        })
        .collect();
    assert_eq!(current.len(), Stage::ALL.len(), "every stage is covered");
    let path = repo().join("tests/golden/stage-outputs.txt");
    let text: String = current
        .iter()
        .map(|(s, v, h)| format!("{s} {v} {h}\n"))
        .collect();
    if std::env::var_os("LUDUS_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    let mut problems = Vec::new();
    for (s, v, h) in &current {
        let g = golden
            .lines()
            .find(|l| l.split(' ').next() == Some(s.as_str()));
        match g.map(|l| l.split(' ').collect::<Vec<_>>()) {
            Some(parts) if parts.len() == 3 => {
                let (gv, gh) = (parts[1], parts[2]);
                if gv == v.to_string() && gh != h {
                    problems.push(format!(
                        "stage '{s}' output changed but its version is still {v}: bump it"
                    ));
                } else if gv != v.to_string() {
                    problems.push(format!(
                        "stage '{s}' is version {v}, golden has {gv}: refresh the golden file"
                    ));
                }
            }
            _ => problems.push(format!("stage '{s}' missing from {}", path.display())),
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n(refresh with LUDUS_UPDATE_GOLDEN=1 cargo test -p ludus-anim-cooker --test stage_versions)",
        problems.join("\n")
    );
}
