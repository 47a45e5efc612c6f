//! The dashboard page. Inline CSS, inline hand-written SVG, the figures
//! embedded as JSON, and a little vanilla JS (`assets/app.js`) that sorts
//! any table by a header click and draws the clip table a page at a time
//! (sorted, filtered). No URL of any kind is referenced.
//!
//! Two shapes: [`render_html`], one self-contained file with every clip's
//! detail inline (the asset server's `/`, small cooks); and
//! [`site::render_site`], an index page plus one detail fragment per asset
//! beside it, loaded when a clip is opened (what `report` writes: the
//! index stays small at 10,000 clips).
//!
//! Sections, in order: the gate (clips over threshold, the rules), totals
//! (per profile, per asset), changes since the baseline, worst offenders,
//! the clip table, the profile trade-off, and the clip details (error over
//! time, heat map, bit rates, trajectory, events, retarget panel); the
//! compiled programs (plan, capacities, evaluated stick figures) after the
//! trade-off when a cook has any.

pub mod plots;
mod png;
pub mod preview;
mod sections;
pub mod site;
pub mod svg;

use crate::model::Dashboard;
use std::collections::BTreeMap;
use std::fmt::Write;
use svg::esc;

const STYLE: &str = include_str!("../../assets/style.css");
const SCRIPT: &str = include_str!("../../assets/app.js");
/// The stick-figure player (`window.ludusInitPlayers`), shared with the
/// standalone retarget preview pages ([`preview`]).
const PLAYER: &str = include_str!("../../assets/player.js");

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

/// Where the clip details of a page are.
enum Details<'a> {
    /// Every clip's `<article>` in the page.
    Inline,
    /// None (`HtmlOptions::clip_details` off).
    Left,
    /// In fragments under `dir`, named per `(cook, source)`.
    Fragments {
        dir: &'a str,
        names: &'a BTreeMap<(usize, String), String>,
    },
}

/// The whole page, every clip's detail inline (with `clip_details`).
pub fn render_html(d: &Dashboard, opts: &HtmlOptions) -> String {
    let details = if opts.clip_details {
        Details::Inline
    } else {
        Details::Left
    };
    page(d, opts, details)
}

fn page(d: &Dashboard, opts: &HtmlOptions, details: Details<'_>) -> String {
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
    sections::rules::render(&mut s, d);
    sections::totals::render(&mut s, d);
    sections::baseline::render(&mut s, d);
    sections::worst::render(&mut s, d);
    sections::table::render(&mut s, d);
    sections::tradeoff::render(&mut s, d);
    sections::programs::render(&mut s, d);
    let empty = BTreeMap::new();
    let (dir, names) = match details {
        Details::Inline => {
            sections::clip::render_all(&mut s, d);
            ("", &empty)
        }
        Details::Left => ("", &empty),
        Details::Fragments { dir, names } => {
            s.push_str(
                "<section id=\"details\"><h2>Clip details</h2><p class=\"muted\" id=\"detail-hint\">\
                 Open a clip from a table: its detail loads here.</p><div id=\"detail-slot\"></div></section>",
            );
            (dir, names)
        }
    };
    s.push_str("</main>");
    sections::data::render(&mut s, d, dir, names);
    let _ = writeln!(s, "<script>{PLAYER}{SCRIPT}</script></body></html>");
    s
}
