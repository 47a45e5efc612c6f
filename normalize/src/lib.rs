//! `ludus-anim-normalize`: an imported asset brought to the conventions
//! every later step reads — source units → meters, the skeleton → a
//! depth-first runtime [`Skeleton`] (a synthetic identity root above
//! several roots), track joint indices remapped to that order, rotation
//! keys normalized and made hemisphere-continuous. Axes are already
//! converted by the importers.
//!
//! **Owns:** [`normalize`], [`Normalized`], unit detection ([`units`]),
//! the bind-pose oracle of skins on the cooked skeleton ([`skin`]).
//! **Invariants:** pure functions, no I/O; depends on `model` and
//! `runtime` only, so the retargeter and tools use it without the cooker.

#![forbid(unsafe_code)]

pub mod humanoid;
pub mod skin;
pub mod units;

use ludus_anim_format::math::Transform;
use ludus_anim_model::curve::Interpolation;
use ludus_anim_model::skin::Matrix;
use ludus_anim_model::{Decision, SourceAsset, SourceClip, SourceJoint, SourceSkin, SourceSocket};
use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};
use ludus_anim_runtime::{Skeleton, SkeletonError};

/// Name of the joint added above several roots.
pub const SYNTHETIC_ROOT: &str = "ludus_root";

/// The normalized asset: what every later stage reads.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Normalized {
    pub skeleton: Skeleton,
    /// Clips with joint indices in skeleton order and lengths in meters.
    pub clips: Vec<SourceClip>,
    /// Per-joint shell distance from the file (meters), if it has one.
    pub file_shells_m: Option<Vec<f32>>,
    pub unit_scale_m: f32,
    pub decisions: Vec<Decision>,
    /// What looks wrong but does not stop the cook (an implausible unit).
    pub warnings: Vec<ludus_anim_model::Diagnostic>,
    /// The asset's skin bindings: palette entries index the skeleton's
    /// order, lengths (matrix translations, vertices) in meters. Their
    /// bind pose is theirs; the skeleton's rest stays the authored rest.
    #[serde(default)]
    pub skins: Vec<SourceSkin>,
    /// Frames on joints: joints in the skeleton's order, offsets' lengths
    /// in meters.
    #[serde(default)]
    pub sockets: Vec<SourceSocket>,
}

