//! The biped's joint hierarchy and rest (bind) pose.
//!
//! Units are meters, +Y is up and the character faces +Z, as glTF prescribes;
//! the character's left side is therefore +X. The rest pose is a T-pose with
//! identity local rotations, so every joint's bind transform is a pure
//! translation: inverse bind matrices are then exact negated translations,
//! which keeps the skin free of rounding surprises. The standing height is
//! 1.75 m (the `HeadTop_End` leaf).
//!
//! Joint order is parent-before-child; it is both the glTF node order and the
//! skin's joint order, so a joint's index here is its node index.

use glam::DVec3;

/// Every joint of the biped, in node / skin order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Joint {
    /// Motion root on the ground plane; carries root motion in locomotion clips.
    Root,
    Hips,
    Spine,
    Spine1,
    Chest,
    Neck,
    Head,
    /// Leaf marker at the top of the skull; nothing is skinned to it, so the
    /// cooker's leaf pruning has something to prune.
    HeadTopEnd,
    LeftShoulder,
    LeftArm,
    LeftForeArm,
    LeftHand,
    LeftHandIndex1,
    LeftHandIndex2,
    LeftHandThumb1,
    LeftHandThumb2,
    RightShoulder,
    RightArm,
    RightForeArm,
    RightHand,
    RightHandIndex1,
    RightHandIndex2,
    RightHandThumb1,
    RightHandThumb2,
    LeftUpLeg,
    LeftLeg,
    LeftFoot,
    LeftToeBase,
    RightUpLeg,
    RightLeg,
    RightFoot,
    RightToeBase,
}

/// Number of joints in the skeleton.
pub const JOINT_COUNT: usize = 32;

/// Which side of the body a joint belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Center,
    Left,
    Right,
}

/// A box of mesh skinned to one joint, spanning the bone from the joint to
/// `tip` (both in the joint's rest frame) and padded by `half_extents`.
#[derive(Clone, Copy, Debug)]
pub struct BoneBox {
    pub tip: DVec3,
    pub half_extents: DVec3,
}

impl Joint {
    /// All joints in node / skin order.
    pub const ALL: [Joint; JOINT_COUNT] = [
        Joint::Root,
        Joint::Hips,
        Joint::Spine,
        Joint::Spine1,
        Joint::Chest,
        Joint::Neck,
        Joint::Head,
        Joint::HeadTopEnd,
        Joint::LeftShoulder,
        Joint::LeftArm,
        Joint::LeftForeArm,
        Joint::LeftHand,
        Joint::LeftHandIndex1,
        Joint::LeftHandIndex2,
        Joint::LeftHandThumb1,
        Joint::LeftHandThumb2,
        Joint::RightShoulder,
        Joint::RightArm,
        Joint::RightForeArm,
        Joint::RightHand,
        Joint::RightHandIndex1,
        Joint::RightHandIndex2,
        Joint::RightHandThumb1,
        Joint::RightHandThumb2,
        Joint::LeftUpLeg,
        Joint::LeftLeg,
        Joint::LeftFoot,
        Joint::LeftToeBase,
        Joint::RightUpLeg,
        Joint::RightLeg,
        Joint::RightFoot,
        Joint::RightToeBase,
    ];

    /// Node / skin index of the joint.
    pub fn index(self) -> usize {
        self as usize
    }

