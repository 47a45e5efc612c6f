//! Small glTF files built in the test: broken ones give the documented
//! error, odd-but-valid ones import with the documented decisions.

use base64::Engine;
use ludus_anim_importers::{import_bytes, FileSystem, ImportError, ImportOptions};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::{Diagnostic, Interpolation, Severity, SourceAsset, SourceFormat};
use serde_json::{json, Value};
use std::path::Path;

/// A minimal glTF document under construction: one embedded buffer.
#[derive(Default)]
struct Doc {
    bin: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
    nodes: Vec<Value>,
    animations: Vec<Value>,
    skins: Vec<Value>,
    meshes: Vec<Value>,
    extra: serde_json::Map<String, Value>,
}

impl Doc {
    /// Append floats as a new buffer view + accessor; returns the accessor.
    fn floats(&mut self, data: &[f32], ty: &str) -> usize {
        let bytes: Vec<u8> = data.iter().flat_map(|v| v.to_le_bytes()).collect();
        let comps = match ty {
            "SCALAR" => 1,
            "VEC3" => 3,
            "VEC4" => 4,
            "MAT4" => 16,
            _ => panic!("test type"),
        };
        self.raw(&bytes, ty, 5126, data.len() / comps, false)
    }

    fn raw(
        &mut self,
        bytes: &[u8],
        ty: &str,
        component_type: u32,
        count: usize,
        normalized: bool,
    ) -> usize {
        while self.bin.len() & 3 != 0 {
            self.bin.push(0);
        }
        let offset = self.bin.len();
        self.bin.extend_from_slice(bytes);
        self.views
            .push(json!({"buffer": 0, "byteOffset": offset, "byteLength": bytes.len()}));
        let mut acc = json!({
            "bufferView": self.views.len() - 1,
            "componentType": component_type,
            "count": count,
            "type": ty,
        });
        if normalized {
            acc["normalized"] = json!(true);
        }
        self.accessors.push(acc);
        self.accessors.len() - 1
    }

    fn node(&mut self, node: Value) -> usize {
        self.nodes.push(node);
        self.nodes.len() - 1
    }

    /// One animation with one channel per (node, path, input, output, interpolation).
    fn animation(&mut self, name: Option<&str>, channels: &[(usize, &str, usize, usize, &str)]) {
        let samplers: Vec<Value> = channels
            .iter()
            .map(|(_, _, i, o, interp)| json!({"input": i, "output": o, "interpolation": interp}))
            .collect();
        let chans: Vec<Value> = channels
            .iter()
            .enumerate()
            .map(|(s, (n, p, _, _, _))| json!({"sampler": s, "target": {"node": n, "path": p}}))
            .collect();
        let mut a = json!({"channels": chans, "samplers": samplers});
        if let Some(n) = name {
            a["name"] = json!(n);
        }
        self.animations.push(a);
    }

    fn json(&self) -> Value {
        let uri = format!(
            "data:application/octet-stream;base64,{}",
            base64::engine::general_purpose::STANDARD.encode(&self.bin)
        );
        let mut root = json!({
            "asset": {"version": "2.0"},
            "buffers": [{"uri": uri, "byteLength": self.bin.len()}],
            "bufferViews": self.views,
            "accessors": self.accessors,
            "nodes": self.nodes,
            "scenes": [{"nodes": [0]}],
            "scene": 0,
        });
        for (k, v) in [
            ("animations", &self.animations),
            ("skins", &self.skins),
            ("meshes", &self.meshes),
        ] {
            if !v.is_empty() {
                root[k] = json!(v);
            }
        }
        for (k, v) in &self.extra {
            root[k] = v.clone();
        }
        root
    }

    fn bytes(&self) -> Vec<u8> {
        serde_json::to_vec(&self.json()).unwrap()
    }

