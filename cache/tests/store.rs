//! Single-process behaviour: round trips, layout, VERSION, corruption
//! healing, crashed writers, stats and LRU gc.

mod common;

use std::fs;
use std::path::Path;
use std::time::{Duration, SystemTime};

use common::{is_entry_name, key, mtime, object_files, set_mtime, value};
use ludus_anim_cache::{
    check_entry, encode_entry, Backend, CacheError, CorruptReason, Store, StoreOptions, HEADER_LEN,
    LAYOUT_VERSION, MAGIC,
};

fn open(dir: &Path) -> Store {
    Store::open(dir).expect("open store")
}

#[test]
fn put_get_round_trip_and_miss() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    assert_eq!(store.get(&key(1)).expect("get"), None, "empty store misses");

    for (i, len) in [(1, 0), (2, 1), (3, 1000), (4, 3 << 20)] {
        let v = value(i, len);
        store.put(&key(i), &v).expect("put");
        assert_eq!(store.get(&key(i)).expect("get"), Some(v), "item {i}");
    }
    assert_eq!(store.get(&key(99)).expect("get"), None, "other keys miss");

    // Overwrite replaces.
    store.put(&key(3), b"new").expect("put");
    assert_eq!(
        store.get(&key(3)).expect("get").as_deref(),
        Some(&b"new"[..])
    );

    // A second handle on the same directory sees the same entries.
    let again = open(tmp.path());
    assert_eq!(
        again.get(&key(3)).expect("get").as_deref(),
        Some(&b"new"[..])
    );
}

#[test]
fn on_disk_layout() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    let v = value(5, 777);
    store.put(&key(5), &v).expect("put");

    let hex = key(5).to_hex();
    let path = tmp.path().join("objects").join(&hex[..2]).join(&hex);
    assert_eq!(store.entry_path(&key(5)), path);
    let bytes = fs::read(&path).expect("entry file");
    assert_eq!(bytes.len(), HEADER_LEN + v.len());
    assert_eq!(bytes[0..8], MAGIC);
    assert_eq!(bytes[8..12], LAYOUT_VERSION.to_le_bytes());
    assert_eq!(bytes[16..24], (v.len() as u64).to_le_bytes());
    assert_eq!(bytes[24..56], key(5).0);
    assert_eq!(bytes[56..88], *blake3::hash(&v).as_bytes());
    assert_eq!(bytes[HEADER_LEN..], v[..]);

    let version = fs::read_to_string(tmp.path().join("VERSION")).expect("VERSION");
    assert_eq!(
        version,
        format!("ludus-anim-cache store layout {LAYOUT_VERSION}\n")
    );
    assert_eq!(object_files(tmp.path()), vec![path], "no temp files left");
}

#[test]
fn refuses_other_layout_version() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let dir = tmp.path().join("nested").join("cache");
    open(&dir); // creates missing parents
    open(&dir); // reopening the same layout is fine

    fs::write(dir.join("VERSION"), "ludus-anim-cache store layout 999\n").expect("write");
    let err = Store::open(&dir).expect_err("other layout must be refused");
    assert!(matches!(err, CacheError::LayoutMismatch { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains("layout 999"), "{msg}");
    assert!(
        msg.contains(&dir.join("VERSION").display().to_string()),
        "{msg}"
    );

    fs::write(dir.join("VERSION"), [0xff, 0x00, 0x13]).expect("write");
    assert!(matches!(
        Store::open(&dir),
        Err(CacheError::LayoutMismatch { .. })
    ));
}

#[test]
fn open_reports_unusable_directory() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let file = tmp.path().join("not-a-dir");
    fs::write(&file, b"x").expect("write");
    let err = Store::open(&file).expect_err("a file is not a cache directory");
    assert!(matches!(err, CacheError::Io { .. }), "{err:?}");
    assert!(err.to_string().contains("not-a-dir"), "{err}");
}

/// Damages an entry file's bytes.
type Damage = fn(&mut Vec<u8>);
/// Accepts the reason the damage must be reported with.
type ReasonCheck = fn(&CorruptReason) -> bool;

