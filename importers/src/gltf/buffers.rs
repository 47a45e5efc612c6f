//! Buffer resolution: the GLB BIN chunk, base64 data URIs and external
//! files next to the `.gltf`.
//!
//! Only buffers that animation samplers, skins or skinned meshes read are
//! loaded. A file whose mesh `.bin` is missing still cooks its animation
//! (with a warning; a skinned mesh's buffer missing only leaves its skin
//! unchecked), and the asset's content hash covers exactly the companion
//! files its output depends on.

use super::Report;
use crate::companion::resolve_companion;
use crate::{CompanionReader, ImportError};
use ::gltf::json;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::DecodePaddingMode;
use base64::Engine;
use ludus_anim_model::limits::{Limit, LimitExceeded};
use ludus_anim_model::Diagnostic;
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Loaded buffer data by glTF buffer index; `None` for buffers nothing we
/// read uses.
pub(super) struct Buffers<'a> {
    data: Vec<Option<Cow<'a, [u8]>>>,
}

impl Buffers<'_> {
    pub fn get(&self, index: usize) -> Option<&[u8]> {
        self.data.get(index)?.as_deref()
    }
}

pub(super) struct Loaded<'a> {
    pub buffers: Buffers<'a>,
    /// External files read, as paths the cooker can open to hash them.
    pub companions: Vec<String>,
}

/// Base64 as found in the wild: exporters disagree about padding.
const BASE64: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::STANDARD,
    GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent),
);

pub(super) fn load<'a>(
    path: &Path,
    root: &json::Root,
    bin: Option<&'a [u8]>,
    reader: &dyn CompanionReader,
    report: &mut Report,
) -> Result<Loaded<'a>, ImportError> {
    let users = buffer_users(root);
    let mesh_users = skinned_mesh_buffers(root);
    let mut data = Vec::with_capacity(root.buffers.len());
    let mut companions: Vec<String> = Vec::new();
    for (index, buffer) in root.buffers.iter().enumerate() {
        let label = buffer_label(index, buffer);
        let Some(user) = users.get(index).cloned().flatten() else {
            if mesh_users.get(index).copied().unwrap_or(false) {
                match read_buffer(path, index, buffer, bin, reader, &mut companions, report) {
                    Ok(bytes) => {
                        let declared = usize::try_from(buffer.byte_length.0).unwrap_or(usize::MAX);
                        data.push(Some(match bytes {
                            Cow::Borrowed(b) => {
                                Cow::Borrowed(b.get(..declared.min(b.len())).unwrap_or(b))
                            }
                            Cow::Owned(mut v) => {
                                v.truncate(declared);
                                Cow::Owned(v)
                            }
                        }));
                    }
                    Err(failure) => {
                        let reason = match failure {
                            Failure::Refused { reason, .. } => reason,
                            Failure::Limit(e) => e.to_string(),
                            Failure::Missing(reason) => reason,
                        };
                        report.push(Diagnostic::warning(
                            "missing_buffer",
                            format!("{label} is unavailable ({reason}); the skinned mesh that uses it is not checked"),
                        ));
                        data.push(None);
                    }
                }
                continue;
            }
            if let Some(reason) = unavailable_reason(path, index, buffer, bin, reader) {
                report.push(Diagnostic::warning(
                    "missing_buffer",
                    format!("{label} is unavailable ({reason}); no skin or animation uses it"),
                ));
            }
            data.push(None);
            continue;
        };
        let bytes = read_buffer(path, index, buffer, bin, reader, &mut companions, report)
            .map_err(|failure| match failure {
                Failure::Refused { uri, reason } => ImportError::RefusedUri {
                    path: report.file.clone(),
                    uri,
                    reason: format!("{reason} ({label}, needed by {user})"),
                },
                Failure::Limit(e) => report.limit(e, None, None),
                Failure::Missing(reason) => report.malformed(
                    "missing_buffer",
                    format!("{label}, needed by {user}, cannot be loaded: {reason}"),
                ),
            })?;
        let declared = usize::try_from(buffer.byte_length.0).unwrap_or(usize::MAX);
        if bytes.len() < declared {
            report.push(Diagnostic::warning(
                "buffer_length_mismatch",
                format!(
                    "{label} declares {declared} bytes but holds {}",
                    bytes.len()
                ),
            ));
        }
        // Data past byteLength (GLB chunk padding) is not part of the buffer.
        let bytes = match bytes {
            Cow::Borrowed(b) => Cow::Borrowed(b.get(..declared.min(b.len())).unwrap_or(b)),
            Cow::Owned(mut v) => {
                v.truncate(declared);
                Cow::Owned(v)
            }
        };
        data.push(Some(bytes));
    }
    Ok(Loaded {
        buffers: Buffers { data },
        companions,
    })
}

