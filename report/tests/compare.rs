//! Baseline comparison on small hand-made reports: matching (exact and by
//! file name), every rule firing and not firing, and the order of output.

use ludus_anim_report::compare::{compare, ClipChange, Metric, RegressionKind};
use ludus_anim_report::rules::RegressionRules;
use ludus_anim_report::{AssetStatus, Report};
use serde_json::{json, Value};

fn clip(name: &str, bytes: u64, err_mm: f32, decode_ns: f64) -> Value {
    json!({
        "name": name, "profile": "standard", "joints": 2, "samples": 10,
        "sample_rate_hz": 30.0, "duration_s": 0.3, "loop": "once",
        "loop_seam_error_m": null, "root_motion": null, "additive_reference": null,
        "events": 0, "markers": 0, "codec": "vbr", "codec_version": 2,
        "raw_bytes": 800, "compressed_bytes": bytes, "ratio": 1.0,
        "resample_error_m": 0.0, "max_error_m": err_mm / 1000.0,
        "p99_error_m": err_mm / 2000.0, "max_rotation_error_deg": 0.0,
        "source_error_m": 0.0, "threshold_m": 0.0001, "worst_joint": "a",
        "worst_time_s": 0.0, "times_checked": 19, "selected_joints": [],
        "curves": {"count": 0, "max_error": {}}, "compress_ms": 1.0,
        "decode_ns_per_pose": decode_ns, "warnings": []
    })
}

fn report(source: &str, clips: Vec<Value>) -> Report {
    serde_json::from_value(json!({
        "cooker_version": "t", "profile": "standard",
        "assets": [{
            "source": source, "source_hash": "00", "format": "glb", "status": "ok",
            "diagnostics": [], "decisions": [], "package": "packages/a.ludanim",
            "package_bytes": 1000, "skeleton": null, "clips": clips
        }],
        "totals": {"assets": 1, "assets_failed": 0, "clips": 0, "raw_bytes": 0,
            "compressed_bytes": 0, "package_bytes": 0, "ratio": 0.0, "max_error_m": 0.0,
            "warnings": 0, "cook_ms": 0.0, "peak_rss_mb": 0.0},
        "stages": {}
    }))
    .expect("test report parses")
}

fn kinds(base: &Report, cur: &Report, rules: &RegressionRules) -> Vec<RegressionKind> {
    compare(&[base], &[cur], rules)
        .regressions
        .iter()
        .map(|r| r.kind)
        .collect()
}

#[test]
fn identical_cooks_have_no_regressions_and_nothing_worse() {
    let r = report("a.glb", vec![clip("walk", 100, 0.05, 300.0)]);
    let c = compare(&[&r], &[&r], &RegressionRules::default());
    assert!(!c.has_regressions());
    assert_eq!(c.count(ClipChange::Unchanged), 1);
}

#[test]
fn each_rule_fires_past_its_limit_only() {
    let rules = RegressionRules::default();
    let base = report("a.glb", vec![clip("walk", 1000, 0.05, 300.0)]);
    let small = report("a.glb", vec![clip("walk", 1019, 0.054, 320.0)]);
    assert_eq!(kinds(&base, &small, &rules), vec![]);
    let big = report("a.glb", vec![clip("walk", 1021, 0.056, 340.0)]);
    assert_eq!(
        kinds(&base, &big, &rules),
        vec![
            RegressionKind::MaxError,
            RegressionKind::Bytes,
            RegressionKind::DecodeTime
        ]
    );
    // Over budget: the worst joint over its own (listed) threshold ...
    let mut over = clip("walk", 1000, 0.12, 300.0);
    over["selected_joints"] =
        json!([{"joint": "a", "max_error_m": 0.00012, "threshold_m": 0.0001}]);
    let over = report("a.glb", vec![over]);
    assert!(kinds(&base, &over, &rules).contains(&RegressionKind::MaxErrorOverBudget));
    // ... or within a loosened threshold but over the baseline's.
    let mut loose = clip("walk", 900, 0.15, 300.0);
    loose["threshold_m"] = json!(0.0002);
    let loose = report("a.glb", vec![loose]);
    let c = compare(&[&base], &[&loose], &rules);
    let msg = &c
        .regressions
        .iter()
        .find(|r| r.kind == RegressionKind::MaxErrorOverBudget)
        .unwrap()
        .message;
    assert!(
        msg.ends_with("max error 0.1500 mm over its budget 0.1000 mm"),
        "{msg}"
    );
    // Unlisted worst joint, same thresholds: verification held it within
    // its own threshold, whatever the tightest joint's is.
    let hero = report("a.glb", vec![clip("walk", 1000, 0.12, 300.0)]);
    assert!(!kinds(&base, &hero, &rules).contains(&RegressionKind::MaxErrorOverBudget));
    // Unmeasured decode time never counts.
    let unmeasured = report("a.glb", vec![clip("walk", 1000, 0.05, 0.0)]);
    assert_eq!(kinds(&unmeasured, &base, &rules), vec![]);
}

