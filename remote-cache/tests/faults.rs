//! Every remote failure is a miss with a notice, in bounded time, never a
//! wrong value: a server that is not running, one answering 500, truncated
//! and wrong bodies, one that accepts and never answers, refused
//! credentials and refused uploads. Servers are scripted fakes on
//! 127.0.0.1 (see `common`).

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{free_port, key, value, FakeServer, Reply};
use ludus_anim_cache::{encode_entry, Backend, Store};
use ludus_anim_remote_cache::{
    AuthSpec, CredentialSource, Lookup, Mode, RemoteCache, RemoteConfig, RemoteError, Scheme,
    Tiered, Upload, DEFAULT_LOOKUP_WAIT,
};

const SHORT: Duration = Duration::from_millis(300);

fn config(url: &str, mode: Mode) -> RemoteConfig {
    RemoteConfig::parse(url)
        .expect("url")
        .with_mode(mode)
        .with_timeouts(SHORT, SHORT)
}

fn remote(url: &str, mode: Mode) -> RemoteCache {
    RemoteCache::open(config(url, mode)).expect("open remote")
}

fn tiered(dir: &std::path::Path, remote: RemoteCache) -> Tiered {
    Tiered::new(Store::open(dir).expect("store"), Some(remote))
}

fn joined(notices: &[String]) -> String {
    notices.join("\n")
}

#[test]
fn server_not_running_costs_one_failure_then_nothing() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let url = format!("http://127.0.0.1:{}/cache", free_port());
    let cache = tiered(tmp.path(), remote(&url, Mode::ReadWrite));
    let start = Instant::now();
    for i in 0..20 {
        assert_eq!(cache.lookup(&key(i), "import"), Lookup::Miss);
        cache.put(&key(i), &value(i, 100), "import").expect("put");
    }
    let flush = cache.flush(Duration::from_secs(2)).expect("remote");
    assert_eq!(flush.pending, 0);
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );

    let stats = cache.remote_stats().expect("remote").tag("import");
    assert!(cache.remote().expect("remote").is_disabled());
    assert_eq!(stats.errors, 1, "{stats:?}");
    assert_eq!(stats.skipped, 19, "{stats:?}");
    assert_eq!(stats.uploads + stats.upload_errors, 0, "{stats:?}");
    assert_eq!(stats.skipped_uploads, 20, "{stats:?}");
    let notices = cache.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("unreachable") && notices[0].contains("disabled"),
        "{notices:?}"
    );
    // The local tier still works.
    assert_eq!(
        cache.lookup(&key(3), "import"),
        Lookup::Local(value(3, 100))
    );
}

#[test]
fn server_error_is_a_miss_with_a_notice() {
    let server = FakeServer::start(|_| Reply::status(500));
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tiered(tmp.path(), remote(&server.url(), Mode::ReadWrite));
    for i in 0..5 {
        assert_eq!(cache.lookup(&key(i), "encode"), Lookup::Miss);
    }
    cache.put(&key(9), b"v", "encode").expect("put");
    assert_eq!(
        cache.flush(Duration::from_secs(5)).map(|f| f.pending),
        Some(0)
    );

    let stats = cache.remote_stats().expect("remote").tag("encode");
    assert_eq!((stats.errors, stats.upload_errors), (5, 1), "{stats:?}");
    assert!(
        !cache.remote().expect("remote").is_disabled(),
        "a live server stays in use"
    );
    let notices = cache.take_notices();
    assert_eq!(notices.len(), 6, "{notices:?}");
    assert!(
        notices.iter().all(|n| n.contains("HTTP 500")),
        "{notices:?}"
    );
    assert_eq!(
        cache.lookup(&key(9), "encode"),
        Lookup::Local(b"v".to_vec())
    );
}

