//! The figures behind the page as embedded JSON (`#ludus-data`), compact
//! enough for 10,000 clips: the clip table is drawn from it by the page's
//! script (sorted, filtered and paged there), so no clip costs HTML.
//!
//! `assets`: `[source, detail fragment or ""]`; `rows`: one array per clip
//! in the order of `cols`, the asset as an index into `assets`;
//! `regressions`: every failed rule's line.

use crate::model::Dashboard;
use ludus_anim_report::compare::{ClipChange, Comparison};
use serde::Serialize;
use std::collections::BTreeMap;

/// What each row array holds, in order (the script reads it by name).
pub const COLS: [&str; 18] = [
    "id",
    "asset",
    "clip",
    "profile",
    "joints",
    "duration_s",
    "raw_bytes",
    "compressed_bytes",
    "ratio",
    "max_error_m",
    "p99_error_m",
    "budget",
    "worst_joint",
    "worst_time_s",
    "decode_ns",
    "compress_ms",
    "warnings",
    "change",
];

#[derive(Serialize)]
struct PageData<'a> {
    cols: Vec<&'a str>,
    /// Folder of the detail fragments, relative to the page ("" inline).
    details: &'a str,
    assets: Vec<(&'a str, &'a str)>,
    rows: Vec<serde_json::Value>,
    regressions: Vec<&'a str>,
}

fn change_name(c: Option<ClipChange>) -> &'static str {
    match c {
        Some(ClipChange::Worse) => "worse",
        Some(ClipChange::Better) => "better",
        Some(ClipChange::Added) => "added",
        Some(ClipChange::Unchanged) => "unchanged",
        Some(ClipChange::Removed) | None => "",
    }
}

/// A finite number as JSON, rounded to `digits` significant digits (the
/// table shows fewer); infinities as the largest f64 (sorts last).
fn n(v: f64, digits: usize) -> serde_json::Value {
    let v = if v.is_finite() { v } else { f64::MAX };
    let text = format!("{v:.*e}", digits.saturating_sub(1));
    serde_json::Number::from_f64(text.parse().unwrap_or(v))
        .map_or(serde_json::Value::Null, Into::into)
}

fn changes_by_key(
    c: Option<&Comparison>,
) -> BTreeMap<ludus_anim_report::compare::ClipKey, ClipChange> {
    c.map(|c| c.clips.iter().map(|d| (d.key.clone(), d.change)).collect())
        .unwrap_or_default()
}

/// `fragments`: the detail fragment of each `(cook, source)`, if any.
pub fn render(
    s: &mut String,
    d: &Dashboard,
    details_dir: &str,
    fragments: &BTreeMap<(usize, String), String>,
) {
    let rows = d.rows();
    let mut assets: Vec<(&str, &str)> = Vec::new();
    let mut asset_index: BTreeMap<(usize, &str), usize> = BTreeMap::new();
    let changes = changes_by_key(d.comparison.as_ref());
    let mut data_rows = Vec::with_capacity(rows.len());
    for r in &rows {
        let cook = d
            .cooks
            .iter()
            .position(|c| std::ptr::eq(c, r.cook))
            .unwrap_or(0);
        let key = (cook, r.asset.source.as_str());
        let ai = *asset_index.entry(key).or_insert_with(|| {
            let frag = fragments
                .get(&(cook, r.asset.source.clone()))
                .map_or("", String::as_str);
            assets.push((&r.asset.source, frag));
            assets.len() - 1
        });
        let c = r.clip;
        data_rows.push(serde_json::json!([
            r.id,
            ai,
            c.name,
            c.profile,
            c.joints,
            n(c.duration_s.into(), 4),
            c.raw_bytes,
            c.compressed_bytes,
            n(c.ratio.into(), 4),
            n(c.max_error_m.into(), 4),
            n(c.p99_error_m.into(), 4),
            n(r.ratio().into(), 4),
            c.worst_joint,
            n(c.worst_time_s.into(), 4),
            n(c.decode_ns_per_pose, 4),
            n(c.compress_ms, 4),
            c.warnings.len(),
            change_name(changes.get(&r.key()).copied()),
        ]));
    }
    let data = PageData {
        cols: COLS.to_vec(),
        details: details_dir,
        assets,
        rows: data_rows,
        regressions: d
            .regressions()
            .into_iter()
            .map(|r| r.message.as_str())
            .collect(),
    };
    let json = serde_json::to_string(&data).unwrap_or_else(|_| "{}".into());
    // Inside <script>, "</" could close the element: escape every "<".
    let json = json.replace('<', "\\u003c");
    s.push_str("<script type=\"application/json\" id=\"ludus-data\">");
    s.push_str(&json);
    s.push_str("</script>");
}
