//! Baseline vs current cooks: clips matched by asset source, clip name and
//! profile; per-clip deltas; regressions by explicit [`RegressionRules`].
//!
//! Matching: exact `(source, clip, profile)` first; clips left over on
//! both sides are then paired by `(file name of source, clip, profile)`
//! where that is unique on both sides, so cooks of the same tree from
//! different absolute paths still compare. A clip of an asset that failed
//! now is reported once, as the asset's failure, not as missing.
//!
//! "Worse" (what the dashboard lists first) is any increase of bytes, max
//! or p99 error, a new warning, or a decode-time increase past the noise
//! margin of the decode rule; "regressed" is what the rules say.

use crate::rules::RegressionRules;
use crate::{AssetReport, AssetStatus, ClipReport, Report, Severity};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::Path;

/// What identifies a clip across cooks.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct ClipKey {
    pub source: String,
    pub clip: String,
    pub profile: String,
}

impl ClipKey {
    pub fn of(asset: &AssetReport, clip: &ClipReport) -> ClipKey {
        ClipKey {
            source: asset.source.clone(),
            clip: clip.name.clone(),
            profile: clip.profile.clone(),
        }
    }
    fn loose(&self) -> (String, String, String) {
        (
            file_name(&self.source),
            self.clip.clone(),
            self.profile.clone(),
        )
    }
}

impl fmt::Display for ClipKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} / {} ({})", self.source, self.clip, self.profile)
    }
}

fn file_name(source: &str) -> String {
    Path::new(source)
        .file_name()
        .map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned())
}

/// The figures of one clip that a comparison looks at.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClipFigures {
    pub compressed_bytes: u64,
    pub max_error_m: f32,
    pub p99_error_m: f32,
    pub threshold_m: f32,
    /// The worst joint's threshold where the report lists it.
    pub worst_joint_threshold_m: Option<f32>,
    /// Selected joints: (name, max error, threshold).
    pub selected: Vec<(String, f32, f32)>,
    /// 0: not measured.
    pub decode_ns_per_pose: f64,
    pub warnings: Vec<String>,
}

impl From<&ClipReport> for ClipFigures {
    fn from(c: &ClipReport) -> Self {
        ClipFigures {
            compressed_bytes: c.compressed_bytes,
            max_error_m: c.max_error_m,
            p99_error_m: c.p99_error_m,
            threshold_m: c.threshold_m,
            worst_joint_threshold_m: c.worst_joint_threshold_m(),
            selected: c
                .selected_joints
                .iter()
                .map(|j| (j.joint.clone(), j.max_error_m, j.threshold_m))
                .collect(),
            decode_ns_per_pose: c.decode_ns_per_pose,
            warnings: c.warnings.clone(),
        }
    }
}

/// A compared figure.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Metric {
    Bytes,
    MaxError,
    P99Error,
    DecodeTime,
    Warnings,
}

/// How a clip changed, in the order a dashboard lists them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ClipChange {
    Worse,
    Removed,
    Added,
    Better,
    Unchanged,
}

/// One clip of either cook.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ClipDelta {
    pub key: ClipKey,
    pub before: Option<ClipFigures>,
    pub after: Option<ClipFigures>,
    pub change: ClipChange,
    pub worse: Vec<Metric>,
    pub better: Vec<Metric>,
}

/// Which rule fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RegressionKind {
    AssetFailed,
    ClipMissing,
    ClipAdded,
    OverThreshold,
    EndToEndOverThreshold,
    MaxErrorOverBudget,
    MaxError,
    P99Error,
    Bytes,
    DecodeTime,
    NewWarning,
}

/// One regression, with a line of text naming the clip and the figures.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Regression {
    pub kind: RegressionKind,
    pub source: String,
    /// `None` for an asset-level regression (failure, asset warning).
    pub clip: Option<ClipKey>,
    pub message: String,
}

/// The result of [`compare`].
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Comparison {
    /// Every clip of either cook: worse first, unchanged last.
    pub clips: Vec<ClipDelta>,
    /// Every regression the rules found, by source then clip.
    pub regressions: Vec<Regression>,
}

impl Comparison {
    pub fn has_regressions(&self) -> bool {
        !self.regressions.is_empty()
    }
    /// The regressions of one clip.
    pub fn regressions_of<'a>(&'a self, key: &'a ClipKey) -> impl Iterator<Item = &'a Regression> {
        self.regressions
            .iter()
            .filter(move |r| r.clip.as_ref() == Some(key))
    }
    pub fn count(&self, change: ClipChange) -> usize {
        self.clips.iter().filter(|c| c.change == change).count()
    }
}

