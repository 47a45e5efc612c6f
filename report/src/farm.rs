//! What build farms add to a cook's outputs: the remote cache's traffic
//! ([`RemoteReport`], in `report.json` and the `--json` summary) and the
//! shard a cook was ([`ShardInfo`], in the per-shard manifest and report
//! files that `ludus-anim merge` combines).

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One stage's remote cache traffic (the remote-cache crate's counters
/// for that stage's tag). Every lookup counts exactly one of `hits`,
/// `misses`, `corrupt`, `errors` or `skipped`; every upload exactly one of
/// `uploads`, `upload_errors`, `dropped_uploads` or `skipped_uploads`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemoteStageStats {
    /// Downloads that passed the entry check.
    pub hits: u64,
    /// Entries the server does not hold (404).
    pub misses: u64,
    /// Downloads that failed the entry check or the size limit.
    pub corrupt: u64,
    /// Lookups that failed: network, timeout, unexpected status.
    pub errors: u64,
    /// Lookups not sent because the remote was disabled.
    pub skipped: u64,
    /// Entry bytes downloaded by hits (headers included).
    pub bytes_down: u64,
    /// Entries stored on the server.
    pub uploads: u64,
    /// Entry bytes uploaded (headers included).
    pub bytes_up: u64,
    /// Uploads the server or the network refused.
    pub upload_errors: u64,
    /// Uploads dropped because the write-behind queue was full.
    pub dropped_uploads: u64,
    /// Uploads not sent: the remote was disabled, or the cook ended first.
    pub skipped_uploads: u64,
}

impl RemoteStageStats {
    /// Lookups that found no usable entry, whatever the reason.
    pub fn all_misses(&self) -> u64 {
        self.misses + self.corrupt + self.errors + self.skipped
    }

    /// Adds `o`'s counters to these.
    pub fn add(&mut self, o: &RemoteStageStats) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.corrupt += o.corrupt;
        self.errors += o.errors;
        self.skipped += o.skipped;
        self.bytes_down += o.bytes_down;
        self.uploads += o.uploads;
        self.bytes_up += o.bytes_up;
        self.upload_errors += o.upload_errors;
        self.dropped_uploads += o.dropped_uploads;
        self.skipped_uploads += o.skipped_uploads;
    }
}

/// The remote cache as one cook used it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RemoteReport {
    /// The base URL (URLs with credentials are refused, so none shows).
    pub url: String,
    /// `read` or `read-write`.
    pub mode: String,
    /// Whether the remote was disabled during the cook (unreachable, timed
    /// out, credentials refused): the cook went on with the local cache.
    pub disabled: bool,
    /// Uploads still queued when the end-of-cook flush ran out of time.
    pub pending_uploads: u64,
    /// Per stage name (stages without traffic are absent).
    pub stages: BTreeMap<String, RemoteStageStats>,
}

impl RemoteReport {
    /// The sum over all stages.
    pub fn total(&self) -> RemoteStageStats {
        let mut t = RemoteStageStats::default();
        for s in self.stages.values() {
            t.add(s);
        }
        t
    }

    /// Adds another cook's traffic (merging shards): counters add up, the
    /// remote counts as disabled if it was in any of them.
    pub fn add(&mut self, o: &RemoteReport) {
        self.disabled |= o.disabled;
        self.pending_uploads += o.pending_uploads;
        for (name, s) in &o.stages {
            self.stages.entry(name.clone()).or_default().add(s);
        }
    }
}

/// Which share of a project a cook was (`cook --shard I/N`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShardInfo {
    /// 1-based shard number `I`.
    pub index: u32,
    /// Number of shards `N`.
    pub count: u32,
    /// Every job of the whole (unsharded) cook, by recorded source path, in
    /// job order: what the merge orders assets by and checks completeness
    /// against.
    pub jobs: Vec<String>,
    /// blake3 of each job's source file as this shard read it (hex, in
    /// `jobs` order; empty where unreadable): shards cooked from checkouts
    /// whose sources differ are refused by the merge.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub source_hashes: Vec<String>,
    /// Every stage's code version (`name:version`, in stage order): a
    /// development build keeps its crate version while its stages change.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stage_versions: Vec<String>,
    /// Each job's estimated cook cost (its source's bytes, glTF buffers
    /// included), in `jobs` order: what the split balances.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub costs: Vec<u64>,
    /// The split: the shard (1-based) that cooks each job, in `jobs`
    /// order. Every shard computes the same one.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub assignment: Vec<u32>,
}

impl ShardInfo {
    /// `shard-I-of-N`, the infix of the shard's file names.
    pub fn label(&self) -> String {
        shard_label(self.index, self.count)
    }
}

/// `shard-I-of-N`.
pub fn shard_label(index: u32, count: u32) -> String {
    format!("shard-{index}-of-{count}")
}

/// The report's file name in the output directory: `report.json`, or
/// `report.shard-I-of-N.json` for a shard.
pub fn report_file(shard: Option<&ShardInfo>) -> String {
    match shard {
        Some(s) => format!("report.{}.json", s.label()),
        None => "report.json".to_string(),
    }
}

/// The package manifest's file name: `manifest.json`, or
/// `manifest.shard-I-of-N.json` for a shard.
pub fn manifest_file(shard: Option<&ShardInfo>) -> String {
    match shard {
        Some(s) => format!("manifest.{}.json", s.label()),
        None => "manifest.json".to_string(),
    }
}
