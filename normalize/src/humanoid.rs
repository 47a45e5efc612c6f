//! Is a rig a humanoid, and how tall is it? Unit plausibility judges a
//! humanoid by its height from feet to head rather than by the span of its
//! rest pose: a T-pose's arm span, a tail or a prop joint far from the
//! body make the span a poor measure of what a person is.
//!
//! A humanoid here is a rig with a centre head and a left and a right foot
//! recognized by name (`ludus_anim_model::names`: Mixamo, Unreal, CMU,
//! MakeHuman, Biped, Hip/Knee/Ankle, … conventions) whose topology is a
//! body's: the three on separate branches below one common ancestor.

use ludus_anim_format::math::{Affine3A, Vec3};
use ludus_anim_model::names::{parse_all, Part, Side};
use ludus_anim_model::SourceSkeleton;

/// A rig recognized as a humanoid.
#[derive(Clone, Debug, PartialEq)]
pub struct Humanoid {
    pub head: usize,
    /// Left, right.
    pub feet: [usize; 2],
    /// Rest-pose distance from the middle of the feet to the head, in
    /// source units.
    pub height: f32,
}

/// `sk` as a humanoid, if its names and topology say it is one.
pub fn humanoid(sk: &SourceSkeleton) -> Option<Humanoid> {
    let names = parse_all(sk.joints.iter().map(|j| j.name.as_str()));
    let depth = depths(sk)?;
    let shallowest = |part: Part, side: Side| {
        (0..names.len())
            .filter(|&j| names[j].part == part && names[j].side == side)
            .min_by_key(|&j| (depth[j], j))
    };
    let head = shallowest(Part::Head, Side::Center)?;
    let feet = [
        shallowest(Part::Foot, Side::Left)?,
        shallowest(Part::Foot, Side::Right)?,
    ];
    let separate = |a: usize, b: usize| !is_ancestor(sk, a, b) && !is_ancestor(sk, b, a);
    if !(separate(head, feet[0]) && separate(head, feet[1]) && separate(feet[0], feet[1])) {
        return None;
    }
    let at = |j| component_origin(sk, j);
    let height = (at(head)? - (at(feet[0])? + at(feet[1])?) * 0.5).length();
    (height.is_finite() && height > 0.0).then_some(Humanoid { head, feet, height })
}

/// Each joint's depth below its root, linear in the joint count; `None`
/// on a broken hierarchy (a cycle or a bad parent index, reported
/// elsewhere).
fn depths(sk: &SourceSkeleton) -> Option<Vec<usize>> {
    let n = sk.joints.len();
    let mut depth: Vec<Option<usize>> = vec![None; n];
    let mut chain = Vec::new();
    for j in 0..n {
        let mut at = Some(j);
        let base = loop {
            match at {
                None => break 0,
                Some(i) if i >= n || chain.len() > n => return None,
                Some(i) => match depth[i] {
                    Some(d) => break d + 1,
                    None => {
                        chain.push(i);
                        at = sk.joints[i].parent;
                    }
                },
            }
        };
        for (k, &i) in chain.iter().rev().enumerate() {
            depth[i] = Some(base + k);
        }
        chain.clear();
    }
    depth.into_iter().collect()
}

/// Whether `a` is `b` or one of its ancestors (hierarchy checked by
/// [`depths`] first, so the walk ends).
fn is_ancestor(sk: &SourceSkeleton, a: usize, b: usize) -> bool {
    let mut j = Some(b);
    while let Some(i) = j {
        if i == a {
            return true;
        }
        j = sk.joints.get(i).and_then(|x| x.parent);
    }
    false
}

/// The rest-pose origin of `joint` in the skeleton's space.
fn component_origin(sk: &SourceSkeleton, joint: usize) -> Option<Vec3> {
    let mut m = Affine3A::IDENTITY;
    let mut j = Some(joint);
    while let Some(i) = j {
        let x = sk.joints.get(i)?;
        m = x.rest.to_affine() * m;
        j = x.parent;
    }
    let p = Vec3::from(m.translation);
    p.is_finite().then_some(p)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_model::{SourceJoint, Transform};

    /// Root, a spine to the head and two legs, named by `names`
    /// (root, spine, head, left thigh, left foot, right thigh, right foot).
    fn rig(names: [&str; 7], head_under_foot: bool) -> SourceSkeleton {
        let at = |x: f32, y: f32| Transform {
            translation: Vec3::new(x, y, 0.0),
            ..Transform::IDENTITY
        };
        let parents = [
            None,
            Some(0),
            Some(if head_under_foot { 4 } else { 1 }),
            Some(0),
            Some(3),
            Some(0),
            Some(5),
        ];
        let rest = [
            at(0.0, 1.0),
            at(0.0, 0.3),
            at(0.0, 0.4),
            at(0.1, -0.1),
            at(0.0, -0.8),
            at(-0.1, -0.1),
            at(0.0, -0.8),
        ];
        SourceSkeleton {
            joints: (0..7)
                .map(|i| SourceJoint {
                    name: names[i].into(),
                    parent: parents[i],
                    rest: rest[i],
                })
                .collect(),
        }
    }

    #[test]
    fn conventions_are_recognized_and_measured_feet_to_head() {
        let rigs = [
            [
                "mixamorig:Hips",
                "mixamorig:Spine",
                "mixamorig:Head",
                "mixamorig:LeftUpLeg",
                "mixamorig:LeftFoot",
                "mixamorig:RightUpLeg",
                "mixamorig:RightFoot",
            ],
            [
                "pelvis", "spine_01", "head", "thigh_l", "foot_l", "thigh_r", "foot_r",
            ],
            [
                "root",
                "spine01",
                "head",
                "upperleg01.L",
                "foot.L",
                "upperleg01.R",
                "foot.R",
            ],
            [
                "Hips",
                "Chest",
                "Head",
                "LeftHip",
                "LeftAnkle",
                "RightHip",
                "RightAnkle",
            ],
        ];
        for names in rigs {
            let h = humanoid(&rig(names, false)).unwrap_or_else(|| panic!("{names:?}"));
            assert_eq!((h.head, h.feet), (2, [4, 6]), "{names:?}");
            assert!((h.height - 1.6).abs() < 1e-5, "{}", h.height);
        }
    }

    #[test]
    fn unnamed_or_misshapen_rigs_are_not_humanoids() {
        let unnamed = [
            "node0", "node1", "node2", "node3", "node4", "node5", "node6",
        ];
        assert_eq!(humanoid(&rig(unnamed, false)), None);
        let named = [
            "Hips",
            "Spine",
            "Head",
            "LeftUpLeg",
            "LeftFoot",
            "RightUpLeg",
            "RightFoot",
        ];
        assert_eq!(humanoid(&rig(named, true)), None, "head below a foot");
        let controls = [
            "Hips",
            "Spine",
            "Head",
            "LeftUpLeg",
            "LeftFootCtrl",
            "RightUpLeg",
            "RightFootCtrl",
        ];
        assert_eq!(
            humanoid(&rig(controls, false)),
            None,
            "IK controls are not feet"
        );
    }

    #[test]
    fn a_cycle_is_not_a_humanoid_and_ends() {
        let mut sk = rig(
            [
                "Hips",
                "Spine",
                "Head",
                "LeftUpLeg",
                "LeftFoot",
                "RightUpLeg",
                "RightFoot",
            ],
            false,
        );
        sk.joints[0].parent = Some(2);
        assert_eq!(humanoid(&sk), None);
    }
}
