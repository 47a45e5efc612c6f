//! Which FBX nodes become joints, and their rest pose.
//!
//! # Joint selection rule
//! 1. Seeds: nodes with a skeleton attribute (FBX `LimbNode`/`Limb`/`Root`,
//!    ufbx `bone`), and nodes a skin cluster binds to (they deform a mesh).
//!    If the file has neither (node-only animation, e.g. a rigid robot),
//!    the seeds are the nodes whose transform is animated in some stack,
//!    cameras and lights excepted.
//! 2. Every ancestor of a seed below the scene root is a joint too: nulls
//!    and other nodes above a skeleton (Blender's `Armature`, MotionBuilder
//!    reference nulls, Maya groups) carry transform or motion that the
//!    skeleton inherits.
//! 3. Everything else (meshes, cameras, lights, animated nulls outside the
//!    skeleton, ...) is skipped and recorded as a `skipped_node` decision.
//! 4. After sampling: leaf nodes (no child node at all in the file) that
//!    neither deform a mesh nor animate in any clip (exporters' `_end`
//!    bones, IK pole targets/effectors) are dropped, in one pass (a bone
//!    left childless by that stays: it is part of the rig), unless
//!    `keep_unused_leaves`; non-seed joints
//!    (rule 2) whose rest is the identity and that never animate are
//!    collapsed into their children, which changes no pose. Both recorded.
//! 5. Names are made unique: the first node keeps its name, later ones get
//!    `.1`, `.2`, ... (recorded). Scale helpers ufbx creates for
//!    non-standard scale inheritance are named `<parent>_ScaleHelper`.
//!
//! # Rest pose rule
//! The rest pose is the scene's default local transforms, always: what the
//! artist left the rig at, which additive references and retarget poses
//! are relative to. A bind pose (skin clusters' bind matrices, `BindPose`
//! entries) belongs to the skins it binds (see `skin`), never to the
//! skeleton; the choice is recorded per asset (`rest_pose`).

use crate::ImportOptions;
use ludus_anim_model::{Decision, Quat, SourceJoint, Transform, Vec3};
use std::collections::{HashMap, HashSet};

/// Transform properties whose animation moves a node.
pub(super) const TRANSFORM_PROPS: &[&str] = &[
    "Lcl Translation",
    "Lcl Rotation",
    "Lcl Scaling",
    "PreRotation",
    "PostRotation",
    "RotationOffset",
    "RotationPivot",
    "ScalingOffset",
    "ScalingPivot",
    "RotationOrder",
];

/// A node that may become a joint.
pub(super) struct Candidate<'s> {
    pub node: &'s ufbx::Node,
    pub name: String,
    /// Index of the parent candidate.
    pub parent: Option<usize>,
    /// Rule 1 seed (bone, skin influence, or animated in a node-only file).
    pub seed: bool,
    /// A skin cluster binds to this node.
    pub deforming: bool,
    /// Rest local transform, full precision.
    pub rest: ufbx::Transform,
}

/// Element ids of nodes whose transform is animated in any stack.
pub(super) fn animated_nodes(scene: &ufbx::Scene) -> HashSet<u32> {
    let mut out = HashSet::new();
    for stack in scene.anim_stacks.iter() {
        for layer in stack.layers.iter() {
            for ap in layer.anim_props.iter() {
                if ap.element.type_ == ufbx::ElementType::Node
                    && TRANSFORM_PROPS.contains(&ap.prop_name.as_ref())
                {
                    out.insert(ap.element.element_id);
                }
            }
        }
    }
    out
}

fn node_kind(node: &ufbx::Node) -> &'static str {
    if node.mesh.is_some() {
        "mesh"
    } else if node.camera.is_some() {
        "camera"
    } else if node.light.is_some() {
        "light"
    } else if node.bone.is_some() {
        "bone"
    } else if node.attrib_type == ufbx::ElementType::Empty || node.attrib.is_none() {
        "null"
    } else {
        "other"
    }
}

/// Name of a node as a joint: its own, or a derived one for ufbx's
/// synthetic scale helpers (which have none).
pub(super) fn joint_name(node: &ufbx::Node) -> String {
    if node.is_scale_helper {
        let parent = node
            .parent
            .as_ref()
            .map(|p| p.element.name.as_ref().to_string())
            .unwrap_or_default();
        return format!("{parent}_ScaleHelper");
    }
    let name = node.element.name.as_ref();
    if name.is_empty() {
        "unnamed".to_string()
    } else {
        name.to_string()
    }
}

