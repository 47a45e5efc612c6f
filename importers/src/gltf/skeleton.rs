//! Node hierarchy and joint selection.
//!
//! Which nodes become joints: every skin joint and every animated node,
//! plus all their ancestors up to the scene root. Ancestors are kept even
//! when they are not joints of any skin (an armature node scaled by 0.01,
//! a Z-up correction node) so that component space equals glTF scene space
//! and a joint's FK equals its node's world transform. Rest transforms are
//! the nodes' actual local transforms, matrix nodes included: unlike
//! gltf2ozz, an unanimated matrix-defined joint keeps its matrix instead of
//! collapsing to identity.

use super::accessor::{self, Expect};
use super::buffers::Buffers;
use super::{node_label, Report};
use crate::{ImportError, ImportOptions};
use ::gltf::json;
use ludus_anim_format::math::{Affine3A, Quat, Transform, Vec3};
use ludus_anim_model::{Diagnostic, SourceJoint, SourceSkeleton};
use std::collections::{HashMap, HashSet};

/// Parent links of all nodes, known to form a forest.
pub(super) struct Hierarchy {
    parent: Vec<Option<usize>>,
}

impl Hierarchy {
    /// Build parent links from `children` lists, rejecting what the spec
    /// forbids and the gltf crate does not check: a node listed as a child
    /// twice (two parents) and parent cycles.
    pub fn build(root: &json::Root, report: &Report) -> Result<Hierarchy, ImportError> {
        let n = root.nodes.len();
        let mut parent: Vec<Option<usize>> = vec![None; n];
        for (p, node) in root.nodes.iter().enumerate() {
            for child in node.children.iter().flatten() {
                let c = child.value();
                if c >= n {
                    return Err(report.malformed_at(
                        "broken_hierarchy",
                        format!(
                            "node '{}' lists child {c}, which does not exist",
                            node_label(root, p)
                        ),
                        None,
                        Some(&node_label(root, p)),
                    ));
                }
                if let Some(other) = parent.get(c).copied().flatten() {
                    let label = node_label(root, c);
                    return Err(report.malformed_at(
                        "multiple_parents",
                        format!(
                            "node '{label}' is a child of both '{}' and '{}'; a glTF node has at most one parent",
                            node_label(root, other),
                            node_label(root, p)
                        ),
                        None,
                        Some(&label),
                    ));
                }
                if let Some(slot) = parent.get_mut(c) {
                    *slot = Some(p);
                }
            }
        }
        let hierarchy = Hierarchy { parent };
        if let Some(node) = hierarchy.find_cycle() {
            let label = node_label(root, node);
            return Err(report.malformed_at(
                "cyclic_hierarchy",
                format!("node '{label}' is its own ancestor (cyclic node hierarchy)"),
                None,
                Some(&label),
            ));
        }
        Ok(hierarchy)
    }

