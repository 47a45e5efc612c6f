//! Section 1a: totals per profile and per asset.

use super::{budget, num, thead, txt};
use crate::fmt::{int, mm};
use crate::html::svg::esc;
use crate::model::Dashboard;
use ludus_anim_report::AssetStatus;
use std::fmt::Write;

pub fn render(s: &mut String, d: &Dashboard) {
    s.push_str(
        "<section id=\"totals\"><h2>Totals</h2><div class=\"scroll\"><table class=\"sortable\" id=\"profile-totals\">",
    );
    thead(
        s,
        &[
            ("profile", false),
            ("clips", true),
            ("raw bytes", true),
            ("compressed", true),
            ("ratio", true),
            ("max error", true),
            ("max p99", true),
            ("worst budget", true),
            ("mean decode ns", true),
            ("compress ms", true),
            ("warnings", true),
        ],
    );
    s.push_str("<tbody>");
    for t in d.profiles() {
        s.push_str("<tr>");
        txt(s, &t.profile);
        num(s, t.clips as f64, &t.clips.to_string());
        num(s, t.raw_bytes as f64, &int(t.raw_bytes));
        num(s, t.compressed_bytes as f64, &int(t.compressed_bytes));
        num(s, t.ratio as f64, &format!("{:.2}:1", t.ratio));
        num(s, t.max_error_m as f64, &mm(t.max_error_m));
        num(s, t.max_p99_error_m as f64, &mm(t.max_p99_error_m));
        budget(s, t.worst_budget);
        num(s, t.mean_decode_ns, &format!("{:.0}", t.mean_decode_ns));
        num(s, t.compress_ms, &format!("{:.1}", t.compress_ms));
        num(s, t.warnings as f64, &t.warnings.to_string());
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    cook_line(s, d);
    assets(s, d);
    s.push_str("</section>");
}

fn cook_line(s: &mut String, d: &Dashboard) {
    for c in &d.cooks {
        let t = &c.report.totals;
        let _ = write!(
            s,
            "<p class=\"muted\">{}: profile {}, {} assets ({} failed), package bytes {}, cook {:.0} ms, peak RSS {:.0} MB</p>",
            esc(&c.label),
            esc(&c.report.profile),
            t.assets,
            t.assets_failed,
            int(t.package_bytes),
            t.cook_ms,
            t.peak_rss_mb
        );
    }
}

fn assets(s: &mut String, d: &Dashboard) {
    let all = d.assets();
    let total = all.len();
    let _ = write!(
        s,
        "<details><summary>Per asset ({})</summary><div class=\"scroll\"><table class=\"sortable\" id=\"asset-totals\">",
        all.len()
    );
    thead(
        s,
        &[
            ("asset", false),
            ("status", false),
            ("clips", true),
            ("raw bytes", true),
            ("compressed", true),
            ("package bytes", true),
            ("max error", true),
            ("worst budget", true),
            ("compress ms", true),
            ("warnings", true),
        ],
    );
    s.push_str("<tbody>");
    for (_, a, rows) in all.into_iter().take(super::LIST_MAX) {
        let raw: u64 = rows.iter().map(|r| r.clip.raw_bytes).sum();
        let comp: u64 = rows.iter().map(|r| r.clip.compressed_bytes).sum();
        let err = rows.iter().map(|r| r.clip.max_error_m).fold(0.0, f32::max);
        let worst = rows.iter().map(|r| r.ratio()).fold(0.0, f32::max);
        let ms: f64 = rows.iter().map(|r| r.clip.compress_ms).sum();
        let warn = Dashboard::asset_warnings(a)
            + rows.iter().map(|r| r.clip.warnings.len()).sum::<usize>();
        let _ = write!(
            s,
            "<tr><td title=\"{}\">{}</td>",
            esc(&a.source),
            esc(&crate::model::file_name(&a.source))
        );
        txt(
            s,
            if a.status == AssetStatus::Ok {
                "ok"
            } else {
                "failed"
            },
        );
        num(s, rows.len() as f64, &rows.len().to_string());
        num(s, raw as f64, &int(raw));
        num(s, comp as f64, &int(comp));
        num(s, a.package_bytes as f64, &int(a.package_bytes));
        num(s, err as f64, &mm(err));
        budget(s, worst);
        num(s, ms, &format!("{ms:.1}"));
        num(s, warn as f64, &warn.to_string());
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div>");
    super::more(s, total, "filter the clip table by asset");
    s.push_str("</details>");
}