fn buffer_label(index: usize, buffer: &json::buffer::Buffer) -> String {
    match buffer.uri.as_deref() {
        Some(uri) if uri.starts_with("data:") => format!("buffer {index} (data URI)"),
        Some(uri) => format!("buffer {index} ('{uri}')"),
        None => format!("buffer {index} (GLB BIN chunk)"),
    }
}

/// For each buffer, a description of the first skin or animation that
/// reads it, or `None` if nothing we import does.
fn buffer_users(root: &json::Root) -> Vec<Option<String>> {
    let mut users = vec![None; root.buffers.len()];
    let mut mark = |accessor: usize, user: &dyn Fn() -> String| {
        for view in accessor_views(root, accessor) {
            let buffer = root.buffer_views.get(view).map(|v| v.buffer.value());
            if let Some(slot) = buffer.and_then(|b| users.get_mut(b)) {
                if slot.is_none() {
                    *slot = Some(user());
                }
            }
        }
    };
    for (ai, anim) in root.animations.iter().enumerate() {
        let name = || match anim.name.as_deref() {
            Some(n) if !n.is_empty() => format!("animation '{n}'"),
            _ => format!("animation {ai}"),
        };
        for channel in &anim.channels {
            if let Some(sampler) = anim.samplers.get(channel.sampler.value()) {
                mark(sampler.input.value(), &name);
                mark(sampler.output.value(), &name);
            }
        }
    }
    for (si, skin) in root.skins.iter().enumerate() {
        if let Some(ibm) = skin.inverse_bind_matrices {
            mark(ibm.value(), &|| format!("skin {si} inverse bind matrices"));
        }
    }
    users
}

/// For each buffer, whether a skinned mesh's vertex attributes read it
/// (loaded when available, for the bind-pose check).
fn skinned_mesh_buffers(root: &json::Root) -> Vec<bool> {
    let mut used = vec![false; root.buffers.len()];
    for node in root.nodes.iter().filter(|n| n.skin.is_some()) {
        let Some(mesh) = node.mesh.and_then(|m| root.meshes.get(m.value())) else {
            continue;
        };
        for prim in &mesh.primitives {
            for acc in prim.attributes.values() {
                for view in accessor_views(root, acc.value()) {
                    let buffer = root.buffer_views.get(view).map(|v| v.buffer.value());
                    if let Some(slot) = buffer.and_then(|b| used.get_mut(b)) {
                        *slot = true;
                    }
                }
            }
        }
    }
    used
}

/// Whether every buffer an accessor reads is loaded.
pub(super) fn accessor_loaded(root: &json::Root, buffers: &Buffers<'_>, accessor: usize) -> bool {
    accessor_views(root, accessor).into_iter().all(|view| {
        root.buffer_views
            .get(view)
            .is_some_and(|v| buffers.get(v.buffer.value()).is_some())
    })
}

/// Buffer views an accessor reads, including its sparse storage.
fn accessor_views(root: &json::Root, accessor: usize) -> Vec<usize> {
    let Some(acc) = root.accessors.get(accessor) else {
        return Vec::new();
    };
    let mut views: Vec<usize> = acc.buffer_view.iter().map(|v| v.value()).collect();
    if let Some(sparse) = &acc.sparse {
        views.push(sparse.indices.buffer_view.value());
        views.push(sparse.values.buffer_view.value());
    }
    views
}

/// Where a buffer's bytes come from.
enum Source<'u> {
    Glb,
    Data {
        header: &'u str,
        payload: &'u str,
    },
    /// A companion file, resolved and confined (see [`crate::companion`]).
    File(PathBuf),
    /// A URI the path policy refuses, and why.
    Refused {
        uri: &'u str,
        reason: String,
    },
}

/// Why a needed buffer could not be loaded.
enum Failure {
    Refused { uri: String, reason: String },
    Limit(LimitExceeded),
    Missing(String),
}

impl From<String> for Failure {
    fn from(reason: String) -> Failure {
        Failure::Missing(reason)
    }
}

fn source<'u>(
    asset: &Path,
    index: usize,
    buffer: &'u json::buffer::Buffer,
    bin: Option<&[u8]>,
    reader: &dyn CompanionReader,
) -> Result<Source<'u>, String> {
    let Some(uri) = buffer.uri.as_deref() else {
        // Only buffer 0 may refer to the GLB BIN chunk (spec 4.4.3.3).
        return if index == 0 && bin.is_some() {
            Ok(Source::Glb)
        } else {
            Err("it has no uri and there is no GLB BIN chunk for it".to_string())
        };
    };
    if let Some(rest) = uri.strip_prefix("data:") {
        let (header, payload) = rest
            .split_once(',')
            .ok_or("data URI has no ',' separator")?;
        return Ok(Source::Data { header, payload });
    }
    // Decoded first, so `%2e%2e/` is seen as the `../` it is.
    let decoded = percent_decode(uri);
    Ok(
        match resolve_companion(asset, &decoded, reader.allowed_root()) {
            Ok(file) => Source::File(file),
            Err(reason) => Source::Refused { uri, reason },
        },
    )
}

