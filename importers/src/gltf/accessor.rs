//! Accessor decoding with every offset checked.
//!
//! The gltf crate's `Reader` trusts the file: it debug-asserts element
//! sizes, reaches `unreachable!` on unexpected component types and computes
//! `count - 1` unchecked. A cooker must turn any input into an error, never
//! a panic, so the accessors we need are decoded here against the buffer
//! views and buffers they claim to live in. Sparse storage and normalized
//! integer components (KHR_mesh_quantization) follow the glTF 2.0 spec
//! (3.6.2.3 and 3.11).

use super::buffers::Buffers;
use ::gltf::json;
use json::accessor::{ComponentType, Type};
use json::validation::Checked;
use ludus_anim_model::limits::{LimitExceeded, MemoryBudget};

/// What a use site requires an accessor to hold (glTF 2.0 spec 5.9, and
/// KHR_mesh_quantization for quantized rotations and weights).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Expect {
    /// Animation sampler input: SCALAR float seconds.
    Times,
    /// Translation or scale output: VEC3 float.
    Vec3,
    /// Rotation output: VEC4 float or normalized (u)byte/(u)short.
    Rotation,
    /// Morph target weights output: SCALAR float or normalized (u)byte/(u)short.
    Weights,
    /// Skin inverse bind matrices: MAT4 float.
    Mat4,
    /// Mesh `JOINTS_n`: VEC4 unsigned byte or short (not normalized).
    Joints,
    /// Mesh `WEIGHTS_n`: VEC4 float or normalized unsigned byte/short.
    SkinWeights,
}

impl Expect {
    fn ty(self) -> Type {
        match self {
            Expect::Times | Expect::Weights => Type::Scalar,
            Expect::Vec3 => Type::Vec3,
            Expect::Rotation => Type::Vec4,
            Expect::Mat4 => Type::Mat4,
            Expect::Joints | Expect::SkinWeights => Type::Vec4,
        }
    }

    fn allows_quantized(self) -> bool {
        matches!(
            self,
            Expect::Rotation | Expect::Weights | Expect::SkinWeights
        )
    }

    fn describe(self) -> &'static str {
        match self {
            Expect::Times => "SCALAR float",
            Expect::Vec3 => "VEC3 float",
            Expect::Rotation => "VEC4 float or normalized byte/short",
            Expect::Weights => "SCALAR float or normalized byte/short",
            Expect::Mat4 => "MAT4 float",
            Expect::Joints => "VEC4 unsigned byte/short",
            Expect::SkinWeights => "VEC4 float or normalized unsigned byte/short",
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub(super) enum AccessorError {
    #[error("accessor {0} does not exist")]
    Missing(usize),
    #[error("accessor {index} is {found}, expected {expected}")]
    WrongType {
        index: usize,
        found: String,
        expected: &'static str,
    },
    #[error("accessor {index} has no elements")]
    Empty { index: usize },
    #[error("accessor {index}: {detail}")]
    OutOfBounds { index: usize, detail: String },
    #[error("accessor {index}: sparse storage {detail}")]
    Sparse { index: usize, detail: String },
    /// More elements than the use site allows (`max`): checked before
    /// anything is allocated from `count`.
    #[error("accessor {index} has {count} elements, at most {max} allowed here")]
    TooMany { index: usize, count: u64, max: u64 },
    /// Decoding would take the asset over its memory budget.
    #[error("accessor {index}: {error}")]
    Budget {
        index: usize,
        error: Box<LimitExceeded>,
    },
}

/// What a use site lets an accessor allocate: at most `max_count`
/// elements, charged to `budget` (decoded floats plus the curve key each
/// element becomes) before decoding.
pub(super) struct Allowance<'b> {
    pub max_count: u64,
    pub budget: &'b MemoryBudget,
}

/// Bytes one decoded element may end up costing besides its floats: the
/// largest model key (`Key<Quat>`: time, value, two tangents).
const KEY_BYTES: u64 = std::mem::size_of::<ludus_anim_model::Key<ludus_anim_model::Quat>>() as u64;

/// Decoded accessor data as `count * components` floats, element-major.
#[derive(Debug)]
pub(super) struct Decoded {
    pub count: usize,
    pub values: Vec<f32>,
}

impl Decoded {
    /// Elements of exactly `N` components, as arrays.
    pub fn elements<const N: usize>(&self) -> impl Iterator<Item = [f32; N]> + '_ {
        self.values.chunks_exact(N).map(|c| {
            let mut a = [0.0; N];
            a.copy_from_slice(c);
            a
        })
    }
}

