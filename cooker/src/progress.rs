//! How a cook reports progress: indicatif bars on a terminal, one plain line
//! per asset otherwise (build logs), or a JSON event stream (`--json`, one
//! object per line on stdout) for build-farm tooling.
//!
//! JSON events: `asset_start` {source}; `stage` {source, clip, stage,
//! cache: "hit"|"miss", ms}; `diagnostic` {source, severity, code, message,
//! file, clip, joint, time_s}; `asset_done` {source, status, package,
//! clips}; `notice` {message}; and last `summary` {assets, failed, clips,
//! raw_bytes, compressed_bytes, max_error_m, stages, report}.

use crate::cook::Observer;
use crate::report::{AssetReport, AssetStatus, Report};
use crate::stage_cache::Stage;
use indicatif::{ProgressBar, ProgressStyle};
use serde_json::json;
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

/// JSON lines on stdout; a lock keeps lines whole across threads.
#[derive(Default)]
pub struct JsonEvents {
    lock: Mutex<()>,
}

impl JsonEvents {
    fn emit(&self, v: serde_json::Value) {
        let _guard = self.lock.lock();
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{v}");
        let _ = out.flush();
    }
}

impl Observer for JsonEvents {
    fn asset_started(&self, source: &str) {
        self.emit(json!({"event": "asset_start", "source": source}));
    }
    fn stage(&self, source: &str, clip: Option<&str>, stage: Stage, hit: bool, ms: f64) {
        self.emit(json!({
            "event": "stage",
            "source": source,
            "clip": clip,
            "stage": stage.name(),
            "cache": if hit { "hit" } else { "miss" },
            "ms": ms,
        }));
    }
    fn asset_finished(&self, r: &AssetReport) {
        for d in &r.diagnostics {
            let mut v = serde_json::to_value(d).unwrap_or_default();
            if let Some(o) = v.as_object_mut() {
                o.insert("event".into(), "diagnostic".into());
                o.insert("source".into(), r.source.clone().into());
            }
            self.emit(v);
        }
        self.emit(json!({
            "event": "asset_done",
            "source": r.source,
            "status": if r.status == AssetStatus::Ok { "ok" } else { "failed" },
            "package": r.package,
            "clips": r.clips.len(),
        }));
    }
    fn notice(&self, message: &str) {
        self.emit(json!({"event": "notice", "message": message}));
    }
}

/// The closing `summary` event of a `--json` cook.
pub fn json_summary(report: &Report, out: &Path) {
    let t = &report.totals;
    let v = json!({
        "event": "summary",
        "assets": t.assets,
        "failed": t.assets_failed,
        "clips": t.clips,
        "raw_bytes": t.raw_bytes,
        "compressed_bytes": t.compressed_bytes,
        "max_error_m": t.max_error_m,
        "cook_ms": t.cook_ms,
        "stages": report.stages,
        "report": out.join("report.json").display().to_string(),
    });
    println!("{v}");
}

/// One line per finished asset on stderr (stdout carries the summary).
pub struct Lines;

impl Observer for Lines {
    fn asset_finished(&self, r: &AssetReport) {
        let status = if r.status == AssetStatus::Ok {
            "ok"
        } else {
            "FAILED"
        };
        eprintln!("[{status}] {} ({} clips)", r.source, r.clips.len());
    }
    fn notice(&self, message: &str) {
        eprintln!("note: {message}");
    }
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
    fn asset_started(&self, source: &str) {
        self.bar.set_message(source.to_string());
    }
    fn stage(&self, source: &str, clip: Option<&str>, stage: Stage, hit: bool, _ms: f64) {
        if !hit {
            self.bar
                .set_message(format!("{source} {} {}", clip.unwrap_or(""), stage.name()));
        }
    }
    fn asset_finished(&self, _r: &AssetReport) {
        self.bar.inc(1);
    }
    fn notice(&self, message: &str) {
        self.bar.println(format!("note: {message}"));
    }
}

impl Drop for Bars {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
