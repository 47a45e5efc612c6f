//! `ludus-anim`: the command line over the cooker library. It parses,
//! resolves and renders; the work is in the library.
//!
//! Exit codes: 0 success; 1 one or more assets failed to cook (see the
//! report and the error lines); 2 bad command line, manifest, profile or
//! input, or shards `merge` refuses; 3 an output could not be written.

#![forbid(unsafe_code)]

mod cli;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "ludus-anim",
    version = cli::VERSION,
    about = "Cook authored skeletal animation into verified runtime packages"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    output: cli::output::OutputArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Cook animation files (glTF, GLB, FBX, BVH, ACL SJSON) into packages,
    /// a package manifest and a quality report. Inputs may be files or
    /// directories (every supported file below them). With no inputs,
    /// cooks the project in the current directory (ludus-anim.toml) or,
    /// without one, the bundled demo fixtures (with a note saying so).
    Cook(cli::cook::CookArgs),
    /// Cook one asset as a hermetic build action: reads only the declared
    /// inputs, writes only asset.ludanim and its manifest, report and
    /// sidecar fragments into --out (merge them with `merge`).
    CookAsset(cli::cook_asset::CookAssetArgs),
    /// Print each asset's declared inputs and outputs as JSON (for build
    /// systems making one `cook-asset` action per asset).
    Query(cli::cook_asset::QueryArgs),
    /// Show what source files hold before cooking: clips, joints, rates,
    /// units and axes.
    List(cli::inspect::ListArgs),
    /// Print a package's skeleton, clips, curves and metadata (a source
    /// file is listed as `list` would).
    Inspect(cli::inspect::InspectArgs),
    /// The dashboard (one self-contained HTML file) and a text summary of
    /// cooks, with regressions against a baseline for CI gates.
    Report(cli::report::ReportArgs),
    /// Inspect or trim the stage cache.
    Cache(cli::cache::CacheArgs),
    /// Merge the outputs of `cook --shard I/N` (or of `cook-asset`) into
    /// one manifest.json and report.json, as an unsharded cook writes them;
    /// refuses missing, duplicate or conflicting shards.
    Merge(cli::merge::MergeArgs),
    /// Remove the packages in OUT/packages/ that no manifest in OUT names
    /// (never while a cook publishes there; nothing but packages).
    Prune(cli::prune::PruneArgs),
    /// Retarget profiles: `retarget suggest SOURCE TARGET [-o PROFILE]`
    /// proposes one for a person to check; `retarget preview OUT` writes
    /// a page per retargeted clip (source and result as stick figures).
    Retarget(cli::retarget::RetargetArgs),
    /// Measure the codec on real content: bytes, error, compression and
    /// decode time per clip and profile, and the comparison with ACL on
    /// its anchor clips.
    Bench(cli::bench::BenchArgs),
    /// Animation programs: compile a state-machine/layer asset against a
    /// cook output, dump its plan, verify it, evaluate it over inputs.
    Program(cli::program::ProgramArgs),
    /// Serve a project: cook it, watch its files, re-cook what changed and
    /// publish immutable generations over HTTP (runs ludus-anim-server).
    #[command(disable_help_flag = true)]
    Serve(cli::serve::ServeArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let out = cli.output.resolve();
    let code = match cli.command {
        Command::Cook(a) => cli::cook::run(a, &out),
        Command::CookAsset(a) => cli::cook_asset::cook_asset(a, &out),
        Command::Query(a) => cli::cook_asset::query(a, &out),
        Command::List(a) => cli::inspect::list(a, &out),
        Command::Inspect(a) => cli::inspect::inspect(a, &out),
        Command::Cache(a) => cli::cache::run(a, &out),
        Command::Report(a) => cli::report::run(a, &out),
        Command::Merge(a) => cli::merge::run(a, &out),
        Command::Prune(a) => cli::prune::run(a, &out),
        Command::Retarget(a) => cli::retarget::run(a, &out),
        Command::Bench(a) => cli::bench::run(a, &out),
        Command::Program(a) => cli::program::run(a, &out),
        Command::Serve(a) => cli::serve::run(a, &out),
    };
    ExitCode::from(code as u8)
}
