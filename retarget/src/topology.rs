//! Body parts by hierarchy and rest geometry, for rigs whose joint names
//! say nothing (`node0`..`nodeN`, another language): the two legs are the
//! branches holding the lowest leaves, their common ancestor the pelvis,
//! the head the highest leaf above it, the arms the two longest other
//! branches off the pelvis-to-head path. Inside a limb the two longest
//! consecutive bones are upper and lower limb (a hip or clavicle joint
//! before them, a toe or fingers after them). Left is `up x forward`, with
//! forward from the feet (ankle to toe) or +Z. Normalized rigs are +Y up.

use crate::names::{Part, Side};
use crate::rig::{common_ancestor, is_ancestor_or_self, path_down, PoseFk};
use ludus_anim_format::math::Vec3;
use ludus_anim_runtime::Skeleton;

/// A labelled joint.
pub(crate) type Label = (usize, Part, Side);

fn children(skel: &Skeleton, j: usize) -> impl Iterator<Item = usize> + '_ {
    (0..skel.joint_count()).filter(move |&k| skel.parent(k) == Some(j))
}

fn leaves(skel: &Skeleton) -> Vec<usize> {
    (0..skel.joint_count())
        .filter(|&j| children(skel, j).next().is_none())
        .collect()
}

/// Joints of `path` with the two longest consecutive bones starting at
/// index `i`: (i, i+1, i+2).
fn limb_core(fk: &PoseFk, path: &[usize]) -> Option<usize> {
    let len = |a: usize, b: usize| (fk.position(path[b]) - fk.position(path[a])).length();
    (0..path.len().checked_sub(2)?)
        .map(|i| (i, len(i, i + 1) + len(i + 1, i + 2)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(i, _)| i)
}

/// Path length from `top` down to its farthest leaf, and that leaf.
fn farthest_leaf(skel: &Skeleton, fk: &PoseFk, top: usize, all: &[usize]) -> Option<(f32, usize)> {
    all.iter()
        .filter(|&&l| is_ancestor_or_self(skel, top, l))
        .filter_map(|&l| {
            let p = path_down(skel, top, l)?;
            let d: f32 = p
                .windows(2)
                .map(|w| (fk.position(w[1]) - fk.position(w[0])).length())
                .sum();
            Some((d, l))
        })
        .max_by(|a, b| a.0.total_cmp(&b.0))
}

/// The child of `anc` on the way down to `j`.
fn branch_of(skel: &Skeleton, anc: usize, j: usize) -> Option<usize> {
    path_down(skel, anc, j)?.get(1).copied()
}

/// Labels for a skeleton from hierarchy and rest geometry, or `None` when
/// it has no two legs and a head.
pub(crate) fn labels(skel: &Skeleton) -> Option<Vec<Label>> {
    let fk = PoseFk::new(skel, skel.rest_pose().to_vec());
    let all = leaves(skel);
    let y = |j: usize| fk.position(j).y;
    let lo = (0..skel.joint_count()).map(y).fold(f32::INFINITY, f32::min);
    let hi = (0..skel.joint_count())
        .map(y)
        .fold(f32::NEG_INFINITY, f32::max);
    let h = (hi - lo).max(1e-6);
    // Legs: the lowest pair of leaves in two branches of their common
    // ancestor, each at least thigh, knee and foot deep below it (an IK
    // control on the floor under the root is one joint deep).
    let mut low: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&l| y(l) < lo + 0.2 * h)
        .collect();
    low.sort_by(|a, b| y(*a).total_cmp(&y(*b)));
    let deep = |p: usize, l: usize| path_down(skel, p, l).is_some_and(|path| path.len() >= 4);
    let (pelvis, a, b) = low.iter().enumerate().find_map(|(i, &a)| {
        low.iter().skip(i + 1).find_map(|&b| {
            let p = common_ancestor(skel, &[a, b]);
            (p != a && p != b && deep(p, a) && deep(p, b)).then_some((p, a, b))
        })
    })?;
    let legs = [branch_of(skel, pelvis, a)?, branch_of(skel, pelvis, b)?];
    let in_leg = |j: usize| legs.iter().any(|&l| is_ancestor_or_self(skel, l, j));
    let head = all
        .iter()
        .copied()
        .filter(|&l| !in_leg(l) && is_ancestor_or_self(skel, pelvis, l) && l != pelvis)
        .max_by(|p, q| y(*p).total_cmp(&y(*q)))?;
    let spine = path_down(skel, pelvis, head)?;
    let mut out: Vec<Label> = vec![(head, Part::Head, Side::Center)];
    if spine.len() >= 4 {
        out.push((spine[spine.len() - 2], Part::Neck, Side::Center));
    }
    let leg_parts = limb_parts(
        skel,
        &fk,
        &all,
        &legs,
        &[Part::Thigh, Part::Calf, Part::Foot, Part::Toe],
    )?;
    let arms = arm_branches(skel, &fk, &all, &spine, &legs);
    let arm_parts = limb_parts(
        skel,
        &fk,
        &all,
        &arms,
        &[Part::UpperArm, Part::ForeArm, Part::Hand, Part::Other],
    );
    let fwd = forward(&fk, &leg_parts);
    let left = Vec3::Y.cross(fwd);
    for parts in [Some(leg_parts), arm_parts].into_iter().flatten() {
        // parts: per limb, (joint, part) with the limb's side decided by
        // where its first labelled joint lies.
        let score = |limb: &Vec<(usize, Part)>| {
            limb.first().map_or(0.0, |&(j, _)| {
                (fk.position(j) - fk.position(pelvis)).dot(left)
            })
        };
        let first_left = score(&parts[0]) >= score(&parts[1]);
        for (i, limb) in parts.iter().enumerate() {
            let side = if (i == 0) == first_left {
                Side::Left
            } else {
                Side::Right
            };
            out.extend(limb.iter().map(|&(j, p)| (j, p, side)));
        }
    }
    Some(out)
}

