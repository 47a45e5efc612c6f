//! Bit rates per track: one row per joint (hierarchy order), a bar per
//! rotation / translation / scale track whose length is the average bits
//! per component over the segments (weighted by segment length). Tracks
//! stored once (default or constant) show as a small grey tick.

use crate::html::svg::{esc, n, Svg, PALETTE};
use ludus_anim_report::sidecar::{
    bits_index, BitRates, ClipSidecar, BITS_CONSTANT, BITS_DEFAULT, BITS_RAW,
};

pub const W: f32 = 720.0;
const KINDS: [&str; 3] = ["rotation", "translation", "scale"];
/// Bits per component at a full bar (raw f32 is drawn past it).
const FULL: f32 = 20.0;

/// What one track stores over the clip.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackBits {
    Default,
    Constant,
    /// Weighted mean bits per component and each segment's.
    Animated(f32, Vec<u8>),
}

fn segment_lengths(b: &BitRates) -> Vec<u32> {
    let starts = if b.segment_starts.is_empty() {
        vec![0]
    } else {
        b.segment_starts.clone()
    };
    let mut out = Vec::with_capacity(starts.len());
    for (i, &s) in starts.iter().enumerate() {
        let end = starts.get(i + 1).copied().unwrap_or(b.samples).max(s);
        out.push(end - s);
    }
    out
}

pub fn track_bits(b: &BitRates, joint: usize, kind: usize) -> TrackBits {
    let lens = segment_lengths(b);
    let segs = lens.len();
    let codes: Vec<u8> = (0..segs)
        .map(|s| {
            b.bits
                .get(bits_index(joint, kind, s, segs))
                .unwrap_or(BITS_DEFAULT)
        })
        .collect();
    match codes.first() {
        Some(&BITS_DEFAULT) | None => TrackBits::Default,
        Some(&BITS_CONSTANT) => TrackBits::Constant,
        Some(_) => {
            let total: u32 = lens.iter().sum();
            let sum: f32 = codes
                .iter()
                .zip(&lens)
                .map(|(&c, &l)| f32::from(c) * l as f32)
                .sum();
            TrackBits::Animated(sum / total.max(1) as f32, codes)
        }
    }
}

pub fn render(s: &ClipSidecar, b: &BitRates, label: &str) -> String {
    let nj = s.joint_count();
    let row_h = (560.0 / nj.max(1) as f32).clamp(4.0, 12.0);
    let names = row_h >= 7.0;
    let left = if names { 170.0 } else { 20.0 };
    let col_w = (W - left - 10.0) / 3.0;
    let top = 28.0;
    let mut svg = Svg::new(W, top + row_h * nj as f32 + 8.0, label);
    for (k, name) in KINDS.iter().enumerate() {
        let x = left + col_w * k as f32;
        svg.text(x, 12.0, "start", "label", &format!("{name} bits"));
        svg.line(x, top - 4.0, x, top + row_h * nj as f32, "axis");
    }
    for j in 0..nj {
        let y = top + row_h * j as f32;
        let joint = s.joints.get(j).map_or("", String::as_str);
        if names {
            svg.text(
                4.0,
                y + row_h - 2.0,
                "start",
                "joint",
                &joint.chars().take(26).collect::<String>(),
            );
        }
        for k in 0..3 {
            bar(
                &mut svg,
                (left + col_w * k as f32, y, col_w, row_h),
                joint,
                k,
                &track_bits(b, j, k),
            );
        }
    }
    svg.finish()
}

fn bar(svg: &mut Svg, (x, y, w, h): (f32, f32, f32, f32), joint: &str, k: usize, t: &TrackBits) {
    let (len, fill, what) = match t {
        TrackBits::Default => return,
        TrackBits::Constant => (3.0, "#9e9e9e", "constant (stored once)".to_string()),
        TrackBits::Animated(mean, codes) => {
            let per: Vec<String> = codes
                .iter()
                .map(|&c| {
                    if c == BITS_RAW {
                        "raw".into()
                    } else {
                        c.to_string()
                    }
                })
                .collect();
            let len = (mean / FULL).min(1.0) * (w - 24.0);
            (
                len.max(1.0),
                PALETTE[k],
                format!("{mean:.1} bits mean; per segment {}", per.join(", ")),
            )
        }
    };
    svg.raw(&format!(
        "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"><title>{} {}: {}</title></rect>",
        n(x + 1.0),
        n(y + 0.5),
        n(len),
        n((h - 1.0).max(1.0)),
        esc(joint),
        KINDS[k],
        esc(&what)
    ));
}