/// Each way of damaging an entry file, and the reason it must be reported
/// with.
fn corruptions() -> Vec<(&'static str, Damage, ReasonCheck)> {
    vec![
        (
            "flip a payload byte",
            |b| {
                let i = b.len() - 10;
                b[i] ^= 0x01;
            },
            |r| *r == CorruptReason::HashMismatch,
        ),
        (
            "flip a byte of the stored hash",
            |b| b[60] ^= 0x80,
            |r| *r == CorruptReason::HashMismatch,
        ),
        (
            "truncate the payload",
            |b| b.truncate(b.len() / 2),
            |r| matches!(r, CorruptReason::LengthMismatch { .. }),
        ),
        (
            "truncate by one byte",
            |b| {
                b.pop();
            },
            |r| matches!(r, CorruptReason::LengthMismatch { .. }),
        ),
        (
            "append a byte",
            |b| b.push(0),
            |r| matches!(r, CorruptReason::LengthMismatch { .. }),
        ),
        (
            "truncate inside the header",
            |b| b.truncate(40),
            |r| *r == CorruptReason::TruncatedHeader { len: 40 },
        ),
        (
            "empty file",
            |b| b.clear(),
            |r| *r == CorruptReason::TruncatedHeader { len: 0 },
        ),
        (
            "wrong magic",
            |b| b[0..8].copy_from_slice(b"NOTCACHE"),
            |r| *r == CorruptReason::BadMagic,
        ),
        (
            "other entry version",
            |b| b[8..12].copy_from_slice(&7u32.to_le_bytes()),
            |r| *r == CorruptReason::EntryVersion { found: 7 },
        ),
        (
            "reserved flags set",
            |b| b[12] = 1,
            |r| matches!(r, CorruptReason::UnknownFlags { .. }),
        ),
        (
            "huge payload length",
            |b| b[16..24].copy_from_slice(&u64::MAX.to_le_bytes()),
            |r| matches!(r, CorruptReason::LengthMismatch { .. }),
        ),
        (
            "key of another entry",
            |b| b[24] ^= 0xff,
            |r| matches!(r, CorruptReason::KeyMismatch { .. }),
        ),
    ]
}

#[test]
fn corrupted_entries_are_detected_removed_and_healed() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    for (i, (what, damage, expected_reason)) in corruptions().into_iter().enumerate() {
        let i = i as u64;
        let v = value(i, 5000);
        store.put(&key(i), &v).expect("put");
        let path = store.entry_path(&key(i));
        let mut bytes = fs::read(&path).expect("read entry");
        damage(&mut bytes);
        fs::write(&path, &bytes).expect("write damaged entry");

        match store.get(&key(i)) {
            Err(
                ref err @ CacheError::Corrupt {
                    key: k,
                    path: ref p,
                    ref reason,
                    healed,
                },
            ) => {
                assert_eq!(k, key(i), "{what}");
                assert_eq!(p, &path, "{what}");
                assert!(expected_reason(reason), "{what}: reason {reason:?}");
                assert!(healed, "{what}");
                assert!(err.is_healed_corruption(), "{what}");
                let msg = err.to_string();
                assert!(msg.contains(&key(i).to_hex()), "{what}: {msg}");
                assert!(msg.contains(&path.display().to_string()), "{what}: {msg}");
                assert!(msg.contains("healed"), "{what}: {msg}");
            }
            other => panic!("{what}: expected a healed corruption, got {other:?}"),
        }
        assert!(!path.exists(), "{what}: corrupted file removed");
        assert_eq!(store.get(&key(i)).expect("get"), None, "{what}: now a miss");
        store.put(&key(i), &v).expect("put after heal");
        assert_eq!(store.get(&key(i)).expect("get"), Some(v), "{what}: healed");
    }
}

#[test]
fn entry_copied_under_another_name_is_rejected() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    store.put(&key(1), b"one").expect("put");
    store.put(&key(2), b"two").expect("put");
    fs::copy(store.entry_path(&key(1)), store.entry_path(&key(2))).expect("copy");
    let err = store.get(&key(2)).expect_err("wrong key in header");
    assert!(
        matches!(
            err,
            CacheError::Corrupt {
                reason: CorruptReason::KeyMismatch { found },
                ..
            } if found == key(1)
        ),
        "{err:?}"
    );
    assert_eq!(
        store.get(&key(1)).expect("get").as_deref(),
        Some(&b"one"[..])
    );
}

