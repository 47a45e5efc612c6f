//! Section 2: worst offenders, top 10 each (as Unreal's animation
//! compression summary lists its worst clips): clips closest to their
//! error budget, the largest clips, and joints with the time they peak.

use super::{budget, clip_link, num, thead, txt};
use crate::fmt::{int, mm};
use crate::model::{Dashboard, TOP};

pub fn render(s: &mut String, d: &Dashboard) {
    s.push_str("<section id=\"worst\"><h2>Worst offenders</h2><div class=\"cols\">");
    s.push_str(
        "<div><h3>Closest to their error budget</h3><div class=\"scroll\"><table class=\"sortable\" id=\"worst-clips\">",
    );
    thead(
        s,
        &[
            ("clip", false),
            ("budget", true),
            ("max error", true),
            ("bytes", true),
            ("worst joint", false),
            ("at s", true),
        ],
    );
    s.push_str("<tbody>");
    for r in d.worst_clips(TOP) {
        s.push_str("<tr>");
        clip_link(s, &r);
        budget(s, r.ratio());
        num(s, r.clip.max_error_m as f64, &mm(r.clip.max_error_m));
        num(
            s,
            r.clip.compressed_bytes as f64,
            &int(r.clip.compressed_bytes),
        );
        txt(s, &r.clip.worst_joint);
        num(
            s,
            r.clip.worst_time_s as f64,
            &format!("{:.3}", r.clip.worst_time_s),
        );
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div></div><div><h3>Largest clips</h3><div class=\"scroll\"><table class=\"sortable\" id=\"largest-clips\">");
    thead(
        s,
        &[
            ("clip", false),
            ("bytes", true),
            ("ratio", true),
            ("budget", true),
        ],
    );
    s.push_str("<tbody>");
    for r in d.largest_clips(TOP) {
        s.push_str("<tr>");
        clip_link(s, &r);
        num(
            s,
            r.clip.compressed_bytes as f64,
            &int(r.clip.compressed_bytes),
        );
        num(s, r.clip.ratio as f64, &format!("{:.1}:1", r.clip.ratio));
        budget(s, r.ratio());
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div></div></div><h3>Worst joints</h3><div class=\"scroll\"><table class=\"sortable\" id=\"worst-joints\">");
    thead(
        s,
        &[
            ("joint", false),
            ("clip", false),
            ("budget", true),
            ("error", true),
            ("threshold", true),
            ("at s", true),
        ],
    );
    s.push_str("<tbody>");
    for j in d.worst_joints(TOP) {
        s.push_str("<tr>");
        txt(s, &j.joint);
        clip_link(s, &j.row);
        budget(s, j.ratio);
        num(s, j.error_m as f64, &mm(j.error_m));
        num(s, j.threshold_m as f64, &mm(j.threshold_m));
        match j.time_s {
            Some(t) => num(s, t as f64, &format!("{t:.3}")),
            None => num(s, -1.0, "–"),
        }
        s.push_str("</tr>");
    }
    s.push_str("</tbody></table></div></section>");
}
