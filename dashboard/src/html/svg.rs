//! A small SVG and HTML writer: escaping, compact numbers, a plot frame
//! with linear or log axes and "nice" ticks. Inline SVG inside HTML needs
//! no namespace declaration, so the page carries no URL at all.

use std::fmt::Write;

/// Escape text for HTML/SVG content and attribute values.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => o.push(c),
        }
    }
    o
}

/// A coordinate with one decimal, trailing `.0` dropped (`12.5`, `3`).
pub fn n(x: f32) -> String {
    let x = if x.is_finite() { x } else { 0.0 };
    let r = (x * 10.0).round() / 10.0;
    if r.fract() == 0.0 {
        format!("{}", r as i64)
    } else {
        format!("{r:.1}")
    }
}

/// Series colours (colour-blind-safe Okabe–Ito order).
pub const PALETTE: [&str; 8] = [
    "#0072b2", "#d55e00", "#009e73", "#cc79a7", "#e69f00", "#56b4e9", "#7f7f7f", "#f0e442",
];

/// The colour a profile always gets (standard, hero, crowd first).
pub fn profile_color(profile: &str) -> &'static str {
    match profile {
        "standard" => PALETTE[0],
        "hero" => PALETTE[1],
        "crowd" => PALETTE[2],
        other => {
            let h = other
                .bytes()
                .fold(0usize, |a, b| a.wrapping_mul(31).wrapping_add(b as usize));
            PALETTE[3 + h % 5]
        }
    }
}

/// An SVG element being written.
pub struct Svg {
    out: String,
}

impl Svg {
    /// `<svg>` of `w × h` user units, labelled for screen readers.
    pub fn new(w: f32, h: f32, label: &str) -> Svg {
        let mut out = String::with_capacity(4096);
        let _ = write!(
            out,
            "<svg class=\"plot\" viewBox=\"0 0 {} {}\" width=\"{}\" height=\"{}\" role=\"img\" aria-label=\"{}\">",
            n(w),
            n(h),
            n(w),
            n(h),
            esc(label)
        );
        Svg { out }
    }
    pub fn raw(&mut self, s: &str) {
        self.out.push_str(s);
    }
    pub fn rect(&mut self, x: f32, y: f32, w: f32, h: f32, fill: &str) {
        let _ = write!(
            self.out,
            "<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"{fill}\"/>",
            n(x),
            n(y),
            n(w.max(0.0)),
            n(h.max(0.0))
        );
    }
    pub fn line(&mut self, x1: f32, y1: f32, x2: f32, y2: f32, class: &str) {
        let _ = write!(
            self.out,
            "<line class=\"{class}\" x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\"/>",
            n(x1),
            n(y1),
            n(x2),
            n(y2)
        );
    }
    /// Text; `anchor` is `start`, `middle` or `end`.
    pub fn text(&mut self, x: f32, y: f32, anchor: &str, class: &str, s: &str) {
        let _ = write!(
            self.out,
            "<text class=\"{class}\" x=\"{}\" y=\"{}\" text-anchor=\"{anchor}\">{}</text>",
            n(x),
            n(y),
            esc(s)
        );
    }
    /// An open path through `pts` (nothing for fewer than two points).
    pub fn polyline(&mut self, pts: &[(f32, f32)], color: &str, class: &str) {
        if pts.len() < 2 {
            return;
        }
        // Whole pixels: a 720-unit plot needs no finer step, and a long
        // line costs about seven bytes a point.
        let mut d = String::with_capacity(pts.len() * 8);
        for (i, (x, y)) in pts.iter().enumerate() {
            let sep = if i == 0 {
                "M"
            } else if i == 1 {
                "L"
            } else {
                " "
            };
            let _ = write!(d, "{sep}{} {}", x.round() as i32, y.round() as i32);
        }
        let _ = write!(
            self.out,
            "<path class=\"{class}\" d=\"{d}\" stroke=\"{color}\" fill=\"none\"/>"
        );
    }
    pub fn circle(&mut self, x: f32, y: f32, r: f32, fill: &str, title: &str) {
        let _ = write!(
            self.out,
            "<circle cx=\"{}\" cy=\"{}\" r=\"{}\" fill=\"{fill}\"><title>{}</title></circle>",
            n(x),
            n(y),
            n(r),
            esc(title)
        );
    }
    pub fn finish(mut self) -> String {
        self.out.push_str("</svg>");
        self.out
    }
}