type ClipMap<'a> = BTreeMap<ClipKey, (&'a AssetReport, &'a ClipReport)>;

fn clip_map<'a>(reports: &[&'a Report]) -> ClipMap<'a> {
    let mut m = BTreeMap::new();
    for r in reports {
        for a in &r.assets {
            for c in &a.clips {
                m.insert(ClipKey::of(a, c), (a, c));
            }
        }
    }
    m
}

/// Pairs of (baseline key, current key), then the unpaired on each side.
fn pair_keys(base: &ClipMap<'_>, cur: &ClipMap<'_>) -> Vec<(Option<ClipKey>, Option<ClipKey>)> {
    let mut pairs: Vec<_> = base
        .keys()
        .filter(|k| cur.contains_key(*k))
        .map(|k| (Some(k.clone()), Some(k.clone())))
        .collect();
    let lone_b: Vec<&ClipKey> = base.keys().filter(|k| !cur.contains_key(*k)).collect();
    let lone_c: Vec<&ClipKey> = cur.keys().filter(|k| !base.contains_key(*k)).collect();
    let unique = |keys: &[&ClipKey]| {
        let mut n: BTreeMap<_, usize> = BTreeMap::new();
        for k in keys {
            *n.entry(k.loose()).or_default() += 1;
        }
        n
    };
    let (nb, nc) = (unique(&lone_b), unique(&lone_c));
    let mut used = BTreeSet::new();
    for b in &lone_b {
        let l = b.loose();
        let matched = (nb.get(&l) == Some(&1) && nc.get(&l) == Some(&1))
            .then(|| lone_c.iter().find(|c| c.loose() == l))
            .flatten();
        match matched {
            Some(c) => {
                used.insert((*c).clone());
                pairs.push((Some((*b).clone()), Some((*c).clone())));
            }
            None => pairs.push((Some((*b).clone()), None)),
        }
    }
    for c in lone_c.into_iter().filter(|c| !used.contains(*c)) {
        pairs.push((None, Some(c.clone())));
    }
    pairs
}

/// Compare a baseline cook (one or more reports) with the current one.
pub fn compare(baseline: &[&Report], current: &[&Report], rules: &RegressionRules) -> Comparison {
    let (base, cur) = (clip_map(baseline), clip_map(current));
    let failed = failed_now(baseline, current);
    let mut out = Comparison::default();
    for (bk, ck) in pair_keys(&base, &cur) {
        let b = bk.as_ref().and_then(|k| base.get(k)).map(|(_, c)| *c);
        let c = ck.as_ref().and_then(|k| cur.get(k)).map(|(_, c)| *c);
        let Some(key) = ck.or(bk) else { continue };
        if c.is_none() && failed.contains(&key.source) {
            continue;
        }
        let delta = clip_delta(key, b, c, rules);
        out.regressions.extend(clip_regressions(&delta, rules));
        out.clips.push(delta);
    }
    out.regressions
        .extend(asset_regressions(baseline, current, rules));
    out.clips
        .sort_by(|a, b| a.change.cmp(&b.change).then_with(|| a.key.cmp(&b.key)));
    out.regressions
        .sort_by(|a, b| (&a.source, &a.clip, a.kind).cmp(&(&b.source, &b.clip, b.kind)));
    out
}

fn pct(before: f64, after: f64) -> f64 {
    if before > 0.0 {
        (after - before) / before * 100.0
    } else if after > before {
        f64::INFINITY
    } else {
        0.0
    }
}

fn new_warnings<'a>(b: &ClipFigures, a: &'a ClipFigures) -> Vec<&'a String> {
    let old: BTreeSet<String> = b.warnings.iter().map(|w| shape(w)).collect();
    a.warnings
        .iter()
        .filter(|w| !old.contains(&shape(w)))
        .collect()
}

