//! Sockets as importers read them: named frames attached to a joint (a
//! hand grip, a muzzle, a camera mount), each an offset in its joint's
//! space. Importers make one from each node below the skeleton that is
//! neither a joint nor scene content (a glTF child node or FBX empty that
//! no skin deforms and nothing animates), the manifest adds more.

use ludus_anim_format::math::Transform;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceSocket {
    /// Unique within the asset (the node's name, made unique like joint
    /// names).
    pub name: String,
    /// Joint index in the asset's skeleton.
    pub joint: usize,
    /// The frame relative to the joint (source units): the product of the
    /// local transforms from below the joint down to the node.
    pub offset: Transform,
}

impl SourceSocket {
    /// A socket named `base`, or `base.1`, `base.2`, ... when `taken`
    /// already holds that name (which it then records), on `joint` at
    /// `offset` (decomposed; an importer's chain of local transforms).
    pub fn unique(
        taken: &mut std::collections::HashSet<String>,
        base: String,
        joint: usize,
        offset: ludus_anim_format::math::Affine3A,
    ) -> SourceSocket {
        let mut name = base.clone();
        let mut k = 1;
        while !taken.insert(name.clone()) {
            name = format!("{base}.{k}");
            k += 1;
        }
        let (scale, rotation, translation) = offset.to_scale_rotation_translation();
        SourceSocket {
            name,
            joint,
            offset: Transform::new(translation, rotation, scale),
        }
    }
}
