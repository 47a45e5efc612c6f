//! Where a cook's outputs go. The pipeline writes packages as assets
//! finish and then publishes `report.json` and `manifest.json` only
//! through a [`Sink`]: a staged output directory for `cook` and `merge`
//! (`crate::publish`: the outputs of one cook appear together or not at
//! all), the asset server's generations, or a test double that fails on
//! demand.

use crate::pipeline::sidecar_doc::NamedPart;
use std::io;

/// Receives output files by path relative to the output root
/// (`packages/x.ludanim`, `manifest.json`, `report.json`).
pub trait Sink: Sync {
    /// Write (or stage) the package file `rel`. Nothing written here may
    /// be visible as part of a cook's outputs before [`Sink::publish`].
    fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()>;
    /// Where `rel` lands, for messages.
    fn describe(&self, rel: &str) -> String;
    /// Publish everything written so far together with the cook's index
    /// files, in the order given (the manifest last); after an error the
    /// previous outputs are still what readers see, or the publication is
    /// completed by the next process that publishes into the same place.
    fn publish(&self, index: &[(&str, &[u8])]) -> Result<(), PublishError>;
    /// The cook's dashboard sidecar parts (one per asset, serialized
    /// once), before they are joined into `report-sidecar.json` for
    /// [`Sink::publish`]. A sink that assembles its own sidecar over
    /// several cooks (the asset server: one document for the whole
    /// project, whatever the last cook touched) keeps them and returns
    /// `None`. The default hands them back.
    fn take_sidecar(&self, parts: Vec<NamedPart>) -> Option<Vec<NamedPart>> {
        Some(parts)
    }
    /// Publish the file already at `rel` unchanged if it starts with
    /// `header` (which names its content), instead of a rebuilt copy;
    /// `false`: it does not, or this sink cannot keep files.
    fn keep_published(&self, _rel: &str, _header: &[u8]) -> bool {
        false
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PublishError {
    /// Staging failed: nothing was published.
    #[error(
        "cannot write {path}: {source}; nothing was published (the previous outputs are unchanged)"
    )]
    Stage {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error(
        "cannot lock {path}: {source}; nothing was published (the previous outputs are unchanged)"
    )]
    Lock {
        path: String,
        #[source]
        source: io::Error,
    },
    /// Renaming into place stopped part way: the next cook publishing into
    /// `out` (or `ludus-anim prune`) completes it.
    #[error("publishing into {out} stopped part way: {source}; the next cook into it or `ludus-anim prune {out}` completes it")]
    Apply {
        out: String,
        #[source]
        source: io::Error,
    },
}
