//! Clip preparation declared in the project manifest, end to end through
//! the CLI: root motion, markers and events, loop-wrap, additive clips; the
//! runtime reads them back; a real mocap walk reports bounded drift.

mod common;
use common::*;
use ludus_anim_runtime::events::PlaybackLatch;
use ludus_anim_runtime::{Package, Transform};
use serde_json::Value;

const MANIFEST: &str = r#"
[project]
output = "out"

[[asset]]
sources = ["biped.glb"]

[asset.clips.walk]
loop = "loop"
drop_duplicate_end = true
root_motion = { joint = "Root", policy = "planar" }
markers = [
  { name = "foot_l", time_s = 0.0, kind = "sync" },
  { name = "foot_r", time_s = 0.6, kind = "sync" },
  { name = "step", time_s = 0.3, kind = "event", reversible = true },
  { name = "loop_end", time_s = 1.2, kind = "event" },
]

[asset.clips.idle_additive]
from = "idle"
range = [0.0, 3.0]
additive = { reference = "frame", clip = "idle", time_s = 0.0 }
"#;

fn clip<'a>(r: &'a Value, name: &str) -> &'a Value {
    r["assets"][0]["clips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == name)
        .unwrap()
}

#[test]
fn manifest_clip_preparation_cooks_and_reads_back() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(repo().join("fixtures/biped.glb"), d.join("biped.glb")).unwrap();
    std::fs::write(d.join("ludus-anim.toml"), MANIFEST).unwrap();
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&d.join("out"));

    let walk = clip(&r, "walk");
    assert_eq!(walk["loop"], "loop-wrap");
    assert_eq!(walk["markers"], 2);
    assert_eq!(walk["events"], 2);
    assert_eq!(walk["root_motion"]["joint"], "Root");
    let drift = walk["root_motion"]["drift_100_loops_m"].as_f64().unwrap();
    assert!(drift < 0.01, "100-loop drift {drift} m");
    assert!(walk["loop_seam_error_m"].as_f64().unwrap() < 1e-4);
    let add = clip(&r, "idle_additive");
    assert!(add["additive_reference"]
        .as_str()
        .unwrap()
        .starts_with("frame 'idle'"));
    assert!(add["max_error_m"].as_f64().unwrap() <= 1e-4);
    let idle = clip(&r, "idle");
    assert_eq!(idle["curves"]["count"], 1);

    let bytes = std::fs::read(package_path(&d.join("out"), &r, 0)).unwrap();
    let p = Package::load(&bytes).unwrap();
    let w = p.clip("walk").unwrap();
    // The trajectory: forward over two and a half loops equals the cycle
    // transform composed, and the visual root stays near the origin.
    let tr = w.trajectory().expect("walk has a trajectory");
    let one = tr.delta(0.0, w.duration_s() as f64, true);
    let many = tr.delta(0.1, 0.1 + 2.5 * w.duration_s() as f64, true);
    let split =
        tr.delta(0.1, 1.3, true)
            .compose(&tr.delta(1.3, 0.1 + 2.5 * w.duration_s() as f64, true));
    assert!((many.translation - split.translation).length() < 1e-4);
    assert!(
        one.translation.z > 1.0,
        "a walk cycle moves forward: {:?}",
        one.translation
    );
    let sk = p.skeleton();
    let root = sk.find_by_name("Root").unwrap();
    let mut pose = vec![Transform::IDENTITY; sk.joint_count()];
    for k in 0..10 {
        assert!(w
            .sample(k as f32 * 0.11, p.sample_defaults(w), &mut pose)
            .is_ok());
        let t = pose[root].translation;
        assert!(
            t.x.abs() < 1e-3 && t.z.abs() < 1e-3,
            "root motion removed from the pose: {t:?}"
        );
    }
    // Events crossed over one and a half loops, in order, with cycles.
    let mut latch = PlaybackLatch::default();
    let mut out = [ludus_anim_runtime::events::Crossing::default(); 16];
    let n = w
        .crossed_events(0.1, 0.1 + 1.5 * w.duration_s() as f64, &mut latch, &mut out)
        .unwrap();
    let names: Vec<&str> = out[..n]
        .iter()
        .map(|c| w.markers()[c.index as usize].name)
        .collect();
    // `loop_end` was authored at the duration: canonicalized to the loop
    // start (t = 0), it fires once per wrap beside `foot_l`, never twice.
    assert_eq!(names.len(), 6, "{names:?}");
    assert_eq!(&names[..2], ["step", "foot_r"], "{names:?}");
    let mut at_wrap = names[2..4].to_vec();
    at_wrap.sort();
    assert_eq!(at_wrap, ["foot_l", "loop_end"], "{names:?}");
    assert!(
        out[2].cycle == 1 && out[3].cycle == 1,
        "loop-start events carry the new cycle"
    );
    assert_eq!(&names[4..], ["step", "foot_r"], "{names:?}");
    assert!(p.clip("idle_additive").unwrap().is_additive());
}

/// A real mocap walk (CMU 12_01, BVH) with root motion on its hips, looped:
/// the trajectory is extracted and its 100-loop drift is reported and small.
#[test]
fn mocap_walk_root_motion_drift_is_reported_and_bounded() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(fx.join("bvh/cmu_12_01_walk.bvh"), d.join("walk.bvh")).unwrap();
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[[asset]]\nsources = [\"walk.bvh\"]\n\n[asset.clips.walk]\nloop = \"loop\"\nroot_motion = { joint = \"Hips\", policy = \"planar\" }\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&d.join("out"));
    let c = &r["assets"][0]["clips"][0];
    let drift = c["root_motion"]["drift_100_loops_m"].as_f64().unwrap();
    // Bound: 1 cm after 100 loops of a 4.4 s walk (~500 m travelled).
    assert!(drift < 0.01, "drift {drift} m");
    assert!(c["max_error_m"].as_f64().unwrap() <= 1e-4);
}
