//! One side of the retarget (source or target) measured at its retarget
//! pose: FK, declared basis, floor, character height, hip height.

use crate::basis::basis;
use crate::profile::SideSpec;
use crate::rig::PoseFk;
use ludus_anim_format::math::{Quat, Transform, Vec3};
use ludus_anim_runtime::Skeleton;

pub(crate) struct Side<'a> {
    pub name: &'static str,
    pub skel: &'a Skeleton,
    pub pose: PoseFk,
    /// Side component frame -> canonical (+Y up, +Z forward).
    pub basis: Quat,
    pub floor: f32,
    /// Lowest and highest joint along up in the retarget pose.
    pub lowest: f32,
    pub height: f32,
}

impl<'a> Side<'a> {
    pub fn new(
        name: &'static str,
        skel: &'a Skeleton,
        spec: &SideSpec,
        pose: &[Transform],
    ) -> Result<Side<'a>, String> {
        let basis = basis(&spec.up, &spec.forward)?;
        let pose = PoseFk::new(skel, pose.to_vec());
        let ups: Vec<f32> = (0..skel.joint_count())
            .map(|j| (basis * pose.position(j)).y)
            .collect();
        let lowest = ups.iter().copied().fold(f32::INFINITY, f32::min);
        let highest = ups.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        Ok(Side {
            name,
            skel,
            pose,
            basis,
            floor: spec.floor,
            lowest,
            height: (highest - lowest).max(1e-6),
        })
    }

    /// Canonical coordinates of a component-space position or vector.
    pub fn canon(&self, v: Vec3) -> Vec3 {
        self.basis * v
    }

    /// Height of joint `j` above the lowest joint of the retarget pose.
    pub fn height_above_lowest(&self, j: usize) -> f32 {
        self.canon(self.pose.position(j)).y - self.lowest
    }
}
