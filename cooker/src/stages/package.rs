//! Package: every cooked clip of an asset → the package bytes (read back
//! through the runtime once more) and its content-derived file name.

use crate::package_writer::{write_package, PackageClip, PackageContents};
use crate::stages::prepare::Prepared;
use ludus_anim_model::Diagnostic;
use ludus_anim_runtime::{Package, Skeleton};

/// File extension of packages.
pub const PACKAGE_EXT: &str = "ludanim";

/// What the asset-level inputs of a package are.
pub struct PackageHeader<'a> {
    pub asset_name: &'a str,
    /// The source path the package records.
    pub source_path: &'a str,
    pub source_hash: [u8; 32],
    pub skeleton: &'a Skeleton,
}

/// A written package.
pub struct Packaged {
    pub bytes: Vec<u8>,
    /// blake3 of `bytes`, hex.
    pub digest: String,
    /// `<asset>-<first 16 hex of digest>.ludanim`: content-named, so a
    /// package file is never rewritten with other bytes.
    pub file_name: String,
}

/// Write the package and check that the runtime loads it.
pub fn package(
    header: &PackageHeader<'_>,
    clips: Vec<PackageClip>,
    prepared: &[&Prepared],
) -> Result<Packaged, Diagnostic> {
    let contents = PackageContents {
        cooker_version: crate::COOKER_VERSION.to_string(),
        asset_name: header.asset_name.to_string(),
        source_path: header.source_path.to_string(),
        source_hash: header.source_hash,
        skeleton: header.skeleton,
        clips,
    };
    let bytes = write_package(&contents, prepared);
    if let Err(e) = Package::load(&bytes) {
        return Err(Diagnostic::error(
            "package_invalid",
            format!("the written package does not load: {e}"),
        )
        .file(header.source_path));
    }
    let digest = blake3::hash(&bytes).to_hex().to_string();
    let file_name = format!("{}-{}.{PACKAGE_EXT}", header.asset_name, &digest[..16]);
    Ok(Packaged {
        bytes,
        digest,
        file_name,
    })
}