    /// Joint name as written to the glTF node (Mixamo-style naming, which
    /// most retargeting tools recognise).
    pub fn name(self) -> &'static str {
        use Joint::*;
        match self {
            Root => "Root",
            Hips => "Hips",
            Spine => "Spine",
            Spine1 => "Spine1",
            Chest => "Chest",
            Neck => "Neck",
            Head => "Head",
            HeadTopEnd => "HeadTop_End",
            LeftShoulder => "LeftShoulder",
            LeftArm => "LeftArm",
            LeftForeArm => "LeftForeArm",
            LeftHand => "LeftHand",
            LeftHandIndex1 => "LeftHandIndex1",
            LeftHandIndex2 => "LeftHandIndex2",
            LeftHandThumb1 => "LeftHandThumb1",
            LeftHandThumb2 => "LeftHandThumb2",
            RightShoulder => "RightShoulder",
            RightArm => "RightArm",
            RightForeArm => "RightForeArm",
            RightHand => "RightHand",
            RightHandIndex1 => "RightHandIndex1",
            RightHandIndex2 => "RightHandIndex2",
            RightHandThumb1 => "RightHandThumb1",
            RightHandThumb2 => "RightHandThumb2",
            LeftUpLeg => "LeftUpLeg",
            LeftLeg => "LeftLeg",
            LeftFoot => "LeftFoot",
            LeftToeBase => "LeftToeBase",
            RightUpLeg => "RightUpLeg",
            RightLeg => "RightLeg",
            RightFoot => "RightFoot",
            RightToeBase => "RightToeBase",
        }
    }

    /// Body side, used to mirror left-side data onto the right.
    pub fn side(self) -> Side {
        let name = self.name();
        if name.starts_with("Left") {
            Side::Left
        } else if name.starts_with("Right") {
            Side::Right
        } else {
            Side::Center
        }
    }

    /// The left-side counterpart of a right-side joint (identity otherwise).
    /// Limb data is authored once, for the left side, and mirrored.
    pub fn left_counterpart(self) -> Joint {
        use Joint::*;
        match self {
            RightShoulder => LeftShoulder,
            RightArm => LeftArm,
            RightForeArm => LeftForeArm,
            RightHand => LeftHand,
            RightHandIndex1 => LeftHandIndex1,
            RightHandIndex2 => LeftHandIndex2,
            RightHandThumb1 => LeftHandThumb1,
            RightHandThumb2 => LeftHandThumb2,
            RightUpLeg => LeftUpLeg,
            RightLeg => LeftLeg,
            RightFoot => LeftFoot,
            RightToeBase => LeftToeBase,
            other => other,
        }
    }

    /// The right-side counterpart of a left-side joint (identity otherwise).
    pub fn right_counterpart(self) -> Joint {
        Joint::ALL
            .iter()
            .copied()
            .find(|j| j.side() == Side::Right && j.left_counterpart() == self)
            .unwrap_or(self)
    }

    /// Parent joint, `None` for the root.
    pub fn parent(self) -> Option<Joint> {
        use Joint::*;
        let left_parent = match self.left_counterpart() {
            Root => return None,
            Hips => Root,
            Spine => Hips,
            Spine1 => Spine,
            Chest => Spine1,
            Neck => Chest,
            Head => Neck,
            HeadTopEnd => Head,
            LeftShoulder => Chest,
            LeftArm => LeftShoulder,
            LeftForeArm => LeftArm,
            LeftHand => LeftForeArm,
            LeftHandIndex1 => LeftHand,
            LeftHandIndex2 => LeftHandIndex1,
            LeftHandThumb1 => LeftHand,
            LeftHandThumb2 => LeftHandThumb1,
            LeftUpLeg => Hips,
            LeftLeg => LeftUpLeg,
            LeftFoot => LeftLeg,
            LeftToeBase => LeftFoot,
            _ => Root, // unreachable: left_counterpart never yields a Right joint
        };
        Some(if self.side() == Side::Right {
            left_parent.right_counterpart()
        } else {
            left_parent
        })
    }

    /// Rest translation relative to the parent, in meters.
    pub fn rest_offset(self) -> DVec3 {
        use Joint::*;
        let left = match self.left_counterpart() {
            Root => DVec3::ZERO,
            Hips => DVec3::new(0.0, 0.95, 0.0),
            Spine => DVec3::new(0.0, 0.10, 0.0),
            Spine1 => DVec3::new(0.0, 0.12, 0.0),
            Chest => DVec3::new(0.0, 0.13, 0.0),
            Neck => DVec3::new(0.0, 0.15, 0.0),
            Head => DVec3::new(0.0, 0.10, 0.0),
            HeadTopEnd => DVec3::new(0.0, 0.20, 0.0),
            LeftShoulder => DVec3::new(0.03, 0.12, -0.01),
            LeftArm => DVec3::new(0.14, 0.0, 0.0),
            LeftForeArm => DVec3::new(0.28, 0.0, 0.0),
            LeftHand => DVec3::new(0.25, 0.0, 0.0),
            LeftHandIndex1 => DVec3::new(0.09, 0.0, 0.02),
            LeftHandIndex2 => DVec3::new(0.04, 0.0, 0.0),
            LeftHandThumb1 => DVec3::new(0.02, -0.01, 0.03),
            LeftHandThumb2 => DVec3::new(0.03, 0.0, 0.02),
            LeftUpLeg => DVec3::new(0.09, -0.05, 0.0),
            LeftLeg => DVec3::new(0.0, -0.42, 0.0),
            LeftFoot => DVec3::new(0.0, -0.40, 0.0),
            LeftToeBase => DVec3::new(0.0, -0.05, 0.13),
            _ => DVec3::ZERO, // unreachable: see `parent`
        };
        mirror_for(self, left)
    }

    /// The mesh box skinned to this joint, if any. `Root` and the `_End` leaf
    /// carry no geometry.
    pub fn bone_box(self) -> Option<BoneBox> {
        use Joint::*;
        let (tip, half) = match self.left_counterpart() {
            Root | HeadTopEnd => return None,
            Hips => ((0.0, 0.10, 0.0), (0.15, 0.05, 0.10)),
            Spine => ((0.0, 0.12, 0.0), (0.13, 0.0, 0.09)),
            Spine1 => ((0.0, 0.13, 0.0), (0.14, 0.0, 0.10)),
            Chest => ((0.0, 0.14, 0.0), (0.17, 0.0, 0.11)),
            Neck => ((0.0, 0.10, 0.0), (0.05, 0.0, 0.05)),
            Head => ((0.0, 0.20, 0.0), (0.09, 0.0, 0.10)),
            LeftShoulder => ((0.14, 0.0, 0.0), (0.0, 0.04, 0.04)),
            LeftArm => ((0.28, 0.0, 0.0), (0.0, 0.045, 0.045)),
            LeftForeArm => ((0.25, 0.0, 0.0), (0.0, 0.04, 0.04)),
            LeftHand => ((0.09, 0.0, 0.0), (0.0, 0.015, 0.045)),
            LeftHandIndex1 => ((0.04, 0.0, 0.0), (0.0, 0.01, 0.01)),
            LeftHandIndex2 => ((0.03, 0.0, 0.0), (0.0, 0.009, 0.009)),
            LeftHandThumb1 => ((0.03, 0.0, 0.02), (0.01, 0.01, 0.01)),
            LeftHandThumb2 => ((0.025, 0.0, 0.015), (0.009, 0.009, 0.009)),
            LeftUpLeg => ((0.0, -0.42, 0.0), (0.07, 0.0, 0.07)),
            LeftLeg => ((0.0, -0.40, 0.0), (0.055, 0.0, 0.055)),
            LeftFoot => ((0.0, -0.05, 0.13), (0.045, 0.03, 0.04)),
            LeftToeBase => ((0.0, 0.0, 0.06), (0.045, 0.03, 0.0)),
            _ => return None, // unreachable: see `parent`
        };
        Some(BoneBox {
            tip: mirror_for(self, DVec3::new(tip.0, tip.1, tip.2)),
            half_extents: DVec3::new(half.0, half.1, half.2),
        })
    }

    /// Rest position in model space (the bind pose).
    pub fn rest_global(self) -> DVec3 {
        let mut pos = self.rest_offset();
        let mut cur = self.parent();
        while let Some(p) = cur {
            pos += p.rest_offset();
            cur = p.parent();
        }
        pos
    }
}

