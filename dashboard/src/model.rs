//! The merged view of one or more cooks: one row per cooked clip (keyed
//! by source, clip and profile), totals per profile and per asset, worst
//! offenders, the profile trade-off groups and the baseline comparison.

use crate::input::Cook;
use ludus_anim_report::compare::{compare, ClipKey, Comparison, Regression};
use ludus_anim_report::rules::RegressionRules;
use ludus_anim_report::sidecar::ClipSidecar;
use ludus_anim_report::{AssetReport, AssetStatus, ClipReport, Severity};
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

/// How many offenders the summaries list (as Unreal's animation
/// compression summary lists its top 10).
pub const TOP: usize = 10;

/// Inputs of a report, merged.
#[derive(Clone, Debug)]
pub struct Dashboard {
    pub cooks: Vec<Cook>,
    pub baseline: Option<Cook>,
    pub rules: RegressionRules,
    pub comparison: Option<Comparison>,
    /// Clips over their threshold (the `over_threshold` and
    /// `end_to_end_over_threshold` rules).
    pub gate: Vec<Regression>,
    index: Vec<RowIndex>,
}

#[derive(Clone, Debug)]
struct RowIndex {
    cook: usize,
    asset: usize,
    clip: usize,
    id: String,
    /// Index of the clip's record in its cook's sidecar.
    side: Option<usize>,
    /// [`Row::ratio`], computed once (a scan of the error grid).
    budget: f32,
}

/// One cooked clip.
#[derive(Clone, Copy, Debug)]
pub struct Row<'a> {
    /// Stable anchor of the clip's detail (`clip-...`).
    pub id: &'a str,
    pub cook: &'a Cook,
    pub asset: &'a AssetReport,
    pub clip: &'a ClipReport,
    pub sidecar: Option<&'a ClipSidecar>,
    budget: f32,
}

impl Row<'_> {
    pub fn key(&self) -> ClipKey {
        ClipKey::of(self.asset, self.clip)
    }
    /// How much of its error budget the clip uses: the worst joint's
    /// error over its own threshold from the sidecar, else the report's
    /// estimate ([`ClipReport::budget_used`]).
    pub fn ratio(&self) -> f32 {
        self.budget
    }
    /// The threshold of the clip's worst joint (sidecar, else the
    /// report's selected joints, else the tightest threshold).
    pub fn worst_threshold(&self) -> f32 {
        let c = self.clip;
        self.sidecar
            .and_then(|s| {
                let j = s.joints.iter().position(|n| *n == c.worst_joint)?;
                s.thresholds_m.get(j)
            })
            .or_else(|| c.worst_joint_threshold_m())
            .unwrap_or(c.threshold_m)
    }

    /// The source's file name (what tables show; the full path is a title).
    pub fn file(&self) -> String {
        file_name(&self.asset.source)
    }
}

pub fn file_name(source: &str) -> String {
    Path::new(source)
        .file_name()
        .map_or_else(|| source.to_string(), |n| n.to_string_lossy().into_owned())
}

/// Totals of the clips cooked with one profile.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ProfileTotals {
    pub profile: String,
    pub clips: usize,
    pub raw_bytes: u64,
    pub compressed_bytes: u64,
    pub ratio: f32,
    pub max_error_m: f32,
    /// Largest max error over threshold of any clip.
    pub worst_budget: f32,
    pub max_p99_error_m: f32,
    /// Mean decode time per pose of the clips that measured it.
    pub mean_decode_ns: f64,
    /// Encoder time summed over the clips.
    pub compress_ms: f64,
    pub warnings: usize,
}

/// A joint near or over its threshold, with the time it peaks.
#[derive(Clone, Debug)]
pub struct JointOffender<'a> {
    pub row: Row<'a>,
    pub joint: String,
    pub ratio: f32,
    pub error_m: f32,
    pub threshold_m: f32,
    /// `None` where only the report's per-joint maximum is known.
    pub time_s: Option<f32>,
}

fn slug(text: &str) -> String {
    let mut s = String::new();
    for c in text.chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_matches('-').to_string()
}

fn budget_of(clip: &ClipReport, side: Option<&ClipSidecar>) -> f32 {
    match side.filter(|s| s.has_errors()) {
        Some(s) => (0..s.joint_count())
            .map(|j| s.joint_worst(j).0)
            .fold(0.0, f32::max),
        None => clip.budget_used(),
    }
}

