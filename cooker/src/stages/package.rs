//! Package: every cooked clip of an asset → the package bytes (read back
//! through the runtime once more) and its content-derived file name.

use crate::keys::{KeyInput, KeyWriter, RetargetInputs};
use crate::manifest::AssetEntry;
use crate::package_writer::{write_package, PackageClip, PackageContents};
use crate::profile::Profile;
use crate::stage::Stage;
use crate::stages::prepare::Prepared;
use ludus_anim_cache::Key;
use ludus_anim_format::package::FORMAT_VERSION;
use ludus_anim_model::Diagnostic;
use ludus_anim_runtime::{Package, Skeleton};
use std::collections::BTreeMap;

/// File extension of packages.
pub const PACKAGE_EXT: &str = "ludanim";

/// Everything that reaches an asset's package: the key of its whole
/// record (package bytes, manifest entry, report, sidecar part). It
/// covers the import key and every setting any stage of the asset reads,
/// so an unchanged asset is served from that one record. The record is
/// stored as bytes by the pipeline, not through the generic runner.
pub struct PackageSpec<'a> {
    pub import: &'a Key,
    pub asset_name: &'a str,
    /// The source path as the package and report record it.
    pub recorded_path: &'a str,
    /// blake3 over the source bytes and every companion's bytes.
    pub source_hash: &'a [u8; 32],
    pub settings: &'a AssetEntry,
    pub units_m: Option<f32>,
    pub encoder_slack: f32,
    /// Every profile the asset references, by name, after overrides.
    pub profiles: &'a BTreeMap<String, Profile>,
    pub default_profile: &'a str,
    /// The retarget profile and target, for retargeted assets.
    pub retarget: Option<RetargetInputs>,
    /// The shared skeleton, for bound assets.
    pub skeleton: Option<super::bind::SkeletonInputs>,
}

impl KeyInput for PackageSpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let PackageSpec {
            import,
            recorded_path,
            source_hash,
            asset_name: _,
            settings: _,
            units_m: _,
            encoder_slack: _,
            profiles: _,
            default_profile: _,
            retarget: _,
            skeleton: _,
        } = self;
        k.put(*import)
            .tag(crate::COOKER_VERSION)
            .put(&FORMAT_VERSION)
            .put(*recorded_path)
            .put(*source_hash);
        self.feed_settings(k);
    }
}

impl PackageSpec<'_> {
    /// Everything but the source: the settings every stage of the asset
    /// reads, and the stage versions.
    fn feed_settings(&self, k: &mut KeyWriter) {
        let PackageSpec {
            import: _,
            recorded_path: _,
            source_hash: _,
            asset_name,
            settings,
            units_m,
            encoder_slack,
            profiles,
            default_profile,
            retarget,
            skeleton,
        } = self;
        k.put(*asset_name)
            .put(*settings)
            .put(units_m)
            .put(encoder_slack);
        for s in Stage::ALL {
            k.put(&s.version());
        }
        k.put(*profiles)
            .put(*default_profile)
            .put(retarget)
            .put(skeleton);
    }
}

/// The whole-asset record's key.
pub fn package_key(spec: &PackageSpec<'_>) -> Key {
    let s = Stage::Package;
    KeyWriter::stage(s.name(), s.version()).put(spec).finish()
}

/// What a whole-asset record proves about itself: the inputs of its key a
/// reader can compare with its own. A cache (above all a shared one) can
/// hold a record under a key it does not belong to (a writer with a key
/// derivation bug or other settings, a mis-configured or rogue server); a
/// record whose proof disagrees with the cook reading it is a miss.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct RecordProof {
    /// The record's key, hex.
    pub key: String,
    pub cooker: String,
    /// The recorded source path.
    pub source: String,
    /// blake3 of the source and its companions, hex.
    pub source_hash: String,
    /// The import key, hex.
    pub import: String,
    /// Digest of every setting and stage version the asset's stages read
    /// (`PackageSpec` without the source), hex.
    pub settings: String,
}

impl RecordProof {
    /// The proof a record of `spec` carries.
    pub fn of(spec: &PackageSpec<'_>) -> RecordProof {
        let mut settings = KeyWriter::stage("package-settings", Stage::Package.version());
        spec.feed_settings(&mut settings);
        RecordProof {
            key: package_key(spec).to_hex(),
            cooker: crate::COOKER_VERSION.to_string(),
            source: spec.recorded_path.to_string(),
            source_hash: blake3::Hash::from_bytes(*spec.source_hash)
                .to_hex()
                .to_string(),
            import: spec.import.to_hex(),
            settings: settings.finish().to_hex(),
        }
    }

    /// The first field where this (a record's) proof and `ours` differ:
    /// (field, the record's value, ours).
    pub fn disagreement<'a>(
        &'a self,
        ours: &'a RecordProof,
    ) -> Option<(&'static str, &'a str, &'a str)> {
        [
            ("key", &self.key, &ours.key),
            ("cooker", &self.cooker, &ours.cooker),
            ("source", &self.source, &ours.source),
            ("source_hash", &self.source_hash, &ours.source_hash),
            ("import", &self.import, &ours.import),
            ("settings", &self.settings, &ours.settings),
        ]
        .into_iter()
        .find(|(_, a, b)| a != b)
        .map(|(f, a, b)| (f, a.as_str(), b.as_str()))
    }
}

/// What the asset-level inputs of a package are.
pub struct PackageHeader<'a> {
    pub asset_name: &'a str,
    /// The source path the package records.
    pub source_path: &'a str,
    pub source_hash: [u8; 32],
    pub skeleton: &'a Skeleton,
    /// The skin bindings on `skeleton` (none for a bound clip package:
    /// they live in the skeleton's package).
    pub skins: &'a [ludus_anim_model::SourceSkin],
    /// Motion bounds per clip (empty: no BNDS section).
    pub bounds: &'a [Option<ludus_anim_format::skin::ClipBounds>],
    /// Sockets on `skeleton` (empty: no SOCK section).
    pub sockets: &'a [ludus_anim_format::sockets::Socket<'a>],
    /// Cooked masks and LOD levels (none: no JSET section).
    pub joint_sets: Option<&'a ludus_anim_format::joint_sets::JointSets<'a>>,
}

/// A written package.
pub struct Packaged {
    pub bytes: Vec<u8>,
    /// blake3 of `bytes`, hex.
    pub digest: String,
    /// `<asset>-<first 16 hex of digest>.ludanim`: content-named, so a
    /// package file is never rewritten with other bytes.
    pub file_name: String,
}

/// Write the package and check that the runtime loads it.
pub fn package(
    header: &PackageHeader<'_>,
    clips: Vec<PackageClip>,
    prepared: &[&Prepared],
) -> Result<Packaged, Diagnostic> {
    let contents = PackageContents {
        cooker_version: crate::COOKER_VERSION.to_string(),
        asset_name: header.asset_name.to_string(),
        source_path: header.source_path.to_string(),
        source_hash: header.source_hash,
        skeleton: header.skeleton,
        clips,
        skins: header.skins,
        bounds: header.bounds,
        sockets: header.sockets,
        joint_sets: header.joint_sets,
    };
    let bytes = write_package(&contents, prepared);
    if let Err(e) = Package::load(&bytes) {
        return Err(Diagnostic::error(
            "package_invalid",
            format!("the written package does not load: {e}"),
        )
        .file(header.source_path));
    }
    let digest = blake3::hash(&bytes).to_hex().to_string();
    let file_name = format!("{}-{}.{PACKAGE_EXT}", header.asset_name, &digest[..16]);
    Ok(Packaged {
        bytes,
        digest,
        file_name,
    })
}
