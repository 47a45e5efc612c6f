//! Many threads and processes on one directory, with and without a
//! concurrent gc, and a writer process killed mid-write.
//!
//! Child processes are this test binary re-invoked (via
//! `std::env::current_exe()`) to run only `child_entry`, with `CHILD_ENV`
//! selecting what the child does. Without `CHILD_ENV`, `child_entry` is a
//! no-op, so a normal test run just passes it.

mod common;

use std::env;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant, SystemTime};

use common::{is_entry_name, key, object_files, value};
use ludus_anim_cache::{Key, Store, StoreOptions};

const CHILD_ENV: &str = "LUDUS_CACHE_TEST_CHILD";
const DIR_ENV: &str = "LUDUS_CACHE_TEST_DIR";
const ID_ENV: &str = "LUDUS_CACHE_TEST_WORKER";
const GC_ENV: &str = "LUDUS_CACHE_TEST_GC_LIMIT";

/// Items shared by all workers.
const ITEMS: u64 = 48;
/// Times each worker puts every item.
const ROUNDS: u64 = 3;

/// Sizes from 1 byte to ~150 KB, so some writes are large enough to
/// interleave with readers.
fn item_len(i: u64) -> usize {
    (i as usize * 7919) % 150_000 + 1
}

/// The only value ever stored under `key(i)`.
fn item_value(i: u64) -> Vec<u8> {
    value(i, item_len(i))
}

/// Puts every item `ROUNDS` times (each worker in its own order) and reads
/// other items in between; any hit must be the exact value and no call may
/// fail. With `gc_limit`, also runs gc regularly.
fn worker(dir: &Path, id: u64, gc_limit: Option<u64>) {
    let store = Store::open(dir).unwrap_or_else(|e| panic!("worker {id}: open: {e}"));
    let mut hits = 0;
    for round in 0..ROUNDS {
        for j in 0..ITEMS {
            let i = (j + id * 7 + round * 13) % ITEMS;
            store
                .put(&key(i), &item_value(i))
                .unwrap_or_else(|e| panic!("worker {id}: put {i}: {e}"));
            let r = (i * 31 + id) % ITEMS;
            match store.get(&key(r)) {
                Ok(Some(v)) => {
                    assert!(v == item_value(r), "worker {id}: wrong value for item {r}");
                    hits += 1;
                }
                Ok(None) => {}
                Err(e) => panic!("worker {id}: get {r}: {e}"),
            }
            if let Some(limit) = gc_limit {
                if j % 8 == id % 8 {
                    store
                        .gc(limit)
                        .unwrap_or_else(|e| panic!("worker {id}: gc: {e}"));
                }
            }
        }
    }
    if gc_limit.is_none() {
        assert!(hits > 0, "worker {id}: expected some hits");
    }
}

/// Entry point of child processes; a no-op in a normal test run.
#[test]
fn child_entry() {
    let Ok(mode) = env::var(CHILD_ENV) else {
        return;
    };
    let dir = PathBuf::from(env::var(DIR_ENV).expect("child needs DIR_ENV"));
    match mode.as_str() {
        "worker" => {
            let id = env::var(ID_ENV)
                .expect("child needs ID_ENV")
                .parse()
                .expect("numeric worker id");
            let gc = env::var(GC_ENV)
                .ok()
                .map(|s| s.parse().expect("numeric gc limit"));
            worker(&dir, id, gc);
        }
        "endless_writer" => endless_writer(&dir),
        other => panic!("unknown child mode {other:?}"),
    }
}

fn spawn_child(mode: &str, dir: &Path, id: u64, gc_limit: Option<u64>) -> Child {
    let exe = env::current_exe().expect("current_exe");
    let mut cmd = Command::new(exe);
    cmd.args([
        "child_entry",
        "--exact",
        "--nocapture",
        "--test-threads=1",
        "-q",
    ])
    .env(CHILD_ENV, mode)
    .env(DIR_ENV, dir)
    .env(ID_ENV, id.to_string())
    .env_remove(GC_ENV)
    .stdout(Stdio::null());
    if let Some(limit) = gc_limit {
        cmd.env(GC_ENV, limit.to_string());
    }
    cmd.spawn().expect("spawn child test process")
}

/// Runs `PROCESSES` child workers and `THREADS` in-process workers at once.
fn run_workers(dir: &Path, gc_limit: Option<u64>) {
    const PROCESSES: u64 = 3;
    const THREADS: u64 = 3;
    let children: Vec<Child> = (0..PROCESSES)
        .map(|id| spawn_child("worker", dir, id, gc_limit))
        .collect();
    thread::scope(|s| {
        for id in PROCESSES..PROCESSES + THREADS {
            s.spawn(move || worker(dir, id, gc_limit));
        }
    });
    for (id, mut child) in children.into_iter().enumerate() {
        let status = child.wait().expect("wait for child");
        assert!(status.success(), "worker process {id} failed: {status}");
    }
}

