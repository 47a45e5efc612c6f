//! Source paths as a cook records them: relative to the project root,
//! normalized, with `/` separators, so packages, reports, `manifest.json`
//! and every stage key are the same whatever the checkout root and however
//! the input was spelled (`fbx/x.fbx`, `./fbx/x.fbx`, an absolute path, a
//! different working directory).
//!
//! The rule (`docs/stage-keys.md`, "Recorded paths"):
//! - the root is the manifest's directory, or the working directory
//!   without a manifest;
//! - `.` segments are dropped and `..` segments cancel the segment before
//!   them (lexically: a symbolic link followed by `..` is not resolved);
//! - a source outside the root is recorded relative to it with leading
//!   `..` segments, never as an absolute path, which would name the
//!   machine: two farm agents that lay out the checkout the same way
//!   around the root still agree;
//! - only a path on another drive (Windows), which has no relative form,
//!   stays absolute.
//!
//! Adapted idea: lexical cleaning as Go's `filepath.Clean` and Python's
//! `os.path.normpath` do it (no file system access, so it also works for
//! paths an importer derives and for files that are not there yet).

use std::path::{Component, Path, PathBuf};

/// `path` with `.` segments dropped and `..` segments applied lexically;
/// leading `..` segments of a relative path are kept, `..` at the root of
/// an absolute path is dropped (as the file system does). The empty path
/// normalizes to the empty path. The importers' function, so a companion
/// path an importer derives and the path the cook records agree.
pub use ludus_anim_importers::companion::normalize;

/// `path` relative to `base`, both absolute and normalized: the segments
/// after their common prefix, with one `..` per remaining segment of
/// `base`. `None` when they share no root (another drive).
pub fn relative_to(path: &Path, base: &Path) -> Option<PathBuf> {
    let p: Vec<Component<'_>> = path.components().collect();
    let b: Vec<Component<'_>> = base.components().collect();
    if p.first() != b.first() {
        return None;
    }
    let common = p.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let mut out = PathBuf::new();
    for _ in common..b.len() {
        out.push("..");
    }
    for c in &p[common..] {
        out.push(c.as_os_str());
    }
    Some(out)
}

/// A path as text with `/` separators (the recorded form).
pub fn slashed(path: &Path) -> String {
    let parts: Vec<String> = path
        .components()
        .map(|c| match c {
            Component::RootDir => String::new(),
            c => c.as_os_str().to_string_lossy().into_owned(),
        })
        .collect();
    match parts.as_slice() {
        [first, rest @ ..] if first.is_empty() => format!("/{}", rest.join("/")),
        _ => parts.join("/"),
    }
}

/// The absolute, normalized form of `root` (relative roots are taken from
/// the working directory; without one, the working directory itself).
pub fn absolute_root(root: Option<&Path>) -> PathBuf {
    let cwd = std::env::current_dir().unwrap_or_default();
    normalize(&cwd.join(root.unwrap_or(Path::new(""))))
}

/// How `path` (absolute, or relative to the working directory) is recorded
/// under the absolute, normalized `root`.
pub fn record(path: &Path, root: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    let full = normalize(&cwd.join(path));
    if let Ok(rel) = full.strip_prefix(root) {
        return slashed(rel);
    }
    // Spelled through a symbolic link on one side only (`/tmp` and
    // `/private/tmp`): the real paths still agree.
    if let (Ok(f), Ok(r)) = (full.canonicalize(), root.canonicalize()) {
        if let Ok(rel) = f.strip_prefix(&r) {
            return slashed(rel);
        }
    }
    match relative_to(&full, root) {
        Some(rel) => slashed(&rel),
        None => slashed(&full),
    }
}

/// A recorded path (or a path an importer derived from one, such as a
/// companion `dir/../buffers/x.bin`) in its normalized recorded form.
pub fn normalize_recorded(path: &str) -> String {
    slashed(&normalize(Path::new(path)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalize_is_lexical() {
        let n = |s: &str| slashed(&normalize(Path::new(s)));
        assert_eq!(n("./fbx/x.fbx"), "fbx/x.fbx");
        assert_eq!(n("fbx/./a/../x.fbx"), "fbx/x.fbx");
        assert_eq!(n("../up/./x"), "../up/x");
        assert_eq!(n("a/../../x"), "../x");
        assert_eq!(n("/a/../../x"), "/x");
        assert_eq!(n("fbx//x.fbx"), "fbx/x.fbx");
        assert_eq!(n("."), "");
    }

    #[test]
    fn spellings_record_alike() {
        let root = Path::new("/farm/project");
        for p in [
            "/farm/project/fbx/x.fbx",
            "/farm/project/./fbx/x.fbx",
            "/farm/project/fbx/../fbx/x.fbx",
        ] {
            assert_eq!(record(Path::new(p), root), "fbx/x.fbx", "{p}");
        }
        assert_eq!(
            record(Path::new("/farm/shared/y.bvh"), root),
            "../shared/y.bvh"
        );
        assert_eq!(record(Path::new("/other/z.glb"), root), "../../other/z.glb");
    }

    #[test]
    fn relative_inputs_start_at_the_working_directory() {
        let cwd = absolute_root(None);
        assert_eq!(record(Path::new("./fbx/x.fbx"), &cwd), "fbx/x.fbx");
        assert_eq!(record(&cwd.join("fbx/x.fbx"), &cwd), "fbx/x.fbx");
        let sub = cwd.join("sub");
        assert_eq!(record(Path::new("fbx/x.fbx"), &sub), "../fbx/x.fbx");
    }
}