    /// A node on a parent cycle, if any. Each node is walked once: walks
    /// stop at nodes already known to reach a root.
    fn find_cycle(&self) -> Option<usize> {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Unseen,
            OnPath,
            ReachesRoot,
        }
        let mut state = vec![State::Unseen; self.parent.len()];
        for start in 0..self.parent.len() {
            let mut path = Vec::new();
            let mut at = Some(start);
            while let Some(i) = at {
                match state.get(i).copied() {
                    Some(State::Unseen) => {
                        state[i] = State::OnPath;
                        path.push(i);
                        at = self.parent.get(i).copied().flatten();
                    }
                    Some(State::OnPath) => return Some(i),
                    _ => break,
                }
            }
            for i in path {
                state[i] = State::ReachesRoot;
            }
        }
        None
    }

    pub(super) fn parent(&self, node: usize) -> Option<usize> {
        self.parent.get(node).copied().flatten()
    }

    /// Mark every ancestor of a marked node. Terminates because the
    /// hierarchy is acyclic (checked in `build`).
    fn close_over_ancestors(&self, marked: &mut [bool]) {
        for start in 0..marked.len() {
            if !marked[start] {
                continue;
            }
            let mut at = self.parent(start);
            while let Some(p) = at {
                if marked.get(p).copied().unwrap_or(true) {
                    break;
                }
                marked[p] = true;
                at = self.parent(p);
            }
        }
    }

    /// For every node, whether a strict ancestor is marked, in one pass
    /// (each node joins a walk up once; walking up from every node is
    /// quadratic in the depth of a chain).
    fn under_marked(&self, marked: &[bool]) -> Vec<bool> {
        let is_marked = |i: usize| marked.get(i).copied().unwrap_or(false);
        let mut known: Vec<Option<bool>> = vec![None; self.parent.len()];
        let mut path = Vec::new();
        for start in 0..known.len() {
            path.clear();
            let mut at = start;
            // Above the walk's top: whether that node has a marked strict
            // ancestor, and whether it is marked; (false, false) above a
            // root. A known node stops the walk before it is pushed.
            let (mut above, mut above_marked) = (false, false);
            loop {
                if let Some(k) = known.get(at).copied().flatten() {
                    (above, above_marked) = (k, is_marked(at));
                    break;
                }
                path.push(at);
                match self.parent(at) {
                    Some(p) => at = p,
                    None => break,
                }
            }
            for &node in path.iter().rev() {
                let v = above || above_marked;
                known[node] = Some(v);
                (above, above_marked) = (v, is_marked(node));
            }
        }
        known.into_iter().map(|k| k.unwrap_or(false)).collect()
    }
}

/// Check every skin's joints and inverse bind matrices (a missing or
/// out-of-bounds accessor means the file is broken) and return each
/// skin's matrices (column-major), `None` where the skin has none.
pub(super) fn check_skins(
    root: &json::Root,
    buffers: &Buffers,
    report: &Report,
) -> Result<Vec<Option<Vec<[f32; 16]>>>, ImportError> {
    let mut out = Vec::with_capacity(root.skins.len());
    for (si, skin) in root.skins.iter().enumerate() {
        let name = skin_label(skin, si);
        for joint in &skin.joints {
            if joint.value() >= root.nodes.len() {
                return Err(report.malformed(
                    "broken_skin",
                    format!(
                        "{name} lists joint node {}, which does not exist",
                        joint.value()
                    ),
                ));
            }
        }
        if let Some(ibm) = skin.inverse_bind_matrices {
            // One matrix per joint is all a skin uses; a count above the
            // joint limit is refused before anything is decoded.
            let allow = accessor::Allowance {
                max_count: report.limits.max_joints as u64,
                budget: &report.budget,
            };
            let decoded = accessor::read(root, buffers, ibm.value(), Expect::Mat4, &allow)
                .map_err(|e| {
                    report.malformed("bad_accessor", format!("{name} inverse bind matrices: {e}"))
                })?;
            if decoded.count < skin.joints.len() {
                return Err(report.malformed(
                    "bad_accessor",
                    format!(
                        "{name} has {} joints but only {} inverse bind matrices",
                        skin.joints.len(),
                        decoded.count
                    ),
                ));
            }
            out.push(Some(decoded.elements::<16>().collect()));
        } else {
            out.push(None);
        }
    }
    Ok(out)
}

fn skin_label(skin: &json::Skin, index: usize) -> String {
    match skin.name.as_deref() {
        Some(n) if !n.is_empty() => format!("skin '{n}'"),
        _ => format!("skin {index}"),
    }
}

/// The chosen joints and where each node went.
pub(super) struct Selection {
    pub skeleton: SourceSkeleton,
    /// Joint index of each node, `None` for nodes that are not joints.
    pub joint_of_node: Vec<Option<usize>>,
}

impl Selection {
    pub fn joint_name(&self, joint: usize) -> &str {
        self.skeleton
            .joints
            .get(joint)
            .map(|j| j.name.as_str())
            .unwrap_or("?")
    }
}

