//! Project resolution: what a cook is asked to do, from explicit inputs,
//! the project manifest (`ludus-anim.toml`), or the bundled demo, with the
//! precedence flags > manifest > built-in defaults (flags > environment >
//! manifest for the remote cache). The CLI and the asset server both
//! resolve a project here, so they always agree.

use crate::manifest::{self, AssetJob, Manifest, ManifestError};
use crate::remote::{self, RemoteArgs, RemoteSettingError};
use ludus_anim_model::SourceFormat;
use ludus_anim_remote_cache::RemoteConfig;
use std::path::{Path, PathBuf};

/// What the person asked for (command-line flags; `None` where unset).
#[derive(Clone, Debug, Default)]
pub struct ProjectArgs {
    /// Files or directories to cook; directories cook every supported file
    /// below them.
    pub inputs: Vec<PathBuf>,
    pub manifest: Option<PathBuf>,
    pub out: Option<PathBuf>,
    pub profile: Option<String>,
    pub cache: Option<PathBuf>,
    /// `--remote-cache`, `--remote-cache-mode`, `--remote-cache-auth`.
    pub remote: RemoteArgs,
}

/// Where the jobs came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// Files named on the command line.
    Inputs,
    /// A project manifest.
    Manifest,
    /// No inputs and no manifest: the bundled demo fixtures.
    Bundled,
}

/// A resolved project.
#[derive(Clone, Debug)]
pub struct Project {
    pub origin: Origin,
    /// The manifest read, if any (its directory is the project root).
    pub manifest_path: Option<PathBuf>,
    pub root: Option<PathBuf>,
    pub jobs: Vec<AssetJob>,
    pub out: PathBuf,
    pub profile: String,
    pub cache_dir: PathBuf,
    /// The manifest's `[report]` table (defaults without a manifest).
    pub report: ludus_anim_report::rules::ReportConfig,
    /// The build farm's remote cache, if one is configured.
    pub remote: Option<RemoteConfig>,
}

