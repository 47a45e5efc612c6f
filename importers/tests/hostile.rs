//! Hostile input at the importer boundary (issue #12): every class the
//! fuzzing and hostile-input run found gives a typed error, in bounded
//! time, without allocating what the file claims and without a panic.
//! Each case is a few bytes or a small generated file; each is timed.

use ludus_anim_importers::{
    import_bytes_with_limits, CompanionReader, FileSystem, ImportError, ImportOptions, Limits,
};
use ludus_anim_model::limits::Limit;
use ludus_anim_model::{SourceAsset, SourceFormat};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Far more than any case needs; a regression to unbounded work or
/// allocation shows up as a timeout or an abort long before it.
const BOUND: Duration = Duration::from_secs(5);

fn import_at(path: &Path, bytes: &[u8], limits: &Limits) -> Result<SourceAsset, ImportError> {
    let format = SourceFormat::of_path(path).expect("known extension");
    let start = Instant::now();
    let r = import_bytes_with_limits(
        path,
        format,
        bytes,
        &ImportOptions::default(),
        &FileSystem,
        limits,
    );
    assert!(
        start.elapsed() < BOUND,
        "{}: {:?}",
        path.display(),
        start.elapsed()
    );
    r
}

fn import(name: &str, bytes: &[u8]) -> Result<SourceAsset, ImportError> {
    import_at(Path::new(name), bytes, &Limits::default())
}

/// The limit error of `r`, checking it names `file`.
fn over(
    r: Result<SourceAsset, ImportError>,
    limit: Limit,
    file: &str,
) -> Box<ludus_anim_model::LimitExceeded> {
    match r {
        Err(ImportError::Limit(e)) => {
            assert_eq!(e.limit, limit, "{e}");
            assert_eq!(e.file.as_deref(), Some(file), "{e}");
            assert_eq!(
                ImportError::Limit(e.clone()).diagnostic().code,
                "limit_exceeded"
            );
            e
        }
        Err(e) => panic!("{file}: expected a {} error, got {e}", limit.name()),
        Ok(_) => panic!("{file}: accepted"),
    }
}

fn refused(r: Result<SourceAsset, ImportError>, uri: &str) -> String {
    match r {
        Err(ImportError::RefusedUri { uri: u, reason, .. }) => {
            assert_eq!(u, uri);
            reason
        }
        Err(e) => panic!("{uri}: expected a refused URI, got {e}"),
        Ok(_) => panic!("{uri}: accepted"),
    }
}

// ---- glTF -----------------------------------------------------------------

/// One node rotated by one channel keyed at `times`, the keys in a
/// base64 buffer (or at `uri`).
fn gltf(times: &[f32], uri: Option<&str>) -> Value {
    let n = times.len();
    let mut buf: Vec<u8> = times.iter().flat_map(|t| t.to_le_bytes()).collect();
    let t_len = buf.len();
    for _ in 0..n {
        for c in [0.0f32, 0.0, 0.0, 1.0] {
            buf.extend(c.to_le_bytes());
        }
    }
    use base64::Engine;
    let data = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&buf)
    );
    json!({
        "asset": {"version": "2.0"},
        "nodes": [{"name": "j0"}],
        "scenes": [{"nodes": [0]}],
        "buffers": [{"byteLength": buf.len(), "uri": uri.map_or(data, str::to_string)}],
        "bufferViews": [
            {"buffer": 0, "byteLength": t_len},
            {"buffer": 0, "byteOffset": t_len, "byteLength": buf.len() - t_len}
        ],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": n, "type": "SCALAR"},
            {"bufferView": 1, "componentType": 5126, "count": n, "type": "VEC4"}
        ],
        "animations": [{"name": "a",
            "channels": [{"sampler": 0, "target": {"node": 0, "path": "rotation"}}],
            "samplers": [{"input": 0, "output": 1}]}]
    })
}

fn bytes(v: &Value) -> Vec<u8> {
    serde_json::to_vec(v).unwrap()
}

#[test]
fn gltf_keys_spanning_a_billion_seconds_are_over_the_duration_limit() {
    for span in [1e7f32, 1e9] {
        let e = over(
            import("long.gltf", &bytes(&gltf(&[0.0, span], None))),
            Limit::ClipDuration,
            "long.gltf",
        );
        assert_eq!(e.clip.as_deref(), Some("a"));
    }
}

