//! Removing packages no manifest references (`ludus-anim prune OUT`,
//! `cook --prune`).
//!
//! Under `OUT/.lock` (so never while another cook publishes; cooks stage
//! their packages outside `OUT/packages/` until they publish): finish any
//! interrupted publication, collect every package named by
//! `OUT/manifest.json` and every `OUT/manifest.shard-*.json`, then remove
//! the files of `OUT/packages/` that are packages (regular files named
//! `*.ludanim` starting with the package magic) and named by none.
//! Nothing else is ever removed. An asset server's output directory (one
//! with `generations/`) is refused: its generations name packages too.

use crate::publish::{lock_out, recover_locked};
use crate::report::PackageManifest;
use crate::sink::PublishError;
use ludus_anim_format::package::MAGIC;
use std::collections::BTreeSet;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a prune removed (or, dry, would remove).
#[derive(Debug, Default)]
pub struct Pruned {
    /// Removed packages, `packages/<name>`, sorted.
    pub removed: Vec<String>,
    pub removed_bytes: u64,
    /// Packages kept because a manifest names them.
    pub kept: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum PruneError {
    #[error("{0} has no manifest.json (nor shard manifests): nothing says which packages are in use, so none is removed")]
    NoManifest(String),
    #[error("{path}: not a manifest of this cooker ({message}); no package is removed")]
    BadManifest { path: String, message: String },
    #[error("{0} is an asset server's output directory (generations/ name packages too); prune is not supported there")]
    Served(String),
    #[error("cannot prune {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Publish(#[from] PublishError),
}

/// Prune `out` (see the module doc); `dry`: only report what would go.
pub fn prune(out: &Path, dry: bool) -> Result<Pruned, PruneError> {
    if out.join("generations").is_dir() {
        return Err(PruneError::Served(out.display().to_string()));
    }
    if !out.join("packages").is_dir() {
        return Err(PruneError::NoManifest(out.display().to_string()));
    }
    let _lock = lock_out(out)?;
    recover_locked(out)?;
    let referenced = referenced(out)?;
    let mut pruned = Pruned::default();
    let dir = out.join("packages");
    for (name, path, len) in packages(&dir)? {
        if referenced.contains(&format!("packages/{name}")) {
            pruned.kept += 1;
            continue;
        }
        if !dry {
            std::fs::remove_file(&path).map_err(|source| PruneError::Io {
                path: path.display().to_string(),
                source,
            })?;
        }
        pruned.removed.push(format!("packages/{name}"));
        pruned.removed_bytes += len;
    }
    pruned.removed.sort();
    Ok(pruned)
}

/// Every package path (`packages/<name>`) the manifests in `out` name.
fn referenced(out: &Path) -> Result<BTreeSet<String>, PruneError> {
    let io = |source| PruneError::Io {
        path: out.display().to_string(),
        source,
    };
    let mut files: Vec<PathBuf> = Vec::new();
    for e in std::fs::read_dir(out).map_err(io)?.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let is_manifest = name == "manifest.json"
            || (name.starts_with("manifest.shard-") && name.ends_with(".json"));
        if is_manifest {
            files.push(e.path());
        }
    }
    if files.is_empty() {
        return Err(PruneError::NoManifest(out.display().to_string()));
    }
    let mut set = BTreeSet::new();
    for f in files {
        let bad = |message: String| PruneError::BadManifest {
            path: f.display().to_string(),
            message,
        };
        let bytes = std::fs::read(&f).map_err(|e| bad(e.to_string()))?;
        let m: PackageManifest = serde_json::from_slice(&bytes).map_err(|e| bad(e.to_string()))?;
        set.extend(m.assets.into_iter().map(|a| a.package));
    }
    Ok(set)
}

/// The packages in `dir`: regular files (not links) named `*.ludanim`
/// whose first bytes are the package magic, with their sizes.
fn packages(dir: &Path) -> Result<Vec<(String, PathBuf, u64)>, PruneError> {
    let rd = std::fs::read_dir(dir).map_err(|source| PruneError::Io {
        path: dir.display().to_string(),
        source,
    })?;
    let mut found = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
            continue;
        };
        if meta.is_file() && name.ends_with(".ludanim") && has_magic(&e.path()) {
            found.push((name, e.path(), meta.len()));
        }
    }
    Ok(found)
}

fn has_magic(p: &Path) -> bool {
    let mut head = [0u8; MAGIC.len()];
    std::fs::File::open(p)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok_and(|()| head == MAGIC)
}
