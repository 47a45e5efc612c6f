//! `OUT/report.json` conforms to `schemas/report.schema.json`, checked with
//! a small validator for the schema subset it uses (type, enum, required,
//! properties, additionalProperties, items, $ref).

mod common;
use common::*;
use serde_json::Value;

fn check(schema: &Value, root: &Value, v: &Value, path: &str, errs: &mut Vec<String>) {
    if let Some(r) = schema.get("$ref").and_then(Value::as_str) {
        let name = r.trim_start_matches("#/$defs/");
        return check(&root["$defs"][name], root, v, path, errs);
    }
    if let Some(t) = schema.get("type") {
        let types: Vec<&str> = match t {
            Value::String(s) => vec![s.as_str()],
            Value::Array(a) => a.iter().filter_map(Value::as_str).collect(),
            _ => vec![],
        };
        let ok = types.iter().any(|t| match *t {
            "object" => v.is_object(),
            "array" => v.is_array(),
            "string" => v.is_string(),
            "number" => v.is_number(),
            "integer" => v.is_u64() || v.is_i64(),
            "null" => v.is_null(),
            "boolean" => v.is_boolean(),
            _ => false,
        });
        if !ok {
            errs.push(format!("{path}: expected {types:?}, got {v}"));
            return;
        }
    }
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        if !e.contains(v) {
            errs.push(format!("{path}: {v} not in {e:?}"));
        }
    }
    if let Some(o) = v.as_object() {
        for r in schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let k = r.as_str().unwrap_or_default();
            if !o.contains_key(k) {
                errs.push(format!("{path}: missing required '{k}'"));
            }
        }
        let props = schema.get("properties").and_then(Value::as_object);
        for (k, val) in o {
            match props.and_then(|p| p.get(k)) {
                Some(s) => check(s, root, val, &format!("{path}.{k}"), errs),
                None if schema.get("additionalProperties") == Some(&Value::Bool(false)) => {
                    errs.push(format!("{path}: property '{k}' not in the schema"))
                }
                None => {}
            }
        }
    }
    if let (Some(a), Some(items)) = (v.as_array(), schema.get("items")) {
        for (i, x) in a.iter().enumerate() {
            check(items, root, x, &format!("{path}[{i}]"), errs);
        }
    }
}

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
    let mut errs = Vec::new();
    check(&schema, &schema, &r, "$", &mut errs);
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
    let mut errs = Vec::new();
    check(&pm_schema, &pm_schema, &pm, "$", &mut errs);
    assert!(errs.is_empty(), "{}", errs.join("\n"));
    assert_eq!(
        pm["assets"].as_array().unwrap().len(),
        1,
        "failed assets are not in the package manifest"
    );
}
