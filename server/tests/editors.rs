//! Issue #43, items 1 and 2: what editors and exporters do while saving
//! never publishes a loss or a temporary asset. Real server, real files,
//! loopback HTTP, every wait bounded.

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

fn setup(extra: &[&str]) -> Option<(tempfile::TempDir, Server, Events)> {
    let fixtures = shared_fixtures()?;
    let tmp = tempfile::tempdir().unwrap();
    project(&fixtures, tmp.path());
    let s = Server::start(tmp.path(), extra);
    s.wait_idle(60);
    let ev = Events::open(&s);
    Some((tmp, s, ev))
}

fn names(s: &Server) -> Vec<String> {
    s.hashes().into_iter().map(|(n, _)| n).collect()
}

/// No generation ever dropped a package, and no event or listing ever
/// named a file matching `temp`.
fn assert_no_loss(s: &Server, ev: &Events, temp: &[&str]) {
    let published: Vec<Value> = ev
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "generation_published")
        .cloned()
        .collect();
    for g in &published {
        assert_eq!(
            g["removed"],
            serde_json::json!([]),
            "a package was dropped: {g}"
        );
        assert_eq!(g["assets"], 4, "{g}");
    }
    let all = ev.seen.lock().unwrap().clone();
    for t in temp {
        let hit = all.iter().find(|e| e.to_string().contains(t));
        assert!(hit.is_none(), "an event named the temp file {t}: {hit:?}");
        assert!(
            !names(s).iter().any(|n| n.contains(t)),
            "{t} listed as an asset"
        );
    }
}

fn project_error(s: &Server) -> Value {
    s.status()["health"]["project_error"].clone()
}

#[test]
fn deleting_the_manifest_for_a_while_then_rewriting_it_loses_nothing() {
    let Some((tmp, s, ev)) = setup(&[]) else {
        return;
    };
    let manifest = tmp.path().join("ludus-anim.toml");
    let bytes = std::fs::read(&manifest).unwrap();
    let (g, before) = (s.generation(), s.hashes());

    std::fs::remove_file(&manifest).unwrap();
    let err = wait_for(10, "the project error", || {
        Some(project_error(&s)).filter(|e| !e.is_null())
    });
    assert_eq!(err["cause"], "manifest_missing", "{err}");
    assert_eq!(s.status()["ok"], false);
    // Well past the 250 ms gap that used to publish an empty generation.
    std::thread::sleep(Duration::from_millis(700));
    s.wait_idle(20);
    assert_eq!(
        s.generation(),
        g,
        "nothing is published while the manifest is gone"
    );
    assert_eq!(s.hashes(), before);
    let m = s.json("/manifest");
    assert_eq!(m["assets"].as_array().unwrap().len(), 4, "{m}");
    assert!(s.logged("project error (manifest_missing)") >= 1);

    std::fs::write(&manifest, &bytes).unwrap();
    wait_for(10, "the project error to clear", || {
        project_error(&s).is_null().then_some(())
    });
    s.wait_idle(20);
    assert_eq!(s.hashes(), before, "the same manifest: the same packages");
    assert_eq!(s.status()["ok"], true);
    assert!(
        ev.find(|e| e["event"] == "health" && !e["health"]["project_error"].is_null())
            .is_some(),
        "the event stream carries the project error"
    );
    assert_no_loss(&s, &ev, &["fixtures/"]);
}

#[test]
fn a_manifest_renamed_away_and_back_and_a_source_saved_by_rename_lose_nothing() {
    let Some((tmp, s, ev)) = setup(&[]) else {
        return;
    };
    let d = tmp.path();
    let manifest = d.join("ludus-anim.toml");
    let before = s.hashes();

    // The manifest: renamed to a backup, a new one written, the backup removed.
    let backup = d.join("ludus-anim.toml~");
    std::fs::rename(&manifest, &backup).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    std::fs::copy(&backup, &manifest).unwrap();
    std::fs::remove_file(&backup).unwrap();
    std::thread::sleep(Duration::from_millis(400));
    s.wait_idle(20);
    assert!(project_error(&s).is_null());
    assert_eq!(s.hashes(), before);

    // A source: renamed away (Vim's backup), the 4913 probe, a pause, then
    // the new bytes written under its name.
    let bvh = d.join(BVH);
    let original = std::fs::read(&bvh).unwrap();
    let old = s.hash_of(BVH);
    let bak = d.join(format!("{BVH}~"));
    std::fs::rename(&bvh, &bak).unwrap();
    std::fs::write(d.join("src/4913"), b"").unwrap();
    std::fs::remove_file(d.join("src/4913")).unwrap();
    let missing = wait_for(10, "the asset marked not applied", || {
        let a = s.json(&format!("/assets/{BVH}"));
        (a["not_applied"]["cause"] == "source_missing").then_some(a)
    });
    assert_eq!(missing["stale"], true, "{missing}");
    assert_eq!(
        missing["package_hash"].as_str(),
        old.as_deref(),
        "its last package is served"
    );
    let pkg = s.get(&format!("/assets/{BVH}/package"));
    assert_eq!(pkg.status, 200, "{}", pkg.text());
    std::thread::sleep(Duration::from_millis(500));
    std::fs::write(&bvh, edited_bvh(&original, 3)).unwrap();
    std::fs::remove_file(&bak).unwrap();
    wait_for(20, "the new package", || {
        s.hash_of(BVH).filter(|h| Some(h) != old.as_ref())
    });
    s.wait_idle(20);
    assert_eq!(s.status()["ok"], true, "{}", s.status());
    // Path forms: a bare "4913" also occurs in hashes and timings.
    assert_no_loss(&s, &ev, &["zombieWalk1.bvh~", "src/4913"]);
}

