//! End-to-end checks of the generated fixture: the committed file is exactly
//! the generator's output, and it is a well-formed, complete glTF asset as
//! seen by an independent reader (the `gltf` crate).

use gltf::animation::util::{ReadOutputs, Rotations};
use gltf::animation::{Interpolation, Property};
use std::collections::BTreeMap;
use std::path::PathBuf;

const REGENERATE: &str =
    "regenerate it with `cargo run -p ludus-anim-fixture-gen` and commit the result";

fn generated() -> Vec<u8> {
    match ludus_anim_fixture_gen::build_biped_glb() {
        Ok(bytes) => bytes,
        Err(e) => panic!("generator failed: {e}"),
    }
}

fn parse(bytes: &[u8]) -> (gltf::Document, Vec<u8>) {
    let gltf = gltf::Gltf::from_slice(bytes).expect("generated .glb must parse");
    let blob = gltf.blob.clone().expect("GLB carries a BIN chunk");
    (gltf.document, blob)
}

#[test]
fn committed_fixture_matches_generator() {
    // Write through the real entry point (atomic write included) into a
    // scratch directory, then compare with the committed file.
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fixture-gen-{}", std::process::id()));
    let written = ludus_anim_fixture_gen::write_fixtures(&dir).expect("write fixtures");
    let fresh = std::fs::read(&written).expect("read regenerated fixture");
    let _ = std::fs::remove_dir_all(&dir);

    let committed_path =
        ludus_anim_fixture_gen::default_fixtures_dir().join(ludus_anim_fixture_gen::BIPED_FILE);
    let committed = std::fs::read(&committed_path).unwrap_or_else(|e| {
        panic!(
            "cannot read {}: {e}; {REGENERATE}",
            committed_path.display()
        )
    });
    assert!(
        fresh == committed,
        "{} is stale ({} bytes committed, {} bytes generated); {REGENERATE}",
        committed_path.display(),
        committed.len(),
        fresh.len()
    );
    assert!(
        fresh.len() < 200 * 1024,
        "fixture grew to {} bytes",
        fresh.len()
    );
}

#[test]
fn generation_is_repeatable_in_process() {
    assert!(generated() == generated());
}

#[test]
fn glb_container_and_buffer_views_are_valid() {
    let bytes = generated();
    assert_eq!(&bytes[0..4], b"glTF");
    assert_eq!(
        u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]),
        2
    );
    let total = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
    assert_eq!(total, bytes.len());

    let (doc, blob) = parse(&bytes);
    let buffers: Vec<_> = doc.buffers().collect();
    assert_eq!(buffers.len(), 1);
    assert_eq!(buffers[0].length(), blob.len());
    for view in doc.views() {
        assert_eq!(view.offset() % 4, 0, "view {} alignment", view.index());
        assert!(view.offset() + view.length() <= blob.len());
        assert_eq!(view.stride(), None, "tightly packed");
    }
    for accessor in doc.accessors() {
        let view = accessor.view().expect("no sparse-only accessors");
        let needed = accessor.offset() + accessor.count() * accessor.size();
        assert!(needed <= view.length(), "accessor {}", accessor.index());
    }
}