#[derive(Debug, thiserror::Error)]
pub enum NormalizeError {
    #[error("joint '{joint}': hierarchy is cyclic or names a missing parent")]
    BrokenHierarchy { joint: String },
    #[error("skeleton: {0}")]
    Skeleton(#[from] SkeletonError),
}

/// `units_override_m`: meters per source unit chosen by the user
/// (`--units`), replacing what the file declared.
pub fn normalize(
    asset: &SourceAsset,
    units_override_m: Option<f32>,
) -> Result<Normalized, NormalizeError> {
    let units = crate::units::choose_units(asset, units_override_m);
    let mut decisions = units.decisions;
    let unit = units.meters;
    let src = &asset.skeleton.joints;
    let order = JointOrder::depth_first(src)?;
    decisions.push(order.root_decision(src));
    let skeleton = build_skeleton(src, &order, unit)?;
    let clips = asset
        .clips
        .iter()
        .map(|c| normalize_clip(c, &order.new_index, unit))
        .collect();
    let file_shells_m = asset.joint_shell_distance.as_ref().map(|s| {
        let mut out = vec![0.0; skeleton.joint_count()];
        for (j, &v) in s.iter().enumerate() {
            if let Some(&k) = order.new_index.get(j) {
                out[k] = v * unit;
            }
        }
        out
    });
    let skins = asset
        .skins
        .iter()
        .map(|s| normalize_skin(s, &order.new_index, unit))
        .collect();
    let sockets = asset
        .sockets
        .iter()
        .map(|s| SourceSocket {
            name: s.name.clone(),
            joint: order.new_index.get(s.joint).copied().unwrap_or(s.joint),
            offset: Transform {
                translation: s.offset.translation * unit,
                ..s.offset
            },
        })
        .collect();
    Ok(Normalized {
        skeleton,
        clips,
        file_shells_m,
        unit_scale_m: unit,
        decisions,
        warnings: units.warnings,
        skins,
        sockets,
    })
}

/// The source joints in the package's order: depth-first, children in
/// source order, under a synthetic root when there is not exactly one.
struct JointOrder {
    /// Source indices in package order (synthetic root excluded).
    order: Vec<usize>,
    roots: Vec<usize>,
    synthetic: bool,
    /// Source index -> package index.
    new_index: Vec<usize>,
}

impl JointOrder {
    fn depth_first(src: &[SourceJoint]) -> Result<JointOrder, NormalizeError> {
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); src.len()];
        let mut roots = Vec::new();
        for (i, j) in src.iter().enumerate() {
            match j.parent {
                Some(p) if p < src.len() && p != i => children[p].push(i),
                Some(_) => {
                    return Err(NormalizeError::BrokenHierarchy {
                        joint: j.name.clone(),
                    })
                }
                None => roots.push(i),
            }
        }
        let mut order: Vec<usize> = Vec::with_capacity(src.len());
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(j) = stack.pop() {
            if order.len() > src.len() {
                break;
            }
            order.push(j);
            stack.extend(children[j].iter().rev().copied());
        }
        if order.len() != src.len() {
            let mut seen = vec![false; src.len()];
            for &j in &order {
                seen[j] = true;
            }
            let missing = seen.iter().position(|&s| !s).unwrap_or(0);
            return Err(NormalizeError::BrokenHierarchy {
                joint: src.get(missing).map(|j| j.name.clone()).unwrap_or_default(),
            });
        }
        let synthetic = roots.len() != 1;
        let offset = usize::from(synthetic);
        let mut new_index = vec![0usize; src.len()];
        for (k, &j) in order.iter().enumerate() {
            new_index[j] = k + offset;
        }
        Ok(JointOrder {
            order,
            roots,
            synthetic,
            new_index,
        })
    }

    /// What became the root, for the report.
    fn root_decision(&self, src: &[SourceJoint]) -> Decision {
        if !self.synthetic {
            let name = self.roots.first().map_or("", |&r| src[r].name.as_str());
            return Decision::new("root", format!("skeleton root is '{name}'"));
        }
        if self.roots.is_empty() {
            return Decision::new(
                "synthetic_root",
                format!(
                    "no joints: a synthetic identity root '{SYNTHETIC_ROOT}' carries the curves"
                ),
            );
        }
        let root_names: Vec<&str> = self.roots.iter().map(|&r| src[r].name.as_str()).collect();
        Decision::new(
            "synthetic_root",
            format!(
                "{} roots ({}) placed under a synthetic identity root '{SYNTHETIC_ROOT}'",
                self.roots.len(),
                root_names.join(", ")
            ),
        )
    }
}

/// The package skeleton: parents, path-hash IDs, names and the rest pose
/// in meters.
fn build_skeleton(
    src: &[SourceJoint],
    order: &JointOrder,
    unit: f32,
) -> Result<Skeleton, NormalizeError> {
    let n = src.len() + usize::from(order.synthetic);
    let mut parents = Vec::with_capacity(n);
    let mut names = Vec::with_capacity(n);
    // Each joint's ID hashes its full path; the hash state of the parent's
    // path is kept instead of the path itself (full paths of a deep chain
    // take memory quadratic in its depth).
    let mut path_hashes: Vec<u64> = Vec::with_capacity(n);
    let mut rest = Vec::with_capacity(n);
    if order.synthetic {
        parents.push(NO_PARENT);
        names.push(SYNTHETIC_ROOT.to_string());
        path_hashes.push(fnv1a64_extend(FNV64_OFFSET, SYNTHETIC_ROOT.as_bytes()));
        rest.push(Transform::IDENTITY);
    }
    for &j in &order.order {
        let s = &src[j];
        let (parent, path_hash) = match s.parent {
            Some(p) => {
                let k = order.new_index[p];
                (k as u32, child_path_hash(path_hashes[k], &s.name))
            }
            None if order.synthetic => (0, child_path_hash(path_hashes[0], &s.name)),
            None => (NO_PARENT, fnv1a64_extend(FNV64_OFFSET, s.name.as_bytes())),
        };
        parents.push(parent);
        names.push(s.name.clone());
        path_hashes.push(path_hash);
        let mut t = s.rest;
        t.translation *= unit;
        t.rotation = t.rotation.normalize();
        rest.push(t);
    }
    let ids = path_hashes.into_iter().map(JointId).collect();
    Ok(Skeleton::new(parents, ids, rest, names)?)
}

