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
