//! Architecture checks that ARCHITECTURE.md states:
//! - no two files of a crate import each other (a module's `use` of
//!   `crate::`, `super::` or a child module's path is an edge; comments and
//!   `#[cfg(test)]` modules are left out), so data flows one way inside
//!   every crate as it does between crates;
//! - no workspace crate but the asset server depends on the cooker, in any
//!   dependency table (libraries and their tests use the library crates
//!   the cooker is built from);
//! - the project model (`project/`) lists no crate of the pipeline after
//!   import among its dependencies (nor the runtime): it says what a project is, never how
//!   it is cooked.

mod common;
use common::repo;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace members, from the root manifest.
fn members() -> Vec<PathBuf> {
    let text = std::fs::read_to_string(repo().join("Cargo.toml")).unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    v["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| repo().join(m.as_str().unwrap()))
        .collect()
}

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `a/b.rs` and `a/b/mod.rs` → `a::b`; `lib.rs` and `main.rs` → "".
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).unwrap().with_extension("");
    let mut parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    if matches!(
        parts.last().map(String::as_str),
        Some("mod" | "lib" | "main")
    ) {
        parts.pop();
    }
    parts.join("::")
}

/// The source without comments and without a trailing test module.
fn code_of(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every path in `code` that starts with `crate::`, `super::` or one of
/// `children`, as segments.
fn paths(code: &str, children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let bytes = code.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let starts_word = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_');
        let at_path = starts_word && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_');
        if !at_path {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < bytes.len()
            && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_' || bytes[j] == b':')
        {
            j += 1;
        }
        let segs: Vec<String> = code[i..j]
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        let rooted = matches!(segs.first().map(String::as_str), Some("crate" | "super"));
        let child = segs.len() > 1 && children.contains(&segs[0]);
        if rooted || child {
            out.push(segs);
        }
        i = j.max(i + 1);
    }
    out
}

/// The module a path names (the longest prefix that is a module).
fn target(from: &str, segs: &[String], modules: &BTreeSet<String>) -> Option<String> {
    let mut base: Vec<&str> = if from.is_empty() {
        Vec::new()
    } else {
        from.split("::").collect()
    };
    let mut rest = segs;
    match segs.first().map(String::as_str) {
        Some("crate") => {
            base.clear();
            rest = &segs[1..];
        }
        Some("super") => {
            while rest.first().is_some_and(|s| s == "super") {
                base.pop();
                rest = &rest[1..];
            }
        }
        _ => {}
    }
    (1..=rest.len()).rev().find_map(|n| {
        let m: Vec<&str> = base
            .iter()
            .copied()
            .chain(rest[..n].iter().map(String::as_str))
            .collect();
        let m = m.join("::");
        modules.contains(&m).then_some(m)
    })
}

/// Pairs of modules of the crate at `src` that use each other.
fn mutual_imports(src: &Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    rs_files(src, &mut files);
    let code: BTreeMap<String, String> = files
        .iter()
        .map(|f| {
            (
                module_of(src, f),
                code_of(&std::fs::read_to_string(f).unwrap()),
            )
        })
        .collect();
    let modules: BTreeSet<String> = code.keys().cloned().collect();
    let mut edges = BTreeSet::new();
    for (m, text) in &code {
        let prefix = if m.is_empty() {
            String::new()
        } else {
            format!("{m}::")
        };
        let children: BTreeSet<String> = modules
            .iter()
            .filter_map(|c| c.strip_prefix(&prefix))
            .filter(|c| !c.is_empty() && !c.contains("::"))
            .map(str::to_string)
            .collect();
        for p in paths(text, &children) {
            if let Some(t) = target(m, &p, &modules).filter(|t| t != m) {
                edges.insert((m.clone(), t));
            }
        }
    }
    edges
        .iter()
        .filter(|(a, b)| a < b && edges.contains(&(b.clone(), a.clone())))
        .cloned()
        .collect()
}

#[test]
fn no_two_files_of_a_crate_import_each_other() {
    let mut found = Vec::new();
    for m in members() {
        for (a, b) in mutual_imports(&m.join("src")) {
            found.push(format!("{}: {a} <-> {b}", m.display()));
        }
    }
    assert!(
        found.is_empty(),
        "modules that import each other:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_sees_a_circle() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path();
    std::fs::create_dir_all(src.join("a")).unwrap();
    std::fs::write(src.join("lib.rs"), "mod a;\nmod b;\n").unwrap();
    std::fs::write(src.join("a/mod.rs"), "mod c;\nuse c::X;\n").unwrap();
    std::fs::write(
        src.join("a/c.rs"),
        "// crate::b::Y\nuse super::super::b::Y;\n",
    )
    .unwrap();
    std::fs::write(src.join("b.rs"), "fn f() { crate::a::c::g() }\n").unwrap();
    assert_eq!(mutual_imports(src), [("a::c".to_string(), "b".to_string())]);
    std::fs::write(src.join("b.rs"), "fn f() {}\n").unwrap();
    assert!(mutual_imports(src).is_empty());
}

#[test]
fn only_the_asset_server_depends_on_the_cooker() {
    let mut found = Vec::new();
    for m in members() {
        let text = std::fs::read_to_string(m.join("Cargo.toml")).unwrap();
        let v: toml::Value = toml::from_str(&text).unwrap();
        let name = v["package"]["name"].as_str().unwrap().to_string();
        let tables = ["dependencies", "dev-dependencies", "build-dependencies"];
        let uses = tables.iter().any(|t| {
            v.get(t)
                .and_then(|d| d.as_table())
                .is_some_and(|d| d.contains_key("ludus-anim-cooker"))
        });
        let allowed = ["ludus-anim-server", "ludus-anim-cooker"];
        if uses && !allowed.contains(&name.as_str()) {
            found.push(name);
        }
    }
    assert!(
        found.is_empty(),
        "crates that depend on the cooker: {found:?}"
    );
}

#[test]
fn the_project_model_depends_on_nothing_after_import() {
    let text = std::fs::read_to_string(repo().join("project/Cargo.toml")).unwrap();
    let v: toml::Value = toml::from_str(&text).unwrap();
    let deps = v["dependencies"].as_table().unwrap();
    let pipeline = [
        "ludus-anim-cooker",
        "ludus-anim-compress",
        "ludus-anim-verify",
        "ludus-anim-retarget",
        "ludus-anim-runtime",
        "ludus-anim-remote-cache",
        "ludus-anim-dashboard",
        "ludus-anim-normalize",
    ];
    let found: Vec<_> = pipeline.iter().filter(|p| deps.contains_key(**p)).collect();
    assert!(found.is_empty(), "project/ depends on {found:?}");
}
