//! Generator for ludus-anim's bundled fixture content.
//!
//! `ludus-anim cook` with no arguments cooks `fixtures/`, so a fresh clone
//! must carry content that needs no third-party asset. This crate produces it
//! from code: a procedural, skinned, 32-joint humanoid with idle / walk / run
//! clips, written as one glTF 2.0 binary (`fixtures/biped.glb`).
//!
//! The output is byte-for-byte deterministic (see `math` for why the
//! generator carries its own trigonometry, and `document` for why JSON is
//! written from fixed-order structs), so the committed file can be checked
//! against a fresh regeneration in CI.
//!
//! [`rigs`] also builds parameterized retarget test rigs (T/A pose,
//! proportions, spine length, twist joints, bone-axis conventions, units,
//! root placement, root motion, naming styles) with a contact-exact looping
//! walk, as model types at test time; they are never committed.

#![forbid(unsafe_code)]

pub mod clips;
mod document;
mod glb;
pub mod math;
pub mod mesh;
pub mod program_example;
pub mod rigs;
mod rigs_motion;
mod rigs_spec;
pub mod skeleton;

use clips::{ClipSpec, Interpolation, Pose, Property, Target};
use document::{
    exact, Animation, Asset, Attributes, Buffer, Channel, ChannelTarget, Document, Mesh,
    MeshExtras, MorphTarget, Node, Primitive, Sampler, Scene, Skin,
};
use glam::{DMat4, DVec3};
use glb::{to_u32, BinBuilder, FloatAccessor, ARRAY_BUFFER, ELEMENT_ARRAY_BUFFER};
use skeleton::{Joint, JOINT_COUNT};
use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// File name of the generated asset inside the fixtures directory.
pub const BIPED_FILE: &str = "biped.glb";

/// Name of the single morph target.
pub const MORPH_TARGET_NAME: &str = "Breathe";

/// Node index of the skinned mesh node (it follows the joints).
const MESH_NODE: usize = JOINT_COUNT;

/// Phase step for the central differences that give cubic-spline tangents.
/// Small enough that truncation error is negligible, large enough that f64
/// round-off (~1e-16 / 1e-6) stays far below f32 output precision.
const TANGENT_STEP: f64 = 1e-6;

/// The workspace's `fixtures/` directory (the generator's default output).
pub fn default_fixtures_dir() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .parent()
        .and_then(Path::parent)
        .unwrap_or(manifest)
        .join("fixtures")
}

/// Generates the biped asset and writes it atomically to `dir/biped.glb`,
/// creating `dir` if needed, and the program example's text files into
/// `dir/locomotion/`. Returns the biped's path.
pub fn write_fixtures(dir: &Path) -> io::Result<PathBuf> {
    let bytes = build_biped_glb()?;
    fs::create_dir_all(dir)?;
    let path = dir.join(BIPED_FILE);
    write_atomically(&path, &bytes)?;
    let example = dir.join(program_example::DIR);
    fs::create_dir_all(&example)?;
    for (name, text) in program_example::files() {
        write_atomically(&example.join(name), text.as_bytes())?;
    }
    Ok(path)
}

/// Writes `bytes` to a temporary file next to `path`, flushes it to disk and
/// renames it over `path`, so readers (and a concurrently running cook) never
/// observe a half-written fixture.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::other(format!("not a file path: {}", path.display())))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| {
        let mut file = fs::File::create(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        // Best effort: the original error is the one worth reporting.
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Builds the complete `.glb` file in memory.
pub fn build_biped_glb() -> io::Result<Vec<u8>> {
    build_glb(None)
}

/// A variant of the biped for large benchmark projects: the same rig and
/// clips, with each linear or step rotation channel turned by a small
/// periodic wobble and each translation channel scaled, both derived from
/// `variant`. Loops stay loops (the wobble is periodic over the clip).
pub fn build_biped_variant_glb(variant: u32) -> io::Result<Vec<u8>> {
    build_glb(Some(variant))
}

/// Write `count` variants as `biped_v0000.glb`... into `dir`.
pub fn write_variants(dir: &Path, count: u32) -> io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    (0..count)
        .map(|v| {
            let path = dir.join(format!("biped_v{v:04}.glb"));
            write_atomically(&path, &build_biped_variant_glb(v)?)?;
            Ok(path)
        })
        .collect()
}

