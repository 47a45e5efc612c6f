//! Section 5: what changed since the baseline. Clips whose bytes, max or
//! p99 error, decode time or warnings got worse come first with the
//! regressions the rules found, then removed clips; added, better and
//! unchanged clips collapsed.

use super::{more, thead, txt, LIST_MAX};
use crate::fmt::{int, mm};
use crate::html::svg::esc;
use crate::model::Dashboard;
use ludus_anim_report::compare::{ClipChange, ClipDelta, Comparison};
use std::fmt::Write;

pub fn render(s: &mut String, d: &Dashboard) {
    s.push_str("<section id=\"changes\"><h2>Changes since the baseline</h2>");
    let (Some(c), Some(b)) = (&d.comparison, &d.baseline) else {
        s.push_str("<p class=\"muted\">No baseline: pass <code>--baseline OLD_OUT</code> to see what changed.</p></section>");
        return;
    };
    let _ = write!(
        s,
        "<p>Against <code>{}</code>: <b class=\"worse\">{} worse</b>, {} removed, {} added, {} better, {} unchanged; \
         <b>{} regression(s)</b> by the rules.</p>",
        esc(&b.label),
        c.count(ClipChange::Worse),
        c.count(ClipChange::Removed),
        c.count(ClipChange::Added),
        c.count(ClipChange::Better),
        c.count(ClipChange::Unchanged),
        c.regressions.len()
    );
    if !c.regressions.is_empty() {
        s.push_str("<ul class=\"regressions\">");
        for r in c.regressions.iter().take(LIST_MAX) {
            let _ = write!(s, "<li>{}</li>", esc(&r.message));
        }
        s.push_str("</ul>");
        more(s, c.regressions.len(), "the text summary lists them all");
    }
    let first: Vec<&ClipDelta> = c
        .clips
        .iter()
        .filter(|x| x.change <= ClipChange::Removed)
        .collect();
    delta_table(s, c, &first, "changes-worse");
    more(s, first.len(), "the clip table's change column");
    let rest: Vec<&ClipDelta> = c
        .clips
        .iter()
        .filter(|x| x.change > ClipChange::Removed)
        .collect();
    let _ = write!(
        s,
        "<details><summary>Added, better or unchanged ({})</summary>",
        rest.len()
    );
    delta_table(s, c, &rest, "changes-rest");
    more(s, rest.len(), "the clip table's change column");
    s.push_str("</details></section>");
}

fn pair<T: Copy>(
    d: &ClipDelta,
    f: impl Fn(&ludus_anim_report::compare::ClipFigures) -> T,
) -> (Option<T>, Option<T>) {
    (d.before.as_ref().map(&f), d.after.as_ref().map(&f))
}

fn delta_cell(
    s: &mut String,
    worse: bool,
    before: Option<f64>,
    after: Option<f64>,
    show: &dyn Fn(f64) -> String,
) {
    let text = match (before, after) {
        (Some(b), Some(a)) if b == a => show(a),
        (Some(b), Some(a)) => format!("{} → {}", show(b), show(a)),
        (Some(b), None) => format!("{} → –", show(b)),
        (None, Some(a)) => format!("– → {}", show(a)),
        (None, None) => String::new(),
    };
    let class = if worse { "n worse" } else { "n" };
    let v = after.or(before).unwrap_or(0.0);
    let _ = write!(
        s,
        "<td class=\"{class}\" data-v=\"{v}\">{}</td>",
        esc(&text)
    );
}

fn delta_table(s: &mut String, c: &Comparison, rows: &[&ClipDelta], id: &str) {
    use ludus_anim_report::compare::Metric as M;
    let _ = write!(
        s,
        "<div class=\"scroll\"><table class=\"sortable\" id=\"{id}\">"
    );
    thead(
        s,
        &[
            ("clip", false),
            ("change", false),
            ("bytes", true),
            ("max error", true),
            ("p99", true),
            ("decode ns", true),
            ("warnings", true),
            ("regressions", false),
        ],
    );
    s.push_str("<tbody>");
    for d in rows.iter().take(LIST_MAX) {
        let _ = write!(s, "<tr class=\"{:?}\">", d.change);
        txt(s, &d.key.to_string());
        let _ = write!(s, "<td class=\"change {0:?}\">{0:?}</td>", d.change);
        let w = |m: M| d.worse.contains(&m);
        let (b, a) = pair(d, |f| f.compressed_bytes as f64);
        delta_cell(s, w(M::Bytes), b, a, &|x| int(x as u64));
        let (b, a) = pair(d, |f| f.max_error_m as f64);
        delta_cell(s, w(M::MaxError), b, a, &|x| mm(x as f32));
        let (b, a) = pair(d, |f| f.p99_error_m as f64);
        delta_cell(s, w(M::P99Error), b, a, &|x| mm(x as f32));
        let (b, a) = pair(d, |f| f.decode_ns_per_pose);
        delta_cell(s, w(M::DecodeTime), b, a, &|x| format!("{x:.0}"));
        let (b, a) = pair(d, |f| f.warnings.len() as f64);
        delta_cell(s, w(M::Warnings), b, a, &|x| format!("{x:.0}"));
        let prefix = format!("{}: ", d.key);
        let msgs: Vec<&str> = c
            .regressions_of(&d.key)
            .map(|r| r.message.strip_prefix(&prefix).unwrap_or(&r.message))
            .collect();
        let _ = write!(s, "<td class=\"small\">{}</td></tr>", esc(&msgs.join("; ")));
    }
    s.push_str("</tbody></table></div>");
}
