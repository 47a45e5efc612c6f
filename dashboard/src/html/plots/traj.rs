//! Root-motion trajectory from above (x right, z down the page, as a
//! top view of +Y-up space), equal scale on both axes, with the start,
//! the end and heading ticks.

use crate::html::svg::{n, Svg};
use ludus_anim_report::sidecar::TrajectorySidecar;

pub const W: f32 = 360.0;

pub fn render(t: &TrajectorySidecar, label: &str) -> String {
    let k = t.x_m.len().min(t.z_m.len());
    let pts: Vec<(f32, f32)> = (0..k).map(|i| (t.x_m.0[i], t.z_m.0[i])).collect();
    let (mut x0, mut x1, mut z0, mut z1) = (0.0f32, 0.0f32, 0.0f32, 0.0f32);
    for &(x, z) in &pts {
        x0 = x0.min(x);
        x1 = x1.max(x);
        z0 = z0.min(z);
        z1 = z1.max(z);
    }
    let span = (x1 - x0).max(z1 - z0).max(0.01);
    let (pad, size) = (24.0, W - 48.0);
    let scale = size / span;
    let cx = (x0 + x1) / 2.0;
    let cz = (z0 + z1) / 2.0;
    let map = |x: f32, z: f32| {
        (
            W / 2.0 + (x - cx) * scale,
            pad + size / 2.0 + (z - cz) * scale,
        )
    };
    let mut svg = Svg::new(W, W, label);
    svg.rect(pad, pad, size, size, "#fafafa");
    let screen: Vec<(f32, f32)> = pts.iter().map(|&(x, z)| map(x, z)).collect();
    svg.polyline(&screen, "#0072b2", "series");
    let step = (k / 12).max(1);
    for i in (0..k).step_by(step) {
        let (px, pz) = screen[i];
        let yaw = t.yaw_rad.get(i).unwrap_or(0.0);
        // Heading: +Z forward rotated by yaw about +Y.
        let (dx, dz) = (yaw.sin() * 9.0, yaw.cos() * 9.0);
        svg.line(px, pz, px + dx, pz + dz, "heading");
    }
    if let (Some(&(sx, sz)), Some(&(ex, ez))) = (screen.first(), screen.last()) {
        svg.circle(sx, sz, 4.0, "#009e73", "start");
        svg.circle(ex, ez, 4.0, "#d55e00", "end");
    }
    svg.text(
        pad,
        W - 6.0,
        "start",
        "tick",
        &format!("{} m across", n(span)),
    );
    svg.text(W - pad, 16.0, "end", "tick", "top view (x →, z ↓)");
    svg.finish()
}

/// Path length and end-to-start distance (meters).
pub fn distances(t: &TrajectorySidecar) -> (f32, f32) {
    let k = t.x_m.len().min(t.z_m.len());
    let mut path = 0.0;
    for i in 1..k {
        path += (t.x_m.0[i] - t.x_m.0[i - 1]).hypot(t.z_m.0[i] - t.z_m.0[i - 1]);
    }
    let end = if k > 0 {
        (t.x_m.0[k - 1] - t.x_m.0[0]).hypot(t.z_m.0[k - 1] - t.z_m.0[0])
    } else {
        0.0
    };
    (path, end)
}
