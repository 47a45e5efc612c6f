//! Fault injection through the CLI and the sink interface: a panic inside
//! one asset, a full file system under the output directory or the cache,
//! an output directory turned read-only mid-run, concurrent cooks into one
//! output directory, and pruning. (Cooks killed at random points:
//! `tests/pipeline.rs`.)
//!
//! The file-system cases mount a small tmpfs (root in a container is
//! enough); where mounting is not permitted they print a skip line and the
//! simulated sink errors below still run.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// A project of `n` copies of the bundled biped under `dir/src`, cooked
/// into `dir/out` with the cache in `dir/cache`.
fn project(dir: &Path, n: usize, profile: &str) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let biped = std::fs::read(repo().join("fixtures/biped.glb")).unwrap();
    for i in 0..n {
        std::fs::write(dir.join(format!("src/a{i}.glb")), &biped).unwrap();
    }
    set_profile(dir, profile);
}

fn set_profile(dir: &Path, profile: &str) {
    std::fs::write(
        dir.join("ludus-anim.toml"),
        format!(
            "[project]\noutput = \"out\"\ncache = \"cache\"\nprofile = \"{profile}\"\n\n[[asset]]\nsources = [\"src/*.glb\"]\n"
        ),
    )
    .unwrap();
}

type Outputs = (Vec<(String, Vec<u8>)>, Vec<u8>, serde_json::Value);

/// What a reader of `out` sees: packages, manifest.json, and the report's
/// assets without timings (the rest of the report is cache counters and
/// timings).
fn outputs(out: &Path) -> Outputs {
    let manifest = std::fs::read(out.join("manifest.json")).unwrap_or_default();
    let assets = std::fs::read(out.join("report.json"))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .map(|r| without_timings(r["assets"].clone()))
        .unwrap_or_default();
    (packages(out), manifest, assets)
}

/// `a` and `b` hold the same outputs (what differs, if not).
fn same_outputs(a: &Path, b: &Path) {
    let (x, y) = (outputs(a), outputs(b));
    let names = |o: &Outputs| o.0.iter().map(|p| p.0.clone()).collect::<Vec<_>>();
    assert_eq!(names(&x), names(&y), "package names");
    assert!(x.0 == y.0, "package bytes differ");
    assert_eq!(
        String::from_utf8_lossy(&x.1),
        String::from_utf8_lossy(&y.1),
        "manifest.json"
    );
    assert_eq!(x.2, y.2, "report.json assets");
}

/// After a fault: the next cook (pruning) succeeds, its outputs in `out`
/// equal a clean cook's byte for byte, and no stray file is left.
fn next_cook_heals(d: &Path, out: &Path) {
    let o = ludus_anim(&["cook", "--prune"], d);
    assert!(o.status.success(), "{}", text(&o));
    let o = ludus_anim(&["cook", "--no-cache", "--out", "clean"], d);
    assert!(o.status.success(), "{}", text(&o));
    same_outputs(out, &d.join("clean"));
    assert!(strays(out).is_empty(), "{:?}", strays(out));
}

/// Files under `out` other than the outputs and the lock bookkeeping.
fn strays(out: &Path) -> Vec<PathBuf> {
    all_files(out)
        .into_iter()
        .filter(|p| {
            let rel = p.strip_prefix(out).unwrap().to_string_lossy().to_string();
            let known = [
                "manifest.json",
                "report.json",
                "report-sidecar.json",
                ".lock",
                ".generation",
                ".cook-state",
            ];
            !(known.contains(&rel.as_str())
                || (rel.starts_with("packages/") && rel.ends_with(".ludanim")))
        })
        .collect()
}

/// A tmpfs mounted on a directory for the test's life.
struct Tmpfs(PathBuf);

impl Tmpfs {
    fn mount(dir: &Path, size: &str) -> Option<Tmpfs> {
        std::fs::create_dir_all(dir).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
            .arg(dir)
            .output()
            .is_ok_and(|o| o.status.success());
        if !ok {
            eprintln!(
                "skipped: cannot mount a tmpfs on {} (needs root or CAP_SYS_ADMIN); the simulated sink errors cover the logic",
                dir.display()
            );
        }
        ok.then(|| Tmpfs(dir.to_path_buf()))
    }

