//! The server's whole-generation outputs: after a cook of one asset, the
//! generation's `report.json` and `report-sidecar.json` (and the top-level
//! `OUT/report.json`, `OUT/report-sidecar.json`, `OUT/manifest.json` the
//! dashboard reads) still describe every asset; a broken asset keeps its
//! last good sidecar records, across a restart too.

mod common;
use common::*;
use ludus_anim_report::sidecar::{ClipSidecar, Sidecar};
use ludus_anim_report::{PackageManifest, Report};
use std::collections::BTreeSet;
use std::path::Path;

/// The four top-level and generation files of the current generation.
struct Outputs {
    report: Report,
    sidecar: Sidecar,
    manifest: PackageManifest,
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The current generation's files; the top-level ones must be the same
/// bytes (links to them).
fn outputs(s: &Server) -> Outputs {
    let out = s.dir.join("out");
    let g = out.join("generations").join(s.generation().to_string());
    for f in ["report.json", "report-sidecar.json", "manifest.json"] {
        assert_eq!(
            read(&out.join(f)),
            read(&g.join(f)),
            "OUT/{f} is the current generation's"
        );
    }
    Outputs {
        report: serde_json::from_slice(&read(&g.join("report.json"))).unwrap(),
        sidecar: Sidecar::from_json(&read(&g.join("report-sidecar.json"))).unwrap(),
        manifest: serde_json::from_slice(&read(&g.join("manifest.json"))).unwrap(),
    }
}

fn clips_of<'a>(s: &'a Sidecar, source: &str) -> Vec<&'a ClipSidecar> {
    s.clips.iter().filter(|c| c.source == source).collect()
}

/// Every asset in the report, every served asset's clips in the sidecar
/// (one record per report clip).
fn assert_whole(o: &Outputs, assets: usize) {
    assert_eq!(o.report.assets.len(), assets, "report: every asset");
    assert_eq!(o.manifest.assets.len(), assets, "manifest: every asset");
    for m in &o.manifest.assets {
        let clips = clips_of(&o.sidecar, &m.source);
        assert!(!clips.is_empty(), "sidecar: records for {}", m.source);
        let names: BTreeSet<&str> = clips.iter().map(|c| c.clip.as_str()).collect();
        assert_eq!(
            names.len(),
            clips.len(),
            "{}: one record per clip",
            m.source
        );
    }
}

#[test]
fn a_one_asset_edit_keeps_every_asset_in_the_report_and_sidecar() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fixtures, d);
    let mut s = Server::start(d, &[]);
    s.wait_idle(60);
    let before = outputs(&s);
    assert_whole(&before, 4);
    let clip_total = before.sidecar.clips.len();
    assert_eq!(clip_total as u64, before.report.totals.clips as u64);

    // One asset edited: one cook of that asset, a generation describing all.
    let bvh = d.join(BVH);
    let original = std::fs::read(&bvh).unwrap();
    let (g, cooks, old) = (s.generation(), s.cooks(), s.hash_of(BVH));
    std::fs::write(&bvh, edited_bvh(&original, 1)).unwrap();
    wait_for(20, "a new package for the BVH", || {
        s.hash_of(BVH).filter(|h| Some(h) != old.as_ref())
    });
    s.wait_idle(20);
    assert_eq!(s.cooks(), cooks + 1, "one cook of one asset");
    assert!(s.generation() > g);
    let after = outputs(&s);
    assert_whole(&after, 4);
    assert_eq!(after.sidecar.clips.len(), clip_total);
    for m in &before.manifest.assets {
        if m.source != BVH {
            assert_eq!(
                clips_of(&after.sidecar, &m.source),
                clips_of(&before.sidecar, &m.source),
                "{}: records unchanged",
                m.source
            );
        }
    }
    let good = clips_of(&after.sidecar, BVH)
        .into_iter()
        .cloned()
        .collect::<Vec<_>>();

    // Broken: stale, and its last good records stay beside its last good
    // package; the report has the failing cook.
    std::fs::write(&bvh, &original[..original.len() / 2]).unwrap();
    wait_for(20, "the BVH to be stale", || {
        (s.json(&format!("/assets/{BVH}"))["stale"] == true).then_some(())
    });
    s.wait_idle(20);
    let broken = outputs(&s);
    assert_whole(&broken, 4);
    let failed = broken
        .report
        .assets
        .iter()
        .find(|a| a.source == BVH)
        .unwrap();
    assert_eq!(failed.status, ludus_anim_report::AssetStatus::Failed);
    let kept: Vec<ClipSidecar> = clips_of(&broken.sidecar, BVH)
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(kept, good, "the stale asset's last good records");

    // A restart keeps them too (read back from the generation's sidecar).
    s.terminate(20);
    let s = Server::start(d, &[]);
    s.wait_idle(60);
    let restarted = outputs(&s);
    assert_whole(&restarted, 4);
    let kept: Vec<ClipSidecar> = clips_of(&restarted.sidecar, BVH)
        .into_iter()
        .cloned()
        .collect();
    assert_eq!(kept, good, "after a restart");

    // The dashboard reads the output directory as it reads a cook's.
    let cook = ludus_anim_dashboard::load_cook(&d.join("out")).unwrap();
    assert!(cook.notices.is_empty(), "{:?}", cook.notices);
    assert_eq!(cook.sidecar.map(|c| c.clips.len()), Some(clip_total));
}
