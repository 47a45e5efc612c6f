//! Keeping [`Health`] true: the project error, and each asset's change
//! that is not what is served. Every change of either is one log line, one
//! `health` event and a wake-up for long-polls.

use super::Worker;
use crate::health::{Health, Problem};
use crate::state::unix_ms;
use ludus_anim_cooker::report::{AssetReport, AssetStatus, Severity};
use std::collections::BTreeMap;
use std::time::SystemTime;

/// A generation that could not be written: its message and the assets
/// whose new state it held.
#[derive(Clone, Debug, Default)]
pub(super) struct Unpublished {
    pub message: String,
    pub assets: Vec<String>,
}

impl Worker {
    /// Set or clear the project error (`cause`, message).
    pub(super) fn set_project_error(&mut self, error: Option<(&'static str, String)>) {
        let now = unix_ms(SystemTime::now());
        let new = error.map(|(cause, message)| Problem {
            cause,
            message,
            since_unix_ms: now,
            diagnostics: Vec::new(),
        });
        let mut health = self.shared.health();
        let same = match (&health.project_error, &new) {
            (Some(a), Some(b)) => a.same(b),
            (None, None) => true,
            _ => false,
        };
        if same {
            return;
        }
        match &new {
            Some(p) => eprintln!(
                "ludus-anim-server: project error ({}): {}; serving generation {} until it is fixed",
                p.cause,
                p.message,
                self.shared.current().map_or(0, |c| c.number)
            ),
            None => eprintln!("ludus-anim-server: project error cleared: the project resolves again"),
        }
        health.project_error = new;
        self.store_health(health);
    }

    /// Recompute every asset's unapplied change from its state and the
    /// last failed publication (if any), logging what changed.
    pub(super) fn refresh_health(&mut self) {
        let mut health = self.shared.health();
        let now = unix_ms(SystemTime::now());
        let mut next: BTreeMap<String, Problem> = BTreeMap::new();
        for name in &self.order {
            if let Some(p) = self
                .assets
                .get(name)
                .and_then(|s| problem_of(&s.report, now))
            {
                next.insert(name.clone(), p);
            }
        }
        if let Some(u) = &self.unpublished {
            for name in &u.assets {
                next.entry(name.clone()).or_insert_with(|| Problem {
                    cause: "publish_failed",
                    message: u.message.clone(),
                    since_unix_ms: now,
                    diagnostics: Vec::new(),
                });
            }
        }
        let mut changed = next.len() != health.not_applied.len();
        for (name, p) in next.iter_mut() {
            match health.not_applied.get(name) {
                Some(old) if old.same(p) => p.since_unix_ms = old.since_unix_ms,
                _ => {
                    changed = true;
                    self.log_problem(name, p);
                }
            }
        }
        for name in health.not_applied.keys().filter(|n| !next.contains_key(*n)) {
            changed = true;
            if self.jobs.contains_key(name) {
                eprintln!("ludus-anim-server: {name}: change applied");
            }
        }
        if changed {
            health.not_applied = next;
            self.store_health(health);
        }
    }

    fn log_problem(&self, name: &str, p: &Problem) {
        let served = match self.assets.get(name).and_then(|s| s.good.as_ref()) {
            Some(_) => "serving its last good package",
            None => "it has no package",
        };
        eprintln!(
            "ludus-anim-server: {name}: change not applied ({}): {}; {served}",
            p.cause, p.message
        );
    }

    fn store_health(&self, health: Health) {
        let event = serde_json::json!({"event": "health", "ok": health.ok(), "health": &health});
        if let Ok(mut h) = self.shared.health.write() {
            *h = health;
        }
        self.shared.emit(event.to_string());
        self.shared.bump();
    }
}

/// Why an asset's latest cook is not served, if it failed.
fn problem_of(r: &AssetReport, now: u64) -> Option<Problem> {
    if r.status != AssetStatus::Failed {
        return None;
    }
    let errors: Vec<_> = r
        .diagnostics
        .iter()
        .filter(|d| d.severity == Severity::Error)
        .cloned()
        .collect();
    let first = errors.first();
    let cause = match first.map(|d| d.code.as_str()) {
        Some(super::SOURCE_MISSING) => "source_missing",
        _ => "cook_failed",
    };
    Some(Problem {
        cause,
        message: first.map_or_else(|| "the cook failed".to_string(), |d| d.message.clone()),
        since_unix_ms: now,
        diagnostics: errors,
    })
}
