//! The complete resolved plan: drives, pelvis and motion root with their
//! scales, followers, twist and contact joints, checked against both
//! skeletons before any clip is touched.

use crate::error::RetargetError;
use crate::plan::{joint, resolve_drives, Chain, Drive};
use crate::profile::{Profile, Role};
use crate::rig::{common_ancestor, is_ancestor_or_self};
use crate::side::Side;
use crate::twist::TwistPlan;
use ludus_anim_format::math::{Quat, Vec3};

pub(crate) struct Follower {
    pub joint: usize,
    pub follow: usize,
    /// Position in the followed joint's frame (full affine) at the pose.
    pub offset: Vec3,
    /// `rot_follow_pose^-1 * rot_joint_pose`, for an undriven follower.
    pub rot_offset: Quat,
}

pub(crate) struct ContactPlan {
    pub source: usize,
    pub target: usize,
    pub upper: usize,
    pub mid: usize,
}

/// Resolved root scales (canonical axes: horizontal X/Z, vertical Y).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootScales {
    pub horizontal: f32,
    pub vertical: f32,
    pub motion_root: f32,
}

pub(crate) struct Setup {
    pub src_chains: Vec<Chain>,
    pub tgt_chains: Vec<Chain>,
    pub drives: Vec<Option<Drive>>,
    /// (source, target) pelvis joints.
    pub pelvis: (usize, usize),
    pub motion_root: Option<(usize, usize)>,
    pub scales: RootScales,
    pub followers: Vec<Follower>,
    pub twists: Vec<TwistPlan>,
    pub contacts: Vec<ContactPlan>,
    /// Source component vectors -> target component vectors.
    pub a: Quat,
}

pub(crate) fn setup(profile: &Profile, s: &Side, t: &Side) -> Result<Setup, RetargetError> {
    let (src_chains, tgt_chains, mut drives) = resolve_drives(profile, s, t)?;
    let pelvis = match &profile.root.pelvis {
        Some(p) => (
            joint(s, "root.pelvis", &p.source)?,
            joint(t, "root.pelvis", &p.target)?,
        ),
        None => (
            default_pelvis(s, &src_chains)?,
            default_pelvis(t, &tgt_chains)?,
        ),
    };
    let motion_root = match &profile.root.motion_root {
        Some(p) => {
            let m = (
                joint(s, "root.motion_root", &p.source)?,
                joint(t, "root.motion_root", &p.target)?,
            );
            if !is_ancestor_or_self(s.skel, m.0, pelvis.0)
                || !is_ancestor_or_self(t.skel, m.1, pelvis.1)
                || m.0 == pelvis.0
                || m.1 == pelvis.1
            {
                return Err(RetargetError::BadRoot {
                    message:
                        "root.motion_root must be a strict ancestor of root.pelvis on both sides"
                            .into(),
                });
            }
            Some(m)
        }
        None => None,
    };
    let a = (t.basis.conjugate() * s.basis).normalize();
    // The pelvis and motion root turn with their source counterparts
    // unless a chain already drives them.
    for (src, tgt) in std::iter::once(pelvis).chain(motion_root) {
        if drives[tgt].is_none() {
            drives[tgt] = Some(Drive {
                rot: Some(crate::plan::Delta {
                    a: src,
                    b: src,
                    w: 0.0,
                }),
                trans: crate::profile::TranslationMode::None,
                near: src,
                src_chain: usize::MAX,
                tgt_chain: usize::MAX,
            });
        }
    }
    let feet =
        |side: &Side, chains: &[Chain], contact: fn(&crate::profile::ContactJoint) -> &str| {
            let mut js: Vec<usize> = chains
                .iter()
                .filter(|c| c.role.is_leg() || matches!(c.role, Role::FootL | Role::FootR))
                .flat_map(|c| c.joints.iter().copied())
                .collect();
            js.extend(
                profile
                    .contacts
                    .joints
                    .iter()
                    .filter_map(|c| side.skel.find_by_name(contact(c))),
            );
            js
        };
    let lows = (
        feet(s, &src_chains, |c| &c.source),
        feet(t, &tgt_chains, |c| &c.target),
    );
    let scales = scales(profile, s, t, pelvis, lows)?;
    let followers = followers(t, &tgt_chains);
    let twists = crate::twist::plan(profile, s, t, a)?;
    let contacts = contacts(profile, s, t, &followers)?;
    Ok(Setup {
        src_chains,
        tgt_chains,
        drives,
        pelvis,
        motion_root,
        scales,
        followers,
        twists,
        contacts,
        a,
    })
}

