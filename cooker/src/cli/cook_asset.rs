//! `ludus-anim cook-asset`: one asset as a hermetic build action
//! (`ludus_anim_cooker::hermetic`), and `ludus-anim query`, which lists
//! what each such action reads and writes.

use super::output::Output;
use super::Exit;
use crate::cli::cook::CodecArg;
use crate::cli::output::outln;
use clap::Args;
use ludus_anim_cache::Store;
use ludus_anim_cooker::hermetic::{self, AssetAction, HermeticError, PACKAGE_FILE};
use ludus_anim_cooker::manifest::{Manifest, Units};
use ludus_anim_cooker::pipeline::{CookError, CookOptions, SidecarSettings};
use ludus_anim_cooker::profile::CodecChoice;
use ludus_anim_cooker::project::{self, ProjectArgs};
use ludus_anim_cooker::report::{AssetStatus, Severity};
use ludus_anim_cooker::stage_cache::StageCache;
use ludus_anim_importers::ImportOptions;
use std::path::{Path, PathBuf};

/// Settings shared by `cook-asset` and `query` (as `cook` has them).
#[derive(Args)]
pub struct AssetSettings {
    /// Project manifest (its directory is the project root).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Default quality profile: standard, hero, crowd, or a .toml path.
    #[arg(long)]
    profile: Option<String>,
    /// Source length unit, overriding what the file declares.
    #[arg(long, value_enum)]
    units: Option<Units>,
    /// Codec, overriding the profiles' (reference = uncompressed).
    #[arg(long, value_enum)]
    codec: Option<CodecArg>,
    /// Keep leaf joints that neither deform nor animate.
    #[arg(long)]
    keep_unused_leaves: bool,
    /// Retarget profile for assets whose manifest entry names none.
    #[arg(long)]
    retarget: Option<PathBuf>,
    /// A resource limit over the manifest's: NAME=VALUE, repeatable.
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    limits: Vec<String>,
    /// Write no sidecar fragment (as `cook --no-sidecar`).
    #[arg(long)]
    no_sidecar: bool,
}