    /// Fill the file system, then free `leave` bytes.
    fn fill(&self, leave: u64) -> PathBuf {
        use std::io::Write;
        let p = self.0.join("filler");
        let mut f = std::fs::File::create(&p).unwrap();
        let chunk = vec![0u8; 64 << 10];
        while f.write_all(&chunk).is_ok() {}
        let len = f.metadata().unwrap().len();
        f.set_len(len.saturating_sub(leave)).unwrap();
        p
    }
}

/// A read-only bind mount of a directory over itself: new opens, creates
/// and renames under it fail with EROFS while files already open stay
/// writable (a tmpfs cannot be remounted read-only while a cook has files
/// open for writing: "mount point is busy").
struct ReadOnly(PathBuf);

impl ReadOnly {
    fn mount(dir: &Path) -> Option<ReadOnly> {
        for _ in 0..20 {
            let ok = Command::new("mount")
                .args(["--bind", "-o", "ro"])
                .arg(dir)
                .arg(dir)
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                return Some(ReadOnly(dir.to_path_buf()));
            }
            let _ = Command::new("umount").arg(dir).output();
        }
        None
    }
}

impl Drop for ReadOnly {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg(&self.0).output();
    }
}

/// Whether this test may mount at all (a tmpfs in a scratch directory).
fn can_mount(d: &Path) -> bool {
    Tmpfs::mount(&d.join("probe"), "1m").is_some()
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.0).output();
    }
}

#[test]
fn a_panic_inside_one_asset_fails_that_asset_only() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, 3, "standard");
    for jobs in ["1", "2"] {
        let o = command(&["cook", "--no-cache", "--jobs", jobs], d)
            .env("LUDUS_ANIM_TEST_PANIC", "src/a1")
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(1), "{}", text(&o));
        let r = report(&d.join("out"));
        let assets = r["assets"].as_array().unwrap();
        assert_eq!(assets.len(), 3);
        for a in assets {
            let bad = a["source"] == "src/a1.glb";
            assert_eq!(a["status"], if bad { "failed" } else { "ok" }, "{a}");
        }
        let failed = assets.iter().find(|a| a["source"] == "src/a1.glb").unwrap();
        let diag = &failed["diagnostics"][0];
        assert_eq!(diag["code"], "internal_panic", "{diag}");
        assert_eq!(diag["file"], "src/a1.glb");
        let message = diag["message"].as_str().unwrap();
        assert!(message.contains("LUDUS_ANIM_TEST_PANIC"), "{message}");
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(stderr.contains("internal_panic"), "{stderr}");
        let m: serde_json::Value =
            serde_json::from_slice(&std::fs::read(d.join("out/manifest.json")).unwrap()).unwrap();
        assert_eq!(m["assets"].as_array().unwrap().len(), 2);
    }
    // Without the variable the same build cooks everything.
    let o = ludus_anim(&["cook", "--no-cache"], d);
    assert!(o.status.success(), "{}", text(&o));
}

/// The size of one of the project's packages (the largest).
fn package_size(out: &Path) -> u64 {
    packages(out)
        .iter()
        .map(|(_, b)| b.len() as u64)
        .max()
        .unwrap()
}

#[test]
fn a_full_output_file_system_publishes_nothing_and_the_next_cook_heals() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, 4, "standard");
    let out = d.join("out");
    let Some(fs) = Tmpfs::mount(&out, "16m") else {
        return;
    };
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    let before = outputs(&out);
    // New settings need new packages; room for about one and a half.
    set_profile(d, "hero");
    let filler = fs.fill(package_size(&out) * 3 / 2);
    let o = ludus_anim(&["cook"], d);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(
        e.contains("No space left on device") && e.contains("nothing was published"),
        "{e}"
    );
    assert!(outputs(&out) == before, "the previous outputs changed");
    assert_eq!(strays(&out), vec![filler.clone()], "partial files left");
    // With room again the next cook heals (and prunes the old packages).
    std::fs::remove_file(&filler).unwrap();
    next_cook_heals(d, &out);
}

