//! The cooked skeleton: flat, depth-first, parent-before-child.
//!
//! Joint IDs come from the authoring name path, never from the index, so a
//! clip binding survives a reorder that keeps names. The compatibility
//! identity covers IDs and order, hierarchy, rest transforms, units and
//! conventions: equal joint counts are never enough to share clips.

use crate::hash::{fnv1a64, Fnv128};
use crate::math::{Affine3A, Transform, MIN_SCALE};

/// Parent index of a root joint.
pub const NO_PARENT: u32 = u32::MAX;

/// Largest joint count a skeleton may have. Indices are stored as u32, so
/// this is a sanity bound on input, not a storage limit.
pub(crate) const MAX_JOINTS: usize = 1 << 16;

/// Conventions tag hashed into every skeleton identity; bump it if a
/// convention (axes, units, quaternion order, composition) ever changes.
pub(crate) const CONVENTIONS: &str =
    "ludus:right-handed,+y-up,meters,column-vectors,hamilton-xyzw,v1";

/// Stable joint identity: FNV-1a 64 of the joint's authoring name path
/// (names from the root down, joined by '/').
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct JointId(pub u64);

impl JointId {
    /// The id of the joint at authoring name path `path`.
    pub fn from_path(path: &str) -> JointId {
        JointId(fnv1a64(path.as_bytes()))
    }
}

/// 128-bit skeleton compatibility identity (see [`Skeleton::identity`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SkeletonIdentity(pub [u8; 16]);

impl SkeletonIdentity {
    /// The identity as 32 lowercase hex digits.
    pub fn to_hex(&self) -> String {
        self.0.iter().map(|b| format!("{b:02x}")).collect()
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SkeletonError {
    #[error("skeleton has no joints")]
    Empty,
    #[error("skeleton has {0} joints (limit {MAX_JOINTS})")]
    TooManyJoints(usize),
    #[error("joint {joint} has parent {parent}, which does not come before it")]
    ParentNotBefore { joint: usize, parent: u32 },
    /// Only joint 0 may be a root; multi-root sources need a synthetic root.
    #[error("joint {joint} is a second root (multi-root sources need a synthetic root)")]
    ExtraRoot { joint: usize },
    #[error("joint 0 must be the root")]
    FirstNotRoot,
    /// Children of a joint are not contiguous after it.
    #[error("joint {joint} breaks depth-first order")]
    NotDepthFirst { joint: usize },
    #[error("joints {other} and {joint} have the same joint ID")]
    DuplicateId { joint: usize, other: usize },
    #[error("joint {joint} has a non-finite rest transform")]
    NonFiniteRest { joint: usize },
    #[error("joint {joint} has a zero, negative or near-singular rest scale")]
    NonPositiveScale { joint: usize },
    #[error("joint {joint} has a non-unit rest rotation")]
    NonUnitRotation { joint: usize },
    #[error("skeleton arrays have different lengths")]
    LengthMismatch,
}

/// A validated skeleton. Construction checks every invariant the FK and
/// decoders rely on, so those never re-check per call.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(try_from = "SkeletonParts", into = "SkeletonParts")
)]
pub struct Skeleton {
    parents: Vec<u32>,
    subtree_end: Vec<u32>,
    ids: Vec<JointId>,
    rest: Vec<Transform>,
    names: Vec<String>,
    identity: SkeletonIdentity,
}

