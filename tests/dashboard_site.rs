//! The dashboard as `report` writes it: an index page plus per-asset
//! detail fragments (every clip's detail in exactly one fragment, none in
//! the index; fragments rewritten only when their content changes, stale
//! ones removed), and the threshold gate (a hero clip over its threshold
//! fails `--fail-on-regression` with no baseline; the rule can be off);
//! a cook sharded in two and merged gives the unsharded cook's pages.

#[path = "dashboard_common/mod.rs"]
mod common;

use common::*;
use ludus_anim_dashboard::html::site::render_site;
use ludus_anim_dashboard::{load_cook, run, Dashboard, HtmlOptions, ReportArgs};
use ludus_anim_report::rules::RegressionRules;
use ludus_anim_report::sidecar::{Sidecar, SIDECAR_FILE};
use std::path::{Path, PathBuf};

fn biped(dir: &Path, name: &str, profile: &str) -> PathBuf {
    let root = repo().join("fixtures");
    let files = vec![root.join("biped.glb")];
    let out = dir.join(name);
    cook_jobs(jobs(&files, &[]), &root, &out, profile, false);
    out
}

/// The HTML string inside a fragment script.
fn fragment_html(bytes: &[u8]) -> String {
    let text = String::from_utf8(bytes.to_vec()).expect("utf-8 fragment");
    let start = text.find(", ").expect("ludusDetails(key, html)") + 2;
    let end = text.rfind(");").expect("call closes");
    serde_json::from_str(&text[start..end]).expect("html literal")
}

#[test]
fn the_index_names_every_clip_and_fragments_hold_their_details() {
    let dir = tempfile::tempdir().unwrap();
    let cooks = vec![
        load_cook(&biped(dir.path(), "standard", "standard")).unwrap(),
        load_cook(&biped(dir.path(), "hero", "hero")).unwrap(),
    ];
    let d = Dashboard::new(cooks, None, RegressionRules::default());
    let site = render_site(&d, &HtmlOptions::default(), "report-details");
    assert!(!site.index.contains("<article"), "no detail in the index");
    assert_eq!(external_refs(&site.index), Vec::<String>::new());
    assert_eq!(site.fragments.len(), 2, "one fragment per cooked asset");
    let htmls: Vec<String> = site
        .fragments
        .iter()
        .map(|f| fragment_html(&f.bytes))
        .collect();
    for (f, html) in site.fragments.iter().zip(&htmls) {
        assert_eq!(external_refs(html), Vec::<String>::new(), "{}", f.name);
        let key = f.name.trim_end_matches(".js");
        assert!(
            site.index.contains(&format!("\"{key}\"")),
            "the index names {key}"
        );
    }
    for r in d.rows() {
        let article = format!("<article class=\"clip\" id=\"{}\">", r.id);
        let n = htmls.iter().filter(|h| h.contains(&article)).count();
        assert_eq!(n, 1, "{} is in exactly one fragment", r.id);
        assert!(site.index.contains(&format!("[\"{}\",", r.id)));
    }
    let again = render_site(&d, &HtmlOptions::default(), "report-details");
    assert_eq!(again.index, site.index, "same inputs, same bytes");
    assert_eq!(again.fragments, site.fragments);
}

#[test]
fn report_writes_a_fragment_only_when_it_changed() {
    let dir = tempfile::tempdir().unwrap();
    let out = biped(dir.path(), "standard", "standard");
    let args = ReportArgs {
        outs: vec![out.clone()],
        ..Default::default()
    };
    let first = run(&args).unwrap();
    assert_eq!((first.fragments_written, first.fragments_kept), (1, 0));
    let details = out.join("report-details");
    let stale = details.join("0123456789abcdef.js");
    let other = details.join("notes.txt");
    std::fs::write(&stale, "ludusDetails(\"x\", \"\");").unwrap();
    std::fs::write(&other, "kept").unwrap();
    let second = run(&args).unwrap();
    assert_eq!((second.fragments_written, second.fragments_kept), (0, 1));
    assert!(
        !stale.exists(),
        "a fragment the index does not name is removed"
    );
    assert!(other.exists(), "only fragment files are touched");
    let index = std::fs::read_to_string(out.join("report.html")).unwrap();
    assert!(index.contains("\"details\":\"report-details\""));
}

/// The cook in `out` with joint 1 of `clip` at 112.9 % of its threshold
/// at one checked time (what the page paints purple).
fn push_over_threshold(out: &Path, clip: &str) {
    let path = out.join(SIDECAR_FILE);
    let mut side = Sidecar::from_json(&std::fs::read(&path).unwrap()).unwrap();
    let c = side.clips.iter_mut().find(|c| c.clip == clip).unwrap();
    let times = c.time_count();
    c.error_q.0[times + times / 2] = 11_290;
    std::fs::write(&path, serde_json::to_vec(&side).unwrap()).unwrap();
}

