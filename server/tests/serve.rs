//! The asset server as a person uses it: a real process on real files,
//! loopback only, every wait bounded.

mod common;
use common::*;
use std::time::Duration;

fn setup() -> Option<(tempfile::TempDir, Server)> {
    let fixtures = shared_fixtures()?;
    let tmp = tempfile::tempdir().unwrap();
    project(&fixtures, tmp.path());
    let s = Server::start(tmp.path(), &[]);
    s.wait_idle(60);
    Some((tmp, s))
}

/// Wait until `name` is served with a package other than `old`.
fn wait_new_package(s: &Server, name: &str, old: &Option<String>) -> String {
    wait_for(20, &format!("a new package for {name}"), || {
        s.hash_of(name).filter(|h| Some(h) != old.as_ref())
    })
}

/// No cook starts within the debounce period plus a margin.
fn assert_no_cook(s: &Server, cooks: u64, what: &str) {
    std::thread::sleep(Duration::from_millis(900));
    s.wait_idle(20);
    assert_eq!(s.cooks(), cooks, "{what}: no cook expected");
}

#[test]
fn edits_touches_saves_and_breakage() {
    let Some((tmp, s)) = setup() else { return };
    let d = tmp.path();
    let before = s.hashes();
    assert_eq!(before.len(), 4);
    assert!(before.iter().all(|(_, h)| h.is_some()), "{before:?}");
    let g1 = s.generation();
    let bvh = d.join(BVH);
    let original = std::fs::read(&bvh).unwrap();
    let old = s.hash_of(BVH);

    // An edit: a new generation with a new package for that asset only.
    std::fs::write(&bvh, edited_bvh(&original, 1)).unwrap();
    let new = wait_new_package(&s, BVH, &old);
    s.wait_idle(20);
    assert!(s.generation() > g1);
    for (name, h) in s.hashes() {
        if name != BVH {
            let was = before.iter().find(|(n, _)| *n == name).unwrap();
            assert_eq!(was.1, h, "{name} keeps its package");
        }
    }
    let pkg = s.get(&format!("/packages/{new}"));
    assert_eq!(pkg.status, 200);
    assert_eq!(blake3::hash(&pkg.body).to_hex().as_str(), new);

    // A touch (same bytes): no cook.
    let cooks = s.cooks();
    let f = std::fs::File::options().append(true).open(&bvh).unwrap();
    f.set_modified(std::time::SystemTime::now()).unwrap();
    drop(f);
    assert_no_cook(&s, cooks, "touch");
    // The same bytes saved again: no cook either.
    std::fs::write(&bvh, edited_bvh(&original, 1)).unwrap();
    assert_no_cook(&s, cooks, "same bytes");

    // Save by rename: one cook.
    let g = s.generation();
    save_by_rename(&bvh, &edited_bvh(&original, 2));
    wait_for(20, "a generation after a rename save", || {
        (s.generation() > g).then_some(())
    });
    s.wait_idle(20);
    assert_eq!(s.cooks(), cooks + 1, "rename save: one cook");

    // Delete + create: one cook.
    std::fs::remove_file(&bvh).unwrap();
    std::thread::sleep(Duration::from_millis(60));
    std::fs::write(&bvh, edited_bvh(&original, 3)).unwrap();
    wait_for(20, "a generation after delete+create", || {
        (s.generation() > g + 1).then_some(())
    });
    s.wait_idle(20);
    assert_eq!(s.cooks(), cooks + 2, "delete + create: one cook");

    // Three chunks with pauses: one cook, of the whole file.
    let ev = Events::open(&s);
    let whole = edited_bvh(&original, 4);
    let third = whole.len() / 3;
    let mut f = std::fs::File::create(&bvh).unwrap();
    for chunk in [
        &whole[..third],
        &whole[third..2 * third],
        &whole[2 * third..],
    ] {
        std::io::Write::write_all(&mut f, chunk).unwrap();
        f.sync_all().unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    drop(f);
    wait_for(20, "a generation after a chunked write", || {
        (s.generation() > g + 2).then_some(())
    });
    s.wait_idle(20);
    assert_eq!(s.cooks(), cooks + 3, "chunked write: one cook");
    assert_eq!(
        ev.count(|e| e["event"] == "asset_done" && e["status"] == "failed"),
        0,
        "the half-written file was never cooked"
    );

    // Break it: the last good package is still served, stale, with the
    // diagnostic.
    let good = s.hash_of(BVH);
    std::fs::write(&bvh, &whole[..whole.len() / 2]).unwrap();
    let a = wait_for(20, "the asset to be stale", || {
        let a = s.json(&format!("/assets/{BVH}"));
        (a["stale"] == true).then_some(a)
    });
    assert_eq!(a["status"], "failed");
    assert_eq!(a["package_hash"].as_str(), good.as_deref());
    assert!(
        !a["stale_diagnostics"].as_array().unwrap().is_empty(),
        "{a}"
    );
    let pkg = s.get(&format!("/packages/{}", good.as_deref().unwrap()));
    assert_eq!(pkg.status, 200, "the last good package is still served");
    let st = s.status();
    assert_eq!(st["counts"]["stale"], 1, "{st}");

    // Fix it: fresh again.
    std::fs::write(&bvh, edited_bvh(&original, 5)).unwrap();
    let a = wait_for(20, "the asset to be fresh", || {
        let a = s.json(&format!("/assets/{BVH}"));
        (a["stale"] == false && a["status"] == "ok").then_some(a)
    });
    assert_ne!(a["package_hash"].as_str(), good.as_deref());
    assert!(ev.errors.lock().unwrap().is_empty());
}

#[test]
fn a_companion_edit_recooks_its_gltf() {
    let Some((tmp, s)) = setup() else { return };
    let bin = tmp.path().join("src/interp/interpolation_test.bin");
    let old = s.hash_of(GLTF_BIN);
    let others: Vec<_> = s
        .hashes()
        .into_iter()
        .filter(|(n, _)| n != GLTF_BIN)
        .collect();
    let mut bytes = std::fs::read(&bin).unwrap();
    // The first float of the buffer (an input time: 0.0 -> 0.0 still, flip a
    // low mantissa bit of a later key value instead).
    let last = bytes.len() - 2;
    bytes[last] ^= 0x01;
    std::fs::write(&bin, &bytes).unwrap();
    wait_new_package(&s, GLTF_BIN, &old);
    s.wait_idle(20);
    let after: Vec<_> = s
        .hashes()
        .into_iter()
        .filter(|(n, _)| n != GLTF_BIN)
        .collect();
    assert_eq!(others, after, "only the glTF reading the .bin re-cooks");
}

#[test]
fn a_profile_change_recooks_only_its_assets_from_encode_on() {
    let Some((tmp, s)) = setup() else { return };
    let ev = Events::open(&s);
    let from = ev.len();
    let others: Vec<_> = s.hashes().into_iter().filter(|(n, _)| n != BVH).collect();
    let p = tmp.path().join("custom.toml");
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains("error_threshold_m = 0.0001"));
    std::fs::write(
        &p,
        text.replacen(
            "error_threshold_m = 0.0001",
            "error_threshold_m = 0.0003",
            1,
        ),
    )
    .unwrap();
    wait_for(20, "generation_published", || {
        ev.find(|e| {
            e["event"] == "generation_published"
                && e["changed"].as_array().is_some_and(|c| !c.is_empty())
        })
    });
    let events = ev.since(from);
    let started: Vec<&str> = events
        .iter()
        .filter(|e| e["event"] == "asset_start")
        .filter_map(|e| e["source"].as_str())
        .collect();
    assert_eq!(started, [BVH], "only the asset on custom.toml re-cooks");
    let stage = |name: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["event"] == "stage" && e["stage"] == name)
            .map(|e| e["cache"].as_str().unwrap().to_string())
            .collect()
    };
    for early in ["import", "normalize", "resample", "prepare"] {
        let s = stage(early);
        assert!(s.iter().all(|c| c == "hit"), "{early}: {s:?}");
    }
    for late in ["encode", "verify", "package"] {
        let s = stage(late);
        assert!(
            !s.is_empty() && s.iter().all(|c| c == "miss"),
            "{late}: {s:?}"
        );
    }
    s.wait_idle(20);
    let after: Vec<_> = s.hashes().into_iter().filter(|(n, _)| n != BVH).collect();
    assert_eq!(others, after);
}