impl Skeleton {
    /// Build from per-joint arrays (all the same length). `names` may hold
    /// empty strings where no debug name is kept.
    pub fn new(
        parents: Vec<u32>,
        ids: Vec<JointId>,
        rest: Vec<Transform>,
        names: Vec<String>,
    ) -> Result<Skeleton, SkeletonError> {
        let n = parents.len();
        if n == 0 {
            return Err(SkeletonError::Empty);
        }
        if n > MAX_JOINTS {
            return Err(SkeletonError::TooManyJoints(n));
        }
        if ids.len() != n || rest.len() != n || names.len() != n {
            return Err(SkeletonError::LengthMismatch);
        }
        if parents[0] != NO_PARENT {
            return Err(SkeletonError::FirstNotRoot);
        }
        for (j, &p) in parents.iter().enumerate().skip(1) {
            if p == NO_PARENT {
                return Err(SkeletonError::ExtraRoot { joint: j });
            }
            if p as usize >= j {
                return Err(SkeletonError::ParentNotBefore {
                    joint: j,
                    parent: p,
                });
            }
            // Depth-first: the parent must be the previous joint or one of
            // its ancestors.
            let mut a = (j - 1) as u32;
            while a != p {
                a = parents[a as usize];
                if a == NO_PARENT {
                    return Err(SkeletonError::NotDepthFirst { joint: j });
                }
            }
        }
        let mut sorted: Vec<(JointId, usize)> = ids.iter().copied().zip(0..).collect();
        sorted.sort();
        for w in sorted.windows(2) {
            if w[0].0 == w[1].0 {
                return Err(SkeletonError::DuplicateId {
                    joint: w[1].1.max(w[0].1),
                    other: w[1].1.min(w[0].1),
                });
            }
        }
        for (j, t) in rest.iter().enumerate() {
            if !t.is_finite() {
                return Err(SkeletonError::NonFiniteRest { joint: j });
            }
            if t.scale.min_element() < MIN_SCALE {
                return Err(SkeletonError::NonPositiveScale { joint: j });
            }
            if (t.rotation.length_squared() - 1.0).abs() > 1e-3 {
                return Err(SkeletonError::NonUnitRotation { joint: j });
            }
        }
        let mut subtree_end: Vec<u32> = (1..=n as u32).collect();
        for j in (1..n).rev() {
            let p = parents[j] as usize;
            subtree_end[p] = subtree_end[p].max(subtree_end[j]);
        }
        let identity = compute_identity(&parents, &ids, &rest);
        Ok(Skeleton {
            parents,
            subtree_end,
            ids,
            rest,
            names,
            identity,
        })
    }

