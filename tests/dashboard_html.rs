//! The HTML page: every section and plot kind rendered (a real biped cook
//! under two profiles with its sidecar, a baseline, and a synthetic
//! retarget block), nothing that could fetch from outside, the embedded
//! data, determinism; the `report` command's exit codes and JSON; and on
//! the shared fixtures, a realistic sidecar whose maxima are the cook's
//! own, with the sizes the docs quote.

#[path = "dashboard_common/mod.rs"]
mod common;

use common::fixtures::standard_at;
use common::*;
use ludus_anim_dashboard::{render_html, run, Cook, Dashboard, HtmlOptions, ReportArgs};
use ludus_anim_report::packed::Packed;
use ludus_anim_report::rules::RegressionRules;
use ludus_anim_report::sidecar::{FootTrack, RetargetSidecar, Skate, TimeSpan, SIDECAR_FILE};
use std::path::Path;

fn biped(dir: &Path, name: &str, profile: &str, walk_profile: Option<&Path>) -> std::path::PathBuf {
    let root = repo().join("fixtures");
    let text = match walk_profile {
        Some(p) => format!("sources = []\n[clips.walk]\nprofile = '{}'\n", p.display()),
        None => "sources = []\n[clips.walk]\nloop = 'loop'\nroot_motion = { joint = 'Root', policy = 'planar' }\nmarkers = [{ name = 'step', time_s = 0.3, kind = 'event' }, { name = 'foot_l', time_s = 0.0, kind = 'sync' }]\n".to_string(),
    };
    let files = vec![root.join("biped.glb")];
    let extra = [("biped.glb", settings(&text))];
    let out = dir.join(name);
    cook_jobs(jobs(&files, &extra), &root, &out, profile, false);
    out
}

fn retarget_block(duration: f32) -> RetargetSidecar {
    let n = (duration * 30.0) as usize + 1;
    let h: Vec<f32> = (0..n)
        .map(|i| (0.08 * (i as f32 * 0.4).sin()).max(0.0))
        .collect();
    let v: Vec<f32> = (0..n).map(|i| 1.2 * (i as f32 * 0.4).sin().abs()).collect();
    RetargetSidecar {
        profile: "biped-to-robot".into(),
        rate_hz: 30.0,
        axes: None,
        feet: vec![FootTrack {
            joint: "LeftFoot".into(),
            height_m: Packed(h),
            speed_mps: Packed(v),
            contacts: vec![TimeSpan {
                start_s: 0.1,
                end_s: 0.4,
            }],
            skates: vec![Skate {
                start_s: 0.2,
                end_s: 0.25,
                slide_m: 0.012,
            }],
        }],
    }
}

/// Standard (walk with root motion, events and a synthetic retarget
/// block), hero, and a baseline whose walk was cooked tighter.
fn page(dir: &Path) -> (Dashboard, String) {
    let tight = standard_at(dir, 0.00005);
    let std_out = biped(dir, "standard", "standard", None);
    let hero_out = biped(dir, "hero", "hero", None);
    let base_out = biped(dir, "baseline", "standard", Some(&tight));
    let mut std_cook = ludus_anim_dashboard::load_cook(&std_out).unwrap();
    if let Some(s) = std_cook.sidecar.as_mut() {
        let walk = s.clips.iter_mut().find(|c| c.clip == "walk").unwrap();
        walk.retarget = Some(retarget_block(walk.duration_s));
    }
    let hero = ludus_anim_dashboard::load_cook(&hero_out).unwrap();
    let base = ludus_anim_dashboard::load_cook(&base_out).unwrap();
    let d = Dashboard::new(vec![std_cook, hero], Some(base), RegressionRules::default());
    let html = render_html(&d, &HtmlOptions::default());
    (d, html)
}

#[test]
fn every_section_and_plot_kind_renders_without_external_references() {
    let dir = tempfile::tempdir().unwrap();
    let (d, html) = page(dir.path());
    assert_eq!(external_refs(&html), Vec::<String>::new());
    for id in [
        "totals",
        "changes",
        "worst",
        "clips",
        "profiles",
        "details",
        "clip-table",
        "ludus-data",
        "gate",
        "rules",
        "pareto",
    ] {
        assert!(
            html.contains(&format!("id=\"{id}\"")),
            "section {id} missing"
        );
    }
    for r in d.rows() {
        assert!(
            html.contains(&format!("<article class=\"clip\" id=\"{}\">", r.id)),
            "{}",
            r.id
        );
        assert!(
            html.contains(&format!("[\"{}\",", r.id)),
            "no table row for {}",
            r.id
        );
    }
    for label in [
        "error over time of the worst joints",
        "heat map of error over threshold by joint and time",
        "bit rates per track",
        "root-motion trajectory, top view",
        "events and markers on the timeline",
        "foot curve with contact and skate bands",
        "compressed bytes against max error per clip and profile",
        "total compressed bytes against max error per profile",
    ] {
        assert!(
            html.contains(&format!("aria-label=\"{label}\"")),
            "no plot '{label}'"
        );
    }
    assert!(
        html.contains("data:image/png;base64,iVBORw0KGgo"),
        "heat map image"
    );
    assert!(
        html.contains("Since the baseline: Worse"),
        "walk changed since the baseline"
    );
    let data = html
        .split("id=\"ludus-data\">")
        .nth(1)
        .and_then(|s| s.split("</script>").next())
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(v["rows"].as_array().map(Vec::len), Some(d.rows().len()));
    assert_eq!(
        render_html(&d, &HtmlOptions::default()),
        html,
        "same inputs, same bytes"
    );
}

