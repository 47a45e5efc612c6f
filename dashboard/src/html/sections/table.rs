//! Section 1b: every clip, one row each, drawn by the page's script from
//! the embedded data (`#ludus-data`) a page at a time: sortable by any
//! column, filterable by text, profile and flags; the clip name links to
//! its detail (inline, or a fragment the script loads on demand).

use crate::html::svg::esc;
use crate::model::Dashboard;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Rows per page of the clip table.
pub const PAGE_ROWS: usize = 100;

fn filters(s: &mut String, d: &Dashboard) {
    let profiles: BTreeSet<String> = d.rows().iter().map(|r| r.clip.profile.clone()).collect();
    s.push_str(
        "<div class=\"filters\"><label>Filter <input type=\"search\" id=\"clip-filter\" \
         placeholder=\"clip, asset or joint\"></label> <label>Profile <select id=\"profile-filter\">\
         <option value=\"\">all</option>",
    );
    for p in profiles {
        let _ = write!(s, "<option>{}</option>", esc(&p));
    }
    s.push_str(
        "</select></label> <label><input type=\"checkbox\" id=\"near-filter\"> ≥ 90% of budget</label> \
         <label><input type=\"checkbox\" id=\"warn-filter\"> with warnings</label> \
         <span id=\"clip-count\" class=\"muted\"></span></div>",
    );
}

fn pager(s: &mut String, where_: &str) {
    let _ = write!(
        s,
        "<div class=\"pager\" data-pager=\"{where_}\"><button type=\"button\" data-page=\"first\">«</button>\
         <button type=\"button\" data-page=\"prev\">‹ previous</button> <span class=\"page-label\"></span> \
         <button type=\"button\" data-page=\"next\">next ›</button><button type=\"button\" data-page=\"last\">»</button></div>"
    );
}

pub fn render(s: &mut String, d: &Dashboard) {
    s.push_str("<section id=\"clips\"><h2>Clips</h2>");
    filters(s, d);
    pager(s, "top");
    let _ = write!(
        s,
        "<div class=\"scroll\"><table id=\"clip-table\" data-page-rows=\"{PAGE_ROWS}\">"
    );
    // (label, data column, numeric)
    let mut cols = vec![
        ("clip", "clip", false),
        ("profile", "profile", false),
        ("joints", "joints", true),
        ("duration s", "duration_s", true),
        ("raw bytes", "raw_bytes", true),
        ("compressed", "compressed_bytes", true),
        ("ratio", "ratio", true),
        ("max error", "max_error_m", true),
        ("p99", "p99_error_m", true),
        ("budget", "budget", true),
        ("worst joint", "worst_joint", false),
        ("decode ns", "decode_ns", true),
        ("compress ms", "compress_ms", true),
        ("warnings", "warnings", true),
    ];
    if d.comparison.is_some() {
        cols.push(("vs baseline", "change", false));
    }
    s.push_str("<thead><tr>");
    for (label, key, num) in cols {
        let kind = if num { "num" } else { "text" };
        let _ = write!(
            s,
            "<th data-type=\"{kind}\" data-key=\"{key}\" tabindex=\"0\">{}</th>",
            esc(label)
        );
    }
    s.push_str("</tr></thead><tbody></tbody></table></div>");
    pager(s, "bottom");
    s.push_str("</section>");
}