/// Rules 1-3: the candidate joints in scene order, parents resolved.
pub(super) fn select<'s>(
    scene: &'s ufbx::Scene,
    decisions: &mut Vec<Decision>,
) -> Vec<Candidate<'s>> {
    let deforming: HashSet<u32> = scene
        .skin_clusters
        .iter()
        .filter_map(|c| c.bone_node.as_ref().map(|n| n.element.element_id))
        .collect();
    let animated = animated_nodes(scene);
    let nodes: Vec<&ufbx::Node> = scene
        .nodes
        .iter()
        .map(|n| &**n)
        .filter(|n| !n.is_root)
        .collect();
    let has_skeleton = nodes
        .iter()
        .any(|n| n.bone.is_some() || deforming.contains(&n.element.element_id));
    let is_seed = |n: &ufbx::Node| {
        let id = n.element.element_id;
        if has_skeleton {
            n.bone.is_some() || deforming.contains(&id)
        } else {
            animated.contains(&id) && n.camera.is_none() && n.light.is_none()
        }
    };
    if !has_skeleton {
        decisions.push(Decision::new(
            "node_animation",
            "file has no bones and no skin: joints are the animated nodes and their ancestors",
        ));
    }

    // Rule 2: mark seeds and their ancestors. The step limit guards against
    // a malformed parent cycle.
    let mut member: HashSet<u32> = HashSet::new();
    for n in nodes.iter().filter(|n| is_seed(n)) {
        let mut cur: Option<&ufbx::Node> = Some(n);
        let mut steps = 0;
        while let Some(c) = cur {
            if c.is_root || !member.insert(c.element.element_id) || steps > nodes.len() {
                break;
            }
            steps += 1;
            cur = c.parent.as_deref();
        }
    }

    let mut out: Vec<Candidate<'s>> = Vec::new();
    let mut index: HashMap<u32, usize> = HashMap::new();
    for n in &nodes {
        let id = n.element.element_id;
        if !member.contains(&id) {
            let why = if animated.contains(&id) {
                "animated, but not part of the skeleton (not a bone, not a skin influence, not above one)"
            } else {
                "not a bone, not a skin influence and not above one"
            };
            decisions.push(Decision::new(
                "skipped_node",
                format!("'{}' ({}): {why}", joint_name(n), node_kind(n)),
            ));
            continue;
        }
        index.insert(id, out.len());
        out.push(Candidate {
            node: n,
            name: joint_name(n),
            parent: None,
            seed: is_seed(n),
            deforming: deforming.contains(&id),
            rest: n.local_transform,
        });
    }
    for c in &mut out {
        c.parent = c
            .node
            .parent
            .as_ref()
            .and_then(|p| index.get(&p.element.element_id).copied());
    }
    if out.iter().any(|c| c.node.is_scale_helper) {
        decisions.push(Decision::new(
            "scale_helper",
            "non-standard scale inheritance (e.g. segment scale compensate) with animated or non-uniform \
             scale: ufbx moved the scale to '<joint>_ScaleHelper' child joints",
        ));
    }
    out
}

/// Rest pose rule (see the module docs): the candidates already hold their
/// default local transforms; record where a bind pose went instead.
pub(super) fn rest_decision(scene: &ufbx::Scene, decisions: &mut Vec<Decision>) {
    let bound = scene.skin_clusters.iter().any(|c| c.bone_node.is_some())
        || scene.poses.iter().any(|p| p.is_bind_pose);
    let detail = if bound {
        "rest pose is the scene's default local transforms; the file's bind pose is kept with the skins, not used as rest"
    } else {
        "no bind pose: rest pose is the scene's default local transforms"
    };
    decisions.push(Decision::new("rest_pose", detail));
}

/// Convert a full-precision ufbx transform to the model's.
pub(super) fn to_model(t: &ufbx::Transform) -> Transform {
    let q = &t.rotation;
    let len = (q.x * q.x + q.y * q.y + q.z * q.z + q.w * q.w).sqrt();
    let rotation = if len > 1e-12 && len.is_finite() {
        Quat::from_xyzw(
            (q.x / len) as f32,
            (q.y / len) as f32,
            (q.z / len) as f32,
            (q.w / len) as f32,
        )
    } else {
        // Left unnormalized so validate_asset reports it.
        Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32)
    };
    Transform::new(
        Vec3::new(
            t.translation.x as f32,
            t.translation.y as f32,
            t.translation.z as f32,
        ),
        rotation,
        Vec3::new(t.scale.x as f32, t.scale.y as f32, t.scale.z as f32),
    )
}

