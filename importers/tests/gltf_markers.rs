//! Timeline markers from glTF `animation.extras.markers`: imported into
//! `SourceClip::markers` with the clip's time shift, and every malformed
//! marker is an error naming the file, the clip and the marker.

use base64::Engine;
use ludus_anim_importers::{gltf, ImportError, ImportOptions, Importer};
use ludus_anim_model::source::SourceMarker;
use ludus_anim_model::SourceAsset;
use serde_json::{json, Value};
use std::path::Path;

/// One joint animated by a LINEAR translation sampler keyed at 0.5 s and
/// 1.5 s (so the importer shifts the clip by -0.5 s), with `extras` on the
/// animation when given.
fn document(extras: Option<Value>) -> Vec<u8> {
    let mut bin = Vec::new();
    for t in [0.5f32, 1.5] {
        bin.extend_from_slice(&t.to_le_bytes());
    }
    for v in [0.0f32, 0.0, 0.0, 1.0, 2.0, 3.0] {
        bin.extend_from_slice(&v.to_le_bytes());
    }
    let uri = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&bin)
    );
    let mut anim = json!({
        "name": "walk",
        "channels": [{"sampler": 0, "target": {"node": 0, "path": "translation"}}],
        "samplers": [{"input": 0, "output": 1, "interpolation": "LINEAR"}]
    });
    if let Some(e) = extras {
        anim["extras"] = e;
    }
    let root = json!({
        "asset": {"version": "2.0"},
        "scene": 0,
        "scenes": [{"nodes": [0]}],
        "nodes": [{"name": "Hips"}],
        "buffers": [{"byteLength": bin.len(), "uri": uri}],
        "bufferViews": [
            {"buffer": 0, "byteOffset": 0, "byteLength": 8},
            {"buffer": 0, "byteOffset": 8, "byteLength": 24}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 2, "type": "SCALAR",
             "min": [0.5], "max": [1.5]},
            {"bufferView": 1, "componentType": 5126, "count": 2, "type": "VEC3"}
        ],
        "animations": [anim]
    });
    serde_json::to_vec(&root).expect("serialize")
}

fn import(extras: Option<Value>) -> Result<SourceAsset, ImportError> {
    gltf::GLTF.import(
        Path::new("markers.gltf"),
        &document(extras),
        &ImportOptions::default(),
        &ludus_anim_importers::FileSystem,
    )
}

fn marker(name: &str, time_s: f32, kind: &str) -> SourceMarker {
    SourceMarker {
        name: name.into(),
        time_s,
        kind: match kind {
            "sync" => ludus_anim_model::MarkerKind::SyncMarker,
            _ => ludus_anim_model::MarkerKind::Event,
        },
    }
}

#[test]
fn markers_are_imported_shifted_sorted_and_recorded() {
    let a = import(Some(json!({
        "author": "someone",
        "markers": [
            {"name": "step_sound", "time": 1.25},
            {"name": "foot_l", "time": 0.75, "kind": "sync"},
            {"name": "end", "time": 1.5, "kind": "event", "note": "ignored"}
        ]
    })))
    .expect("imports");
    let clip = &a.clips[0];
    assert_eq!(clip.duration_s, 1.0);
    assert_eq!(
        clip.markers,
        vec![
            marker("foot_l", 0.25, "sync"),
            marker("step_sound", 0.75, "event"),
            marker("end", 1.0, "event"),
        ]
    );
    let d = a
        .decisions
        .iter()
        .find(|d| d.kind == "imported_markers")
        .expect("decision");
    assert!(
        d.detail.contains("markers imported from glTF extras: 3"),
        "{}",
        d.detail
    );
}

#[test]
fn no_markers_without_extras_or_markers_key() {
    for extras in [
        None,
        Some(json!({"other": 1})),
        Some(json!("just a string")),
    ] {
        let a = import(extras).expect("imports");
        assert!(a.clips[0].markers.is_empty());
        assert!(!a.decisions.iter().any(|d| d.kind == "imported_markers"));
    }
}

/// The import fails with `bad_marker` naming the file and the clip, and
/// the message names `what` (the marker's name or index).
fn expect_error(markers: Value, what: &str) {
    let err = import(Some(json!({ "markers": markers })))
        .err()
        .unwrap_or_else(|| panic!("{markers} should not import"));
    let ImportError::Malformed(d) = err else {
        panic!("expected Malformed, got {err}");
    };
    assert_eq!(d.code, "bad_marker", "{d}");
    assert_eq!(d.file.as_deref(), Some("markers.gltf"));
    assert_eq!(d.clip.as_deref(), Some("walk"));
    assert!(d.message.contains("clip 'walk'"), "{d}");
    assert!(d.message.contains(what), "{d} should name {what}");
}

#[test]
fn malformed_markers_are_errors_naming_clip_and_marker() {
    // Non-finite once stored as f32 seconds.
    expect_error(json!([{"name": "boom", "time": 1e39}]), "marker 'boom'");
    expect_error(json!([{"name": "boom", "time": "NaN"}]), "marker 'boom'");
    expect_error(json!([{"name": "boom"}]), "marker 'boom'");
    expect_error(
        json!([{"name": "plant", "time": 1.0, "kind": "footstep"}]),
        "marker 'plant'",
    );
    expect_error(
        json!([{"name": "plant", "time": 1.0, "kind": 3}]),
        "marker 'plant'",
    );
    // Outside the keyed span 0.5..1.5 s.
    expect_error(json!([{"name": "late", "time": 2.0}]), "marker 'late'");
    expect_error(json!([{"name": "early", "time": 0.0}]), "marker 'early'");
    // Unnamed markers are named by index.
    expect_error(
        json!([{"name": "ok", "time": 1.0}, {"time": 1.0}]),
        "marker 1",
    );
    expect_error(json!([{"name": "", "time": 1.0}]), "marker 0");
    expect_error(json!([42]), "marker 0");
    expect_error(json!({"name": "x", "time": 1.0}), "extras.markers");
}
