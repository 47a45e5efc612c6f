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

/// The cook writes `OUT/report-sidecar.json` next to the report: valid
/// against `schemas/report-sidecar.schema.json`, one record per clip, its
/// error grid bounded by the report's figures, bit rates for every track;
/// `--no-sidecar` writes none.
#[test]
fn cook_writes_the_sidecar_and_no_sidecar_turns_it_off() {
    use ludus_anim_report::sidecar::{Sidecar, SIDECAR_FILE};
    let schema: Value = serde_json::from_slice(
        &std::fs::read(repo().join("schemas/report-sidecar.schema.json")).unwrap(),
    )
    .unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let biped = repo().join("fixtures/biped.glb");
    let o = ludus_anim(&["cook", biped.to_str().unwrap(), "--out", "o"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let bytes = std::fs::read(tmp.path().join("o").join(SIDECAR_FILE)).expect("sidecar written");
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let errs = ludus_anim_report::schema::validate(&schema, &v);
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    let side = Sidecar::from_json(&bytes).expect("sidecar parses and checks");
    let r = report(&tmp.path().join("o"));
    let clips = r["assets"][0]["clips"].as_array().unwrap();
    assert_eq!(side.clips.len(), clips.len());
    for c in clips {
        let name = c["name"].as_str().unwrap();
        let s = side
            .clips
            .iter()
            .find(|s| s.clip == name)
            .expect("a record per clip");
        assert!(s.has_errors() && s.time_count() > 0, "{name}");
        let times = c["times_checked"].as_u64().unwrap() as usize;
        assert_eq!(s.time_count(), times, "{name}: every checked time");
        let max = (0..s.joint_count())
            .flat_map(|j| (0..s.time_count()).map(move |t| (j, t)))
            .map(|(j, t)| s.error_m(j, t))
            .fold(0.0f32, f32::max);
        let reported = c["max_error_m"].as_f64().unwrap() as f32;
        let floor = c["checks"]["f32_floor_m"].as_f64().unwrap() as f32;
        // Quantized to 1/10000 of a threshold.
        assert!(
            (max + floor - reported).abs() < 2e-8,
            "{name}: {max} + {floor} vs {reported}"
        );
        let b = s.bit_rates.as_ref().expect("bit rates");
        assert_eq!(b.samples, c["samples"].as_u64().unwrap() as u32);
        assert_eq!(b.bits.len(), s.joint_count() * 3 * b.segment_starts.len());
    }
    let o = ludus_anim(
        &[
            "cook",
            biped.to_str().unwrap(),
            "--out",
            "p",
            "--no-sidecar",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(!tmp.path().join("p").join(SIDECAR_FILE).exists());
}