pub(super) fn select(
    root: &json::Root,
    hierarchy: &Hierarchy,
    options: &ImportOptions,
    report: &mut Report,
) -> Result<Selection, ImportError> {
    let n = root.nodes.len();
    let mut deforms = vec![false; n];
    for skin in &root.skins {
        for j in &skin.joints {
            if let Some(d) = deforms.get_mut(j.value()) {
                *d = true;
            }
        }
    }
    let mut animated = vec![false; n];
    for anim in &root.animations {
        for ch in &anim.channels {
            // Morph weights animate a mesh, not a transform: they become
            // scalar curves and do not make their node a joint.
            if ch.target.path
                == json::validation::Checked::Valid(json::animation::Property::MorphTargetWeights)
            {
                continue;
            }
            if let Some(a) = animated.get_mut(ch.target.node.value()) {
                *a = true;
            }
        }
    }
    let mut needed: Vec<bool> = deforms
        .iter()
        .zip(&animated)
        .map(|(d, a)| *d || *a)
        .collect();
    hierarchy.close_over_ancestors(&mut needed);

    // Nodes hanging below joints that are neither joints nor animated:
    // `_end` bones, IK targets, sockets. Mesh and camera nodes are never
    // "leaves" in this sense: they are scene content, not skeleton.
    let is_content = |i: usize| {
        root.nodes
            .get(i)
            .is_some_and(|nd| nd.mesh.is_some() || nd.camera.is_some())
    };
    let under_needed = hierarchy.under_marked(&needed);
    let unused_leaves: Vec<usize> = (0..n)
        .filter(|&i| !needed[i] && !is_content(i) && under_needed[i])
        .collect();
    let mut kept = needed.clone();
    if options.keep_unused_leaves {
        for &i in &unused_leaves {
            kept[i] = true;
        }
        hierarchy.close_over_ancestors(&mut kept);
    }

    record_selection_decisions(
        root,
        &deforms,
        &animated,
        &needed,
        &unused_leaves,
        options,
        report,
    );

    let nodes: Vec<usize> = (0..n).filter(|&i| kept[i]).collect();
    let mut joint_of_node = vec![None; n];
    for (j, &node) in nodes.iter().enumerate() {
        joint_of_node[node] = Some(j);
    }
    let names = unique_names(root, &nodes, report);
    let mut joints = Vec::with_capacity(nodes.len());
    for (&node, name) in nodes.iter().zip(names) {
        let parent = hierarchy
            .parent(node)
            .and_then(|p| joint_of_node.get(p).copied().flatten());
        let rest = match root.nodes.get(node) {
            Some(nd) => rest_transform(nd).unwrap_or_else(|(t, why)| {
                report.push(Diagnostic::error("matrix_not_decomposable", why).joint(&name));
                t
            }),
            None => Transform::IDENTITY,
        };
        joints.push(SourceJoint { name, parent, rest });
    }
    let roots: Vec<String> = joints
        .iter()
        .filter(|j| j.parent.is_none())
        .map(|j| format!("'{}'", j.name))
        .collect();
    if !roots.is_empty() {
        report.decide(
            "root_joints",
            format!(
                "root joint{}: {}",
                if roots.len() == 1 { "" } else { "s" },
                roots.join(", ")
            ),
        );
    }
    Ok(Selection {
        skeleton: SourceSkeleton { joints },
        joint_of_node,
    })
}

