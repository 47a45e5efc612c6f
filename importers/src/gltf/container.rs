//! The outer layers of a glTF file: the GLB container, the JSON document
//! and its validation, the asset version and required extensions.
//!
//! The GLB container is split here rather than by the gltf crate because
//! the crate computes `length - 12` unchecked (a header declaring fewer than
//! 12 bytes panics in debug builds) and its errors do not say how much of
//! the file is missing; a truncated download deserves a precise message.

use super::Report;
use crate::ImportError;
use ::gltf::json;
use json::validation::Validate;
use ludus_anim_model::{Diagnostic, SourceFormat};

/// A parsed document and the GLB binary chunk, if any.
pub(super) struct Parsed<'a> {
    pub root: json::Root,
    /// The GLB `BIN` chunk: the data of a buffer without `uri`.
    pub bin: Option<&'a [u8]>,
    /// `Glb` for the binary container, else `Gltf`.
    pub format: SourceFormat,
}

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// Required extensions that change only meshes, materials, textures or
/// lights: irrelevant to skeletons and animation, so accepted silently.
const HARMLESS_EXTENSIONS: &[&str] = &[
    "KHR_draco_mesh_compression",
    "KHR_lights_punctual",
    "KHR_mesh_quantization",
    "EXT_mesh_gpu_instancing",
];
const HARMLESS_EXTENSION_PREFIXES: &[&str] = &["KHR_materials_", "KHR_texture_", "EXT_texture_"];

/// Required extensions that compress buffer views. Animation data read
/// without decompressing them would be garbage, so they stop the import.
const UNSUPPORTED_EXTENSIONS: &[&str] = &["EXT_meshopt_compression", "KHR_meshopt_compression"];

/// Top-level JSON sections the importer reads without re-checking every
/// reference itself; validation errors there are fatal. Errors anywhere
/// else (images, materials, meshes...) are reported as one warning: they
/// cannot change a skeleton or a clip, and accessors, buffer views and
/// buffers are re-checked when (and only when) they are actually read.
const FATAL_SECTIONS: &[&str] = &["asset", "nodes", "skins", "animations"];

pub(super) fn parse<'a>(bytes: &'a [u8], report: &mut Report) -> Result<Parsed<'a>, ImportError> {
    let (json_bytes, bin, format) = if bytes.starts_with(GLB_MAGIC) {
        let (json_bytes, bin) =
            split_glb(bytes).map_err(|m| report.malformed("malformed_glb", m))?;
        (json_bytes, bin, SourceFormat::Glb)
    } else {
        (bytes, None, SourceFormat::Gltf)
    };
    // A UTF-8 byte order mark is not allowed by the spec but common from
    // Windows editors; it carries no meaning, so it is skipped.
    let json_bytes = json_bytes
        .strip_prefix(b"\xEF\xBB\xBF")
        .unwrap_or(json_bytes);
    if json_bytes.starts_with(GLB_MAGIC) {
        // Only possible inside a GLB; the gltf crate would parse it as a
        // nested GLB with unchecked header arithmetic.
        return Err(report.malformed("invalid_json", "GLB JSON chunk holds another GLB, not JSON"));
    }
    let root = parse_json(json_bytes, report)?;
    check_version(&root, report)?;
    check_required_extensions(&root, report)?;
    Ok(Parsed { root, bin, format })
}

