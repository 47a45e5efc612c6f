//! `ludus-anim report` from the command line: the page is written beside
//! the report with no external reference, and a regression against a
//! baseline fails the gate, with the manifest's `[report]` rules applied.

mod common;
use common::*;

fn cook(dir: &std::path::Path, out: &str, profile: &str) {
    let o = ludus_anim(&["cook", "biped.glb", "-o", out, "--profile", profile], dir);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn report_writes_the_page_and_gates_on_regressions() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(repo().join("fixtures/biped.glb"), d.join("biped.glb")).unwrap();
    let tight = std::fs::read_to_string(repo().join("profiles/standard.toml"))
        .unwrap()
        .replace("error_threshold_m = 0.0001", "error_threshold_m = 0.00002");
    std::fs::write(d.join("tight.toml"), tight).unwrap();
    cook(d, "base", "standard");
    cook(d, "tight", "tight.toml");

    let o = ludus_anim(&["report", "base"], d);
    assert!(o.status.success(), "{}", text(&o));
    let page = std::fs::read_to_string(d.join("base/report.html")).unwrap();
    assert!(page.contains("walk") && page.contains("<table"));
    assert!(!page.contains("http://") && !page.contains("https://"));

    // Tighter thresholds: more bytes, a regression by the default rules.
    let o = ludus_anim(
        &[
            "report",
            "tight",
            "--baseline",
            "base",
            "--fail-on-regression",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("Regressions"),
        "{}",
        text(&o)
    );

    // The manifest turns the byte rule off (and the decode-time rule, whose
    // figures are wall-clock noise on a shared CI machine): the gate passes.
    std::fs::write(
        d.join("ludus-anim.toml"),
        "[[asset]]\nsources = [\"biped.glb\"]\n\n[report.regressions]\nbytes_pct = false\ndecode_pct = false\n",
    )
    .unwrap();
    let o = ludus_anim(
        &[
            "report",
            "tight",
            "--baseline",
            "base",
            "--fail-on-regression",
        ],
        d,
    );
    assert!(o.status.success(), "{}", text(&o));
    let o = ludus_anim(&["report", "tight", "--json"], d);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.is_object(), "{v}");
}