#[test]
fn skeleton_and_skin() {
    let (doc, blob) = parse(&generated());
    let skins: Vec<_> = doc.skins().collect();
    assert_eq!(skins.len(), 1);
    let skin = &skins[0];
    let names: Vec<&str> = skin.joints().filter_map(|n| n.name()).collect();
    assert_eq!(names.len(), 32);
    assert!((20..=60).contains(&names.len()));
    for expected in [
        "Root",
        "Hips",
        "Spine",
        "Chest",
        "Neck",
        "Head",
        "HeadTop_End",
        "LeftHandIndex2",
        "RightHandThumb2",
        "LeftToeBase",
        "RightToeBase",
    ] {
        assert!(names.contains(&expected), "missing joint {expected}");
    }
    assert_eq!(names.iter().filter(|n| n.ends_with("_End")).count(), 1);
    assert_eq!(skin.skeleton().and_then(|n| n.name()), Some("Root"));

    let reader = skin.reader(|_| Some(&blob));
    let ibms: Vec<_> = reader
        .read_inverse_bind_matrices()
        .expect("inverse bind matrices")
        .collect();
    assert_eq!(ibms.len(), names.len());

    // Inverse bind matrix of each joint undoes its rest global transform,
    // which (identity rest rotations) is the sum of rest translations.
    let nodes: Vec<_> = doc.nodes().collect();
    let mut parent = vec![None; nodes.len()];
    for n in &nodes {
        for c in n.children() {
            parent[c.index()] = Some(n.index());
        }
    }
    for (joint, ibm) in skin.joints().zip(&ibms) {
        let mut pos = [0.0f32; 3];
        let mut cur = Some(joint.index());
        while let Some(i) = cur {
            let (t, r, s) = nodes[i].transform().decomposed();
            assert_eq!(r, [0.0, 0.0, 0.0, 1.0]);
            assert_eq!(s, [1.0, 1.0, 1.0]);
            for k in 0..3 {
                pos[k] += t[k];
            }
            cur = parent[i];
        }
        for k in 0..3 {
            assert!((ibm[3][k] + pos[k]).abs() < 1e-6, "{:?}", joint.name());
        }
    }
    let top = skin
        .joints()
        .find(|j| j.name() == Some("HeadTop_End"))
        .map(|j| j.index())
        .expect("head top");
    assert!((ibms[top][3][1] + 1.75).abs() < 1e-5, "1.75 m tall");
}

#[test]
fn skinned_mesh_with_breathe_morph_target() {
    let (doc, blob) = parse(&generated());
    let mesh_node = doc.nodes().find(|n| n.mesh().is_some()).expect("mesh node");
    assert!(mesh_node.skin().is_some());
    let mesh = mesh_node.mesh().expect("mesh");
    let extras = mesh.extras().as_ref().expect("mesh extras").get();
    let extras: serde_json::Value = serde_json::from_str(extras).expect("extras json");
    assert_eq!(extras["targetNames"], serde_json::json!(["Breathe"]));
    assert_eq!(mesh.weights(), Some(&[0.0f32][..]));

    let prim = mesh.primitives().next().expect("primitive");
    let reader = prim.reader(|_| Some(&blob));
    let positions: Vec<_> = reader.read_positions().expect("positions").collect();
    let joints: Vec<_> = reader
        .read_joints(0)
        .expect("JOINTS_0")
        .into_u16()
        .collect();
    let weights: Vec<_> = reader
        .read_weights(0)
        .expect("WEIGHTS_0")
        .into_f32()
        .collect();
    assert_eq!(joints.len(), positions.len());
    assert_eq!(weights.len(), positions.len());
    for w in &weights {
        assert!((w.iter().sum::<f32>() - 1.0).abs() < 1e-6);
    }
    let joint_count = mesh_node.skin().map(|s| s.joints().count()).unwrap_or(0);
    assert!(joints
        .iter()
        .flatten()
        .all(|&j| usize::from(j) < joint_count));

    let targets: Vec<_> = reader.read_morph_targets().collect();
    assert_eq!(targets.len(), 1);
    let displaced = targets[0]
        .0
        .clone()
        .expect("morph POSITION")
        .filter(|d| *d != [0.0; 3])
        .count();
    assert!(displaced > 0);

    // POSITION accessors require bounds.
    let pos_acc = prim.get(&gltf::Semantic::Positions).expect("POSITION");
    assert!(pos_acc.min().is_some() && pos_acc.max().is_some());
    let ymax = pos_acc.max().and_then(|v| v[1].as_f64()).unwrap_or(0.0);
    assert!((1.7..1.8).contains(&ymax), "mesh height {ymax}");
}

/// Per-animation summary used by the clip assertions.
#[derive(Default)]
struct ClipInfo {
    duration: f32,
    channels: usize,
    interpolations: Vec<Interpolation>,
    root_z_end: Option<f32>,
    has_scale: bool,
    has_weights: bool,
}