/// Each sidecar record's position by `(source, clip, profile)`.
fn sidecar_positions(cook: &Cook) -> HashMap<(&str, &str, &str), usize> {
    let mut m = HashMap::new();
    for (i, c) in cook.sidecar.iter().flat_map(|s| s.clips.iter()).enumerate() {
        m.entry((c.source.as_str(), c.clip.as_str(), c.profile.as_str()))
            .or_insert(i);
    }
    m
}

fn build_index(cooks: &[Cook]) -> Vec<RowIndex> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for (ci, cook) in cooks.iter().enumerate() {
        let positions = sidecar_positions(cook);
        for (ai, a) in cook.report.assets.iter().enumerate() {
            let stem = Path::new(&a.source)
                .file_stem()
                .map_or_else(|| a.source.clone(), |s| s.to_string_lossy().into_owned());
            for (k, c) in a.clips.iter().enumerate() {
                let base = format!("clip-{}", slug(&format!("{stem} {} {}", c.name, c.profile)));
                let mut id = base.clone();
                let mut n = 2;
                while !seen.insert(id.clone()) {
                    id = format!("{base}-{n}");
                    n += 1;
                }
                let side = positions
                    .get(&(a.source.as_str(), c.name.as_str(), c.profile.as_str()))
                    .copied();
                let record = side.and_then(|i| cook.sidecar.as_ref()?.clips.get(i));
                out.push(RowIndex {
                    cook: ci,
                    asset: ai,
                    clip: k,
                    id,
                    side,
                    budget: budget_of(c, record),
                });
            }
        }
    }
    out
}

impl Dashboard {
    /// Merge `cooks` (the current results) and compare with `baseline`;
    /// the gate is left empty (`Dashboard::new`, in `build.rs`, fills it).
    pub(crate) fn assemble(
        cooks: Vec<Cook>,
        baseline: Option<Cook>,
        rules: RegressionRules,
    ) -> Dashboard {
        let comparison = baseline.as_ref().map(|b| {
            let cur: Vec<_> = cooks.iter().map(|c| &c.report).collect();
            compare(&[&b.report], &cur, &rules)
        });
        let index = build_index(&cooks);
        Dashboard {
            cooks,
            baseline,
            rules,
            comparison,
            gate: Vec::new(),
            index,
        }
    }

    /// Every failed rule: the threshold gate, then the baseline's.
    pub fn regressions(&self) -> Vec<&Regression> {
        let base = self.comparison.iter().flat_map(|c| &c.regressions);
        self.gate.iter().chain(base).collect()
    }

