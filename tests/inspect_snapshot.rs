//! `ludus-anim inspect` output is stable (insta snapshot): a change to it is
//! a reviewed change (`cargo insta review`).

mod common;
use common::*;

#[test]
fn inspect_text_snapshot() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(repo().join("fixtures/biped.glb"), d.join("biped.glb")).unwrap();
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[[asset]]\nsources = [\"biped.glb\"]\n\n[asset.clips.walk]\nloop = \"loop\"\nroot_motion = { joint = \"Root\" }\nmarkers = [ { name = \"foot_l\", time_s = 0.0, kind = \"sync\" } ]\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook", "--no-cache"], d);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&d.join("out"));
    let pkg = package_path(&d.join("out"), &r, 0);
    let o = ludus_anim(&["inspect", pkg.to_str().unwrap()], d);
    assert!(o.status.success(), "{}", text(&o));
    insta::assert_snapshot!(String::from_utf8_lossy(&o.stdout));
}

/// A reader that stops early (`ludus-anim inspect --json | head -1`) ends
/// the command quietly with status 0: no panic on the closed pipe. The
/// pipe's read end is closed before the command starts, so its first
/// write fails whatever the output's size.
#[test]
fn inspect_into_a_closed_pipe_exits_quietly() {
    use std::process::{Command, Stdio};
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(repo().join("fixtures/biped.glb"), d.join("biped.glb")).unwrap();
    let o = ludus_anim(&["cook", "--no-cache", "biped.glb"], d);
    assert!(o.status.success(), "{}", text(&o));
    let pkg = package_path(&d.join("out"), &report(&d.join("out")), 0);
    for json in [true, false] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut args = vec!["inspect", pkg.to_str().unwrap()];
        if json {
            args.push("--json");
        }
        let o = Command::new(env!("CARGO_BIN_EXE_ludus-anim"))
            .args(&args)
            .current_dir(d)
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(o.status.success(), "{args:?}: status {:?}: {err}", o.status);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}
