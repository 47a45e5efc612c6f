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
