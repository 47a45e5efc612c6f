//! Against a real server: a private nginx with WebDAV PUT on 127.0.0.1
//! (see `common::Nginx`). Round trips through two machines' worth of local
//! stores, an entry corrupted on the server's disk, read-only mode, and
//! four concurrent clients.

mod common;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{key, value, Nginx};
use ludus_anim_cache::{check_entry, Backend, Store};
use ludus_anim_remote_cache::{Lookup, Mode, RemoteCache, RemoteConfig, Tiered};

fn remote(url: &str, mode: Mode) -> RemoteCache {
    let cfg = RemoteConfig::parse(url)
        .expect("url")
        .with_mode(mode)
        .with_timeouts(Duration::from_secs(2), Duration::from_secs(5));
    RemoteCache::open(cfg).expect("open remote")
}

/// A machine: its own local store, the shared server.
fn machine(dir: &std::path::Path, url: &str, mode: Mode) -> Tiered {
    Tiered::new(Store::open(dir).expect("store"), Some(remote(url, mode)))
}

const FLUSH: Duration = Duration::from_secs(20);

#[test]
fn round_trip_between_two_machines() {
    let Some(nginx) = Nginx::start() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let ci = machine(&tmp.path().join("ci"), &nginx.url(), Mode::ReadWrite);
    let sizes = [0usize, 1, 88, 10_000, 1 << 20];
    for (i, &len) in sizes.iter().enumerate() {
        let i = i as u64;
        assert_eq!(ci.lookup(&key(i), "encode"), Lookup::Miss);
        ci.put(&key(i), &value(i, len), "encode").expect("put");
    }
    assert_eq!(ci.flush(FLUSH).map(|f| f.pending), Some(0));
    let up = ci.remote_stats().expect("remote").tag("encode");
    assert_eq!((up.misses, up.uploads), (5, 5), "{up:?}");

    // The server holds exactly the framed entries.
    for (i, &len) in sizes.iter().enumerate() {
        let i = i as u64;
        let object = std::fs::read(nginx.object_path(&key(i))).expect("object on disk");
        assert_eq!(check_entry(&key(i), &object), Ok(&value(i, len)[..]));
        assert!(ci
            .remote()
            .expect("remote")
            .contains(&key(i))
            .expect("head"));
    }
    assert!(!ci
        .remote()
        .expect("remote")
        .contains(&key(99))
        .expect("head"));

    let artist = machine(&tmp.path().join("artist"), &nginx.url(), Mode::Read);
    for (i, &len) in sizes.iter().enumerate() {
        let i = i as u64;
        assert_eq!(
            artist.lookup(&key(i), "encode"),
            Lookup::Remote(value(i, len))
        );
        assert_eq!(
            artist.lookup(&key(i), "encode"),
            Lookup::Local(value(i, len))
        );
    }
    let down = artist.remote_stats().expect("remote").tag("encode");
    assert_eq!(down.hits, 5, "{down:?}");
    assert_eq!(down.bytes_down, up.bytes_up, "same bytes down as up");
    assert!(ci.take_notices().is_empty() && artist.take_notices().is_empty());
}

#[test]
fn entry_corrupted_on_the_server_is_a_miss_then_heals() {
    let Some(nginx) = Nginx::start() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let v = value(7, 10_000);
    let writer = machine(&tmp.path().join("w"), &nginx.url(), Mode::ReadWrite);
    writer.put(&key(7), &v, "verify").expect("put");
    writer.flush(FLUSH);

    // Bit rot on the server's disk.
    let path = nginx.object_path(&key(7));
    let mut object = std::fs::read(&path).expect("object");
    object[5000] ^= 0x40;
    std::fs::write(&path, &object).expect("corrupt it");

    let reader = machine(&tmp.path().join("r1"), &nginx.url(), Mode::ReadWrite);
    assert_eq!(reader.lookup(&key(7), "verify"), Lookup::Miss);
    let notices = reader.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("corrupt") && notices[0].contains("checksum"),
        "{notices:?}"
    );
    assert_eq!(
        reader.remote_stats().expect("remote").tag("verify").corrupt,
        1
    );
    assert_eq!(
        reader.local().get(&key(7)).expect("local"),
        None,
        "never stored locally"
    );

    // The reader recomputes and its upload replaces the bad object.
    reader.put(&key(7), &v, "verify").expect("put");
    assert_eq!(reader.flush(FLUSH).map(|f| f.pending), Some(0));
    let fresh = machine(&tmp.path().join("r2"), &nginx.url(), Mode::Read);
    assert_eq!(fresh.lookup(&key(7), "verify"), Lookup::Remote(v));
}

