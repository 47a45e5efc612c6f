//! Remote cache settings.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::auth::{AuthSpec, CredentialSource};
use crate::error::RemoteError;
use crate::url::BaseUrl;

/// Whether this process may write to the remote cache.
///
/// Studios typically let CI write (`read-write`) and artists' machines only
/// read (`read`), so one machine with odd local changes cannot publish
/// entries every other machine then trusts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Mode {
    /// Download hits; never PUT.
    #[default]
    Read,
    /// Download hits and upload what this process computed.
    ReadWrite,
}

impl Mode {
    /// The spelling the CLI and manifest use.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Read => "read",
            Mode::ReadWrite => "read-write",
        }
    }

    pub fn writes(self) -> bool {
        self == Mode::ReadWrite
    }
}

impl fmt::Display for Mode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for Mode {
    type Err = String;

    fn from_str(s: &str) -> Result<Mode, String> {
        match s {
            "read" => Ok(Mode::Read),
            "read-write" => Ok(Mode::ReadWrite),
            other => Err(format!(
                "unknown remote cache mode {other:?}; expected \"read\" or \"read-write\""
            )),
        }
    }
}

/// Default connect timeout. Short on purpose: a cache server is on the
/// studio network or a cloud region away; a server that takes longer to
/// accept a connection is treated as down (once, see the crate docs).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Default limit on waiting for the server: for the response headers, and
/// for each read of the body.
pub const DEFAULT_IO_TIMEOUT: Duration = Duration::from_secs(10);
/// Default limit on waiting for a lookup's (`GET`, `HEAD`) response
/// headers. A healthy cache answers in milliseconds; one that takes a
/// second to start answering is slower than cooking most assets, so the
/// lookup times out and the remote is off for the run (one notice) rather
/// than costing seconds per entry. Slow links raise it with the I/O
/// timeout (`with_timeouts`).
pub const DEFAULT_LOOKUP_TIMEOUT: Duration = Duration::from_secs(1);
/// Default limit on how long a cook waits for a lookup's answer while
/// the server answers nothing else either. Lookups run in the background
/// (several at once, issued as soon as a key is known); when the value is
/// needed and no answer has come within this limit, the cook computes it
/// locally and the remote is off for the rest of the run (one notice with
/// the measured latency). A healthy cache answers in milliseconds; 0.2 s
/// keeps a slow server from making even a sub-second cook twice as long.
pub const DEFAULT_LOOKUP_WAIT: Duration = Duration::from_millis(200);
/// Default number of lookups in flight at once.
pub const DEFAULT_LOOKUP_THREADS: usize = 8;
/// Default limit on one whole request, so a server trickling a body byte by
/// byte cannot hold a worker forever.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(120);

/// How much of a run may be spent waiting for lookups: `floor` plus
/// `share` of the time the run spent doing anything else. A cook that
/// cooks for 100 ms with share 0.5 waits at most 50 ms (plus the floor)
/// in all, so a slow server costs at most half again a cold cook, however
/// short the cook; a healthy server answers well within the floor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct WaitBudget {
    pub floor: Duration,
    pub share: f64,
}

/// Everything [`RemoteCache::open`](crate::RemoteCache::open) needs.
/// Debug output shows no secret (credentials are only a [`AuthSpec`]: a
/// path or a variable name).
#[derive(Clone, Debug)]
pub struct RemoteConfig {
    pub url: BaseUrl,
    pub mode: Mode,
    pub auth: Option<AuthSpec>,
    /// The per-writer signing secret (`signing.rs`): uploads are signed
    /// with it, and only downloads signed with it are used. `None`:
    /// uploads are unsigned and downloads are used signed or not.
    pub signing: Option<CredentialSource>,
    /// TCP connect limit ([`DEFAULT_CONNECT_TIMEOUT`]).
    pub connect_timeout: Duration,
    /// Wait for a lookup's response headers ([`DEFAULT_LOOKUP_TIMEOUT`];
    /// never more than `io_timeout`).
    pub lookup_timeout: Duration,
    /// How long a cook waits for a lookup's answer from a server that
    /// answers nothing else meanwhile ([`DEFAULT_LOOKUP_WAIT`]).
    pub lookup_wait: Duration,
    /// Lookups in flight at once ([`DEFAULT_LOOKUP_THREADS`]).
    pub lookup_threads: usize,
    /// How much of the run all waits together may take (`None`: each wait
    /// is bounded by `lookup_wait` alone). A cook sets it so a slow server
    /// costs a share of the cook's own time, however short the cook.
    pub wait_budget: Option<WaitBudget>,
    /// Wait for the response, and each body read ([`DEFAULT_IO_TIMEOUT`]).
    pub io_timeout: Duration,
    /// Whole-request limit ([`DEFAULT_REQUEST_TIMEOUT`]).
    pub request_timeout: Duration,
    /// Larger downloads are refused (a miss with a notice), so a wrong
    /// object on the server cannot exhaust memory. Default 1 GiB.
    pub max_entry_bytes: u64,
    /// Write-behind queue length in entries; a put beyond it is dropped and
    /// counted rather than slowing the cook. Default 1024.
    pub queue_entries: usize,
    /// Write-behind queue limit in bytes (entries waiting, not yet sent).
    /// Default 256 MiB.
    pub queue_bytes: u64,
    /// Background upload threads. Uploads are latency bound, so two keep a
    /// WAN link busier than one without competing with the cook for the
    /// CPU. Default 2.
    pub upload_threads: usize,
    /// Most notices kept; later ones are counted in one closing line.
    /// Default 32.
    pub max_notices: usize,
}

impl RemoteConfig {
    /// Defaults for everything but the URL.
    pub fn new(url: BaseUrl) -> RemoteConfig {
        RemoteConfig {
            url,
            mode: Mode::Read,
            auth: None,
            signing: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            lookup_timeout: DEFAULT_LOOKUP_TIMEOUT,
            lookup_wait: DEFAULT_LOOKUP_WAIT,
            lookup_threads: DEFAULT_LOOKUP_THREADS,
            wait_budget: None,
            io_timeout: DEFAULT_IO_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            max_entry_bytes: 1 << 30,
            queue_entries: 1024,
            queue_bytes: 256 << 20,
            upload_threads: 2,
            max_notices: 32,
        }
    }

    /// [`RemoteConfig::new`] from a URL string.
    pub fn parse(url: &str) -> Result<RemoteConfig, RemoteError> {
        Ok(RemoteConfig::new(BaseUrl::parse(url)?))
    }

    pub fn with_mode(mut self, mode: Mode) -> RemoteConfig {
        self.mode = mode;
        self
    }

    pub fn with_auth(mut self, auth: Option<AuthSpec>) -> RemoteConfig {
        self.auth = auth;
        self
    }

    /// Sets the connect and I/O timeouts (tests and very slow links); the
    /// lookup timeout follows the I/O timeout.
    pub fn with_timeouts(mut self, connect: Duration, io: Duration) -> RemoteConfig {
        self.connect_timeout = connect;
        self.io_timeout = io;
        self.lookup_timeout = io;
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_parse_and_print() {
        for mode in [Mode::Read, Mode::ReadWrite] {
            assert_eq!(mode.as_str().parse::<Mode>(), Ok(mode));
        }
        assert!("write".parse::<Mode>().is_err());
        assert!(!Mode::default().writes(), "read is the safe default");
    }
}
