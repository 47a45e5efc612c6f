//! How a cook shows progress: indicatif bars on a terminal, one plain line
//! per asset otherwise (build logs), or the JSON event stream (`--json`,
//! one object per line on stdout; `events` documents the objects).

use crate::events::{CookEvent, Observer};
use crate::report::AssetStatus;
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write;
use std::sync::Mutex;

/// JSON lines on stdout; a lock keeps lines whole across threads.
#[derive(Default)]
pub struct JsonEvents {
    lock: Mutex<()>,
}

impl Observer for JsonEvents {
    fn event(&self, event: &CookEvent<'_>) {
        let _guard = self.lock.lock();
        let mut out = std::io::stdout().lock();
        for v in event.to_json() {
            let _ = writeln!(out, "{v}");
        }
        let _ = out.flush();
    }
}

/// One line per finished asset on stderr (stdout carries the summary).
pub struct Lines;

impl Observer for Lines {
    fn event(&self, event: &CookEvent<'_>) {
        match event {
            CookEvent::AssetFinished { report: r } => {
                let status = if r.status == AssetStatus::Ok {
                    "ok"
                } else {
                    "FAILED"
                };
                line(format!(
                    "[{status}] {} ({} clips)\n",
                    r.source,
                    r.clips.len()
                ));
            }
            CookEvent::Notice { message } => line(format!("note: {message}\n")),
            _ => {}
        }
    }
}

/// One line to stderr in one write (unbuffered stderr would take a
/// system call per formatted piece: thousands on a 1,000-asset cook).
pub fn line(text: String) {
    let _ = std::io::stderr().write_all(text.as_bytes());
}

/// A progress bar over assets, with the asset being cooked as message.
pub struct Bars {
    bar: ProgressBar,
}

impl Bars {
    pub fn new(assets: usize) -> Bars {
        let bar = ProgressBar::new(assets as u64);
        if let Ok(style) = ProgressStyle::with_template(
            "{spinner} [{elapsed_precise}] {bar:30} {pos}/{len} {wide_msg}",
        ) {
            bar.set_style(style);
        }
        Bars { bar }
    }
}

impl Observer for Bars {
    fn event(&self, event: &CookEvent<'_>) {
        match event {
            CookEvent::AssetStarted { source } => self.bar.set_message(source.to_string()),
            CookEvent::Stage {
                source,
                clip,
                stage,
                hit: false,
                ..
            } => self
                .bar
                .set_message(format!("{source} {} {}", clip.unwrap_or(""), stage.name())),
            CookEvent::AssetFinished { .. } => self.bar.inc(1),
            CookEvent::Notice { message } => self.bar.println(format!("note: {message}")),
            CookEvent::CookFinished { .. } => self.bar.finish_and_clear(),
            _ => {}
        }
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
