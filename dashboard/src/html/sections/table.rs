//! Section 1b: every clip, one row each, sortable by any column and
//! filterable by text, profile and flags; the clip name links to its
//! detail.

use super::{budget, clip_link, num, thead, txt};
use crate::fmt::{int, mm};
use crate::html::svg::esc;
use crate::model::{Dashboard, Row};
use ludus_anim_report::compare::{ClipChange, Comparison};
use std::collections::BTreeSet;
use std::fmt::Write;

fn change_of(c: Option<&Comparison>, r: &Row<'_>) -> &'static str {
    let Some(c) = c else { return "" };
    let key = r.key();
    match c.clips.iter().find(|d| d.key == key).map(|d| d.change) {
        Some(ClipChange::Worse) => "worse",
        Some(ClipChange::Better) => "better",
        Some(ClipChange::Added) => "added",
        Some(ClipChange::Unchanged) => "unchanged",
        Some(ClipChange::Removed) | None => "",
    }
}

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

pub fn render(s: &mut String, d: &Dashboard) {
    s.push_str("<section id=\"clips\"><h2>Clips</h2>");
    filters(s, d);
    s.push_str("<table class=\"sortable\" id=\"clip-table\">");
    let mut cols = vec![
        ("clip", false),
        ("profile", false),
        ("joints", true),
        ("duration s", true),
        ("raw bytes", true),
        ("compressed", true),
        ("ratio", true),
        ("max error", true),
        ("p99", true),
        ("budget", true),
        ("worst joint", false),
        ("decode ns", true),
        ("compress ms", true),
        ("warnings", true),
    ];
    let cmp = d.comparison.as_ref();
    if cmp.is_some() {
        cols.push(("vs baseline", false));
    }
    thead(s, &cols);
    s.push_str("<tbody>");
    for r in d.rows() {
        row(s, &r, cmp);
    }
    s.push_str("</tbody></table></section>");
}

fn row(s: &mut String, r: &Row<'_>, cmp: Option<&Comparison>) {
    let c = r.clip;
    let search = format!(
        "{} {} {} {}",
        r.asset.source, c.name, c.profile, c.worst_joint
    )
    .to_lowercase();
    let _ = write!(
        s,
        "<tr data-id=\"{}\" data-profile=\"{}\" data-search=\"{}\" data-budget=\"{}\" data-warn=\"{}\">",
        r.id,
        esc(&c.profile),
        esc(&search),
        r.ratio(),
        c.warnings.len()
    );
    clip_link(s, r);
    txt(s, &c.profile);
    num(s, c.joints as f64, &c.joints.to_string());
    num(s, c.duration_s as f64, &format!("{:.2}", c.duration_s));
    num(s, c.raw_bytes as f64, &int(c.raw_bytes));
    num(s, c.compressed_bytes as f64, &int(c.compressed_bytes));
    num(s, c.ratio as f64, &format!("{:.1}:1", c.ratio));
    num(s, c.max_error_m as f64, &mm(c.max_error_m));
    num(s, c.p99_error_m as f64, &mm(c.p99_error_m));
    budget(s, r.ratio());
    let _ = write!(
        s,
        "<td>{} <span class=\"muted\">@{:.2}s</span></td>",
        esc(&c.worst_joint),
        c.worst_time_s
    );
    num(
        s,
        c.decode_ns_per_pose,
        &format!("{:.0}", c.decode_ns_per_pose),
    );
    num(s, c.compress_ms, &format!("{:.1}", c.compress_ms));
    num(s, c.warnings.len() as f64, &c.warnings.len().to_string());
    if cmp.is_some() {
        let ch = change_of(cmp, r);
        let _ = write!(s, "<td class=\"change {ch}\">{ch}</td>");
    }
    s.push_str("</tr>");
}