/// A warning's text with its figures masked: the same warning with other
/// numbers (a clip over its bound by a different amount, a threshold
/// changed by the profile) is not a new warning; other words, another
/// joint or clip are.
fn shape(w: &str) -> String {
    let mut out = String::with_capacity(w.len());
    let mut chars = w.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() {
            while chars
                .peek()
                .is_some_and(|n| n.is_ascii_digit() || *n == '.')
            {
                chars.next();
            }
            out.push('#');
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether decode time moved past the noise margin, upwards.
fn decode_worse(b: f64, a: f64, rules: &RegressionRules) -> bool {
    let margin = rules.decode_pct.unwrap_or(10.0);
    b > 0.0 && a > 0.0 && a - b >= rules.decode_min_ns && pct(b, a) > margin
}

fn clip_delta(
    key: ClipKey,
    b: Option<&ClipReport>,
    a: Option<&ClipReport>,
    rules: &RegressionRules,
) -> ClipDelta {
    let before = b.map(ClipFigures::from);
    let after = a.map(ClipFigures::from);
    let (mut worse, mut better) = (Vec::new(), Vec::new());
    if let (Some(b), Some(a)) = (&before, &after) {
        let mut cmp = |m: Metric, w: bool, bt: bool| {
            if w {
                worse.push(m);
            } else if bt {
                better.push(m);
            }
        };
        let (bb, ab) = (b.compressed_bytes, a.compressed_bytes);
        cmp(Metric::Bytes, ab > bb, ab < bb);
        cmp(
            Metric::MaxError,
            a.max_error_m > b.max_error_m,
            a.max_error_m < b.max_error_m,
        );
        cmp(
            Metric::P99Error,
            a.p99_error_m > b.p99_error_m,
            a.p99_error_m < b.p99_error_m,
        );
        let (bd, ad) = (b.decode_ns_per_pose, a.decode_ns_per_pose);
        cmp(
            Metric::DecodeTime,
            decode_worse(bd, ad, rules),
            decode_worse(ad, bd, rules),
        );
        let gone = b.warnings.iter().any(|w| !a.warnings.contains(w));
        cmp(Metric::Warnings, !new_warnings(b, a).is_empty(), gone);
    }
    let change = match (&before, &after) {
        (None, _) => ClipChange::Added,
        (_, None) => ClipChange::Removed,
        _ if !worse.is_empty() => ClipChange::Worse,
        _ if !better.is_empty() => ClipChange::Better,
        _ => ClipChange::Unchanged,
    };
    ClipDelta {
        key,
        before,
        after,
        change,
        worse,
        better,
    }
}

fn mm(m: f32) -> String {
    format!("{:.4} mm", m * 1000.0)
}

fn pct_text(p: f64) -> String {
    if p.is_finite() {
        format!("{p:+.1}%")
    } else {
        "from 0".to_string()
    }
}

/// Where the current errors exceed the budget: each joint's threshold,
/// tightened to the baseline's where that was tighter. Selected joints are
/// judged by their own thresholds; the clip's max error by the worst
/// joint's where known, else (verification held it within its own) only
/// when the thresholds were loosened, against the tightest one scaled.
fn over_budget(b: &ClipFigures, a: &ClipFigures) -> Vec<String> {
    let mut out = Vec::new();
    let mut over: Vec<(&str, f32, f32)> = Vec::new();
    for (name, err, th) in &a.selected {
        let old = b
            .selected
            .iter()
            .find(|s| &s.0 == name)
            .map_or(*th, |s| s.2);
        let budget = th.min(old);
        if *err > budget {
            over.push((name, *err, budget));
        }
    }
    over.sort_by(|x, y| (y.1 / y.2).total_cmp(&(x.1 / x.2)));
    if let Some((name, err, budget)) = over.first() {
        let more = match over.len() {
            1 => String::new(),
            n => format!(" (and {} more selected joints)", n - 1),
        };
        out.push(format!(
            "joint {name} error {} over its budget {}{more}",
            mm(*err),
            mm(*budget)
        ));
    }
    let scale = if a.threshold_m > 0.0 {
        (b.threshold_m / a.threshold_m).min(1.0)
    } else {
        1.0
    };
    let budget = match a.worst_joint_threshold_m {
        Some(t) => Some(t * scale),
        None => (scale < 1.0).then_some(a.threshold_m * scale),
    };
    if let Some(budget) = budget.filter(|&t| a.max_error_m > t) {
        out.push(format!(
            "max error {} over its budget {}",
            mm(a.max_error_m),
            mm(budget)
        ));
    }
    out
}

fn clip_regressions(d: &ClipDelta, rules: &RegressionRules) -> Vec<Regression> {
    let mut out = Vec::new();
    let mut push = |kind, message: String| {
        out.push(Regression {
            kind,
            source: d.key.source.clone(),
            clip: Some(d.key.clone()),
            message: format!("{}: {message}", d.key),
        })
    };
    let (b, a) = match (&d.before, &d.after) {
        (Some(b), Some(a)) => (b, a),
        (Some(_), None) if rules.clip_missing => {
            push(
                RegressionKind::ClipMissing,
                "clip missing from the current cook".into(),
            );
            return out;
        }
        (None, Some(_)) if rules.clip_added => {
            push(RegressionKind::ClipAdded, "clip not in the baseline".into());
            return out;
        }
        _ => return out,
    };
    if rules.max_error_over_budget {
        for message in over_budget(b, a) {
            push(RegressionKind::MaxErrorOverBudget, message);
        }
    }
    let figures = [
        (
            RegressionKind::MaxError,
            "max error",
            rules.max_error_pct,
            b.max_error_m,
            a.max_error_m,
        ),
        (
            RegressionKind::P99Error,
            "p99 error",
            rules.p99_error_pct,
            b.p99_error_m,
            a.p99_error_m,
        ),
    ];
    for (kind, what, rule, bv, av) in figures {
        let p = pct(bv.into(), av.into());
        if rule.is_some_and(|r| p > r) {
            let r = rule.unwrap_or_default();
            push(
                kind,
                format!(
                    "{what} {} -> {} ({}, rule +{r}%)",
                    mm(bv),
                    mm(av),
                    pct_text(p)
                ),
            );
        }
    }
    let (bb, ab) = (b.compressed_bytes as f64, a.compressed_bytes as f64);
    if let Some(r) = rules.bytes_pct.filter(|&r| pct(bb, ab) > r) {
        let p = pct_text(pct(bb, ab));
        push(
            RegressionKind::Bytes,
            format!("compressed bytes {bb} -> {ab} ({p}, rule +{r}%)"),
        );
    }
    let (bd, ad) = (b.decode_ns_per_pose, a.decode_ns_per_pose);
    if let Some(r) = rules.decode_pct {
        if bd > 0.0 && ad > 0.0 && ad - bd >= rules.decode_min_ns && pct(bd, ad) > r {
            let p = pct_text(pct(bd, ad));
            push(
                RegressionKind::DecodeTime,
                format!("decode {bd:.0} -> {ad:.0} ns/pose ({p}, rule +{r}%)"),
            );
        }
    }
    if rules.new_warnings {
        for w in new_warnings(b, a) {
            push(RegressionKind::NewWarning, format!("new warning: {w}"));
        }
    }
    out
}

fn assets<'a>(reports: &[&'a Report]) -> BTreeMap<&'a str, &'a AssetReport> {
    reports
        .iter()
        .flat_map(|r| &r.assets)
        .map(|a| (a.source.as_str(), a))
        .collect()
}

