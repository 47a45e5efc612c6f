//! `ludus-anim query`: each asset's declared inputs and outputs, so a
//! build system can make one action per asset without knowing the
//! manifest format (`bazel/` reads it). The inputs are what
//! `ludus-anim cook-asset` may read (`crate::hermetic`): the source, a
//! `.gltf`'s external buffers (images are never read by the importer, so
//! they are not inputs), the profile files its clips use, the retarget
//! profile and its target skeleton (with the target's buffers), and the
//! project manifest. Found without importing anything: the glTF JSON is
//! parsed for its buffer URIs, the retarget profile for its target.
//!
//! Paths are relative to the project root (the manifest's directory), in
//! the recorded form (`/`-separated, normalized), as reports record them.

use crate::hermetic::{MANIFEST_FRAGMENT, PACKAGE_FILE, REPORT_FRAGMENT, SIDECAR_FRAGMENT};
use crate::manifest::AssetJob;
use crate::pipeline::CookOptions;
use ludus_anim_model::limits::CompanionRoot;
use serde::Serialize;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The whole answer.
#[derive(Debug, Serialize)]
pub struct Query {
    /// The project manifest, relative to the root (`None`: none).
    pub manifest: Option<String>,
    /// The profile for assets and clips that name none.
    pub default_profile: String,
    /// In job order (the order an unsharded cook reports them in).
    pub assets: Vec<AssetQuery>,
}

/// One asset's action.
#[derive(Debug, Serialize)]
pub struct AssetQuery {
    /// A name unique in the project made of `[A-Za-z0-9_-]` (a build
    /// target's or a directory's).
    pub name: String,
    /// The source as reports record it.
    pub source: String,
    pub inputs: DeclaredInputs,
    /// Every input once, sorted: what the action declares.
    pub all_inputs: Vec<String>,
    /// File names inside the action's own output directory.
    pub outputs: Outputs,
}