    /// The same document as a GLB with a BIN chunk instead of a data URI.
    fn glb(&self) -> Vec<u8> {
        let mut root = self.json();
        root["buffers"] = json!([{"byteLength": self.bin.len()}]);
        let mut json_chunk = serde_json::to_vec(&root).unwrap();
        while json_chunk.len() & 3 != 0 {
            json_chunk.push(b' ');
        }
        let mut bin = self.bin.clone();
        while bin.len() & 3 != 0 {
            bin.push(0);
        }
        let total = 12 + 8 + json_chunk.len() + 8 + bin.len();
        let mut out = Vec::new();
        out.extend_from_slice(b"glTF");
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(json_chunk.len() as u32).to_le_bytes());
        out.extend_from_slice(b"JSON");
        out.extend_from_slice(&json_chunk);
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(&bin);
        out
    }
}

/// A two-joint skinned arm with a 3-key LINEAR rotation clip on the child.
fn arm() -> Doc {
    let mut d = Doc::default();
    d.node(json!({"name": "root", "children": [1]}));
    d.node(json!({"name": "arm", "translation": [0.0, 1.0, 0.0]}));
    let t = d.floats(&[0.0, 0.5, 1.0], "SCALAR");
    let r = d.floats(
        &[
            0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.38268343, 0.9238795, 0.0, 0.0, 0.70710677, 0.70710677,
        ],
        "VEC4",
    );
    d.animation(Some("wave"), &[(1, "rotation", t, r, "LINEAR")]);
    d
}

fn import(name: &str, bytes: &[u8]) -> Result<SourceAsset, ImportError> {
    import_with(name, bytes, &ImportOptions::default())
}

fn import_with(
    name: &str,
    bytes: &[u8],
    options: &ImportOptions,
) -> Result<SourceAsset, ImportError> {
    let path = Path::new(name);
    let format = if name.ends_with(".glb") {
        SourceFormat::Glb
    } else {
        SourceFormat::Gltf
    };
    import_bytes(path, format, bytes, options, &FileSystem)
}

fn malformed(result: Result<SourceAsset, ImportError>) -> Diagnostic {
    match result {
        Err(ImportError::Malformed(d)) => {
            assert_eq!(d.severity, Severity::Error);
            *d
        }
        Err(e) => panic!("expected Malformed, got {e}"),
        Ok(a) => panic!(
            "expected Malformed, imported {} joints",
            a.skeleton.joints.len()
        ),
    }
}

fn errors(asset: &SourceAsset) -> Vec<Diagnostic> {
    let mut all = asset.diagnostics.clone();
    all.extend(validate_asset(asset));
    all.errors().cloned().collect()
}

fn decision<'a>(asset: &'a SourceAsset, kind: &str) -> Option<&'a str> {
    asset
        .decisions
        .iter()
        .find(|d| d.kind == kind)
        .map(|d| d.detail.as_str())
}

#[test]
fn well_formed_arm_imports_cleanly_as_gltf_and_glb() {
    for (name, bytes) in [("arm.gltf", arm().bytes()), ("arm.glb", arm().glb())] {
        let a = import(name, &bytes).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(errors(&a).is_empty(), "{name}: {:?}", errors(&a));
        assert_eq!(a.skeleton.joints.len(), 2);
        assert_eq!(a.clips[0].name, "wave");
        assert_eq!(a.clips[0].duration_s, 1.0);
        assert_eq!(a.clips[0].frame_rate_hz, None);
        assert_eq!(a.clips[0].key_times, vec![0.0, 0.5, 1.0]);
        assert_eq!(
            a.format,
            if name.ends_with(".glb") {
                SourceFormat::Glb
            } else {
                SourceFormat::Gltf
            }
        );
    }
}

#[test]
fn truncated_glb_is_malformed() {
    let full = arm().glb();
    // Every cut point: header, chunk headers, JSON and BIN payloads.
    for n in [0, 4, 11, 12, 19, 20, full.len() / 2, full.len() - 1] {
        let d = malformed(import("cut.glb", &full[..n]));
        assert!(
            d.code == "malformed_glb" || d.code == "invalid_json",
            "cut at {n}: {d}"
        );
        assert_eq!(d.file.as_deref(), Some("cut.glb"));
    }
    let d = malformed(import("cut.glb", &full[..full.len() - 1]));
    assert!(d.message.contains("truncated GLB"), "{d}");
}

