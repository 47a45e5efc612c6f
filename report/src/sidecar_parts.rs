//! The sidecar as the cook and the asset server assemble it: each asset's
//! clip records serialized once ([`SidecarPart`]), the document written by
//! concatenating parts in project order ([`write`]). Nothing is parsed
//! back: a cook that serves an asset from its cache hands over the part's
//! bytes as they were stored.
//!
//! The size limit (`[report] sidecar_max_mb`) applies to the assembled
//! whole: above it, every clip's per-time errors and sampled poses are
//! left out (`poses_left_out` says so), which is why each part is kept in
//! both forms.

use crate::packed::Packed;
use crate::sidecar::{ClipSidecar, SIDECAR_VERSION};
use std::io::{self, Write};

/// One asset's sidecar clip records as JSON, comma-separated (the inside
/// of the `clips` array), with and without the per-time errors and poses.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SidecarPart {
    full: Vec<u8>,
    without_errors: Vec<u8>,
}

impl SidecarPart {
    /// Serialize `clips` in both forms.
    pub fn of(mut clips: Vec<ClipSidecar>) -> SidecarPart {
        let full = join(&clips);
        for c in &mut clips {
            c.error_q = Packed(Vec::new());
            c.poses_left_out |= c.poses.take().is_some() | c.source_poses.take().is_some();
        }
        SidecarPart {
            full,
            without_errors: join(&clips),
        }
    }

    /// The parts' records in order, as one part (what [`SidecarPart::of`]
    /// gives for all their clips at once, without serializing anything).
    pub fn concat<'a>(parts: impl Iterator<Item = &'a SidecarPart>) -> SidecarPart {
        let mut out = SidecarPart::default();
        for p in parts {
            append(&mut out.full, &p.full);
            append(&mut out.without_errors, &p.without_errors);
        }
        out
    }

    /// The records with their per-time errors.
    pub fn full(&self) -> &[u8] {
        &self.full
    }

    /// The part as one byte string (for a cache entry): the full form's
    /// length (8 bytes, little-endian), the full form, the stripped form.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + self.full.len() + self.without_errors.len());
        out.extend_from_slice(&(self.full.len() as u64).to_le_bytes());
        out.extend_from_slice(&self.full);
        out.extend_from_slice(&self.without_errors);
        out
    }

    /// The part [`SidecarPart::to_bytes`] wrote, or `None` for bytes it
    /// cannot have written.
    pub fn from_bytes(bytes: &[u8]) -> Option<SidecarPart> {
        let (len, rest) = bytes.split_first_chunk::<8>()?;
        let len = usize::try_from(u64::from_le_bytes(*len)).ok()?;
        if len > rest.len() {
            return None;
        }
        let (full, without) = rest.split_at(len);
        Some(SidecarPart {
            full: full.to_vec(),
            without_errors: without.to_vec(),
        })
    }
}

/// `part` after `out`'s records, comma-separated; empty parts add nothing.
fn append(out: &mut Vec<u8>, part: &[u8]) {
    if part.is_empty() {
        return;
    }
    if !out.is_empty() {
        out.push(b',');
    }
    out.extend_from_slice(part);
}

fn join(clips: &[ClipSidecar]) -> Vec<u8> {
    let mut out = Vec::new();
    for (i, c) in clips.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        // The sidecar types serialize infallibly (string keys, packed
        // arrays as base64 strings, finite floats: the cook wrote them).
        if serde_json::to_writer(&mut out, c).is_err() {
            out.truncate(out.len().saturating_sub(usize::from(i > 0)));
        }
    }
    out
}

/// Whether the document of `parts` leaves the per-time errors out: its
/// records with errors would pass `max_mb`.
pub fn strips_errors<'a>(
    parts: impl Iterator<Item = &'a SidecarPart>,
    max_mb: Option<f64>,
) -> bool {
    let size: usize = parts.map(|p| p.full.len() + 1).sum();
    max_mb.is_some_and(|mb| size as f64 > mb * 1024.0 * 1024.0)
}

/// The document's first bytes, up to and including the `clips` array's
/// opening bracket; `content` is left out when empty.
pub fn header(cooker_version: &str, content: &str) -> Vec<u8> {
    let version = serde_json::to_string(cooker_version).unwrap_or_else(|_| "\"\"".into());
    let content = match content {
        "" => String::new(),
        c => format!(
            "\"content\":{},",
            serde_json::to_string(c).unwrap_or_default()
        ),
    };
    format!("{{\"version\":{SIDECAR_VERSION},\"cooker_version\":{version},{content}\"clips\":[")
        .into_bytes()
}