#[test]
fn a_full_cache_file_system_costs_cache_entries_not_outputs() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, 3, "standard");
    let Some(fs) = Tmpfs::mount(&d.join("cache"), "16m") else {
        return;
    };
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    set_profile(d, "hero");
    let filler = fs.fill(0);
    // A cache is an optimization: writes that fail are notices, the cook
    // publishes complete outputs (exit 0) and no entry is left partial.
    let o = ludus_anim(&["cook", "--prune"], d);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&d.join("out"));
    let notices = r["cache_notices"].to_string();
    assert!(notices.contains("cache write failed"), "{notices}");
    let o = ludus_anim(&["cook", "--no-cache", "--out", "clean"], d);
    assert!(o.status.success(), "{}", text(&o));
    same_outputs(&d.join("out"), &d.join("clean"));
    // With room again: no corrupt entry is met, the cache fills, then hits.
    std::fs::remove_file(&filler).unwrap();
    let r = cook_report(d);
    assert!(r["cache_notices"].as_array().unwrap().is_empty(), "{r}");
    // `--json` always cooks (no up-to-date shortcut): from the cache.
    let o = ludus_anim(&["cook", "--json"], d);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&d.join("out"));
    assert_eq!(r["stages"]["package"]["hits"], 3, "{}", r["stages"]);
}

fn cook_report(d: &Path) -> serde_json::Value {
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    report(&d.join("out"))
}