#[test]
fn clips_channels_and_keys() {
    let (doc, blob) = parse(&generated());
    let mut clips: BTreeMap<String, ClipInfo> = BTreeMap::new();
    for anim in doc.animations() {
        let name = anim.name().expect("named animation").to_owned();
        let info = clips.entry(name.clone()).or_default();
        for channel in anim.channels() {
            info.channels += 1;
            let sampler = channel.sampler();
            let interp = sampler.interpolation();
            info.interpolations.push(interp);
            let input = sampler.input();
            let reader = channel.reader(|_| Some(&blob));
            let times: Vec<f32> = reader.read_inputs().expect("inputs").collect();

            // Inputs: bounds present and exact, strictly increasing from 0.
            let min = input.min().and_then(|v| v[0].as_f64()).expect("input min");
            let max = input.max().and_then(|v| v[0].as_f64()).expect("input max");
            assert_eq!(min, f64::from(times[0]));
            assert_eq!(max, f64::from(*times.last().expect("keys")));
            assert_eq!(times[0], 0.0);
            assert!(times.windows(2).all(|w| w[0] < w[1]), "{name}");
            info.duration = info.duration.max(*times.last().unwrap_or(&0.0));

            let per_key = if interp == Interpolation::CubicSpline {
                3
            } else {
                1
            };
            let node = channel.target().node();
            match reader.read_outputs().expect("outputs") {
                ReadOutputs::Rotations(Rotations::F32(it)) => {
                    let q: Vec<[f32; 4]> = it.collect();
                    assert_eq!(q.len(), per_key * times.len());
                    // Values are the middle element of cubic triplets.
                    let values: Vec<[f32; 4]> = if per_key == 3 {
                        q.chunks_exact(3).map(|c| c[1]).collect()
                    } else {
                        q
                    };
                    for v in &values {
                        let len = v.iter().map(|c| c * c).sum::<f32>().sqrt();
                        assert!((len - 1.0).abs() < 1e-5, "{name}: |q| = {len}");
                    }
                    for w in values.windows(2) {
                        let dot: f32 = w[0].iter().zip(&w[1]).map(|(a, b)| a * b).sum();
                        assert!(dot > 0.0, "{name}: hemisphere flip on {:?}", node.name());
                    }
                    // Looping: the closing key is the first pose.
                    let (a, b) = (values[0], values[values.len() - 1]);
                    let dot: f32 = a.iter().zip(&b).map(|(x, y)| x * y).sum();
                    assert!(
                        dot.abs() > 1.0 - 1e-6,
                        "{name}: loop seam on {:?}",
                        node.name()
                    );
                }
                ReadOutputs::Rotations(_) => panic!("rotations must be float"),
                ReadOutputs::Translations(it) => {
                    let t: Vec<[f32; 3]> = it.collect();
                    assert_eq!(t.len(), per_key * times.len());
                    if node.name() == Some("Root") {
                        info.root_z_end = t.last().map(|v| v[2]);
                    } else {
                        let first = t[per_key / 2];
                        let last = t[t.len() - 1 - per_key / 2];
                        assert_eq!(first, last, "{name}: loop seam");
                    }
                }
                ReadOutputs::Scales(it) => {
                    info.has_scale = true;
                    let s: Vec<[f32; 3]> = it.collect();
                    assert_eq!(s.len(), per_key * times.len());
                    assert!(s.iter().flatten().all(|&c| c > 0.0));
                }
                ReadOutputs::MorphTargetWeights(w) => {
                    info.has_weights = true;
                    assert!(node.mesh().is_some());
                    assert_eq!(channel.target().property(), Property::MorphTargetWeights);
                    let w: Vec<f32> = w.into_f32().collect();
                    assert_eq!(w.len(), per_key * times.len());
                    assert!(w.iter().all(|v| (0.0..=1.0).contains(v)));
                    assert!(w.iter().any(|&v| v > 0.5));
                }
            }
        }
    }

    assert_eq!(
        clips.keys().map(String::as_str).collect::<Vec<_>>(),
        ["idle", "run", "walk"]
    );
    let idle = &clips["idle"];
    assert_eq!(idle.duration, 3.0);
    assert!(idle.has_scale && idle.has_weights);
    for interp in [
        Interpolation::Linear,
        Interpolation::Step,
        Interpolation::CubicSpline,
    ] {
        assert!(
            idle.interpolations.contains(&interp),
            "idle lacks {interp:?}"
        );
    }
    assert_eq!(idle.root_z_end, None, "idle stays in place");

    let walk = &clips["walk"];
    assert!((walk.duration - 1.2).abs() < 1e-6);
    let speed = walk.root_z_end.expect("walk root motion") / walk.duration;
    assert!((speed - 1.4).abs() < 1e-4, "walk speed {speed}");

    let run = &clips["run"];
    assert!((run.duration - 0.7).abs() < 1e-6);
    let speed = run.root_z_end.expect("run root motion") / run.duration;
    assert!((speed - 3.5).abs() < 1e-4, "run speed {speed}");
    for clip in clips.values() {
        assert!(clip.channels >= 20);
    }
}