/// Decode accessor `index` as `expect` requires, within `allow`.
/// Accessors without a buffer view are allocated from `count` alone, so
/// the count is checked against the allowance first.
pub(super) fn read(
    root: &json::Root,
    buffers: &Buffers,
    index: usize,
    expect: Expect,
    allow: &Allowance<'_>,
) -> Result<Decoded, AccessorError> {
    let acc = root
        .accessors
        .get(index)
        .ok_or(AccessorError::Missing(index))?;
    let (ct, ty) = match (&acc.component_type, &acc.type_) {
        (Checked::Valid(ct), Checked::Valid(ty)) => (ct.0, *ty),
        _ => {
            return Err(AccessorError::WrongType {
                index,
                found: "of an invalid type".to_string(),
                expected: expect.describe(),
            })
        }
    };
    check_type(index, ct, ty, acc.normalized, expect)?;
    if acc.count.0 == 0 {
        return Err(AccessorError::Empty { index });
    }
    if acc.count.0 > allow.max_count {
        return Err(AccessorError::TooMany {
            index,
            count: acc.count.0,
            max: allow.max_count,
        });
    }
    let count = to_usize(acc.count.0);
    let components = ty.multiplicity();
    let elem_size = components * ct.size();
    let per_element = components as u64 * 4 + KEY_BYTES;
    allow
        .budget
        .charge(
            &format!("decoding accessor {index}"),
            acc.count.0.saturating_mul(per_element),
        )
        .map_err(|error| AccessorError::Budget {
            index,
            error: Box::new(error),
        })?;
    let total = count
        .checked_mul(components)
        .ok_or_else(|| AccessorError::OutOfBounds {
            index,
            detail: format!("count {count} is too large"),
        })?;
    let mut values = vec![0.0f32; total];
    if let Some(view) = acc.buffer_view {
        let view_index = view.value();
        let stride = root
            .buffer_views
            .get(view_index)
            .and_then(|v| v.byte_stride)
            .map(|s| s.0)
            .unwrap_or(elem_size);
        if stride < elem_size {
            return Err(AccessorError::OutOfBounds {
                index,
                detail: format!("byteStride {stride} of buffer view {view_index} is smaller than an element ({elem_size} bytes)"),
            });
        }
        let offset = to_usize(acc.byte_offset.map(|o| o.0).unwrap_or(0));
        let span = stride
            .checked_mul(count - 1)
            .and_then(|s| s.checked_add(elem_size))
            .ok_or_else(|| AccessorError::OutOfBounds {
                index,
                detail: format!("count {count} is too large"),
            })?;
        let bytes = view_bytes(root, buffers, index, view_index, offset, span)?;
        for (i, out) in values.chunks_exact_mut(components).enumerate() {
            let at = i * stride;
            let elem = bytes
                .get(at..at + elem_size)
                .ok_or_else(|| short_read(index))?;
            decode_element(elem, ct, acc.normalized, out).ok_or_else(|| short_read(index))?;
        }
    }
    if let Some(sparse) = &acc.sparse {
        apply_sparse(
            root,
            buffers,
            index,
            sparse,
            count,
            ct,
            acc.normalized,
            components,
            &mut values,
        )?;
    }
    Ok(Decoded { count, values })
}

fn check_type(
    index: usize,
    ct: ComponentType,
    ty: Type,
    normalized: bool,
    expect: Expect,
) -> Result<(), AccessorError> {
    let quantized = matches!(
        ct,
        ComponentType::I8 | ComponentType::U8 | ComponentType::I16 | ComponentType::U16
    );
    let component_ok = if expect == Expect::Joints {
        matches!(ct, ComponentType::U8 | ComponentType::U16) && !normalized
    } else {
        ct == ComponentType::F32 || (expect.allows_quantized() && quantized && normalized)
    };
    if ty != expect.ty() || !component_ok {
        let norm = if normalized { " normalized" } else { "" };
        return Err(AccessorError::WrongType {
            index,
            found: format!("{}{norm} {ct:?}", type_name(ty)),
            expected: expect.describe(),
        });
    }
    Ok(())
}

fn type_name(ty: Type) -> &'static str {
    match ty {
        Type::Scalar => "SCALAR",
        Type::Vec2 => "VEC2",
        Type::Vec3 => "VEC3",
        Type::Vec4 => "VEC4",
        Type::Mat2 => "MAT2",
        Type::Mat3 => "MAT3",
        Type::Mat4 => "MAT4",
    }
}

/// Overwrite the elements listed in a sparse accessor's indices.
#[allow(clippy::too_many_arguments)]
fn apply_sparse(
    root: &json::Root,
    buffers: &Buffers,
    index: usize,
    sparse: &json::accessor::sparse::Sparse,
    count: usize,
    ct: ComponentType,
    normalized: bool,
    components: usize,
    values: &mut [f32],
) -> Result<(), AccessorError> {
    let err = |detail: String| AccessorError::Sparse { index, detail };
    let n = to_usize(sparse.count.0);
    if n == 0 || n > count {
        return Err(err(format!("count {n} is not in 1..={count}")));
    }
    let index_type = match &sparse.indices.component_type {
        Checked::Valid(t) => t.0,
        Checked::Invalid => return Err(err("has an invalid index component type".to_string())),
    };
    let index_size = index_type.size();
    let elem_size = components * ct.size();
    let indices = view_bytes(
        root,
        buffers,
        index,
        sparse.indices.buffer_view.value(),
        to_usize(sparse.indices.byte_offset.0),
        n * index_size,
    )?;
    let data = view_bytes(
        root,
        buffers,
        index,
        sparse.values.buffer_view.value(),
        to_usize(sparse.values.byte_offset.0),
        n * elem_size,
    )?;
    let mut previous: Option<usize> = None;
    for j in 0..n {
        let raw = indices
            .get(j * index_size..(j + 1) * index_size)
            .ok_or_else(|| short_read(index))?;
        let target = match raw {
            [a] => usize::from(*a),
            [a, b] => usize::from(u16::from_le_bytes([*a, *b])),
            [a, b, c, d] => to_usize(u64::from(u32::from_le_bytes([*a, *b, *c, *d]))),
            _ => return Err(short_read(index)),
        };
        if target >= count || previous.is_some_and(|p| p >= target) {
            return Err(err(format!(
                "index {target} at position {j} is out of range or not strictly increasing"
            )));
        }
        previous = Some(target);
        let elem = data
            .get(j * elem_size..(j + 1) * elem_size)
            .ok_or_else(|| short_read(index))?;
        let out = values
            .get_mut(target * components..(target + 1) * components)
            .ok_or_else(|| short_read(index))?;
        decode_element(elem, ct, normalized, out).ok_or_else(|| short_read(index))?;
    }
    Ok(())
}

