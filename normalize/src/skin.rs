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
    /// Largest `|sum of a vertex's authored weights - 1|` over the
    /// weighted vertices (0 without a mesh).
    pub max_weight_sum_error: f32,
    /// Vertices with no influence (or weights summing to zero): no skin
    /// moves them, so they are left out of the residual.
    pub unweighted_vertices: usize,
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
        unweighted_vertices: 0,
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
        let influences = mesh.vertex(v);
        let sum: f32 = influences.iter().map(|(_, w)| w).sum();
        if sum == 0.0 {
            out.unweighted_vertices += 1;
            continue;
        }
        out.max_weight_sum_error = out.max_weight_sum_error.max((sum - 1.0).abs());
        let mut skinned = Vec3::ZERO;
        for &(i, w) in influences {
            let m = palette
                .get(i as usize)
                .copied()
                .unwrap_or(Affine3A::IDENTITY);
            skinned += (w / sum) * m.transform_point3(p);
        }
        // A NaN residual is the worst there is.
        let d = skinned.distance(g.transform_point3(p));
        let d = if d.is_nan() { f32::INFINITY } else { d };
        if d > worst.0 || worst.1.is_none() {
            worst = (d, Some(v));
        }
    }
    out.max_residual_m = Some(worst.0);
    out.worst_vertex = worst.1;
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_format::math::Quat;
    use ludus_anim_model::skin::{matrix, SkinMesh};
    use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};

    /// Two joints resting straight up; the mesh was bound with the second
    /// bent 90 degrees (a bind pose that is not the rest).
    fn bent() -> (Skeleton, SourceSkin) {
        let rest = vec![
            Transform::IDENTITY,
            Transform::new(Vec3::Y, Quat::IDENTITY, Vec3::ONE),
        ];
        let sk = Skeleton::new(
            vec![NO_PARENT, 0],
            vec![JointId::from_path("a"), JointId::from_path("a/b")],
            rest,
            vec!["a".into(), "b".into()],
        )
        .unwrap();
        let bind_b = Affine3A::from_rotation_translation(
            Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
            Vec3::Y,
        );
        let binds = [Affine3A::IDENTITY, bind_b];
        let mesh_to_char = Affine3A::from_translation(Vec3::new(0.0, 0.0, 0.5));
        let positions = vec![Vec3::new(0.0, 0.5, 0.0), Vec3::new(-0.5, 1.0, 0.0)];
        let skin = SourceSkin {
            name: "body".into(),
            joints: vec![0, 1],
            inverse_bind: binds
                .iter()
                .map(|b| matrix(&(b.inverse() * mesh_to_char)))
                .collect(),
            bind_world: binds.iter().map(matrix).collect(),
            mesh: Some(SkinMesh {
                positions,
                offsets: vec![0, 1, 3],
                influences: vec![(0, 1.0), (0, 0.25), (1, 0.25)],
                geometry_to_skeleton: matrix(&mesh_to_char),
            }),
        };
        (sk, skin)
    }

    #[test]
    fn the_bind_pose_reproduces_the_mesh_and_the_rest_does_not() {
        let (sk, skin) = bent();
        let c = check_bind_pose(&sk, &skin);
        assert!(c.max_residual_m.unwrap() < 1e-6, "{c:?}");
        // Weights summing to 0.5 are normalized, and reported.
        assert!((c.max_weight_sum_error - 0.5).abs() < 1e-6);
        // The bind pose's local of the bent joint is not its rest.
        let locals = bind_pose_locals(&sk, &skin);
        assert!(locals[1].rotation.angle_between(Quat::IDENTITY) > 1.0);
        // Skinned with the rest pose instead, the mesh moves.
        let mut rest_skin = skin.clone();
        rest_skin.bind_world[1] = matrix(&sk.rest_pose()[1].to_affine());
        assert!(check_bind_pose(&sk, &rest_skin).max_residual_m.unwrap() > 0.1);
    }

    #[test]
    fn a_wrong_inverse_bind_shows_in_the_residual() {
        let (sk, mut skin) = bent();
        skin.inverse_bind[0][12] += 0.001;
        let c = check_bind_pose(&sk, &skin);
        assert!((c.max_residual_m.unwrap() - 0.001).abs() < 1e-5, "{c:?}");
        assert_eq!(c.worst_vertex, Some(0));
    }
}
