//! Skin bindings: one [`SourceSkin`] per skin deformer of each skinned mesh
//! node, its palette the deformer's clusters in order.
//!
//! A cluster's `geometry_to_bone` (ufbx: the FBX `Transform` matrix with the
//! mesh node's geometric transform folded in) is the palette entry's
//! inverse bind transform, its `bind_to_world` (the FBX `TransformLink`) the
//! joint's bind-time transform; ufbx applies the axis conversion to both.
//! The undeformed mesh is the mesh node's geometry placed by its scene
//! transform (`geometry_to_world`). The skeleton's rest pose is never taken
//! from these (see `skeleton`'s rest rule).

use super::skeleton::Candidate;
use ludus_anim_model::skin::{Matrix, SkinMesh, SourceSkin};
use ludus_anim_model::{Decision, Vec3};
use std::collections::{HashMap, HashSet};

fn to_matrix(m: &ufbx::Matrix) -> Matrix {
    [
        m.m00 as f32,
        m.m10 as f32,
        m.m20 as f32,
        0.0,
        m.m01 as f32,
        m.m11 as f32,
        m.m21 as f32,
        0.0,
        m.m02 as f32,
        m.m12 as f32,
        m.m22 as f32,
        0.0,
        m.m03 as f32,
        m.m13 as f32,
        m.m23 as f32,
        1.0,
    ]
}

/// The skins of every skinned mesh node. `remap` maps a candidate to its
/// joint (`skeleton::finish`); a cluster whose bone is no joint drops its
/// skin (recorded).
pub(super) fn skins(
    scene: &ufbx::Scene,
    cands: &[Candidate<'_>],
    remap: &[Option<usize>],
    decisions: &mut Vec<Decision>,
) -> Vec<SourceSkin> {
    let joint_of: HashMap<u32, usize> = cands
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let j = remap.get(i).copied().flatten()?;
            Some((c.node.element.element_id, j))
        })
        .collect();
    let mut out = Vec::new();
    let mut names: HashSet<String> = HashSet::new();
    for node in scene.nodes.iter() {
        let Some(mesh) = node.mesh.as_ref() else {
            continue;
        };
        for (k, deformer) in mesh.skin_deformers.iter().enumerate() {
            let base = super::skeleton::joint_name(node);
            let mut name = if k == 0 {
                base.clone()
            } else {
                format!("{base}#{k}")
            };
            let mut n = 1;
            while names.contains(&name) {
                name = format!("{base}.{n}");
                n += 1;
            }
            names.insert(name.clone());
            let mut joints = Vec::with_capacity(deformer.clusters.len());
            let mut inverse_bind = Vec::with_capacity(deformer.clusters.len());
            let mut bind_world = Vec::with_capacity(deformer.clusters.len());
            let mut unbound = None;
            for cluster in deformer.clusters.iter() {
                let joint = cluster
                    .bone_node
                    .as_ref()
                    .and_then(|b| joint_of.get(&b.element.element_id).copied());
                let Some(joint) = joint else {
                    unbound = Some(cluster.element.name.as_ref().to_string());
                    break;
                };
                joints.push(joint);
                inverse_bind.push(to_matrix(&cluster.geometry_to_bone));
                bind_world.push(to_matrix(&cluster.bind_to_world));
            }
            if let Some(cluster) = unbound {
                decisions.push(Decision::new(
                    "skin_dropped",
                    format!("skin '{name}': cluster '{cluster}' binds no joint of the skeleton; the skin is not kept"),
                ));
                continue;
            }
            out.push(SourceSkin {
                name,
                joints,
                inverse_bind,
                bind_world,
                mesh: mesh_of(node, mesh, deformer),
            });
        }
    }
    if !out.is_empty() {
        decisions.push(Decision::new(
            "bind_pose",
            format!(
                "{} skin(s): inverse bind and bind pose from the skin clusters (Transform, TransformLink), kept with each skin",
                out.len()
            ),
        ));
    }
    out
}

/// The mesh's vertices and the deformer's weights, when the file has
/// geometry for every weighted vertex.
fn mesh_of(
    node: &ufbx::Node,
    mesh: &ufbx::Mesh,
    deformer: &ufbx::SkinDeformer,
) -> Option<SkinMesh> {
    let n = mesh.vertices.len();
    if n == 0 || deformer.vertices.len() != n {
        return None;
    }
    let mut positions = Vec::with_capacity(n);
    let mut offsets = Vec::with_capacity(n + 1);
    let mut influences = Vec::new();
    offsets.push(0u32);
    for (v, sv) in mesh.vertices.iter().zip(deformer.vertices.iter()) {
        positions.push(Vec3::new(v.x as f32, v.y as f32, v.z as f32));
        let begin = sv.weight_begin as usize;
        let end = begin.checked_add(sv.num_weights as usize)?;
        for w in deformer.weights.get(begin..end)? {
            influences.push((w.cluster_index, w.weight as f32));
        }
        offsets.push(u32::try_from(influences.len()).ok()?);
    }
    Some(SkinMesh {
        positions,
        offsets,
        influences,
        geometry_to_skeleton: to_matrix(&node.geometry_to_world),
    })
}
