//! `ludus-anim retarget suggest SOURCE TARGET [-o PROFILE.toml]` and
//! `ludus-anim retarget preview OUT [--out DIR]`.

use super::output::Output;
use super::Exit;
use crate::cli::output::{out, outln};
use clap::{Args, Subcommand};
use ludus_anim_cooker::fsutil::write_atomic;
use ludus_anim_cooker::manifest::Units;
use ludus_anim_cooker::suggest::{suggest_profile, RigArg};
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct RetargetArgs {
    #[command(subcommand)]
    command: RetargetCommand,
}

#[derive(Subcommand)]
enum RetargetCommand {
    /// Propose a retarget profile from SOURCE's rig onto TARGET's: chains
    /// and chain map from hierarchy, names and synonyms, retarget poses and
    /// the detected rest kinds, with comments saying what to check. It is
    /// a starting point for a person, never applied implicitly.
    Suggest(SuggestArgs),
    /// Write one self-contained HTML page per retargeted clip of a cook:
    /// source and result side by side as stick figures on one clock (side
    /// and top views, root trajectory, contacts on the timeline) and the
    /// feet's heights and speeds. Reads the cook's report.json and
    /// report-sidecar.json; the pages reference no URL.
    Preview(PreviewArgs),
}

#[derive(Args)]
struct PreviewArgs {
    /// The cook's output directory (or its report.json).
    cook: PathBuf,
    /// Folder to write the pages into (default: retarget-preview/ beside
    /// the report).
    #[arg(long)]
    out: Option<PathBuf>,
}

#[derive(Args)]
struct SuggestArgs {
    /// The rig the clips are authored on (any supported source file).
    source: PathBuf,
    /// The rig to bake the clips onto.
    target: PathBuf,
    /// Write the profile here (atomically) instead of printing it; its
    /// skeleton paths are written relative to this file.
    #[arg(short, long)]
    out: Option<PathBuf>,
    /// Source length unit, overriding what the file declares.
    #[arg(long, value_enum)]
    source_units: Option<Units>,
    /// Target length unit, overriding what the file declares.
    #[arg(long, value_enum)]
    target_units: Option<Units>,
    /// The source character's forward axis at rest (`+z`, `-z`, `+x`,
    /// ...), overriding the one inferred from toes, knees and travel.
    #[arg(long, value_parser = parse_axis, allow_hyphen_values = true)]
    source_forward: Option<String>,
    /// The target character's forward axis (as --source-forward).
    #[arg(long, value_parser = parse_axis, allow_hyphen_values = true)]
    target_forward: Option<String>,
}

fn parse_axis(s: &str) -> Result<String, String> {
    let t = s.trim().to_ascii_lowercase();
    match t.as_str() {
        "+x" | "-x" | "+y" | "-y" | "+z" | "-z" => Ok(t),
        "x" | "y" | "z" => Ok(format!("+{t}")),
        _ => Err(format!("'{s}' is not one of +x -x +y -y +z -z")),
    }
}

pub fn run(a: RetargetArgs, out: &Output) -> Exit {
    match a.command {
        RetargetCommand::Suggest(s) => suggest(s, out),
        RetargetCommand::Preview(p) => preview(p, out),
    }
}

fn preview(a: PreviewArgs, out: &Output) -> Exit {
    use ludus_anim_dashboard::DashboardError;
    match ludus_anim_dashboard::write_previews(&a.cook, a.out.as_deref()) {
        Ok(o) => {
            for p in &o.pages {
                outln!("{}", p.display());
            }
            if o.left_out > 0 {
                out.warn(format!(
                    "{} retargeted clip(s) have no sampled poses (the sidecar would have passed sidecar_max_mb): no page",
                    o.left_out
                ));
            }
            out.note(format!(
                "wrote {} preview page(s) into {}",
                o.pages.len(),
                o.dir.display()
            ));
            Exit::Ok
        }
        Err(e) => {
            let code = match e {
                DashboardError::Write { .. } => Exit::Write,
                _ => Exit::Usage,
            };
            out.error(e);
            code
        }
    }
}

fn suggest(a: SuggestArgs, out: &Output) -> Exit {
    let dir = a
        .out
        .as_deref()
        .and_then(Path::parent)
        .unwrap_or(Path::new(""));
    let source = RigArg {
        path: &a.source,
        units_m: a.source_units.map(Units::meters),
        forward: a.source_forward.as_deref(),
    };
    let target = RigArg {
        path: &a.target,
        units_m: a.target_units.map(Units::meters),
        forward: a.target_forward.as_deref(),
    };
    let s = match suggest_profile(&source, &target, dir) {
        Ok(s) => s,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    for n in &s.notes {
        out.warn(n);
    }
    // A suggestion that does not fit is still written for a person to
    // fix, but the command fails so scripts do not cook it.
    let done = if s.valid {
        Exit::Ok
    } else {
        Exit::AssetsFailed
    };
    let Some(path) = &a.out else {
        out!("{}", s.toml);
        return done;
    };
    if let Err(e) = write_atomic(path, s.toml.as_bytes()) {
        out.error(format!("{}: cannot write: {e}", path.display()));
        return Exit::Write;
    }
    out.note(format!(
        "wrote {} ({} chains mapped{}); review it, then cook with `ludus-anim cook --retarget {}`",
        path.display(),
        s.profile.maps.len(),
        if s.valid {
            ""
        } else {
            "; it does not fit the rigs yet"
        },
        path.display()
    ));
    done
}
