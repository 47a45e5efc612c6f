//! Per-asset isolation, the last line of defence: a panic anywhere in one
//! asset's cook (a bug of ours, or a dependency's panic that no importer
//! contained) becomes that asset's failure, with an `internal_panic`
//! diagnostic naming the file and the panic's message; the other assets
//! cook on and the report is written.
//!
//! Why unwinding past the shared state is sound (`AssertUnwindSafe`): an
//! asset's work owns its report, snapshot and budget, which are dropped
//! with the panic. What it shares through [`Cook`] is the stage cache
//! (every entry written whole, by temp file and rename, so a panic leaves
//! an entry or none; its counters and notices are behind mutexes whose
//! poisoning is tolerated), the observer (events only) and the source
//! reader (reads only). A panic inside a clip's parallel job reaches the
//! asset's job through rayon, which re-raises it there.

use super::asset::{cook_asset, AssetResult};
use super::Cook;
use crate::manifest::AssetJob;
use crate::report::AssetReport;
use std::any::Any;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// The diagnostic code of an asset whose cook panicked.
pub const PANIC_CODE: &str = "internal_panic";

/// [`cook_asset`], with a panic turned into a failed asset.
pub(crate) fn cook_asset_isolated(job: &AssetJob, cx: &Cook<'_>) -> AssetResult {
    match catch_unwind(AssertUnwindSafe(|| cook_asset(job, cx))) {
        Ok(r) => r,
        Err(payload) => panicked(job, cx, payload.as_ref()),
    }
}

fn panicked(job: &AssetJob, cx: &Cook<'_>, payload: &(dyn Any + Send)) -> AssetResult {
    let file = cx.options.recorded_path(&job.path);
    let message = format!(
        "internal error while cooking this asset (a bug in ludus-anim; please report it with this file): panicked: {}",
        payload_text(payload)
    );
    let format = ludus_anim_model::SourceFormat::of_path(&job.path)
        .map_or("unknown", ludus_anim_model::SourceFormat::name)
        .to_string();
    let report = AssetReport::failed(
        file.clone(),
        String::new(),
        format,
        (PANIC_CODE, message, Some(file)),
    );
    AssetResult {
        report,
        package: None,
        manifest: None,
        sidecar: super::sidecar_doc::AssetSidecar::None,
    }
}

/// A panic's message: the `&str` or `String` it was raised with.
fn payload_text(payload: &(dyn Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "(a panic without a message)".to_string()
    }
}