#[test]
fn gltf_accessors_claiming_millions_of_elements_are_refused_before_decoding() {
    // 16 million keys, no buffer view (zeros from `count` alone), on
    // eight channels.
    let mut v = gltf(&[0.0, 1.0], None);
    v["nodes"] = json!((0..8)
        .map(|i| json!({"name": format!("j{i}")}))
        .collect::<Vec<_>>());
    v["scenes"][0]["nodes"] = json!((0..8).collect::<Vec<_>>());
    v["accessors"] = json!([
        {"componentType": 5126, "count": 16_000_000, "type": "SCALAR"},
        {"componentType": 5126, "count": 16_000_000, "type": "VEC4"}
    ]);
    let channels: Vec<Value> = (0..8)
        .map(|i| json!({"sampler": 0, "target": {"node": i, "path": "rotation"}}))
        .collect();
    v["animations"][0]["channels"] = json!(channels);
    v["animations"][0]["samplers"] = json!([{"input": 0, "output": 1}]);
    let e = over(
        import("huge.gltf", &bytes(&v)),
        Limit::KeysPerChannel,
        "huge.gltf",
    );
    assert_eq!(e.joint.as_deref(), Some("j0"));
    // Within the key limit, the eight channels together exceed the memory
    // budget: refused on the channel that would cross it.
    v["accessors"][0]["count"] = json!(1_000_000);
    v["accessors"][1]["count"] = json!(1_000_000);
    let limits = Limits {
        max_asset_memory_bytes: 256 << 20,
        ..Limits::default()
    };
    let r = import_at(Path::new("huge.gltf"), &bytes(&v), &limits);
    over(r, Limit::AssetMemory, "huge.gltf");
}

