//! Golden text: the summary of a cook, and regression detection for a
//! cook at two thresholds (both ways) and a cook with one clip changed.
//! The bundled biped (`fixtures/biped.glb`: idle, walk, run) is cooked
//! for real through the cooker library with timings zeroed, so the text is
//! exact; the snapshots live in `tests/snapshots/`.

#[path = "dashboard_common/mod.rs"]
mod common;

use common::fixtures::standard_at;
use common::*;
use ludus_anim_dashboard::{render_text, Cook, Dashboard};
use ludus_anim_report::rules::RegressionRules;
use std::path::Path;

fn biped_cook(dir: &Path, name: &str, profile: &str, walk_profile: Option<&Path>) -> Cook {
    let root = repo().join("fixtures");
    let mut entry = settings("sources = []");
    if let Some(p) = walk_profile {
        entry = settings(&format!(
            "sources = []\n[clips.walk]\nprofile = '{}'\n",
            p.display()
        ));
    }
    let files = vec![root.join("biped.glb")];
    let extra = [("biped.glb", entry)];
    let out = dir.join(name);
    let rep = without_timings(cook_jobs(jobs(&files, &extra), &root, &out, profile, false));
    let side = cook_sidecar(&out);
    Cook::new(name, rep, Some(side))
}

fn summary(current: Cook, baseline: Option<Cook>) -> String {
    render_text(&Dashboard::new(
        vec![current],
        baseline,
        RegressionRules::default(),
    ))
}

#[test]
fn text_summary_of_the_bundled_cook() {
    let dir = tempfile::tempdir().unwrap();
    let cook = biped_cook(dir.path(), "standard", "standard", None);
    insta::assert_snapshot!("summary_standard", summary(cook, None));
}

#[test]
fn regressions_of_a_cook_at_two_thresholds() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let loose = standard_at(d, 0.0002);
    let tight = biped_cook(d, "tight", "standard", None);
    let looser = biped_cook(d, "loose", &loose.display().to_string(), None);
    // Loosened: errors grow past the old budget; bytes shrink (not a regression).
    let text = summary(looser.clone(), Some(tight.clone()));
    assert!(text.contains("over its budget 0.1000 mm"), "{text}");
    insta::assert_snapshot!("regressions_loosened", text);
    // Tightened: bytes grow past +2 %; errors shrink.
    let text = summary(tight, Some(looser));
    assert!(text.contains("compressed bytes"), "{text}");
    insta::assert_snapshot!("regressions_tightened", text);
}

#[test]
fn regressions_of_a_cook_with_one_clip_changed() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tight = standard_at(d, 0.00005);
    let base = biped_cook(d, "baseline", "standard", Some(&tight));
    let cur = biped_cook(d, "current", "standard", None);
    let text = summary(cur, Some(base));
    let regressed: Vec<&str> = text.lines().filter(|l| l.starts_with("  - ")).collect();
    assert!(
        !regressed.is_empty()
            && regressed
                .iter()
                .all(|l| l.contains("biped.glb / walk (standard)")),
        "{text}"
    );
    insta::assert_snapshot!("regressions_one_clip_changed", text);
}

#[test]
fn identical_cooks_have_no_regressions() {
    let dir = tempfile::tempdir().unwrap();
    let a = biped_cook(dir.path(), "a", "standard", None);
    let text = summary(a.clone(), Some(a));
    assert!(
        text.contains("0 worse, 0 better, 3 unchanged, 0 added, 0 removed"),
        "{text}"
    );
    assert!(text.contains("No regressions."), "{text}");
}
