//! A retargeting project on real files: the CMU walk (BVH) baked onto the
//! Quaternius Knight (glTF) with the shipped profile, its skeleton paths
//! pointed at copies inside the project.

use super::repo;
use std::path::Path;

/// The source asset's path in the project.
pub const WALK: &str = "src/cmu_walk.bvh";
/// The target rig (not an asset: only the profile reads it).
pub const KNIGHT: &str = "rig/knight.glb";
/// The retarget profile.
pub const PROFILE: &str = "cmu_to_knight.toml";

/// The shipped CMU -> Knight profile with its skeleton paths replaced.
pub fn shipped_profile(source: &str, target: &str) -> String {
    std::fs::read_to_string(repo().join("profiles/retarget/cmu_to_knight.toml"))
        .unwrap()
        .replace("../../../shared/fixtures/bvh/cmu_12_01_walk.bvh", source)
        .replace(
            "../../../shared/fixtures/gltf/quaternius_KnightCharacter.glb",
            target,
        )
}

/// Copy the walk and the Knight into `dir`; write the profile, a quality
/// profile `custom.toml` (a copy of `standard`) and a manifest that
/// retargets every BVH under `src/` with `extra` appended.
pub fn project(fixtures: &Path, dir: &Path, extra: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::create_dir_all(dir.join("rig")).unwrap();
    std::fs::copy(fixtures.join("bvh/cmu_12_01_walk.bvh"), dir.join(WALK)).unwrap();
    std::fs::copy(
        fixtures.join("gltf/quaternius_KnightCharacter.glb"),
        dir.join(KNIGHT),
    )
    .unwrap();
    std::fs::write(dir.join(PROFILE), shipped_profile(WALK, KNIGHT)).unwrap();
    let standard = std::fs::read_to_string(repo().join("profiles/standard.toml")).unwrap();
    std::fs::write(
        dir.join("custom.toml"),
        standard.replace("name = \"standard\"", "name = \"custom\""),
    )
    .unwrap();
    std::fs::write(
        dir.join("ludus-anim.toml"),
        format!(
            "[project]\noutput = \"out\"\ncache = \"cache\"\nprofile = \"custom.toml\"\n\n[[asset]]\nsources = [\"src/*.bvh\"]\nretarget = \"{PROFILE}\"\n{extra}"
        ),
    )
    .unwrap();
}

/// Replace `from` (which must occur) by `to` in `dir/file`.
pub fn edit(dir: &Path, file: &str, from: &str, to: &str) {
    let p = dir.join(file);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains(from), "{file} has no {from:?}");
    std::fs::write(&p, text.replacen(from, to, 1)).unwrap();
}