#[test]
fn report_command_writes_the_page_and_exits_by_the_rules() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let tight = standard_at(d, 0.00005);
    let cur = biped(d, "current", "standard", None);
    let base = biped(d, "baseline", "standard", Some(&tight));
    let mut args = ReportArgs {
        outs: vec![cur.clone()],
        baseline: Some(base),
        ..Default::default()
    };
    let out = run(&args).unwrap();
    assert_eq!(out.exit_code, 0, "no --fail-on-regression");
    assert_eq!(out.html, cur.join("report.html"));
    assert!(out.html.is_file() && out.regressions > 0);
    assert!(out.stdout.contains("Regressions ("), "{}", out.stdout);
    args.fail_on_regression = true;
    assert_eq!(run(&args).unwrap().exit_code, 1);
    args.json = true;
    let v: serde_json::Value = serde_json::from_str(&run(&args).unwrap().stdout).unwrap();
    assert!(v["regressions"].as_array().is_some_and(|r| !r.is_empty()));
    args.rules.max_error_over_budget = false;
    args.rules.max_error_pct = None;
    args.rules.p99_error_pct = None;
    args.rules.decode_pct = None;
    let off = run(&args).unwrap();
    assert_eq!(off.exit_code, 0, "rules switched off: {}", off.stdout);
    let missing = run(&ReportArgs {
        outs: vec![d.join("nothing")],
        ..Default::default()
    })
    .unwrap_err();
    assert!(missing.to_string().contains("nothing"), "{missing}");
}

#[test]
fn a_broken_sidecar_is_a_notice_not_a_failure() {
    let dir = tempfile::tempdir().unwrap();
    let out = biped(dir.path(), "standard", "standard", None);
    std::fs::write(
        out.join(SIDECAR_FILE),
        b"{\"version\": 1, \"cooker_version\": 3}",
    )
    .unwrap();
    let cook = ludus_anim_dashboard::load_cook(&out).unwrap();
    assert!(cook.sidecar.is_none());
    assert!(
        cook.notices[0].contains("report-sidecar.json"),
        "{:?}",
        cook.notices
    );
    let d = Dashboard::new(vec![cook], None, RegressionRules::default());
    let html = render_html(&d, &HtmlOptions::default());
    assert!(html.contains("No per-time data for this clip"));
    assert!(ludus_anim_dashboard::render_text(&d).contains("notice: "));
}

#[test]
fn fixture_sidecars_hold_the_cooks_own_errors() {
    let Some(f) = common::fixtures::fixture_cooks() else {
        return;
    };
    let cook = ludus_anim_dashboard::load_cook(&f.standard).unwrap();
    let side = cook.sidecar.as_ref().expect("sidecar written");
    let bytes = std::fs::metadata(f.standard.join(SIDECAR_FILE))
        .unwrap()
        .len();
    let mut sizes: Vec<usize> = side
        .clips
        .iter()
        .map(|c| serde_json::to_string(c).unwrap().len())
        .collect();
    sizes.sort_unstable();
    eprintln!(
        "sidecar: {} clips, {bytes} bytes; per clip min {} median {} max {}",
        side.clips.len(),
        sizes[0],
        sizes[sizes.len() / 2],
        sizes[sizes.len() - 1]
    );
    for a in &cook.report.assets {
        for c in &a.clips {
            let s = side
                .clip(&a.source, &c.name, &c.profile)
                .expect("every clip has a sidecar entry");
            assert_eq!(s.time_count(), c.times_checked, "{} {}", a.source, c.name);
            let worst = (0..s.joint_count())
                .map(|j| s.error_m(j, s.joint_worst(j).1))
                .fold(0.0, f32::max);
            // The sidecar stores 1/10000 of each threshold, as measured;
            // the report adds the clip's f32 floor.
            let floor = c.checks.as_ref().map_or(0.0, |k| k.f32_floor_m);
            assert!(
                (worst + floor - c.max_error_m).abs() <= 1e-8 + c.threshold_m * 1e-4,
                "{} {}: {worst} vs {}",
                a.source,
                c.name,
                c.max_error_m
            );
        }
    }
    let cooks: Vec<Cook> = [&f.standard, &f.hero, &f.crowd]
        .iter()
        .map(|p| ludus_anim_dashboard::load_cook(p).unwrap())
        .collect();
    let d = Dashboard::new(cooks, None, RegressionRules::default());
    let html = render_html(&d, &HtmlOptions::default());
    eprintln!("html: {} bytes for {} clips", html.len(), d.rows().len());
    assert_eq!(d.rows().len(), f.clips);
    assert_eq!(external_refs(&html), Vec::<String>::new());
}