#[test]
fn crashed_writer_temp_file_is_never_read_and_is_collected_when_old() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    let v = value(1, 10_000);
    // Produce a genuine entry image, then stand in for a writer killed
    // before its rename: one temp file with half of it, one with all of it.
    store.put(&key(1), &v).expect("put");
    let entry = store.entry_path(&key(1));
    let image = fs::read(&entry).expect("read");
    fs::remove_file(&entry).expect("remove");
    let shard = entry.parent().expect("shard dir");
    let hex = key(1).to_hex();
    let partial = shard.join(format!(".tmp-{hex}-1234-0-0"));
    let complete = shard.join(format!(".tmp-{hex}-1234-1-0"));
    fs::write(&partial, &image[..image.len() / 2]).expect("write");
    fs::write(&complete, &image).expect("write");

    assert_eq!(
        store.get(&key(1)).expect("get"),
        None,
        "temp files are not entries"
    );
    let stats = store.stats().expect("stats");
    assert_eq!((stats.entries, stats.total_bytes), (0, 0));
    assert_eq!(stats.temp_files, 2);
    assert_eq!(stats.temp_bytes, (image.len() + image.len() / 2) as u64);

    // Fresh temp files may belong to live writers: gc keeps them.
    let report = store.gc(u64::MAX).expect("gc");
    assert!(report.stale_temps_removed.is_empty(), "{report:?}");
    assert!(partial.exists() && complete.exists());

    // Once older than the threshold (default 1 h), gc removes them.
    set_mtime(&partial, SystemTime::now() - Duration::from_secs(2 * 3600));
    let report = store.gc(u64::MAX).expect("gc");
    assert_eq!(report.stale_temps_removed, vec![partial.clone()]);
    assert_eq!(report.stale_temp_bytes, (image.len() / 2) as u64);
    assert!(!partial.exists() && complete.exists());

    // The threshold is injectable.
    let eager = Store::open_with(
        tmp.path(),
        StoreOptions {
            stale_temp_age: Duration::ZERO,
            ..StoreOptions::default()
        },
    )
    .expect("open");
    let report = eager.gc(u64::MAX).expect("gc");
    assert_eq!(report.stale_temps_removed, vec![complete.clone()]);
    assert!(object_files(tmp.path()).is_empty());
    assert_eq!(eager.stats().expect("stats").temp_files, 0);

    // The store is fully usable afterwards.
    store.put(&key(1), &v).expect("put");
    assert_eq!(store.get(&key(1)).expect("get"), Some(v));
}

#[test]
fn unknown_files_are_ignored() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    store.put(&key(1), b"v").expect("put");
    let shard = store
        .entry_path(&key(1))
        .parent()
        .expect("shard")
        .to_path_buf();
    let foreign = shard.join("README.txt");
    fs::write(&foreign, b"not ours").expect("write");
    let misplaced = tmp.path().join("objects").join("zz");
    fs::create_dir_all(&misplaced).expect("mkdir");
    fs::write(misplaced.join(key(2).to_hex()), b"x").expect("write");

    assert_eq!(store.stats().expect("stats").entries, 1);
    let report = store.gc(0).expect("gc");
    assert_eq!(report.evicted.len(), 1);
    assert!(foreign.exists(), "gc leaves foreign files alone");
}

#[test]
fn hit_refreshes_recency() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    store.put(&key(1), b"v").expect("put");
    let path = store.entry_path(&key(1));

    let old = SystemTime::now() - Duration::from_secs(3600);
    set_mtime(&path, old);
    store.get(&key(1)).expect("get").expect("hit");
    let touched = mtime(&path);
    assert!(
        touched > old + Duration::from_secs(3000),
        "hit refreshed mtime"
    );

    // Within the granularity window a hit does not rewrite the mtime.
    let recent = SystemTime::now() - Duration::from_secs(5);
    set_mtime(&path, recent);
    store.get(&key(1)).expect("get").expect("hit");
    assert_eq!(mtime(&path), recent);

    // With zero granularity every hit touches.
    let eager = Store::open_with(
        tmp.path(),
        StoreOptions {
            touch_granularity: Duration::ZERO,
            ..StoreOptions::default()
        },
    )
    .expect("open");
    eager.get(&key(1)).expect("get").expect("hit");
    assert!(mtime(&path) > recent);

    // A miss creates nothing.
    assert_eq!(store.get(&key(2)).expect("get"), None);
    assert!(!store.entry_path(&key(2)).exists());
}

#[test]
fn stats_of_empty_store() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    assert_eq!(store.stats().expect("stats"), Default::default());
    let report = store.gc(0).expect("gc");
    assert_eq!(report, Default::default());
}

