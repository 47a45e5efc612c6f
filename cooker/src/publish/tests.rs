use super::*;
use std::path::Path;

fn read(p: &Path) -> Option<Vec<u8>> {
    std::fs::read(p).ok()
}

fn publish_one(out: &Path, tag: &str) {
    let s = Staging::begin(out).unwrap();
    s.write(&format!("packages/{tag}.ludanim"), tag.as_bytes())
        .unwrap();
    let report = format!("report {tag}");
    let manifest = format!("manifest {tag}");
    s.publish(&[
        ("report.json", report.as_bytes()),
        ("manifest.json", manifest.as_bytes()),
    ])
    .unwrap();
}

fn staging_dirs(out: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(out.join(TMP))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    v.sort();
    v
}

/// A staging directory as a process killed after committing leaves it:
/// unlocked owner, `COMMITTED` naming files of which some are still staged.
fn dead_commit(out: &Path, name: &str, generation: u64, files: &[(&str, &str)], end: bool) {
    let dir = out.join(TMP).join(format!("{STAGE_PREFIX}{name}"));
    std::fs::create_dir_all(dir.join("packages")).unwrap();
    std::fs::write(dir.join(OWNER), b"").unwrap();
    let mut commit = format!("generation {generation}\n");
    for (rel, text) in files {
        std::fs::write(dir.join(rel), text).unwrap();
        commit.push_str(rel);
        commit.push('\n');
    }
    if end {
        commit.push_str(COMMIT_END);
    }
    std::fs::write(dir.join(COMMITTED), commit).unwrap();
}

#[test]
fn a_publication_moves_everything_and_leaves_no_staging() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    publish_one(&out, "a");
    assert_eq!(read(&out.join("manifest.json")).unwrap(), b"manifest a");
    assert_eq!(read(&out.join("report.json")).unwrap(), b"report a");
    assert_eq!(read(&out.join("packages/a.ludanim")).unwrap(), b"a");
    assert_eq!(read(&out.join(GENERATION_FILE)).unwrap(), b"1\n");
    assert!(staging_dirs(&out).is_empty(), "{:?}", staging_dirs(&out));
    // The same outputs again: a new generation, identical files.
    publish_one(&out, "a");
    assert_eq!(read(&out.join(GENERATION_FILE)).unwrap(), b"2\n");
    assert_eq!(read(&out.join("packages/a.ludanim")).unwrap(), b"a");
    assert!(staging_dirs(&out).is_empty());
}

#[test]
fn an_unpublished_staging_changes_nothing_and_is_removed() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    publish_one(&out, "a");
    {
        let s = Staging::begin(&out).unwrap();
        s.write("packages/b.ludanim", b"b").unwrap();
        assert_eq!(staging_dirs(&out).len(), 1);
    }
    assert!(staging_dirs(&out).is_empty());
    assert!(!out.join("packages/b.ludanim").exists());
    assert_eq!(read(&out.join("manifest.json")).unwrap(), b"manifest a");
}

#[test]
fn paths_outside_the_output_are_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let s = Staging::begin(&tmp.path().join("out")).unwrap();
    for bad in ["../x", "/etc/x", "packages/../../x", ""] {
        let e = s.write(bad, b"x").unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput, "{bad}");
    }
}

#[test]
fn a_dead_committed_publication_is_completed_before_the_next() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    publish_one(&out, "a");
    // Killed after renaming its package and report, before the manifest.
    std::fs::write(out.join("packages/b.ludanim"), "b").unwrap();
    std::fs::write(out.join("report.json"), "report b").unwrap();
    dead_commit(&out, "dead", 2, &[("manifest.json", "manifest b")], true);
    let _l = lock_out(&out).unwrap();
    recover_locked(&out).unwrap();
    assert_eq!(read(&out.join("manifest.json")).unwrap(), b"manifest b");
    assert_eq!(read(&out.join(GENERATION_FILE)).unwrap(), b"2\n");
    assert!(staging_dirs(&out).is_empty());
}

#[test]
fn stale_cut_short_and_live_stagings_are_never_applied() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    publish_one(&out, "a");
    publish_one(&out, "a");
    // Generation 1 is older than the published 2.
    dead_commit(&out, "stale", 1, &[("manifest.json", "old")], true);
    // A commit record cut short (no end line).
    dead_commit(&out, "short", 9, &[("manifest.json", "short")], false);
    // A living cook's staging (its owner lock is held).
    let live = Staging::begin(&out).unwrap();
    live.write("packages/c.ludanim", b"c").unwrap();
    {
        let _l = lock_out(&out).unwrap();
        recover_locked(&out).unwrap();
    }
    assert_eq!(read(&out.join("manifest.json")).unwrap(), b"manifest a");
    assert_eq!(staging_dirs(&out).len(), 1, "only the live staging remains");
    live.publish(&[("manifest.json", b"manifest c")]).unwrap();
    assert_eq!(read(&out.join("manifest.json")).unwrap(), b"manifest c");
    assert_eq!(read(&out.join("packages/c.ludanim")).unwrap(), b"c");
    assert_eq!(read(&out.join(GENERATION_FILE)).unwrap(), b"3\n");
}

#[test]
fn a_published_file_replaced_by_a_prune_is_restored_from_its_link() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("out");
    publish_one(&out, "a");
    let s = Staging::begin(&out).unwrap();
    // Identical to the published package: staged as a hard link.
    s.write("packages/a.ludanim", b"a").unwrap();
    std::fs::remove_file(out.join("packages/a.ludanim")).unwrap();
    s.publish(&[("manifest.json", b"manifest a")]).unwrap();
    assert_eq!(read(&out.join("packages/a.ludanim")).unwrap(), b"a");
}