/// Mirrors left-side data across the YZ plane for right-side joints.
fn mirror_for(joint: Joint, v: DVec3) -> DVec3 {
    if joint.side() == Side::Right {
        DVec3::new(-v.x, v.y, v.z)
    } else {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_matches_enum_and_parents_come_first() {
        for (i, j) in Joint::ALL.iter().enumerate() {
            assert_eq!(j.index(), i);
            if let Some(p) = j.parent() {
                assert!(p.index() < i, "{} before its parent", j.name());
            }
        }
        assert_eq!(Joint::Root.parent(), None);
    }

    #[test]
    fn right_side_mirrors_left() {
        for j in Joint::ALL {
            if j.side() == Side::Right {
                let l = j.left_counterpart();
                assert_eq!(j.name().replacen("Right", "Left", 1), l.name());
                assert_eq!(l.right_counterpart(), j);
                let (a, b) = (j.rest_global(), l.rest_global());
                assert_eq!(DVec3::new(-a.x, a.y, a.z), b);
                let pj = j.parent().map(Joint::name).unwrap_or("");
                let pl = l.parent().map(Joint::name).unwrap_or("");
                assert_eq!(pj.replacen("Right", "Left", 1), pl);
            }
        }
    }

    #[test]
    fn proportions_are_human() {
        let top = Joint::HeadTopEnd.rest_global();
        assert!((top.y - 1.75).abs() < 1e-9);
        let hand = Joint::LeftHandIndex2.rest_global();
        assert!(hand.x > 0.7 && hand.x < 0.9, "left hand on +X");
        let ankle = Joint::LeftFoot.rest_global();
        assert!(ankle.y > 0.05 && ankle.y < 0.12);
        let toe = Joint::RightToeBase.rest_global();
        assert!(toe.z > 0.0, "feet point forward (+Z)");
    }
}