/// Split a GLB into its JSON chunk and optional BIN chunk (spec 4.4).
/// Unknown chunk types after the JSON chunk are skipped, as the spec asks.
fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), String> {
    let read_u32 = |at: usize| -> Option<u32> {
        let b = bytes.get(at..at.checked_add(4)?)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    };
    let version = read_u32(4)
        .ok_or_else(|| format!("truncated GLB: {} bytes, header needs 12", bytes.len()))?;
    if version != 2 {
        return Err(format!(
            "GLB container version {version} is not supported (expected 2)"
        ));
    }
    let declared = read_u32(8)
        .ok_or_else(|| format!("truncated GLB: {} bytes, header needs 12", bytes.len()))?
        as usize;
    if declared > bytes.len() {
        return Err(format!(
            "truncated GLB: header declares {declared} bytes but the file has {}",
            bytes.len()
        ));
    }
    let mut at = 12;
    let mut json = None;
    let mut bin = None;
    while at < declared {
        let (Some(len), Some(kind)) = (read_u32(at), read_u32(at + 4)) else {
            return Err(format!(
                "truncated GLB: chunk header at byte {at} is cut off"
            ));
        };
        let start = at + 8;
        let end = start
            .checked_add(len as usize)
            .filter(|&e| e <= declared)
            .ok_or_else(|| {
                format!(
                    "truncated GLB: chunk at byte {at} declares {len} bytes but only {} remain",
                    declared.saturating_sub(start)
                )
            })?;
        let data = bytes
            .get(start..end)
            .ok_or_else(|| format!("truncated GLB: chunk at byte {at} is cut off"))?;
        match kind {
            CHUNK_JSON if json.is_none() => json = Some(data),
            CHUNK_BIN if json.is_some() && bin.is_none() => bin = Some(data),
            CHUNK_JSON | CHUNK_BIN => {
                return Err(format!(
                    "GLB chunk at byte {at} is out of order or repeated"
                ))
            }
            _ if json.is_none() => return Err("GLB does not start with a JSON chunk".to_string()),
            _ => {}
        }
        // Chunks are 4-byte aligned; a missing final pad is tolerated.
        at = end.saturating_add(3) & !3;
    }
    let json = json.ok_or_else(|| "GLB has no JSON chunk".to_string())?;
    Ok((json, bin))
}

/// Deserialize, then validate with the gltf crate's rules. Validation runs
/// on our side of a pre-check: the crate indexes `accessors[i]` unchecked
/// for a mesh's POSITION attribute (gltf-json 1.4 `mesh.rs`), so such
/// out-of-range indices are removed and reported first ([`defuse`]).
fn parse_json(json_bytes: &[u8], report: &mut Report) -> Result<json::Root, ImportError> {
    let mut root: json::Root = json::deserialize::from_slice(json_bytes).map_err(|e| {
        report.malformed("invalid_json", format!("not a glTF 2.0 JSON document: {e}"))
    })?;
    let mut ignored = defuse(&mut root);
    let mut fatal = Vec::new();
    root.validate(&root, json::Path::new, &mut |path, error| {
        let p = path();
        let p = p.as_str();
        let section = p.split(['.', '[']).next().unwrap_or("");
        let line = format!("{p}: {error}");
        if p.starts_with("extensionsRequired") {
            // Handled by check_required_extensions with our own policy.
        } else if FATAL_SECTIONS.contains(&section) && !is_unsupported_channel_path(p) {
            fatal.push(line);
        } else {
            ignored.push(line);
        }
    });
    if !fatal.is_empty() {
        return Err(report.malformed(
            "invalid_gltf",
            format!("invalid glTF: {}", summarize(&fatal)),
        ));
    }
    if !ignored.is_empty() {
        report.push(Diagnostic::warning(
            "ignored_invalid_data",
            format!(
                "ignored invalid glTF data that skeletons and animation do not use: {}",
                summarize(&ignored)
            ),
        ));
    }
    Ok(root)
}

/// Remove what would make the gltf crate's validation panic: mesh
/// primitive POSITION attributes naming an accessor that does not exist.
/// Meshes are never imported, so the attribute is dropped and reported
/// like any other ignored invalid data.
fn defuse(root: &mut json::Root) -> Vec<String> {
    let accessors = root.accessors.len();
    let position = json::validation::Checked::Valid(json::mesh::Semantic::Positions);
    let mut lines = Vec::new();
    for (mi, mesh) in root.meshes.iter_mut().enumerate() {
        for (pi, prim) in mesh.primitives.iter_mut().enumerate() {
            let bad = prim
                .attributes
                .get(&position)
                .map(|a| a.value())
                .filter(|&a| a >= accessors);
            if let Some(a) = bad {
                prim.attributes.remove(&position);
                lines.push(format!(
                    "meshes[{mi}].primitives[{pi}].attributes.POSITION: accessor {a} does not exist"
                ));
            }
        }
    }
    lines
}