#[test]
fn gc_evicts_least_recently_used_first() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    let now = SystemTime::now();
    let hours_ago = |h: u64| now - Duration::from_secs(h * 3600);

    // Items 0..5 with payload sizes 100, 200, ..., 600 and last use 10 h,
    // 9 h, ..., 5 h ago; size on disk includes the header.
    let size = |i: u64| (100 * (i + 1)) as usize;
    let file_size = |i: u64| (HEADER_LEN + size(i)) as u64;
    for i in 0..6 {
        store.put(&key(i), &value(i, size(i))).expect("put");
        set_mtime(&store.entry_path(&key(i)), hours_ago(10 - i));
    }
    let total: u64 = (0..6).map(file_size).sum();
    let stats = store.stats().expect("stats");
    assert_eq!(stats.entries, 6);
    assert_eq!(stats.total_bytes, total);
    assert_eq!(stats.oldest_use, Some(hours_ago(10)));
    assert_eq!(stats.newest_use, Some(hours_ago(5)));

    // Using item 1 makes it the most recent.
    assert_eq!(store.get(&key(1)).expect("get"), Some(value(1, size(1))));
    let used = mtime(&store.entry_path(&key(1)));
    assert!(used > hours_ago(1));

    // Under the limit: nothing to do.
    let report = store.gc(total).expect("gc");
    assert!(report.evicted.is_empty());
    assert_eq!(
        (report.remaining_entries, report.remaining_bytes),
        (6, total)
    );

    // Keep ~three entries' worth: LRU order is now 0, 2, 3, 4, 5, 1.
    let limit = file_size(5) + file_size(1) + file_size(4);
    let report = store.gc(limit).expect("gc");
    let evicted: Vec<_> = report.evicted.iter().map(|e| e.key).collect();
    assert_eq!(evicted, vec![key(0), key(2), key(3)]);
    assert_eq!(
        report.evicted.iter().map(|e| e.bytes).collect::<Vec<_>>(),
        vec![file_size(0), file_size(2), file_size(3)]
    );
    assert_eq!(report.evicted[0].last_use, hours_ago(10));
    assert_eq!(
        report.evicted_bytes,
        file_size(0) + file_size(2) + file_size(3)
    );
    assert_eq!(report.remaining_entries, 3);
    assert_eq!(report.remaining_bytes, limit);

    for i in [0, 2, 3] {
        assert_eq!(store.get(&key(i)).expect("get"), None, "item {i} evicted");
    }
    let stats = store.stats().expect("stats");
    assert_eq!(stats.entries, report.remaining_entries);
    assert_eq!(stats.total_bytes, report.remaining_bytes);
    assert_eq!(stats.oldest_use, Some(hours_ago(6)));
    // (Checked without `get`, which would refresh their recency.)
    for i in [1, 4, 5] {
        assert!(store.entry_path(&key(i)).exists(), "item {i} kept");
    }

    // One byte under the remaining size evicts the least recent again.
    let report = store.gc(limit - 1).expect("gc");
    assert_eq!(report.evicted.len(), 1);
    assert_eq!(report.evicted[0].key, key(4));

    // Limit zero empties the store.
    let report = store.gc(0).expect("gc");
    assert_eq!(report.evicted.len(), 2);
    assert_eq!((report.remaining_entries, report.remaining_bytes), (0, 0));
    let stats = store.stats().expect("stats");
    assert_eq!((stats.entries, stats.total_bytes), (0, 0));
    assert!(object_files(tmp.path()).iter().all(|p| !is_entry_name(p)));
}

/// A remote cache stores the framed entry and checks downloads with
/// `check_entry`: it must frame exactly as the store writes files, and judge
/// every damage exactly as a local read does.
#[test]
fn check_entry_is_the_store_check() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    for (i, (what, damage, _)) in corruptions().into_iter().enumerate() {
        let i = i as u64 + 100;
        let v = value(i, 3000);
        store.put(&key(i), &v).expect("put");
        let path = store.entry_path(&key(i));
        let mut bytes = fs::read(&path).expect("read entry");
        assert_eq!(bytes, encode_entry(&key(i), &v), "{what}: framing");
        assert_eq!(check_entry(&key(i), &bytes), Ok(&v[..]), "{what}: intact");
        assert!(
            matches!(
                check_entry(&key(i + 1), &bytes),
                Err(CorruptReason::KeyMismatch { .. })
            ),
            "{what}: fetched under another key"
        );
        damage(&mut bytes);
        fs::write(&path, &bytes).expect("write damaged entry");
        let remote = check_entry(&key(i), &bytes).expect_err(what);
        match store.get(&key(i)) {
            Err(CacheError::Corrupt { reason, .. }) => assert_eq!(reason, remote, "{what}"),
            other => panic!("{what}: expected a corruption, got {other:?}"),
        }
    }
}

#[test]
fn store_is_a_backend() {
    let tmp = tempfile::tempdir().expect("tempdir");
    let store = open(tmp.path());
    let backend: &dyn Backend = &store;
    backend.put(&key(1), b"one", "test").expect("put");
    assert_eq!(
        backend.get(&key(1), "test").expect("get").as_deref(),
        Some(&b"one"[..])
    );
    assert_eq!(backend.get(&key(2), "test").expect("get"), None);
}
