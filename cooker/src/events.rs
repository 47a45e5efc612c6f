//! What a cook tells whoever watches it: progress bars, build-farm JSON
//! logs, the asset server's event stream. One event type, one JSON form
//! ([`CookEvent::to_json`]), so `cook --json` and a server's SSE stream
//! carry the same objects.
//!
//! JSON events: `asset_start` {source}; `plan` {source, keys: {stage: hex},
//! clips: [{name, keys}]}; `stage` {source, clip, stage, cache:
//! "hit"|"remote"|"miss", ms} ("remote": a hit the build farm's remote
//! cache served); `diagnostic` {source, severity, code, message, file,
//! clip, joint, time_s} (one per diagnostic, before its `asset_done`);
//! `inputs` {source, files} (every file the asset's cook read: the source
//! and its companions, so a watcher knows what to watch);
//! `asset_done` {source, status, package, clips}; `notice` {message}; and
//! last `summary` {assets, failed, clips, raw_bytes, compressed_bytes,
//! max_error_m, warnings, cook_ms, stages, remote, report} (`remote`: the
//! report's remote cache traffic per stage, or null without a remote cache).

use crate::report::{AssetReport, AssetStatus, Report};
use crate::stage::Stage;
use ludus_anim_cache::Key;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// One thing that happened during a cook.
pub enum CookEvent<'a> {
    AssetStarted {
        source: &'a str,
    },
    /// The key chain of an asset, derived before its stages run: its
    /// asset-level keys and each clip's, by stage.
    Planned {
        source: &'a str,
        asset: &'a [(Stage, Key)],
        clips: &'a [(String, Vec<(Stage, Key)>)],
    },
    Stage {
        source: &'a str,
        clip: Option<&'a str>,
        stage: Stage,
        hit: bool,
        /// The hit came from the build farm's remote cache.
        remote: bool,
        ms: f64,
    },
    /// Every file one asset's cook read (source first, then companions),
    /// each read once through the cook's `SourceReader`.
    Inputs {
        source: &'a str,
        files: &'a [PathBuf],
    },
    AssetFinished {
        report: &'a AssetReport,
    },
    Notice {
        message: &'a str,
    },
    /// The cook is over and its outputs are written (`out` is the output
    /// directory the report lives in).
    CookFinished {
        report: &'a Report,
        out: &'a Path,
    },
}

/// Receives a cook's events. Calls come from worker threads.
pub trait Observer: Sync {
    fn event(&self, event: &CookEvent<'_>);
}

/// An observer that ignores everything.
pub struct Silent;

impl Observer for Silent {
    fn event(&self, _: &CookEvent<'_>) {}
}

/// Several observers in turn (a progress bar and a server's stream).
pub struct Fanout<'a>(pub Vec<&'a dyn Observer>);

impl Observer for Fanout<'_> {
    fn event(&self, event: &CookEvent<'_>) {
        for o in &self.0 {
            o.event(event);
        }
    }
}

impl CookEvent<'_> {
    /// The event as JSON objects, in the order a log shows them (an
    /// `asset_done` is preceded by one `diagnostic` per diagnostic).
    pub fn to_json(&self) -> Vec<Value> {
        match self {
            CookEvent::AssetStarted { source } => {
                vec![json!({"event": "asset_start", "source": source})]
            }
            CookEvent::Planned {
                source,
                asset,
                clips,
            } => vec![json!({
                "event": "plan",
                "source": source,
                "keys": keys_json(asset),
                "clips": clips.iter().map(|(n, k)| json!({"name": n, "keys": keys_json(k)})).collect::<Vec<_>>(),
            })],
            CookEvent::Stage {
                source,
                clip,
                stage,
                hit,
                remote,
                ms,
            } => vec![json!({
                "event": "stage",
                "source": source,
                "clip": clip,
                "stage": stage.name(),
                "cache": match (hit, remote) {
                    (true, true) => "remote",
                    (true, false) => "hit",
                    (false, _) => "miss",
                },
                "ms": ms,
            })],
            CookEvent::Inputs { source, files } => vec![json!({
                "event": "inputs",
                "source": source,
                "files": files.iter().map(|f| f.display().to_string()).collect::<Vec<_>>(),
            })],
            CookEvent::AssetFinished { report } => asset_done_json(report),
            CookEvent::Notice { message } => vec![json!({"event": "notice", "message": message})],
            CookEvent::CookFinished { report, out } => vec![summary_json(report, out)],
        }
    }
}

/// `{stage name: key hex}`.
fn keys_json(keys: &[(Stage, Key)]) -> Value {
    keys.iter()
        .map(|(s, k)| (s.name().to_string(), Value::from(k.to_hex())))
        .collect::<serde_json::Map<_, _>>()
        .into()
}

fn asset_done_json(r: &AssetReport) -> Vec<Value> {
    let mut out = Vec::new();
    for d in &r.diagnostics {
        let mut v = serde_json::to_value(d).unwrap_or(Value::Null);
        if let Some(o) = v.as_object_mut() {
            o.insert("event".into(), "diagnostic".into());
            o.insert("source".into(), r.source.clone().into());
        }
        out.push(v);
    }
    out.push(json!({
        "event": "asset_done",
        "source": r.source,
        "status": if r.status == AssetStatus::Ok { "ok" } else { "failed" },
        "package": r.package,
        "clips": r.clips.len(),
    }));
    out
}

fn summary_json(report: &Report, out: &Path) -> Value {
    let t = &report.totals;
    json!({
        "event": "summary",
        "assets": t.assets,
        "failed": t.assets_failed,
        "clips": t.clips,
        "raw_bytes": t.raw_bytes,
        "compressed_bytes": t.compressed_bytes,
        "max_error_m": t.max_error_m,
        "warnings": t.warnings,
        "cook_ms": t.cook_ms,
        "stages": report.stages,
        "remote": report.remote,
        "report": out
            .join(crate::report::farm::report_file(report.shard.as_ref()))
            .display()
            .to_string(),
    })
}
