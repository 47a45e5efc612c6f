//! `ludus-anim`: the command line over the cooker library.
//!
//! Exit codes: 0 success; 1 one or more assets failed to cook (see the
//! report and the error lines); 2 bad command line, profile or package
//! argument; 3 an output could not be written.

use clap::{Parser, Subcommand, ValueEnum};
use ludus_anim_cooker::cook::{bundled_inputs, cook, CookOptions};
use ludus_anim_cooker::inspect::{describe, describe_json};
use ludus_anim_cooker::profile::{CodecChoice, Profile};
use ludus_anim_cooker::report::AssetStatus;
use ludus_anim_importers::ImportOptions;
use ludus_anim_runtime::Package;
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
    /// Cook animation files (glTF, GLB, FBX, BVH, ACL SJSON) into packages
    /// and a quality report. With no inputs, cooks the bundled fixtures.
    Cook {
        inputs: Vec<PathBuf>,
        /// Output directory: packages/ and report.json go here.
        #[arg(long, default_value = "out")]
        out: PathBuf,
        /// Quality profile: standard, hero, crowd, or a path to a .toml.
        #[arg(long, default_value = "standard")]
        profile: String,
        /// Source length unit, overriding what the file declares.
        #[arg(long, value_enum)]
        units: Option<Units>,
        /// Codec, overriding the profile's (reference = uncompressed).
        #[arg(long, value_enum)]
        codec: Option<CodecArg>,
        /// Keep leaf joints that neither deform nor animate.
        #[arg(long)]
        keep_unused_leaves: bool,
        /// Test hook: multiply the encoder's error thresholds (verification
        /// keeps the profile's), to prove verification catches overshoot.
        #[arg(long, default_value_t = 1.0, hide = true)]
        debug_encoder_slack: f32,
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
        #[arg(long, default_value_t = 301)]
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

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Cook {
            inputs,
            out,
            profile,
            units,
            codec,
            keep_unused_leaves,
            debug_encoder_slack,
        } => run_cook(
            inputs,
            out,
            &profile,
            units,
            codec,
            keep_unused_leaves,
            debug_encoder_slack,
        ),
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

fn run_cook(
    inputs: Vec<PathBuf>,
    out: PathBuf,
    profile: &str,
    units: Option<Units>,
    codec: Option<CodecArg>,
    keep_unused_leaves: bool,
    slack: f32,
) -> ExitCode {
    let mut profile = match Profile::load(profile) {
        Ok(p) => p,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    if let Some(c) = codec {
        profile.codec = match c {
            CodecArg::Vbr => CodecChoice::Vbr,
            CodecArg::Reference => CodecChoice::Reference,
        };
    }
    let inputs = if inputs.is_empty() {
        let dir = fixtures_dir();
        let found = bundled_inputs(&dir);
        if found.is_empty() {
            eprintln!(
                "error: no inputs given and no bundled fixtures found in {}",
                dir.display()
            );
            return ExitCode::from(2);
        }
        found
    } else {
        inputs
    };
    if !(slack.is_finite() && slack > 0.0) {
        eprintln!("error: --debug-encoder-slack must be a positive number");
        return ExitCode::from(2);
    }
    let options = CookOptions {
        inputs,
        out: out.clone(),
        profile,
        units_override_m: units.map(Units::meters),
        import: ImportOptions { keep_unused_leaves },
        encoder_slack: slack,
    };
    let report = match cook(&options) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(3);
        }
    };
    for a in &report.assets {
        for d in &a.diagnostics {
            eprintln!("{d}");
        }
        match a.status {
            AssetStatus::Ok => {
                let err = a.clips.iter().map(|c| c.max_error_m).fold(0.0f32, f32::max);
                let raw: u64 = a.clips.iter().map(|c| c.raw_bytes).sum();
                let bytes: u64 = a.clips.iter().map(|c| c.compressed_bytes).sum();
                println!(
                    "cooked {} -> {} ({} clips, {} -> {} bytes, max error {:.4} mm)",
                    a.source,
                    a.package.as_deref().unwrap_or("-"),
                    a.clips.len(),
                    raw,
                    bytes,
                    err * 1000.0
                );
            }
            AssetStatus::Failed => println!("FAILED {}", a.source),
        }
    }
    let t = &report.totals;
    println!(
        "{} assets ({} failed), {} clips, {} -> {} bytes ({:.2}:1), max error {:.4} mm, {:.0} ms; report: {}",
        t.assets,
        t.assets_failed,
        t.clips,
        t.raw_bytes,
        t.compressed_bytes,
        t.ratio,
        t.max_error_m * 1000.0,
        t.cook_ms,
        out.join("report.json").display()
    );
    if t.assets_failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
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