#[test]
fn messages_name_the_clip_and_the_figures() {
    let base = report("a.glb", vec![clip("walk", 1000, 0.05, 300.0)]);
    let cur = report("a.glb", vec![clip("walk", 1100, 0.05, 300.0)]);
    let c = compare(&[&base], &[&cur], &RegressionRules::default());
    assert_eq!(
        c.regressions[0].message,
        "a.glb / walk (standard): compressed bytes 1000 -> 1100 (+10.0%, rule +2%)"
    );
    assert_eq!(c.clips[0].worse, vec![Metric::Bytes]);
}

#[test]
fn missing_added_and_new_warnings() {
    let base = report(
        "a.glb",
        vec![clip("walk", 10, 0.05, 0.0), clip("run", 10, 0.05, 0.0)],
    );
    let mut warned = clip("walk", 10, 0.05, 0.0);
    warned["warnings"] = json!(["resample error above the profile's"]);
    let cur = report("a.glb", vec![warned, clip("jump", 10, 0.05, 0.0)]);
    let mut rules = RegressionRules::default();
    assert_eq!(
        kinds(&base, &cur, &rules),
        vec![RegressionKind::ClipMissing, RegressionKind::NewWarning]
    );
    rules.clip_added = true;
    rules.new_warnings = false;
    assert_eq!(
        kinds(&base, &cur, &rules),
        // By clip: jump (added) before run (missing).
        vec![RegressionKind::ClipAdded, RegressionKind::ClipMissing]
    );
    let c = compare(&[&base], &[&cur], &rules);
    let order: Vec<ClipChange> = c.clips.iter().map(|d| d.change).collect();
    assert_eq!(
        order,
        vec![ClipChange::Worse, ClipChange::Removed, ClipChange::Added]
    );
}

#[test]
fn clips_match_by_file_name_across_roots_and_failures_are_reported_once() {
    let base = report("/farm/a/walk.glb", vec![clip("walk", 10, 0.05, 0.0)]);
    let cur = report("/home/me/walk.glb", vec![clip("walk", 11, 0.05, 0.0)]);
    let c = compare(&[&base], &[&cur], &RegressionRules::default());
    assert_eq!(c.clips.len(), 1, "{:?}", c.clips);
    assert_eq!(c.regressions[0].kind, RegressionKind::Bytes);

    let mut failed = report("/farm/a/walk.glb", vec![]);
    failed.assets[0].status = AssetStatus::Failed;
    let k = kinds(&base, &failed, &RegressionRules::default());
    assert_eq!(k, vec![RegressionKind::AssetFailed]);
}

#[test]
fn a_warning_with_other_figures_is_not_new_but_another_joint_is() {
    let warned = |w: &str| {
        let mut c = clip("walk", 10, 0.05, 0.0);
        c["warnings"] = json!([w]);
        report("a.glb", vec![c])
    };
    let base = warned("the cooked clip is 0.1198 mm from the authored curves at joint 'Hand', over its 0.1000 mm threshold");
    let tighter = warned("the cooked clip is 0.1201 mm from the authored curves at joint 'Hand', over its 0.0200 mm threshold");
    let other = warned("the cooked clip is 0.1198 mm from the authored curves at joint 'Foot', over its 0.1000 mm threshold");
    let rules = RegressionRules::default();
    assert_eq!(kinds(&base, &tighter, &rules), vec![]);
    assert_eq!(
        kinds(&base, &other, &rules),
        vec![RegressionKind::NewWarning]
    );
}