#[test]
fn gltf_invalid_mesh_position_accessor_is_a_warning_not_a_panic() {
    // The gltf crate indexes `accessors[99]` unchecked while validating.
    let mut v = gltf(&[0.0, 1.0], None);
    v["meshes"] = json!([{"primitives": [{"attributes": {"POSITION": 99}}]}]);
    v["nodes"][0]["mesh"] = json!(0);
    let asset = import("mesh.gltf", &bytes(&v)).expect("animation still imports");
    let w: Vec<_> = asset.diagnostics.warnings().collect();
    assert!(
        w.iter()
            .any(|d| d.code == "ignored_invalid_data" && d.message.contains("accessor 99")),
        "{w:?}"
    );
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("ludus-hostile-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("assets")).unwrap();
    dir
}

#[test]
fn gltf_buffer_uris_outside_the_asset_directory_are_refused() {
    let dir = scratch("uris");
    std::fs::write(dir.join("secret.bin"), [0u8; 48]).unwrap();
    let asset = dir.join("assets/a.gltf");
    for uri in [
        "../secret.bin",
        "%2e%2e/secret.bin",
        "sub/../../secret.bin",
        "/etc/passwd",
        "/dev/zero",
        "/dev/urandom",
        "file:///etc/passwd",
        "http://example.com/a.bin",
    ] {
        let r = import_at(
            &asset,
            &bytes(&gltf(&[0.0, 1.0], Some(uri))),
            &Limits::default(),
        );
        let reason = refused(r, uri);
        assert!(!reason.is_empty());
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[cfg(unix)]
#[test]
fn gltf_buffers_that_are_fifos_devices_or_too_large_are_refused_without_blocking() {
    let dir = scratch("fifo");
    let assets = dir.join("assets");
    let asset = assets.join("a.gltf");
    let made = std::process::Command::new("mkfifo")
        .arg(assets.join("fifo.bin"))
        .status();
    if made.is_ok_and(|s| s.success()) {
        let r = import_at(
            &asset,
            &bytes(&gltf(&[0.0, 1.0], Some("fifo.bin"))),
            &Limits::default(),
        );
        assert!(refused(r, "fifo.bin").contains("FIFO"));
    }
    std::os::unix::fs::symlink("/dev/zero", assets.join("zero.bin")).unwrap();
    let r = import_at(
        &asset,
        &bytes(&gltf(&[0.0, 1.0], Some("zero.bin"))),
        &Limits::default(),
    );
    assert!(refused(r, "zero.bin").contains("device"));
    std::fs::write(assets.join("big.bin"), vec![0u8; 4096]).unwrap();
    let tight = Limits {
        max_file_bytes: 1024,
        ..Limits::default()
    };
    let r = import_at(&asset, &bytes(&gltf(&[0.0, 1.0], Some("big.bin"))), &tight);
    assert!(refused(r, "big.bin").contains("max_file_bytes"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gltf_data_uris_are_bounded_by_the_file_size_limit() {
    let v = gltf(&[0.0, 1.0], None);
    let tight = Limits {
        max_file_bytes: 16,
        ..Limits::default()
    };
    // The file itself is over 16 bytes too: the limit is checked first.
    over(
        import_at(Path::new("d.gltf"), &bytes(&v), &tight),
        Limit::FileBytes,
        "d.gltf",
    );
}

/// A reader that serves one in-memory companion, to check that the
/// importer asks with the size bound.
struct Serves(Vec<u8>);

impl CompanionReader for Serves {
    fn read(&self, _: &Path) -> std::io::Result<Vec<u8>> {
        Ok(self.0.clone())
    }
    fn exists(&self, _: &Path) -> bool {
        true
    }
}

#[test]
fn companions_from_any_reader_are_size_bounded() {
    let v = gltf(&[0.0, 1.0], Some("a.bin"));
    let limits = Limits {
        max_file_bytes: 4096,
        ..Limits::default()
    };
    let r = import_bytes_with_limits(
        Path::new("x/a.gltf"),
        SourceFormat::Gltf,
        &bytes(&v),
        &ImportOptions::default(),
        &Serves(vec![0u8; 8192]),
        &limits,
    );
    assert!(refused(r, "a.bin").contains("max_file_bytes"));
}

// ---- BVH ------------------------------------------------------------------

fn bvh(frames: &str, frame_time: &str, lines: usize) -> String {
    let mut s = format!(
        "HIERARCHY\nROOT a\n{{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\nEnd Site\n{{\nOFFSET 0 1 0\n}}\n}}\nMOTION\nFrames: {frames}\nFrame Time: {frame_time}\n"
    );
    s.push_str(&"0 0 0\n".repeat(lines));
    s
}

#[test]
fn bvh_frame_counts_and_spans_over_the_limits_are_refused() {
    // A huge frame time: 10^9 seconds from 1,000 lines.
    over(
        import("ft.bvh", bvh("1000", "1000000", 1000).as_bytes()),
        Limit::ClipDuration,
        "ft.bvh",
    );
    // Frames: 4e9 with no channels (no motion lines to contradict it).
    let no_channels = bvh("4000000000", "0.03", 0)
        .replace("CHANNELS 3 Zrotation Xrotation Yrotation", "CHANNELS 0");
    over(
        import("n.bvh", no_channels.as_bytes()),
        Limit::SamplesPerClip,
        "n.bvh",
    );
    // A tiny frame time and many frames is a short clip: fine.
    let asset = import("tiny.bvh", bvh("100000", "0.000000001", 100_000).as_bytes()).unwrap();
    assert!(asset.clips[0].duration_s < 1e-3);
    // Over the sample limit, in time.
    let limits = Limits {
        max_samples_per_clip: 1000,
        ..Limits::default()
    };
    let r = import_at(
        Path::new("m.bvh"),
        bvh("2000", "0.01", 2000).as_bytes(),
        &limits,
    );
    over(r, Limit::SamplesPerClip, "m.bvh");
}

fn chain_bvh(depth: usize) -> String {
    let mut s = String::from(
        "HIERARCHY\nROOT j0\n{\nOFFSET 0 0 0\nCHANNELS 3 Zrotation Xrotation Yrotation\n",
    );
    for i in 1..depth {
        s.push_str(&format!("JOINT j{i}\n{{\nOFFSET 0 1 0\n"));
    }
    s.push_str(&"}\n".repeat(depth));
    s.push_str("MOTION\nFrames: 2\nFrame Time: 0.0333333\n0 0 0\n1 1 1\n");
    s
}

#[test]
fn bvh_100000_deep_is_a_depth_limit_error_in_linear_time() {
    let text = chain_bvh(100_000);
    let start = Instant::now();
    let e = over(
        import("deep.bvh", text.as_bytes()),
        Limit::HierarchyDepth,
        "deep.bvh",
    );
    assert_eq!(e.joint.as_deref(), Some("j1024"));
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    // Raising the depth limit leaves the joint limit.
    let limits = Limits {
        max_hierarchy_depth: 1_000_000,
        ..Limits::default()
    };
    let r = import_at(Path::new("deep.bvh"), text.as_bytes(), &limits);
    over(r, Limit::Joints, "deep.bvh");
}

#[test]
fn bvh_many_duplicate_names_rename_in_linear_time() {
    let mut s = String::from("HIERARCHY\nROOT a\n{\nOFFSET 0 0 0\nCHANNELS 0\n");
    for _ in 0..9_000 {
        s.push_str("JOINT a\n{\nOFFSET 0 1 0\nCHANNELS 0\n}\n");
    }
    s.push_str("}\nMOTION\nFrames: 0\nFrame Time: 0.03\n");
    let asset = import("dups.bvh", s.as_bytes()).unwrap();
    assert_eq!(asset.skeleton.joints.len(), 9_001);
    assert_eq!(asset.skeleton.joints[9_000].name, "a_9001");
}

// ---- ACL SJSON ------------------------------------------------------------

#[test]
fn sjson_declaring_four_billion_samples_is_refused_before_allocating() {
    let text = "version = 5\nclip = { name = \"c\" num_samples = 4000000000 sample_rate = 30 is_binary_exact = false }\nbones = [ { name = \"a\" parent = \"\" vertex_distance = 1.0 } ]\ntracks = [ ]\n";
    let e = over(
        import("c.acl.sjson", text.as_bytes()),
        Limit::SamplesPerClip,
        "c.acl.sjson",
    );
    assert_eq!(e.clip.as_deref(), Some("c"));
    let slow = text.replace(
        "num_samples = 4000000000 sample_rate = 30",
        "num_samples = 1000 sample_rate = 0.0001",
    );
    over(
        import("s.acl.sjson", slow.as_bytes()),
        Limit::ClipDuration,
        "s.acl.sjson",
    );
}

// ---- FBX ------------------------------------------------------------------

/// A one-joint ASCII FBX whose animation stack stops at `stop` ticks.
fn fbx(stop: i64) -> String {
    format!(
        "; FBX 7.4.0 project file\nFBXHeaderExtension:  {{\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7400\n}}\n\
         GlobalSettings:  {{\n\tVersion: 1000\n\tProperties70:  {{\n\t\tP: \"TimeMode\", \"enum\", \"\", \"\",6\n\t}}\n}}\n\
         Objects:  {{\n\tNodeAttribute: 1001, \"NodeAttribute::Root\", \"LimbNode\" {{\n\t\tTypeFlags: \"Skeleton\"\n\t}}\n\
         \tModel: 2001, \"Model::Root\", \"LimbNode\" {{\n\t\tVersion: 232\n\t}}\n\
         \tAnimationStack: 3001, \"AnimStack::Take 001\", \"\" {{\n\t\tProperties70:  {{\n\
         \t\t\tP: \"LocalStart\", \"KTime\", \"Time\", \"\",0\n\t\t\tP: \"LocalStop\", \"KTime\", \"Time\", \"\",{stop}\n\t\t}}\n\t}}\n\
         \tAnimationLayer: 3002, \"AnimLayer::BaseLayer\", \"\" {{\n\t}}\n}}\n\
         Connections:  {{\n\tC: \"OO\",2001,0\n\tC: \"OO\",1001,2001\n\tC: \"OO\",3002,3001\n}}\n"
    )
}

#[test]
fn fbx_stack_spanning_near_i64_max_ticks_is_refused_before_sampling() {
    let e = over(
        import("span.fbx", fbx(i64::MAX - 1000).as_bytes()),
        Limit::ClipDuration,
        "span.fbx",
    );
    assert_eq!(e.clip.as_deref(), Some("Take 001"));
    // An ordinary second still imports.
    assert!(import("ok.fbx", fbx(46_186_158_000).as_bytes()).is_ok());
}

// ---- Every format -----------------------------------------------------------

#[test]
fn files_over_the_size_limit_are_refused_before_parsing() {
    let tight = Limits {
        max_file_bytes: 8,
        ..Limits::default()
    };
    for name in ["a.gltf", "a.glb", "a.bvh", "a.fbx", "a.sjson"] {
        over(
            import_at(Path::new(name), &[b' '; 9], &tight),
            Limit::FileBytes,
            name,
        );
    }
}