fn record_selection_decisions(
    root: &json::Root,
    deforms: &[bool],
    animated: &[bool],
    needed: &[bool],
    unused_leaves: &[usize],
    options: &ImportOptions,
    report: &mut Report,
) {
    let list = |nodes: &mut dyn Iterator<Item = usize>| -> Vec<String> {
        nodes
            .map(|i| format!("'{}'", node_label(root, i)))
            .collect()
    };
    let n = needed.len();
    let skins: Vec<String> = root
        .skins
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{} ({} joints)", skin_label(s, i), s.joints.len()))
        .collect();
    let extra_animated = list(&mut (0..n).filter(|&i| animated[i] && !deforms[i]));
    let ancestors = list(&mut (0..n).filter(|&i| needed[i] && !animated[i] && !deforms[i]));
    match skins.len() {
        0 => report.decide(
            "node_animation_skeleton",
            format!(
                "no skin: joints are the {} animated nodes plus their ancestors",
                extra_animated.len()
            ),
        ),
        1 => report.decide(
            "skin_skeleton",
            format!("joints are the joints of {}", skins.join("")),
        ),
        _ => report.decide(
            "skin_union",
            format!(
                "joints are the union of {} skins: {}",
                skins.len(),
                skins.join(", ")
            ),
        ),
    }
    if !skins.is_empty() && !extra_animated.is_empty() {
        report.decide(
            "animated_non_skin_nodes",
            format!(
                "animated nodes outside every skin are joints too: {}",
                extra_animated.join(", ")
            ),
        );
    }
    if !ancestors.is_empty() {
        report.decide(
            "ancestor_joints",
            format!(
                "ancestors kept as joints so FK reproduces scene space: {}",
                ancestors.join(", ")
            ),
        );
    }
    if !unused_leaves.is_empty() {
        let names = list(&mut unused_leaves.iter().copied());
        if options.keep_unused_leaves {
            report.decide(
                "kept_unused_leaves",
                format!(
                    "kept nodes that neither deform nor animate (keep_unused_leaves): {}",
                    names.join(", ")
                ),
            );
        } else {
            report.decide(
                "dropped_unused_leaves",
                format!(
                    "dropped nodes that neither deform nor animate: {}",
                    names.join(", ")
                ),
            );
        }
    }
    let mut is_leaf = vec![false; n];
    for &i in unused_leaves {
        if let Some(l) = is_leaf.get_mut(i) {
            *l = true;
        }
    }
    let skipped: Vec<String> = (0..n)
        .filter(|&i| !needed[i] && !is_leaf[i])
        .map(|i| {
            let kind = match root.nodes.get(i) {
                Some(nd) if nd.mesh.is_some() => "mesh",
                Some(nd) if nd.camera.is_some() => "camera",
                _ => "node",
            };
            format!("'{}' ({kind})", node_label(root, i))
        })
        .collect();
    if !skipped.is_empty() {
        report.decide(
            "skipped_nodes",
            format!(
                "nodes no skin or animation needs are not joints: {}",
                skipped.join(", ")
            ),
        );
    }
}

/// Joint names: the node's name or `node<index>`; later duplicates (in node
/// order) become `Name.1`, `Name.2`..., skipping any suffix that is already
/// some node's name, so the result depends only on the document.
fn unique_names(root: &json::Root, nodes: &[usize], report: &mut Report) -> Vec<String> {
    let base: Vec<String> = nodes.iter().map(|&i| node_label(root, i)).collect();
    let mut taken: HashSet<String> = HashSet::new();
    // Every node's label, joint or not, so a renamed joint never takes the
    // name of another node in the file (which would mislead whoever reads
    // the report against the DCC scene).
    let labels: Vec<String> = (0..root.nodes.len()).map(|i| node_label(root, i)).collect();
    let all: HashSet<&str> = labels.iter().map(String::as_str).collect();
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    let mut names = Vec::with_capacity(base.len());
    for (name, &node) in base.iter().zip(nodes) {
        if taken.insert(name.clone()) {
            names.push(name.clone());
            continue;
        }
        let k = next_suffix.entry(name.clone()).or_insert(1);
        let renamed = loop {
            let candidate = format!("{name}.{k}");
            *k += 1;
            if !all.contains(candidate.as_str()) && !taken.contains(&candidate) {
                break candidate;
            }
        };
        report.decide(
            "renamed_duplicate",
            format!(
                "node {node} '{name}' renamed '{renamed}': another joint already has that name"
            ),
        );
        taken.insert(renamed.clone());
        names.push(renamed);
    }
    names
}

/// Relative tolerance when checking that TRS reproduces a node matrix.
const DECOMPOSE_TOLERANCE: f32 = 1e-4;