/// Tick values covering `[lo, hi]` at a 1-2-5 step, about `count` of them.
pub fn ticks(lo: f32, hi: f32, count: usize) -> Vec<f32> {
    let span = hi - lo;
    if !(span.is_finite() && span > 0.0) {
        return vec![lo];
    }
    let raw = span / count.max(1) as f32;
    let mag = 10f32.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut t = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while t <= hi + step * 1e-3 && out.len() < 50 {
        out.push(if t.abs() < step * 1e-6 { 0.0 } else { t });
        t += step;
    }
    out
}

/// A plot area inside an SVG, mapping data to pixels.
#[derive(Clone, Copy, Debug)]
pub struct Frame {
    pub left: f32,
    pub top: f32,
    pub width: f32,
    pub height: f32,
    pub x: (f32, f32),
    pub y: (f32, f32),
    pub log_x: bool,
}

impl Frame {
    fn tx(&self, v: f32) -> f32 {
        if self.log_x {
            v.max(1e-9).log10()
        } else {
            v
        }
    }
    pub fn sx(&self, v: f32) -> f32 {
        let (a, b) = (self.tx(self.x.0), self.tx(self.x.1));
        let f = if b > a {
            (self.tx(v) - a) / (b - a)
        } else {
            0.5
        };
        self.left + f.clamp(-0.05, 1.05) * self.width
    }
    pub fn sy(&self, v: f32) -> f32 {
        let (a, b) = self.y;
        let f = if b > a { (v - a) / (b - a) } else { 0.5 };
        self.top + self.height - f.clamp(-0.05, 1.05) * self.height
    }

    /// Axes, grid and labels; `fx`/`fy` format tick values.
    pub fn axes(
        &self,
        svg: &mut Svg,
        labels: (&str, &str),
        fx: &dyn Fn(f32) -> String,
        fy: &dyn Fn(f32) -> String,
    ) {
        let (b, r) = (self.top + self.height, self.left + self.width);
        for t in ticks(self.y.0, self.y.1, 4) {
            let y = self.sy(t);
            svg.line(self.left, y, r, y, "grid");
            svg.text(self.left - 4.0, y + 3.0, "end", "tick", &fy(t));
        }
        for t in self.x_ticks() {
            let x = self.sx(t);
            svg.line(x, self.top, x, b, "grid");
            svg.text(x, b + 12.0, "middle", "tick", &fx(t));
        }
        svg.line(self.left, b, r, b, "axis");
        svg.line(self.left, self.top, self.left, b, "axis");
        svg.text(r, b + 24.0, "end", "label", labels.0);
        svg.text(self.left, self.top - 5.0, "start", "label", labels.1);
    }

    fn x_ticks(&self) -> Vec<f32> {
        if !self.log_x {
            return ticks(self.x.0, self.x.1, 6);
        }
        let (a, b) = (
            self.tx(self.x.0).floor() as i32,
            self.tx(self.x.1).ceil() as i32,
        );
        (a..=b)
            .map(|e| 10f32.powi(e))
            .filter(|v| *v >= self.x.0 * 0.999 && *v <= self.x.1 * 1.001)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(ticks(0.0, 1.0, 5), vec![0.0, 0.2, 0.4, 0.6, 0.8, 1.0]);
        assert_eq!(ticks(0.0, 0.0, 5), vec![0.0]);
    }

    #[test]
    fn numbers_and_escapes() {
        assert_eq!(n(12.04), "12");
        assert_eq!(n(-3.24), "-3.2");
        assert_eq!(n(f32::NAN), "0");
        assert_eq!(esc("a<b & \"c\""), "a&lt;b &amp; &quot;c&quot;");
    }
}
