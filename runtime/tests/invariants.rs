//! What ARCHITECTURE.md says of the runtime and the format crate beyond
//! decoding: what they depend on, and that they do no I/O.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The names in a manifest's `[dependencies]` table.
fn dependencies(manifest: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(manifest).unwrap_or_default();
    let mut names = Vec::new();
    let mut inside = false;
    for line in text.lines() {
        if line.starts_with('[') {
            inside = line.trim() == "[dependencies]";
        } else if inside {
            if let Some((name, _)) = line.split_once('=') {
                names.push(name.trim().to_string());
            }
        }
    }
    names.sort();
    names
}

#[test]
fn the_runtime_depends_on_glam_thiserror_and_the_format_crate() {
    let runtime = dependencies(&root().join("runtime/Cargo.toml"));
    assert_eq!(runtime, ["glam", "ludus-anim-format", "serde", "thiserror"]);
    let format = dependencies(&root().join("format/Cargo.toml"));
    assert_eq!(format, ["glam", "serde"]);
    for manifest in ["runtime/Cargo.toml", "format/Cargo.toml"] {
        let text = std::fs::read_to_string(root().join(manifest)).unwrap_or_default();
        assert!(
            text.contains("serde = { workspace = true, optional = true }"),
            "{manifest}: serde only behind its feature"
        );
    }
}

#[test]
fn neither_crate_does_io() {
    for dir in ["runtime/src", "format/src"] {
        let mut stack = vec![root().join(dir)];
        while let Some(d) = stack.pop() {
            for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.is_dir() {
                    stack.push(path);
                    continue;
                }
                let text = std::fs::read_to_string(&path).unwrap_or_default();
                // Code only: the crate example reads a file, as a game would.
                let code = text.lines().filter(|l| !l.trim_start().starts_with("//"));
                for line in code {
                    for io in ["std::fs", "std::net", "std::io", "File::", "std::env"] {
                        assert!(!line.contains(io), "{}: {line}", path.display());
                    }
                }
            }
        }
    }
}
