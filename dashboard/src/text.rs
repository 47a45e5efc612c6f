//! The text summary `ludus-anim report` prints (and its `--json` twin):
//! totals per profile, the top-10 worst offenders (clips by budget used,
//! then bytes; the largest clips; joints with the time they peak) and the
//! clips over their thresholds and the regressions against the baseline,
//! each named.

use crate::fmt::{int, mm, pct};
use crate::model::{Dashboard, ProfileTotals, Row, TOP};
use ludus_anim_report::compare::{ClipChange, Regression};
use serde::Serialize;
use std::fmt::Write;

/// The whole summary, ending in a newline.
pub fn render_text(d: &Dashboard) -> String {
    let mut s = String::new();
    header(&mut s, d);
    totals(&mut s, &d.profiles());
    worst(&mut s, d);
    gate(&mut s, d);
    regressions(&mut s, d);
    for n in d.notices() {
        let _ = writeln!(s, "notice: {n}");
    }
    s
}

fn header(s: &mut String, d: &Dashboard) {
    let rows = d.rows();
    let assets: usize = d.cooks.iter().map(|c| c.report.assets.len()).sum();
    let cooks = d.cooks.len();
    let _ = writeln!(
        s,
        "ludus-anim report: {} clip{} in {} asset{} ({} failed), {} cook{}",
        rows.len(),
        plural(rows.len()),
        assets,
        plural(assets),
        d.failed_assets(),
        cooks,
        plural(cooks)
    );
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

fn totals(s: &mut String, profiles: &[ProfileTotals]) {
    let _ = writeln!(s, "\nTotals per profile");
    let _ = writeln!(
        s,
        "  {:<10} {:>5} {:>12} {:>11} {:>7} {:>11} {:>11} {:>7} {:>8} {:>10}",
        "profile",
        "clips",
        "raw B",
        "compressed",
        "ratio",
        "max error",
        "max p99",
        "budget",
        "warnings",
        "decode ns"
    );
    for t in profiles {
        let _ = writeln!(
            s,
            "  {:<10} {:>5} {:>12} {:>11} {:>6.2}:1 {:>11} {:>11} {:>7} {:>8} {:>10.0}",
            t.profile,
            t.clips,
            int(t.raw_bytes),
            int(t.compressed_bytes),
            t.ratio,
            mm(t.max_error_m),
            mm(t.max_p99_error_m),
            pct(t.worst_budget),
            t.warnings,
            t.mean_decode_ns
        );
    }
}

fn clip_line(r: &Row<'_>) -> String {
    format!("{} / {} ({})", r.asset.source, r.clip.name, r.clip.profile)
}

fn worst(s: &mut String, d: &Dashboard) {
    let _ = writeln!(
        s,
        "\nClosest to their error budget (max error / threshold, then bytes)"
    );
    for (i, r) in d.worst_clips(TOP).iter().enumerate() {
        let _ = writeln!(
            s,
            "  {:>2}. {:>6}  {} of {}  {:>9} B  {}  worst {} at {:.3} s",
            i + 1,
            pct(r.ratio()),
            mm(r.clip.max_error_m),
            mm(r.worst_threshold()),
            int(r.clip.compressed_bytes),
            clip_line(r),
            r.clip.worst_joint,
            r.clip.worst_time_s
        );
    }
    let _ = writeln!(s, "\nLargest clips (compressed bytes)");
    for (i, r) in d.largest_clips(TOP).iter().enumerate() {
        let _ = writeln!(
            s,
            "  {:>2}. {:>9} B  {:>6.2}:1  {:>6} of budget  {}",
            i + 1,
            int(r.clip.compressed_bytes),
            r.clip.ratio,
            pct(r.ratio()),
            clip_line(r)
        );
    }
    let _ = writeln!(
        s,
        "\nWorst joints (error / threshold, with the time it peaks)"
    );
    for (i, j) in d.worst_joints(TOP).iter().enumerate() {
        let at = j.time_s.map_or(String::new(), |t| format!(" at {t:.3} s"));
        let _ = writeln!(
            s,
            "  {:>2}. {:>6}  {}{}  {} of {}  {}",
            i + 1,
            pct(j.ratio),
            j.joint,
            at,
            mm(j.error_m),
            mm(j.threshold_m),
            clip_line(&j.row)
        );
    }
}

/// The `over_threshold` rule's verdict (nothing when the rule is off).
fn gate(s: &mut String, d: &Dashboard) {
    if !d.rules.over_threshold && !d.rules.end_to_end_over_threshold {
        return;
    }
    if d.gate.is_empty() {
        let _ = writeln!(s, "\nEvery clip is within its thresholds.");
        return;
    }
    let _ = writeln!(s, "\nOver threshold ({}):", d.gate.len());
    for r in &d.gate {
        let _ = writeln!(s, "  - {}", r.message);
    }
}

fn regressions(s: &mut String, d: &Dashboard) {
    let (Some(c), Some(b)) = (&d.comparison, &d.baseline) else {
        let _ = writeln!(
            s,
            "\nNo baseline (pass --baseline OLD_OUT to list what changed)"
        );
        return;
    };
    let _ = writeln!(
        s,
        "\nAgainst the baseline {}: {} worse, {} better, {} unchanged, {} added, {} removed",
        b.label,
        c.count(ClipChange::Worse),
        c.count(ClipChange::Better),
        c.count(ClipChange::Unchanged),
        c.count(ClipChange::Added),
        c.count(ClipChange::Removed)
    );
    if c.regressions.is_empty() {
        let _ = writeln!(s, "No regressions.");
        return;
    }
    let _ = writeln!(s, "Regressions ({}):", c.regressions.len());
    for r in &c.regressions {
        let _ = writeln!(s, "  - {}", r.message);
    }
}

#[derive(Serialize)]
struct JsonClip<'a> {
    source: &'a str,
    clip: &'a str,
    profile: &'a str,
    compressed_bytes: u64,
    max_error_m: f32,
    threshold_m: f32,
    budget: f32,
    worst_joint: &'a str,
    worst_time_s: f32,
}

impl<'a> From<&Row<'a>> for JsonClip<'a> {
    fn from(r: &Row<'a>) -> Self {
        JsonClip {
            source: &r.asset.source,
            clip: &r.clip.name,
            profile: &r.clip.profile,
            compressed_bytes: r.clip.compressed_bytes,
            max_error_m: r.clip.max_error_m,
            threshold_m: r.clip.threshold_m,
            budget: r.ratio(),
            worst_joint: &r.clip.worst_joint,
            worst_time_s: r.clip.worst_time_s,
        }
    }
}

#[derive(Serialize)]
struct JsonSummary<'a> {
    clips: usize,
    assets_failed: usize,
    profiles: Vec<ProfileTotals>,
    worst_clips: Vec<JsonClip<'a>>,
    largest_clips: Vec<JsonClip<'a>>,
    baseline: Option<&'a str>,
    regressions: Vec<&'a Regression>,
    notices: Vec<&'a str>,
}

/// The summary as JSON (`report --json`): the same lists as the text.
pub fn render_json(d: &Dashboard) -> String {
    let summary = JsonSummary {
        clips: d.rows().len(),
        assets_failed: d.failed_assets(),
        profiles: d.profiles(),
        worst_clips: d.worst_clips(TOP).iter().map(JsonClip::from).collect(),
        largest_clips: d.largest_clips(TOP).iter().map(JsonClip::from).collect(),
        baseline: d.baseline.as_ref().map(|b| b.label.as_str()),
        regressions: d.regressions(),
        notices: d.notices(),
    };
    let mut s = serde_json::to_string_pretty(&summary)
        .unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