/// A `data:` URI's bytes, refused before decoding if they could exceed
/// the file size limit.
fn decode_data_uri(header: &str, payload: &str, max: u64) -> Result<Vec<u8>, Failure> {
    // base64 decodes to at most 3/4 of its length, percent-encoding to at
    // most its length.
    let bound = if header.ends_with(";base64") {
        payload.len() as u64 / 4 * 3 + 3
    } else {
        payload.len() as u64
    };
    if bound > max {
        let e = LimitExceeded::new(
            Limit::FileBytes,
            "data URI payload (bytes, decoded)",
            bound,
            max,
        );
        return Err(Failure::Limit(e));
    }
    if header.ends_with(";base64") {
        BASE64
            .decode(payload)
            .map_err(|e| Failure::Missing(format!("invalid base64 in data URI: {e}")))
    } else {
        Ok(percent_decode_bytes(payload))
    }
}

/// Read a companion file through the reader, bounded by the file size
/// limit. Files that are not regular, too large or outside the reader's
/// root are refused (typed); a file that is not there is missing.
fn read_companion(
    file: &Path,
    uri: &str,
    reader: &dyn CompanionReader,
    max: u64,
) -> Result<Vec<u8>, Failure> {
    reader.read_bounded(file, max).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotFound => {
            Failure::Missing(format!("cannot read '{}': {e}", file.display()))
        }
        _ => Failure::Refused {
            uri: uri.to_string(),
            reason: format!("'{}': {e}", file.display()),
        },
    })
}

fn read_buffer<'a>(
    asset: &Path,
    index: usize,
    buffer: &json::buffer::Buffer,
    bin: Option<&'a [u8]>,
    reader: &dyn CompanionReader,
    companions: &mut Vec<String>,
    report: &Report,
) -> Result<Cow<'a, [u8]>, Failure> {
    let max = report.limits.max_file_bytes;
    match source(asset, index, buffer, bin, reader)? {
        Source::Glb => bin
            .map(Cow::Borrowed)
            .ok_or_else(|| Failure::Missing("no GLB BIN chunk".to_string())),
        Source::Data { header, payload } => decode_data_uri(header, payload, max).map(Cow::Owned),
        Source::File(file) => {
            let uri = buffer.uri.as_deref().unwrap_or("");
            let bytes = read_companion(&file, uri, reader, max)?;
            let shown = file.display().to_string();
            if !companions.contains(&shown) {
                companions.push(shown);
            }
            Ok(Cow::Owned(bytes))
        }
        Source::Refused { uri, reason } => Err(Failure::Refused {
            uri: uri.to_string(),
            reason,
        }),
    }
}

/// Why an unneeded buffer could not be loaded, checked without reading it.
fn unavailable_reason(
    asset: &Path,
    index: usize,
    buffer: &json::buffer::Buffer,
    bin: Option<&[u8]>,
    reader: &dyn CompanionReader,
) -> Option<String> {
    match source(asset, index, buffer, bin, reader) {
        Err(reason) => Some(reason),
        Ok(Source::File(file)) => {
            (!reader.exists(&file)).then(|| format!("'{}' not found", file.display()))
        }
        Ok(Source::Refused { reason, .. }) => Some(format!("its URI is refused: {reason}")),
        Ok(Source::Glb | Source::Data { .. }) => None,
    }
}

/// URIs in glTF are percent-encoded (`my%20file.bin`); undecodable
/// sequences are kept literally rather than rejected.
fn percent_decode(uri: &str) -> String {
    String::from_utf8_lossy(&percent_decode_bytes(uri)).into_owned()
}

fn percent_decode_bytes(s: &str) -> Vec<u8> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes
            .get(i + 1..i + 3)
            .filter(|h| h.iter().all(u8::is_ascii_hexdigit))
            .and_then(|h| std::str::from_utf8(h).ok())
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("my%20file.bin"), "my file.bin");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%zz%4"), "%zz%4");
    }

    #[test]
    fn base64_tolerates_missing_padding() {
        assert_eq!(BASE64.decode("AAE").unwrap(), vec![0, 1]);
        assert_eq!(BASE64.decode("AAE=").unwrap(), vec![0, 1]);
    }
}