/// The sidecar JSON of `parts` (in order), every clip's per-time errors
/// left out when the whole would pass `max_mb`.
pub fn write<'a>(
    w: &mut impl Write,
    parts: impl Iterator<Item = &'a SidecarPart> + Clone,
    max_mb: Option<f64>,
    cooker_version: &str,
    content: &str,
) -> io::Result<()> {
    let strip = strips_errors(parts.clone(), max_mb);
    w.write_all(&header(cooker_version, content))?;
    let mut first = true;
    for p in parts {
        let bytes = if strip { &p.without_errors } else { &p.full };
        if bytes.is_empty() {
            continue;
        }
        if !first {
            w.write_all(b",")?;
        }
        first = false;
        w.write_all(bytes)?;
    }
    w.write_all(b"]}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sidecar::Sidecar;

    fn clip(source: &str, name: &str) -> ClipSidecar {
        let mut c = ClipSidecar::new(source, name, "standard", 1.0);
        c.set_joints(
            &["root".to_string(), "hip".to_string()],
            &[None, Some(0)],
            &[0.001, 0.001],
        );
        c.set_errors(&[0.0, 0.5], &[0.0001, 0.0002, 0.0003, 0.0004])
            .unwrap();
        c.poses = Some(crate::sidecar::Poses::quantize(
            30.0,
            1,
            &[[0.0; 3], [0.0, 1.0, 0.0]],
        ));
        c
    }

    fn assemble(parts: &[SidecarPart], max_mb: Option<f64>, content: &str) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, parts.iter(), max_mb, "v", content).unwrap();
        out
    }

    #[test]
    fn assembled_parts_are_the_serialized_document() {
        let clips = vec![clip("a.bvh", "a"), clip("b.fbx", "b1"), clip("b.fbx", "b2")];
        let parts = vec![
            SidecarPart::of(clips[..1].to_vec()),
            SidecarPart::of(Vec::new()),
            SidecarPart::of(clips[1..].to_vec()),
        ];
        let mut whole = Sidecar::new("v");
        whole.clips = clips;
        let bytes = assemble(&parts, None, "");
        assert_eq!(bytes, serde_json::to_vec(&whole).unwrap());
        whole.content = "abc".into();
        let bytes = assemble(&parts, None, "abc");
        assert_eq!(bytes, serde_json::to_vec(&whole).unwrap());
        assert_eq!(Sidecar::from_json(&bytes).unwrap(), whole);
    }

    #[test]
    fn concatenated_parts_equal_one_part_of_all_clips() {
        let clips = vec![clip("a.bvh", "a"), clip("b.fbx", "b1"), clip("b.fbx", "b2")];
        let one: Vec<SidecarPart> = std::iter::once(SidecarPart::of(Vec::new()))
            .chain(clips.iter().map(|c| SidecarPart::of(vec![c.clone()])))
            .collect();
        assert_eq!(SidecarPart::concat(one.iter()), SidecarPart::of(clips));
        assert_eq!(
            SidecarPart::concat(std::iter::empty()),
            SidecarPart::of(Vec::new())
        );
    }

    #[test]
    fn the_limit_applies_to_the_whole() {
        let parts = vec![
            SidecarPart::of(vec![clip("a.bvh", "a")]),
            SidecarPart::of(vec![clip("b.bvh", "b")]),
        ];
        let stripped = Sidecar::from_json(&assemble(&parts[..1], Some(1e-9), "")).unwrap();
        assert!(stripped.clips.iter().all(|c| c.error_q.0.is_empty()));
        assert!(stripped
            .clips
            .iter()
            .all(|c| c.poses.is_none() && c.poses_left_out));
        let kept = Sidecar::from_json(&assemble(&parts, Some(1.0), "")).unwrap();
        assert!(kept.clips.iter().all(|c| !c.error_q.0.is_empty()));
    }

    #[test]
    fn a_part_round_trips_through_bytes_and_refuses_short_ones() {
        let p = SidecarPart::of(vec![clip("a.bvh", "a")]);
        assert_eq!(SidecarPart::from_bytes(&p.to_bytes()), Some(p.clone()));
        let b = p.to_bytes();
        assert_eq!(SidecarPart::from_bytes(&b[..4]), None);
        let mut long = b.clone();
        long[7] = 0xff;
        assert_eq!(SidecarPart::from_bytes(&long), None);
    }
}
