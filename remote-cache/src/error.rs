//! Remote cache errors. None of them is ever fatal to a cook: a failed
//! download is a miss, a failed upload an entry not shared. Messages name
//! the URL (which never carries credentials, see [`crate::BaseUrl`]) and
//! never a header value.

use ludus_anim_cache::{CorruptReason, Key};

/// Everything that can go wrong talking to a remote cache.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The `--remote-cache` URL cannot be used.
    #[error("remote cache URL {url:?}: {reason}")]
    InvalidUrl { url: String, reason: String },

    /// Credentials could not be read. `from` names the file or environment
    /// variable, never its contents.
    #[error("remote cache credentials from {from}: {reason}")]
    Credentials { from: String, reason: String },

    /// No connection could be made (refused, unreachable, unknown host).
    /// Disables the remote for the rest of the process.
    #[error("remote cache {url} unreachable: {detail}")]
    Unreachable { url: String, detail: String },

    /// A configured timeout expired (connect, waiting for the response, or
    /// the transfer). Disables the remote for the rest of the process.
    #[error("remote cache {url} timed out ({phase})")]
    Timeout { url: String, phase: String },

    /// The connection broke or the server spoke broken HTTP mid-request.
    #[error("remote cache {method} {url} failed: {detail}")]
    Transfer {
        method: &'static str,
        url: String,
        detail: String,
    },

    /// The server answered with a status the protocol does not expect
    /// (5xx, 401/403, ...).
    #[error("remote cache {method} {url} answered HTTP {status}")]
    Status {
        method: &'static str,
        url: String,
        status: u16,
    },

    /// The downloaded object failed the cache entry check: it is not used.
    #[error(
        "remote cache entry {key} at {url} is corrupt ({reason}); ignored, it will be recomputed"
    )]
    Corrupt {
        key: Key,
        url: String,
        reason: CorruptReason,
    },

    /// The object is intact but not signed by the configured signing
    /// secret (unsigned, or signed with another): it is not used.
    #[error("remote cache entry {key} at {url} is {why}; ignored, it will be recomputed")]
    Untrusted {
        key: Key,
        url: String,
        why: &'static str,
    },

    /// The object is larger than [`crate::RemoteConfig::max_entry_bytes`].
    #[error("remote cache entry at {url} is larger than the {limit}-byte limit; ignored")]
    TooLarge { url: String, limit: u64 },
}

impl RemoteError {
    /// Whether this error means the server cannot be reached in useful
    /// time, so that trying again for every entry would only add timeouts.
    pub fn disables_remote(&self) -> bool {
        matches!(
            self,
            RemoteError::Unreachable { .. } | RemoteError::Timeout { .. }
        )
    }
}
