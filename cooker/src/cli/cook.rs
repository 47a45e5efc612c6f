//! `ludus-anim cook`.

use super::output::Output;
use super::Exit;
use crate::cli::output::outln;
use clap::{Args, ValueEnum};
use ludus_anim_cache::Store;
use ludus_anim_cooker::events::Observer;
use ludus_anim_cooker::manifest::RemoteMode;
use ludus_anim_cooker::manifest::Units;
use ludus_anim_cooker::pipeline::uptodate::{up_to_date, UpToDate};
use ludus_anim_cooker::pipeline::{cook, CookError, CookOptions, SidecarSettings};
use ludus_anim_cooker::profile::CodecChoice;
use ludus_anim_cooker::progress;
use ludus_anim_cooker::project::{self, Origin, Project, ProjectArgs};
use ludus_anim_cooker::remote::{FarmCache, RemoteArgs};
use ludus_anim_cooker::report::{AssetReport, AssetStatus, RemoteReport, Report, Severity};
use ludus_anim_cooker::stage_cache::StageCache;
use ludus_anim_importers::ImportOptions;
use ludus_anim_remote_cache::RemoteError;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, ValueEnum)]
pub enum CodecArg {
    Vbr,
    Reference,
}

/// What `--deny` turns into a failed cook.
#[derive(Clone, Copy, ValueEnum)]
pub enum Deny {
    Warnings,
}

#[derive(Args)]
pub struct CookArgs {
    /// Files or directories to cook.
    inputs: Vec<PathBuf>,
    /// Project manifest (default: ./ludus-anim.toml when present).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Output directory: packages/, manifest.json and report.json.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Quality profile: standard, hero, crowd, or a path to a .toml.
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
    /// Retarget profile (TOML) baking the clips onto its target skeleton,
    /// for assets whose manifest entry names none.
    #[arg(long)]
    retarget: Option<PathBuf>,
    /// Stage cache directory (default: LUDUS_ANIM_CACHE, else the per-user
    /// cache directory).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Run every stage; read and write no cache (local or remote).
    #[arg(long)]
    no_cache: bool,
    #[command(flatten)]
    remote: RemoteCacheArgs,
    /// Worker threads (default: one per core; at most 4 per core).
    #[arg(short, long, default_value_t = 0)]
    jobs: usize,
    /// Cook only shard I of N (e.g. 2/8): a deterministic split by source
    /// path for build farms sharing one cache.
    #[arg(long)]
    shard: Option<String>,
    /// Print a machine-readable JSON event stream (one object per line)
    /// instead of progress output.
    #[arg(long)]
    json: bool,
    /// A resource limit over the manifest's, for every asset: NAME=VALUE,
    /// repeatable (e.g. --limit max_file_bytes=64M --limit
    /// max_clip_duration_s=600; names and defaults: docs/limits.md).
    #[arg(long = "limit", value_name = "NAME=VALUE")]
    limits: Vec<String>,
    /// After publishing, remove the packages in OUT/packages/ that no
    /// manifest in OUT names (as `ludus-anim prune OUT`).
    #[arg(long)]
    prune: bool,
    /// Fail (exit 1) on quality warnings too: `--deny warnings`, for CI.
    #[arg(long, value_enum)]
    deny: Option<Deny>,
    /// Do not write OUT/report-sidecar.json (the dashboard's per-time
    /// errors and bit rates); the manifest's `[report] sidecar = false`
    /// does the same.
    #[arg(long)]
    no_sidecar: bool,
    /// Test hook: multiply the encoder's error thresholds (verification
    /// keeps the profile's), to prove verification catches overshoot.
    #[arg(long = "debug-encoder-slack", default_value_t = 1.0, hide = true)]
    slack: f32,
}

