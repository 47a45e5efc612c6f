//! Joint × time heat map of error over threshold, joints in hierarchy
//! order (names indented by depth). Columns are max-pooled time buckets
//! (the worst moment of each survives), cells binned into colour levels
//! and drawn as one indexed PNG inside the SVG (a `data:` URI: one byte
//! per cell), with a tooltip rectangle per joint.

use crate::html::png;
use crate::html::svg::{esc, n, Svg};
use ludus_anim_report::packed::base64_encode;
use ludus_anim_report::sidecar::ClipSidecar;

/// Upper bounds (error / threshold) of the colour levels; above the last,
/// [`OVER`].
pub const LEVELS: [(f32, &str); 8] = [
    (0.125, "#fff7d6"),
    (0.25, "#fee391"),
    (0.375, "#fec44f"),
    (0.5, "#fe9929"),
    (0.625, "#ec7014"),
    (0.75, "#cc4c02"),
    (0.875, "#993404"),
    (1.0, "#662506"),
];
/// Colour of cells over their threshold.
pub const OVER: &str = "#7b2cbf";

pub fn level(r: f32) -> usize {
    LEVELS
        .iter()
        .position(|(hi, _)| r <= *hi)
        .unwrap_or(LEVELS.len())
}

pub const W: f32 = 720.0;
const COLUMNS: usize = 160;

fn depths(parents: &[i32]) -> Vec<usize> {
    let mut d = vec![0usize; parents.len()];
    for j in 0..parents.len() {
        if let Some(p) = usize::try_from(parents[j]).ok().filter(|&p| p < j) {
            d[j] = d[p] + 1;
        }
    }
    d
}

/// Max-pooled ratio per (joint, column).
fn pooled(s: &ClipSidecar, cols: usize) -> Vec<Vec<f32>> {
    let nt = s.time_count();
    (0..s.joint_count())
        .map(|j| {
            let mut row = vec![0.0f32; cols];
            for t in 0..nt {
                let c = t * cols / nt.max(1);
                row[c] = row[c].max(s.ratio(j, t));
            }
            row
        })
        .collect()
}

fn rgb(hex: &str) -> [u8; 3] {
    let v = u32::from_str_radix(hex.trim_start_matches('#'), 16).unwrap_or(0);
    [(v >> 16) as u8, (v >> 8) as u8, v as u8]
}

/// The heat map as an indexed PNG, `data:` URI (columns × joints).
fn image(rows: &[Vec<f32>], cols: usize) -> String {
    let mut palette: Vec<[u8; 3]> = LEVELS.iter().map(|l| rgb(l.1)).collect();
    palette.push(rgb(OVER));
    let pixels: Vec<u8> = rows
        .iter()
        .flat_map(|r| r.iter().map(|&v| level(v) as u8))
        .collect();
    let png = png::indexed(cols as u32, rows.len() as u32, &palette, &pixels);
    format!("data:image/png;base64,{}", base64_encode(&png))
}

pub fn render(s: &ClipSidecar, label: &str) -> String {
    let (nj, nt) = (s.joint_count(), s.time_count());
    let cols = nt.clamp(1, COLUMNS);
    let row_h = (560.0 / nj.max(1) as f32).clamp(3.0, 11.0);
    let names = row_h >= 7.0;
    let left = if names { 170.0 } else { 20.0 };
    let width = W - left - 10.0;
    let h = 20.0 + row_h * nj as f32 + 34.0;
    let mut svg = Svg::new(W, h, label);
    let top = 16.0;
    let rows = pooled(s, cols);
    svg.raw(&format!(
        "<image x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" preserveAspectRatio=\"none\" \
         style=\"image-rendering:pixelated\" href=\"{}\"/>",
        n(left),
        n(top),
        n(width),
        n(row_h * nj as f32),
        image(&rows, cols)
    ));
    let depth = depths(&s.parents);
    for (j, d) in depth.iter().enumerate() {
        let y = top + row_h * j as f32;
        let name = s.joints.get(j).map_or("", String::as_str);
        let (worst, at) = s.joint_worst(j);
        let when = s.times_s.get(at).unwrap_or(0.0);
        svg.raw(&format!(
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill-opacity=\"0\"><title>{}: worst {:.1}% of threshold at {when:.3} s</title></rect>",
            n(left),
            n(y),
            n(width),
            n(row_h),
            esc(name),
            worst * 100.0
        ));
        if names {
            let indent = (*d as f32 * 6.0).min(90.0);
            let short: String = name.chars().take(24).collect();
            svg.text(4.0 + indent, y + row_h - 2.0, "start", "joint", &short);
        }
    }
    let bottom = top + row_h * nj as f32;
    svg.text(left, bottom + 12.0, "start", "tick", "0 s");
    svg.text(
        left + width,
        bottom + 12.0,
        "end",
        "tick",
        &format!("{:.2} s", s.duration_s),
    );
    legend(&mut svg, 10.0, bottom + 18.0);
    svg.finish()
}

fn legend(svg: &mut Svg, x: f32, y: f32) {
    let mut lo = 0.0;
    for (i, (hi, c)) in LEVELS.iter().enumerate() {
        let lx = x + i as f32 * 64.0;
        svg.rect(lx, y, 14.0, 10.0, c);
        svg.text(
            lx + 17.0,
            y + 9.0,
            "start",
            "tick",
            &format!("≤{}%", n(hi * 100.0)),
        );
        lo = *hi;
    }
    let lx = x + LEVELS.len() as f32 * 64.0;
    svg.rect(lx, y, 14.0, 10.0, OVER);
    svg.text(
        lx + 17.0,
        y + 9.0,
        "start",
        "tick",
        &format!(">{}%", n(lo * 100.0)),
    );
}
