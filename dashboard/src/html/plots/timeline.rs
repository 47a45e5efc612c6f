//! Events and sync markers on the clip's timeline: one tick per mark,
//! labels on alternating rows so neighbours do not overlap.

use crate::html::svg::{esc, n, Svg};
use ludus_anim_report::sidecar::EventMark;

pub const W: f32 = 720.0;

pub fn render(events: &[EventMark], duration_s: f32, label: &str) -> String {
    let (left, width) = (20.0, W - 40.0);
    let axis_y = 22.0;
    let mut svg = Svg::new(W, 78.0, label);
    let sx = |t: f32| {
        left + if duration_s > 0.0 {
            (t / duration_s).clamp(0.0, 1.0) * width
        } else {
            0.0
        }
    };
    svg.line(left, axis_y, left + width, axis_y, "axis");
    svg.text(left, 12.0, "start", "tick", "0 s");
    svg.text(
        left + width,
        12.0,
        "end",
        "tick",
        &format!("{duration_s:.2} s"),
    );
    for (i, e) in events.iter().enumerate() {
        let x = sx(e.time_s);
        let color = if e.kind == "sync-marker" {
            "#009e73"
        } else {
            "#d55e00"
        };
        let y = axis_y + 16.0 + 14.0 * (i % 3) as f32;
        svg.raw(&format!(
            "<g><title>{} ({}) at {:.3} s</title><line class=\"mark\" x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{}\" stroke=\"{color}\"/>",
            esc(&e.name),
            esc(&e.kind),
            e.time_s,
            n(axis_y - 6.0),
            n(y - 9.0),
            x = n(x)
        ));
        svg.text(x + 2.0, y, "start", "legend", &e.name);
        svg.raw("</g>");
    }
    svg.finish()
}