#[test]
fn truncated_and_wrong_bodies_are_misses_with_notices() {
    let entry = encode_entry(&key(1), &value(1, 4000));
    let other_key_entry = encode_entry(&key(2), &value(1, 4000));
    let mut flipped = entry.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let replies = [
        ("truncated with a length", Reply::truncated(&entry, 2000)),
        (
            "truncated without a length",
            Reply::close_delimited(&entry[..entry.len() - 1]),
        ),
        ("truncated inside the header", Reply::ok(&entry[..40])),
        ("a flipped payload byte", Reply::ok(&flipped)),
        ("another key's entry", Reply::ok(&other_key_entry)),
        (
            "not an entry at all",
            Reply::ok(b"<html>proxy login</html>"),
        ),
    ];
    for (what, reply) in replies {
        let server = FakeServer::start(move |_| reply.clone());
        let tmp = tempfile::tempdir().expect("tempdir");
        let cache = tiered(tmp.path(), remote(&server.url(), Mode::Read));
        let start = Instant::now();
        assert_eq!(cache.lookup(&key(1), "verify"), Lookup::Miss, "{what}");
        assert!(start.elapsed() < Duration::from_secs(2), "{what}");
        let stats = cache.remote_stats().expect("remote").tag("verify");
        assert_eq!(stats.hits, 0, "{what}");
        assert_eq!(stats.corrupt + stats.errors, 1, "{what}: {stats:?}");
        let notices = cache.take_notices();
        assert_eq!(notices.len(), 1, "{what}: {notices:?}");
        assert_eq!(
            cache.local().get(&key(1)).expect("local"),
            None,
            "{what}: not stored"
        );
    }
}

#[test]
fn intact_entry_from_a_fake_server_is_a_hit() {
    let entry = encode_entry(&key(5), &value(5, 777));
    let server = FakeServer::start(move |_| Reply::ok(&entry));
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tiered(tmp.path(), remote(&server.url(), Mode::Read));
    assert_eq!(
        cache.lookup(&key(5), "import"),
        Lookup::Remote(value(5, 777))
    );
    assert_eq!(
        cache.lookup(&key(5), "import"),
        Lookup::Local(value(5, 777))
    );
    let path = &server.requests()[0].path;
    assert_eq!(path, &format!("/cache/ac/{}", key(5).to_hex()));
}

#[test]
fn oversized_entry_is_refused() {
    let entry = encode_entry(&key(1), &value(1, 5000));
    let server = FakeServer::start(move |_| Reply::close_delimited(&entry));
    let mut cfg = config(&server.url(), Mode::Read);
    cfg.max_entry_bytes = 1000;
    let cache = RemoteCache::open(cfg).expect("open");
    let err = cache.fetch(&key(1), "t").expect_err("too large");
    assert!(
        matches!(err, RemoteError::TooLarge { limit: 1000, .. }),
        "{err}"
    );
    assert_eq!(cache.stats().tag("t").corrupt, 1);
}

