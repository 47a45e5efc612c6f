//! The program example (`fixtures/locomotion`) cooked in a fresh directory,
//! for the program tests that compile variants of it.

use super::{ludus_anim, repo, text};
use std::path::{Path, PathBuf};

/// `fixtures/locomotion` with the biped beside it, cooked: (tempdir,
/// `locomotion/`).
pub fn cooked_example() -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("fixtures/biped.glb"),
        tmp.path().join("biped.glb"),
    )
    .unwrap();
    let dir = tmp.path().join("locomotion");
    std::fs::create_dir(&dir).unwrap();
    for f in ["ludus-anim.toml", "locomotion.program.toml", "script.toml"] {
        std::fs::copy(repo().join("fixtures/locomotion").join(f), dir.join(f)).unwrap();
    }
    let o = ludus_anim(&["cook"], &dir);
    assert!(o.status.success(), "{}", text(&o));
    (tmp, dir)
}

/// The example's program renamed `biped_<name>`, with `extra` appended,
/// written as `<name>.program.toml` in `dir`.
pub fn write_variant(dir: &Path, name: &str, base: &str, extra: &str) {
    let renamed = base.replace(
        "name = \"biped_locomotion\"",
        &format!("name = \"biped_{name}\""),
    ) + extra;
    std::fs::write(dir.join(format!("{name}.program.toml")), renamed).unwrap();
}

/// The example's program text.
pub fn example_program(dir: &Path) -> String {
    std::fs::read_to_string(dir.join("locomotion.program.toml")).unwrap()
}

/// Run `ludus-anim args` in `dir`; it must succeed; its stdout.
pub fn stdout(args: &[&str], dir: &Path) -> String {
    let o = ludus_anim(args, dir);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    String::from_utf8_lossy(&o.stdout).into_owned()
}
