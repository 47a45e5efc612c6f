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