#[derive(Args)]
pub struct CookAssetArgs {
    /// The asset's source file.
    source: PathBuf,
    /// The action's output directory: asset.ludanim, asset.manifest.json,
    /// asset.report.json and asset.sidecar.json, nothing else.
    #[arg(short, long)]
    out: PathBuf,
    /// A file the action may read (repeatable); the source and the
    /// manifest are always allowed. Anything else is refused.
    #[arg(long = "input", value_name = "FILE")]
    inputs: Vec<PathBuf>,
    /// A file listing more allowed inputs, one path a line.
    #[arg(long, value_name = "FILE")]
    inputs_from: Option<PathBuf>,
    /// A stage cache directory to use (default: none; the build system
    /// caches the action).
    #[arg(long)]
    cache: Option<PathBuf>,
    #[command(flatten)]
    settings: AssetSettings,
    /// Print the JSON event stream instead of a summary line.
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
pub struct QueryArgs {
    /// Files or directories selecting assets (default: every asset).
    inputs: Vec<PathBuf>,
    #[command(flatten)]
    settings: AssetSettings,
}

/// Cook options as `cook` would build them from the same flags and the
/// manifest's `[project]` and `[report]` tables.
fn options(s: &AssetSettings, manifest: Option<&Manifest>) -> Result<CookOptions, String> {
    let project = manifest.map(|m| &m.project);
    let mut o = CookOptions::for_files(
        Vec::new(),
        PathBuf::new(),
        &s.profile
            .clone()
            .or_else(|| project.and_then(|p| p.profile.clone()))
            .unwrap_or_else(|| "standard".to_string()),
    );
    o.units_override_m = s.units.map(Units::meters);
    o.import = ImportOptions {
        keep_unused_leaves: s.keep_unused_leaves,
        custom_curves: Vec::new(),
    };
    o.threads = 1;
    o.retarget = s.retarget.clone();
    o.limits = super::limits::parse_limits(&s.limits)?;
    o.codec_override = s.codec.map(|c| match c {
        CodecArg::Vbr => CodecChoice::Vbr,
        CodecArg::Reference => CodecChoice::Reference,
    });
    let report = manifest.map(|m| m.report.clone()).unwrap_or_default();
    o.sidecar = SidecarSettings {
        write: report.sidecar && !s.no_sidecar,
        max_mb: report.sidecar_max_mb,
    };
    Ok(o)
}

fn load_manifest(path: Option<&Path>) -> Result<Option<Manifest>, String> {
    path.map(|p| Manifest::load(p).map_err(|e| e.to_string()))
        .transpose()
}

fn declared(a: &CookAssetArgs) -> Result<Vec<PathBuf>, String> {
    let mut files = a.inputs.clone();
    files.push(a.source.clone());
    files.extend(a.settings.manifest.clone());
    if let Some(list) = &a.inputs_from {
        let text = std::fs::read_to_string(list)
            .map_err(|e| format!("--inputs-from {}: {e}", list.display()))?;
        files.extend(
            text.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .map(PathBuf::from),
        );
    }
    Ok(files)
}

pub fn cook_asset(a: CookAssetArgs, out: &Output) -> Exit {
    let prepared = load_manifest(a.settings.manifest.as_deref()).and_then(|m| {
        let options = options(&a.settings, m.as_ref())?;
        Ok((options, declared(&a)?))
    });
    let (options, inputs) = match prepared {
        Ok(x) => x,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let cache = match &a.cache {
        Some(dir) => match Store::open(dir) {
            Ok(s) => StageCache::local(Some(s)),
            Err(e) => {
                out.warn(format!("cache unavailable, cooking without it: {e}"));
                StageCache::local(None)
            }
        },
        None => StageCache::local(None),
    };
    let action = AssetAction {
        manifest: a.settings.manifest.clone(),
        source: a.source.clone(),
        inputs,
        out: a.out.clone(),
        options,
    };
    let observer: Box<dyn ludus_anim_cooker::events::Observer> = match a.json {
        true => Box::new(ludus_anim_cooker::progress::JsonEvents::default()),
        false => Box::new(ludus_anim_cooker::events::Silent),
    };
    let report = match hermetic::cook_asset(action, &cache, observer.as_ref()) {
        Ok(r) => r,
        Err(e @ HermeticError::Cook(CookError::Profile(_))) => {
            out.error(format!("cook-asset: {e}"));
            return Exit::Usage;
        }
        Err(e @ (HermeticError::OutDir { .. } | HermeticError::Cook(_))) => {
            out.error(format!("cook-asset: {e}"));
            return Exit::Write;
        }
        Err(e) => {
            out.error(format!("cook-asset: {e}"));
            return Exit::Usage;
        }
    };
    drop(observer);
    let mut failed = false;
    for asset in &report.assets {
        for d in &asset.diagnostics {
            if !out.quiet || d.severity == Severity::Error {
                eprintln!("{}", out.diagnostic(d));
            }
        }
        failed |= asset.status == AssetStatus::Failed;
        if !a.json && !out.quiet && asset.status == AssetStatus::Ok {
            outln!(
                "cooked {} -> {} ({})",
                asset.source,
                a.out.join(PACKAGE_FILE).display(),
                asset.package.as_deref().unwrap_or("-")
            );
        }
    }
    match failed {
        true => Exit::AssetsFailed,
        false => Exit::Ok,
    }
}

pub fn query(a: QueryArgs, out: &Output) -> Exit {
    let args = ProjectArgs {
        inputs: a.inputs.clone(),
        manifest: a.settings.manifest.clone(),
        ..Default::default()
    };
    let fixtures = match Path::new("fixtures").is_dir() {
        true => PathBuf::from("fixtures"),
        false => Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures"),
    };
    let project = match project::resolve(&args, Path::new("."), &fixtures) {
        Ok(p) => p,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let manifest = match load_manifest(project.manifest_path.as_deref()) {
        Ok(m) => m,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let mut options = match options(&a.settings, manifest.as_ref()) {
        Ok(o) => o,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    options.jobs = project.jobs.clone();
    options.project_root = project.root.clone();
    let q = ludus_anim_cooker::asset_query::query(&options, project.manifest_path.as_deref());
    match serde_json::to_string_pretty(&q) {
        Ok(s) => {
            outln!("{s}");
            Exit::Ok
        }
        Err(e) => {
            out.error(format!("query: {e}"));
            Exit::Write
        }
    }
}
