//! The bind-pose oracle of a skin on the cooked skeleton: the seed's
//! `skin[i] = component[joint_i] * inverseBind[i]`, with `component` the
//! forward kinematics of the skin's bind pose as local transforms on the
//! cooked skeleton (what a runtime would evaluate), must map every vertex
//! of the source mesh, with its authored influences, onto the undeformed
//! mesh. The residual measures everything between the file and the cooked
//! data: the bind pose's decomposition into TRS locals, units, joint
//! order, the inverse binds and any mesh-to-skeleton conversion, the
//! influences' weights and f32 precision. Each vertex's weights are
//! normalized to sum to one, as a skinning runtime does (glTF requires
//! it; FBX exporters do not always write it): how far the authored sums
//! are from one is reported separately (`max_weight_sum_error`).

use ludus_anim_format::math::{Affine3A, Transform, Vec3};
use ludus_anim_model::skin::affine;
use ludus_anim_model::SourceSkin;
use ludus_anim_runtime::Skeleton;

/// One skin's oracle result.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SkinCheck {
    pub skin: String,
    /// Vertices of the skinned mesh (0 when the importer read no mesh).
    pub vertices: usize,
    /// Palette entries.
    pub joints: usize,
    /// Largest distance between a skinned vertex and the undeformed one
    /// (meters); `None` when there is no mesh to check.
    pub max_residual_m: Option<f32>,
    /// The vertex where it occurs.
    pub worst_vertex: Option<usize>,
    /// Largest `|sum of a vertex's authored weights - 1|` (0 without a mesh).
    pub max_weight_sum_error: f32,
}

/// The skin's bind pose as local transforms on `skeleton`: each palette
/// joint at its bind-time transform, every other joint at its rest
/// relative to its parent's bind-time transform.
pub fn bind_pose_locals(skeleton: &Skeleton, skin: &SourceSkin) -> Vec<Transform> {
    let n = skeleton.joint_count();
    let rest = skeleton.rest_pose();
    let mut bind_world: Vec<Option<Affine3A>> = vec![None; n];
    for (i, &j) in skin.joints.iter().enumerate() {
        if let (Some(slot), Some(m)) = (bind_world.get_mut(j), skin.bind_world.get(i)) {
            slot.get_or_insert(affine(m));
        }
    }
    let mut world = vec![Affine3A::IDENTITY; n];
    let mut locals = rest.to_vec();
    // Parents come before children in a cooked skeleton.
    for j in 0..n {
        let parent = skeleton.parent(j).and_then(|p| world.get(p).copied());
        let w = match bind_world[j] {
            Some(w) => w,
            None => parent.unwrap_or(Affine3A::IDENTITY) * rest[j].to_affine(),
        };
        world[j] = w;
        if bind_world[j].is_some() {
            let local = parent.map_or(w, |p| p.inverse() * w);
            let (scale, rotation, translation) = local.to_scale_rotation_translation();
            locals[j] = Transform::new(translation, rotation.normalize(), scale);
        }
    }
    locals
}

/// Skin the mesh with the bind pose and measure it against the
/// undeformed mesh (see the module docs).
pub fn check_bind_pose(skeleton: &Skeleton, skin: &SourceSkin) -> SkinCheck {
    let mut out = SkinCheck {
        skin: skin.name.clone(),
        vertices: skin.mesh.as_ref().map_or(0, |m| m.positions.len()),
        joints: skin.joints.len(),
        max_residual_m: None,
        worst_vertex: None,
        max_weight_sum_error: 0.0,
    };
    let Some(mesh) = &skin.mesh else {
        return out;
    };
    let locals = bind_pose_locals(skeleton, skin);
    let mut component = vec![Affine3A::IDENTITY; skeleton.joint_count()];
    if !skeleton.local_to_component(&locals, &mut component) {
        return out;
    }
    let palette: Vec<Affine3A> = skin
        .joints
        .iter()
        .zip(&skin.inverse_bind)
        .map(|(&j, ibm)| component.get(j).copied().unwrap_or(Affine3A::IDENTITY) * affine(ibm))
        .collect();
    let g = affine(&mesh.geometry_to_skeleton);
    let mut worst = (0.0f32, None);
    for (v, &p) in mesh.positions.iter().enumerate() {
        let mut skinned = Vec3::ZERO;
        for &(i, w) in mesh.vertex(v) {
            let m = palette
                .get(i as usize)
                .copied()
                .unwrap_or(Affine3A::IDENTITY);
            skinned += w * m.transform_point3(p);
        }
        let d = skinned.distance(g.transform_point3(p));
        // A NaN residual is the worst there is.
        if !(d <= worst.0) {
            worst = (if d.is_nan() { f32::INFINITY } else { d }, Some(v));
        }
    }
    out.max_residual_m = Some(worst.0);
    out.worst_vertex = worst.1;
    out
}
