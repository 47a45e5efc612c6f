//! Bind: an asset's normalized clips put onto a project's shared skeleton
//! (a manifest `[[skeleton]]`), by joint name, so that one rig file and
//! many animation-only files give packages that share one skeleton.
//!
//! Each track moves to the shared joint of the same name; a shared joint
//! the file does not animate keeps the shared skeleton's rest (the
//! package's defaults). A track on a joint the shared skeleton lacks, or
//! on a joint whose parent is another there, is a located error: its
//! motion would land nowhere, or mean something else.

use super::normalize::Normalized;
use crate::keys::{KeyInput, KeyWriter};
use crate::stage::{CookStage, Stage};
use ludus_anim_cache::Key;
use ludus_anim_model::{Decision, Diagnostic};
use ludus_anim_runtime::Skeleton;

/// The bind stage.
pub struct Bind;

/// What binding's key covers: the asset's normalize key, the skeleton's
/// declared name and its file's normalize key (which fixes its joints and
/// rest pose).
pub struct BindSpec<'a> {
    pub normalize: &'a Key,
    pub inputs: &'a SkeletonInputs,
}

/// What a bound asset's keys cover besides its own source.
#[derive(Clone, Debug, PartialEq)]
pub struct SkeletonInputs {
    /// The `[[skeleton]]` name (the authoring identity).
    pub name: String,
    /// The normalize key of the skeleton's file.
    pub skeleton: Key,
}

impl KeyInput for SkeletonInputs {
    fn feed(&self, k: &mut KeyWriter) {
        let SkeletonInputs { name, skeleton } = self;
        k.put(name).put(skeleton);
    }
}

impl KeyInput for BindSpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let BindSpec { normalize, inputs } = self;
        k.put(*normalize).put(*inputs);
    }
}

pub struct BindInput<'a> {
    pub source: &'a Normalized,
    pub skeleton: &'a Normalized,
    pub name: &'a str,
    pub file: &'a str,
}

impl CookStage for Bind {
    const STAGE: Stage = Stage::Bind;
    type Spec<'a> = BindSpec<'a>;
    type Input<'a> = BindInput<'a>;
    type Output = Normalized;

    fn run(_: &BindSpec<'_>, i: BindInput<'_>) -> Result<Normalized, Diagnostic> {
        bind(i.source, i.skeleton, i.name, i.file)
    }
}

fn parent_name(sk: &Skeleton, joint: usize) -> Option<&str> {
    sk.parent(joint).map(|p| sk.name(p))
}

/// `source`'s clips on `skeleton`'s joints (see the module docs).
pub fn bind(
    source: &Normalized,
    skeleton: &Normalized,
    name: &str,
    file: &str,
) -> Result<Normalized, Diagnostic> {
    let (from, to) = (&source.skeleton, &skeleton.skeleton);
    let target_of: Vec<Option<usize>> = (0..from.joint_count())
        .map(|j| to.find_by_name(from.name(j)))
        .collect();
    let mut clips = Vec::with_capacity(source.clips.len());
    for clip in &source.clips {
        let mut c = clip.clone();
        for tr in &mut c.tracks {
            let joint = from.name(tr.joint);
            let Some(t) = target_of.get(tr.joint).copied().flatten() else {
                return Err(Diagnostic::error(
                    "unbound_track",
                    format!("the track of joint '{joint}' has no joint of that name in skeleton '{name}'"),
                )
                .file(file)
                .clip(&clip.name)
                .joint(joint));
            };
            let (pf, pt) = (parent_name(from, tr.joint), parent_name(to, t));
            // A synthetic root above the file's roots is no authored parent.
            let synthetic = |p: Option<&str>| p == Some(super::normalize::SYNTHETIC_ROOT);
            if pf != pt && !(synthetic(pf) && pt.is_none()) && !(pf.is_none() && synthetic(pt)) {
                return Err(Diagnostic::error(
                    "skeleton_mismatch",
                    format!(
                        "joint '{joint}' is a child of '{}' here but of '{}' in skeleton '{name}'",
                        pf.unwrap_or("(root)"),
                        pt.unwrap_or("(root)")
                    ),
                )
                .file(file)
                .clip(&clip.name)
                .joint(joint));
            }
            tr.joint = t;
        }
        c.tracks.sort_by_key(|t| t.joint);
        clips.push(c);
    }
    let mut animated = vec![false; to.joint_count()];
    for c in &clips {
        for tr in &c.tracks {
            if let Some(a) = animated.get_mut(tr.joint) {
                *a = true;
            }
        }
    }
    let unanimated = animated.iter().filter(|a| !**a).count();
    let mut decisions = source.decisions.clone();
    decisions.push(Decision::new(
        "skeleton",
        format!(
            "clips bound by joint name to skeleton '{name}' ({} joints, identity {}); {unanimated} of its joints have no track here and play its rest",
            to.joint_count(),
            to.identity().to_hex()
        ),
    ));
    Ok(Normalized {
        skeleton: to.clone(),
        clips,
        file_shells_m: None,
        unit_scale_m: source.unit_scale_m,
        decisions,
        warnings: source.warnings.clone(),
        skins: Vec::new(),
        // The shared skeleton's sockets, for measuring the clips' error at
        // them; its package carries them.
        sockets: skeleton.sockets.clone(),
    })
}
