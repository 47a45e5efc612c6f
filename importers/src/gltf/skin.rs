//! Skin bindings: one [`SourceSkin`] per glTF skin.
//!
//! The palette is the skin's `joints`, the inverse bind transforms its
//! `inverseBindMatrices` (identity when absent, per the spec). glTF has no
//! other bind pose: the joints' bind-time transforms are the inverses of
//! the inverse bind matrices, kept with the skin and never used as the
//! skeleton's rest (the nodes' own transforms are). Component space is
//! glTF scene space (every ancestor of a joint is a joint), and the spec
//! ignores a skinned mesh node's transform, so the undeformed mesh is the
//! vertex positions themselves (`geometry_to_skeleton` = identity).
//!
//! The mesh is the first node (in file order) using the skin: all its
//! primitives' `POSITION` with every `JOINTS_n`/`WEIGHTS_n` set.

use super::accessor::{self, Expect};
use super::buffers::Buffers;
use super::skeleton::Selection;
use super::Report;
use crate::ImportError;
use ::gltf::json;
use ::gltf::json::mesh::Semantic;
use ::gltf::json::validation::Checked;
use ludus_anim_model::skin::{affine, matrix, Matrix, SkinMesh, SourceSkin};
use ludus_anim_model::Vec3;

const IDENTITY: Matrix = [
    1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0,
];

/// Every skin of the file; `ibms` are `check_skins`' matrices.
pub(super) fn skins(
    root: &json::Root,
    buffers: &Buffers,
    selection: &Selection,
    ibms: Vec<Option<Vec<Matrix>>>,
    report: &mut Report,
) -> Result<Vec<SourceSkin>, ImportError> {
    let mut out = Vec::with_capacity(root.skins.len());
    for (si, (skin, ibm)) in root.skins.iter().zip(ibms).enumerate() {
        let name = match skin.name.as_deref() {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => format!("skin{si}"),
        };
        let mut joints = Vec::with_capacity(skin.joints.len());
        for node in &skin.joints {
            // Every skin joint deforms, so `select` made it a joint.
            let joint = selection
                .joint_of_node
                .get(node.value())
                .copied()
                .flatten()
                .ok_or_else(|| {
                    report.malformed(
                        "broken_skin",
                        format!("skin '{name}': joint node {} is not a joint", node.value()),
                    )
                })?;
            joints.push(joint);
        }
        let inverse_bind: Vec<Matrix> = match ibm {
            Some(m) => m.into_iter().take(joints.len()).collect(),
            None => vec![IDENTITY; joints.len()],
        };
        let mut bind_world = Vec::with_capacity(inverse_bind.len());
        for (m, node) in inverse_bind.iter().zip(&skin.joints) {
            let a = affine(m);
            if !a.is_finite() || a.matrix3.determinant().abs() < 1e-12 {
                return Err(report.malformed_at(
                    "broken_skin",
                    format!("skin '{name}': the inverse bind matrix of a joint is not invertible"),
                    None,
                    Some(&super::node_label(root, node.value())),
                ));
            }
            bind_world.push(matrix(&a.inverse()));
        }
        let mesh = mesh_of(root, buffers, si, &name, report)?;
        if let Some(m) = &mesh {
            if let Some((p, _)) = m
                .influences
                .iter()
                .find(|(p, _)| *p as usize >= joints.len())
            {
                return Err(report.malformed(
                    "broken_skin",
                    format!(
                        "skin '{name}': a vertex names palette entry {p}, but the skin has {} joints",
                        joints.len()
                    ),
                ));
            }
        }
        out.push(SourceSkin {
            name,
            joints,
            inverse_bind,
            bind_world,
            mesh,
        });
    }
    if !out.is_empty() {
        report.decide(
            "bind_pose",
            format!(
                "{} skin(s): inverse bind matrices kept with each skin, bind pose = their inverses; rest pose is the nodes' own transforms",
                out.len()
            ),
        );
    }
    Ok(out)
}

