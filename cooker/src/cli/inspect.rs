//! `ludus-anim inspect PACKAGE` and `ludus-anim list SOURCE...`.

use super::output::Output;
use super::Exit;
use crate::cli::output::{out, outln};
use clap::Args;
use ludus_anim_cooker::inspect::{describe, describe_json};
use ludus_anim_cooker::inspect_retarget;
use ludus_anim_cooker::inspect_sockets;
use ludus_anim_cooker::listing::{list_source, render};
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::SourceFormat;
use ludus_anim_runtime::Package;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct InspectArgs {
    /// A package (.ludanim), or a source file to list.
    package: PathBuf,
    /// Machine-readable JSON instead of text.
    #[arg(long)]
    json: bool,
    /// The cook report to read retarget records from (default: the
    /// report.json of the output directory holding the package).
    #[arg(long)]
    report: Option<PathBuf>,
    /// The file is a compiled program (.ludprog): print its plan.
    #[arg(long)]
    plan: bool,
}

#[derive(Args)]
pub struct ListArgs {
    /// Source files (glTF, GLB, FBX, BVH, ACL SJSON).
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Keep leaf joints that neither deform nor animate (as `cook` would).
    #[arg(long)]
    keep_unused_leaves: bool,
    /// Machine-readable JSON (an array, one object per file).
    #[arg(long)]
    json: bool,
}

pub fn inspect(a: InspectArgs, out: &Output) -> Exit {
    if a.plan {
        return super::program::dump_file(&a.package, out);
    }
    if SourceFormat::of_path(&a.package).is_some() {
        return list(
            ListArgs {
                files: vec![a.package],
                keep_unused_leaves: false,
                json: a.json,
            },
            out,
        );
    }
    inspect_package(&a.package, a.json, a.report.as_deref(), out)
}

fn inspect_package(path: &Path, json: bool, report: Option<&Path>, out: &Output) -> Exit {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            out.error(format!("{}: cannot read: {e}", path.display()));
            return Exit::Usage;
        }
    };
    let package = match Package::load(&bytes) {
        Ok(p) => p,
        Err(e) => {
            out.error(format!("{}: {e}", path.display()));
            return Exit::Usage;
        }
    };
    let retarget = retarget_info(path, &package, report, out);
    let socket_errors =
        inspect_retarget::report_path(path, report).and_then(|r| inspect_sockets::errors(path, &r));
    if json {
        let mut v = describe_json(&package);
        if let (Some(info), Some(obj)) = (&retarget, v.as_object_mut()) {
            obj.insert("retarget".into(), inspect_retarget::describe_json(info));
        }
        if let (Some(e), Some(obj)) = (&socket_errors, v.as_object_mut()) {
            obj.insert("socket_errors".into(), inspect_sockets::errors_json(e));
        }
        match serde_json::to_string_pretty(&v) {
            Ok(s) => outln!("{s}"),
            Err(e) => {
                out.error(e);
                return Exit::Write;
            }
        }
    } else {
        out!("{}", describe(&package));
        if let Some(info) = &retarget {
            out!("{}", inspect_retarget::describe(info));
        }
        if let Some(e) = &socket_errors {
            out!("{}", inspect_sockets::describe_errors(e));
        }
    }
    Exit::Ok
}

/// The package's retarget records from its cook report; a report given
/// with `--report` that does not describe the package is a warning, one
/// found beside the package is read only if it lists it.
fn retarget_info(
    path: &Path,
    package: &Package<'_>,
    explicit: Option<&Path>,
    out: &Output,
) -> Option<inspect_retarget::RetargetInfo> {
    let report = inspect_retarget::report_path(path, explicit)?;
    match inspect_retarget::find(path, package, &report) {
        Ok(info) => info,
        Err(e) => {
            if explicit.is_some() {
                out.warn(format!("{}: {e}", report.display()));
            }
            None
        }
    }
}

pub fn list(a: ListArgs, out: &Output) -> Exit {
    let options = ImportOptions {
        keep_unused_leaves: a.keep_unused_leaves,
        custom_curves: Vec::new(),
    };
    let mut listings = Vec::new();
    let mut failed = false;
    for f in &a.files {
        match list_source(f, &options) {
            Ok(l) => listings.push(l),
            Err(d) => {
                out.error(&*d);
                failed = true;
            }
        }
    }
    if a.json {
        match serde_json::to_string_pretty(&listings) {
            Ok(s) => outln!("{s}"),
            Err(e) => {
                out.error(e);
                return Exit::Write;
            }
        }
    } else {
        for l in &listings {
            out!("{}", render(l));
        }
    }
    if failed {
        Exit::Usage
    } else {
        Exit::Ok
    }
}
