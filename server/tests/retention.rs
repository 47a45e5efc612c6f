//! Issue #43, item 4 (retention): client leases on a generation, and
//! retention by age (`--keep-within`) and size (`--keep-max-mb`) that never
//! removes the current, a pinned or a leased generation. Real server,
//! loopback HTTP, every wait bounded.

mod common;
use common::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;

fn setup(extra: &[&str]) -> Option<(tempfile::TempDir, Server)> {
    let fixtures = shared_fixtures()?;
    let tmp = tempfile::tempdir().unwrap();
    project(&fixtures, tmp.path());
    let s = Server::start(tmp.path(), extra);
    s.wait_idle(60);
    Some((tmp, s))
}

/// Edit the BVH source `n` times (salted by `from`), one generation each.
fn edits(s: &Server, dir: &Path, from: u32, n: u32) {
    let bvh = dir.join(BVH);
    let original = std::fs::read(&bvh).unwrap();
    for i in 0..n {
        let g = s.generation();
        std::fs::write(&bvh, edited_bvh(&original, from + i)).unwrap();
        wait_for(20, "a new generation", || {
            (s.generation() > g).then_some(())
        });
        s.wait_idle(20);
    }
}

/// The generations on disk, as `GET /generations` lists them.
fn listed(s: &Server) -> Vec<Value> {
    s.json("/generations")["generations"]
        .as_array()
        .unwrap()
        .clone()
}

fn numbers(s: &Server) -> BTreeSet<u64> {
    listed(s)
        .iter()
        .map(|g| g["generation"].as_u64().unwrap())
        .collect()
}

fn scripted(s: &Server, method: &str, path: &str) -> Resp {
    s.send(method, path, &[("X-Ludus-Anim", "1")], b"")
}

#[test]
fn a_lease_keeps_a_generation_until_it_is_released_or_expires() {
    let Some((tmp, s)) = setup(&["--keep", "2"]) else {
        return;
    };
    let g = s.generation();
    let hash = s.hash_of(BVH).unwrap();

    // Refused: no script header, a ttl out of range, an unknown generation.
    let r = s.send("POST", &format!("/generations/{g}/lease"), &[], b"");
    assert_eq!(r.status, 403, "{}", r.text());
    let r = scripted(&s, "POST", &format!("/generations/{g}/lease?ttl=0"));
    assert_eq!(r.status, 400, "{}", r.text());
    let r = scripted(&s, "POST", "/generations/999/lease");
    assert_eq!(r.status, 404, "{}", r.text());
    assert_eq!(r.json()["error"], "unknown_generation");

    // Two leases; one is released at once.
    let r = scripted(&s, "POST", &format!("/generations/{g}/lease?ttl=2"));
    assert_eq!(r.status, 201, "{}", r.text());
    let lease = r.json();
    let id = lease["lease"].as_str().unwrap().to_string();
    assert_eq!(lease["generation"], g);
    assert_eq!(lease["ttl_s"], 2);
    let other = scripted(&s, "POST", &format!("/generations/{g}/lease?ttl=60")).json();
    let other_id = other["lease"].as_str().unwrap();
    assert_ne!(other_id, id);
    let gone = format!("/generations/{g}/lease/{other_id}");
    assert_eq!(scripted(&s, "DELETE", &gone).status, 204);
    assert_eq!(scripted(&s, "DELETE", &gone).status, 404);
    assert_eq!(
        scripted(&s, "DELETE", &format!("/generations/{g}/lease/..%2Fpinned")).status,
        404
    );

    // Past --keep 2: the leased generation and its package stay.
    edits(&s, tmp.path(), 1, 3);
    let entry = listed(&s)
        .into_iter()
        .find(|e| e["generation"] == g)
        .expect("the leased generation is kept");
    assert!(
        entry["leased_until_unix_ms"].as_u64().unwrap()
            >= lease["expires_unix_ms"].as_u64().unwrap()
    );
    assert!(
        !numbers(&s).contains(&(g + 1)),
        "unleased ones beyond --keep go"
    );
    assert_eq!(s.get(&format!("/packages/{hash}")).status, 200);

    // Renewed, then let expire: the next publication collects it.
    let r = scripted(&s, "POST", &format!("/generations/{g}/lease/{id}?ttl=1"));
    assert_eq!(r.status, 200, "{}", r.text());
    std::thread::sleep(std::time::Duration::from_millis(1300));
    let r = scripted(&s, "POST", &format!("/generations/{g}/lease/{id}?ttl=1"));
    assert_eq!(r.status, 404, "an expired lease cannot be renewed");
    assert_eq!(r.json()["error"], "unknown_lease");
    edits(&s, tmp.path(), 10, 1);
    assert!(!numbers(&s).contains(&g), "expired: collected");
    assert_eq!(s.get(&format!("/packages/{hash}")).status, 404);
}

#[test]
fn age_keeps_recent_generations_and_size_trims_the_oldest_but_never_held_ones() {
    let Some((tmp, s)) = setup(&["--keep", "2", "--keep-within", "3600"]) else {
        return;
    };
    let first = s.generation();
    let pinned_hash = s.hash_of(BVH).unwrap();
    assert_eq!(
        scripted(&s, "POST", &format!("/generations/{first}/pin")).status,
        200
    );
    edits(&s, tmp.path(), 1, 4);
    let all = numbers(&s);
    let current = s.generation();
    assert_eq!(
        all,
        (first..=current).collect::<BTreeSet<u64>>(),
        "superseded within the hour: all kept"
    );

    // Restarted with a 1 MB budget and no age rule: the oldest unheld
    // generations go until the rest fit; the pinned and current stay.
    drop(s);
    let s = Server::start(tmp.path(), &["--keep", "8", "--keep-max-mb", "1"]);
    s.wait_idle(60);
    let current = s.generation();
    let kept = numbers(&s);
    assert!(kept.contains(&first) && kept.contains(&current), "{kept:?}");
    let unheld: Vec<u64> = kept.iter().copied().filter(|n| *n != first).collect();
    let dropped: Vec<u64> = all.iter().copied().filter(|n| !kept.contains(n)).collect();
    assert!(
        dropped.iter().all(|d| unheld.iter().all(|k| d < k)),
        "the oldest go first: kept {kept:?}, dropped {dropped:?}"
    );
    let out = tmp.path().join("out");
    let budget = 1u64 << 20;
    let trimmed = unheld.len() == 1;
    assert!(
        trimmed || disk_of(&out, &unheld) <= budget,
        "kept {kept:?} exceed the budget"
    );
    assert!(
        !dropped.is_empty(),
        "a 1 MB budget dropped nothing: {kept:?}"
    );
    assert_eq!(s.get(&format!("/packages/{pinned_hash}")).status, 200);
}

/// Bytes of the generations `numbers` under `out`: their files and the
/// packages they name, each package once.
fn disk_of(out: &Path, numbers: &[u64]) -> u64 {
    let mut packages = BTreeSet::new();
    let mut total = 0;
    for n in numbers {
        let dir = out.join("generations").join(n.to_string());
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            total += e.metadata().unwrap().len();
        }
        let m: Value =
            serde_json::from_slice(&std::fs::read(dir.join("manifest.json")).unwrap()).unwrap();
        for a in m["assets"].as_array().unwrap() {
            packages.insert(a["package"].as_str().unwrap().to_string());
        }
    }
    total
        + packages
            .iter()
            .map(|p| std::fs::metadata(out.join(p)).unwrap().len())
            .sum::<u64>()
}
