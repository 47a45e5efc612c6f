//! An asset's state as a generation needs it, serialized once: each
//! asset's report entry is turned into JSON and fingerprinted when its
//! state changes (a cook), so that a publish concatenates bytes and hashes
//! 32-byte prints instead of re-serializing every asset of the project.
//! On the 1,000-clip bench that re-serialization (the pretty report and
//! the fingerprint's JSON) was 12-30 ms of every publish.

use crate::sidecar::SidecarPart;
use ludus_anim_cooker::report::{AssetReport, AssetStatus, ManifestAsset, Report};
use std::sync::Arc;

/// An asset's latest cook and the package it is served with.
#[derive(Clone, Debug)]
pub struct AssetState {
    pub report: AssetReport,
    /// The last successful cook's manifest entry (kept while later cooks
    /// fail: the asset is then stale).
    pub good: Option<ManifestAsset>,
    /// The sidecar records of the cook that made `good` (kept with it
    /// while later cooks fail), for the generation's whole sidecar.
    pub sidecar: Option<Arc<SidecarPart>>,
    /// `report` as compact JSON, for the generation's `report.json`.
    pub json: Arc<[u8]>,
    /// What a client sees of the asset: status, package, source hash,
    /// diagnostics, the served entry and whether it is stale.
    pub print: [u8; 32],
}

impl AssetState {
    pub fn new(
        report: AssetReport,
        good: Option<ManifestAsset>,
        sidecar: Option<Arc<SidecarPart>>,
    ) -> AssetState {
        // Serializing these types cannot fail (string keys, finite
        // numbers): an empty entry would only make the print differ.
        let json: Arc<[u8]> = serde_json::to_vec(&report).unwrap_or_default().into();
        let mut h = blake3::Hasher::new();
        let seen = (
            &report.source,
            &report.status,
            &report.package,
            &report.source_hash,
            &report.diagnostics,
            &good,
        );
        let _ = serde_json::to_writer(&mut h, &seen);
        AssetState {
            print: *h.finalize().as_bytes(),
            report,
            good,
            sidecar,
            json,
        }
    }

    /// Served from an older cook: the latest failed, a package remains.
    pub fn stale(&self) -> bool {
        self.report.status == AssetStatus::Failed && self.good.is_some()
    }
}

/// The fingerprint of a generation holding `states` in this order: a new
/// generation is published only when it differs from the served one's.
pub fn fingerprint<'a>(states: impl Iterator<Item = &'a AssetState>) -> [u8; 32] {
    let mut h = blake3::Hasher::new();
    for s in states {
        h.update(&s.print);
    }
    *h.finalize().as_bytes()
}

/// `report.json`: `head` (the report without assets) with the assets'
/// JSON spliced in, in order. Compact, as each asset's bytes are.
pub fn report_json<'a>(head: &Report, assets: impl Iterator<Item = &'a AssetState>) -> Vec<u8> {
    const EMPTY: &[u8] = b"\"assets\":[]";
    let mut empty = head.clone();
    empty.assets.clear();
    let bytes = serde_json::to_vec(&empty).unwrap_or_default();
    let Some(at) = bytes.windows(EMPTY.len()).position(|w| w == EMPTY) else {
        // Not the shape expected: serialize the whole report instead.
        return serde_json::to_vec(head).unwrap_or_default();
    };
    let split = at + EMPTY.len() - 1;
    let mut out = Vec::with_capacity(bytes.len() + 4096);
    out.extend_from_slice(&bytes[..split]);
    for (i, a) in assets.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&a.json);
    }
    out.extend_from_slice(&bytes[split..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn asset(name: &str, ok: bool) -> AssetState {
        let mut r = AssetReport::failed(
            name.into(),
            "h".into(),
            "bvh".into(),
            ("cook_failed", "broken".into(), None),
        );
        if ok {
            r.status = AssetStatus::Ok;
        }
        AssetState::new(r, None, None)
    }

    fn head() -> Report {
        Report {
            cooker_version: "1".into(),
            build: None,
            profile: "standard".into(),
            assets: Vec::new(),
            totals: Default::default(),
            stages: Default::default(),
            cache_notices: Vec::new(),
            remote: None,
            shard: None,
            sync_groups: Vec::new(),
        }
    }

    #[test]
    fn the_spliced_report_is_the_report_serialized_whole() {
        let states = [asset("a.bvh", true), asset("b.bvh", false)];
        let mut whole = head();
        whole.assets = states.iter().map(|s| s.report.clone()).collect();
        let spliced = report_json(&head(), states.iter());
        assert_eq!(spliced, serde_json::to_vec(&whole).unwrap());
        let none = report_json(&head(), [].iter());
        assert_eq!(none, serde_json::to_vec(&head()).unwrap());
    }

    #[test]
    fn the_fingerprint_follows_what_a_client_sees_and_the_order() {
        let (a, b) = (asset("a.bvh", true), asset("b.bvh", true));
        let ab = fingerprint([&a, &b].into_iter());
        assert_ne!(ab, fingerprint([&b, &a].into_iter()));
        assert_ne!(ab, fingerprint([&a, &asset("b.bvh", false)].into_iter()));
        assert_eq!(ab, fingerprint([&a, &asset("b.bvh", true)].into_iter()));
    }
}