/// `len` bytes at `offset` inside buffer view `view_index`, checked against
/// the view's declared length and the loaded buffer's real length.
fn view_bytes<'b>(
    root: &json::Root,
    buffers: &'b Buffers,
    index: usize,
    view_index: usize,
    offset: usize,
    len: usize,
) -> Result<&'b [u8], AccessorError> {
    let oob = |detail: String| AccessorError::OutOfBounds { index, detail };
    let view = root
        .buffer_views
        .get(view_index)
        .ok_or_else(|| oob(format!("buffer view {view_index} does not exist")))?;
    let view_len = to_usize(view.byte_length.0);
    let view_offset = to_usize(view.byte_offset.map(|o| o.0).unwrap_or(0));
    let end = offset.saturating_add(len);
    if end > view_len {
        return Err(oob(format!(
            "reads bytes {offset}..{end} of buffer view {view_index}, which is {view_len} bytes long"
        )));
    }
    let buffer_index = view.buffer.value();
    let buffer = buffers.get(buffer_index).ok_or_else(|| {
        oob(format!(
            "buffer {buffer_index} of buffer view {view_index} is not loaded"
        ))
    })?;
    let view_end = view_offset.saturating_add(view_len);
    if view_end > buffer.len() {
        return Err(oob(format!(
            "buffer view {view_index} spans bytes {view_offset}..{view_end} of buffer {buffer_index}, which has {} bytes",
            buffer.len()
        )));
    }
    buffer
        .get(view_offset + offset..view_offset + end)
        .ok_or_else(|| short_read(index))
}

fn short_read(index: usize) -> AccessorError {
    AccessorError::OutOfBounds {
        index,
        detail: "element data is cut off".to_string(),
    }
}

/// Decode one element's components into `out`; `None` if `elem` is short.
fn decode_element(elem: &[u8], ct: ComponentType, normalized: bool, out: &mut [f32]) -> Option<()> {
    let size = ct.size();
    for (c, slot) in out.iter_mut().enumerate() {
        let b = elem.get(c * size..(c + 1) * size)?;
        *slot = decode_component(b, ct, normalized)?;
    }
    Some(())
}

/// One component as f32. Normalized integers map to [-1, 1] or [0, 1] as
/// the spec defines (3.11): signed values use `max(c / MAX, -1)`.
fn decode_component(b: &[u8], ct: ComponentType, normalized: bool) -> Option<f32> {
    let (v, max) = match (ct, b) {
        (ComponentType::F32, [a, b, c, d]) => return Some(f32::from_le_bytes([*a, *b, *c, *d])),
        (ComponentType::I8, [a]) => (f32::from(*a as i8), 127.0),
        (ComponentType::U8, [a]) => (f32::from(*a), 255.0),
        (ComponentType::I16, [a, b]) => (f32::from(i16::from_le_bytes([*a, *b])), 32767.0),
        (ComponentType::U16, [a, b]) => (f32::from(u16::from_le_bytes([*a, *b])), 65535.0),
        (ComponentType::U32, [a, b, c, d]) => {
            (u32::from_le_bytes([*a, *b, *c, *d]) as f32, u32::MAX as f32)
        }
        _ => return None,
    };
    Some(if normalized { (v / max).max(-1.0) } else { v })
}

fn to_usize(v: u64) -> usize {
    usize::try_from(v).unwrap_or(usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalized_components_follow_the_spec() {
        assert_eq!(decode_component(&[127], ComponentType::I8, true), Some(1.0));
        assert_eq!(
            decode_component(&[0x80], ComponentType::I8, true),
            Some(-1.0)
        );
        assert_eq!(decode_component(&[255], ComponentType::U8, true), Some(1.0));
        assert_eq!(
            decode_component(&[0xff, 0x7f], ComponentType::I16, true),
            Some(1.0)
        );
        assert_eq!(
            decode_component(&[0xff, 0xff], ComponentType::U16, true),
            Some(1.0)
        );
        assert_eq!(decode_component(&[0, 0], ComponentType::F32, false), None);
    }
}
