//! A project over real files with every kind of input an asset's cook
//! declares (`query`, `cook-asset`): for the hermetic and Bazel tests.

use super::repo;
use std::path::Path;

/// A project over real files with every kind of declared input: a
/// retargeted BVH (retarget profile, target rig, a profile file as the
/// default), two `.gltf` with external buffers, a GLB with per-clip
/// profiles and sync markers, an FBX with a bundled profile.
pub fn hermetic_project(fx: &Path, dir: &Path) {
    super::retarget::project(fx, dir, "");
    for g in [
        "khronos_InterpolationTest",
        "blenderio_06_parent-inverse-anim",
    ] {
        let to = dir.join("gltf").join(g);
        std::fs::create_dir_all(&to).unwrap();
        for e in std::fs::read_dir(fx.join("gltf").join(g))
            .unwrap()
            .flatten()
        {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
    std::fs::copy(repo().join("fixtures/biped.glb"), dir.join("biped.glb")).unwrap();
    std::fs::copy(fx.join("fbx/ozz_robot.fbx"), dir.join("robot.fbx")).unwrap();
    let manifest = r#"[project]
output = "out"
profile = "custom.toml"

[[asset]]
sources = ["src/*.bvh"]
retarget = "cmu_to_knight.toml"

[[asset]]
sources = ["gltf/**/*.gltf"]

[[asset]]
sources = ["biped.glb"]

[asset.clips.walk]
loop = "loop"
drop_duplicate_end = true
markers = [
  { name = "foot_l", time_s = 0.0, kind = "sync" },
  { name = "foot_r", time_s = 0.6, kind = "sync" },
]

[asset.clips.walk_rest_additive]
from = "walk"
range = [0.2, 0.9]
additive = { reference = "rest" }
profile = "hero"

[[asset]]
sources = ["robot.fbx"]
profile = "crowd"
"#;
    std::fs::write(dir.join("ludus-anim.toml"), manifest).unwrap();
}
