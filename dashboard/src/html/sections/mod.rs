//! The page's sections and the small HTML helpers they share.

pub mod baseline;
pub mod clip;
pub mod data;
pub mod pareto;
pub mod player;
pub mod programs;
pub mod rules;
pub mod table;
pub mod totals;
pub mod tradeoff;
pub mod worst;

use crate::html::svg::esc;
use crate::model::{Dashboard, Row};
use std::fmt::Write;

/// The page header: what was cooked and links to the sections.
pub fn header(s: &mut String, d: &Dashboard, title: &str) {
    let cooks: Vec<String> = d.cooks.iter().map(|c| esc(&c.label)).collect();
    let _ = write!(
        s,
        "<header><h1>{}</h1><p class=\"sub\">{} clip(s) from {}; cooker {}</p><nav>\
         <a href=\"#gate\">Gate</a><a href=\"#totals\">Totals</a><a href=\"#changes\">Changes</a>\
         <a href=\"#worst\">Worst offenders</a><a href=\"#clips\">Clips</a>\
         <a href=\"#profiles\">Profiles</a><a href=\"#details\">Clip details</a>{}</nav>",
        esc(title),
        d.rows().len(),
        cooks.join(", "),
        esc(d
            .cooks
            .first()
            .map_or("", |c| c.report.cooker_version.as_str())),
        if d.cooks.iter().any(|c| !c.programs.is_empty()) {
            "<a href=\"#programs\">Programs</a>"
        } else {
            ""
        }
    );
    for n in d.notices() {
        let _ = write!(s, "<p class=\"notice\">{}</p>", esc(n));
    }
    s.push_str("</header>");
}

/// Longest list or table a section writes into the page: the rest is
/// counted, and every clip stays in the clip table (10,000 clips must not
/// cost 10,000 lines of HTML anywhere).
pub const LIST_MAX: usize = 200;

/// The note under a list cut at [`LIST_MAX`] (nothing when it was not).
pub fn more(s: &mut String, total: usize, where_: &str) {
    if total > LIST_MAX {
        let _ = write!(
            s,
            "<p class=\"muted\">… and {} more ({where_}).</p>",
            total - LIST_MAX
        );
    }
}

/// A sortable table's header; `num` columns sort by their `data-v`.
pub fn thead(s: &mut String, cols: &[(&str, bool)]) {
    s.push_str("<thead><tr>");
    for (label, num) in cols {
        let kind = if *num { "num" } else { "text" };
        let _ = write!(
            s,
            "<th data-type=\"{kind}\" tabindex=\"0\">{}</th>",
            esc(label)
        );
    }
    s.push_str("</tr></thead>");
}

/// A numeric cell: sorts by `v`, shows `text`.
pub fn num(s: &mut String, v: f64, text: &str) {
    let v = if v.is_finite() { v } else { f64::MAX };
    let _ = write!(s, "<td class=\"n\" data-v=\"{v}\">{}</td>", esc(text));
}

/// A text cell.
pub fn txt(s: &mut String, text: &str) {
    let _ = write!(s, "<td>{}</td>", esc(text));
}

/// A cell linking to the clip's detail.
pub fn clip_link(s: &mut String, r: &Row<'_>) {
    let _ = write!(
        s,
        "<td><a href=\"#{}\" title=\"{}\">{}</a> <span class=\"muted\">{}</span></td>",
        r.id,
        esc(&r.asset.source),
        esc(&r.clip.name),
        esc(&r.file())
    );
}

/// A budget cell coloured by how much of the threshold the clip uses.
pub fn budget(s: &mut String, ratio: f32) {
    let class = if ratio > 1.0 {
        "over"
    } else if ratio >= 0.9 {
        "near"
    } else {
        "ok"
    };
    let v = if ratio.is_finite() {
        ratio as f64
    } else {
        f64::MAX
    };
    let _ = write!(
        s,
        "<td class=\"n {class}\" data-v=\"{v}\">{}</td>",
        crate::fmt::pct(ratio)
    );
}
