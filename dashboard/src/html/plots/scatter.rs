//! Size against error across profiles: one dot per (clip, profile) on a
//! log bytes axis, the dots of one clip joined in order of size, coloured
//! by profile; or one dot per profile for the summed view.

use crate::html::svg::{profile_color, Frame, Svg};

pub const W: f32 = 720.0;

/// One point: bytes, error (meters), profile, tooltip.
pub struct Point {
    pub bytes: f32,
    pub error_m: f32,
    pub profile: String,
    pub title: String,
}

/// `groups`: the points of each clip (or one group of profile sums).
pub fn render(groups: &[Vec<Point>], label: &str, joined: bool) -> String {
    let all = groups.iter().flatten();
    let (mut b0, mut b1, mut e1) = (f32::MAX, 0.0f32, 0.0f32);
    for p in all {
        b0 = b0.min(p.bytes.max(1.0));
        b1 = b1.max(p.bytes);
        e1 = e1.max(p.error_m);
    }
    if b1 <= 0.0 {
        (b0, b1) = (1.0, 10.0);
    }
    let f = Frame {
        left: 70.0,
        top: 20.0,
        width: W - 70.0 - 120.0,
        height: 260.0,
        x: (b0 * 0.8, b1 * 1.25),
        y: (0.0, if e1 > 0.0 { e1 * 1.1 } else { 1e-4 }),
        log_x: true,
    };
    let mut svg = Svg::new(W, 320.0, label);
    f.axes(
        &mut svg,
        ("compressed bytes (log)", "max error (mm)"),
        &|b| short_bytes(b),
        &|e| format!("{:.3}", e * 1000.0),
    );
    for g in groups {
        let mut pts: Vec<&Point> = g.iter().collect();
        pts.sort_by(|a, b| a.bytes.total_cmp(&b.bytes));
        if joined {
            let line: Vec<(f32, f32)> = pts
                .iter()
                .map(|p| (f.sx(p.bytes), f.sy(p.error_m)))
                .collect();
            svg.polyline(&line, "#bdbdbd", "join");
        }
        for p in pts {
            svg.circle(
                f.sx(p.bytes),
                f.sy(p.error_m),
                if joined { 3.0 } else { 6.0 },
                profile_color(&p.profile),
                &p.title,
            );
        }
    }
    let mut profiles: Vec<&str> = groups
        .iter()
        .flatten()
        .map(|p| p.profile.as_str())
        .collect();
    profiles.sort_unstable();
    profiles.dedup();
    for (i, p) in profiles.iter().enumerate() {
        let y = f.top + 12.0 + 16.0 * i as f32;
        let x = f.left + f.width + 16.0;
        svg.circle(x, y - 4.0, 5.0, profile_color(p), p);
        svg.text(x + 10.0, y, "start", "legend", p);
    }
    svg.finish()
}

fn short_bytes(b: f32) -> String {
    if b >= 1e6 {
        format!("{:.0} MB", b / 1e6)
    } else if b >= 1e3 {
        format!("{:.0} kB", b / 1e3)
    } else {
        format!("{b:.0} B")
    }
}
