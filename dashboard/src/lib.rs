//! `ludus-anim-dashboard`: what `ludus-anim report` shows — a text summary
//! (totals, worst offenders, regressions) and one self-contained HTML file
//! (inline CSS, hand-written SVG plots, the data as embedded JSON, a little
//! vanilla JS for sorting and filtering) — from one or more cooks'
//! `report.json` and `report-sidecar.json`, optionally against a baseline.
//!
//! **Owns:** loading cooks ([`input`]), the merged view of several cooks
//! ([`model::Dashboard`]: rows, totals per profile, worst offenders), the
//! text and JSON summaries ([`text`]), the HTML page ([`html`]) and the
//! `report` command's behaviour ([`cli::run`]: output, exit code).
//!
//! **Invariants:** reads only the report crate's types (never the cooker,
//! the codec or the runtime); recomputes nothing the cook measured; the
//! HTML references no external URL of any kind (no CDN, font, image or
//! script fetched), so it opens from an artifact store or an air-gapped
//! farm; the same inputs give the same bytes.
//!
//! Several profiles: pass several cooks (`report OUT_STANDARD OUT_HERO
//! OUT_CROWD`), or one cook whose clips name different profiles; clips are
//! rows keyed by `(source, clip, profile)` and the trade-off section pairs
//! the rows of one `(source, clip)` across profiles.

#![forbid(unsafe_code)]

mod build;
pub mod cli;
pub mod error;
mod fmt;
pub mod gate;
pub mod html;
pub mod input;
pub mod model;
pub mod text;

pub use cli::{run, write_previews, Outcome, PreviewOutcome, ReportArgs};
pub use error::DashboardError;
pub use html::{render_html, HtmlOptions};
pub use input::{load_cook, Cook};
pub use model::Dashboard;
pub use text::{render_json, render_text};