/// The lowest common ancestor of the spine and leg chain starts.
fn default_pelvis(side: &Side, chains: &[Chain]) -> Result<usize, RetargetError> {
    let starts: Vec<usize> = chains
        .iter()
        .filter(|c| c.role == Role::Spine || c.role.is_leg())
        .filter_map(|c| c.joints.first().copied())
        .collect();
    if starts.is_empty() {
        return Err(RetargetError::BadRoot {
            message: format!(
                "{}: no root.pelvis given and no spine or leg chain to find it from",
                side.name
            ),
        });
    }
    Ok(common_ancestor(side.skel, &starts))
}

fn scales(
    profile: &Profile,
    s: &Side,
    t: &Side,
    pelvis: (usize, usize),
    feet: (Vec<usize>, Vec<usize>),
) -> Result<RootScales, RetargetError> {
    // Hip height: the pelvis above the lowest leg or foot joint (a root
    // joint on the ground must not count), all joints without legs.
    let hip = |side: &Side, p: usize, feet: &[usize]| {
        let up = |j: usize| side.canon(side.pose.position(j)).y;
        match feet.iter().map(|&j| up(j)).reduce(f32::min) {
            Some(low) => up(p) - low,
            None => side.height_above_lowest(p),
        }
    };
    let hs = hip(s, pelvis.0, &feet.0);
    let ht = hip(t, pelvis.1, &feet.1);
    let ratio = if hs > 1e-6 * s.height && ht > 1e-6 * t.height {
        ht / hs
    } else if profile.root.vertical_scale.is_some() {
        1.0
    } else {
        return Err(RetargetError::BadRoot {
            message: format!(
                "pelvis '{}' / '{}' has no height above the feet in the retarget pose; set root.vertical_scale",
                s.skel.name(pelvis.0),
                t.skel.name(pelvis.1)
            ),
        });
    };
    let vertical = profile.root.vertical_scale.unwrap_or(ratio);
    let horizontal = profile.root.horizontal_scale.unwrap_or(ratio);
    let motion_root = profile.root.motion_root_scale.unwrap_or(horizontal);
    Ok(RootScales {
        horizontal,
        vertical,
        motion_root,
    })
}

fn followers(t: &Side, chains: &[Chain]) -> Vec<Follower> {
    let mut out = Vec::new();
    for c in chains {
        let Some(f) = c.follow else { continue };
        for &j in &c.joints {
            let inv = t.pose.affine[f].inverse();
            out.push(Follower {
                joint: j,
                follow: f,
                offset: inv.transform_point3(t.pose.position(j)),
                rot_offset: (t.pose.rot[f].conjugate() * t.pose.rot[j]).normalize(),
            });
        }
    }
    out.sort_by_key(|f| f.joint);
    out
}

fn contacts(
    profile: &Profile,
    s: &Side,
    t: &Side,
    followers: &[Follower],
) -> Result<Vec<ContactPlan>, RetargetError> {
    let mut out = Vec::new();
    for c in &profile.contacts.joints {
        let name = format!("contacts '{}'", c.target);
        let source = joint(s, &name, &c.source)?;
        let target = joint(t, &name, &c.target)?;
        let bad = |message: String| RetargetError::BadContact {
            joint: c.target.clone(),
            message,
        };
        let parent_of = |j: usize| {
            followers
                .iter()
                .find(|f| f.joint == j)
                .map(|f| f.follow)
                .or_else(|| t.skel.parent(j))
        };
        let mid = match &c.mid {
            Some(m) => joint(t, &name, m)?,
            None => parent_of(target).ok_or_else(|| bad("has no parent to bend".into()))?,
        };
        let upper = match &c.upper {
            Some(u) => joint(t, &name, u)?,
            None => t
                .skel
                .parent(mid)
                .ok_or_else(|| bad("has no grandparent to bend".into()))?,
        };
        if !is_ancestor_or_self(t.skel, upper, mid) || upper == mid {
            return Err(bad(format!(
                "IK upper '{}' is not an ancestor of mid '{}'",
                t.skel.name(upper),
                t.skel.name(mid)
            )));
        }
        let reach_a = (t.pose.position(mid) - t.pose.position(upper)).length();
        let reach_b = (t.pose.position(target) - t.pose.position(mid)).length();
        if reach_a < 1e-4 * t.height || reach_b < 1e-4 * t.height {
            return Err(bad(format!(
                "IK chain '{}' -> '{}' -> '{}' has a zero-length bone",
                t.skel.name(upper),
                t.skel.name(mid),
                t.skel.name(target)
            )));
        }
        out.push(ContactPlan {
            source,
            target,
            upper,
            mid,
        });
    }
    Ok(out)
}