/// The vertices and influences of the first mesh node using skin `si`.
fn mesh_of(
    root: &json::Root,
    buffers: &Buffers,
    si: usize,
    name: &str,
    report: &mut Report,
) -> Result<Option<SkinMesh>, ImportError> {
    let Some(mesh) = root
        .nodes
        .iter()
        .find(|n| n.skin.map(|s| s.value()) == Some(si))
        .and_then(|n| n.mesh)
        .and_then(|m| root.meshes.get(m.value()))
    else {
        return Ok(None);
    };
    let mut out = SkinMesh {
        offsets: vec![0],
        geometry_to_skeleton: IDENTITY,
        ..SkinMesh::default()
    };
    for prim in &mesh.primitives {
        let mut position = None;
        let mut sets: Vec<(u32, Option<usize>, Option<usize>)> = Vec::new();
        for (semantic, acc) in &prim.attributes {
            let (set, is_joints) = match semantic {
                Checked::Valid(Semantic::Positions) => {
                    position = Some(acc.value());
                    continue;
                }
                Checked::Valid(Semantic::Joints(n)) => (*n, true),
                Checked::Valid(Semantic::Weights(n)) => (*n, false),
                _ => continue,
            };
            let slot = match sets.iter().position(|s| s.0 == set) {
                Some(i) => i,
                None => {
                    sets.push((set, None, None));
                    sets.len() - 1
                }
            };
            if let Some(s) = sets.get_mut(slot) {
                if is_joints {
                    s.1 = Some(acc.value());
                } else {
                    s.2 = Some(acc.value());
                }
            }
        }
        let Some(position) = position else {
            return Ok(None);
        };
        let loaded = std::iter::once(position)
            .chain(sets.iter().flat_map(|s| s.1.into_iter().chain(s.2)))
            .all(|a| super::buffers::accessor_loaded(root, buffers, a));
        if !loaded {
            return Ok(None);
        }
        let allow = accessor::Allowance {
            max_count: u64::MAX,
            budget: &report.budget,
        };
        let read = |index: usize, expect: Expect, what: &str| {
            accessor::read(root, buffers, index, expect, &allow)
                .map_err(|e| format!("skin '{name}' mesh {what}: {e}"))
        };
        let result = (|| {
            let pos = read(position, Expect::Vec3, "POSITION")?;
            let mut influence_sets = Vec::new();
            for (set, j, w) in &sets {
                let (Some(j), Some(w)) = (j, w) else {
                    return Err(format!("skin '{name}': JOINTS_{set} without WEIGHTS_{set}"));
                };
                let j = read(*j, Expect::Joints, "JOINTS")?;
                let w = read(*w, Expect::SkinWeights, "WEIGHTS")?;
                if j.count != pos.count || w.count != pos.count {
                    return Err(format!(
                        "skin '{name}': JOINTS_{set}/WEIGHTS_{set} count differs from POSITION's"
                    ));
                }
                influence_sets.push((j, w));
            }
            Ok((pos, influence_sets))
        })();
        let (pos, influence_sets) = result.map_err(|m| report.malformed("bad_accessor", m))?;
        if influence_sets.is_empty() {
            return Ok(None);
        }
        for (v, p) in pos.elements::<3>().enumerate() {
            out.positions.push(Vec3::from_array(p));
            for (j, w) in &influence_sets {
                let (Some(js), Some(ws)) = (
                    j.values.get(v * 4..v * 4 + 4),
                    w.values.get(v * 4..v * 4 + 4),
                ) else {
                    continue;
                };
                for (&ji, &wi) in js.iter().zip(ws) {
                    if wi != 0.0 {
                        out.influences.push((ji as u32, wi));
                    }
                }
            }
            let end = u32::try_from(out.influences.len()).map_err(|_| {
                report.malformed(
                    "bad_accessor",
                    format!("skin '{name}': too many influences"),
                )
            })?;
            out.offsets.push(end);
        }
    }
    Ok(Some(out))
}
