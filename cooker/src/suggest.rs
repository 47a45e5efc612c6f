//! `ludus-anim retarget suggest`: load two rigs as the cook would (import,
//! then normalize with the documented unit conventions), propose a profile
//! (`ludus_anim_retarget::suggest`), check it against both rigs the way
//! the retarget stage will, and render it with comments for a person to
//! review. Nothing is cooked and nothing is applied.

use crate::stages::normalize::{normalize, Normalized};
use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_retarget::{
    annotated_toml, retarget, suggest_with, Profile, RetargetPoses, RigInput,
};
use std::path::Path;

#[derive(Debug, thiserror::Error)]
pub enum SuggestError {
    #[error("{path}: {message}")]
    Load { path: String, message: String },
    #[error("cannot write the suggested profile: {0}")]
    Render(#[from] ludus_anim_retarget::ProfileError),
}

/// A suggested profile, its commented TOML and what checking it found.
pub struct Suggestion {
    pub profile: Profile,
    pub toml: String,
    /// Pose-mismatch warnings, or why the profile does not fit the rigs;
    /// each is also a "Check" line of the TOML.
    pub notes: Vec<String>,
    /// The profile fits both rigs (the retarget stage accepts it).
    pub valid: bool,
}

/// One rig as the cook sees it.
fn load(path: &Path, units_m: Option<f32>) -> Result<Normalized, SuggestError> {
    let fail = |message: String| SuggestError::Load {
        path: path.display().to_string(),
        message,
    };
    let asset = import_file(path, &ImportOptions::default()).map_err(|e| fail(e.to_string()))?;
    if asset.diagnostics.has_errors() {
        let first = asset
            .diagnostics
            .0
            .iter()
            .find(|d| d.severity == ludus_anim_model::Severity::Error)
            .map(|d| d.message.clone())
            .unwrap_or_default();
        return Err(fail(first));
    }
    normalize(&asset, units_m).map_err(|e| fail(e.to_string()))
}

/// How `file` is written in a profile stored in `profile_dir` (relative
/// to it, `/`-separated).
fn written(file: &Path, profile_dir: &Path) -> String {
    let root = crate::paths::absolute_root(Some(profile_dir));
    crate::paths::record(file, &root)
}

/// One rig for [`suggest_profile`]: its file, a length-unit override and
/// a forward-axis override (`+z`, `-x`, ...).
pub struct RigArg<'a> {
    pub path: &'a Path,
    pub units_m: Option<f32>,
    pub forward: Option<&'a str>,
}

/// Suggest a profile retargeting `source`'s clips onto `target`, to be
/// stored in `profile_dir` (skeleton paths are written relative to it).
pub fn suggest_profile(
    source: &RigArg,
    target: &RigArg,
    profile_dir: &Path,
) -> Result<Suggestion, SuggestError> {
    let s = load(source.path, source.units_m)?;
    let t = load(target.path, target.units_m)?;
    for (arg, n) in [(source, &s), (target, &t)] {
        if n.skeleton.joint_count() < 2 {
            return Err(SuggestError::Load {
                path: arg.path.display().to_string(),
                message: "no skeleton to retarget (fewer than two joints)".into(),
            });
        }
    }
    let (sf, tf) = (
        written(source.path, profile_dir),
        written(target.path, profile_dir),
    );
    let suggested = suggest_with(&rig(&s, &sf, source.forward), &rig(&t, &tf, target.forward));
    let profile = suggested.profile;
    let (mut notes, valid) = check(&profile, &s, &t);
    notes.extend(suggested.notes);
    let toml = annotated_toml(&profile, &notes)?;
    Ok(Suggestion {
        profile,
        toml,
        notes,
        valid,
    })
}

fn rig<'a>(n: &'a Normalized, file: &'a str, forward: Option<&'a str>) -> RigInput<'a> {
    RigInput {
        skeleton: &n.skeleton,
        file,
        clips: &n.clips,
        forward,
    }
}

/// What the retarget stage will say about `profile` on these rigs (no clip
/// is retargeted: chains, poses, pose check, contacts, twist).
fn check(profile: &Profile, s: &Normalized, t: &Normalized) -> (Vec<String>, bool) {
    let poses = RetargetPoses::resolve(profile, &s.skeleton, &s.clips, &t.skeleton, &t.clips);
    let result = poses
        .and_then(|p| retarget(&s.skeleton, &[], &t.skeleton, profile, &p).map(|r| r.diagnostics));
    match result {
        Ok(d) => (d.0.iter().map(|d| d.message.clone()).collect(), true),
        Err(e) => (
            vec![format!(
                "DOES NOT FIT the rigs as written (fix before cooking): {e}"
            )],
            false,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn skeleton_paths_are_relative_to_the_profile() {
        let dir = std::env::current_dir().unwrap();
        assert_eq!(
            written(&dir.join("a/b.bvh"), &dir.join("profiles")),
            "../a/b.bvh"
        );
    }
}
