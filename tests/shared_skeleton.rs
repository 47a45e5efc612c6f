//! Shared skeletons from the command line (#45 item 1): the generated
//! `fixtures/biped-split/` project (one rig file, one animation-only file
//! per clip) cooks into one skeleton package and clip packages carrying
//! that very skeleton; the runtime loads each clip package against the
//! skeleton package's skeleton and refuses a different one (typed); a
//! track the shared skeleton has no joint for fails its asset naming file,
//! clip and joint.

mod common;
use common::*;
use ludus_anim_runtime::package::{Package, PackageError};
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

fn split_project(dir: &Path) {
    copy_dir(&repo().join("fixtures/biped-split"), dir);
}

#[test]
fn rig_and_animation_files_share_one_skeleton_package() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    split_project(dir);
    let o = ludus_anim(&["cook"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let out = dir.join("out");
    let report = report(&out);
    let assets = report["assets"].as_array().unwrap();
    assert_eq!(assets.len(), 4, "{report:#}");

    let packages = packages(&out);
    let skeleton: Vec<_> = packages
        .iter()
        .filter(|(n, _)| n.starts_with("biped.skeleton-"))
        .collect();
    assert_eq!(skeleton.len(), 1, "one skeleton package: {packages:?}");
    let skel_pkg = Package::load(&skeleton[0].1).unwrap();
    assert_eq!(
        skel_pkg.clips().len(),
        0,
        "the skeleton package holds no clip"
    );
    let shared = skel_pkg.skeleton();
    assert_eq!(
        shared.joint_count(),
        32,
        "the rig's every joint, leaves included"
    );

    let mut clip_packages = 0;
    for (name, bytes) in packages.iter().filter(|(n, _)| n.starts_with("biped_")) {
        let p = Package::load_for(bytes, shared).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(p.skeleton().identity(), shared.identity(), "{name}");
        assert_eq!(p.clips().len(), 1, "{name}");
        clip_packages += 1;
    }
    assert_eq!(clip_packages, 3);
    // Every clip asset reports the shared skeleton and the bind decision.
    for a in assets
        .iter()
        .filter(|a| a["source"].as_str().unwrap().starts_with("anim/"))
    {
        assert_eq!(
            a["skeleton"]["identity"].as_str().unwrap(),
            shared.identity().to_hex(),
            "{a:#}"
        );
        assert!(
            a["decisions"]
                .as_array()
                .unwrap()
                .iter()
                .any(|d| d["kind"] == "skeleton"),
            "{a:#}"
        );
    }

    // A clip package of another skeleton is refused, typed.
    let bundled = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("fixtures/biped.glb"),
        bundled.path().join("biped.glb"),
    )
    .unwrap();
    // The same rig read as centimetres: same joints, another rest pose.
    let o = ludus_anim(
        &["cook", "biped.glb", "--units", "cm", "--out", "out"],
        bundled.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let (_, full) = &packages_of(&bundled.path().join("out"))[0];
    let other = Package::load(full).unwrap();
    assert_ne!(other.skeleton().identity(), shared.identity());
    match Package::load_for(full, shared) {
        Err(PackageError::SkeletonMismatch { expected, found }) => {
            assert_eq!(expected, shared.identity());
            assert_eq!(found, other.skeleton().identity());
        }
        other => panic!("expected SkeletonMismatch, got {:?}", other.map(|_| ())),
    }
}

/// `[[skeleton]] asset = "..."`: the skeleton of an asset the project also
/// cooks (the full biped, clips and all) is the one the animation-only
/// files bind to; that asset keeps its own package beside the skeleton's.
#[test]
fn a_skeleton_taken_from_an_asset_is_shared() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_dir(&repo().join("fixtures/biped-split/anim"), &dir.join("anim"));
    std::fs::copy(repo().join("fixtures/biped.glb"), dir.join("biped.glb")).unwrap();
    std::fs::write(
        dir.join("ludus-anim.toml"),
        "[[skeleton]]\nname = \"biped\"\nasset = \"biped.glb\"\n\n\
         [[asset]]\nsources = [\"biped.glb\"]\n\n\
         [[asset]]\nsources = [\"anim/*.glb\"]\nskeleton = \"biped\"\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let packages = packages(&dir.join("out"));
    let skeleton: Vec<_> = packages
        .iter()
        .filter(|(n, _)| n.starts_with("biped.skeleton-"))
        .collect();
    assert_eq!(skeleton.len(), 1, "{packages:?}");
    let shared = Package::load(&skeleton[0].1).unwrap();
    let shared = shared.skeleton();
    let (full, _) = packages
        .iter()
        .find(|(n, _)| n.starts_with("biped-"))
        .map(|(n, b)| (Package::load(b).unwrap(), n))
        .expect("the asset's own package");
    assert_eq!(full.clips().len(), 3);
    assert_eq!(full.skeleton().identity(), shared.identity());
    let bound = packages
        .iter()
        .filter(|(n, _)| n.starts_with("biped_"))
        .map(|(n, b)| {
            Package::load_for(b, shared).unwrap_or_else(|e| panic!("{n}: {e}"));
        })
        .count();
    assert_eq!(bound, 3);
}

fn packages_of(out: &Path) -> Vec<(String, Vec<u8>)> {
    packages(out)
}

#[test]
fn a_track_without_a_shared_joint_is_a_located_error() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    split_project(dir);
    // The walk's rig is the idle file's skeleton with one joint renamed:
    // the walk animates a joint that skeleton lacks.
    let rig = std::fs::read(dir.join("rig/biped_rig.glb")).unwrap();
    let renamed = replace_once(&rig, b"\"LeftToeBase\"", b"\"LeftToeBasX\"");
    std::fs::write(dir.join("rig/biped_rig.glb"), renamed).unwrap();
    let o = ludus_anim(&["cook"], dir);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let all = text(&o);
    assert!(all.contains("unbound_track"), "{all}");
    assert!(
        all.contains("file 'anim/biped_walk.glb', clip 'walk', joint 'LeftToeBase'"),
        "{all}"
    );
}

fn replace_once(bytes: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    assert_eq!(
        from.len(),
        to.len(),
        "same length keeps the GLB chunk sizes"
    );
    let at = bytes
        .windows(from.len())
        .position(|w| w == from)
        .expect("pattern in file");
    let mut out = bytes.to_vec();
    out[at..at + from.len()].copy_from_slice(to);
    out
}
