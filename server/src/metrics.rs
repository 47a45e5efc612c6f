//! Prometheus counters (text exposition format 0.0.4), kept with atomics:
//! cooks, stage hits and misses, asset errors, cook and change-to-publish
//! latency histograms, HTTP responses by status class.

use ludus_anim_cooker::stage::Stage;
use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Histogram bucket upper bounds, seconds.
const BUCKETS: [f64; 12] = [
    0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0,
];

pub struct Histogram {
    counts: [AtomicU64; BUCKETS.len()],
    count: AtomicU64,
    sum_us: AtomicU64,
}

impl Default for Histogram {
    fn default() -> Self {
        Histogram {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            count: AtomicU64::new(0),
            sum_us: AtomicU64::new(0),
        }
    }
}

impl Histogram {
    pub fn observe(&self, seconds: f64) {
        for (b, c) in BUCKETS.iter().zip(&self.counts) {
            if seconds <= *b {
                c.fetch_add(1, Relaxed);
            }
        }
        self.count.fetch_add(1, Relaxed);
        self.sum_us.fetch_add((seconds * 1e6) as u64, Relaxed);
    }

    fn render(&self, name: &str, help: &str, out: &mut String) {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} histogram");
        for (b, c) in BUCKETS.iter().zip(&self.counts) {
            let _ = writeln!(out, "{name}_bucket{{le=\"{b}\"}} {}", c.load(Relaxed));
        }
        let n = self.count.load(Relaxed);
        let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {n}");
        let sum = self.sum_us.load(Relaxed) as f64 / 1e6;
        let _ = writeln!(out, "{name}_sum {sum}\n{name}_count {n}");
    }
}

#[derive(Default)]
pub struct Metrics {
    pub cooks: AtomicU64,
    pub cooks_failed: AtomicU64,
    pub generations: AtomicU64,
    pub asset_errors: AtomicU64,
    pub stage_hits: [AtomicU64; 16],
    pub stage_misses: [AtomicU64; 16],
    pub cook_seconds: Histogram,
    pub change_to_publish_seconds: Histogram,
    /// HTTP responses by class: 2xx, 3xx, 4xx, 5xx.
    pub responses: [AtomicU64; 4],
}

impl Metrics {
    pub fn stage(&self, stage: Stage, hit: bool) {
        let v = if hit {
            &self.stage_hits
        } else {
            &self.stage_misses
        };
        if let Some(c) = v.get(stage.index()) {
            c.fetch_add(1, Relaxed);
        }
    }

    pub fn response(&self, status: u16) {
        let class = (status / 100).clamp(2, 5) as usize - 2;
        self.responses[class].fetch_add(1, Relaxed);
    }

    /// The text exposition; `generation`, `stale` and `dirty` are gauges
    /// read from the state.
    pub fn render(&self, generation: u64, stale: usize, dirty: usize) -> String {
        let mut o = String::new();
        counter(
            &mut o,
            "ludus_anim_cooks_total",
            "Cooks run by the server.",
            self.cooks.load(Relaxed),
        );
        counter(
            &mut o,
            "ludus_anim_cook_errors_total",
            "Cooks that could not run (profile or write errors).",
            self.cooks_failed.load(Relaxed),
        );
        counter(
            &mut o,
            "ludus_anim_asset_errors_total",
            "Asset cooks that failed.",
            self.asset_errors.load(Relaxed),
        );
        counter(
            &mut o,
            "ludus_anim_generations_published_total",
            "Generations published.",
            self.generations.load(Relaxed),
        );
        gauge(
            &mut o,
            "ludus_anim_generation",
            "The published generation.",
            generation,
        );
        gauge(
            &mut o,
            "ludus_anim_stale_assets",
            "Assets served from an older cook.",
            stale as u64,
        );
        gauge(
            &mut o,
            "ludus_anim_dirty_assets",
            "Changes waiting for the cook thread.",
            dirty as u64,
        );
        let _ = writeln!(o, "# HELP ludus_anim_stage_total Stage runs by cache outcome.\n# TYPE ludus_anim_stage_total counter");
        for s in Stage::ALL {
            let i = s.index();
            for (cache, v) in [
                ("hit", self.stage_hits.get(i)),
                ("miss", self.stage_misses.get(i)),
            ] {
                let v = v.map_or(0, |v| v.load(Relaxed));
                let _ = writeln!(
                    o,
                    "ludus_anim_stage_total{{stage=\"{}\",cache=\"{cache}\"}} {v}",
                    s.name()
                );
            }
        }
        self.cook_seconds.render(
            "ludus_anim_cook_duration_seconds",
            "Wall time of each cook.",
            &mut o,
        );
        self.change_to_publish_seconds.render(
            "ludus_anim_change_to_publish_seconds",
            "From the first event of a change to the generation that contains it.",
            &mut o,
        );
        let _ = writeln!(o, "# HELP ludus_anim_http_responses_total HTTP responses by status class.\n# TYPE ludus_anim_http_responses_total counter");
        for (class, v) in ["2xx", "3xx", "4xx", "5xx"].iter().zip(&self.responses) {
            let _ = writeln!(
                o,
                "ludus_anim_http_responses_total{{class=\"{class}\"}} {}",
                v.load(Relaxed)
            );
        }
        o
    }
}

fn counter(o: &mut String, name: &str, help: &str, v: u64) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}");
}

fn gauge(o: &mut String, name: &str, help: &str, v: u64) {
    let _ = writeln!(o, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
}