#[derive(Debug, Serialize)]
pub struct DeclaredInputs {
    pub source: String,
    /// Files the source's importer reads besides it (a `.gltf`'s buffers).
    pub companions: Vec<String>,
    /// Profile files (bundled profiles are none).
    pub profiles: Vec<String>,
    pub retarget_profile: Option<String>,
    pub retarget_target: Option<String>,
    pub retarget_target_companions: Vec<String>,
    pub manifest: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Outputs {
    pub package: &'static str,
    pub manifest: &'static str,
    pub report: &'static str,
    /// `None` when the sidecar is off.
    pub sidecar: Option<&'static str>,
}

/// The declared inputs and outputs of every job of `options` (the
/// manifest at `manifest`, relative to the working directory, if any).
pub fn query(options: &CookOptions, manifest: Option<&Path>) -> Query {
    let record = |p: &Path| options.recorded_path(p);
    let mut names = BTreeSet::new();
    let assets = options
        .jobs
        .iter()
        .map(|job| {
            let mut a = asset(job, options, manifest.map(record));
            a.name = unique(&mut names, &a.source);
            a
        })
        .collect();
    Query {
        manifest: manifest.map(record),
        default_profile: options.default_profile.clone(),
        assets,
    }
}

/// `source` as a name (`gltf/walk.gltf` -> `gltf_walk_gltf`), made unique
/// with a numeric suffix.
fn unique(taken: &mut BTreeSet<String>, source: &str) -> String {
    let base: String = source
        .trim_start_matches("../")
        .chars()
        .map(|c| match c {
            'A'..='Z' | 'a'..='z' | '0'..='9' | '_' | '-' => c,
            _ => '_',
        })
        .collect();
    let mut name = base.clone();
    let mut n = 2;
    while !taken.insert(name.clone()) {
        name = format!("{base}_{n}");
        n += 1;
    }
    name
}

fn asset(job: &AssetJob, options: &CookOptions, manifest: Option<String>) -> AssetQuery {
    let root = options.project_root.clone().unwrap_or_default();
    let source = options.recorded_path(&job.path);
    let limit = options.limits_of(job).max_file_bytes;
    let whole_project = options.limits_of(job).companion_root == CompanionRoot::Project;
    let companions = gltf_buffers(&job.path, &source, whole_project, limit);
    let profiles = profile_files(job, options);
    let retarget = match &job.settings.retarget {
        Some(p) => Some(root.join(p)),
        None => options.retarget.clone(),
    };
    let (mut retarget_target, mut target_companions) = (None, Vec::new());
    if let Some(t) = retarget.as_deref().and_then(|p| target_of(p, limit)) {
        let recorded = options.recorded_path(&t);
        target_companions = gltf_buffers(&root.join(&recorded), &recorded, whole_project, limit);
        retarget_target = Some(recorded);
    }
    let inputs = DeclaredInputs {
        source: source.clone(),
        companions,
        profiles,
        retarget_profile: retarget.as_deref().map(|p| options.recorded_path(p)),
        retarget_target,
        retarget_target_companions: target_companions,
        manifest,
    };
    let all: BTreeSet<String> = std::iter::once(inputs.source.clone())
        .chain(inputs.companions.iter().cloned())
        .chain(inputs.profiles.iter().cloned())
        .chain(inputs.retarget_profile.iter().cloned())
        .chain(inputs.retarget_target.iter().cloned())
        .chain(inputs.retarget_target_companions.iter().cloned())
        .chain(inputs.manifest.iter().cloned())
        .collect();
    AssetQuery {
        name: String::new(),
        source,
        inputs,
        all_inputs: all.into_iter().collect(),
        outputs: Outputs {
            package: PACKAGE_FILE,
            manifest: MANIFEST_FRAGMENT,
            report: REPORT_FRAGMENT,
            sidecar: options.sidecar.write.then_some(SIDECAR_FRAGMENT),
        },
    }
}

/// The profile files an asset's cook reads: the default, the asset's own
/// and every clip's, where they are files rather than bundled names, at
/// the path the cook reads them from (a relative path under the project
/// root there, else as given).
fn profile_files(job: &AssetJob, options: &CookOptions) -> Vec<String> {
    let own = job
        .settings
        .profile
        .as_deref()
        .unwrap_or(&options.default_profile);
    let clips = job
        .settings
        .clips
        .values()
        .filter_map(|c| c.profile.as_deref());
    // The default profile is loaded by every cook, used or not.
    let default = options.default_profile.as_str();
    let mut out = BTreeSet::new();
    for name in [default, own].into_iter().chain(clips) {
        if crate::profile::BUNDLED.iter().any(|(b, _)| *b == name) {
            continue;
        }
        let at = match &options.project_root {
            Some(root) if Path::new(name).is_relative() && root.join(name).is_file() => {
                root.join(name)
            }
            _ => PathBuf::from(name),
        };
        out.insert(options.recorded_path(&at));
    }
    out.into_iter().collect()
}

/// A retarget profile's target skeleton file (relative to the profile's
/// directory), or `None` when the profile cannot be read (the cook then
/// fails on it, naming it).
fn target_of(profile: &Path, limit: u64) -> Option<PathBuf> {
    let bytes = ludus_anim_importers::companion::read_regular_file(profile, limit).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let p = ludus_anim_retarget::Profile::parse(text, &profile.display().to_string()).ok()?;
    let dir = profile.parent().unwrap_or(Path::new(""));
    Some(crate::paths::normalize(&dir.join(&p.target.skeleton)))
}

/// A `.gltf`'s external buffer files (recorded paths), as the importer
/// resolves them: relative to the file, percent-decoded, confined to its
/// directory (the project with `companion_root = "project"`); refused
/// URIs and data URIs are not files. `path` is where the file is read,
/// `recorded` its recorded path.
fn gltf_buffers(path: &Path, recorded: &str, whole_project: bool, limit: u64) -> Vec<String> {
    let is_gltf = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("gltf"));
    if !is_gltf {
        return Vec::new();
    }
    let Ok(bytes) = ludus_anim_importers::companion::read_regular_file(path, limit) else {
        return Vec::new();
    };
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(&bytes) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for uri in doc["buffers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|b| b["uri"].as_str())
    {
        if uri.starts_with("data:") {
            continue;
        }
        let decoded = percent_decode(uri);
        let file = Path::new(recorded);
        let confine = match whole_project {
            true => Path::new(""),
            false => file.parent().unwrap_or(Path::new("")),
        };
        let resolved =
            ludus_anim_importers::companion::resolve_companion(file, &decoded, Some(confine));
        if let Ok(p) = resolved {
            let p = crate::paths::slashed(&p);
            if !out.contains(&p) {
                out.push(p);
            }
        }
    }
    out
}

/// glTF URIs are percent-encoded (`my%20file.bin`); a sequence that is
/// not one is kept as written, as the importer keeps it.
fn percent_decode(uri: &str) -> String {
    let b = uri.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = b
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok())
            .filter(|h| h.chars().all(|c| c.is_ascii_hexdigit()))
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b[i], hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            (c, _) => {
                out.push(c);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}