#[test]
fn a_manifest_change_recooks_the_assets_whose_settings_changed() {
    let Some((tmp, s)) = setup() else { return };
    let ev = Events::open(&s);
    let from = ev.len();
    let m = tmp.path().join("ludus-anim.toml");
    let text = std::fs::read_to_string(&m).unwrap();
    std::fs::write(
        &m,
        text.replace("profile = \"custom.toml\"", "profile = \"crowd\""),
    )
    .unwrap();
    wait_for(20, "generation_published", || {
        ev.since(from)
            .into_iter()
            .find(|e| e["event"] == "generation_published")
    });
    let started: Vec<String> = ev
        .since(from)
        .iter()
        .filter(|e| e["event"] == "asset_start")
        .filter_map(|e| e["source"].as_str().map(String::from))
        .collect();
    assert_eq!(started, [BVH]);
    // A new source matching a glob joins the project.
    std::fs::copy(tmp.path().join(SKIN), tmp.path().join("src/second.gltf")).unwrap();
    wait_for(20, "the new asset", || {
        s.hash_of("src/second.gltf").map(|_| ())
    });
}

#[test]
fn poll_mode_and_fallback_when_watches_cannot_be_registered() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    for (flags, mode) in [
        (&["--poll", "100"][..], "poll"),
        (&["--debug-refuse-watches"][..], "poll-fallback"),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        project(&fixtures, tmp.path());
        let s = Server::start(tmp.path(), flags);
        s.wait_idle(60);
        assert_eq!(s.status()["watch"], mode);
        let old = s.hash_of(BVH);
        let bvh = tmp.path().join(BVH);
        let original = std::fs::read(&bvh).unwrap();
        std::fs::write(&bvh, edited_bvh(&original, 1)).unwrap();
        wait_new_package(&s, BVH, &old);
    }
}

#[test]
fn sigterm_shuts_down_cleanly() {
    let Some((tmp, mut s)) = setup() else { return };
    assert!(tmp.path().join("out/server.pid").is_file());
    let ev = Events::open(&s);
    let status = s.terminate(15).expect("exits within 15 s of SIGTERM");
    assert!(status.success(), "{status:?}");
    assert!(!tmp.path().join("out/server.pid").exists());
    drop(ev);
}
