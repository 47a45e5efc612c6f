//! Sockets from the node hierarchy: every node hanging below a joint that
//! is not itself a joint (no skin deforms it, nothing animates it or a
//! descendant) and is not scene content (mesh, camera) is a named frame
//! on its nearest joint ancestor, with the local transforms between them
//! as its offset. With `keep_unused_leaves` those nodes are joints and
//! there are no sockets.

use super::skeleton::{rest_transform, Hierarchy, Selection};
use super::{node_label, Report};
use ::gltf::json;
use ludus_anim_format::math::{Affine3A, Transform};
use ludus_anim_model::SourceSocket;
use std::collections::HashSet;

pub(super) fn sockets(
    root: &json::Root,
    hierarchy: &Hierarchy,
    selection: &Selection,
    report: &mut Report,
) -> Vec<SourceSocket> {
    let mut out: Vec<SourceSocket> = Vec::new();
    let mut taken: HashSet<String> = HashSet::new();
    for (node, nd) in root.nodes.iter().enumerate() {
        let is_joint = selection
            .joint_of_node
            .get(node)
            .copied()
            .flatten()
            .is_some();
        if is_joint || nd.mesh.is_some() || nd.camera.is_some() {
            continue;
        }
        // Walk up to the nearest joint, composing local transforms.
        let mut offset = Affine3A::IDENTITY;
        let mut at = node;
        let mut joint = None;
        for _ in 0..root.nodes.len() {
            let local = root.nodes.get(at).map_or(Transform::IDENTITY, |n| {
                rest_transform(n).unwrap_or_else(|(t, _)| t)
            });
            offset = local.to_affine() * offset;
            let Some(p) = hierarchy.parent(at) else { break };
            if let Some(j) = selection.joint_of_node.get(p).copied().flatten() {
                joint = Some(j);
                break;
            }
            at = p;
        }
        let Some(joint) = joint else { continue };
        out.push(SourceSocket::unique(
            &mut taken,
            node_label(root, node),
            joint,
            offset,
        ));
    }
    if !out.is_empty() {
        let list: Vec<String> = out
            .iter()
            .map(|s| format!("'{}' on '{}'", s.name, selection.joint_name(s.joint)))
            .collect();
        report.decide(
            "sockets",
            format!(
                "nodes below joints that neither deform nor animate are sockets: {}",
                list.join(", ")
            ),
        );
    }
    out
}
