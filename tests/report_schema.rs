//! `OUT/report.json` of a real cook conforms to
//! `schemas/report.schema.json` (checked with `ludus_anim_report::schema`).

mod common;
use common::*;
use serde_json::Value;

#[test]
fn report_conforms_to_its_schema() {
    let schema: Value =
        serde_json::from_slice(&std::fs::read(repo().join("schemas/report.schema.json")).unwrap())
            .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let bad = tmp.path().join("bad.bvh");
    std::fs::write(&bad, "HIERARCHY\nROOT a\n{\n").unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let o = ludus_anim(
        &[
            "cook",
            biped.to_str().unwrap(),
            bad.to_str().unwrap(),
            "--out",
            "o",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let r = report(&tmp.path().join("o"));
    let errs = ludus_anim_report::schema::validate(&schema, &r);
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    // The exact per-clip field names dashboards rely on.
    let clip = &r["assets"][0]["clips"][0];
    for k in [
        "name",
        "joints",
        "samples",
        "sample_rate_hz",
        "duration_s",
        "raw_bytes",
        "compressed_bytes",
        "resample_error_m",
        "max_error_m",
        "p99_error_m",
        "worst_joint",
        "worst_time_s",
        "warnings",
    ] {
        assert!(clip.get(k).is_some(), "clip field {k}");
    }
    for k in ["cooker_version", "profile", "assets", "totals"] {
        assert!(r.get(k).is_some(), "top-level field {k}");
    }
    // The package manifest against its schema.
    let pm_schema: Value = serde_json::from_slice(
        &std::fs::read(repo().join("schemas/package-manifest.schema.json")).unwrap(),
    )
    .unwrap();
    let pm: Value =
        serde_json::from_slice(&std::fs::read(tmp.path().join("o/manifest.json")).unwrap())
            .unwrap();
    let errs = ludus_anim_report::schema::validate(&pm_schema, &pm);
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    assert_eq!(
        pm["assets"].as_array().unwrap().len(),
        1,
        "failed assets are not in the package manifest"
    );
}
