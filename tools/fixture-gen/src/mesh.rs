//! The biped's skinned mesh: one axis-aligned box per bone, in bind pose.
//!
//! Boxes keep the mesh tiny while still making the asset a real skinned
//! mesh: vertices near a bone's start are blended with the parent joint
//! (two influences), the rest are rigid. The chest box also carries the
//! "Breathe" morph target displacement.

use crate::skeleton::{Joint, JOINT_COUNT};
use glam::DVec3;

/// Mesh data ready to be written as glTF vertex attributes.
#[derive(Debug, Default)]
pub struct MeshData {
    pub positions: Vec<[f32; 3]>,
    /// JOINTS_0, indices into the skin's joint list (== node index here).
    pub joints: Vec<[u8; 4]>,
    /// WEIGHTS_0; each row sums to exactly 1.0 (0.75 + 0.25 or 1.0).
    pub weights: Vec<[f32; 4]>,
    /// Position displacements of the "Breathe" morph target, per vertex.
    pub breathe: Vec<[f32; 3]>,
    /// Triangle list, counter-clockwise front faces.
    pub indices: Vec<u16>,
}

/// Weight of the parent joint on the start-side vertices of a box.
const PARENT_WEIGHT: f32 = 0.25;

/// Builds the mesh. Vertex order follows joint order, then corner order, so
/// the result is fully determined by the skeleton tables.
pub fn build() -> MeshData {
    const _: () = assert!(JOINT_COUNT <= u8::MAX as usize);
    let mut mesh = MeshData::default();
    for joint in Joint::ALL {
        let Some(bone) = joint.bone_box() else {
            continue;
        };
        let start = joint.rest_global();
        let end = start + bone.tip;
        let lo = start.min(end) - bone.half_extents;
        let hi = start.max(end) + bone.half_extents;
        let centre = 0.5 * (lo + hi);
        let base = mesh.positions.len();
        // Blend with the parent only if the parent has geometry of its own.
        let blend_parent = joint.parent().filter(|p| p.bone_box().is_some());

        for corner in 0..8u32 {
            let pick = |axis: u32, a: f64, b: f64| if corner & (1 << axis) == 0 { a } else { b };
            let p = DVec3::new(
                pick(0, lo.x, hi.x),
                pick(1, lo.y, hi.y),
                pick(2, lo.z, hi.z),
            );
            mesh.positions.push(to_f32(p));

            // Parameter of the corner along the bone: < 0.5 is the start side.
            let t = (p - start).dot(bone.tip) / bone.tip.length_squared();
            let (j, w) = match blend_parent {
                Some(parent) if t < 0.5 => (
                    [joint.index() as u8, parent.index() as u8, 0, 0],
                    [1.0 - PARENT_WEIGHT, PARENT_WEIGHT, 0.0, 0.0],
                ),
                _ => ([joint.index() as u8, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
            };
            mesh.joints.push(j);
            mesh.weights.push(w);

            mesh.breathe.push(if joint == Joint::Chest {
                // Ribcage expands sideways and mostly forward, lifting a bit.
                let side = if p.x > centre.x { 0.012 } else { -0.012 };
                let up = if p.y > centre.y { 0.008 } else { 0.0 };
                let front = if p.z > centre.z { 0.03 } else { -0.004 };
                to_f32(DVec3::new(side, up, front))
            } else {
                [0.0; 3]
            });
        }

        for [a, b, c] in box_triangles() {
            for k in [a, b, c] {
                // At most 30 boxes of 8 corners: always fits in u16.
                mesh.indices.push((base + k) as u16);
            }
        }
    }
    mesh
}

/// The 12 triangles of a box whose corner `c` has bit `a` set when it lies on
/// the high side of axis `a`. Each face is wound counter-clockwise seen from
/// outside: for the face normal `+e_a` with in-plane axes `u = a+1`,
/// `v = a+2` (cyclic) the quad `(0,0) (1,0) (1,1) (0,1)` in `(u, v)` has normal
/// `e_u x e_v = +e_a`; the `-e_a` face uses the reverse order.
fn box_triangles() -> Vec<[usize; 3]> {
    let mut tris = Vec::with_capacity(12);
    for axis in 0..3 {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        for high in [false, true] {
            let face_bit = if high { 1 << axis } else { 0 };
            let corner = |bu: usize, bv: usize| face_bit | (bu << u) | (bv << v);
            let mut quad = [corner(0, 0), corner(1, 0), corner(1, 1), corner(0, 1)];
            if !high {
                quad.reverse();
            }
            tris.push([quad[0], quad[1], quad[2]]);
            tris.push([quad[0], quad[2], quad[3]]);
        }
    }
    tris
}

fn to_f32(v: DVec3) -> [f32; 3] {
    [v.x as f32, v.y as f32, v.z as f32]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boxes_are_wound_outwards() {
        let mesh = build();
        for tri in mesh.indices.chunks_exact(3) {
            let p = |i: u16| {
                let [x, y, z] = mesh.positions[usize::from(i)];
                DVec3::new(f64::from(x), f64::from(y), f64::from(z))
            };
            let (a, b, c) = (p(tri[0]), p(tri[1]), p(tri[2]));
            let box_base = usize::from(tri[0]) / 8 * 8;
            let centre = (0..8)
                .map(|k| p(u16::try_from(box_base + k).unwrap_or(0)))
                .fold(DVec3::ZERO, |s, v| s + v)
                / 8.0;
            let normal = (b - a).cross(c - a);
            assert!(normal.dot((a + b + c) / 3.0 - centre) > 0.0);
        }
    }

    #[test]
    fn weights_sum_to_one_and_reference_real_joints() {
        let mesh = build();
        assert_eq!(mesh.positions.len(), 30 * 8);
        for (j, w) in mesh.joints.iter().zip(&mesh.weights) {
            assert_eq!(w.iter().sum::<f32>(), 1.0);
            assert!(j.iter().all(|&i| usize::from(i) < JOINT_COUNT));
        }
        assert!(mesh.weights.iter().any(|w| w[1] > 0.0), "some blending");
    }

    #[test]
    fn breathe_moves_only_chest() {
        let mesh = build();
        let moved: Vec<_> = mesh
            .breathe
            .iter()
            .zip(&mesh.joints)
            .filter(|(d, _)| **d != [0.0; 3])
            .map(|(_, j)| j[0])
            .collect();
        assert_eq!(moved.len(), 8);
        assert!(moved
            .iter()
            .all(|&j| usize::from(j) == Joint::Chest.index()));
    }
}