/// The build farm's shared cache (docs/remote-cache.md).
#[derive(Args)]
pub struct RemoteCacheArgs {
    /// Remote cache base URL (Bazel HTTP protocol: bazel-remote, nginx or
    /// Apache WebDAV, GCS), looked up after the local cache (default:
    /// LUDUS_ANIM_REMOTE_CACHE, else the manifest's remote_cache).
    #[arg(long = "remote-cache", value_name = "URL")]
    url: Option<String>,
    /// read: download only (default); read-write: also upload what this
    /// cook computed (CI).
    #[arg(long = "remote-cache-mode", value_enum, value_name = "MODE")]
    mode: Option<RemoteMode>,
    /// Credentials: bearer-file:PATH, bearer-env:NAME, basic-file:PATH or
    /// basic-env:NAME (never printed).
    #[arg(long = "remote-cache-auth", value_name = "SPEC")]
    auth: Option<String>,
    /// Entry signing secret: file:PATH or env:NAME (never printed). Uploads
    /// are signed with it; only entries signed with it are used.
    #[arg(long = "remote-cache-signing", value_name = "SPEC")]
    signing: Option<String>,
}

fn parse_shard(s: &str) -> Option<(u32, u32)> {
    let (i, n) = s.split_once('/')?;
    let (i, n) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
    (n >= 1 && (1..=n).contains(&i)).then_some((i, n))
}

/// `--jobs` within reason: more threads than four per core only costs
/// memory and start-up time.
fn bounded_jobs(jobs: usize, out: &Output) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let max = (cores * 4).max(4);
    if jobs > max {
        out.warn(format!(
            "--jobs {jobs} is more than 4 per core; using {max} ({cores} cores)"
        ));
        return max;
    }
    jobs
}

/// Where the bundled demo lives: `./fixtures`, else the source checkout's.
fn fixtures_dir() -> PathBuf {
    let local = PathBuf::from("fixtures");
    if local.is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
}