/// The two longest branches off the spine path (not the legs, not the
/// path itself), when their lengths are alike (arms, not a tail).
fn arm_branches(
    skel: &Skeleton,
    fk: &PoseFk,
    all: &[usize],
    spine: &[usize],
    legs: &[usize; 2],
) -> [usize; 2] {
    let mut branches: Vec<(f32, usize)> = spine
        .iter()
        .flat_map(|&s| children(skel, s).collect::<Vec<_>>())
        .filter(|c| !spine.contains(c) && !legs.contains(c))
        .filter_map(|c| farthest_leaf(skel, fk, c, all).map(|(d, _)| (d, c)))
        .collect();
    branches.sort_by(|a, b| b.0.total_cmp(&a.0));
    match branches.as_slice() {
        [a, b, ..] if b.0 > 0.6 * a.0 => [a.1, b.1],
        _ => [usize::MAX, usize::MAX],
    }
}

/// Per limb branch: the limb's joints labelled with `names` (upper, lower,
/// end, after-end), a joint before the core labelled a clavicle on arms.
fn limb_parts(
    skel: &Skeleton,
    fk: &PoseFk,
    all: &[usize],
    branches: &[usize; 2],
    names: &[Part; 4],
) -> Option<Vec<Vec<(usize, Part)>>> {
    let mut out = Vec::new();
    for &top in branches {
        if top >= skel.joint_count() {
            return None;
        }
        let (_, leaf) = farthest_leaf(skel, fk, top, all)?;
        let path = path_down(skel, top, leaf)?;
        let i = limb_core(fk, &path)?;
        let mut limb: Vec<(usize, Part)> = (0..3).map(|k| (path[i + k], names[k])).collect();
        if let Some(&after) = path.get(i + 3) {
            if names[3] != Part::Other {
                limb.push((after, names[3]));
            }
        }
        if names[0] == Part::UpperArm && i >= 1 {
            limb.insert(0, (path[i - 1], Part::Clavicle));
        }
        out.push(limb);
    }
    Some(out)
}

/// Forward from the feet (ankle to toe, both legs), else +Z.
fn forward(fk: &PoseFk, legs: &[Vec<(usize, Part)>]) -> Vec3 {
    let get =
        |limb: &Vec<(usize, Part)>, p: Part| limb.iter().find(|(_, q)| *q == p).map(|(j, _)| *j);
    let v: Vec3 = legs
        .iter()
        .filter_map(|l| Some(fk.position(get(l, Part::Toe)?) - fk.position(get(l, Part::Foot)?)))
        .map(|d| Vec3::new(d.x, 0.0, d.z))
        .sum();
    v.try_normalize().unwrap_or(Vec3::Z)
}
