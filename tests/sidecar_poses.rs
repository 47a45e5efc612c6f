//! The sidecar's sampled poses (`poses`, `source_poses`: the dashboard's
//! stick-figure player) are the package's clips as the runtime decodes
//! them: every stored position is within half a quantization step of the
//! runtime's component-space position at the frame's time. A retargeted
//! clip also carries its source's skeleton and poses over the same span;
//! above `sidecar_max_mb` the poses are left out and the record says so.

mod common;
use common::retarget::project;
use common::*;
use ludus_anim_report::sidecar::{ClipSidecar, Poses, Sidecar, POSE_BUDGET};
use ludus_anim_runtime::{Affine3A, Package, Transform};
use std::path::Path;

fn sidecar(out: &Path) -> Sidecar {
    let bytes = std::fs::read(out.join("report-sidecar.json")).expect("sidecar written");
    Sidecar::from_json(&bytes).expect("sidecar parses")
}

/// Every frame of `poses` against `positions(t)`: within half a step per
/// axis (plus f32 rounding of the box arithmetic).
fn assert_within_step(
    name: &str,
    poses: &Poses,
    duration_s: f32,
    mut positions: impl FnMut(f32) -> Vec<[f32; 3]>,
) {
    let joints = poses.joints();
    for f in 0..poses.frames {
        let want = positions(poses.time(f, duration_s));
        assert_eq!(want.len(), joints, "{name}");
        for (j, w) in want.iter().enumerate() {
            let got = poses.position(f as usize, j);
            for a in 0..3 {
                let tol = poses.step_m[a] * 0.5 + 1e-5 * (1.0 + w[a].abs());
                assert!(
                    (got[a] - w[a]).abs() <= tol,
                    "{name}: frame {f} joint {j} axis {a}: stored {} runtime {} (step {})",
                    got[a],
                    w[a],
                    poses.step_m[a]
                );
            }
        }
    }
}

/// Every clip of every package in `out` that has poses checked against
/// the runtime's decode; the number of clips checked.
fn check_packages(out: &Path, s: &Sidecar) -> usize {
    let report = report(out);
    let mut checked = 0;
    for (i, asset) in report["assets"].as_array().unwrap().iter().enumerate() {
        if asset["package"].is_null() {
            continue;
        }
        let source = asset["source"].as_str().unwrap();
        let bytes = std::fs::read(package_path(out, &report, i)).unwrap();
        let package = Package::load(&bytes).unwrap();
        let sk = package.skeleton();
        for clip in package.clips() {
            let name = clip.name().to_string();
            let profile = asset["clips"]
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["name"] == name.as_str())
                .and_then(|c| c["profile"].as_str())
                .unwrap()
                .to_string();
            let rec: &ClipSidecar = s.clip(source, &name, &profile).expect("clip record");
            let Some(poses) = &rec.poses else {
                assert!(clip.is_additive(), "{name}: only additive clips lack poses");
                continue;
            };
            assert_eq!(poses.joints(), sk.joint_count(), "{name}");
            assert!(
                poses.frames as usize * poses.joints() <= POSE_BUDGET.max(2 * sk.joint_count())
            );
            let defaults = package.sample_defaults(clip);
            let mut local = vec![Transform::IDENTITY; sk.joint_count()];
            let mut comp = vec![Affine3A::IDENTITY; sk.joint_count()];
            assert_within_step(&name, poses, clip.duration_s(), |t| {
                clip.sample(t, defaults, &mut local).unwrap();
                assert!(sk.local_to_component(&local, &mut comp));
                comp.iter().map(|m| m.translation.to_array()).collect()
            });
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_bundled_biped_poses_decode_to_the_runtime_positions() {
    let tmp = tempfile::tempdir().unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let o = ludus_anim(&["cook", biped.to_str().unwrap(), "--out", "o"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = tmp.path().join("o");
    let s = sidecar(&out);
    let checked = check_packages(&out, &s);
    assert!(checked >= 2, "clips checked: {checked}");
    // At 30 Hz over the clip, the first frame at 0, the last at the end.
    let c = s.clips.iter().find(|c| c.poses.is_some()).unwrap();
    let p = c.poses.as_ref().unwrap();
    assert_eq!(p.rate_hz, 30.0);
    assert_eq!(p.frames, (c.duration_s * 30.0).ceil() as u32 + 1);
    assert!(c.source_poses.is_none() && !c.poses_left_out);
}

#[test]
fn a_retargeted_clip_carries_its_source_poses_and_the_limit_leaves_them_out() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    let out = d.join("out");
    let s = sidecar(&out);
    assert!(check_packages(&out, &s) >= 1);
    let c = &s.clips[0];
    let src = c.source_poses.as_ref().expect("source poses");
    let result = c.poses.as_ref().unwrap();
    // The CMU skeleton, not the Knight's, sampled over the same span.
    assert_ne!(src.joints, c.joints);
    assert!(src.joints.len() >= 20, "{:?}", src.joints);
    assert_eq!(src.poses.joints(), src.joints.len());
    assert_eq!(src.parents[0], -1);
    let span = |p: &Poses| (p.frames - 1) as f32 / p.rate_hz;
    assert!((span(&src.poses) - span(result)).abs() < 1.0 / result.rate_hz);
    // The source walks: its hips move over the clip.
    let first = src.poses.position(0, 0);
    let last = src.poses.position(src.poses.frames as usize - 1, 0);
    let moved = (0..3)
        .map(|a| (last[a] - first[a]).powi(2))
        .sum::<f32>()
        .sqrt();
    assert!(moved > 0.1, "source root moved {moved} m");

    // Over the size limit: errors and poses left out, and said so.
    let manifest = d.join("ludus-anim.toml");
    let text_before = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        format!("{text_before}\n[report]\nsidecar_max_mb = 0.001\n"),
    )
    .unwrap();
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    let s = sidecar(&out);
    for c in &s.clips {
        assert!(c.poses.is_none() && c.source_poses.is_none(), "{}", c.clip);
        assert!(c.poses_left_out && c.error_q.is_empty(), "{}", c.clip);
    }
}
