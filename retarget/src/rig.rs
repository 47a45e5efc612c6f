//! Poses with their forward kinematics, and clip sampling.
//!
//! Two component-space values are kept per joint: the full affine
//! transform (positions, with scale and shear, exactly the runtime's FK)
//! and the rotation-only product of local rotations, which is what
//! rotation transfer works with (a rotation delta must not pick up a
//! parent's non-uniform scale).

use ludus_anim_format::math::{Affine3A, Quat, Transform, Vec3};
use ludus_anim_model::SourceClip;
use ludus_anim_runtime::Skeleton;

/// A local pose and its component-space transforms.
#[derive(Clone, Debug)]
pub struct PoseFk {
    pub local: Vec<Transform>,
    pub affine: Vec<Affine3A>,
    pub rot: Vec<Quat>,
}

impl PoseFk {
    pub fn new(skeleton: &Skeleton, local: Vec<Transform>) -> PoseFk {
        let n = skeleton.joint_count();
        let mut p = PoseFk {
            local,
            affine: vec![Affine3A::IDENTITY; n],
            rot: vec![Quat::IDENTITY; n],
        };
        p.fk_from(skeleton, 0);
        p
    }

    /// Recompute component values of joints `from..` (parents first).
    pub fn fk_from(&mut self, skeleton: &Skeleton, from: usize) {
        for j in from..self.local.len() {
            self.fk_joint(skeleton, j);
        }
    }

    /// Recompute one joint from its parent's (already current) values.
    pub fn fk_joint(&mut self, skeleton: &Skeleton, j: usize) {
        let l = self.local[j];
        match skeleton.parent(j) {
            Some(p) => {
                self.affine[j] = self.affine[p] * l.to_affine();
                self.rot[j] = (self.rot[p] * l.rotation).normalize();
            }
            None => {
                self.affine[j] = l.to_affine();
                self.rot[j] = l.rotation.normalize();
            }
        }
    }

    /// Recompute `joint` and its descendants.
    pub fn fk_subtree(&mut self, skeleton: &Skeleton, joint: usize) {
        let end = skeleton.subtree_ends()[joint] as usize;
        for j in joint..end {
            self.fk_joint(skeleton, j);
        }
    }

    pub fn position(&self, j: usize) -> Vec3 {
        self.affine[j].translation.into()
    }

    /// Set `j`'s local rotation so that its rotation-only component value
    /// becomes `global`.
    pub fn set_global_rotation(&mut self, skeleton: &Skeleton, j: usize, global: Quat) {
        let parent = skeleton.parent(j).map_or(Quat::IDENTITY, |p| self.rot[p]);
        self.local[j].rotation = (parent.conjugate() * global).normalize();
    }

    /// Set `j`'s local translation so that its component position becomes
    /// `position` (through the parent's full affine transform).
    pub fn set_position(&mut self, skeleton: &Skeleton, j: usize, position: Vec3) {
        self.local[j].translation = match skeleton.parent(j) {
            Some(p) => self.affine[p].inverse().transform_point3(position),
            None => position,
        };
    }
}

/// Evaluate `clip` at `t` into `out` (joints without a track keep the
/// skeleton's rest value, the model's rule for missing tracks).
pub fn sample_clip(skeleton: &Skeleton, clip: &SourceClip, t: f32, out: &mut [Transform]) {
    clip.sample_pose(skeleton.rest_pose(), t, out);
}

/// Whether `a` is `b` or one of its ancestors.
pub fn is_ancestor_or_self(skeleton: &Skeleton, a: usize, b: usize) -> bool {
    a <= b && b < skeleton.subtree_ends()[a] as usize
}

/// Joints from `start` down to `end`, parent first; `None` if `start` is
/// not an ancestor of (or equal to) `end`.
pub fn path_down(skeleton: &Skeleton, start: usize, end: usize) -> Option<Vec<usize>> {
    if !is_ancestor_or_self(skeleton, start, end) {
        return None;
    }
    let mut out = vec![end];
    let mut j = end;
    while j != start {
        j = skeleton.parent(j)?;
        out.push(j);
    }
    out.reverse();
    Some(out)
}

/// Lowest common ancestor of a set of joints (joint 0 at worst).
pub fn common_ancestor(skeleton: &Skeleton, joints: &[usize]) -> usize {
    let Some(&first) = joints.first() else {
        return 0;
    };
    let mut a = first;
    while !joints.iter().all(|&j| is_ancestor_or_self(skeleton, a, j)) {
        match skeleton.parent(a) {
            Some(p) => a = p,
            None => return a,
        }
    }
    a
}

/// A rig's rest-pose size (meters): the diagonal of the box around its
/// joints' rest positions. Only ratios of it are used (same rig, read in
/// other units), so what the box holds (IK poles, props) does not matter.
pub fn rest_size_m(skeleton: &Skeleton) -> f32 {
    let fk = PoseFk::new(skeleton, skeleton.rest_pose().to_vec());
    let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
    for j in 0..skeleton.joint_count() {
        let p = fk.position(j);
        lo = lo.min(p);
        hi = hi.max(p);
    }
    if skeleton.joint_count() == 0 {
        return 0.0;
    }
    (hi - lo).length()
}