    pub fn joint_count(&self) -> usize {
        self.parents.len()
    }
    pub fn parents(&self) -> &[u32] {
        &self.parents
    }
    /// Parent of `joint`, or `None` for the root.
    pub fn parent(&self, joint: usize) -> Option<usize> {
        match self.parents.get(joint) {
            Some(&p) if p != NO_PARENT => Some(p as usize),
            _ => None,
        }
    }
    /// Exclusive end of each joint's subtree: joint `j`'s descendants are
    /// exactly `j+1 .. subtree_end[j]`.
    pub fn subtree_ends(&self) -> &[u32] {
        &self.subtree_end
    }
    pub fn ids(&self) -> &[JointId] {
        &self.ids
    }
    pub fn rest_pose(&self) -> &[Transform] {
        &self.rest
    }
    pub fn names(&self) -> &[String] {
        &self.names
    }
    pub fn name(&self, joint: usize) -> &str {
        self.names.get(joint).map(String::as_str).unwrap_or("")
    }
    pub fn find(&self, id: JointId) -> Option<usize> {
        self.ids.iter().position(|&i| i == id)
    }
    pub fn find_by_name(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
    /// Compatibility identity: FNV-1a 128 over the conventions tag, joint
    /// count, and per joint its ID, parent index and rest TRS bits.
    pub fn identity(&self) -> SkeletonIdentity {
        self.identity
    }

    /// Forward kinematics into caller-owned output:
    /// `component[j] = component[parent[j]] * local[j]`.
    /// Returns false (and writes nothing) if the buffers have the wrong size.
    pub fn local_to_component(&self, local: &[Transform], out: &mut [Affine3A]) -> bool {
        local_to_component(&self.parents, local, out)
    }
}

/// The serialized form of a skeleton: its defining arrays. Deserializing
/// goes through [`Skeleton::new`], so a cached skeleton is validated again.
#[cfg(feature = "serde")]
#[derive(serde::Serialize, serde::Deserialize)]
struct SkeletonParts {
    parents: Vec<u32>,
    ids: Vec<JointId>,
    rest: Vec<Transform>,
    names: Vec<String>,
}

#[cfg(feature = "serde")]
impl From<Skeleton> for SkeletonParts {
    fn from(s: Skeleton) -> Self {
        SkeletonParts {
            parents: s.parents,
            ids: s.ids,
            rest: s.rest,
            names: s.names,
        }
    }
}

#[cfg(feature = "serde")]
impl TryFrom<SkeletonParts> for Skeleton {
    type Error = SkeletonError;
    fn try_from(p: SkeletonParts) -> Result<Self, SkeletonError> {
        Skeleton::new(p.parents, p.ids, p.rest, p.names)
    }
}

/// FK over a validated parent array (parents before children).
fn local_to_component(parents: &[u32], local: &[Transform], out: &mut [Affine3A]) -> bool {
    let n = parents.len();
    if local.len() != n || out.len() != n {
        return false;
    }
    for j in 0..n {
        let m = local[j].to_affine();
        let p = parents[j];
        out[j] = if p == NO_PARENT || p as usize >= j {
            m
        } else {
            out[p as usize] * m
        };
    }
    true
}

fn compute_identity(parents: &[u32], ids: &[JointId], rest: &[Transform]) -> SkeletonIdentity {
    let mut h = Fnv128::default();
    h.write(CONVENTIONS.as_bytes());
    h.write_u32(parents.len() as u32);
    for j in 0..parents.len() {
        h.write_u64(ids[j].0);
        h.write_u32(parents[j]);
        for v in rest[j].to_array() {
            h.write_f32(v);
        }
    }
    SkeletonIdentity(h.finish())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::math::{Quat, Vec3};

    fn chain(parents: &[u32], names: &[&str]) -> Result<Skeleton, SkeletonError> {
        let n = parents.len();
        Skeleton::new(
            parents.to_vec(),
            names.iter().map(|p| JointId::from_path(p)).collect(),
            vec![Transform::IDENTITY; n],
            names.iter().map(|s| s.to_string()).collect(),
        )
    }

    #[test]
    fn subtree_ends_are_exclusive() {
        let s = chain(&[NO_PARENT, 0, 1, 0], &["r", "r/a", "r/a/b", "r/c"]).unwrap();
        assert_eq!(s.subtree_ends(), &[4, 3, 3, 4]);
    }

    #[test]
    fn rejects_non_depth_first_order() {
        // r, a, c(parent r), b(parent a): b is not contiguous with a.
        let e = chain(&[NO_PARENT, 0, 0, 1], &["r", "r/a", "r/c", "r/a/b"]).unwrap_err();
        assert_eq!(e, SkeletonError::NotDepthFirst { joint: 3 });
    }

    #[test]
    fn rejects_second_root_and_duplicates() {
        assert!(matches!(
            chain(&[NO_PARENT, NO_PARENT], &["a", "b"]),
            Err(SkeletonError::ExtraRoot { joint: 1 })
        ));
        assert!(matches!(
            chain(&[NO_PARENT, 0], &["a", "a"]),
            Err(SkeletonError::DuplicateId { .. })
        ));
    }

    #[test]
    fn same_count_different_hierarchy_or_rest_do_not_match() {
        let a = chain(&[NO_PARENT, 0, 1], &["r", "r/a", "r/b"]).unwrap();
        let b = chain(&[NO_PARENT, 0, 0], &["r", "r/a", "r/b"]).unwrap();
        assert_ne!(a.identity(), b.identity());
        let mut rest = a.rest_pose().to_vec();
        rest[1].translation = Vec3::new(0.0, 0.1, 0.0);
        let c = Skeleton::new(
            a.parents().to_vec(),
            a.ids().to_vec(),
            rest,
            a.names().to_vec(),
        )
        .unwrap();
        assert_ne!(a.identity(), c.identity());
        assert_eq!(a.identity(), a.clone().identity());
    }

    #[test]
    fn fk_composes_parent_first() {
        let rest = vec![
            Transform::new(
                Vec3::new(0.0, 1.0, 0.0),
                Quat::from_rotation_z(1.0),
                Vec3::ONE,
            ),
            Transform::new(Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE),
        ];
        let s = Skeleton::new(
            vec![NO_PARENT, 0],
            vec![JointId(1), JointId(2)],
            rest.clone(),
            vec![String::new(), String::new()],
        )
        .unwrap();
        let mut out = vec![Affine3A::IDENTITY; 2];
        assert!(s.local_to_component(&rest, &mut out));
        let p = out[1].translation;
        let expect = Vec3::new(1.0f32.cos(), 1.0 + 1.0f32.sin(), 0.0);
        assert!((Vec3::from(p) - expect).length() < 1e-5);
    }
}