#[test]
fn a_hero_clip_over_its_threshold_fails_the_gate() {
    let dir = tempfile::tempdir().unwrap();
    let out = biped(dir.path(), "hero", "hero");
    let mut args = ReportArgs {
        outs: vec![out.clone()],
        fail_on_regression: true,
        ..Default::default()
    };
    let clean = run(&args).unwrap();
    assert_eq!(clean.exit_code, 0, "within thresholds:\n{}", clean.stdout);
    assert!(clean
        .stdout
        .contains("Every clip is within its thresholds."));
    push_over_threshold(&out, "run");
    let over = run(&args).unwrap();
    assert_eq!(over.exit_code, 1, "{}", over.stdout);
    assert!(
        over.stdout.contains("Over threshold (1):") && over.stdout.contains("/ run (hero): joint "),
        "{}",
        over.stdout
    );
    assert!(
        over.stdout.contains("(112.9% of budget)"),
        "{}",
        over.stdout
    );
    let page = std::fs::read_to_string(&over.html).unwrap();
    assert!(page.contains("id=\"gate\"") && page.contains("<code>over_threshold</code>"));
    assert!(
        page.contains("112.9% of budget"),
        "the page names the failure"
    );
    args.rules.end_to_end_over_threshold = false;
    assert_eq!(
        run(&args).unwrap().exit_code,
        1,
        "the joint rule alone fails it"
    );
    args.rules.over_threshold = false;
    assert_eq!(run(&args).unwrap().exit_code, 0, "rules off");
}

/// A cook's results with every timing zeroed (they differ run to run).
fn untimed(out: &Path) -> ludus_anim_dashboard::Cook {
    let mut cook = load_cook(out).unwrap();
    cook.report = without_timings(cook.report);
    cook.label = "out".into();
    cook
}

#[test]
fn sharded_and_unsharded_cooks_give_the_same_pages() {
    let dir = tempfile::tempdir().unwrap();
    let proj = dir.path();
    for name in ["a", "b", "c"] {
        std::fs::copy(
            repo().join("fixtures/biped.glb"),
            proj.join(format!("{name}.glb")),
        )
        .unwrap();
    }
    let toml = "[project]\noutput = \"out\"\n\n[[asset]]\nsources = [\"*.glb\"]\n";
    std::fs::write(proj.join("ludus-anim.toml"), toml).unwrap();
    for args in [
        &["cook", "--quiet", "--out", "whole"][..],
        &["cook", "--quiet", "--out", "shards", "--shard", "1/2"],
        &["cook", "--quiet", "--out", "shards", "--shard", "2/2"],
        &["merge", "shards", "--out", "merged"],
    ] {
        let o = ludus_anim(args, proj);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
    }
    let page = |out: &str| {
        let d = Dashboard::new(vec![untimed(&proj.join(out))], None, Default::default());
        render_site(&d, &HtmlOptions::default(), "report-details")
    };
    let (whole, merged) = (page("whole"), page("merged"));
    assert_eq!(whole.fragments.len(), 3, "one fragment per asset");
    let plotted = |f: &ludus_anim_dashboard::html::site::Fragment| {
        String::from_utf8_lossy(&f.bytes).contains("heat map of error over threshold")
    };
    assert!(
        merged.fragments.iter().all(plotted),
        "per-time plots merged"
    );
    assert!(whole.fragments == merged.fragments, "the same fragments");
    assert!(whole.index == merged.index, "the same index");
}

/// The case the issue was filed on: the shared fixtures' Fox `Run` under
/// `hero` uses 112.9 % of `b_RightHand_08`'s threshold (purple in the
/// page); the gate fails it without a baseline.
#[test]
fn the_fox_run_under_hero_fails_the_gate() {
    let Some(fx) = shared_fixtures() else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("hero");
    let files = vec![fx.join("gltf/khronos_Fox.glb")];
    cook_jobs(jobs(&files, &[]), &fx, &out, "hero", false);
    let o = run(&ReportArgs {
        outs: vec![out],
        fail_on_regression: true,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(o.exit_code, 1, "{}", o.stdout);
    let line = "gltf/khronos_Fox.glb / Run (hero): joint b_RightHand_08 error 0.0282 mm \
                over its threshold 0.0250 mm (112.9% of budget)";
    assert!(o.stdout.contains(line), "{}", o.stdout);
    let end_to_end = "gltf/khronos_Fox.glb / Walk (hero): end-to-end error 0.1198 mm";
    assert!(o.stdout.contains(end_to_end), "{}", o.stdout);
}
