//! Retarget: a normalized source asset → a normalized asset on the target
//! skeleton, through an explicit profile (`ludus-anim-retarget`; format
//! and math in `schemas/retarget.md`). Everything after it (resample,
//! prepare, encode, verify, package) runs unchanged on the target, so root
//! motion and additive deltas are made against the target's reference,
//! never carried over as prepared deltas.

use super::normalize::Normalized;
use crate::keys::{KeyInput, KeyWriter, RetargetInputs};
use crate::stage::{CookStage, Stage};
use ludus_anim_cache::Key;
use ludus_anim_model::{Diagnostic, Severity};
use ludus_anim_retarget::{retarget, ClipMetrics, FootTracks, Profile, RetargetPoses};
use serde::{Deserialize, Serialize};

/// The stage's output.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct RetargetedAsset {
    /// The clips on the target skeleton, in meters.
    pub asset: Normalized,
    /// Per source clip, by name: skating, contacts, end effectors, bone
    /// lengths, flips, twists.
    pub metrics: Vec<ClipMetrics>,
    /// Per source clip, by name: the target feet at the profile's bake
    /// rate (height, speed, contact and skate flags) for the dashboard.
    pub feet: Vec<FootTracks>,
    /// Pose-mismatch warnings and budget breaches (errors fail the asset).
    pub diagnostics: Vec<Diagnostic>,
}

impl RetargetedAsset {
    pub fn has_errors(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.severity == Severity::Error)
    }
}

/// The retarget stage.
pub struct Retarget;

/// What the retarget's key covers: the retargeter's version, the source's
/// normalize key, the profile's content and the target skeleton's
/// normalize key (which fixes its identity and rest pose).
pub struct RetargetSpec<'a> {
    pub normalize: &'a Key,
    pub inputs: &'a RetargetInputs,
}

impl KeyInput for RetargetSpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let RetargetSpec { normalize, inputs } = self;
        k.put(&ludus_anim_retarget::RETARGET_VERSION)
            .put(*normalize)
            .put(*inputs);
    }
}

/// The normalized source and target and the parsed profile.
pub struct RetargetInput<'a> {
    pub source: &'a Normalized,
    pub target: &'a Normalized,
    pub profile: &'a Profile,
    pub file: &'a str,
    /// The profile's path as recorded, for error messages only (never in
    /// the output: a cached result is the same whatever the spelling).
    pub profile_path: &'a str,
}

impl CookStage for Retarget {
    const STAGE: Stage = Stage::Retarget;
    type Spec<'a> = RetargetSpec<'a>;
    type Input<'a> = RetargetInput<'a>;
    type Output = RetargetedAsset;

    fn run(_: &RetargetSpec<'_>, i: RetargetInput<'_>) -> Result<RetargetedAsset, Diagnostic> {
        retarget_asset(i.source, i.target, i.profile, i.file, i.profile_path)
    }
}

/// Retarget `source` onto `target` with `profile` (read from
/// `profile_path`, for messages). A rig the profile cannot map is a
/// diagnostic naming the asset file, the profile file, and the chain,
/// joint or field.
pub fn retarget_asset(
    source: &Normalized,
    target: &Normalized,
    profile: &Profile,
    file: &str,
    profile_path: &str,
) -> Result<RetargetedAsset, Diagnostic> {
    let fail = |e: ludus_anim_retarget::RetargetError| {
        let d = ludus_anim_retarget::error_diagnostic(file, &e);
        Diagnostic {
            message: format!("profile '{profile_path}': {}", d.message),
            ..d
        }
    };
    let poses = RetargetPoses::resolve(
        profile,
        &source.skeleton,
        &source.clips,
        &target.skeleton,
        &target.clips,
    )
    .map_err(fail)?;
    let out = retarget(
        &source.skeleton,
        &source.clips,
        &target.skeleton,
        profile,
        &poses,
    )
    .map_err(fail)?;
    let mut decisions = out.decisions;
    decisions.extend(target.decisions.iter().cloned());
    Ok(RetargetedAsset {
        asset: Normalized {
            skeleton: target.skeleton.clone(),
            clips: out.clips,
            file_shells_m: None,
            unit_scale_m: target.unit_scale_m,
            decisions,
            warnings: Vec::new(),
            skins: target.skins.clone(),
            // The target rig's sockets stay on its joints.
            sockets: target.sockets.clone(),
        },
        metrics: out.metrics,
        feet: out.feet,
        diagnostics: out
            .diagnostics
            .0
            .into_iter()
            .map(|d| Diagnostic {
                file: d.file.or_else(|| Some(file.to_string())),
                ..d
            })
            .collect(),
    })
}