#[test]
fn glb_whose_json_chunk_is_another_glb_is_malformed() {
    let mut inner = b"glTF".to_vec();
    inner.extend_from_slice(&2u32.to_le_bytes());
    inner.extend_from_slice(&5u32.to_le_bytes());
    let mut outer = b"glTF".to_vec();
    outer.extend_from_slice(&2u32.to_le_bytes());
    outer.extend_from_slice(&(20 + inner.len() as u32).to_le_bytes());
    outer.extend_from_slice(&(inner.len() as u32).to_le_bytes());
    outer.extend_from_slice(b"JSON");
    outer.extend_from_slice(&inner);
    assert_eq!(malformed(import("nested.glb", &outer)).code, "invalid_json");
}

#[test]
fn not_json_is_malformed() {
    let d = malformed(import("junk.gltf", b"this is not json"));
    assert_eq!(d.code, "invalid_json");
    let d = malformed(import("old.gltf", br#"{"asset":{"version":"1.0"}}"#));
    assert_eq!(d.code, "unsupported_version");
}

#[test]
fn accessor_past_its_buffer_is_malformed() {
    let mut d = arm();
    d.accessors[1]["byteOffset"] = json!(16);
    let e = malformed(import("oob.gltf", &d.bytes()));
    assert_eq!(e.code, "bad_accessor");
    assert_eq!(e.clip.as_deref(), Some("wave"));
    assert_eq!(e.joint.as_deref(), Some("arm"));
    assert!(e.message.contains("buffer view"), "{e}");

    // A buffer view claiming more bytes than the buffer holds.
    let mut d = arm();
    d.views[1]["byteLength"] = json!(4096);
    d.accessors[1]["count"] = json!(200);
    let e = malformed(import("oob.gltf", &d.bytes()));
    assert_eq!(e.code, "bad_accessor", "{e}");

    // An absurd count must not be allocated: it is over the key limit.
    let mut d = arm();
    d.accessors[0]["count"] = json!(u32::MAX);
    match import("huge.gltf", &d.bytes()) {
        Err(ImportError::Limit(e)) => {
            assert_eq!(e.limit.name(), "max_keys_per_channel");
            assert_eq!(e.clip.as_deref(), Some("wave"));
            assert_eq!(e.joint.as_deref(), Some("arm"));
        }
        other => panic!("expected a limit error, got {other:?}"),
    }
}

#[test]
fn accessor_of_wrong_type_or_count_is_malformed() {
    let mut d = arm();
    d.accessors[1]["type"] = json!("VEC3");
    d.accessors[1]["count"] = json!(4);
    let e = malformed(import("type.gltf", &d.bytes()));
    assert_eq!(e.code, "bad_accessor");
    assert!(e.message.contains("expected VEC4"), "{e}");

    let mut d = arm();
    d.accessors[1]["count"] = json!(2);
    let e = malformed(import("count.gltf", &d.bytes()));
    assert_eq!(e.code, "sampler_count_mismatch");
    assert_eq!(e.clip.as_deref(), Some("wave"));

    // CUBICSPLINE needs three outputs per key.
    let mut d = arm();
    d.animations[0]["samplers"][0]["interpolation"] = json!("CUBICSPLINE");
    let e = malformed(import("cubic.gltf", &d.bytes()));
    assert_eq!(e.code, "sampler_count_mismatch");
}

#[test]
fn nan_keys_are_reported_by_validate_asset_with_clip_joint_time() {
    let mut d = arm();
    let t = d.floats(&[0.0, 0.25], "SCALAR");
    let v = d.floats(&[0.0, 1.0, 0.0, f32::NAN, 1.0, 0.0], "VEC3");
    d.animation(Some("bad"), &[(1, "translation", t, v, "LINEAR")]);
    let a = import("nan.gltf", &d.bytes()).expect("NaN values are a value-level problem");
    let e = validate_asset(&a);
    let e = e
        .errors()
        .find(|e| e.clip.as_deref() == Some("bad"))
        .expect("NaN reported");
    assert_eq!(e.code, "bad_key");
    assert_eq!(e.joint.as_deref(), Some("arm"));
    assert_eq!(e.time_s, Some(0.25));
    assert_eq!(e.file.as_deref(), Some("nan.gltf"));
}

#[test]
fn negative_scale_keys_are_reported_by_validate_asset() {
    let mut d = arm();
    let t = d.floats(&[0.0, 0.5], "SCALAR");
    let v = d.floats(&[1.0, 1.0, 1.0, 1.0, -1.0, 1.0], "VEC3");
    d.animation(Some("mirror"), &[(1, "scale", t, v, "LINEAR")]);
    let a = import("neg.gltf", &d.bytes()).unwrap();
    let e = validate_asset(&a);
    let e = e.errors().next().expect("negative scale reported");
    assert_eq!(e.code, "bad_scale");
    assert_eq!(e.clip.as_deref(), Some("mirror"));
    assert_eq!(e.joint.as_deref(), Some("arm"));
    assert_eq!(e.time_s, Some(0.5));
}

#[test]
fn cyclic_hierarchy_is_malformed() {
    let mut d = arm();
    d.nodes[1]["children"] = json!([0]);
    let e = malformed(import("cycle.gltf", &d.bytes()));
    assert_eq!(e.code, "cyclic_hierarchy");
    assert!(e.joint.is_some());

    let mut d = arm();
    d.nodes[1]["children"] = json!([1]);
    assert_eq!(
        malformed(import("self.gltf", &d.bytes())).code,
        "multiple_parents"
    );

    // A cycle not reachable from any scene root is still a cycle.
    let mut d = arm();
    d.node(json!({"name": "a", "children": [3]}));
    d.node(json!({"name": "b", "children": [2]}));
    let e = malformed(import("cycle2.gltf", &d.bytes()));
    assert_eq!(e.code, "cyclic_hierarchy");
}

#[test]
fn multi_parent_hierarchy_is_malformed() {
    let mut d = arm();
    d.node(json!({"name": "other", "children": [1]}));
    let e = malformed(import("twoparents.gltf", &d.bytes()));
    assert_eq!(e.code, "multiple_parents");
    assert_eq!(e.joint.as_deref(), Some("arm"));
    assert!(
        e.message.contains("'root'") && e.message.contains("'other'"),
        "{e}"
    );
}

#[test]
fn missing_needed_buffer_is_an_error_and_unneeded_one_a_warning() {
    let dir = std::env::temp_dir().join(format!("ludus_gltf_missing_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let d = arm();
    let mut root = d.json();
    root["buffers"] = json!([{"uri": "nowhere.bin", "byteLength": d.bin.len()}]);
    let path = dir.join("needs.gltf");
    let e = match import_bytes(
        &path,
        SourceFormat::Gltf,
        &serde_json::to_vec(&root).unwrap(),
        &ImportOptions::default(),
        &FileSystem,
    ) {
        Err(ImportError::Malformed(e)) => *e,
        other => panic!("expected missing buffer error, got {:?}", other.map(|_| ())),
    };
    assert_eq!(e.code, "missing_buffer");
    assert!(
        e.message.contains("nowhere.bin") && e.message.contains("buffer 0"),
        "{e}"
    );

    // External buffer present: read and recorded as a companion.
    std::fs::write(dir.join("arm data.bin"), &d.bin).unwrap();
    root["buffers"] = json!([
        {"uri": "arm%20data.bin", "byteLength": d.bin.len()},
        {"uri": "mesh_only.bin", "byteLength": 64},
    ]);
    root["images"] = json!([{"uri": "missing_texture.png"}, {"uri": "data:image/png;base64,@@@"}]);
    let a = import_bytes(
        &path,
        SourceFormat::Gltf,
        &serde_json::to_vec(&root).unwrap(),
        &ImportOptions::default(),
        &FileSystem,
    )
    .unwrap();
    assert!(errors(&a).is_empty(), "{:?}", errors(&a));
    assert_eq!(
        a.companions,
        vec![dir.join("arm data.bin").display().to_string()]
    );
    let w: Vec<_> = a.diagnostics.warnings().collect();
    assert!(
        w.iter()
            .any(|w| w.code == "missing_buffer" && w.message.contains("mesh_only.bin")),
        "{w:?}"
    );
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn invalid_data_outside_skeleton_and_animation_is_only_a_warning() {
    let mut d = arm();
    d.extra.insert("textures".into(), json!([{"source": 7}]));
    d.extra.insert(
        "materials".into(),
        json!([{"pbrMetallicRoughness": {"baseColorTexture": {"index": 3}}}]),
    );
    let a = import("broken_images.gltf", &d.bytes()).unwrap();
    assert!(errors(&a).is_empty());
    assert!(a
        .diagnostics
        .warnings()
        .any(|w| w.code == "ignored_invalid_data"));
}

#[test]
fn matrix_rest_is_kept_and_bad_matrices_are_errors_naming_the_node() {
    // Like RiggedSimple: an unanimated matrix joint under a matrix node.
    let mut d = arm();
    d.nodes[0] = json!({"name": "root", "children": [1],
        "matrix": [0.0, 0.0, -0.01, 0.0, 0.0, 0.01, 0.0, 0.0, 0.01, 0.0, 0.0, 0.0, 1.0, 2.0, 3.0, 1.0]});
    let a = import("matrix.gltf", &d.bytes()).unwrap();
    assert!(errors(&a).is_empty(), "{:?}", errors(&a));
    let root = &a.skeleton.joints[a.skeleton.find("root").unwrap()].rest;
    assert!((root.scale - ludus_anim_model::Vec3::splat(0.01)).length() < 1e-6);
    assert!((root.translation - ludus_anim_model::Vec3::new(1.0, 2.0, 3.0)).length() < 1e-6);
    let quarter_turn = ludus_anim_model::Quat::from_rotation_y(std::f32::consts::FRAC_PI_2);
    assert!(1.0 - root.rotation.dot(quarter_turn).abs() < 1e-6);

    d.nodes[0]["matrix"] =
        json!([-1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]);
    let a = import("mirror.gltf", &d.bytes()).unwrap();
    let e = a
        .diagnostics
        .errors()
        .next()
        .expect("mirror matrix is an error");
    assert_eq!(e.code, "matrix_not_decomposable");
    assert_eq!(e.joint.as_deref(), Some("root"));
}

#[test]
fn names_roots_leaves_and_time_shift_are_decided_and_recorded() {
    let mut d = Doc::default();
    d.node(json!({"name": "Armature", "children": [1, 2], "scale": [0.01, 0.01, 0.01]}));
    d.node(json!({"name": "Bone", "children": [3]}));
    d.node(json!({"name": "Bone", "children": [4]}));
    d.node(json!({"name": "Bone_end"}));
    d.node(json!({}));
    d.node(json!({"name": "Body", "mesh": 0, "skin": 0}));
    d.node(json!({"name": "Bone.1"}));
    d.meshes.push(json!({"primitives": [{"attributes": {}}]}));
    d.skins.push(json!({"name": "rig", "joints": [1, 2]}));
    d.extra
        .insert("scenes".into(), json!([{"nodes": [0, 5, 6]}]));
    let t = d.floats(&[2.0, 3.0], "SCALAR");
    let v = d.floats(&[0.0, 0.0, 0.0, 0.0, 1.0, 0.0], "VEC3");
    d.animation(None, &[(2, "translation", t, v, "LINEAR")]);
    let a = import("names.gltf", &d.bytes()).unwrap();
    assert!(errors(&a).is_empty(), "{:?}", errors(&a));
    let names: Vec<&str> = a.skeleton.joints.iter().map(|j| j.name.as_str()).collect();
    // "Bone.1" exists as a node name, so the duplicate becomes "Bone.2".
    assert_eq!(names, ["Armature", "Bone", "Bone.2"]);
    assert!(decision(&a, "renamed_duplicate")
        .unwrap()
        .contains("'Bone.2'"));
    assert!(decision(&a, "root_joints").unwrap().contains("'Armature'"));
    let dropped = decision(&a, "dropped_unused_leaves").unwrap();
    assert!(
        dropped.contains("'Bone_end'") && dropped.contains("'node4'"),
        "{dropped}"
    );
    let skipped = decision(&a, "skipped_nodes").unwrap();
    assert!(
        skipped.contains("'Body' (mesh)") && skipped.contains("'Bone.1'"),
        "{skipped}"
    );
    assert!(decision(&a, "skin_skeleton").is_some());
    let clip = &a.clips[0];
    assert_eq!(clip.name, "anim0");
    assert!(decision(&a, "unnamed_clip").is_some());
    assert!(decision(&a, "clip_time_shift").unwrap().contains("2 s"));
    assert_eq!(clip.duration_s, 1.0);
    assert_eq!(clip.key_times, vec![0.0, 1.0]);

    let keep = ImportOptions {
        keep_unused_leaves: true,
        custom_curves: Vec::new(),
    };
    let a = import_with("names.gltf", &d.bytes(), &keep).unwrap();
    let names: Vec<&str> = a.skeleton.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["Armature", "Bone", "Bone.2", "Bone_end", "node4"]);
    assert!(decision(&a, "kept_unused_leaves").is_some());
}

#[test]
fn several_skins_give_their_union() {
    let mut d = arm();
    d.node(json!({"name": "tail"}));
    d.nodes[0]["children"] = json!([1, 2]);
    d.skins.push(json!({"joints": [1]}));
    d.skins.push(json!({"name": "tail rig", "joints": [2]}));
    let a = import("skins.gltf", &d.bytes()).unwrap();
    assert_eq!(a.skeleton.joints.len(), 3);
    assert!(decision(&a, "skin_union").unwrap().contains("'tail rig'"));
}

#[test]
fn sparse_and_quantized_accessors_decode() {
    let mut d = arm();
    // Quantized rotations (KHR_mesh_quantization): normalized shorts.
    let q: Vec<u8> = [0i16, 0, 0, 32767, 0, 0, 32767, 0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let t = d.floats(&[0.0, 1.0], "SCALAR");
    let r = d.raw(&q, "VEC4", 5122, 2, true);
    // Sparse translations: base [0,0,0]x3, element 2 replaced by (1,2,3).
    let base = d.floats(&[0.0; 9], "VEC3");
    let idx = d.raw(&[2u8, 0, 0, 0], "SCALAR", 5121, 1, false);
    let val = d.floats(&[1.0, 2.0, 3.0], "VEC3");
    let idx_view = d.accessors[idx]["bufferView"].clone();
    let val_view = d.accessors[val]["bufferView"].clone();
    d.accessors[base]["sparse"] = json!({
        "count": 1,
        "indices": {"bufferView": idx_view, "componentType": 5121},
        "values": {"bufferView": val_view},
    });
    let t3 = d.floats(&[0.0, 1.0, 2.0], "SCALAR");
    d.animation(
        Some("packed"),
        &[
            (1, "rotation", t, r, "STEP"),
            (1, "translation", t3, base, "LINEAR"),
        ],
    );
    d.extra
        .insert("extensionsUsed".into(), json!(["KHR_mesh_quantization"]));
    d.extra.insert(
        "extensionsRequired".into(),
        json!(["KHR_mesh_quantization"]),
    );
    let a = import("packed.gltf", &d.bytes()).unwrap();
    assert!(errors(&a).is_empty(), "{:?}", errors(&a));
    let clip = a.clips.iter().find(|c| c.name == "packed").unwrap();
    let tr = &clip.tracks[0];
    let rot = tr.rotation.as_ref().unwrap();
    assert_eq!(rot.interpolation, Interpolation::Step);
    assert_eq!(rot.keys[1].value.to_array(), [0.0, 0.0, 1.0, 0.0]);
    let tra = tr.translation.as_ref().unwrap();
    let got: Vec<[f32; 3]> = tra.keys.iter().map(|k| k.value.to_array()).collect();
    assert_eq!(got, [[0.0; 3], [0.0; 3], [1.0, 2.0, 3.0]]);
    assert!(a.diagnostics.0.is_empty(), "{:?}", a.diagnostics);

    // Out-of-range sparse index is malformed, not a panic.
    d.accessors.last_mut().unwrap()["byteOffset"] = json!(0);
    let mut bad = d.json();
    bad["accessors"][base]["sparse"]["count"] = json!(2);
    let e = malformed(import("sparse.gltf", &serde_json::to_vec(&bad).unwrap()));
    assert_eq!(e.code, "bad_accessor");
}

#[test]
fn morph_weights_with_target_names_and_cubic_tangents() {
    let mut d = Doc::default();
    d.node(json!({"name": "Face", "mesh": 0, "weights": [0.25, 0.0]}));
    d.meshes.push(json!({
        "primitives": [{"attributes": {}, "targets": [{}, {}]}],
        "weights": [0.5, 0.75],
        "extras": {"targetNames": ["Smile", "Blink"]},
    }));
    let t = d.floats(&[0.0, 1.0], "SCALAR");
    // Per key: in-tangents (2), values (2), out-tangents (2).
    let w = d.floats(
        &[
            0.0, 0.0, 0.0, 1.0, 2.0, 0.0, /* key 1 */ 0.0, 3.0, 1.0, 0.0, 0.0, 0.0,
        ],
        "SCALAR",
    );
    d.animation(Some("talk"), &[(0, "weights", t, w, "CUBICSPLINE")]);
    let a = import("face.gltf", &d.bytes()).unwrap();
    assert!(errors(&a).is_empty(), "{:?}", errors(&a));
    let curves = &a.clips[0].curves;
    assert_eq!(curves.len(), 2);
    assert_eq!(curves[0].name, "Face/weights/Smile");
    assert_eq!(curves[1].name, "Face/weights/Blink");
    assert_eq!(
        curves[0].default, 0.25,
        "node weights override mesh weights"
    );
    let smile = &curves[0].curve;
    assert_eq!(smile.interpolation, Interpolation::CubicSpline);
    assert_eq!((smile.keys[0].value, smile.keys[0].out_tangent), (0.0, 2.0));
    assert_eq!((smile.keys[1].in_tangent, smile.keys[1].value), (0.0, 1.0));
    let blink = &curves[1].curve;
    assert_eq!(
        (
            blink.keys[0].value,
            blink.keys[1].in_tangent,
            blink.keys[1].value
        ),
        (1.0, 3.0, 0.0)
    );

    // A weights channel on a node without morph targets is malformed.
    d.meshes[0] = json!({"primitives": [{"attributes": {}}]});
    d.nodes[0] = json!({"name": "Face", "mesh": 0});
    assert_eq!(
        malformed(import("face.gltf", &d.bytes())).code,
        "bad_weights"
    );
}

#[test]
fn unknown_channel_property_is_dropped_with_a_warning() {
    let mut d = arm();
    d.animations[0]["channels"][0]["target"]["path"] = json!("pointer");
    let a = import("pointer.gltf", &d.bytes()).unwrap();
    assert!(a
        .diagnostics
        .warnings()
        .any(|w| w.code == "unsupported_channel"));
}

/// Deterministic byte mutations of valid files: every outcome is fine
/// except a panic.
#[test]
fn mutated_files_never_panic() {
    let mut seed: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        seed
    };
    for (name, original) in [("m.glb", arm().glb()), ("m.gltf", arm().bytes())] {
        for _ in 0..1500 {
            let mut bytes = original.clone();
            for _ in 0..(1 + next() % 4) {
                let at = (next() as usize) % bytes.len();
                bytes[at] = match next() % 4 {
                    0 => b'9',
                    1 => b'-',
                    2 => b'[',
                    _ => next() as u8,
                };
            }
            let _ = import(name, &bytes);
        }
    }
    // Structured mutations of numbers that index or size things.
    let base = arm().json();
    for field in ["byteOffset", "byteLength", "count", "byteStride"] {
        for value in [0i64, 1, 3, 7, 255, 65_535, 1 << 31, i64::MAX] {
            let mut j = base.clone();
            j["accessors"][1][field] = json!(value);
            j["bufferViews"][1][field] = json!(value);
            let _ = import("s.gltf", &serde_json::to_vec(&j).unwrap());
        }
    }
}

/// A skin bound with the arm bent (its inverse bind matrices) while the
/// nodes rest straight: the rest stays the nodes' transforms, the bind
/// pose and inverse binds go with the skin, and the mesh's vertices and
/// influences come along for the bind-pose check.
#[test]
fn gltf_rest_and_bind_pose_stay_distinct() {
    use ludus_anim_format::math::{Affine3A, Quat, Vec3};
    let mut d = arm();
    // Bind pose: root at the origin, arm at (0, 1, 0) turned 90 degrees
    // about Z (rest: not turned).
    let root_bind = Affine3A::IDENTITY;
    let arm_bind = Affine3A::from_rotation_translation(
        Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
        Vec3::new(0.0, 1.0, 0.0),
    );
    let mut ibm = Vec::new();
    for b in [root_bind, arm_bind] {
        let c = b.inverse().to_cols_array();
        ibm.extend_from_slice(&[
            c[0], c[1], c[2], 0.0, c[3], c[4], c[5], 0.0, c[6], c[7], c[8], 0.0, c[9], c[10],
            c[11], 1.0,
        ]);
    }
    let ibm = d.floats(&ibm, "MAT4");
    let pos = d.floats(&[0.0, 0.5, 0.0, 0.0, 1.5, 0.0, -0.5, 1.0, 0.0], "VEC3");
    let joints: Vec<u8> = vec![0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0];
    let joints = d.raw(&joints, "VEC4", 5121, 3, false);
    let weights = d.floats(
        &[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5, 0.5, 0.0, 0.0],
        "VEC4",
    );
    d.meshes.push(json!({"primitives": [{"attributes": {
        "POSITION": pos, "JOINTS_0": joints, "WEIGHTS_0": weights}}]}));
    d.node(json!({"name": "body", "mesh": 0, "skin": 0}));
    d.skins
        .push(json!({"name": "rig", "joints": [0, 1], "inverseBindMatrices": ibm}));
    let a = import("bent.gltf", &d.bytes()).expect("imports");
    let arm = a.skeleton.find("arm").expect("arm joint");
    assert_eq!(
        a.skeleton.joints[arm].rest.rotation,
        Quat::IDENTITY,
        "rest is the node's"
    );
    assert_eq!(a.skins.len(), 1);
    let skin = &a.skins[0];
    assert_eq!(skin.name, "rig");
    let palette_arm = skin
        .joints
        .iter()
        .position(|&j| j == arm)
        .expect("arm in palette");
    let bind = ludus_anim_model::skin::affine(&skin.bind_world[palette_arm]);
    assert!(bind.abs_diff_eq(arm_bind, 1e-6), "bind is the inverse IBM");
    assert!(
        !bind.abs_diff_eq(Affine3A::from_translation(Vec3::Y), 1e-3),
        "bind differs from rest"
    );
    let mesh = skin.mesh.as_ref().expect("mesh read");
    assert_eq!(mesh.positions.len(), 3);
    assert_eq!(mesh.vertex(2), &[(0, 0.5), (1, 0.5)]);
    assert!(a.decisions.iter().any(|d| d.kind == "bind_pose"));
}