    /// Every cooked clip, in input order.
    pub fn rows(&self) -> Vec<Row<'_>> {
        self.index.iter().filter_map(|i| self.row(i)).collect()
    }

    fn row<'a>(&'a self, i: &'a RowIndex) -> Option<Row<'a>> {
        let cook = self.cooks.get(i.cook)?;
        let asset = cook.report.assets.get(i.asset)?;
        let clip = asset.clips.get(i.clip)?;
        let sidecar = i.side.and_then(|k| cook.sidecar.as_ref()?.clips.get(k));
        Some(Row {
            id: &i.id,
            cook,
            asset,
            clip,
            sidecar,
            budget: i.budget,
        })
    }

    /// Every asset of every cook with its clips' rows.
    pub fn assets(&self) -> Vec<(&Cook, &AssetReport, Vec<Row<'_>>)> {
        let mut by: BTreeMap<(usize, usize), Vec<Row<'_>>> = BTreeMap::new();
        for i in &self.index {
            if let Some(r) = self.row(i) {
                by.entry((i.cook, i.asset)).or_default().push(r);
            }
        }
        let mut out = Vec::new();
        for (ci, cook) in self.cooks.iter().enumerate() {
            for (ai, a) in cook.report.assets.iter().enumerate() {
                out.push((cook, a, by.remove(&(ci, ai)).unwrap_or_default()));
            }
        }
        out
    }

    /// Index of the cook a row belongs to.
    pub fn cook_of(&self, r: &Row<'_>) -> usize {
        self.cooks
            .iter()
            .position(|c| std::ptr::eq(c, r.cook))
            .unwrap_or(0)
    }

    /// Totals per profile, by profile name.
    pub fn profiles(&self) -> Vec<ProfileTotals> {
        let mut by: BTreeMap<&str, (ProfileTotals, usize)> = BTreeMap::new();
        for r in self.rows() {
            let c = r.clip;
            let (t, measured) = by.entry(&c.profile).or_default();
            t.profile.clone_from(&c.profile);
            t.clips += 1;
            t.raw_bytes += c.raw_bytes;
            t.compressed_bytes += c.compressed_bytes;
            t.max_error_m = t.max_error_m.max(c.max_error_m);
            t.worst_budget = t.worst_budget.max(r.ratio());
            t.max_p99_error_m = t.max_p99_error_m.max(c.p99_error_m);
            t.compress_ms += c.compress_ms;
            t.warnings += c.warnings.len();
            if c.decode_ns_per_pose > 0.0 {
                t.mean_decode_ns += c.decode_ns_per_pose;
                *measured += 1;
            }
        }
        by.into_values()
            .map(|(mut t, n)| {
                t.mean_decode_ns /= n.max(1) as f64;
                t.ratio = crate::fmt::ratio(t.raw_bytes as f32, t.compressed_bytes as f32);
                t
            })
            .collect()
    }

    /// Clips closest to (or over) their error budget: max error over
    /// threshold, then compressed bytes, descending.
    pub fn worst_clips(&self, n: usize) -> Vec<Row<'_>> {
        let mut rows = self.rows();
        rows.sort_by(|a, b| {
            b.ratio()
                .total_cmp(&a.ratio())
                .then(b.clip.compressed_bytes.cmp(&a.clip.compressed_bytes))
                .then(a.id.cmp(b.id))
        });
        rows.truncate(n);
        rows
    }

    /// The largest clips by compressed bytes.
    pub fn largest_clips(&self, n: usize) -> Vec<Row<'_>> {
        let mut rows = self.rows();
        rows.sort_by(|a, b| {
            b.clip
                .compressed_bytes
                .cmp(&a.clip.compressed_bytes)
                .then(a.id.cmp(b.id))
        });
        rows.truncate(n);
        rows
    }

    /// Joints closest to their threshold, with the time they peak (from
    /// the sidecars; the report's worst joint per clip without one).
    pub fn worst_joints(&self, n: usize) -> Vec<JointOffender<'_>> {
        let mut out: Vec<JointOffender<'_>> = self.rows().into_iter().flat_map(joints_of).collect();
        out.sort_by(|a, b| {
            b.ratio
                .total_cmp(&a.ratio)
                .then(a.row.id.cmp(b.row.id))
                .then(a.joint.cmp(&b.joint))
        });
        out.truncate(n);
        out
    }

    /// Rows of one `(source, clip)` cooked with two or more profiles.
    pub fn tradeoff_groups(&self) -> Vec<Vec<Row<'_>>> {
        let mut by: BTreeMap<(String, String), Vec<Row<'_>>> = BTreeMap::new();
        for r in self.rows() {
            by.entry((r.asset.source.clone(), r.clip.name.clone()))
                .or_default()
                .push(r);
        }
        by.into_values()
            .filter(|g| {
                let p: BTreeSet<&str> = g.iter().map(|r| r.clip.profile.as_str()).collect();
                p.len() > 1
            })
            .collect()
    }

    /// Asset-level warning diagnostics and failures, for the totals.
    pub fn asset_warnings(a: &AssetReport) -> usize {
        a.diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count()
    }

    pub fn failed_assets(&self) -> usize {
        self.cooks
            .iter()
            .flat_map(|c| &c.report.assets)
            .filter(|a| a.status == AssetStatus::Failed)
            .count()
    }

    /// Loading problems of every cook, for the page and the summary.
    pub fn notices(&self) -> Vec<&str> {
        self.cooks
            .iter()
            .chain(&self.baseline)
            .flat_map(|c| c.notices.iter().map(String::as_str))
            .collect()
    }
}

fn joints_of(row: Row<'_>) -> Vec<JointOffender<'_>> {
    match row.sidecar.filter(|s| s.has_errors()) {
        Some(s) => (0..s.joint_count())
            .map(|j| {
                let (r, t) = s.joint_worst(j);
                JointOffender {
                    row,
                    joint: s.joints.get(j).cloned().unwrap_or_default(),
                    ratio: r,
                    error_m: s.error_m(j, t),
                    threshold_m: s.thresholds_m.get(j).unwrap_or(0.0),
                    time_s: s.times_s.get(t),
                }
            })
            .collect(),
        None => vec![JointOffender {
            row,
            joint: row.clip.worst_joint.clone(),
            ratio: row.ratio(),
            error_m: row.clip.max_error_m,
            threshold_m: row.clip.threshold_m,
            time_s: Some(row.clip.worst_time_s),
        }],
    }
}