/// Deterministic per-variant, per-channel wobble of sampled key values.
fn vary(values: &mut [f32], spec: &clips::ChannelSpec, channel: usize, keys: u32, variant: u32) {
    let phase = (variant as f64 * 0.618_033_988_75 + channel as f64 * 0.414_213_562) % 1.0;
    let amount = 0.04 + 0.06 * ((variant as f64 * 0.754_877_666) % 1.0);
    match (spec.target, spec.interpolation) {
        (Target::Joint(_, Property::Rotation), Interpolation::Linear | Interpolation::Step) => {
            for (k, q) in values.chunks_exact_mut(4).enumerate() {
                let t = k as f64 / keys.max(1) as f64;
                let angle = amount * math::sin(2.0 * std::f64::consts::PI * (t + phase));
                let (s, c) = (math::sin(angle * 0.5), math::cos(angle * 0.5));
                // Pre-rotate about +X: (s,0,0,c) * (x,y,z,w).
                let (x, y, z, w) = (q[0] as f64, q[1] as f64, q[2] as f64, q[3] as f64);
                q[0] = (c * x + s * w) as f32;
                q[1] = (c * y - s * z) as f32;
                q[2] = (c * z + s * y) as f32;
                q[3] = (c * w - s * x) as f32;
            }
        }
        (Target::Joint(_, Property::Translation), _) => {
            let f = (1.0 + amount) as f32;
            values.iter_mut().for_each(|v| *v *= f);
        }
        _ => {}
    }
}

fn build_glb(variant: Option<u32>) -> io::Result<Vec<u8>> {
    let mut bin = BinBuilder::default();

    // --- mesh -------------------------------------------------------------
    let mesh = mesh::build();
    let flat3 = |v: &[[f32; 3]]| v.iter().flatten().copied().collect::<Vec<f32>>();
    let position = bin.float(FloatAccessor {
        values: &flat3(&mesh.positions),
        kind: "VEC3",
        bounds: true,
        target: Some(ARRAY_BUFFER),
    })?;
    let joints_0 = bin.u8_vec4(&mesh.joints, Some(ARRAY_BUFFER))?;
    let weights: Vec<f32> = mesh.weights.iter().flatten().copied().collect();
    let weights_0 = bin.float(FloatAccessor {
        values: &weights,
        kind: "VEC4",
        bounds: false,
        target: Some(ARRAY_BUFFER),
    })?;
    let breathe = bin.float(FloatAccessor {
        values: &flat3(&mesh.breathe),
        kind: "VEC3",
        bounds: true,
        target: Some(ARRAY_BUFFER),
    })?;
    let indices = bin.u16_scalar(&mesh.indices, Some(ELEMENT_ARRAY_BUFFER))?;

    // --- skin ---------------------------------------------------------------
    // Rest rotations are identity and scales one, so each bind matrix is a
    // pure translation and its inverse is exactly the negated translation.
    let ibm: Vec<f32> = Joint::ALL
        .iter()
        .flat_map(|j| DMat4::from_translation(-j.rest_global()).to_cols_array())
        .map(|v| v as f32)
        .collect();
    let inverse_bind_matrices = bin.float(FloatAccessor {
        values: &ibm,
        kind: "MAT4",
        bounds: false,
        target: None,
    })?;

    // --- animations ---------------------------------------------------------
    let animations = clips::all_clips()
        .iter()
        .map(|clip| build_animation(&mut bin, clip, variant))
        .collect::<io::Result<Vec<_>>>()?;

    // --- nodes --------------------------------------------------------------
    let mut nodes = Vec::with_capacity(JOINT_COUNT + 1);
    for joint in Joint::ALL {
        let children = Joint::ALL
            .iter()
            .filter(|c| c.parent() == Some(joint))
            .map(|c| to_u32(c.index()))
            .collect::<io::Result<Vec<_>>>()?;
        let t = joint.rest_offset();
        nodes.push(Node {
            name: joint.name().to_owned(),
            children,
            translation: (t != DVec3::ZERO).then(|| [t.x, t.y, t.z].map(|v| exact(v as f32))),
            ..Node::default()
        });
    }
    nodes.push(Node {
        name: "BipedMesh".to_owned(),
        mesh: Some(0),
        skin: Some(0),
        ..Node::default()
    });

    let (data, buffer_views, accessors) = bin.finish();
    let doc = Document {
        asset: Asset {
            version: "2.0",
            generator: "ludus-anim-fixture-gen",
            copyright: "ludus-anim contributors, MIT OR Apache-2.0",
        },
        scene: 0,
        scenes: vec![Scene {
            name: "Biped",
            nodes: vec![to_u32(Joint::Root.index())?, to_u32(MESH_NODE)?],
        }],
        nodes,
        meshes: vec![Mesh {
            name: "BipedMesh",
            primitives: vec![Primitive {
                attributes: Attributes {
                    position,
                    joints_0,
                    weights_0,
                },
                indices,
                mode: 4,
                targets: vec![MorphTarget { position: breathe }],
            }],
            weights: vec![0.0],
            extras: MeshExtras {
                target_names: vec![MORPH_TARGET_NAME],
            },
        }],
        skins: vec![Skin {
            name: "BipedSkin",
            inverse_bind_matrices,
            skeleton: to_u32(Joint::Root.index())?,
            joints: Joint::ALL
                .iter()
                .map(|j| to_u32(j.index()))
                .collect::<io::Result<Vec<_>>>()?,
        }],
        animations,
        accessors,
        buffer_views,
        buffers: vec![Buffer {
            byte_length: to_u32(data.len())?,
        }],
    };
    let json = serde_json::to_vec(&doc).map_err(io::Error::other)?;
    glb::container(&json, &data)
}

