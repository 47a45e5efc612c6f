//! `ludus-anim`: the command line over the cooker library.
//!
//! Exit codes: 0 success; 1 one or more assets failed to cook (see the
//! report and the error lines); 2 bad command line, profile or package
//! argument; 3 an output could not be written.

#![forbid(unsafe_code)]

use clap::{Args, Parser, Subcommand, ValueEnum};
use ludus_anim_cache::Store;
use ludus_anim_cooker::cook::{bundled_inputs, cook, CookError, CookOptions, Observer};
use ludus_anim_cooker::inspect::{describe, describe_json};
use ludus_anim_cooker::manifest::{self, AssetJob, Manifest};
use ludus_anim_cooker::profile::{CodecChoice, Profile};
use ludus_anim_cooker::progress;
use ludus_anim_cooker::report::AssetStatus;
use ludus_anim_cooker::report::ReportDiagnostic;
use ludus_anim_cooker::stage_cache::StageCache;
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::Severity;
use ludus_anim_runtime::Package;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ludus-anim",
    version,
    about = "Cook authored skeletal animation into verified runtime packages"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum)]
enum Units {
    M,
    Cm,
    Mm,
    In,
}

impl Units {
    fn meters(self) -> f32 {
        match self {
            Units::M => 1.0,
            Units::Cm => 0.01,
            Units::Mm => 0.001,
            Units::In => 0.0254,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
enum CodecArg {
    Vbr,
    Reference,
}

#[derive(Subcommand)]
enum Command {
    /// Cook animation files (glTF, GLB, FBX, BVH, ACL SJSON) into packages,
    /// a package manifest and a quality report. With no inputs, cooks the
    /// project in the current directory (ludus-anim.toml) or, without one,
    /// the bundled fixtures.
    Cook(CookArgs),
    /// Inspect or trim the stage cache.
    Cache {
        #[command(subcommand)]
        action: CacheAction,
        /// Cache directory (default: LUDUS_ANIM_CACHE, else per-user).
        #[arg(long, global = true)]
        cache: Option<PathBuf>,
    },
    /// Measure the codec on real content: bytes, error, compression and
    /// decode time per clip and profile, and the comparison with ACL on
    /// its anchor clips.
    Bench {
        /// Files to cook; default: ../shared/fixtures (glTF, FBX, BVH) and
        /// the bundled fixtures.
        files: Vec<PathBuf>,
        /// Profiles to run (comma separated).
        #[arg(long, default_value = "standard,hero,crowd")]
        profiles: String,
        /// ACL anchor directory (acl-clips/ and acl_dev_clips.csv); the
        /// side-by-side runs on its SJSON clips at the standard profile.
        #[arg(long)]
        anchors: Option<PathBuf>,
        /// Skip the ACL side-by-side.
        #[arg(long)]
        no_acl: bool,
        /// Write the table as JSON to this file too.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Timed cold-cache decodes per clip.
        #[arg(long, default_value_t = 101)]
        cold_iterations: usize,
    },
    /// Print a package's skeleton, clips, curves and metadata.
    Inspect {
        package: PathBuf,
        /// Machine-readable JSON instead of text.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Subcommand)]
enum CacheAction {
    /// Entries, bytes and age of the cache.
    Stats,
    /// Evict least-recently-used entries until the cache fits.
    Gc {
        /// Size bound, e.g. 500M, 2G, 1048576.
        #[arg(long)]
        max_size: String,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Cook(args) => run_cook(args),
        Command::Cache { action, cache } => run_cache(action, cache),
        Command::Inspect { package, json } => run_inspect(&package, json),
        Command::Bench {
            files,
            profiles,
            anchors,
            no_acl,
            json,
            cold_iterations,
        } => run_bench(files, &profiles, anchors, no_acl, json, cold_iterations),
    }
}

fn fixtures_dir() -> PathBuf {
    let local = PathBuf::from("fixtures");
    if local.is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
}

/// The default cache directory: `LUDUS_ANIM_CACHE`, else
/// `$XDG_CACHE_HOME/ludus-anim`, else `~/.cache/ludus-anim`.
fn default_cache_dir() -> PathBuf {
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

#[derive(Args)]
struct CookArgs {
    inputs: Vec<PathBuf>,
    /// Project manifest (default: ./ludus-anim.toml when present).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// Output directory: packages/, manifest.json and report.json.
    #[arg(long)]
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
    /// Stage cache directory (default: LUDUS_ANIM_CACHE, else the per-user
    /// cache directory).
    #[arg(long)]
    cache: Option<PathBuf>,
    /// Run every stage; read and write no cache.
    #[arg(long)]
    no_cache: bool,
    /// Worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    jobs: usize,
    /// Cook only shard I of N (e.g. 2/8): a deterministic split by source
    /// path for build farms sharing one cache.
    #[arg(long)]
    shard: Option<String>,
    /// Print a machine-readable JSON event stream (one object per line)
    /// instead of progress output.
    #[arg(long)]
    json: bool,
    /// Test hook: multiply the encoder's error thresholds (verification
    /// keeps the profile's), to prove verification catches overshoot.
    #[arg(long = "debug-encoder-slack", default_value_t = 1.0, hide = true)]
    slack: f32,
}

fn parse_shard(s: &str) -> Option<(u32, u32)> {
    let (i, n) = s.split_once('/')?;
    let (i, n) = (i.trim().parse().ok()?, n.trim().parse().ok()?);
    (n >= 1 && (1..=n).contains(&i)).then_some((i, n))
}

fn run_cook(a: CookArgs) -> ExitCode {
    if !(a.slack.is_finite() && a.slack > 0.0) {
        eprintln!("error: --debug-encoder-slack must be a positive number");
        return ExitCode::from(2);
    }
    let shard = match a.shard.as_deref().map(|s| (s, parse_shard(s))) {
        None => None,
        Some((_, Some(x))) => Some(x),
        Some((s, None)) => {
            eprintln!("error: --shard '{s}' must be I/N with 1 <= I <= N");
            return ExitCode::from(2);
        }
    };
    // Inputs: explicit files, else the project manifest, else the bundled
    // fixtures.
    let manifest_path = a.manifest.clone().or_else(|| {
        let p = PathBuf::from(manifest::FILE_NAME);
        (a.inputs.is_empty() && p.is_file()).then_some(p)
    });
    let mut project = None;
    let jobs = if !a.inputs.is_empty() {
        a.inputs
            .iter()
            .map(|p| AssetJob {
                path: p.clone(),
                settings: Default::default(),
            })
            .collect()
    } else if let Some(mp) = &manifest_path {
        let m = match Manifest::load(mp) {
            Ok(m) => m,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let root = mp
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
            .to_path_buf();
        let jobs = match m.jobs(&root) {
            Ok(j) => j,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        project = Some((root, m));
        jobs
    } else {
        let dir = fixtures_dir();
        let found = bundled_inputs(&dir);
        if found.is_empty() {
            eprintln!(
                "error: no inputs, no {} here, and no bundled fixtures in {}",
                manifest::FILE_NAME,
                dir.display()
            );
            return ExitCode::from(2);
        }
        found
            .into_iter()
            .map(|path| AssetJob {
                path,
                settings: Default::default(),
            })
            .collect()
    };
    let (root, settings) = match &project {
        Some((root, m)) => (Some(root.clone()), Some(&m.project)),
        None => (None, None),
    };
    let rel = |p: &Option<String>| -> Option<PathBuf> {
        p.as_ref().map(|p| root.clone().unwrap_or_default().join(p))
    };
    let out = a
        .out
        .clone()
        .or_else(|| settings.and_then(|s| rel(&s.output)))
        .unwrap_or_else(|| PathBuf::from("out"));
    let profile = a
        .profile
        .clone()
        .or_else(|| settings.and_then(|s| s.profile.clone()))
        .unwrap_or_else(|| "standard".to_string());
    let cache_dir = a
        .cache
        .clone()
        .or_else(|| settings.and_then(|s| rel(&s.cache)))
        .unwrap_or_else(default_cache_dir);
    let store = if a.no_cache {
        None
    } else {
        match Store::open(&cache_dir) {
            Ok(s) => Some(s),
            Err(e) => {
                eprintln!("warning: cache unavailable, cooking without it: {e}");
                None
            }
        }
    };
    let options = CookOptions {
        jobs,
        project_root: root,
        out: out.clone(),
        default_profile: profile,
        units_override_m: a.units.map(Units::meters),
        import: ImportOptions {
            keep_unused_leaves: a.keep_unused_leaves,
            custom_curves: Vec::new(),
        },
        encoder_slack: a.slack,
        threads: a.jobs,
        shard,
        codec_override: a.codec.map(|c| match c {
            CodecArg::Vbr => CodecChoice::Vbr,
            CodecArg::Reference => CodecChoice::Reference,
        }),
    };
    let cache = StageCache::new(store);
    let observer: Box<dyn Observer> = if a.json {
        Box::new(progress::JsonEvents::default())
    } else if std::io::stderr().is_terminal() {
        Box::new(progress::Bars::new(options.jobs.len()))
    } else {
        Box::new(progress::Lines)
    };
    let report = match cook(&options, &cache, observer.as_ref()) {
        Ok(r) => r,
        Err(CookError::Profile(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(3);
        }
    };
    drop(observer);
    if a.json {
        progress::json_summary(&report, &out);
    } else {
        for asset in &report.assets {
            for d in &asset.diagnostics {
                eprintln!("{}", render_diagnostic(d));
            }
            match asset.status {
                AssetStatus::Ok => {
                    let err = asset
                        .clips
                        .iter()
                        .map(|c| c.max_error_m)
                        .fold(0.0f32, f32::max);
                    let raw: u64 = asset.clips.iter().map(|c| c.raw_bytes).sum();
                    let bytes: u64 = asset.clips.iter().map(|c| c.compressed_bytes).sum();
                    println!(
                        "cooked {} -> {} ({} clips, {} -> {} bytes, max error {:.4} mm)",
                        asset.source,
                        asset.package.as_deref().unwrap_or("-"),
                        asset.clips.len(),
                        raw,
                        bytes,
                        err * 1000.0
                    );
                }
                AssetStatus::Failed => println!("FAILED {}", asset.source),
            }
        }
        let stages: Vec<String> = report
            .stages
            .iter()
            .filter(|(_, s)| s.hits + s.misses > 0)
            .map(|(n, s)| format!("{n} {}/{}", s.hits, s.misses))
            .collect();
        let t = &report.totals;
        println!(
            "{} assets ({} failed), {} clips, {} -> {} bytes ({:.2}:1), max error {:.4} mm, {:.0} ms; cache hits/runs: {}; report: {}",
            t.assets,
            t.assets_failed,
            t.clips,
            t.raw_bytes,
            t.compressed_bytes,
            t.ratio,
            t.max_error_m * 1000.0,
            t.cook_ms,
            if stages.is_empty() { "-".to_string() } else { stages.join(", ") },
            out.join("report.json").display()
        );
    }
    if report.totals.assets_failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// One line per diagnostic: `error[code]: file '…', clip '…', joint '…', t=…s: message`.
fn render_diagnostic(d: &ReportDiagnostic) -> String {
    let mut parts = Vec::new();
    if let Some(v) = &d.file {
        parts.push(format!("file '{v}'"));
    }
    if let Some(v) = &d.clip {
        parts.push(format!("clip '{v}'"));
    }
    if let Some(v) = &d.joint {
        parts.push(format!("joint '{v}'"));
    }
    if let Some(v) = d.time_s {
        parts.push(format!("t={v:.4}s"));
    }
    let sev = match d.severity {
        Severity::Warning => "warning",
        Severity::Error => "error",
    };
    if parts.is_empty() {
        format!("{sev}[{}]: {}", d.code, d.message)
    } else {
        format!("{sev}[{}]: {}: {}", d.code, parts.join(", "), d.message)
    }
}

fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mul) = match s.char_indices().last()? {
        (i, 'K' | 'k') => (&s[..i], 1u64 << 10),
        (i, 'M' | 'm') => (&s[..i], 1 << 20),
        (i, 'G' | 'g') => (&s[..i], 1 << 30),
        (i, 'T' | 't') => (&s[..i], 1 << 40),
        _ => (s, 1),
    };
    let v: f64 = num.trim().parse().ok()?;
    (v.is_finite() && v >= 0.0).then_some((v * mul as f64) as u64)
}

fn run_cache(action: CacheAction, dir: Option<PathBuf>) -> ExitCode {
    let dir = dir.unwrap_or_else(default_cache_dir);
    let store = match Store::open(&dir) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match action {
        CacheAction::Stats => match store.stats() {
            Ok(s) => {
                println!(
                    "cache {}: {} entries, {} bytes",
                    dir.display(),
                    s.entries,
                    s.total_bytes
                );
                if s.temp_files > 0 {
                    println!(
                        "  {} temp files ({} bytes) from writes in progress or killed writers",
                        s.temp_files, s.temp_bytes
                    );
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("error: {e}");
                ExitCode::from(3)
            }
        },
        CacheAction::Gc { max_size } => {
            let Some(limit) = parse_size(&max_size) else {
                eprintln!("error: --max-size '{max_size}' is not a size (e.g. 500M, 2G)");
                return ExitCode::from(2);
            };
            match store.gc(limit) {
                Ok(r) => {
                    println!(
                        "evicted {} entries ({} bytes), removed {} stale temp files; {} entries ({} bytes) remain",
                        r.evicted.len(),
                        r.evicted_bytes,
                        r.stale_temps_removed.len(),
                        r.remaining_entries,
                        r.remaining_bytes
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: {e}");
                    ExitCode::from(3)
                }
            }
        }
    }
}

fn run_inspect(path: &Path, json: bool) -> ExitCode {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {}: cannot read: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    let package = match Package::load(&bytes) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {}: {e}", path.display());
            return ExitCode::from(2);
        }
    };
    if json {
        println!(
            "{}",
            serde_json::to_string_pretty(&describe_json(&package)).unwrap_or_default()
        );
    } else {
        print!("{}", describe(&package));
    }
    ExitCode::SUCCESS
}

fn shared_dir(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared")
        .join(name)
}

fn run_bench(
    files: Vec<PathBuf>,
    profiles: &str,
    anchors: Option<PathBuf>,
    no_acl: bool,
    json: Option<PathBuf>,
    cold_iterations: usize,
) -> ExitCode {
    use ludus_anim_cooker::bench;
    let mut ps = Vec::new();
    for name in profiles.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match Profile::load(name) {
            Ok(p) => ps.push(p),
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let files = if files.is_empty() {
        let mut v = bundled_inputs(&fixtures_dir());
        let shared = shared_dir("fixtures");
        for sub in ["gltf", "fbx", "bvh"] {
            v.extend(bench_files(&shared.join(sub)));
        }
        v
    } else {
        files
    };
    let mut out = String::new();
    let mut results = Vec::new();
    let r = bench::run(&files, &ps, None, &Default::default(), cold_iterations);
    out.push_str(&bench::render(&r));
    results.push(("fixtures", r));
    if !no_acl {
        let dir = anchors.unwrap_or_else(|| shared_dir("anchors"));
        let clips = bench_files(&dir.join("acl-clips"));
        if clips.is_empty() {
            eprintln!(
                "note: no ACL anchor clips in {}; skipping the ACL side-by-side",
                dir.display()
            );
        } else {
            let acl = bench::load_acl_csv(&dir.join("acl_dev_clips.csv"));
            let standard: Vec<Profile> = ps
                .iter()
                .filter(|p| p.name == "standard")
                .cloned()
                .collect();
            let standard = if standard.is_empty() {
                match Profile::load("standard") {
                    Ok(p) => vec![p],
                    Err(e) => {
                        eprintln!("error: {e}");
                        return ExitCode::from(2);
                    }
                }
            } else {
                standard
            };
            // ACL's clips are centimetres; shell distances come from the files.
            let r = bench::run(&clips, &standard, Some(0.01), &acl, cold_iterations);
            out.push_str("\nACL anchor clips (standard profile, --units cm):\n");
            out.push_str(&bench::render(&r));
            results.push(("acl", r));
        }
    }
    print!("{out}");
    if let Some(path) = json {
        let v: serde_json::Value = results
            .iter()
            .map(|(k, r)| (k.to_string(), serde_json::to_value(r).unwrap_or_default()))
            .collect::<serde_json::Map<_, _>>()
            .into();
        let text = serde_json::to_vec_pretty(&v).unwrap_or_default();
        if let Err(e) = ludus_anim_cooker::fsutil::write_atomic(&path, &text) {
            eprintln!("error: cannot write {}: {e}", path.display());
            return ExitCode::from(3);
        }
    }
    if results.iter().any(|(_, r)| !r.failures.is_empty()) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Animation files in `dir` and its subdirectories, sorted.
fn bench_files(dir: &Path) -> Vec<PathBuf> {
    let mut v = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return v;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            v.extend(bench_files(&p));
        } else if ludus_anim_importers::format_of(&p).is_some() {
            v.push(p);
        }
    }
    v.sort();
    v
}
