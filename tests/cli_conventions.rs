//! The command line behaves as a new user expects: consistent flags,
//! nothing written over an input, usage errors before any output, bounded
//! threads, a build identity, `list` before cooking, directories as inputs.

mod common;
use common::*;
use std::path::Path;

fn biped_in(dir: &Path) -> std::path::PathBuf {
    let p = dir.join("biped.glb");
    std::fs::copy(repo().join("fixtures/biped.glb"), &p).unwrap();
    p
}

#[test]
fn bench_never_writes_over_an_input() {
    let tmp = tempfile::tempdir().unwrap();
    let biped = biped_in(tmp.path());
    let before = std::fs::read(&biped).unwrap();
    let o = ludus_anim(
        &[
            "bench",
            "biped.glb",
            "--no-acl",
            "--profiles",
            "crowd",
            "--out",
            "biped.glb",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("one of the inputs"), "{}", text(&o));
    assert_eq!(std::fs::read(&biped).unwrap(), before, "input untouched");
    let o = ludus_anim(
        &["bench", "biped.glb", "--no-acl", "--out", "other.fbx"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(!tmp.path().join("other.fbx").exists());
}

#[test]
fn a_misspelled_input_is_a_usage_error_and_writes_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let o = ludus_anim(&["cook", "bipedd.glb", "-o", "out"], tmp.path());
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("'bipedd.glb' does not exist"),
        "{}",
        text(&o)
    );
    assert!(!tmp.path().join("out").exists(), "no output folder");
}

#[test]
fn cooking_the_bundled_demo_says_so() {
    let tmp = tempfile::tempdir().unwrap();
    let o = ludus_anim(&["cook", "-o", "out", "-j", "1"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("bundled demo"), "{err}");
}

#[test]
fn short_flags_quiet_and_bounded_jobs() {
    let tmp = tempfile::tempdir().unwrap();
    biped_in(tmp.path());
    let o = ludus_anim(
        &[
            "cook",
            "biped.glb",
            "-o",
            "o1",
            "-j",
            "100000",
            "--no-cache",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("more than 4 per core"), "{}", text(&o));
    let o = ludus_anim(&["-q", "cook", "biped.glb", "-o", "o2"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(o.stdout.is_empty(), "quiet prints nothing: {}", text(&o));
    assert!(tmp.path().join("o2/report.json").is_file());
}

#[test]
fn the_build_is_identified_by_version_and_revision() {
    let tmp = tempfile::tempdir().unwrap();
    let o = ludus_anim(&["--version"], tmp.path());
    let v = String::from_utf8_lossy(&o.stdout);
    assert!(
        v.contains(env!("CARGO_PKG_VERSION")) && v.contains("(rev "),
        "{v}"
    );
    biped_in(tmp.path());
    let o = ludus_anim(&["cook", "biped.glb", "-o", "out"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&tmp.path().join("out"));
    assert_eq!(r["build"]["version"], env!("CARGO_PKG_VERSION"));
    assert!(r["build"]["revision"]
        .as_str()
        .is_some_and(|s| !s.is_empty()));
}

#[test]
fn cache_sizes_parse_and_stats_does_not_create_the_cache() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-cache-here");
    let o = ludus_anim(
        &["cache", "stats", "--cache", missing.to_str().unwrap()],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("does not exist"), "{}", text(&o));
    assert!(!missing.exists(), "stats created the cache directory");
    biped_in(tmp.path());
    let cache = tmp.path().join("c");
    let c = cache.to_str().unwrap();
    let o = ludus_anim(
        &["cook", "biped.glb", "-o", "out", "--cache", c],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = ludus_anim(&["cache", "stats", "--cache", c], tmp.path());
    assert!(text(&o).contains("least recently used"), "{}", text(&o));
    for size in ["2G", "2GB", "1.5GiB", "500M", "1048576"] {
        let o = ludus_anim(
            &["cache", "gc", "--max-size", size, "--cache", c],
            tmp.path(),
        );
        assert!(o.status.success(), "{size}: {}", text(&o));
    }
    let o = ludus_anim(
        &["cache", "gc", "--max-size", "2XB", "--cache", c],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn list_shows_a_source_before_cooking() {
    let tmp = tempfile::tempdir().unwrap();
    biped_in(tmp.path());
    let o = ludus_anim(&["list", "biped.glb"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("biped.glb (glb)"), "{out}");
    assert!(
        out.contains("clip 'walk'") && out.contains("joints"),
        "{out}"
    );
    let o = ludus_anim(&["inspect", "biped.glb"], tmp.path());
    assert_eq!(
        String::from_utf8_lossy(&o.stdout),
        out,
        "inspect lists sources"
    );
    let o = ludus_anim(&["list", "biped.glb", "--json"], tmp.path());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v[0]["format"], "glb");
    // The joint tree: every joint once, parents before children, each
    // child one level below its parent, indented so in the text.
    let tree = v[0]["hierarchy"].as_array().unwrap();
    assert_eq!(tree.len() as u64, v[0]["joints"].as_u64().unwrap());
    for (i, j) in tree.iter().enumerate() {
        let depth = j["depth"].as_u64().unwrap();
        match j["parent"].as_str() {
            None => assert_eq!(depth, 0),
            Some(p) => {
                let at = tree[..i]
                    .iter()
                    .rposition(|q| q["name"] == p)
                    .expect("parent first");
                assert_eq!(tree[at]["depth"].as_u64().unwrap() + 1, depth, "{j}");
            }
        }
        let line = format!(
            "\n    {}{}\n",
            "  ".repeat(depth as usize),
            j["name"].as_str().unwrap()
        );
        assert!(out.contains(&line), "{line:?} in {out}");
    }
    assert!(tree.iter().any(|j| j["depth"].as_u64().unwrap() >= 2));
    assert!(v[0]["clips"].as_array().unwrap().len() >= 3);
    assert!(!tmp.path().join("out").exists(), "list writes nothing");
}

#[test]
fn a_directory_input_cooks_every_supported_file_below_it() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("content/chars");
    std::fs::create_dir_all(&dir).unwrap();
    biped_in(&dir);
    std::fs::copy(repo().join("fixtures/biped.glb"), dir.join("biped2.glb")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not animation").unwrap();
    let o = ludus_anim(&["cook", "content", "-o", "out"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&tmp.path().join("out"));
    let sources: Vec<&str> = r["assets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["source"].as_str().unwrap())
        .collect();
    assert_eq!(
        sources,
        ["content/chars/biped.glb", "content/chars/biped2.glb"]
    );
}

#[test]
fn color_follows_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("bad.bvh"), "HIERARCHY\nROOT a\n{\n").unwrap();
    let o = ludus_anim(
        &["--color", "always", "cook", "bad.bvh", "-o", "o"],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("\x1b["));
    let o = ludus_anim(
        &["--color", "never", "cook", "bad.bvh", "-o", "o"],
        tmp.path(),
    );
    assert!(!String::from_utf8_lossy(&o.stderr).contains("\x1b["));
}

/// Quality warnings are loud: on the console with file, clip and joint, in
/// the `--json` stream, counted in the summary, and `--deny warnings` fails
/// the cook for CI.
#[test]
fn quality_warnings_are_printed_counted_and_deniable() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let src = fx.join("gltf/khronos_InterpolationTest");
    for f in ["interpolation_test.gltf", "interpolation_test.bin"] {
        std::fs::copy(src.join(f), tmp.path().join(f)).unwrap();
    }
    let o = ludus_anim(
        &["cook", "interpolation_test.gltf", "-o", "out"],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains(
            "warning[step_between_samples]: file 'interpolation_test.gltf', clip 'Step Rotation'"
        ),
        "{err}"
    );
    let r = report(&tmp.path().join("out"));
    let n = r["totals"]["warnings"].as_u64().unwrap();
    assert!(n >= 3, "{n}");
    assert!(String::from_utf8_lossy(&o.stdout).contains(&format!("{n} warnings")));
    let o = ludus_anim(
        &[
            "cook",
            "interpolation_test.gltf",
            "-o",
            "out",
            "--deny",
            "warnings",
        ],
        tmp.path(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains("--deny warnings"), "{}", text(&o));
    let o = ludus_anim(
        &["cook", "interpolation_test.gltf", "-o", "out", "--json"],
        tmp.path(),
    );
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let warned = events
        .iter()
        .filter(|e| e["event"] == "diagnostic" && e["severity"] == "warning")
        .count();
    assert_eq!(warned as u64, n);
    let summary = events.last().unwrap();
    assert_eq!(summary["warnings"], n);
}

#[test]
fn root_motion_on_a_joint_below_the_moving_root_is_explained() {
    let tmp = tempfile::tempdir().unwrap();
    biped_in(tmp.path());
    // The biped walks by its 'Root' joint; extracting from 'Hips' (its
    // child) leaves 1.68 m of travel in the pose and the loop pops.
    std::fs::write(
        tmp.path().join("ludus-anim.toml"),
        "[[asset]]\nsources = [\"biped.glb\"]\n[asset.clips.walk]\nloop = 'loop'\nroot_motion = { joint = 'Hips', policy = 'planar' }\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook", "-o", "out"], tmp.path());
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(t.contains("root_motion_ancestor_animated"), "{t}");
    assert!(t.contains("did you mean root_motion.joint = 'Root'"), "{t}");
    // With the motion root, no such warning and no popping loop.
    std::fs::write(
        tmp.path().join("ludus-anim.toml"),
        "[[asset]]\nsources = [\"biped.glb\"]\n[asset.clips.walk]\nloop = 'loop'\nroot_motion = { joint = 'Root', policy = 'planar' }\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook", "-o", "out"], tmp.path());
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        !t.contains("root_motion_ancestor_animated") && !t.contains("loop_seam"),
        "{t}"
    );
}
