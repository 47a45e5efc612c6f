//! Lines over time: error of the worst joints with their thresholds, foot
//! height and speed with contact bands and skate flags.

use crate::html::svg::{esc, n, Frame, Svg};

pub struct Series {
    pub name: String,
    pub color: &'static str,
    pub points: Vec<(f32, f32)>,
}

/// A horizontal reference line (a threshold).
pub struct HLine {
    pub y: f32,
    pub label: String,
    pub color: &'static str,
}

/// A shaded time span (`class` picks the fill in the stylesheet).
pub struct Band {
    pub x0: f32,
    pub x1: f32,
    pub class: &'static str,
    pub title: String,
}

pub struct LinePlot<'a> {
    pub label: &'a str,
    pub x_label: &'a str,
    pub y_label: &'a str,
    pub x_range: (f32, f32),
    pub series: Vec<Series>,
    pub hlines: Vec<HLine>,
    pub bands: Vec<Band>,
    /// Formats a y tick.
    pub fy: &'a dyn Fn(f32) -> String,
}

pub const W: f32 = 720.0;

impl LinePlot<'_> {
    fn y_max(&self) -> f32 {
        let pts = self
            .series
            .iter()
            .flat_map(|s| s.points.iter().map(|p| p.1));
        let m = pts
            .chain(self.hlines.iter().map(|h| h.y))
            .fold(0.0f32, f32::max);
        if m > 0.0 && m.is_finite() {
            m * 1.08
        } else {
            1.0
        }
    }

    pub fn render(&self, height: f32) -> String {
        let f = Frame {
            left: 64.0,
            top: 18.0,
            width: W - 64.0 - 150.0,
            height: height - 18.0 - 30.0,
            x: self.x_range,
            y: (0.0, self.y_max()),
            log_x: false,
        };
        let mut svg = Svg::new(W, height, self.label);
        for b in &self.bands {
            let (x0, x1) = (f.sx(b.x0), f.sx(b.x1));
            svg.raw(&format!(
                "<rect class=\"{}\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"><title>{}</title></rect>",
                b.class,
                n(x0),
                n(f.top),
                n((x1 - x0).max(1.0)),
                n(f.height),
                esc(&b.title)
            ));
        }
        f.axes(
            &mut svg,
            (self.x_label, self.y_label),
            &|t| format!("{t:.2}"),
            self.fy,
        );
        let legend_x = f.left + f.width + 12.0;
        for (i, s) in self.series.iter().enumerate() {
            let pts: Vec<(f32, f32)> = s.points.iter().map(|&(x, y)| (f.sx(x), f.sy(y))).collect();
            svg.polyline(&pts, s.color, "series");
            let y = f.top + 10.0 + 14.0 * i as f32;
            svg.raw(&format!(
                "<rect x=\"{}\" y=\"{}\" width=\"14\" height=\"3\" fill=\"{}\"/>",
                n(legend_x),
                n(y - 4.5),
                s.color
            ));
            svg.text(legend_x + 18.0, y, "start", "legend", &s.name);
        }
        for (i, h) in self.hlines.iter().enumerate() {
            let y = f.sy(h.y);
            svg.raw(&format!(
                "<line class=\"threshold\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\"/>",
                n(f.left),
                n(y),
                n(f.left + f.width),
                n(y),
                h.color
            ));
            let ly = f.top + 10.0 + 14.0 * (self.series.len() + i) as f32;
            svg.text(legend_x, ly, "start", "legend", &h.label);
        }
        svg.finish()
    }
}
