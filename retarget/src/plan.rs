//! Resolve a profile against the source and target skeletons into an
//! index plan: per target joint, where its rotation, translation and scale
//! come from. Every failure names the chain and the joint.

use crate::error::RetargetError;
use crate::profile::{ChainSpec, Profile, Role, RotationMode, TranslationMode};
use crate::rig::path_down;
use crate::side::Side;
use crate::suggestion::hint;

/// A resolved chain with each joint's normalized length along it.
#[derive(Clone, Debug)]
pub(crate) struct Chain {
    pub name: String,
    pub role: Role,
    pub joints: Vec<usize>,
    pub params: Vec<f32>,
    pub follow: Option<usize>,
}

/// Where a target joint's rotation comes from: blend of the (component
/// space) deltas of source joints `a` and `b` with weight `w` on `b`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Delta {
    pub a: usize,
    pub b: usize,
    pub w: f32,
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct Drive {
    /// `None`: keep the retarget pose's local rotation.
    pub rot: Option<Delta>,
    pub trans: TranslationMode,
    /// Source joint whose translation and scale this joint follows.
    pub near: usize,
    /// Index of the source chain (for `stretch`).
    pub src_chain: usize,
    /// Index of the target chain.
    pub tgt_chain: usize,
}

pub(crate) fn joint(side: &Side, chain: &str, name: &str) -> Result<usize, RetargetError> {
    side.skel
        .find_by_name(name)
        .ok_or_else(|| RetargetError::MissingJoint {
            side: side.name,
            chain: chain.to_string(),
            joint: name.to_string(),
            hint: hint(name, side.skel.names().iter().map(String::as_str)),
        })
}

pub(crate) fn resolve_chain(side: &Side, spec: &ChainSpec) -> Result<Chain, RetargetError> {
    let start = joint(side, &spec.name, &spec.start)?;
    let end = joint(side, &spec.name, &spec.end)?;
    let joints =
        path_down(side.skel, start, end).ok_or_else(|| RetargetError::DegenerateChain {
            side: side.name,
            chain: spec.name.clone(),
            start: spec.start.clone(),
            end: spec.end.clone(),
        })?;
    let follow = match &spec.follow {
        Some(f) => Some(joint(side, &spec.name, f)?),
        None => None,
    };
    Ok(Chain {
        name: spec.name.clone(),
        role: spec.role,
        params: chain_params(side, &joints),
        joints,
        follow,
    })
}

/// Normalized cumulative length of each joint along the chain, measured in
/// the retarget pose; joint index fractions when the chain has no length.
fn chain_params(side: &Side, joints: &[usize]) -> Vec<f32> {
    let mut cum = vec![0.0f32; joints.len()];
    for i in 1..joints.len() {
        let d = side.pose.position(joints[i]) - side.pose.position(joints[i - 1]);
        cum[i] = cum[i - 1] + d.length();
    }
    let total = cum.last().copied().unwrap_or(0.0);
    let n = joints.len();
    if total <= 1e-6 * side.height {
        return (0..n)
            .map(|i| {
                if n > 1 {
                    i as f32 / (n - 1) as f32
                } else {
                    0.0
                }
            })
            .collect();
    }
    cum.iter().map(|c| c / total).collect()
}

/// The source delta feeding target joint `k` of an `n`-joint target chain.
fn delta_for(mode: RotationMode, src: &Chain, k: usize, n: usize, u: f32) -> Option<Delta> {
    let m = src.joints.len();
    let pick = |i: usize| {
        let j = src.joints[i.min(m - 1)];
        Delta { a: j, b: j, w: 0.0 }
    };
    match mode {
        RotationMode::None => None,
        RotationMode::OneToOne => Some(pick(k)),
        RotationMode::OneToOneReversed => Some(pick((m - 1).saturating_sub(n - 1 - k))),
        RotationMode::Interpolated => {
            // Adapted idea: Unreal's IK Retargeter samples the source chain
            // at the target bone's normalized length ("Interpolated").
            let p = &src.params;
            let hi = p.partition_point(|&v| v <= u).clamp(1, m.max(2) - 1);
            if m == 1 {
                return Some(pick(0));
            }
            let (lo_p, hi_p) = (p[hi - 1], p[hi]);
            let w = if hi_p - lo_p > 1e-9 {
                ((u - lo_p) / (hi_p - lo_p)).clamp(0.0, 1.0)
            } else {
                1.0
            };
            Some(Delta {
                a: src.joints[hi - 1],
                b: src.joints[hi],
                w,
            })
        }
    }
}

/// Source chains, target chains, and per target joint its drive.
pub(crate) type Resolved = (Vec<Chain>, Vec<Chain>, Vec<Option<Drive>>);

/// Resolve chains and the chain map into per-target-joint drives.
pub(crate) fn resolve_drives(
    profile: &Profile,
    source: &Side,
    target: &Side,
) -> Result<Resolved, RetargetError> {
    let src_chains = profile
        .source
        .chains
        .iter()
        .map(|c| resolve_chain(source, c))
        .collect::<Result<Vec<_>, _>>()?;
    let tgt_chains = profile
        .target
        .chains
        .iter()
        .map(|c| resolve_chain(target, c))
        .collect::<Result<Vec<_>, _>>()?;
    let mut drives: Vec<Option<Drive>> = vec![None; target.skel.joint_count()];
    let mut owner: Vec<Option<usize>> = vec![None; target.skel.joint_count()];
    for map in &profile.maps {
        let find = |chains: &[Chain], name: &str, side: &str| {
            chains
                .iter()
                .position(|c| c.name == name)
                .ok_or_else(|| RetargetError::BadMap {
                    source_chain: map.source.clone(),
                    target_chain: map.target.clone(),
                    message: format!(
                        "no {side} chain '{name}'{}",
                        hint(name, chains.iter().map(|c| c.name.as_str()))
                    ),
                })
        };
        let si = find(&src_chains, &map.source, "source")?;
        let ti = find(&tgt_chains, &map.target, "target")?;
        let (src, tgt) = (&src_chains[si], &tgt_chains[ti]);
        let n = tgt.joints.len();
        for (k, &j) in tgt.joints.iter().enumerate() {
            if let Some(prev) = owner[j] {
                return Err(RetargetError::JointMappedTwice {
                    joint: target.skel.name(j).to_string(),
                    first: tgt_chains[prev].name.clone(),
                    second: tgt.name.clone(),
                });
            }
            owner[j] = Some(ti);
            let rot = delta_for(map.rotation, src, k, n, tgt.params[k]);
            let near = match rot {
                Some(d) if d.w >= 0.5 => d.b,
                Some(d) => d.a,
                None => src.joints[k.min(src.joints.len() - 1)],
            };
            drives[j] = Some(Drive {
                rot,
                trans: map.translation,
                near,
                src_chain: si,
                tgt_chain: ti,
            });
        }
    }
    for (ti, (c, spec)) in tgt_chains.iter().zip(&profile.target.chains).enumerate() {
        let required = spec.required.unwrap_or(c.role.required_by_default());
        if required && !profile.maps.iter().any(|m| m.target == c.name) {
            let _ = ti;
            return Err(RetargetError::UnmappedRequiredChain {
                chain: c.name.clone(),
                role: c.role.name().to_string(),
                start: spec.start.clone(),
                end: spec.end.clone(),
            });
        }
    }
    Ok((src_chains, tgt_chains, drives))
}