/// Samples every channel of `clip` and appends its data to `bin`.
fn build_animation(
    bin: &mut BinBuilder,
    clip: &ClipSpec,
    variant: Option<u32>,
) -> io::Result<Animation> {
    // One time accessor per distinct key count, shared by all channels that
    // use it (a Vec, not a HashMap, to keep accessor order deterministic).
    let mut inputs: Vec<(u32, u32)> = Vec::new();
    let mut channels = Vec::with_capacity(clip.channels.len());
    let mut samplers = Vec::with_capacity(clip.channels.len());

    for spec in &clip.channels {
        let n = spec.keys_per_cycle;
        let input = match inputs.iter().find(|(k, _)| *k == n) {
            Some(&(_, accessor)) => accessor,
            None => {
                let times: Vec<f32> = (0..=n).map(|i| clip.key_time(i, n) as f32).collect();
                let accessor = bin.float(FloatAccessor {
                    values: &times,
                    kind: "SCALAR",
                    bounds: true,
                    target: None,
                })?;
                inputs.push((n, accessor));
                accessor
            }
        };

        let mut values = sample_channel(clip, spec.target, spec.interpolation, n);
        if let Some(v) = variant {
            vary(&mut values, spec, channels.len(), n, v);
        }
        let kind = match spec.target {
            Target::Joint(_, Property::Rotation) => "VEC4",
            Target::Joint(_, _) => "VEC3",
            Target::MorphWeights => "SCALAR",
        };
        let output = bin.float(FloatAccessor {
            values: &values,
            kind,
            bounds: false,
            target: None,
        })?;

        let (node, path) = match spec.target {
            Target::Joint(j, Property::Translation) => (j.index(), "translation"),
            Target::Joint(j, Property::Rotation) => (j.index(), "rotation"),
            Target::Joint(j, Property::Scale) => (j.index(), "scale"),
            Target::MorphWeights => (MESH_NODE, "weights"),
        };
        channels.push(Channel {
            sampler: to_u32(samplers.len())?,
            target: ChannelTarget {
                node: to_u32(node)?,
                path,
            },
        });
        samplers.push(Sampler {
            input,
            interpolation: spec.interpolation.gltf_name(),
            output,
        });
    }
    Ok(Animation {
        name: clip.name,
        channels,
        samplers,
    })
}

/// Reads the animated property out of a pose as plain components.
fn extract(pose: &Pose, target: Target) -> Vec<f64> {
    match target {
        Target::Joint(j, Property::Translation) => {
            pose.joints[j.index()].translation.to_array().to_vec()
        }
        Target::Joint(j, Property::Rotation) => pose.joints[j.index()]
            .rotation
            .normalize()
            .to_array()
            .to_vec(),
        Target::Joint(j, Property::Scale) => pose.joints[j.index()].scale.to_array().to_vec(),
        Target::MorphWeights => vec![pose.breathe],
    }
}

/// Flips `v` onto the same quaternion hemisphere as `reference` (no-op for
/// non-rotation data), so linear and cubic blending take the short path.
fn align(v: &mut [f64], reference: &[f64], is_rotation: bool) {
    if is_rotation && v.iter().zip(reference).map(|(a, b)| a * b).sum::<f64>() < 0.0 {
        v.iter_mut().for_each(|c| *c = -*c);
    }
}

/// Samples `n + 1` keys of one channel and returns the flat f32 output data.
/// For CUBICSPLINE every key is written as (in-tangent, value, out-tangent),
/// tangents being time derivatives (units per second) obtained by central
/// differences of the analytic pose function; the curves are smooth, so in-
/// and out-tangents coincide.
fn sample_channel(clip: &ClipSpec, target: Target, interp: Interpolation, n: u32) -> Vec<f32> {
    let is_rotation = matches!(target, Target::Joint(_, Property::Rotation));
    let mut out = Vec::new();
    let mut previous: Option<Vec<f64>> = None;
    for i in 0..=n {
        let s = clip.key_sample(i, n);
        let mut value = extract(&(clip.pose)(s), target);
        if let Some(prev) = &previous {
            align(&mut value, prev, is_rotation);
        }
        if interp == Interpolation::CubicSpline {
            let offset = |d: f64| clips::Sample {
                phase: s.phase + d,
                time: s.time + d * clip.duration,
            };
            let mut ahead = extract(&(clip.pose)(offset(TANGENT_STEP)), target);
            let mut behind = extract(&(clip.pose)(offset(-TANGENT_STEP)), target);
            align(&mut ahead, &value, is_rotation);
            align(&mut behind, &value, is_rotation);
            let dt = 2.0 * TANGENT_STEP * clip.duration;
            let tangent: Vec<f64> = ahead
                .iter()
                .zip(&behind)
                .map(|(a, b)| (a - b) / dt)
                .collect();
            out.extend(tangent.iter().map(|&v| v as f32));
            out.extend(value.iter().map(|&v| v as f32));
            out.extend(tangent.iter().map(|&v| v as f32));
        } else {
            out.extend(value.iter().map(|&v| v as f32));
        }
        previous = Some(value);
    }
    out
}