pub fn run(a: CookArgs, out: &Output) -> Exit {
    if !(a.slack.is_finite() && a.slack > 0.0) {
        out.error("--debug-encoder-slack must be a positive number");
        return Exit::Usage;
    }
    let shard = match a.shard.as_deref().map(|s| (s, parse_shard(s))) {
        None => None,
        Some((_, Some(x))) => Some(x),
        Some((s, None)) => {
            out.error(format!("--shard '{s}' must be I/N with 1 <= I <= N"));
            return Exit::Usage;
        }
    };
    let limits = match super::limits::parse_limits(&a.limits) {
        Ok(l) => l,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let args = ProjectArgs {
        inputs: a.inputs.clone(),
        manifest: a.manifest.clone(),
        out: a.out.clone(),
        profile: a.profile.clone(),
        cache: a.cache.clone(),
        remote: RemoteArgs {
            url: a.remote.url.clone(),
            mode: a.remote.mode,
            auth: a.remote.auth.clone(),
            signing: a.remote.signing.clone(),
        },
    };
    let project = match project::resolve(&args, Path::new("."), &fixtures_dir()) {
        Ok(p) => p,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    if let Some(pid) = serving_pid(&project.out) {
        out.error(format!(
            "{}: a running asset server (pid {pid}) publishes into this output directory; cook into another --out, or ask the server to cook (POST /cook)",
            project.out.display()
        ));
        return Exit::Write;
    }
    if project.origin == Origin::Bundled {
        out.note(format!(
            "no inputs and no {} here: cooking the bundled demo fixtures ({} files from {}); pass files, a directory or --manifest to cook your own",
            ludus_anim_cooker::manifest::FILE_NAME,
            project.jobs.len(),
            fixtures_dir().display()
        ));
    }
    let mut options = options(&a, &project, shard, out);
    options.limits = limits;
    let cache = match open_cache(&a, &project, out) {
        Ok(c) => c,
        Err(e) => {
            out.error(format!("cannot use the remote cache: {e}"));
            return Exit::Usage;
        }
    };
    // A `--json` stream's readers want every asset's events, and a remote
    // cache's cook reports its traffic: both always cook.
    if !a.json && project.remote.is_none() {
        if let Some(done) = up_to_date(&options, &cache) {
            return finish_up_to_date(&done, &a, &project.out, out);
        }
    }
    let observer = observer(a.json, out, options.jobs.len());
    let report = match cook(&options, &cache, observer.as_ref()) {
        Ok(r) => r,
        Err(CookError::Profile(e)) => {
            out.error(e);
            return Exit::Usage;
        }
        Err(e) => {
            out.error(e);
            return Exit::Write;
        }
    };
    drop(observer);
    if !a.json {
        print_results(&report, &project.out, out);
    }
    if a.prune {
        let quiet = Output {
            quiet: out.quiet || a.json,
            ..*out
        };
        let pruned = super::prune::prune_and_say(&project.out, false, &quiet);
        if pruned != Exit::Ok {
            return pruned;
        }
    }
    if report.totals.assets_failed > 0 {
        return Exit::AssetsFailed;
    }
    if a.deny.is_some() && report.totals.warnings > 0 {
        out.error(format!(
            "{} quality warnings and --deny warnings",
            report.totals.warnings
        ));
        return Exit::AssetsFailed;
    }
    Exit::Ok
}

/// A no-op cook: nothing changed since the last publication, whose report
/// stays as written. The exit status is the one that cook had.
fn finish_up_to_date(done: &UpToDate, a: &CookArgs, out_dir: &Path, out: &Output) -> Exit {
    let t = &done.totals;
    if !out.quiet {
        outln!(
            "{} assets, {} warnings, {} clips: up to date (generation {}; nothing cooked or written); report: {}",
            t.assets,
            t.warnings,
            t.clips,
            done.generation,
            out_dir.join("report.json").display()
        );
    }
    if a.prune {
        let pruned = super::prune::prune_and_say(out_dir, false, out);
        if pruned != Exit::Ok {
            return pruned;
        }
    }
    if a.deny.is_some() && t.warnings > 0 {
        out.error(format!(
            "{} quality warnings and --deny warnings (listed in {})",
            t.warnings,
            out_dir.join("report.json").display()
        ));
        return Exit::AssetsFailed;
    }
    Exit::Ok
}

fn options(a: &CookArgs, p: &Project, shard: Option<(u32, u32)>, out: &Output) -> CookOptions {
    CookOptions {
        jobs: p.jobs.clone(),
        project_root: p.root.clone(),
        out: p.out.clone(),
        default_profile: p.profile.clone(),
        units_override_m: a.units.map(Units::meters),
        import: ImportOptions {
            keep_unused_leaves: a.keep_unused_leaves,
            custom_curves: Vec::new(),
        },
        encoder_slack: a.slack,
        threads: bounded_jobs(a.jobs, out),
        shard,
        retarget: a.retarget.clone(),
        limits: Default::default(),
        codec_override: a.codec.map(|c| match c {
            CodecArg::Vbr => CodecChoice::Vbr,
            CodecArg::Reference => CodecChoice::Reference,
        }),
        sidecar: SidecarSettings {
            write: p.report.sidecar && !a.no_sidecar,
            max_mb: p.report.sidecar_max_mb,
        },
    }
}

/// The pid of a live `ludus-anim serve` owning `out` (its `server.pid`):
/// a cook there would replace the files the server publishes.
fn serving_pid(out: &Path) -> Option<u32> {
    let text = std::fs::read_to_string(out.join("server.pid")).ok()?;
    let pid: u32 = text.trim().parse().ok()?;
    let alive = pid != std::process::id() && Path::new("/proc").join(pid.to_string()).exists();
    alive.then_some(pid)
}

/// The local store, layered over the remote cache when one is set. A
/// remote whose credentials cannot be read is an error (it was asked for).
fn open_cache(a: &CookArgs, p: &Project, out: &Output) -> Result<StageCache, RemoteError> {
    if a.no_cache {
        if p.remote.is_some() {
            out.note("--no-cache: the remote cache is not used either");
        }
        return Ok(StageCache::local(None));
    }
    let store = match Store::open(&p.cache_dir) {
        Ok(s) => s,
        Err(e) => {
            let also = if p.remote.is_some() {
                " (and the remote cache, which is layered behind it)"
            } else {
                ""
            };
            out.warn(format!("cache unavailable, cooking without it{also}: {e}"));
            return Ok(StageCache::local(None));
        }
    };
    let cache = match p.remote.clone() {
        Some(config) => StageCache::new(Some(Box::new(FarmCache::open(store, config)?))),
        None => StageCache::local(Some(store)),
    };
    Ok(cache.with_stamps(&p.cache_dir))
}

fn observer(json: bool, out: &Output, assets: usize) -> Box<dyn Observer> {
    if json {
        Box::new(progress::JsonEvents::default())
    } else if out.quiet {
        Box::new(ludus_anim_cooker::events::Silent)
    } else if std::io::stderr().is_terminal() {
        Box::new(progress::Bars::new(assets))
    } else {
        Box::new(progress::Lines)
    }
}

/// Diagnostics on stderr, one line per asset and the summary on stdout.
fn print_results(report: &Report, out_dir: &Path, out: &Output) {
    for asset in &report.assets {
        for d in &asset.diagnostics {
            if !out.quiet || d.severity == Severity::Error {
                eprintln!("{}", out.diagnostic(d));
            }
        }
        if out.quiet {
            continue;
        }
        print_asset(asset, out);
    }
    if out.quiet {
        return;
    }
    let stages: Vec<String> = report
        .stages
        .iter()
        .filter(|(_, s)| s.hits + s.misses > 0)
        .map(|(n, s)| format!("{n} {}/{}", s.hits, s.misses))
        .collect();
    let t = &report.totals;
    let report_file = ludus_anim_cooker::report::farm::report_file(report.shard.as_ref());
    if let Some(r) = &report.remote {
        outln!("{}", remote_summary(r));
    }
    outln!(
        "{} assets ({} failed), {} warnings, {} clips, {} -> {} bytes ({:.2}:1), max error {:.4} mm, {:.0} ms; cache hits/runs: {}; report: {}",
        t.assets,
        t.assets_failed,
        t.warnings,
        t.clips,
        t.raw_bytes,
        t.compressed_bytes,
        t.ratio,
        t.max_error_m * 1000.0,
        t.cook_ms,
        if stages.is_empty() { "-".to_string() } else { stages.join(", ") },
        out_dir.join(report_file).display()
    );
}

/// `remote cache URL (mode): hits/misses import 3/0, package 20/0; 1.2 MB
/// down, 0 B up[; N errors][; ...]`.
fn remote_summary(r: &RemoteReport) -> String {
    let stages: Vec<String> = r
        .stages
        .iter()
        .filter(|(_, s)| s.hits + s.all_misses() > 0)
        .map(|(n, s)| format!("{n} {}/{}", s.hits, s.all_misses()))
        .collect();
    let t = r.total();
    let mut s = format!(
        "remote cache {} ({}): hits/misses {}; {} down, {} up",
        r.url,
        r.mode,
        if stages.is_empty() {
            "-".to_string()
        } else {
            stages.join(", ")
        },
        bytes(t.bytes_down),
        bytes(t.bytes_up)
    );
    let errors = t.errors + t.corrupt + t.upload_errors;
    if errors > 0 {
        s.push_str(&format!("; {errors} errors"));
    }
    if t.dropped_uploads + r.pending_uploads > 0 {
        s.push_str(&format!(
            "; {} uploads not sent",
            t.dropped_uploads + r.pending_uploads
        ));
    }
    if r.disabled {
        s.push_str("; disabled during the cook (see the notes)");
    }
    s
}

fn bytes(n: u64) -> String {
    match n {
        n if n >= 1 << 20 => format!("{:.1} MB", n as f64 / (1u64 << 20) as f64),
        n if n >= 1 << 10 => format!("{:.1} KB", n as f64 / 1024.0),
        n => format!("{n} B"),
    }
}

fn print_asset(asset: &AssetReport, out: &Output) {
    match asset.status {
        AssetStatus::Ok => {
            let err = asset
                .clips
                .iter()
                .map(|c| c.max_error_m)
                .fold(0.0f32, f32::max);
            let raw: u64 = asset.clips.iter().map(|c| c.raw_bytes).sum();
            let bytes: u64 = asset.clips.iter().map(|c| c.compressed_bytes).sum();
            outln!(
                "cooked {} -> {} ({} clips, {} -> {} bytes, max error {:.4} mm)",
                asset.source,
                asset.package.as_deref().unwrap_or("-"),
                asset.clips.len(),
                raw,
                bytes,
                err * 1000.0
            );
        }
        AssetStatus::Failed => outln!("FAILED {}", asset.source),
    }
    if out.verbose {
        for c in &asset.clips {
            outln!(
                "  clip '{}': {} samples at {} Hz, {} -> {} bytes, max error {:.4} mm at '{}' t={:.3}s",
                c.name,
                c.samples,
                c.sample_rate_hz,
                c.raw_bytes,
                c.compressed_bytes,
                c.max_error_m * 1000.0,
                c.worst_joint,
                c.worst_time_s
            );
        }
        for d in &asset.decisions {
            outln!("  decision[{}]: {}", d.kind, d.detail);
        }
    }
}
