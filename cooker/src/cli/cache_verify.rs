//! `ludus-anim cache verify --remote`.

use super::output::Output;
use super::Exit;
use crate::cli::output::outln;
use clap::Args;
use ludus_anim_cache::Store;
use ludus_anim_cooker::manifest::RemoteMode;
use ludus_anim_cooker::pipeline::{CookOptions, SidecarSettings};
use ludus_anim_cooker::project::{self, ProjectArgs};
use ludus_anim_cooker::remote::RemoteArgs;
use ludus_anim_cooker::remote_verify::{sample, verify};
use ludus_anim_remote_cache::{Mode, RemoteCache};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct VerifyArgs {
    /// Verify the remote cache's entries (the only kind there is; the
    /// flag says what is checked).
    #[arg(long, required = true)]
    remote: bool,
    /// How many assets to re-cook: a number, or `all`. The sample is
    /// chosen by a hash of each asset's path, so runs check the same ones.
    #[arg(long, default_value = "8")]
    sample: String,
    /// Project manifest (default: ./ludus-anim.toml when present).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Files or directories (with a manifest: which of its assets).
    inputs: Vec<PathBuf>,
    /// Remote cache base URL (default: LUDUS_ANIM_REMOTE_CACHE, else the
    /// manifest's remote_cache).
    #[arg(long = "remote-cache", value_name = "URL")]
    url: Option<String>,
    /// Credentials: bearer-file:PATH, bearer-env:NAME, basic-file:PATH or
    /// basic-env:NAME (never printed).
    #[arg(long = "remote-cache-auth", value_name = "SPEC")]
    auth: Option<String>,
    /// Entry signing secret: file:PATH or env:NAME; only entries signed
    /// with it are compared (others count as absent, with a notice).
    #[arg(long = "remote-cache-signing", value_name = "SPEC")]
    signing: Option<String>,
}

pub fn run(a: VerifyArgs, out: &Output) -> Exit {
    let count = match a.sample.trim() {
        "all" => None,
        n => match n.parse::<usize>() {
            Ok(n) if n > 0 => Some(n),
            _ => {
                out.error(format!(
                    "--sample '{}' must be a positive number or `all`",
                    a.sample
                ));
                return Exit::Usage;
            }
        },
    };
    let args = ProjectArgs {
        inputs: a.inputs.clone(),
        manifest: a.manifest.clone(),
        out: None,
        profile: None,
        cache: None,
        remote: RemoteArgs {
            url: a.url.clone(),
            mode: Some(RemoteMode::Read),
            auth: a.auth.clone(),
            signing: a.signing.clone(),
        },
    };
    let project = match project::resolve(&args, Path::new("."), Path::new("fixtures")) {
        Ok(p) => p,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let Some(mut config) = project.remote.clone() else {
        out.error("cache verify --remote needs a remote cache: --remote-cache URL, LUDUS_ANIM_REMOTE_CACHE or the manifest's remote_cache");
        return Exit::Usage;
    };
    config.mode = Mode::Read;
    let remote = match RemoteCache::open(config) {
        Ok(r) => r,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let mut options = CookOptions::for_files(Vec::new(), project.out.clone(), &project.profile);
    options.jobs = project.jobs.clone();
    options.project_root = project.root.clone();
    options.sidecar = SidecarSettings {
        write: project.report.sidecar,
        max_mb: project.report.sidecar_max_mb,
    };
    let scratch = match tempfile::tempdir().map(|d| (Store::open(d.path()), d)) {
        Ok((Ok(store), dir)) => (store, dir),
        Ok((Err(e), _)) => {
            out.error(format!("cannot make a scratch cache: {e}"));
            return Exit::Write;
        }
        Err(e) => {
            out.error(format!("cannot make a scratch cache: {e}"));
            return Exit::Write;
        }
    };
    let jobs = sample(&options, count);
    let found = match verify(&options, &jobs, &remote, &scratch.0) {
        Ok(f) => f,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    for n in remote.take_notices() {
        out.warn(n);
    }
    for d in &found.disagreements {
        outln!(
            "disagreement: {} ({} of '{}'): {}",
            d.key.to_hex(),
            d.stage.name(),
            d.source,
            d.field
        );
    }
    outln!(
        "verified {} of {} assets against {}: {} entries compared, {} disagree, {} absent",
        found.assets,
        options.jobs.len(),
        remote.url(),
        found.compared,
        found.disagreements.len(),
        found.absent
    );
    match found.disagreements.is_empty() {
        true => Exit::Ok,
        false => Exit::AssetsFailed,
    }
}
