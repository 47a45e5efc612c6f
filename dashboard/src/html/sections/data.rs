//! The figures behind the page as embedded JSON (`#ludus-data`): one
//! entry per clip row and every regression, for scripts and for anyone
//! who wants the numbers out of the page.

use crate::model::Dashboard;
use serde::Serialize;

#[derive(Serialize)]
struct RowData<'a> {
    id: &'a str,
    source: &'a str,
    clip: &'a str,
    profile: &'a str,
    compressed_bytes: u64,
    raw_bytes: u64,
    max_error_m: f32,
    p99_error_m: f32,
    threshold_m: f32,
    budget: f32,
    decode_ns_per_pose: f64,
    warnings: usize,
    has_sidecar: bool,
}

#[derive(Serialize)]
struct PageData<'a> {
    rows: Vec<RowData<'a>>,
    regressions: Vec<&'a str>,
}

pub fn render(s: &mut String, d: &Dashboard) {
    let rows = d.rows();
    let data = PageData {
        rows: rows
            .iter()
            .map(|r| RowData {
                id: r.id,
                source: &r.asset.source,
                clip: &r.clip.name,
                profile: &r.clip.profile,
                compressed_bytes: r.clip.compressed_bytes,
                raw_bytes: r.clip.raw_bytes,
                max_error_m: r.clip.max_error_m,
                p99_error_m: r.clip.p99_error_m,
                threshold_m: r.clip.threshold_m,
                budget: if r.ratio().is_finite() {
                    r.ratio()
                } else {
                    f32::MAX
                },
                decode_ns_per_pose: r.clip.decode_ns_per_pose,
                warnings: r.clip.warnings.len(),
                has_sidecar: r.sidecar.is_some(),
            })
            .collect(),
        regressions: d
            .comparison
            .iter()
            .flat_map(|c| &c.regressions)
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
