//! Retarget time per clip and per 1,000 frames (ignored; run with
//! `--ignored --nocapture`).

mod common;
use common::*;
use ludus_anim_fixture_gen::rigs::{build, BoneAxes, RigSpec};
use ludus_anim_retarget::{retarget, suggest, Profile, RetargetPoses};
use std::time::Instant;

fn time(
    name: &str,
    src: &ludus_anim_normalize::Normalized,
    tgt: &ludus_anim_normalize::Normalized,
    p: &Profile,
) {
    let poses =
        RetargetPoses::resolve(p, &src.skeleton, &src.clips, &tgt.skeleton, &tgt.clips).unwrap();
    let runs = 5;
    let start = Instant::now();
    for _ in 0..runs {
        let _ = retarget(&src.skeleton, &src.clips, &tgt.skeleton, p, &poses).unwrap();
    }
    let per_run = start.elapsed().as_secs_f64() / runs as f64;
    let out = retarget(&src.skeleton, &src.clips, &tgt.skeleton, p, &poses).unwrap();
    let frames: usize = out.metrics.iter().map(|m| m.frames).sum();
    println!(
        "{name}: {} clips, {frames} frames: {:.2} ms per clip, {:.2} ms per 1000 frames",
        out.clips.len(),
        per_run * 1e3 / out.clips.len() as f64,
        per_run * 1e6 / frames as f64
    );
}

#[test]
#[ignore]
fn retarget_timings() {
    let a = norm(&build(&RigSpec::default()));
    let b = norm(&build(&RigSpec {
        axes: BoneAxes::Blender,
        leg_scale: 0.8,
        spine_joints: 5,
        ..RigSpec::default()
    }));
    time(
        "matrix rig -> rig",
        &a,
        &b,
        &suggest(&a.skeleton, "a", &b.skeleton, "b"),
    );
    let (Some(cmu), Some(knight)) = (
        shared_fixture("bvh/cmu_12_01_walk.bvh"),
        shared_fixture("gltf/quaternius_KnightCharacter.glb"),
    ) else {
        return;
    };
    let (s, t) = (load(&cmu, Some(0.056_444_44)), load(&knight, None));
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../profiles/retarget/cmu_to_knight.toml");
    let p = Profile::parse(
        &std::fs::read_to_string(path).unwrap(),
        "cmu_to_knight.toml",
    )
    .unwrap();
    time("CMU 12_01 walk -> Knight", &s, &t, &p);
}
