//! The gate: every rule `report --fail-on-regression` applies, with its
//! setting (the manifest's `[report.regressions]`, else the defaults),
//! and every clip over its threshold, each line naming the clip.

use crate::html::svg::esc;
use crate::model::Dashboard;
use ludus_anim_report::rules::RegressionRules;
use std::fmt::Write;

/// Failures listed before the rest are folded away.
const FIRST: usize = 10;

fn on(b: bool) -> String {
    if b { "on" } else { "off" }.to_string()
}

fn pct(p: Option<f64>) -> String {
    p.map_or("off".to_string(), |p| format!("+{p}%"))
}

/// (manifest key, setting, what it catches), in the order they are checked.
pub fn rule_list(r: &RegressionRules) -> Vec<(&'static str, String, &'static str)> {
    vec![
        ("over_threshold", on(r.over_threshold), "any clip with a joint's error over that joint's threshold (the budget column over 100%) — no baseline needed"),
        ("end_to_end_over_threshold", on(r.end_to_end_over_threshold), "any clip whose error against the authored curves is outside its bound (but for STEP keys between samples, a warning) — no baseline needed"),
        ("max_error_over_budget", on(r.max_error_over_budget), "max error over the baseline's threshold where tighter"),
        ("max_error_pct", pct(r.max_error_pct), "max error grew by more than this"),
        ("p99_error_pct", pct(r.p99_error_pct), "p99 error grew by more than this"),
        ("bytes_pct", pct(r.bytes_pct), "compressed bytes grew by more than this"),
        ("decode_pct", pct(r.decode_pct), "decode ns/pose grew by more than this (both cooks timed)"),
        ("decode_min_ns", format!("{}", r.decode_min_ns), "smaller decode increases never count"),
        ("new_warnings", on(r.new_warnings), "a warning the baseline did not have"),
        ("clip_missing", on(r.clip_missing), "a baseline clip absent now"),
        ("clip_added", on(r.clip_added), "a clip the baseline did not have"),
        ("asset_failed", on(r.asset_failed), "an asset that cooked in the baseline failed"),
    ]
}

pub fn render(s: &mut String, d: &Dashboard) {
    s.push_str("<section id=\"gate\"><h2>Gate</h2>");
    if !d.rules.over_threshold && !d.rules.end_to_end_over_threshold {
        s.push_str("<p class=\"muted\">The over-threshold rules are off.</p>");
    } else if d.gate.is_empty() {
        s.push_str("<p>Every clip is within its thresholds.</p>");
    } else {
        let _ = write!(
            s,
            "<p class=\"worse\">{} clip failure(s) over threshold: <code>report --fail-on-regression</code> exits 1.</p><ul class=\"regressions\">",
            d.gate.len()
        );
        let shown = d.gate.len().min(super::LIST_MAX);
        for (i, r) in d.gate.iter().take(shown).enumerate() {
            if i == FIRST && shown > FIRST {
                let _ = write!(
                    s,
                    "</ul><details><summary>{} more</summary><ul class=\"regressions\">",
                    d.gate.len() - FIRST
                );
            }
            let _ = write!(s, "<li>{}</li>", esc(&r.message));
        }
        s.push_str("</ul>");
        if shown > FIRST {
            s.push_str("</details>");
        }
        super::more(s, d.gate.len(), "the text summary lists them all");
    }
    s.push_str("<details><summary>Rules of <code>--fail-on-regression</code></summary><div class=\"scroll\"><table id=\"rules\"><thead><tr><th>rule</th><th>setting</th><th>fails when</th></tr></thead><tbody>");
    for (key, setting, what) in rule_list(&d.rules) {
        let _ = write!(
            s,
            "<tr><td><code>{key}</code></td><td>{}</td><td>{}</td></tr>",
            esc(&setting),
            esc(what)
        );
    }
    s.push_str("</tbody></table></div></details></section>");
}
