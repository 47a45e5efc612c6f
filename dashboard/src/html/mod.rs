//! The dashboard page: one self-contained HTML file. Inline CSS, inline
//! hand-written SVG, the figures embedded as JSON, and a little vanilla JS
//! (`assets/app.js`) that sorts any table by a header click and filters
//! the clip table. No URL of any kind is referenced.
//!
//! Sections, in order: totals (per profile, per asset), changes since the
//! baseline, worst offenders, the clip table, the profile trade-off, and
//! one detail per clip (error over time, heat map, bit rates, trajectory,
//! events, retarget panel).

pub mod plots;
mod png;
mod sections;
pub mod svg;

use crate::model::Dashboard;
use std::fmt::Write;
use svg::esc;

const STYLE: &str = include_str!("../../assets/style.css");
const SCRIPT: &str = include_str!("../../assets/app.js");

/// Page options.
#[derive(Clone, Debug)]
pub struct HtmlOptions {
    /// Page title (default "ludus-anim cook report").
    pub title: String,
    /// Write a detail section per clip (plots); off gives a one-screen
    /// overview for very large cooks.
    pub clip_details: bool,
}

impl Default for HtmlOptions {
    fn default() -> Self {
        HtmlOptions {
            title: "ludus-anim cook report".into(),
            clip_details: true,
        }
    }
}

/// The whole page.
pub fn render_html(d: &Dashboard, opts: &HtmlOptions) -> String {
    let mut s = String::with_capacity(256 * 1024);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>",
        esc(&opts.title)
    );
    sections::header(&mut s, d, &opts.title);
    s.push_str("<main>");
    sections::totals::render(&mut s, d);
    sections::baseline::render(&mut s, d);
    sections::worst::render(&mut s, d);
    sections::table::render(&mut s, d);
    sections::tradeoff::render(&mut s, d);
    if opts.clip_details {
        sections::clip::render_all(&mut s, d);
    }
    s.push_str("</main>");
    sections::data::render(&mut s, d);
    let _ = writeln!(s, "<script>{SCRIPT}</script></body></html>");
    s
}
