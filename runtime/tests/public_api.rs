//! The runtime's public API is the list in `runtime/public-api.txt`, and
//! it holds at most [`BUDGET`] items: functions and methods, types,
//! constants, public fields and re-exports of other crates' items, as
//! rustdoc's JSON lists them (enum variants are not counted). Growing it
//! is a reviewed change of that file and of the budget, which only goes
//! down: #41's target is 80, met at 77 (the decode API, `Player`,
//! `Request`, `DecodeError` and `Clip::sample`, is 11 of them; the rest
//! are the package, clip, skeleton, event and curve views); 78 with
//! `Package::sync_groups` (#44: a game needs the validated group to sync
//! its players, and no existing view reaches the SYNC section); 79 with
//! `Package::load_for` (#45: clips cooked against a shared skeleton are
//! refused, typed, when their skeleton identity is not that one); 80 with
//! `Package::bindings` (#45: the SKIN section's skin bindings, one view
//! whose type is `ludus-anim-format`'s, so the budget's last item reaches
//! every later renderer-facing section too). Values of
//! `ludus-anim-format` that signatures name (`LoopMode`, `Marker`,
//! `CookInfo`, `RigidTransform`, ...) are that crate's API and are not
//! counted here; only a re-export of one would be.
//!
//! Two checks, so that neither can pass silently:
//! - stable: every `pub` declaration in `runtime/src` (the crate denies
//!   `unreachable_pub`, so each is public) matches an entry of the list by
//!   kind and name, and every entry matches one;
//! - with a nightly toolchain: the list is exactly what rustdoc's JSON
//!   output reaches from the crate root. `LUDUS_BLESS_PUBLIC_API=1`
//!   rewrites the list from it.

use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The most public items the runtime may have (#41's target: 80).
const BUDGET: usize = 80;

fn crate_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The checked-in list: one `kind path` a line.
fn listed() -> Vec<(String, String)> {
    let text = std::fs::read_to_string(crate_dir().join("public-api.txt")).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.split_once(' '))
        .map(|(k, p)| (k.to_string(), p.to_string()))
        .collect()
}

#[test]
fn the_list_fits_the_budget() {
    let items = listed();
    assert!(
        !items.is_empty(),
        "runtime/public-api.txt is missing or empty"
    );
    assert!(
        items.len() <= BUDGET,
        "{} public items, the budget is {BUDGET}",
        items.len()
    );
}

/// (kind, name) counts of a list of `kind path` entries.
fn by_name(items: &[(String, String)]) -> BTreeMap<(String, String), usize> {
    let mut out = BTreeMap::new();
    for (kind, path) in items {
        let name = path.rsplit("::").next().unwrap_or(path).to_string();
        *out.entry((kind.clone(), name)).or_insert(0) += 1;
    }
    out
}

#[test]
fn every_pub_declaration_is_listed() {
    let mut found = Vec::new();
    for file in rust_files(&crate_dir().join("src")) {
        let text = std::fs::read_to_string(&file).unwrap_or_default();
        declarations(&text, &mut found);
    }
    let want = by_name(&listed());
    let have = by_name(&found);
    let missing: Vec<_> = have
        .iter()
        .filter(|(k, n)| want.get(k) != Some(n))
        .collect();
    let stale: Vec<_> = want
        .iter()
        .filter(|(k, n)| have.get(k) != Some(n))
        .collect();
    assert!(
        missing.is_empty() && stale.is_empty(),
        "public-api.txt and the source disagree:\n in the source: {missing:?}\n in the list: {stale:?}"
    );
}

/// Every `.rs` file under `dir` but the crate's test modules.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let path = entry.path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            if path.is_dir() {
                stack.push(path);
            } else if name.ends_with(".rs") && !name.contains("tests") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The `pub` declarations of one file, as (kind, name), in the kinds of
