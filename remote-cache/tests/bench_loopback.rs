//! Throughput of the remote cache against nginx on loopback, ~10 KB
//! entries. Ignored by default (figures, not a check); run with
//! `tools/bench-remote-cache.sh`. Results are in docs/remote-cache.md.

mod common;

use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use common::{key, value, Nginx};
use ludus_anim_remote_cache::{Mode, RemoteCache, RemoteConfig};

const ENTRIES: u64 = 2000;
const LEN: usize = 10_000;

fn open(url: &str) -> RemoteCache {
    let mut cfg = RemoteConfig::parse(url)
        .expect("url")
        .with_mode(Mode::ReadWrite);
    // Room for the whole burst: this measures upload throughput, not the
    // drop policy (a cook produces entries far slower than 10 us apart).
    cfg.queue_entries = ENTRIES as usize;
    RemoteCache::open(cfg).expect("open")
}

fn report(what: &str, n: u64, elapsed: Duration) {
    let secs = elapsed.as_secs_f64();
    let mb = (n as f64 * LEN as f64) / 1e6;
    println!(
        "{what:<34} {n:>5}  {:>8.0} ops/s  {:>7.1} MB/s  {:>6.0} us/op",
        n as f64 / secs,
        mb / secs,
        secs * 1e6 / n as f64
    );
}

#[test]
#[ignore = "benchmark: run tools/bench-remote-cache.sh"]
fn bench_loopback_10kb_entries() {
    let Some(nginx) = Nginx::start() else { return };
    let remote = Arc::new(open(&nginx.url()));
    let values: Vec<Vec<u8>> = (0..ENTRIES).map(|i| value(i, LEN)).collect();
    println!("{ENTRIES} entries of {LEN} B against nginx on 127.0.0.1");

    let start = Instant::now();
    for (i, v) in values.iter().enumerate() {
        remote.upload_now(&key(i as u64), v, "bench").expect("put");
    }
    report("PUT, 1 thread (synchronous)", ENTRIES, start.elapsed());

    let start = Instant::now();
    for i in 0..ENTRIES {
        assert!(remote.fetch(&key(i), "bench").expect("get").is_some());
    }
    report("GET + entry check, 1 thread", ENTRIES, start.elapsed());

    let start = Instant::now();
    let threads: Vec<_> = (0..4u64)
        .map(|t| {
            let remote = remote.clone();
            thread::spawn(move || {
                for i in (t..ENTRIES).step_by(4) {
                    assert!(remote.fetch(&key(i), "bench").expect("get").is_some());
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("thread");
    }
    report("GET + entry check, 4 threads", ENTRIES, start.elapsed());

    let start = Instant::now();
    for i in 0..ENTRIES {
        assert!(!remote.contains(&key(ENTRIES + i)).expect("head"));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{:<34} {ENTRIES:>5}  {:>8.0} ops/s  {:>12}  {:>6.0} us/op",
        "HEAD miss, 1 thread",
        ENTRIES as f64 / secs,
        "",
        secs * 1e6 / ENTRIES as f64
    );

    let writer = open(&nginx.url());
    let start = Instant::now();
    for (i, v) in values.iter().enumerate() {
        writer.upload(&key(ENTRIES + i as u64), v, "bench");
    }
    let queued = start.elapsed();
    let flush = writer.flush(Duration::from_secs(60));
    assert_eq!(flush.pending, 0);
    let stats = writer.stats().tag("bench");
    println!(
        "write-behind: {} queued in {:.1} ms ({:.1} us each on the caller), \
         {} uploaded + {} dropped, flushed after {:.0} ms",
        ENTRIES,
        queued.as_secs_f64() * 1e3,
        queued.as_secs_f64() * 1e6 / ENTRIES as f64,
        stats.uploads,
        stats.dropped_uploads,
        (queued + flush.waited).as_secs_f64() * 1e3
    );
    report(
        "PUT, write-behind (2 threads)",
        stats.uploads,
        queued + flush.waited,
    );
}