/// FNV-1a 64 (the joint ID hash, `schemas/package-format.md`): offset
/// basis and prime. FNV-1a has no finalization step, so the hash of
/// `parent/name` continues from the hash of `parent`.
const FNV64_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV64_PRIME: u64 = 0x0000_0100_0000_01b3;

/// FNV-1a 64 of `bytes` continued from `state` (the hash of what came
/// before): `fnv1a64_extend(fnv1a64(a), b) == fnv1a64(a ++ b)`.
fn fnv1a64_extend(state: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(state, |h, &b| (h ^ u64::from(b)).wrapping_mul(FNV64_PRIME))
}

/// The hash of `parent_path/name` from the hash of `parent_path`: what
/// `JointId::from_path` computes over the joined path.
fn child_path_hash(parent: u64, name: &str) -> u64 {
    fnv1a64_extend(fnv1a64_extend(parent, b"/"), name.as_bytes())
}

/// A skin in the skeleton's order and meters: `S * M * S^-1` for every
/// matrix (S the unit scale: translations scale, linear parts do not) and
/// `S * p` for every vertex.
fn normalize_skin(s: &SourceSkin, new_index: &[usize], unit: f32) -> SourceSkin {
    let scale = |m: &Matrix| {
        let mut m = *m;
        for v in &mut m[12..15] {
            *v *= unit;
        }
        m
    };
    let mut s = s.clone();
    for j in &mut s.joints {
        *j = new_index.get(*j).copied().unwrap_or(*j);
    }
    s.inverse_bind = s.inverse_bind.iter().map(scale).collect();
    s.bind_world = s.bind_world.iter().map(scale).collect();
    if let Some(m) = &mut s.mesh {
        for p in &mut m.positions {
            *p *= unit;
        }
        m.geometry_to_skeleton = scale(&m.geometry_to_skeleton);
    }
    s
}