/// Wait until a cook has staged at least one package.
fn wait_for_staged_package(out: &Path, timeout: Duration) -> bool {
    let start = Instant::now();
    while start.elapsed() < timeout {
        let staged = all_files(&out.join(".tmp")).iter().any(|p| {
            p.extension().is_some_and(|e| e == "ludanim") && p.to_string_lossy().contains("/stage-")
        });
        if staged {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn an_output_directory_turned_read_only_mid_run_publishes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    if !can_mount(d) {
        return;
    }
    project(d, 8, "standard");
    let out = d.join("out");
    let o = ludus_anim(&["cook", "--no-cache"], d);
    assert!(o.status.success(), "{}", text(&o));
    let before = outputs(&out);
    set_profile(d, "hero");
    let child = command(&["cook", "--no-cache", "--jobs", "1"], d)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    assert!(wait_for_staged_package(&out, Duration::from_secs(60)));
    let ro = ReadOnly::mount(&out).expect("read-only bind mount");
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let e = String::from_utf8_lossy(&o.stderr);
    assert!(e.contains("Read-only file system"), "{e}");
    assert!(outputs(&out) == before, "the previous outputs changed");
    // Read-only from the start: the same clear failure.
    let o = ludus_anim(&["cook", "--no-cache"], d);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Read-only file system"));
    // Writable again: the next cook heals, the dead staging is removed.
    drop(ro);
    next_cook_heals(d, &out);
}

#[test]
fn four_concurrent_cooks_into_one_output_directory_agree() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, 4, "standard");
    let o = ludus_anim(&["cook", "--no-cache", "--out", "clean"], d);
    assert!(o.status.success(), "{}", text(&o));
    let mut children: Vec<_> = (0..4)
        .map(|_| {
            command(&["cook", "--jobs", "1", "-q"], d)
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    // Prunes meanwhile: never a package a published manifest names.
    let start = Instant::now();
    let mut prunes = 0;
    while start.elapsed() < Duration::from_secs(120) {
        let o = ludus_anim(&["prune", "out", "-q"], d);
        assert!(matches!(o.status.code(), Some(0 | 2)), "{}", text(&o));
        prunes += 1;
        check_published(&d.join("out"));
        if children
            .iter_mut()
            .all(|c| c.try_wait().ok().flatten().is_some())
        {
            break;
        }
    }
    for c in children {
        let o = c.wait_with_output().unwrap();
        assert!(o.status.success(), "{}", text(&o));
    }
    check_published(&d.join("out"));
    assert!(prunes > 0);
    same_outputs(&d.join("out"), &d.join("clean"));
    assert!(
        strays(&d.join("out")).is_empty(),
        "{:?}",
        strays(&d.join("out"))
    );
}

/// Every package the published manifest names is present and loads.
fn check_published(out: &Path) {
    let Ok(bytes) = std::fs::read(out.join("manifest.json")) else {
        return;
    };
    let m: serde_json::Value = serde_json::from_slice(&bytes).expect("manifest parses");
    for a in m["assets"].as_array().unwrap() {
        let p = out.join(a["package"].as_str().unwrap());
        let b = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
        assert!(
            ludus_anim_runtime::Package::load(&b).is_ok(),
            "{}",
            p.display()
        );
    }
}

#[test]
fn prune_removes_only_packages_no_manifest_names() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(d, 2, "standard");
    let out = d.join("out");
    assert!(ludus_anim(&["cook"], d).status.success());
    let old = packages(&out);
    set_profile(d, "hero");
    assert!(ludus_anim(&["cook"], d).status.success());
    assert_eq!(packages(&out).len(), 4);
    std::fs::write(out.join("packages/notes.txt"), "mine").unwrap();
    std::fs::write(out.join("packages/fake.ludanim"), "not a package").unwrap();
    let stale = out.join("packages").join(&old[0].0);
    std::os::unix::fs::symlink(&stale, out.join("packages/link.ludanim")).unwrap();
    let o = ludus_anim(&["prune", "out", "--dry-run"], d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("would remove 2 unreferenced packages"),
        "{}",
        text(&o)
    );
    assert!(stale.exists());
    let o = ludus_anim(&["prune", "out"], d);
    assert!(o.status.success(), "{}", text(&o));
    let mut left: Vec<String> = std::fs::read_dir(out.join("packages"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    left.sort();
    assert_eq!(left.len(), 5, "{left:?}");
    for (name, _) in &old {
        assert!(!left.contains(name), "{name} was not pruned: {left:?}");
    }
    for keep in ["notes.txt", "fake.ludanim", "link.ludanim"] {
        assert!(left.contains(&keep.to_string()), "{keep}: {left:?}");
    }
    check_published(&out);
    // No manifest, or an asset server's directory: refused.
    std::fs::create_dir_all(d.join("empty/packages")).unwrap();
    assert_eq!(ludus_anim(&["prune", "empty"], d).status.code(), Some(2));
    std::fs::create_dir_all(out.join("generations")).unwrap();
    let o = ludus_anim(&["prune", "out"], d);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("asset server"));
}

mod simulated {
    //! Write errors through the sink interface (no mounting needed).
    use super::*;
    use ludus_anim_cooker::events::Silent;
    use ludus_anim_cooker::pipeline::{cook, cook_with, CookError, CookOptions};
    use ludus_anim_cooker::publish::Staging;
    use ludus_anim_cooker::sink::{PublishError, Sink};
    use ludus_anim_cooker::source::FileSystem;
    use ludus_anim_cooker::stage_cache::StageCache;
    use std::io;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A staged output directory whose `n`th package write, or whose
    /// publication, fails as a full disk does.
    struct Failing {
        inner: Staging,
        fail_write: Option<usize>,
        fail_publish: bool,
        writes: AtomicUsize,
    }

    fn full() -> io::Error {
        io::Error::from_raw_os_error(28)
    }

    impl Sink for Failing {
        fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
            if Some(self.writes.fetch_add(1, Ordering::SeqCst)) == self.fail_write {
                return Err(full());
            }
            self.inner.write(rel, bytes)
        }
        fn describe(&self, rel: &str) -> String {
            self.inner.describe(rel)
        }
        fn publish(&self, index: &[(&str, &[u8])]) -> Result<(), PublishError> {
            if self.fail_publish {
                return Err(PublishError::Stage {
                    path: self.inner.describe(index[0].0),
                    source: full(),
                });
            }
            self.inner.publish(index)
        }
    }

    fn options(d: &Path, profile: &str) -> CookOptions {
        let inputs = (0..3).map(|i| d.join(format!("src/a{i}.glb"))).collect();
        let mut o = CookOptions::for_files(inputs, d.join("out"), profile);
        o.project_root = Some(d.to_path_buf());
        o.threads = 2;
        o
    }

    #[test]
    fn a_failed_write_or_publication_publishes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        project(d, 3, "standard");
        let out = d.join("out");
        let cache = StageCache::local(None);
        cook(&options(d, "standard"), &cache, &Silent).unwrap();
        let before = outputs(&out);
        let hero = options(d, "hero");
        for (fail_write, fail_publish) in [(Some(0), false), (Some(2), false), (None, true)] {
            let sink = Failing {
                inner: Staging::begin(&out).unwrap(),
                fail_write,
                fail_publish,
                writes: AtomicUsize::new(0),
            };
            let e = cook_with(&hero, &cache, &Silent, &FileSystem, &sink).unwrap_err();
            assert!(
                matches!(e, CookError::Write { .. } | CookError::Publish(_)),
                "{e}"
            );
            let msg = e.to_string();
            assert!(msg.contains("No space left on device"), "{msg}");
            assert!(msg.contains(&out.display().to_string()), "{msg}");
            drop(sink);
            assert!(outputs(&out) == before, "{fail_write:?} {fail_publish}");
            assert!(strays(&out).is_empty(), "{:?}", strays(&out));
        }
        cook(&hero, &cache, &Silent).unwrap();
        assert!(outputs(&out) != before);
        check_published(&out);
    }
}