fn is_identity(t: &ufbx::Transform) -> bool {
    let v = &t.translation;
    let s = &t.scale;
    let q = &t.rotation;
    let eps = 1e-9;
    v.x.abs() < eps
        && v.y.abs() < eps
        && v.z.abs() < eps
        && (s.x - 1.0).abs() < eps
        && (s.y - 1.0).abs() < eps
        && (s.z - 1.0).abs() < eps
        && q.x.abs() < eps
        && q.y.abs() < eps
        && q.z.abs() < eps
}

/// Rule 4 and 5: drop unused leaves, collapse identity pass-through nodes,
/// make names unique. Returns the joints and, per candidate, its joint
/// index (or `None` if removed).
pub(super) fn finish(
    cands: &[Candidate<'_>],
    animated: &[bool],
    options: &ImportOptions,
    decisions: &mut Vec<Decision>,
) -> (Vec<SourceJoint>, Vec<Option<usize>>) {
    let n = cands.len();
    let is_animated = |i: usize| animated.get(i).copied().unwrap_or(false);
    let mut alive = vec![true; n];
    // Leaves of the file itself (no child node at all, so no mesh or other
    // node hangs from them), one pass: a bone above an unused end bone is a
    // real joint of the rig even if this file does not animate it.
    if !options.keep_unused_leaves {
        let mut dropped = Vec::new();
        for (i, c) in cands.iter().enumerate() {
            if c.node.children.is_empty() && !c.deforming && !is_animated(i) {
                if let Some(a) = alive.get_mut(i) {
                    *a = false;
                }
                dropped.push(c.name.clone());
            }
        }
        dropped.sort();
        for name in dropped {
            decisions.push(Decision::new(
                "dropped_leaf",
                format!("'{name}': leaf joint that neither deforms a mesh nor animates (keep_unused_leaves keeps it)"),
            ));
        }
    }

    // Collapse identity pass-through ancestors (never seeds).
    for (i, c) in cands.iter().enumerate() {
        if alive.get(i) == Some(&true)
            && !c.seed
            && !c.deforming
            && !is_animated(i)
            && is_identity(&c.rest)
        {
            if let Some(a) = alive.get_mut(i) {
                *a = false;
            }
            decisions.push(Decision::new(
                "collapsed_node",
                format!(
                    "'{}': identity, unanimated node above the skeleton removed (no pose changes)",
                    c.name
                ),
            ));
        }
    }

    // New indices, nearest alive ancestor as parent.
    let mut remap: Vec<Option<usize>> = vec![None; n];
    let mut next = 0;
    for (i, slot) in remap.iter_mut().enumerate() {
        if alive.get(i) == Some(&true) {
            *slot = Some(next);
            next += 1;
        }
    }
    let mut joints = Vec::with_capacity(next);
    let mut used: HashSet<String> = HashSet::new();
    let mut renamed = Vec::new();
    for (i, c) in cands.iter().enumerate() {
        if alive.get(i) != Some(&true) {
            continue;
        }
        let mut parent = c.parent;
        let mut steps = 0;
        while let Some(p) = parent {
            if alive.get(p) == Some(&true) || steps > n {
                break;
            }
            parent = cands.get(p).and_then(|pc| pc.parent);
            steps += 1;
        }
        let parent = parent.and_then(|p| remap.get(p).copied().flatten());
        joints.push(SourceJoint {
            name: c.name.clone(),
            parent,
            rest: to_model(&c.rest),
        });
    }
    // Unique names: first occurrence (scene order) keeps its name.
    let all: HashSet<String> = joints.iter().map(|j| j.name.clone()).collect();
    for j in &mut joints {
        if used.insert(j.name.clone()) {
            continue;
        }
        let mut k = 1;
        let new = loop {
            let candidate = format!("{}.{k}", j.name);
            if !all.contains(&candidate) && !used.contains(&candidate) {
                break candidate;
            }
            k += 1;
        };
        renamed.push(format!("'{}' -> '{new}'", j.name));
        used.insert(new.clone());
        j.name = new;
    }
    for r in renamed {
        decisions.push(Decision::new(
            "renamed_joint",
            format!("duplicate joint name renamed: {r}"),
        ));
    }
    (joints, remap)
}
