//! Binary buffer assembly and the GLB container.

use crate::document::{exact, Accessor, BufferView};
use std::io;

/// glTF component type codes.
pub const FLOAT: u32 = 5126;
pub const UNSIGNED_BYTE: u32 = 5121;
pub const UNSIGNED_SHORT: u32 = 5123;
/// bufferView targets.
pub const ARRAY_BUFFER: u32 = 34962;
pub const ELEMENT_ARRAY_BUFFER: u32 = 34963;

/// Accumulates the single BIN chunk, one tightly packed buffer view per
/// accessor. Every view starts on a 4-byte boundary, which satisfies glTF's
/// alignment rules for all component types and for vertex attributes.
#[derive(Default)]
pub struct BinBuilder {
    pub data: Vec<u8>,
    pub views: Vec<BufferView>,
    pub accessors: Vec<Accessor>,
}

/// Options for a float accessor.
pub struct FloatAccessor<'a> {
    /// Flat component values.
    pub values: &'a [f32],
    /// "SCALAR", "VEC3", "VEC4" or "MAT4".
    pub kind: &'static str,
    /// Whether to record per-component `min`/`max` (required for POSITION,
    /// morph POSITION and animation inputs).
    pub bounds: bool,
    /// bufferView target, for vertex data.
    pub target: Option<u32>,
}

fn components(kind: &str) -> usize {
    match kind {
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" => 4,
        "MAT4" => 16,
        _ => 1,
    }
}

/// Converts a count or offset to the `u32` glTF uses. The fixture is a few
/// hundred KB at most, so overflow means a programming error; it is still
/// reported as an error rather than a panic.
pub fn to_u32(n: usize) -> io::Result<u32> {
    u32::try_from(n).map_err(|_| io::Error::other("glTF index or size exceeds u32"))
}

impl BinBuilder {
    fn push_view(&mut self, bytes: &[u8], target: Option<u32>) -> io::Result<u32> {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
        let view = BufferView {
            buffer: 0,
            byte_offset: to_u32(self.data.len())?,
            byte_length: to_u32(bytes.len())?,
            target,
        };
        self.data.extend_from_slice(bytes);
        self.views.push(view);
        to_u32(self.views.len() - 1)
    }

    fn push_accessor(&mut self, accessor: Accessor) -> io::Result<u32> {
        self.accessors.push(accessor);
        to_u32(self.accessors.len() - 1)
    }

    /// Appends float data and returns the new accessor's index.
    pub fn float(&mut self, a: FloatAccessor<'_>) -> io::Result<u32> {
        let n = components(a.kind);
        if a.values.is_empty() || !a.values.len().is_multiple_of(n) {
            return Err(io::Error::other(format!(
                "{} values do not form whole {} elements",
                a.values.len(),
                a.kind
            )));
        }
        let bytes: Vec<u8> = a.values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.push_view(&bytes, a.target)?;
        let (min, max) = if a.bounds {
            let mut min = vec![f32::INFINITY; n];
            let mut max = vec![f32::NEG_INFINITY; n];
            for element in a.values.chunks_exact(n) {
                for (c, &v) in element.iter().enumerate() {
                    min[c] = min[c].min(v);
                    max[c] = max[c].max(v);
                }
            }
            (
                Some(min.into_iter().map(exact).collect()),
                Some(max.into_iter().map(exact).collect()),
            )
        } else {
            (None, None)
        };
        self.push_accessor(Accessor {
            buffer_view: view,
            component_type: FLOAT,
            count: to_u32(a.values.len() / n)?,
            kind: a.kind,
            min,
            max,
        })
    }

    /// Appends `u8` VEC4 data (JOINTS_0) and returns the accessor index.
    pub fn u8_vec4(&mut self, values: &[[u8; 4]], target: Option<u32>) -> io::Result<u32> {
        let bytes: Vec<u8> = values.iter().flatten().copied().collect();
        let view = self.push_view(&bytes, target)?;
        self.push_accessor(Accessor {
            buffer_view: view,
            component_type: UNSIGNED_BYTE,
            count: to_u32(values.len())?,
            kind: "VEC4",
            min: None,
            max: None,
        })
    }

    /// Appends `u16` scalar data (indices) and returns the accessor index.
    pub fn u16_scalar(&mut self, values: &[u16], target: Option<u32>) -> io::Result<u32> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.push_view(&bytes, target)?;
        self.push_accessor(Accessor {
            buffer_view: view,
            component_type: UNSIGNED_SHORT,
            count: to_u32(values.len())?,
            kind: "SCALAR",
            min: None,
            max: None,
        })
    }

    /// Pads the buffer to a 4-byte multiple (the BIN chunk requirement).
    pub fn finish(mut self) -> (Vec<u8>, Vec<BufferView>, Vec<Accessor>) {
        while !self.data.len().is_multiple_of(4) {
            self.data.push(0);
        }
        (self.data, self.views, self.accessors)
    }
}

/// Wraps JSON and binary payloads in a GLB container (glTF 2.0 section 4.4):
/// 12-byte header, JSON chunk padded with spaces, BIN chunk padded with zeros.
pub fn container(json: &[u8], bin: &[u8]) -> io::Result<Vec<u8>> {
    const MAGIC: u32 = 0x4654_6C67; // "glTF"
    const JSON: u32 = 0x4E4F_534A; // "JSON"
    const BIN: u32 = 0x004E_4942; // "BIN\0"
    let pad = |n: usize| (4 - n % 4) % 4;
    let json_len = json.len() + pad(json.len());
    let bin_len = bin.len() + pad(bin.len());
    let total = 12 + 8 + json_len + 8 + bin_len;

    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(&MAGIC.to_le_bytes());
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&to_u32(total)?.to_le_bytes());

    out.extend_from_slice(&to_u32(json_len)?.to_le_bytes());
    out.extend_from_slice(&JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(out.len() + pad(json.len()), b' ');

    out.extend_from_slice(&to_u32(bin_len)?.to_le_bytes());
    out.extend_from_slice(&BIN.to_le_bytes());
    out.extend_from_slice(bin);
    out.resize(out.len() + pad(bin.len()), 0);
    Ok(out)
}