fn normalize_clip(c: &SourceClip, new_index: &[usize], unit: f32) -> SourceClip {
    let mut c = c.clone();
    for tr in &mut c.tracks {
        tr.joint = new_index.get(tr.joint).copied().unwrap_or(tr.joint);
        if let Some(t) = &mut tr.translation {
            t.map_values(|v| v * unit);
        }
        if let Some(r) = &mut tr.rotation {
            // Cubic rotation curves are component-wise Hermite over the
            // authored signs: flipping a key would change the curve.
            if r.interpolation != Interpolation::CubicSpline {
                let mut prev: Option<ludus_anim_model::Quat> = None;
                for k in &mut r.keys {
                    let mut q = k.value.normalize();
                    if let Some(p) = prev {
                        if p.dot(q) < 0.0 {
                            q = -q;
                        }
                    }
                    k.value = q;
                    prev = Some(q);
                }
            }
        }
    }
    c.tracks.sort_by_key(|t| t.joint);
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_model::source::AxisSystem;
    use ludus_anim_model::{
        Curve, Diagnostics, JointTracks, Quat, SourceJoint, SourceSkeleton, Vec3,
    };

    fn joint(name: &str, parent: Option<usize>) -> SourceJoint {
        SourceJoint {
            name: name.into(),
            parent,
            rest: Transform::new(Vec3::new(0.0, 10.0, 0.0), Quat::IDENTITY, Vec3::ONE),
        }
    }

    fn asset(joints: Vec<SourceJoint>) -> SourceAsset {
        SourceAsset {
            path: "a.bvh".into(),
            format: ludus_anim_model::SourceFormat::Bvh,
            skeleton: SourceSkeleton { joints },
            clips: vec![],
            unit_scale_m: 0.01,
            source_axes: AxisSystem {
                description: "+Y up".into(),
            },
            joint_shell_distance: None,
            diagnostics: Diagnostics::default(),
            decisions: vec![],
            companions: vec![],
            skins: Vec::new(),
            sockets: Vec::new(),
        }
    }

    #[test]
    fn orders_depth_first_and_adds_synthetic_root() {
        // b is listed before its parent a; c is a second root.
        let a = asset(vec![
            joint("b", Some(1)),
            joint("a", None),
            joint("c", None),
        ]);
        let n = normalize(&a, None).unwrap();
        let names: Vec<&str> = n.skeleton.names().iter().map(String::as_str).collect();
        assert_eq!(names, [SYNTHETIC_ROOT, "a", "b", "c"]);
        assert_eq!(n.skeleton.parents(), &[NO_PARENT, 0, 1, 0]);
        assert!((n.skeleton.rest_pose()[1].translation.y - 0.1).abs() < 1e-7);
        assert!(n.decisions.iter().any(|d| d.kind == "synthetic_root"));
    }

    #[test]
    fn units_override_and_hemisphere_continuity() {
        let mut a = asset(vec![joint("a", None)]);
        let mut tr = JointTracks::new(0);
        tr.rotation = Some(Curve::from_values(
            Interpolation::Linear,
            &[0.0, 1.0],
            &[Quat::from_rotation_y(0.1), -Quat::from_rotation_y(0.2)],
        ));
        a.clips.push(SourceClip {
            name: "c".into(),
            duration_s: 1.0,
            tracks: vec![tr],
            curves: vec![],
            frame_rate_hz: None,
            key_times: vec![],
            markers: vec![],
        });
        let n = normalize(&a, Some(1.0)).unwrap();
        assert_eq!(n.skeleton.rest_pose()[0].translation.y, 10.0);
        let keys = &n.clips[0].tracks[0].rotation.as_ref().unwrap().keys;
        assert!(keys[0].value.dot(keys[1].value) > 0.0);
    }

    #[test]
    fn joint_ids_are_the_hashes_of_the_joined_paths() {
        // Two roots (synthetic root), non-ASCII and empty-looking names.
        let a = asset(vec![
            joint("hips", None),
            joint("spine", Some(0)),
            joint("häls/2", Some(1)),
            joint("other", None),
        ]);
        let n = normalize(&a, None).unwrap();
        let want = [
            "ludus_root",
            "ludus_root/hips",
            "ludus_root/hips/spine",
            "ludus_root/hips/spine/häls/2",
            "ludus_root/other",
        ];
        let ids: Vec<JointId> = want.iter().map(|p| JointId::from_path(p)).collect();
        assert_eq!(n.skeleton.ids(), &ids[..]);
        let single = normalize(&asset(vec![joint("r", None), joint("c", Some(0))]), None).unwrap();
        assert_eq!(
            single.skeleton.ids(),
            &[JointId::from_path("r"), JointId::from_path("r/c")]
        );
    }

    #[test]
    fn a_deep_chain_normalizes_in_linear_memory() {
        // 10,000 deep with 100-byte names: joined paths would be 5 GB.
        let name = "x".repeat(100);
        let joints = (0..10_000)
            .map(|i: usize| joint(&format!("{name}{i}"), i.checked_sub(1)))
            .collect();
        let n = normalize(&asset(joints), None).unwrap();
        assert_eq!(n.skeleton.joint_count(), 10_000);
    }

    #[test]
    fn cycle_is_an_error() {
        let a = asset(vec![joint("a", Some(1)), joint("b", Some(0))]);
        assert!(matches!(
            normalize(&a, None),
            Err(NormalizeError::BrokenHierarchy { .. })
        ));
    }
}