/// The node's local transform. A matrix that is not a positive-scale TRS
/// (mirroring, shear, projective row) is an error: we return the best TRS
/// we have together with the reason.
pub(super) fn rest_transform(node: &json::Node) -> Result<Transform, (Transform, String)> {
    let Some(m) = node.matrix else {
        let t = node.translation.map(Vec3::from_array).unwrap_or(Vec3::ZERO);
        let r = node
            .rotation
            .map(|q| Quat::from_array(q.0))
            .unwrap_or(Quat::IDENTITY);
        let s = node.scale.map(Vec3::from_array).unwrap_or(Vec3::ONE);
        // Exporters write unit quaternions rounded to a few digits; the rest
        // pose is a unit rotation by definition. Unnormalizable ones are
        // left for validate_asset to report.
        let len = r.length();
        let r = if len.is_finite() && len > 1e-4 {
            r / len
        } else {
            r
        };
        return Ok(Transform::new(t, r, s));
    };
    let label = node.name.as_deref().unwrap_or("(unnamed)");
    let affine = Affine3A::from_cols_array(&[
        m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10], m[12], m[13], m[14],
    ]);
    let (scale, rotation, translation) = affine.to_scale_rotation_translation();
    let trs = Transform::new(translation, rotation, scale);
    if m.iter().any(|v| !v.is_finite()) {
        return Err((trs, format!("node '{label}' matrix is not finite")));
    }
    if [m[3], m[7], m[11], m[15] - 1.0]
        .iter()
        .any(|v| v.abs() > DECOMPOSE_TOLERANCE)
    {
        return Err((
            trs,
            format!("node '{label}' matrix is projective (last row is not 0 0 0 1)"),
        ));
    }
    let det = affine.matrix3.determinant();
    if det.is_nan() || det <= 0.0 {
        return Err((
            trs,
            format!("node '{label}' matrix has determinant {det} (mirrored or degenerate); a joint needs positive scale"),
        ));
    }
    let rebuilt = trs.to_affine().to_cols_array();
    let original = affine.to_cols_array();
    let magnitude = original.iter().fold(1.0f32, |a, v| a.max(v.abs()));
    let worst = rebuilt
        .iter()
        .zip(&original)
        .fold(0.0f32, |a, (x, y)| a.max((x - y).abs()));
    if worst.is_nan() || worst > DECOMPOSE_TOLERANCE * magnitude {
        return Err((
            trs,
            format!("node '{label}' matrix has shear and cannot be decomposed into translation, rotation and scale"),
        ));
    }
    Ok(trs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix_node(m: [f32; 16]) -> json::Node {
        json::Node {
            matrix: Some(m),
            ..Default::default()
        }
    }

    #[test]
    fn matrix_with_scale_decomposes() {
        let t = Transform::new(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_rotation_y(0.7),
            Vec3::new(0.01, 0.01, 0.01),
        );
        let a = t.to_affine().to_cols_array();
        let m = [
            a[0], a[1], a[2], 0.0, a[3], a[4], a[5], 0.0, a[6], a[7], a[8], 0.0, a[9], a[10],
            a[11], 1.0,
        ];
        let r = rest_transform(&matrix_node(m)).unwrap();
        assert!((r.translation - t.translation).length() < 1e-5);
        assert!(1.0 - r.rotation.dot(t.rotation).abs() < 1e-6);
        assert!((r.scale - t.scale).length() < 1e-6);
    }

    #[test]
    fn mirror_and_shear_are_rejected() {
        let mut m = [0.0; 16];
        m[0] = -1.0;
        m[5] = 1.0;
        m[10] = 1.0;
        m[15] = 1.0;
        assert!(rest_transform(&matrix_node(m)).is_err());
        let mut s = [0.0; 16];
        s[0] = 1.0;
        s[4] = 0.5; // x picks up y: shear
        s[5] = 1.0;
        s[10] = 1.0;
        s[15] = 1.0;
        assert!(rest_transform(&matrix_node(s)).is_err());
    }
}