#[test]
fn key_rates_differ_between_clips() {
    // glTF stores no frame rate; the spacing of the dense channels does.
    let (doc, blob) = parse(&generated());
    let mut rates = BTreeMap::new();
    for anim in doc.animations() {
        let densest = anim
            .channels()
            .filter_map(|c| {
                let times: Vec<f32> = c.reader(|_| Some(&blob)).read_inputs()?.collect();
                let span = times.last()? - times.first()?;
                Some(((times.len() - 1) as f32 / span).round() as u32)
            })
            .max()
            .unwrap_or(0);
        rates.insert(anim.name().unwrap_or("").to_owned(), densest);
    }
    assert_eq!(rates["idle"], 30);
    assert_eq!(rates["walk"], 30);
    assert_eq!(rates["run"], 60);
}

/// The shared-skeleton project under `fixtures/biped-split/` is exactly
/// the generator's output: a rig file with the skin and no animation, and
/// one animation-only file per clip (no mesh, no skin).
#[test]
fn committed_split_project_matches_generator() {
    let root =
        ludus_anim_fixture_gen::default_fixtures_dir().join(ludus_anim_fixture_gen::SPLIT_DIR);
    let files = ludus_anim_fixture_gen::build_split_project().expect("build split project");
    assert_eq!(files.len(), 5, "manifest, rig and three clips");
    for (rel, bytes) in &files {
        let committed = std::fs::read(root.join(rel))
            .unwrap_or_else(|e| panic!("cannot read {rel}: {e}; {REGENERATE}"));
        assert!(&committed == bytes, "{rel} is stale; {REGENERATE}");
        if !rel.ends_with(".glb") {
            continue;
        }
        let (doc, _) = parse(bytes);
        if rel.starts_with("rig/") {
            assert_eq!(doc.animations().count(), 0, "{rel}");
            assert_eq!(doc.skins().count(), 1, "{rel}");
        } else {
            assert_eq!(doc.animations().count(), 1, "{rel}");
            assert_eq!(doc.skins().count(), 0, "{rel}");
            assert_eq!(doc.meshes().count(), 0, "{rel}");
        }
    }
}

#[test]
fn committed_program_example_matches_generator() {
    let dir = ludus_anim_fixture_gen::default_fixtures_dir()
        .join(ludus_anim_fixture_gen::program_example::DIR);
    for (name, text) in ludus_anim_fixture_gen::program_example::files() {
        let committed = std::fs::read_to_string(dir.join(name)).unwrap_or_default();
        assert!(
            committed == text,
            "fixtures/locomotion/{name} is stale; {REGENERATE}"
        );
    }
}

/// The committed `fixtures/rig160/` project is the generator's output.
#[test]
fn committed_rig160_project_matches_generator() {
    let root = ludus_anim_fixture_gen::default_fixtures_dir()
        .join(ludus_anim_fixture_gen::rig160::RIG160_DIR);
    for (rel, bytes) in ludus_anim_fixture_gen::rig160::build_rig160_project() {
        let committed = std::fs::read(root.join(&rel))
            .unwrap_or_else(|e| panic!("cannot read rig160/{rel}: {e}; {REGENERATE}"));
        assert!(committed == bytes, "rig160/{rel} is stale; {REGENERATE}");
    }
}
