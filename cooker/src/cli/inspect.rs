//! `ludus-anim inspect PACKAGE` and `ludus-anim list SOURCE...`.

use super::output::Output;
use super::Exit;
use clap::Args;
use ludus_anim_cooker::inspect::{describe, describe_json};
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
    inspect_package(&a.package, a.json, out)
}

fn inspect_package(path: &Path, json: bool, out: &Output) -> Exit {
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
    if json {
        match serde_json::to_string_pretty(&describe_json(&package)) {
            Ok(s) => println!("{s}"),
            Err(e) => {
                out.error(e);
                return Exit::Write;
            }
        }
    } else {
        print!("{}", describe(&package));
    }
    Exit::Ok
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
            Ok(s) => println!("{s}"),
            Err(e) => {
                out.error(e);
                return Exit::Write;
            }
        }
    } else {
        for l in &listings {
            print!("{}", render(l));
        }
    }
    if failed {
        Exit::Usage
    } else {
        Exit::Ok
    }
}