/// No temp file is left visible, and everything else is a well-formed
/// entry name.
fn assert_only_entries(dir: &Path) -> Vec<PathBuf> {
    let files = object_files(dir);
    for f in &files {
        assert!(
            is_entry_name(f),
            "unexpected file left in the store: {}",
            f.display()
        );
    }
    files
}

#[test]
fn threads_and_processes_share_one_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    // Not created yet: the workers' concurrent opens race to create it and
    // its VERSION file.
    let dir = tmp.path().join("cache");
    run_workers(&dir, None);

    let store = Store::open(&dir).expect("open");
    for i in 0..ITEMS {
        let got = store.get(&key(i)).expect("get");
        assert!(got == Some(item_value(i)), "item {i} missing or wrong");
    }
    let stats = store.stats().expect("stats");
    assert_eq!(stats.entries, ITEMS);
    assert_eq!(stats.temp_files, 0);
    assert_eq!(assert_only_entries(&dir).len() as u64, ITEMS);
}

#[test]
fn gc_while_other_processes_read_and_write() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("cache");
    // About a quarter of the items' total size, so gc evicts constantly.
    let total: u64 = (0..ITEMS).map(|i| item_len(i) as u64).sum();
    run_workers(&dir, Some(total / 4));

    let store = Store::open(&dir).expect("open");
    let files = assert_only_entries(&dir);
    let mut present = 0;
    for i in 0..ITEMS {
        if let Some(v) = store.get(&key(i)).expect("get") {
            assert!(v == item_value(i), "item {i} wrong");
            present += 1;
        }
    }
    assert_eq!(present, files.len(), "every file is one of the items");
    let report = store.gc(total / 4).expect("gc");
    assert!(report.remaining_bytes <= total / 4);
}

/// Items the endless writer cycles through (bounded disk use).
const WRITER_ITEMS: u64 = 6;
/// Large, so most of the writer's time is spent writing and fsyncing and a
/// kill most likely lands mid-write.
const WRITER_LEN: usize = 4 << 20;

fn writer_key(i: u64) -> Key {
    key(1000 + i)
}

fn writer_value(i: u64) -> Vec<u8> {
    value(1000 + i, WRITER_LEN)
}

/// Overwrites its items in a loop until killed (bounded, in case the
/// parent dies first).
fn endless_writer(dir: &Path) {
    let store = Store::open(dir).expect("open");
    let values: Vec<Vec<u8>> = (0..WRITER_ITEMS).map(writer_value).collect();
    for n in 0..2000 {
        let i = n % WRITER_ITEMS;
        store.put(&writer_key(i), &values[i as usize]).expect("put");
    }
}

#[test]
fn writer_killed_mid_write_leaves_no_partial_entry() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("cache");
    let store = Store::open(&dir).expect("open");
    let expected: Vec<Vec<u8>> = (0..WRITER_ITEMS).map(writer_value).collect();

    let mut temps_left = 0;
    for attempt in 0..3u64 {
        let spawned_at = SystemTime::now();
        let mut child = spawn_child("endless_writer", &dir, 0, None);
        // Let it complete some puts (overwrites after the first attempt),
        // then kill it.
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let stats = store.stats().expect("stats");
            let wrote = stats.newest_use.is_some_and(|t| t >= spawned_at);
            if (stats.entries >= 3 && wrote) || Instant::now() > deadline {
                break;
            }
            thread::sleep(Duration::from_millis(5));
        }
        thread::sleep(Duration::from_millis(20 + 17 * attempt));
        child.kill().expect("kill writer");
        child.wait().expect("wait writer");

        // Whatever the kill interrupted, every visible entry is complete.
        for i in 0..WRITER_ITEMS {
            match store.get(&writer_key(i)) {
                Ok(Some(v)) => assert!(v == expected[i as usize], "item {i} wrong"),
                Ok(None) => {}
                Err(e) => panic!("a killed writer left a bad entry: {e}"),
            }
        }
        let stats = store.stats().expect("stats");
        assert!(stats.entries >= 3, "{stats:?}");
        temps_left = stats.temp_files;
    }
    eprintln!("killed writers left {temps_left} temp file(s) behind");

    // Leftover temp files are reclaimed by gc once stale (threshold zero
    // here); entries are untouched.
    let entries_before = store.stats().expect("stats").entries;
    let eager = Store::open_with(
        &dir,
        StoreOptions {
            stale_temp_age: Duration::ZERO,
            ..StoreOptions::default()
        },
    )
    .expect("open");
    let report = eager.gc(u64::MAX).expect("gc");
    assert_eq!(report.stale_temps_removed.len() as u64, temps_left);
    assert!(report.evicted.is_empty());
    let stats = store.stats().expect("stats");
    assert_eq!(stats.temp_files, 0);
    assert_eq!(stats.entries, entries_before);
    assert_only_entries(&dir);
}
