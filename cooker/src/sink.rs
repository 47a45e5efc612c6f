//! Where a cook's outputs go. The pipeline writes packages,
//! `manifest.json` and `report.json` only through a [`Sink`]: an output
//! directory for `cook` (atomic writes through `OUT/.tmp/`), a generation
//! directory for the asset server, or a test double that fails on demand.

use crate::fsutil::OutputDir;
use std::io;

/// Receives output files by path relative to the output root
/// (`packages/x.ludanim`, `manifest.json`, `report.json`).
pub trait Sink: Sync {
    /// Write `rel` so that readers see the old file or the new one, never
    /// part of one.
    fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()>;
    /// Where `rel` lands, for messages.
    fn describe(&self, rel: &str) -> String;
}

impl Sink for OutputDir {
    fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        OutputDir::write(self, rel, bytes)
    }
    fn describe(&self, rel: &str) -> String {
        self.path(rel).display().to_string()
    }
}
