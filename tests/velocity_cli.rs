//! Velocity error through the CLI (#44 item 7): a profile that sets
//! `velocity_threshold_mps` gets each clip's decoded-against-authored
//! velocity error in `report.json`, and a located warning above it; a
//! profile without it measures nothing. Like the decode time, it is
//! measured once, for the blob the encoder kept.

mod common;
use common::*;

fn biped() -> String {
    repo()
        .join("fixtures/biped.glb")
        .to_string_lossy()
        .into_owned()
}

fn clips(r: &serde_json::Value) -> Vec<serde_json::Value> {
    r["assets"][0]["clips"].as_array().unwrap().clone()
}

#[test]
fn hero_reports_velocity_error_within_its_threshold() {
    let tmp = tempfile::tempdir().unwrap();
    let o = ludus_anim(
        &[
            "cook",
            &biped(),
            "--profile",
            "hero",
            "--no-cache",
            "--out",
            "o",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&tmp.path().join("o"));
    for c in clips(&r) {
        let v = &c["velocity"];
        assert_eq!(
            v["threshold_mps"].as_f64().map(|t| t as f32),
            Some(0.01),
            "{c}"
        );
        let e = v["max_error_mps"].as_f64().unwrap();
        // Decoded motion within hero's position bound moves no joint by
        // more than a few mm/s more than the authored one.
        assert!(e > 0.0 && e < 0.01, "{}: {e}", c["name"]);
        assert_eq!(v["within"], true);
        assert!(v["intervals"].as_u64().unwrap() >= 30, "{v}");
        assert!(!v["joint"].as_str().unwrap().is_empty());
        // The other figure measured once, for the kept blob, outside the
        // encoder's checks: the decode time of a fresh cook.
        assert!(c["decode_ns_per_pose"].as_f64().unwrap() > 0.0, "{c}");
    }
}

#[test]
fn a_tight_velocity_threshold_warns_naming_joint_and_time() {
    let tmp = tempfile::tempdir().unwrap();
    let hero = std::fs::read_to_string(repo().join("profiles/hero.toml")).unwrap();
    let tight = hero.replace(
        "velocity_threshold_mps = 0.01",
        "velocity_threshold_mps = 0.00001",
    );
    assert_ne!(tight, hero, "hero.toml sets velocity_threshold_mps = 0.01");
    std::fs::write(tmp.path().join("tight.toml"), tight).unwrap();
    let o = ludus_anim(
        &[
            "cook",
            &biped(),
            "--profile",
            "tight.toml",
            "--no-cache",
            "--out",
            "o",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "a warning, not a failure: {}", text(&o));
    let r = report(&tmp.path().join("o"));
    for c in clips(&r) {
        assert_eq!(c["velocity"]["within"], false, "{c}");
        let w = c["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|w| w.as_str())
            .find(|w| w.contains("decoded velocity departs"))
            .unwrap_or_else(|| panic!("no velocity warning for {}", c["name"]));
        let joint = c["velocity"]["joint"].as_str().unwrap();
        assert!(
            w.contains(&format!("'{joint}'")) && w.contains(" s, over"),
            "{w}"
        );
    }
}

#[test]
fn standard_measures_no_velocity_and_a_bad_threshold_is_an_error() {
    let tmp = tempfile::tempdir().unwrap();
    let o = ludus_anim(&["cook", &biped(), "--no-cache", "--out", "o"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&tmp.path().join("o"));
    assert!(clips(&r).iter().all(|c| c.get("velocity").is_none()));

    let hero = std::fs::read_to_string(repo().join("profiles/hero.toml")).unwrap();
    let bad = hero.replace(
        "velocity_threshold_mps = 0.01",
        "velocity_threshold_mps = -1.0",
    );
    std::fs::write(tmp.path().join("bad.toml"), bad).unwrap();
    let o = ludus_anim(
        &[
            "cook",
            &biped(),
            "--profile",
            "bad.toml",
            "--no-cache",
            "--out",
            "b",
        ],
        tmp.path(),
    );
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("bad.toml") && t.contains("velocity_threshold_mps"),
        "{t}"
    );
}