/// the list: `function`, `type`, `constant`, `field`, `use` (an item of
/// another crate re-exported); modules are not items. Stops at the file's
/// inline test module.
fn declarations(text: &str, out: &mut Vec<(String, String)>) {
    let mut lines = text.lines().peekable();
    while let Some(line) = lines.next() {
        let l = line.trim_start();
        let inline_mod = |n: &&str| n.contains("mod ") && n.trim_end().ends_with('{');
        if l.starts_with("#[cfg(test)]") && lines.peek().is_some_and(inline_mod) {
            return;
        }
        let Some(rest) = l.strip_prefix("pub ") else {
            continue;
        };
        let words: Vec<&str> = rest
            .split(|c: char| !(c.is_alphanumeric() || c == '_'))
            .filter(|w| !w.is_empty())
            .collect();
        let kind = match words.first().copied() {
            Some("fn") => "function",
            Some("const") if words.get(1) == Some(&"fn") => "function",
            Some("struct" | "enum" | "trait" | "type") => "type",
            Some("const" | "static") => "constant",
            Some("mod") => continue,
            Some("use") => {
                external_uses(rest, out);
                continue;
            }
            Some(_) if rest.contains(':') => {
                if let Some(name) = words.first() {
                    out.push(("field".into(), name.to_string()));
                }
                continue;
            }
            _ => continue,
        };
        let skip = if words.get(1) == Some(&"fn") { 2 } else { 1 };
        if let Some(name) = words.get(skip) {
            out.push((kind.into(), name.to_string()));
        }
    }
}

/// Names re-exported from other crates by a `use` line.
fn external_uses(rest: &str, out: &mut Vec<(String, String)>) {
    let path = rest.trim_start_matches("use ").trim_end_matches(';');
    if !(path.starts_with("ludus_anim_format::") || path.starts_with("glam::")) {
        return;
    }
    let names = match path.split_once('{') {
        Some((_, list)) => list.trim_end_matches('}').split(',').collect::<Vec<_>>(),
        None => vec![path.rsplit("::").next().unwrap_or("")],
    };
    for n in names.iter().map(|n| n.trim()).filter(|n| !n.is_empty()) {
        out.push(("use".into(), n.to_string()));
    }
}

#[test]
fn the_list_is_what_rustdoc_reaches() {
    let Some(json) = rustdoc_json() else {
        eprintln!("skipped: no nightly toolchain for rustdoc's JSON (the stable checks ran)");
        return;
    };
    let mut items: Vec<(String, String)> = Walk::new(&json).run().into_iter().collect();
    items.sort_by(|a, b| a.1.cmp(&b.1).then(a.0.cmp(&b.0)));
    if std::env::var_os("LUDUS_BLESS_PUBLIC_API").is_some() {
        let mut text =
            String::from("# The runtime's public API (runtime/tests/public_api.rs): kind path.\n");
        for (k, p) in &items {
            text.push_str(&format!("{k} {p}\n"));
        }
        std::fs::write(crate_dir().join("public-api.txt"), text).expect("writes the list");
    }
    let want: BTreeSet<_> = listed().into_iter().collect();
    let have: BTreeSet<_> = items.into_iter().collect();
    let added: Vec<_> = have.difference(&want).collect();
    let removed: Vec<_> = want.difference(&have).collect();
    assert!(
        added.is_empty() && removed.is_empty(),
        "rustdoc's public API differs from public-api.txt (LUDUS_BLESS_PUBLIC_API=1 rewrites it):\n added: {added:?}\n removed: {removed:?}"
    );
}

/// rustdoc's JSON of this crate, from a nightly toolchain; None without one.
fn rustdoc_json() -> Option<Value> {
    let target = crate_dir().join("../target/public-api");
    let status = Command::new("cargo")
        .args([
            "+nightly",
            "rustdoc",
            "-q",
            "-p",
            "ludus-anim-runtime",
            "--lib",
        ])
        .args(["--target-dir", target.to_str()?])
        .args(["--", "-Z", "unstable-options", "--output-format", "json"])
        .current_dir(crate_dir())
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let text = std::fs::read_to_string(target.join("doc/ludus_anim_runtime.json")).ok()?;
    serde_json::from_str(&text).ok()
}

/// The items reachable from the crate root, as (kind, path).
struct Walk<'j> {
    index: &'j serde_json::Map<String, Value>,
    root: String,
    seen: BTreeSet<String>,
    out: BTreeSet<(String, String)>,
}

