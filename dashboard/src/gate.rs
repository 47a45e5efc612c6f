//! The threshold gate: every clip of the current cooks over its threshold
//! is a regression, baseline or not, so what the page paints purple fails
//! `report --fail-on-regression`. Two rules, both on by default:
//!
//! - `over_threshold`: a joint's codec error exceeds that joint's own
//!   threshold (per joint and time from the sidecar; without one, the
//!   report's selected joints and worst joint, [`Row::ratio`]);
//! - `end_to_end_over_threshold`: the clip's end-to-end error (decoded
//!   against the authored curves) is outside its bound, which the cook
//!   already warns about (`end_to_end_error`), for any cause but
//!   [`STEP_CAUSE`]: a STEP key change inside a sample interval is the
//!   source's own jump, which no profile setting can follow; it stays a
//!   warning (and a regression when new, by `new_warnings`).

use crate::fmt::{mm, pct};
use crate::model::Row;
use ludus_anim_report::compare::{Regression, RegressionKind};
use ludus_anim_report::rules::RegressionRules;

/// The end-to-end cause the gate leaves to the warning.
pub const STEP_CAUSE: &str = "step_between_samples";

/// The joint that uses most of its threshold: (name, error, threshold).
fn worst_joint(r: &Row<'_>) -> (String, f32, f32) {
    if let Some(s) = r.sidecar.filter(|s| s.has_errors()) {
        let mut best = (0usize, 0.0f32, 0usize);
        for j in 0..s.joint_count() {
            let (ratio, t) = s.joint_worst(j);
            if ratio > best.1 {
                best = (j, ratio, t);
            }
        }
        let (j, _, t) = best;
        let name = s.joints.get(j).cloned().unwrap_or_default();
        return (name, s.error_m(j, t), s.thresholds_m.get(j).unwrap_or(0.0));
    }
    let c = r.clip;
    let selected = c
        .selected_joints
        .iter()
        .max_by(|a, b| (a.max_error_m / a.threshold_m).total_cmp(&(b.max_error_m / b.threshold_m)));
    match selected {
        Some(j) if j.max_error_m > j.threshold_m => (j.joint.clone(), j.max_error_m, j.threshold_m),
        _ => (c.worst_joint.clone(), c.max_error_m, r.worst_threshold()),
    }
}

/// The over-threshold lines of one clip under `rules` (none when it is
/// within), each with the rule's kind.
pub fn clip_failures(r: &Row<'_>, rules: &RegressionRules) -> Vec<(RegressionKind, String)> {
    let mut out = Vec::new();
    let ratio = r.ratio();
    if rules.over_threshold && ratio > 1.0 {
        let (joint, err, th) = worst_joint(r);
        let line = format!(
            "joint {joint} error {} over its threshold {} ({} of budget)",
            mm(err),
            mm(th),
            pct(ratio)
        );
        out.push((RegressionKind::OverThreshold, line));
    }
    let gated =
        |e: &&ludus_anim_report::EndToEnd| !e.within && e.cause.as_deref() != Some(STEP_CAUSE);
    let end_to_end = r.clip.end_to_end.as_ref().filter(gated);
    if let Some(e) = end_to_end.filter(|_| rules.end_to_end_over_threshold) {
        let cause = e
            .cause
            .as_deref()
            .map_or(String::new(), |c| format!(", cause {c}"));
        let line = format!(
            "end-to-end error {} at joint {} over its threshold {}{cause}",
            mm(e.error_m),
            e.joint,
            mm(e.threshold_m)
        );
        out.push((RegressionKind::EndToEndOverThreshold, line));
    }
    out
}

/// Every over-threshold clip of `rows`, one regression per failure line.
pub fn over_threshold(rows: &[Row<'_>], rules: &RegressionRules) -> Vec<Regression> {
    let mut out = Vec::new();
    for r in rows {
        let key = r.key();
        for (kind, line) in clip_failures(r, rules) {
            out.push(Regression {
                kind,
                source: key.source.clone(),
                message: format!("{key}: {line}"),
                clip: Some(key.clone()),
            });
        }
    }
    out
}