#[test]
fn server_that_never_answers_costs_one_timeout_per_process() {
    let start = Instant::now();
    let server = FakeServer::start(|_| Reply::Hang);
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = Arc::new(tiered(tmp.path(), remote(&server.url(), Mode::ReadWrite)));
    // Four cook threads at once, ten entries each, lookups and puts.
    let workers: Vec<_> = (0..4u64)
        .map(|t| {
            let cache = cache.clone();
            thread::spawn(move || {
                for i in 0..10 {
                    let k = key(t * 100 + i);
                    assert_eq!(cache.lookup(&k, "resample"), Lookup::Miss);
                    cache.put(&k, &value(i, 64), "resample").expect("put");
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker");
    }
    let flush = cache.flush(Duration::from_secs(2)).expect("remote");
    assert_eq!(flush.pending, 0, "uploads are skipped once disabled");
    let elapsed = start.elapsed();
    assert!(elapsed < Duration::from_secs(5), "bounded: {elapsed:?}");

    let stats = cache.remote_stats().expect("remote").tag("resample");
    assert!(
        stats.errors >= 1 && stats.errors <= 4,
        "one timeout per waiting thread: {stats:?}"
    );
    assert_eq!(stats.errors + stats.skipped, 40, "{stats:?}");
    let notices = cache.take_notices();
    assert_eq!(notices.len(), 1, "one warning: {notices:?}");
    assert!(
        notices[0].contains("timed out") && notices[0].contains("disabled"),
        "{notices:?}"
    );
}

#[test]
fn read_mode_never_puts() {
    let server = FakeServer::start(|_| Reply::status(404));
    let tmp = tempfile::tempdir().expect("tempdir");
    let remote = remote(&server.url(), Mode::Read);
    assert_eq!(remote.upload(&key(1), b"x", "t"), Upload::ReadOnly);
    let cache = tiered(tmp.path(), remote);
    for i in 0..5 {
        assert_eq!(cache.lookup(&key(i), "package"), Lookup::Miss);
        cache.put(&key(i), b"value", "package").expect("put");
    }
    assert_eq!(
        cache.flush(Duration::from_secs(1)).map(|f| f.pending),
        Some(0)
    );
    let methods: Vec<String> = server.requests().into_iter().map(|r| r.method).collect();
    assert_eq!(methods, vec!["GET"; 5]);
    assert_eq!(
        cache.remote_stats().expect("remote").tag("package").misses,
        5
    );
}

/// A server that answers 404 to the right credentials and 401 otherwise.
fn auth_server(expected: &'static str) -> (FakeServer, Arc<AtomicUsize>) {
    let refused = Arc::new(AtomicUsize::new(0));
    let counter = refused.clone();
    let server = FakeServer::start(move |req| {
        if req.header("authorization") == Some(expected) {
            Reply::status(404)
        } else {
            counter.fetch_add(1, Ordering::SeqCst);
            Reply::status(401)
        }
    });
    (server, refused)
}

#[test]
fn credentials_are_sent_and_never_printed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let token_file = tmp.path().join("token");
    std::fs::write(&token_file, "tok-SECRET-123\n").expect("write");
    let (server, refused) = auth_server("Bearer tok-SECRET-123");
    let bearer = AuthSpec {
        scheme: Scheme::Bearer,
        source: CredentialSource::File(token_file.clone()),
    };
    let cfg = config(&server.url(), Mode::ReadWrite).with_auth(Some(bearer));
    let shown_config = format!("{cfg:?}");
    let cache = tiered(
        &tmp.path().join("local"),
        RemoteCache::open(cfg).expect("open"),
    );
    assert_eq!(cache.lookup(&key(1), "import"), Lookup::Miss);
    assert_eq!(refused.load(Ordering::SeqCst), 0, "the token was sent");
    assert_eq!(
        cache.remote_stats().expect("remote").tag("import").misses,
        1
    );

    let shown = format!(
        "{shown_config} {cache:?} {:?} {:?}",
        cache.remote(),
        cache.take_notices()
    );
    assert!(!shown.contains("tok-SECRET-123"), "{shown}");
    assert!(shown.contains("Bearer"), "the scheme may show: {shown}");

    // Basic auth from an environment variable.
    std::env::set_var("LUDUS_REMOTE_TEST_BASIC", "artist:pa55word");
    let (server, refused) = auth_server("Basic YXJ0aXN0OnBhNTV3b3Jk");
    let basic = AuthSpec::parse("basic-env:LUDUS_REMOTE_TEST_BASIC").expect("spec");
    let remote =
        RemoteCache::open(config(&server.url(), Mode::Read).with_auth(Some(basic))).expect("open");
    assert_eq!(remote.fetch(&key(1), "t").expect("fetch"), None);
    assert_eq!(refused.load(Ordering::SeqCst), 0, "basic credentials sent");
    assert!(!format!("{remote:?}").contains("pa55word"));
}

#[test]
fn refused_credentials_disable_the_remote_once_without_printing_them() {
    let (server, refused) = auth_server("Bearer right");
    std::env::set_var("LUDUS_REMOTE_TEST_WRONG_TOKEN", "wrong-token-value");
    let spec = AuthSpec::parse("bearer-env:LUDUS_REMOTE_TEST_WRONG_TOKEN").expect("spec");
    let remote =
        RemoteCache::open(config(&server.url(), Mode::Read).with_auth(Some(spec))).expect("open");
    for i in 0..5 {
        assert!(remote.fetch(&key(i), "t").is_err() || remote.is_disabled());
    }
    assert_eq!(
        refused.load(Ordering::SeqCst),
        1,
        "one request, then disabled"
    );
    let notices = remote.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("401"), "{notices:?}");
    assert!(!joined(&notices).contains("wrong-token-value"));
}

#[test]
fn server_refusing_uploads_stops_uploads_but_keeps_downloads() {
    let server = FakeServer::start(|req| match req.method.as_str() {
        "PUT" => Reply::status(405),
        _ => Reply::status(404),
    });
    let tmp = tempfile::tempdir().expect("tempdir");
    let cache = tiered(tmp.path(), remote(&server.url(), Mode::ReadWrite));
    for i in 0..5 {
        assert_eq!(cache.lookup(&key(i), "t"), Lookup::Miss);
        cache.put(&key(i), b"v", "t").expect("put");
        // One at a time, so the first refusal is seen before the next put.
        cache.flush(Duration::from_secs(5));
    }
    let puts = server
        .requests()
        .iter()
        .filter(|r| r.method == "PUT")
        .count();
    assert_eq!(puts, 1, "uploads stop after the first refusal");
    let stats = cache.remote_stats().expect("remote").tag("t");
    assert_eq!(
        (stats.misses, stats.upload_errors, stats.skipped_uploads),
        (5, 1, 4)
    );
    assert!(!cache.remote().expect("remote").is_disabled());
    let notices = cache.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(notices[0].contains("405") && notices[0].contains("refuses uploads"));
}

/// Apache mod_dav answers 409 Conflict to a PUT into a collection that does
/// not exist; the client creates `BASE/` and `BASE/ac/` with MKCOL and
/// retries once.
#[test]
fn webdav_conflict_gets_mkcol_then_put() {
    let collection = Arc::new(std::sync::Mutex::new(false));
    let state = collection.clone();
    let server = FakeServer::start(move |req| {
        let mut exists = state.lock().expect("lock");
        match req.method.as_str() {
            "MKCOL" if req.path == "/cache/ac/" => {
                *exists = true;
                Reply::status(201)
            }
            "MKCOL" => Reply::status(405),
            "PUT" if *exists => Reply::status(201),
            "PUT" => Reply::status(409),
            _ => Reply::status(404),
        }
    });
    let remote = remote(&server.url(), Mode::ReadWrite);
    remote
        .upload_now(&key(1), b"first", "t")
        .expect("409, MKCOL, PUT");
    remote
        .upload_now(&key(2), b"second", "t")
        .expect("collection exists now");
    let seen: Vec<String> = server
        .requests()
        .iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    let put1 = format!("PUT /cache/ac/{}", key(1).to_hex());
    let put2 = format!("PUT /cache/ac/{}", key(2).to_hex());
    assert_eq!(
        seen,
        [&put1, "MKCOL /cache/", "MKCOL /cache/ac/", &put1, &put2],
        "{seen:?}"
    );
    assert_eq!(remote.stats().tag("t").uploads, 2);
    assert!(remote.take_notices().is_empty());
}

/// A server slower than cooking (seconds to answer a lookup), with the
/// default settings: one lookup waits `DEFAULT_LOOKUP_WAIT`, turns the
/// remote off with a notice giving the latency, and every later lookup is
/// skipped at once.
#[test]
fn a_slow_server_costs_one_lookup_wait_not_seconds_per_entry() {
    let server = FakeServer::start(|_| Reply::Hang);
    let remote = RemoteCache::open(RemoteConfig::parse(&server.url()).expect("url")).expect("open");
    let start = Instant::now();
    for i in 0..20 {
        assert!(remote.fetch(&key(i), "t").ok().flatten().is_none());
    }
    let took = start.elapsed();
    assert!(took >= DEFAULT_LOOKUP_WAIT, "{took:?}");
    assert!(took < DEFAULT_LOOKUP_WAIT * 3, "{took:?}");
    let stats = remote.stats().tag("t");
    assert_eq!((stats.errors, stats.skipped), (1, 19), "{stats:?}");
    let notices = remote.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains("timed out") && notices[0].contains("no answer after 0.2"),
        "{notices:?}"
    );
}

/// Lookups of a plan run side by side: sixteen keys prefetched from a
/// server that takes 100 ms per answer are all answered in a few answer
/// times, not sixteen.
#[test]
fn prefetched_lookups_run_concurrently() {
    let server = FakeServer::start(|_| Reply::slow(Duration::from_millis(100), Reply::status(404)));
    let remote = RemoteCache::open(RemoteConfig::parse(&server.url()).expect("url")).expect("open");
    let start = Instant::now();
    for i in 0..16 {
        remote.prefetch(&key(i));
    }
    for i in 0..16 {
        assert!(remote.fetch(&key(i), "t").expect("a miss").is_none());
    }
    let took = start.elapsed();
    assert!(took < Duration::from_millis(1200), "{took:?}");
    let stats = remote.stats().tag("t");
    assert_eq!((stats.misses, stats.errors), (16, 0), "{stats:?}");
    assert!(!remote.is_disabled());
    assert_eq!(server.requests().len(), 16, "one request per key");
}

/// Apache mod_dav under a two-level base path: MKCOL of a collection
/// whose parent is missing is a 409, like the PUT. Every level is
/// created, parents first, then the PUT succeeds.
#[test]
fn nested_base_paths_get_every_level_created() {
    let made = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let state = made.clone();
    let server = FakeServer::start(move |req| {
        let mut made = state.lock().expect("lock");
        let parent = |p: &str| {
            let t = p.trim_end_matches('/');
            t[..t.rfind('/').unwrap_or(0) + 1].to_string()
        };
        let has_parent = |p: &str| parent(p) == "/" || made.contains(&parent(p));
        match req.method.as_str() {
            "MKCOL" if has_parent(&req.path) => {
                made.push(req.path.clone());
                Reply::status(201)
            }
            "MKCOL" => Reply::status(409),
            "PUT" if has_parent(&req.path) => Reply::status(201),
            "PUT" => Reply::status(409),
            _ => Reply::status(404),
        }
    });
    let url = format!("{}/team/ludus", server.url());
    let remote = remote(&url, Mode::ReadWrite);
    remote
        .upload_now(&key(1), b"first", "t")
        .expect("409, MKCOL of every level, PUT");
    let mkcols: Vec<String> = server
        .requests()
        .iter()
        .filter(|r| r.method == "MKCOL")
        .map(|r| r.path.clone())
        .collect();
    assert_eq!(
        mkcols,
        [
            "/cache/",
            "/cache/team/",
            "/cache/team/ludus/",
            "/cache/team/ludus/ac/"
        ]
    );
    assert_eq!(remote.stats().tag("t").uploads, 1);
}

/// A server slower than the cook: the queue fills, puts are dropped at
/// once (not waited for), and the flush reports them in one notice.
#[test]
fn full_upload_queue_drops_and_says_so() {
    let server = FakeServer::start(|req| {
        if req.method == "PUT" {
            thread::sleep(Duration::from_millis(50));
        }
        Reply::status(201)
    });
    let mut cfg = config(&server.url(), Mode::ReadWrite);
    cfg.queue_entries = 2;
    cfg.upload_threads = 1;
    let remote = RemoteCache::open(cfg).expect("open");
    let start = Instant::now();
    let outcomes: Vec<Upload> = (0..10).map(|i| remote.upload(&key(i), b"v", "t")).collect();
    assert!(start.elapsed() < Duration::from_secs(1), "never blocks");
    let dropped = outcomes.iter().filter(|&&o| o == Upload::Dropped).count() as u64;
    assert!(dropped >= 7, "{outcomes:?}");
    assert_eq!(remote.flush(Duration::from_secs(5)).pending, 0);
    let stats = remote.stats().tag("t");
    assert_eq!(stats.uploads + stats.dropped_uploads, 10, "{stats:?}");
    let notices = remote.take_notices();
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert!(
        notices[0].contains(&format!("{dropped} uploads dropped")),
        "{notices:?}"
    );
}

/// As `tests/package_robustness.rs` does for packages: every truncation and
/// every single-bit flip of a downloaded entry is a miss, never a value,
/// and never disables the remote (the server is alive, the object is bad).
#[test]
fn every_truncation_and_bit_flip_of_a_download_is_a_miss() {
    let entry = encode_entry(&key(3), &value(3, 40));
    let mut variants: Vec<Vec<u8>> = (0..entry.len()).map(|n| entry[..n].to_vec()).collect();
    for i in 0..entry.len() {
        let mut flipped = entry.clone();
        flipped[i] ^= 1 << (i % 8);
        variants.push(flipped);
    }
    let count = variants.len();
    let served = Arc::new(AtomicUsize::new(0));
    let next = served.clone();
    let server = FakeServer::start(move |_| {
        let i = next.fetch_add(1, Ordering::SeqCst);
        variants.get(i).map_or(Reply::status(404), |v| Reply::ok(v))
    });
    let remote = remote(&server.url(), Mode::Read);
    for i in 0..count {
        let got = remote.fetch(&key(3), "t");
        assert!(
            matches!(got, Err(RemoteError::Corrupt { .. })),
            "variant {i}: {got:?}"
        );
    }
    assert!(!remote.is_disabled());
    let stats = remote.stats().tag("t");
    assert_eq!((stats.corrupt, stats.hits), (count as u64, 0));
    // The intact entry, for contrast, is a hit.
    let intact = FakeServer::start(move |_| Reply::ok(&entry));
    let remote = self::remote(&intact.url(), Mode::Read);
    assert_eq!(remote.fetch(&key(3), "t").expect("hit"), Some(value(3, 40)));
}
