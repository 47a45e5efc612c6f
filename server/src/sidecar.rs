//! The server's `report-sidecar.json`: the dashboard's per-time data for
//! the *whole* generation, not just the assets the last cook touched.
//!
//! A cook of a few assets brings sidecar records for those assets only
//! (its [`PackageSink`](crate::generation::PackageSink) keeps them instead
//! of writing them out). The worker keeps each asset's records as a
//! serialized [`SidecarPart`] (the last good ones while a later cook
//! fails, beside the last good package), and a generation's sidecar is
//! assembled by concatenating the parts in project order: a one-asset
//! edit serializes that asset's clips once, never the other 999.
//!
//! The size limit (`[report] sidecar_max_mb`) applies to the assembled
//! whole, as `ludus-anim cook` applies it to its whole sidecar: above it,
//! every clip's per-time errors are left out. The server's cooks therefore
//! run without the limit, and each part is kept in both forms.

use ludus_anim_report::packed::Packed;
use ludus_anim_report::sidecar::{ClipSidecar, SIDECAR_VERSION};
use std::collections::BTreeMap;
use std::io::{self, Write};
use std::sync::Arc;

/// One asset's sidecar clip records as JSON, comma-separated (the inside
/// of the `clips` array), with and without the per-time errors.
#[derive(Debug, Default, PartialEq)]
pub struct SidecarPart {
    full: Vec<u8>,
    without_errors: Vec<u8>,
}

/// Asset name (the report's `source`) → its part.
pub type SidecarParts = BTreeMap<String, Arc<SidecarPart>>;

/// Split a cook's sidecar records into one part per asset.
pub fn split(clips: Vec<ClipSidecar>) -> SidecarParts {
    let mut by_asset: BTreeMap<String, Vec<ClipSidecar>> = BTreeMap::new();
    for c in clips {
        by_asset.entry(c.source.clone()).or_default().push(c);
    }
    by_asset
        .into_iter()
        .map(|(name, clips)| (name, Arc::new(part_of(clips))))
        .collect()
}

fn part_of(mut clips: Vec<ClipSidecar>) -> SidecarPart {
    let full = join(&clips);
    for c in &mut clips {
        c.error_q = Packed(Vec::new());
    }
    SidecarPart {
        full,
        without_errors: join(&clips),
    }
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

/// The sidecar JSON of `parts` (in order): the same document
/// `ludus-anim cook` writes for those clips, every clip's per-time errors
/// left out when the whole would pass `max_mb`.
pub fn write<'a>(
    w: &mut impl Write,
    parts: impl Iterator<Item = &'a SidecarPart> + Clone,
    max_mb: Option<f64>,
) -> io::Result<()> {
    let size: usize = parts.clone().map(|p| p.full.len() + 1).sum();
    let limit = max_mb.map(|mb| mb * 1024.0 * 1024.0);
    let strip = limit.is_some_and(|l| size as f64 > l);
    let version = serde_json::to_string(ludus_anim_cooker::COOKER_VERSION)?;
    write!(
        w,
        "{{\"version\":{SIDECAR_VERSION},\"cooker_version\":{version},\"clips\":["
    )?;
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
    use ludus_anim_report::sidecar::Sidecar;

    fn clip(source: &str, name: &str) -> ClipSidecar {
        let mut c = ClipSidecar::new(source, name, "standard", 1.0);
        c.set_joints(
            &["root".to_string(), "hip".to_string()],
            &[None, Some(0)],
            &[0.001, 0.001],
        );
        c.set_errors(&[0.0, 0.5], &[0.0001, 0.0002, 0.0003, 0.0004])
            .unwrap();
        c
    }

    fn assemble<'a>(
        parts: impl Iterator<Item = &'a SidecarPart> + Clone,
        max_mb: Option<f64>,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        write(&mut out, parts, max_mb).unwrap();
        out
    }

    fn sidecar(clips: Vec<ClipSidecar>) -> Sidecar {
        let mut s = Sidecar::new(ludus_anim_cooker::COOKER_VERSION);
        s.clips = clips;
        s
    }

    #[test]
    fn assembled_parts_are_the_cooks_document() {
        let clips = vec![clip("a.bvh", "a"), clip("b.fbx", "b1"), clip("b.fbx", "b2")];
        let parts = split(clips.clone());
        assert_eq!(parts.len(), 2);
        let bytes = assemble(parts.values().map(|p| p.as_ref()), None);
        let back = Sidecar::from_json(&bytes).unwrap();
        assert_eq!(back, sidecar(clips));
        let empty = assemble(std::iter::empty(), None);
        assert_eq!(Sidecar::from_json(&empty).unwrap(), sidecar(Vec::new()));
    }

    #[test]
    fn the_limit_applies_to_the_whole() {
        let parts = split(vec![clip("a.bvh", "a"), clip("b.bvh", "b")]);
        let one = assemble(parts.values().take(1).map(|p| p.as_ref()), Some(1e-9));
        let all = assemble(parts.values().map(|p| p.as_ref()), Some(1.0));
        let stripped = Sidecar::from_json(&one).unwrap();
        assert!(stripped.clips.iter().all(|c| c.error_q.0.is_empty()));
        let kept = Sidecar::from_json(&all).unwrap();
        assert!(kept.clips.iter().all(|c| !c.error_q.0.is_empty()));
    }
}