/// A channel targeting a property the gltf crate does not know (e.g. from
/// KHR_animation_pointer) is dropped with a warning by the clip builder
/// instead of failing the whole file.
fn is_unsupported_channel_path(path: &str) -> bool {
    path.starts_with("animations[") && path.ends_with(".target.path")
}

fn summarize(lines: &[String]) -> String {
    const SHOWN: usize = 5;
    let mut s = lines
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join("; ");
    if lines.len() > SHOWN {
        s.push_str(&format!("; and {} more", lines.len() - SHOWN));
    }
    s
}

fn check_version(root: &json::Root, report: &Report) -> Result<(), ImportError> {
    let version = root.asset.version.as_str();
    if version.split('.').next() != Some("2") {
        return Err(report.malformed(
            "unsupported_version",
            format!("glTF version '{version}' is not supported (expected 2.x)"),
        ));
    }
    Ok(())
}

fn check_required_extensions(root: &json::Root, report: &mut Report) -> Result<(), ImportError> {
    for ext in &root.extensions_required {
        let name = ext.as_str();
        if UNSUPPORTED_EXTENSIONS.contains(&name) {
            return Err(report.malformed(
                "unsupported_extension",
                format!("required extension {name} (compressed buffer views) is not supported; export without it"),
            ));
        }
        let harmless = HARMLESS_EXTENSIONS.contains(&name)
            || HARMLESS_EXTENSION_PREFIXES
                .iter()
                .any(|p| name.starts_with(p));
        if !harmless {
            report.push(Diagnostic::warning(
                "unsupported_extension",
                format!(
                    "required extension {name} is not supported; anything it changes is ignored"
                ),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glb(json: &[u8], bin: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::new();
        let mut chunks = Vec::new();
        let mut push = |kind: u32, data: &[u8]| {
            let mut d = data.to_vec();
            while d.len() & 3 != 0 {
                d.push(if kind == CHUNK_JSON { b' ' } else { 0 });
            }
            chunks.extend_from_slice(&(d.len() as u32).to_le_bytes());
            chunks.extend_from_slice(&kind.to_le_bytes());
            chunks.extend_from_slice(&d);
        };
        push(CHUNK_JSON, json);
        if let Some(b) = bin {
            push(CHUNK_BIN, b);
        }
        out.extend_from_slice(GLB_MAGIC);
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&((12 + chunks.len()) as u32).to_le_bytes());
        out.extend_from_slice(&chunks);
        out
    }

    #[test]
    fn glb_chunks_split() {
        let bytes = glb(b"{}", Some(&[1, 2, 3, 4]));
        let (json, bin) = split_glb(&bytes).unwrap();
        assert_eq!(json.trim_ascii(), b"{}");
        assert_eq!(bin, Some(&[1u8, 2, 3, 4][..]));
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let bytes = glb(b"{\"asset\":{\"version\":\"2.0\"}}", Some(&[0; 16]));
        for n in 0..bytes.len() {
            let mut cut = bytes[..n].to_vec();
            if n >= 12 {
                // Keep the header honest about the new size too.
                cut[8..12].copy_from_slice(&(n as u32).to_le_bytes());
            }
            let _ = split_glb(&cut);
        }
        assert!(split_glb(&bytes[..bytes.len() - 1]).is_err());
    }

    #[test]
    fn tiny_declared_length_is_rejected() {
        let mut bytes = glb(b"{}", None);
        bytes[8..12].copy_from_slice(&5u32.to_le_bytes());
        assert!(split_glb(&bytes).is_err());
    }
}
