//! Crash recovery by construction: `kill -9` during a cook leaves the
//! published generation intact and no partial file among the outputs; a
//! restart serves that generation at once, and a restart with nothing
//! changed keeps serving it.

mod common;
use common::*;
use std::path::Path;

/// Every file under `out` outside `.tmp/` is complete: packages hash to
/// their names and load, JSON files parse, `current` names a complete generation.
fn assert_no_partial_files(out: &Path) {
    let current = std::fs::read_to_string(out.join("current")).unwrap();
    let g = out.join("generations").join(current.trim());
    for f in ["manifest.json", "report.json", "stale.json"] {
        let text = std::fs::read_to_string(g.join(f)).unwrap();
        serde_json::from_str::<serde_json::Value>(&text).unwrap_or_else(|e| panic!("{f}: {e}"));
    }
    for e in std::fs::read_dir(out.join("generations"))
        .unwrap()
        .flatten()
    {
        let n = e.file_name().to_string_lossy().to_string();
        assert!(n.parse::<u64>().is_ok() || n.starts_with(".tmp-"), "{n}");
    }
    for e in std::fs::read_dir(out.join("packages")).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let bytes = std::fs::read(e.path()).unwrap();
        let hash = blake3::hash(&bytes).to_hex().to_string();
        let short = name
            .rsplit('-')
            .next()
            .unwrap()
            .trim_end_matches(".ludanim");
        assert!(hash.starts_with(short), "{name} is complete");
        let loaded = ludus_anim_runtime::Package::load(&bytes);
        assert!(loaded.is_ok(), "{name} loads");
    }
    let manifest: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(g.join("manifest.json")).unwrap()).unwrap();
    for a in manifest["assets"].as_array().unwrap() {
        assert!(out.join(a["package"].as_str().unwrap()).is_file(), "{a}");
    }
}

#[test]
fn kill_9_during_a_cook_then_restart() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fixtures, d);
    let out = d.join("out");
    // Slow cooks (a test hook) so the kill lands inside one.
    let slow = ["--debug-slow-asset-ms", "400"];
    let mut s = Server::start(d, &slow);
    s.wait_idle(60);
    let g = s.generation();
    let served = s.hashes();
    let ev = Events::open(&s);
    let bvh = d.join(BVH);
    let original = std::fs::read(&bvh).unwrap();
    std::fs::write(&bvh, edited_bvh(&original, 1)).unwrap();
    wait_for(20, "the cook to start", || {
        ev.find(|e| e["event"] == "asset_start")
    });
    s.kill9();
    assert_no_partial_files(&out);
    assert_eq!(
        std::fs::read_to_string(out.join("current")).unwrap().trim(),
        g.to_string()
    );

    // Restart: the same generation is served before any cook finishes.
    let s = Server::start(d, &slow);
    assert_eq!(s.generation(), g, "served from disk at once");
    assert_eq!(s.hashes(), served);
    // The startup cook picks up the edit the killed cook did not publish.
    s.wait_idle(60);
    let g2 = s.generation();
    assert_eq!(g2, g + 1);
    let after = s.hashes();
    for ((n, a), (_, b)) in served.iter().zip(&after) {
        assert_eq!(a == b, n != BVH, "{n}");
    }
    drop(s);

    // kill -9 while idle, restart with nothing changed: same generation.
    let mut s = Server::start(d, &[]);
    s.wait_idle(60);
    assert_eq!(s.generation(), g2, "nothing changed: nothing published");
    assert_eq!(s.hashes(), after);
    s.kill9();
    assert_no_partial_files(&out);
}