fn failed_now(baseline: &[&Report], current: &[&Report]) -> BTreeSet<String> {
    let (b, c) = (assets(baseline), assets(current));
    c.iter()
        .filter(|(_, a)| a.status == AssetStatus::Failed)
        .filter(|(s, _)| b.get(*s).is_some_and(|x| x.status == AssetStatus::Ok))
        .map(|(s, _)| s.to_string())
        .collect()
}

fn asset_warnings(a: &AssetReport) -> BTreeSet<String> {
    a.diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Warning)
        .map(|d| match &d.clip {
            Some(c) => format!("[{}] clip '{c}': {}", d.code, d.message),
            None => format!("[{}] {}", d.code, d.message),
        })
        .collect()
}

fn asset_regressions(
    baseline: &[&Report],
    current: &[&Report],
    rules: &RegressionRules,
) -> Vec<Regression> {
    let (base, cur) = (assets(baseline), assets(current));
    let mut out = Vec::new();
    let mut push = |kind, source: &str, message: String| {
        out.push(Regression {
            kind,
            source: source.to_string(),
            clip: None,
            message: format!("{source}: {message}"),
        })
    };
    for (source, a) in &cur {
        let Some(b) = base.get(source) else { continue };
        let shapes = |warnings: BTreeSet<String>| -> BTreeSet<String> {
            warnings.iter().map(|w| shape(w)).collect()
        };
        if rules.asset_failed && b.status == AssetStatus::Ok && a.status == AssetStatus::Failed {
            push(
                RegressionKind::AssetFailed,
                source,
                "asset failed (it cooked in the baseline)".into(),
            );
        }
        if rules.new_warnings {
            let old = shapes(asset_warnings(b));
            for w in asset_warnings(a)
                .iter()
                .filter(|w| !old.contains(&shape(w)))
            {
                push(
                    RegressionKind::NewWarning,
                    source,
                    format!("new warning: {w}"),
                );
            }
        }
    }
    out
}