impl<'j> Walk<'j> {
    fn new(json: &'j Value) -> Self {
        static EMPTY: std::sync::OnceLock<serde_json::Map<String, Value>> =
            std::sync::OnceLock::new();
        Walk {
            index: json["index"]
                .as_object()
                .unwrap_or_else(|| EMPTY.get_or_init(Default::default)),
            root: id(&json["root"]),
            seen: BTreeSet::new(),
            out: BTreeSet::new(),
        }
    }

    fn run(mut self) -> BTreeSet<(String, String)> {
        let root = self.root.clone();
        self.item(&root, &[]);
        self.out
    }

    fn item(&mut self, at: &str, path: &[String]) {
        let Some(item) = self.index.get(at) else {
            return;
        };
        let Some((kind, inner)) = item["inner"].as_object().and_then(|o| o.iter().next()) else {
            return;
        };
        if item["visibility"] != "public" {
            return;
        }
        if kind == "use" {
            return self.reexport(inner, path);
        }
        let mut path = path.to_vec();
        if let Some(name) = item["name"].as_str() {
            path.push(name.to_string());
        }
        if !self.seen.insert(at.to_string()) {
            return;
        }
        let children = |key: &str| ids(&inner[key]);
        match kind.as_str() {
            "module" => {
                for c in children("items") {
                    self.item(&c, &path);
                }
            }
            "struct" | "enum" | "trait" | "type_alias" | "union" => {
                self.record("type", &path);
                for f in ids(&inner["kind"]["plain"]["fields"]) {
                    self.item(&f, &path);
                }
                for i in children("impls") {
                    self.inherent(&i, &path);
                }
            }
            "struct_field" => self.record("field", &path),
            "function" => self.record("function", &path),
            "constant" | "assoc_const" | "static" => self.record("constant", &path),
            _ => {}
        }
    }

    fn reexport(&mut self, inner: &Value, path: &[String]) {
        let name = inner["name"].as_str().unwrap_or("").to_string();
        let target = id(&inner["id"]);
        let mut at = path.to_vec();
        match self.index.get(&target) {
            Some(t) if inner["is_glob"] != true => {
                if t["inner"].get("module").is_some() {
                    at.push(name);
                    let target_at = at.clone();
                    self.item(&target, &target_at[..target_at.len() - 1]);
                } else {
                    self.item(&target, path);
                }
            }
            _ => {
                at.push(name);
                self.record("use", &at);
            }
        }
    }

    /// The methods and constants of an inherent impl (not trait impls).
    fn inherent(&mut self, at: &str, path: &[String]) {
        let Some(inner) = self.index.get(at).map(|i| &i["inner"]["impl"]) else {
            return;
        };
        if !inner["trait"].is_null()
            || inner["is_synthetic"] == true
            || !inner["blanket_impl"].is_null()
        {
            return;
        }
        for c in ids(&inner["items"]) {
            self.item(&c, path);
        }
    }

    fn record(&mut self, kind: &str, path: &[String]) {
        self.out.insert((kind.to_string(), path.join("::")));
    }
}

fn id(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn ids(v: &Value) -> Vec<String> {
    v.as_array()
        .map_or(Vec::new(), |a| a.iter().map(id).collect())
}

#[test]
fn the_parser_reads_declarations() {
    let mut out = Vec::new();
    declarations(
        "pub struct A {\n    pub x: f32,\n    y: u8,\n}\nimpl A {\n    pub const fn new() -> A {}\n    pub(crate) fn hidden() {}\n}\npub use ludus_anim_format::math::{Quat, Vec3};\npub use crate::a::B;\n#[cfg(test)]\nmod tests {\n    pub fn t() {}\n}\n",
        &mut out,
    );
    let names: HashMap<_, _> = out.iter().map(|(k, n)| (n.as_str(), k.as_str())).collect();
    assert_eq!(names.len(), 5, "{out:?}");
    assert_eq!(names["A"], "type");
    assert_eq!(names["x"], "field");
    assert_eq!(names["new"], "function");
    assert_eq!(names["Quat"], "use");
    assert_eq!(names["Vec3"], "use");
}