#[test]
fn read_mode_never_puts_to_nginx() {
    let Some(nginx) = Nginx::start() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    let artist = machine(tmp.path(), &nginx.url(), Mode::Read);
    for i in 0..10 {
        assert_eq!(artist.lookup(&key(i), "import"), Lookup::Miss);
        artist.put(&key(i), &value(i, 100), "import").expect("put");
    }
    artist.flush(FLUSH);
    assert!(!nginx.ac_dir().exists(), "nothing stored on the server");
    let lookup = "\"GET /ludus/ac/";
    let log = nginx.access_log_with(lookup, 10);
    assert_eq!(
        log.lines().filter(|l| l.contains(lookup)).count(),
        10,
        "{log}"
    );
    assert!(!log.contains("\"PUT "), "{log}");
    // Local hits need no server at all.
    assert_eq!(
        artist.lookup(&key(3), "import"),
        Lookup::Local(value(3, 100))
    );
}

/// Four clients (separate connection pools, separate local stores, as on
/// four machines) cook overlapping keys at once: every lookup is a miss
/// or the exact value, and afterwards the server holds every entry.
#[test]
fn four_concurrent_clients() {
    let Some(nginx) = Nginx::start() else { return };
    let tmp = tempfile::tempdir().expect("tempdir");
    const ITEMS: u64 = 40;
    let len = |i: u64| (i as usize * 7919) % 60_000 + 1;
    let url = Arc::new(nginx.url());
    let start = Instant::now();
    let clients: Vec<_> = (0..4u64)
        .map(|c| {
            let dir = tmp.path().join(format!("client{c}"));
            let url = url.clone();
            thread::spawn(move || {
                let m = machine(&dir, &url, Mode::ReadWrite);
                let (mut remote_hits, mut computed) = (0, 0);
                for round in 0..2 {
                    for j in 0..ITEMS {
                        let i = (j + c * 11 + round * 5) % ITEMS;
                        match m.lookup(&key(i), "prepare") {
                            Lookup::Local(v) => assert_eq!(v, value(i, len(i)), "item {i}"),
                            Lookup::Remote(v) => {
                                assert_eq!(v, value(i, len(i)), "item {i}");
                                remote_hits += 1;
                            }
                            Lookup::Miss => {
                                m.put(&key(i), &value(i, len(i)), "prepare").expect("put");
                                computed += 1;
                            }
                        }
                    }
                }
                assert_eq!(m.flush(FLUSH).map(|f| f.pending), Some(0));
                assert!(m.take_notices().is_empty(), "client {c}");
                (remote_hits, computed)
            })
        })
        .collect();
    let results: Vec<(u64, u64)> = clients
        .into_iter()
        .map(|c| c.join().expect("client"))
        .collect();
    for (hits, computed) in &results {
        assert_eq!(
            hits + computed,
            ITEMS,
            "each item fetched or computed once per client"
        );
    }
    let check = machine(&tmp.path().join("check"), &url, Mode::Read);
    for i in 0..ITEMS {
        assert_eq!(
            check.lookup(&key(i), "prepare"),
            Lookup::Remote(value(i, len(i)))
        );
    }
    eprintln!(
        "four clients: (remote hits, computed) {results:?} in {:?}",
        start.elapsed()
    );
}
