//! `OUT/manifest.json`: what a runtime loader or a build system needs to
//! find and trust a cook's packages. It carries no timings, so repeated
//! cooks of the same inputs write it byte for byte the same.

use serde::{Deserialize, Serialize};

/// The package manifest of one cook.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PackageManifest {
    pub cooker_version: String,
    pub package_format_version: u32,
    pub assets: Vec<ManifestAsset>,
    /// The shard this manifest covers (`cook --shard I/N` writes
    /// `manifest.shard-I-of-N.json`); absent in unsharded and merged ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<crate::ShardInfo>,
}

/// One asset with a package.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ManifestAsset {
    pub source: String,
    pub source_hash: String,
    pub package: String,
    pub package_hash: String,
    pub package_bytes: u64,
    pub skeleton_identity: String,
    pub joints: usize,
    pub clips: Vec<ManifestClip>,
}

/// One clip of a package.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
pub struct ManifestClip {
    pub name: String,
    pub codec: String,
    pub codec_version: u16,
    pub profile: String,
    pub duration_s: f32,
    pub samples: u32,
    pub sample_rate_hz: f32,
    pub loop_mode: String,
}
