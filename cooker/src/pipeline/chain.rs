//! An asset's key chain, derived before any stage runs from the stages'
//! specs (`crate::stage::CookStage::key`): [`AssetKeys`] from what the cook
//! was asked to do and the source's bytes, [`ClipKeys`] from those and
//! each clip's settings. Each key includes the keys of the stages it reads
//! (`Stage::reads`), which determine their outputs, so the chain is the
//! whole plan; a cook emits it as a `plan` event.
//!
//! Adapted idea: bevy's asset processor (a meta hash over source and
//! settings per processed asset); departure: per-stage keys that also carry
//! the stage's code version and the package format version.

use super::curve_schema::CurveLayers;
use crate::keys::SourceDigest;
use crate::profile::Profile;
use crate::settings::ClipPrepSettings;
use crate::stage::{CookStage, Stage};
use crate::stages::bind::{Bind, BindSpec};
use crate::stages::encode::{Encode, EncodeSpec};
use crate::stages::import::{Import, ImportSpec};
use crate::stages::normalize::{Normalize, NormalizeSpec};
use crate::stages::package::{package_key, PackageSpec, RecordProof};
use crate::stages::prepare::{Prepare, PrepareSpec};
use crate::stages::resample::{Resample, ResampleSpec};
use crate::stages::retarget::{Retarget, RetargetSpec};
use crate::stages::verify::{Verify, VerifySpec};
use ludus_anim_cache::Key;
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::SourceKind;

/// The asset-level keys.
#[derive(Clone, Debug, PartialEq)]
pub struct AssetKeys {
    pub import: Key,
    pub normalize: Key,
    /// Retargeted assets only.
    pub retarget: Option<Key>,
    /// Assets bound to a shared skeleton only.
    pub bind: Option<Key>,
    /// The whole asset: package bytes, manifest entry and report.
    pub package: Key,
    /// What the whole-asset record must prove to be served.
    pub proof: RecordProof,
}

/// The import key of a source as read, under these options.
pub fn import_key(digest: &SourceDigest, options: &ImportOptions) -> Key {
    Import::key(&ImportSpec { digest, options })
}

/// The normalize key of an import under a units override.
pub fn normalize_key(import: &Key, units_m: Option<f32>) -> Key {
    Normalize::key(&NormalizeSpec { import, units_m })
}

impl AssetKeys {
    /// The key the clips chain from: the retargeted asset's, or the
    /// normalized source's.
    pub fn upstream(&self) -> &Key {
        self.retarget
            .as_ref()
            .or(self.bind.as_ref())
            .unwrap_or(&self.normalize)
    }

    /// The chain from the whole-asset spec (which holds the import key).
    pub fn derive(package: &PackageSpec<'_>) -> AssetKeys {
        let import = *package.import;
        let normalize = normalize_key(&import, package.units_m);
        let retarget = package.retarget.as_ref().map(|inputs| {
            Retarget::key(&RetargetSpec {
                normalize: &normalize,
                inputs,
            })
        });
        let bind = package.skeleton.as_ref().map(|inputs| {
            Bind::key(&BindSpec {
                normalize: &normalize,
                inputs,
            })
        });
        let proof = RecordProof::of(package);
        let package = package_key(package);
        AssetKeys {
            import,
            normalize,
            retarget,
            bind,
            package,
            proof,
        }
    }

    /// Every key, by stage, in the list's order.
    pub fn entries(&self) -> Vec<(Stage, Key)> {
        let mut v = vec![
            (Stage::Import, self.import),
            (Stage::Normalize, self.normalize),
        ];
        v.extend(self.bind.map(|k| (Stage::Bind, k)));
        v.extend(self.retarget.map(|k| (Stage::Retarget, k)));
        v.push((Stage::Package, self.package));
        v
    }
}

/// One clip as the key chain sees it.
pub struct ClipSpec<'a> {
    /// The key of the asset the clip comes from (normalize, or the
    /// retarget stage once an asset is retargeted).
    pub upstream: &'a Key,
    /// The imported clip it is cut from, and the cut (seconds).
    pub source_clip: &'a str,
    pub range: Option<(f32, f32)>,
    pub kind: SourceKind,
    pub profile: &'a Profile,
    pub prep: &'a ClipPrepSettings,
    /// The resample key of the clip an additive reference reads.
    pub reference: Option<Key>,
    pub encoder_slack: f32,
    /// The curve schema rules that apply to the clip.
    pub curves: CurveLayers<'a>,
}

/// The clip-level keys.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipKeys {
    pub resample: Key,
    pub prepare: Key,
    pub encode: Key,
    pub verify: Key,
}

impl ClipKeys {
    pub fn derive(c: &ClipSpec<'_>) -> ClipKeys {
        let resample = Resample::key(&c.resample());
        let prepare = Prepare::key(&PrepareSpec {
            resample: &resample,
            prep: c.prep,
            profile: c.profile,
            reference: c.reference,
        });
        let encode = Encode::key(&EncodeSpec {
            prepare: &prepare,
            profile: c.profile,
            slack: c.encoder_slack,
            additive: c.prep.additive.is_some(),
        });
        let verify = Verify::key(&VerifySpec {
            encode: &encode,
            curve_threshold: c.profile.curve_error_threshold,
            curves: c.curves,
            velocity_threshold: c.profile.velocity_threshold_mps,
        });
        ClipKeys {
            resample,
            prepare,
            encode,
            verify,
        }
    }

    /// Every key, by stage, in the list's order.
    pub fn entries(&self) -> Vec<(Stage, Key)> {
        vec![
            (Stage::Resample, self.resample),
            (Stage::Prepare, self.prepare),
            (Stage::Encode, self.encode),
            (Stage::Verify, self.verify),
        ]
    }
}

impl<'a> ClipSpec<'a> {
    /// The clip's resample spec.
    pub fn resample(&self) -> ResampleSpec<'a> {
        ResampleSpec {
            upstream: self.upstream,
            source_clip: self.source_clip,
            range: self.range,
            kind: self.kind,
            profile: self.profile,
        }
    }
}