#[test]
fn exporter_temp_files_dotfiles_excluded_files_and_burst_saves_never_become_assets() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fixtures, d);
    let m = d.join("ludus-anim.toml");
    let text = std::fs::read_to_string(&m).unwrap();
    std::fs::write(
        &m,
        text.replace("[project]\n", "[project]\nexclude = [\"src/wip_*\"]\n"),
    )
    .unwrap();
    // A burst is saves closer than --settle; 150 ms (default 40) keeps the
    // ten saves 30 ms apart one burst on a loaded machine, where a write
    // and a rename can take longer than the default.
    let s = Server::start(d, &["--settle", "150"]);
    s.wait_idle(60);
    let ev = Events::open(&s);
    let g0 = s.generation();
    let bvh = d.join(BVH);
    let original = std::fs::read(&bvh).unwrap();

    // Write-temp-rename, the exporter's way: a temp name the glob matches,
    // left long enough to be seen, then renamed over the source.
    let temp = d.join("src/~export1.bvh");
    std::fs::write(&temp, edited_bvh(&original, 1)).unwrap();
    std::thread::sleep(Duration::from_millis(900));
    std::fs::rename(&temp, &bvh).unwrap();
    // A dotfile temp and an excluded work file, both left in place.
    std::fs::write(d.join("src/.x.bvh"), &original).unwrap();
    std::fs::write(d.join("src/wip_take2.bvh"), &original).unwrap();
    // A new file an exporter deletes again before the settle time.
    let brief = d.join("src/brief.bvh");
    std::fs::write(&brief, &original).unwrap();
    std::thread::sleep(Duration::from_millis(150));
    std::fs::remove_file(&brief).unwrap();
    wait_for(20, "the edit", || (s.generation() > g0).then_some(()));
    std::thread::sleep(Duration::from_millis(1200));
    s.wait_idle(20);
    let g1 = s.generation();

    // Burst: ten exporter saves 30 ms apart.
    for i in 0..10 {
        let t = d.join(format!("src/~export{i}.bvh"));
        std::fs::write(&t, edited_bvh(&original, 10 + i)).unwrap();
        std::fs::rename(&t, &bvh).unwrap();
        std::thread::sleep(Duration::from_millis(30));
    }
    std::thread::sleep(Duration::from_millis(900));
    s.wait_idle(20);
    let bursts = s.generation() - g1;
    assert!(
        (1..=2).contains(&bursts),
        "{bursts} generations for one burst"
    );
    let last = std::fs::read(&bvh).unwrap();
    assert_eq!(last, edited_bvh(&original, 19));
    assert_eq!(names(&s).len(), 4, "{:?}", names(&s));
    assert_no_loss(&s, &ev, &["~export", ".x.bvh", "wip_take2", "brief.bvh"]);

    // A real new file, left alone, becomes an asset after the settle time.
    std::fs::write(d.join("src/new_walk.bvh"), &original).unwrap();
    wait_for(20, "the new asset", || {
        names(&s)
            .iter()
            .any(|n| n == "src/new_walk.bvh")
            .then_some(())
    });
    assert!(Path::new(&d.join("src/.x.bvh")).exists());
}

#[test]
fn a_named_input_that_vanishes_for_a_while_keeps_its_package() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fixtures, d);
    std::fs::remove_file(d.join("ludus-anim.toml")).unwrap();
    let s = Server::start(d, &[BVH, "--out", "out", "--rescan", "1"]);
    s.wait_idle(60);
    let ev = Events::open(&s);
    let old = s.hash_of(BVH);
    assert!(old.is_some());
    let bvh = d.join(BVH);
    let away = d.join("walk.moved");
    std::fs::rename(&bvh, &away).unwrap();
    wait_for(10, "the source marked missing", || {
        let a = s.json(&format!("/assets/{BVH}"));
        (a["not_applied"]["cause"] == "source_missing").then_some(())
    });
    // A rescan while it is gone: the inputs do not resolve, a project
    // error; the package is still served.
    let e = wait_for(10, "the project error", || {
        Some(s.status()["health"]["project_error"].clone()).filter(|e| !e.is_null())
    });
    assert_eq!(e["cause"], "inputs_missing", "{e}");
    assert_eq!(s.hash_of(BVH), old);
    assert_eq!(s.get(&format!("/assets/{BVH}/package")).status, 200);
    std::fs::rename(&away, &bvh).unwrap();
    wait_for(20, "health to recover", || {
        (s.status()["ok"] == true).then_some(())
    });
    assert_eq!(s.hash_of(BVH), old, "the same bytes: the same package");
    let published: Vec<Value> = ev
        .seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| e["event"] == "generation_published")
        .cloned()
        .collect();
    assert!(
        published
            .iter()
            .all(|g| g["removed"] == serde_json::json!([])),
        "{published:?}"
    );
}