#[derive(Debug, thiserror::Error)]
pub enum ProjectError {
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("input '{0}' does not exist")]
    MissingInput(String),
    #[error("input directory '{0}' holds no .gltf, .glb, .fbx, .bvh or .sjson file")]
    EmptyDirectory(String),
    #[error("no inputs, no {name} here, and no bundled fixtures in {dir}")]
    Nothing { name: &'static str, dir: String },
    #[error(transparent)]
    Remote(#[from] RemoteSettingError),
    #[error("input '{input}' is not an asset of {manifest} (no [[asset]] sources pattern matches it): add it there, or cook it from a directory without a project manifest")]
    NotInManifest { input: String, manifest: String },
}

/// Resolve `args` in the working directory `cwd`; `fixtures` is the
/// bundled demo content used when there is nothing else.
pub fn resolve(args: &ProjectArgs, cwd: &Path, fixtures: &Path) -> Result<Project, ProjectError> {
    let manifest_path = args.manifest.clone().or_else(|| {
        let p = cwd.join(manifest::FILE_NAME);
        p.is_file().then_some(p)
    });
    let (origin, jobs, manifest) = if let Some(mp) = &manifest_path {
        // With a manifest, explicit inputs select its assets: they cook
        // with its settings and record paths relative to its root, wherever
        // the command runs.
        let m = Manifest::load(mp)?;
        let root = project_root(mp);
        let all = m.jobs(&root)?;
        match args.inputs.is_empty() {
            true => (Origin::Manifest, all, Some((root, m))),
            false => {
                let chosen = select_inputs(&all, &args.inputs, cwd, mp)?;
                (Origin::Inputs, chosen, Some((root, m)))
            }
        }
    } else if !args.inputs.is_empty() {
        (Origin::Inputs, input_jobs(&args.inputs, cwd)?, None)
    } else {
        let found = bundled_inputs(fixtures);
        if found.is_empty() {
            return Err(ProjectError::Nothing {
                name: manifest::FILE_NAME,
                dir: fixtures.display().to_string(),
            });
        }
        (Origin::Bundled, plain_jobs(found), None)
    };
    let settings = manifest.as_ref().map(|(_, m)| &m.project);
    let root = manifest.as_ref().map(|(r, _)| r.clone());
    let remote = remote::resolve(
        &args.remote,
        &|name| std::env::var(name).ok(),
        settings.and_then(|s| s.remote_cache.as_ref()),
        root.as_deref().unwrap_or(cwd),
    )?;
    let rel = |p: &Option<String>| p.as_ref().map(|p| root.clone().unwrap_or_default().join(p));
    Ok(Project {
        origin,
        manifest_path: manifest.as_ref().and(manifest_path),
        jobs,
        out: args
            .out
            .clone()
            .or_else(|| settings.and_then(|s| rel(&s.output)))
            .unwrap_or_else(|| PathBuf::from("out")),
        profile: args
            .profile
            .clone()
            .or_else(|| settings.and_then(|s| s.profile.clone()))
            .unwrap_or_else(|| "standard".to_string()),
        cache_dir: args
            .cache
            .clone()
            .or_else(|| settings.and_then(|s| rel(&s.cache)))
            .unwrap_or_else(default_cache_dir),
        report: manifest
            .as_ref()
            .map(|(_, m)| m.report.clone())
            .unwrap_or_default(),
        root,
        remote,
    })
}

/// The manifest's directory (`.` for a bare file name).
fn project_root(manifest: &Path) -> PathBuf {
    manifest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf()
}

/// The manifest's jobs for `inputs` (files, or directories standing for
/// the files below them), in input order; an input the manifest does not
/// list is an error naming both.
fn select_inputs(
    all: &[AssetJob],
    inputs: &[PathBuf],
    cwd: &Path,
    manifest: &Path,
) -> Result<Vec<AssetJob>, ProjectError> {
    let canon = |p: &Path| std::fs::canonicalize(cwd.join(p)).ok();
    let listed: Vec<(PathBuf, &AssetJob)> = all
        .iter()
        .filter_map(|j| Some((canon(&j.path)?, j)))
        .collect();
    let mut chosen: Vec<AssetJob> = Vec::new();
    for input in input_jobs(inputs, cwd)? {
        let found = canon(&input.path).and_then(|c| listed.iter().find(|(p, _)| *p == c));
        let Some((_, job)) = found else {
            return Err(ProjectError::NotInManifest {
                input: input.path.display().to_string(),
                manifest: manifest.display().to_string(),
            });
        };
        if !chosen.iter().any(|j| j.path == job.path) {
            chosen.push((*job).clone());
        }
    }
    Ok(chosen)
}

fn plain_jobs(paths: Vec<PathBuf>) -> Vec<AssetJob> {
    paths
        .into_iter()
        .map(|path| AssetJob {
            path,
            settings: Default::default(),
        })
        .collect()
}

/// Explicit inputs: files as given, directories expanded (sorted); a path
/// that does not exist is an error before anything is written.
fn input_jobs(inputs: &[PathBuf], cwd: &Path) -> Result<Vec<AssetJob>, ProjectError> {
    let mut paths = Vec::new();
    for p in inputs {
        let at = cwd.join(p);
        if at.is_dir() {
            let found = supported_files(p, cwd);
            if found.is_empty() {
                return Err(ProjectError::EmptyDirectory(p.display().to_string()));
            }
            paths.extend(found);
        } else if at.exists() {
            paths.push(p.clone());
        } else {
            return Err(ProjectError::MissingInput(p.display().to_string()));
        }
    }
    Ok(plain_jobs(paths))
}

/// Every file below `dir` a format reads, sorted (paths keep `dir`'s
/// spelling).
pub fn supported_files(dir: &Path, cwd: &Path) -> Vec<PathBuf> {
    files_below(dir, cwd, &|p| SourceFormat::of_path(p).is_some())
}

/// Every file below `dir` that `keep` accepts, sorted (paths keep `dir`'s
/// spelling). Links to directories are not followed, so a link cycle
/// cannot make the walk endless.
pub fn files_below(dir: &Path, cwd: &Path, keep: &dyn Fn(&Path) -> bool) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(cwd.join(dir)) else {
        return out;
    };
    for e in rd.flatten() {
        let rel = dir.join(e.file_name());
        if e.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(files_below(&rel, cwd, keep));
        } else if keep(&rel) {
            out.push(rel);
        }
    }
    out.sort();
    out
}

/// The content `ludus-anim cook` cooks when given nothing else: every glTF
/// file in `fixtures/`.
pub fn bundled_inputs(fixtures: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| {
                    matches!(
                        SourceFormat::of_path(p),
                        Some(SourceFormat::Glb | SourceFormat::Gltf)
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// The default cache directory: `LUDUS_ANIM_CACHE`, else
/// `$XDG_CACHE_HOME/ludus-anim`, else `~/.cache/ludus-anim`.
pub fn default_cache_dir() -> PathBuf {
    if let Some(p) = std::env::var_os("LUDUS_ANIM_CACHE") {
        return PathBuf::from(p);
    }
    if let Some(p) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(p).join("ludus-anim");
    }
    match std::env::var_os("HOME") {
        Some(h) => PathBuf::from(h).join(".cache").join("ludus-anim"),
        None => std::env::temp_dir().join("ludus-anim-cache"),
    }
}
