//! Which importer a file goes to, and what its keys mean in time. The
//! importer sets both on the [`SourceAsset`](crate::SourceAsset); later
//! stages match on these enums, never on file-name strings.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// A source file format the cooker reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum SourceFormat {
    /// glTF 2.0 JSON (`.gltf`), buffers embedded or in companion files.
    Gltf,
    /// glTF 2.0 binary container (`.glb`).
    Glb,
    /// Autodesk FBX, binary or ASCII (through ufbx).
    Fbx,
    /// Biovision Hierarchy motion capture.
    Bvh,
    /// ACL's SJSON raw clip format.
    AclSjson,
}

impl SourceFormat {
    /// Every format, for "expected one of" messages and listings.
    pub const ALL: [SourceFormat; 5] = [
        SourceFormat::Gltf,
        SourceFormat::Glb,
        SourceFormat::Fbx,
        SourceFormat::Bvh,
        SourceFormat::AclSjson,
    ];

    /// The format's name in reports (`gltf`, `glb`, `fbx`, `bvh`,
    /// `acl-sjson`).
    pub fn name(self) -> &'static str {
        match self {
            SourceFormat::Gltf => "gltf",
            SourceFormat::Glb => "glb",
            SourceFormat::Fbx => "fbx",
            SourceFormat::Bvh => "bvh",
            SourceFormat::AclSjson => "acl-sjson",
        }
    }

    /// The file extension that selects the format (lowercase, no dot).
    pub fn extension(self) -> &'static str {
        match self {
            SourceFormat::AclSjson => "sjson",
            other => other.name(),
        }
    }

    /// The format a path's extension selects, case-insensitively.
    pub fn of_path(path: &Path) -> Option<SourceFormat> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        SourceFormat::ALL.into_iter().find(|f| f.extension() == ext)
    }

    /// What the format's keys mean between key times.
    pub fn kind(self) -> SourceKind {
        match self {
            SourceFormat::Gltf | SourceFormat::Glb => SourceKind::Curves,
            SourceFormat::Fbx | SourceFormat::Bvh | SourceFormat::AclSjson => SourceKind::Samples,
        }
    }
}

/// How the source's keys relate to time between them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum SourceKind {
    /// Keyed curves with their own interpolation (glTF).
    Curves,
    /// Sampled data (BVH frames, ACL raw clips, FBX curves baked by the
    /// importer through ufbx's evaluator): the keys are the authored motion
    /// and nothing is known between them, so the error is checked at every
    /// key time but not between keys.
    Samples,
}
