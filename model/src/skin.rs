//! Mesh skin bindings as importers read them: which skeleton joints a
//! mesh's palette names, each palette entry's inverse bind transform and
//! the joint's bind-time transform, kept apart from the skeleton's rest
//! pose (the seed's "do not equate rest pose and mesh bind pose").
//!
//! Spaces: the skeleton's component space is the importer's scene space
//! (after axis conversion, in source units). `inverse_bind[i]` maps the
//! mesh's geometry space to palette joint `i`'s space at bind time, with
//! any mesh-to-skeleton conversion folded in, so that
//! `skin[i] = bind_world[i] * inverse_bind[i]` maps geometry space to
//! component space: at the bind pose it must reproduce the undeformed
//! mesh (`mesh.geometry_to_skeleton`), which the cook checks.

use ludus_anim_format::math::{Affine3A, Vec3};
use serde::{Deserialize, Serialize};

/// A column-major 4x4 affine matrix (the last row is 0, 0, 0, 1).
pub type Matrix = [f32; 16];

/// One mesh skin (a glTF skin, an FBX skin deformer's cluster set).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceSkin {
    /// Unique within the asset (a glTF skin's name or `skin<i>`, the
    /// skinned FBX mesh node's name), for reports.
    pub name: String,
    /// Palette entry -> joint index in the asset's skeleton.
    pub joints: Vec<usize>,
    /// Per palette entry: geometry space -> joint space at bind time.
    pub inverse_bind: Vec<Matrix>,
    /// Per palette entry: the joint's component-space transform when the
    /// mesh was bound (the bind pose; glTF: the inverse of the inverse
    /// bind matrix, FBX: the cluster's bind matrix).
    pub bind_world: Vec<Matrix>,
    /// The skinned mesh, when the importer read its vertices.
    #[serde(default)]
    pub mesh: Option<SkinMesh>,
}

/// The skinned mesh's undeformed vertices and authored influences.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SkinMesh {
    /// Vertex positions in geometry space (source units).
    pub positions: Vec<Vec3>,
    /// Influences of vertex `v` are `influences[offsets[v]..offsets[v+1]]`
    /// (`offsets.len() == positions.len() + 1`).
    pub offsets: Vec<u32>,
    /// (palette entry, weight) as authored: weights are not renormalized.
    pub influences: Vec<(u32, f32)>,
    /// Geometry space -> skeleton component space for the undeformed mesh.
    pub geometry_to_skeleton: Matrix,
}

impl SkinMesh {
    /// The influences of vertex `v` (empty for an out-of-range vertex).
    pub fn vertex(&self, v: usize) -> &[(u32, f32)] {
        let (Some(&a), Some(&b)) = (self.offsets.get(v), self.offsets.get(v + 1)) else {
            return &[];
        };
        self.influences.get(a as usize..b as usize).unwrap_or(&[])
    }
}

/// The affine part of a column-major matrix (its last row is ignored:
/// importers reject projective skin matrices).
pub fn affine(m: &Matrix) -> Affine3A {
    Affine3A::from_cols_array(&[
        m[0], m[1], m[2], m[4], m[5], m[6], m[8], m[9], m[10], m[12], m[13], m[14],
    ])
}

/// The column-major matrix of an affine transform.
pub fn matrix(a: &Affine3A) -> Matrix {
    let c = a.to_cols_array();
    [
        c[0], c[1], c[2], 0.0, c[3], c[4], c[5], 0.0, c[6], c[7], c[8], 0.0, c[9], c[10], c[11],
        1.0,
    ]
}
