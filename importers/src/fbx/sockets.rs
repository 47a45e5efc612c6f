//! Sockets from the node hierarchy: every null (an FBX empty: no bone,
//! mesh, camera or light attribute) below a joint that is not itself a
//! joint and is not animated is a named frame on its nearest joint
//! ancestor, with the local transforms between them as its offset. Bones
//! are never sockets (an unused `_end` bone is dropped, see `skeleton`).

use super::skeleton::{animated_nodes, joint_name, to_model, Candidate};
use ludus_anim_format::math::Affine3A;
use ludus_anim_model::{Decision, SourceJoint, SourceSocket};
use std::collections::{HashMap, HashSet};

pub(super) fn sockets(
    scene: &ufbx::Scene,
    candidates: &[Candidate<'_>],
    remap: &[Option<usize>],
    joints: &[SourceJoint],
    decisions: &mut Vec<Decision>,
) -> Vec<SourceSocket> {
    let joint_of: HashMap<u32, usize> = candidates
        .iter()
        .zip(remap)
        .filter_map(|(c, j)| j.map(|j| (c.node.element.element_id, j)))
        .collect();
    let candidate: HashSet<u32> = candidates
        .iter()
        .map(|c| c.node.element.element_id)
        .collect();
    let animated = animated_nodes(scene);
    let is_null = |n: &ufbx::Node| {
        n.bone.is_none() && n.mesh.is_none() && n.camera.is_none() && n.light.is_none()
    };
    let mut out: Vec<SourceSocket> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for n in scene.nodes.iter() {
        let id = n.element.element_id;
        if n.is_root || candidate.contains(&id) || animated.contains(&id) || !is_null(n) {
            continue;
        }
        let mut offset = Affine3A::IDENTITY;
        let mut at: &ufbx::Node = n;
        let mut joint = None;
        for _ in 0..scene.nodes.len() {
            offset = to_model(&at.local_transform).to_affine() * offset;
            let Some(p) = at.parent.as_deref() else { break };
            if p.is_root {
                break;
            }
            if let Some(&j) = joint_of.get(&p.element.element_id) {
                joint = Some(j);
                break;
            }
            at = p;
        }
        let Some(joint) = joint else { continue };
        out.push(SourceSocket::unique(
            &mut taken,
            joint_name(n),
            joint,
            offset,
        ));
    }
    if !out.is_empty() {
        let list: Vec<String> = out
            .iter()
            .map(|s| {
                let j = joints.get(s.joint).map_or("?", |j| j.name.as_str());
                format!("'{}' on '{j}'", s.name)
            })
            .collect();
        decisions.push(Decision::new(
            "sockets",
            format!(
                "unanimated nulls below joints are sockets: {}",
                list.join(", ")
            ),
        ));
    }
    out
}
