//! Store errors. Every message names the path involved, so a build-farm log
//! line is actionable on its own.

use std::fmt;
use std::io;
use std::path::PathBuf;

use crate::key::Key;

/// Everything that can go wrong in the store.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    /// An operating-system I/O error; `op` says what the store was doing.
    #[error("cache: {op} {}: {source}", path.display())]
    Io {
        op: &'static str,
        path: PathBuf,
        #[source]
        source: io::Error,
    },

    /// The directory belongs to a store with another layout version (or to
    /// something else entirely). The store refuses it rather than mixing
    /// formats; point the cooker at another directory or delete this one.
    #[error(
        "cache directory {} has layout {found:?} in {}, but this build uses {expected:?}; \
         use a different cache directory or delete this one",
        dir.display(),
        version_file.display()
    )]
    LayoutMismatch {
        dir: PathBuf,
        version_file: PathBuf,
        found: String,
        expected: String,
    },

    /// A corrupted entry was found by [`Store::get`](crate::Store::get).
    ///
    /// This is a *healed* condition when `healed` is true: the bad file has
    /// already been removed, so the caller should log this error (its
    /// message says "healed") and treat it as a miss — recompute and `put`.
    /// Use [`CacheError::is_healed_corruption`] to tell it apart from real
    /// failures.
    #[error(
        "cache: corrupted entry {key} at {}: {reason}; {}",
        path.display(),
        heal_note(*.healed)
    )]
    Corrupt {
        key: Key,
        path: PathBuf,
        reason: CorruptReason,
        /// The corrupted file was removed (by us, or concurrently by another
        /// process). False only if removing it failed; then the next `get`
        /// will report it again.
        healed: bool,
    },

    /// A backend other than the local directory (a remote cache) failed, or
    /// sent an entry that failed [`check_entry`](crate::check_entry). Never
    /// fatal: the caller treats it as a miss (get) or as "not stored" (put).
    /// `backend` names it without credentials, e.g. `remote cache
    /// http://cache:8080/ludus`.
    #[error("{backend}: {source}")]
    Backend {
        backend: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
}

fn heal_note(healed: bool) -> &'static str {
    if healed {
        "entry removed (healed); recompute it"
    } else {
        "removing it failed, it will be reported again"
    }
}

impl CacheError {
    /// True for [`CacheError::Corrupt`] with the bad entry already removed:
    /// the caller should log it and proceed as on a miss.
    pub fn is_healed_corruption(&self) -> bool {
        matches!(self, CacheError::Corrupt { healed: true, .. })
    }

    pub(crate) fn io(op: &'static str, path: impl Into<PathBuf>, source: io::Error) -> Self {
        CacheError::Io {
            op,
            path: path.into(),
            source,
        }
    }
}

/// Why an entry file was judged corrupt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CorruptReason {
    /// Shorter than the fixed header (includes an empty file).
    TruncatedHeader { len: u64 },
    /// The file does not start with the entry magic.
    BadMagic,
    /// The header carries another layout version than the store's.
    EntryVersion { found: u32 },
    /// Reserved header flags are set.
    UnknownFlags { flags: u32 },
    /// The header names another key than the file name does.
    KeyMismatch { found: Key },
    /// File size disagrees with the header's payload length (truncated, or
    /// trailing bytes).
    LengthMismatch { expected: u64, actual: u64 },
    /// The payload's blake3 differs from the header's.
    HashMismatch,
}

impl fmt::Display for CorruptReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CorruptReason::TruncatedHeader { len } => {
                write!(f, "{len} bytes, shorter than the entry header")
            }
            CorruptReason::BadMagic => f.write_str("bad magic (not a cache entry)"),
            CorruptReason::EntryVersion { found } => {
                write!(
                    f,
                    "entry layout version {found}, expected {}",
                    crate::LAYOUT_VERSION
                )
            }
            CorruptReason::UnknownFlags { flags } => write!(f, "unknown header flags {flags:#x}"),
            CorruptReason::KeyMismatch { found } => write!(f, "header names key {found}"),
            CorruptReason::LengthMismatch { expected, actual } => write!(
                f,
                "payload is {actual} bytes but the header says {expected} (truncated or extended)"
            ),
            CorruptReason::HashMismatch => f.write_str("payload checksum mismatch"),
        }
    }
}
