//! The subset of the glTF 2.0 JSON schema this generator writes.
//!
//! Plain structs with `serde` derive rather than `serde_json::Value`: field
//! order is then fixed by the declarations below, independent of whether some
//! other crate in the build turns on serde_json's `preserve_order` feature
//! (which changes `Value` map ordering), so the output bytes never depend on
//! what else is compiled alongside the generator.
//!
//! Floats are stored as `f64` holding exactly the `f32` value that the binary
//! data uses (see [`exact`]); that way `min`/`max` compare equal to the
//! buffer contents whether a reader parses JSON numbers as `f32` or `f64`.

use serde::Serialize;

/// Widens an `f32` losslessly for JSON output.
pub fn exact(v: f32) -> f64 {
    f64::from(v)
}

#[derive(Serialize)]
pub struct Document {
    pub asset: Asset,
    pub scene: u32,
    pub scenes: Vec<Scene>,
    pub nodes: Vec<Node>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub meshes: Vec<Mesh>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skins: Vec<Skin>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub animations: Vec<Animation>,
    pub accessors: Vec<Accessor>,
    #[serde(rename = "bufferViews")]
    pub buffer_views: Vec<BufferView>,
    pub buffers: Vec<Buffer>,
}

#[derive(Serialize)]
pub struct Asset {
    pub version: &'static str,
    pub generator: &'static str,
    pub copyright: &'static str,
}

#[derive(Serialize)]
pub struct Scene {
    pub name: &'static str,
    pub nodes: Vec<u32>,
}

#[derive(Serialize, Default)]
pub struct Node {
    pub name: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub children: Vec<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub translation: Option<[f64; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rotation: Option<[f64; 4]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scale: Option<[f64; 3]>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mesh: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skin: Option<u32>,
}

#[derive(Serialize)]
pub struct Mesh {
    pub name: &'static str,
    pub primitives: Vec<Primitive>,
    /// Default morph weights.
    pub weights: Vec<f64>,
    pub extras: MeshExtras,
}

/// The de-facto convention (Blender, three.js, Babylon) for naming morph
/// targets, which glTF itself leaves unnamed.
#[derive(Serialize)]
pub struct MeshExtras {
    #[serde(rename = "targetNames")]
    pub target_names: Vec<&'static str>,
}

#[derive(Serialize)]
pub struct Primitive {
    pub attributes: Attributes,
    pub indices: u32,
    /// 4 = TRIANGLES.
    pub mode: u32,
    pub targets: Vec<MorphTarget>,
}

#[derive(Serialize)]
pub struct Attributes {
    #[serde(rename = "POSITION")]
    pub position: u32,
    #[serde(rename = "JOINTS_0")]
    pub joints_0: u32,
    #[serde(rename = "WEIGHTS_0")]
    pub weights_0: u32,
}

#[derive(Serialize)]
pub struct MorphTarget {
    #[serde(rename = "POSITION")]
    pub position: u32,
}

#[derive(Serialize)]
pub struct Skin {
    pub name: &'static str,
    #[serde(rename = "inverseBindMatrices")]
    pub inverse_bind_matrices: u32,
    pub skeleton: u32,
    pub joints: Vec<u32>,
}

#[derive(Serialize)]
pub struct Animation {
    pub name: &'static str,
    pub channels: Vec<Channel>,
    pub samplers: Vec<Sampler>,
}

#[derive(Serialize)]
pub struct Channel {
    pub sampler: u32,
    pub target: ChannelTarget,
}

#[derive(Serialize)]
pub struct ChannelTarget {
    pub node: u32,
    pub path: &'static str,
}

#[derive(Serialize)]
pub struct Sampler {
    pub input: u32,
    pub interpolation: &'static str,
    pub output: u32,
}

#[derive(Serialize)]
pub struct Accessor {
    #[serde(rename = "bufferView")]
    pub buffer_view: u32,
    #[serde(rename = "componentType")]
    pub component_type: u32,
    pub count: u32,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<Vec<f64>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<Vec<f64>>,
}

#[derive(Serialize)]
pub struct BufferView {
    pub buffer: u32,
    #[serde(rename = "byteOffset")]
    pub byte_offset: u32,
    #[serde(rename = "byteLength")]
    pub byte_length: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<u32>,
}

#[derive(Serialize)]
pub struct Buffer {
    #[serde(rename = "byteLength")]
    pub byte_length: u32,
}
