//! The server's command line (`ludus-anim-server`, also reached as
//! `ludus-anim serve`): the project flags of `cook`, plus where to listen,
//! how to watch and who may ask.

use crate::retention::Policy;
use clap::Parser;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

#[derive(Parser, Debug, Clone)]
#[command(
    name = "ludus-anim-server",
    version,
    about = "Serve a cooked project: cook it, watch its files, re-cook what changed and publish immutable generations over HTTP"
)]
pub struct ServeArgs {
    /// Files or directories to cook (as `ludus-anim cook`).
    pub inputs: Vec<PathBuf>,
    /// Project manifest (default: ./ludus-anim.toml when present).
    #[arg(long)]
    pub manifest: Option<PathBuf>,
    /// Output directory: packages/, generations/<n>/, current.
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Default quality profile: standard, hero, crowd, or a .toml path.
    #[arg(long)]
    pub profile: Option<String>,
    /// Stage cache directory (default as `cook`).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Address to listen on. A non-loopback address requires --token-file.
    #[arg(long, default_value = "127.0.0.1:7878")]
    pub addr: SocketAddr,
    /// Poll every MS milliseconds instead of file-system events (network
    /// shares, where inotify delivers nothing).
    #[arg(long, value_name = "MS")]
    pub poll: Option<u64>,
    /// File holding the bearer token every request must carry.
    #[arg(long, value_name = "F")]
    pub token_file: Option<PathBuf>,
    /// Quiet period after a file's last change before it is re-hashed
    /// (editors write in several steps), while it may still be open for
    /// writing.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    pub debounce: u64,
    /// Quiet period after a file was closed after writing, or renamed into
    /// place, before it is re-hashed, when it changed again within
    /// --debounce of its previous change (a burst of saves; at most
    /// --debounce).
    #[arg(long, value_name = "MS", default_value_t = 40)]
    pub settle: u64,
    /// The same quiet period for a file that had been left alone for
    /// --debounce before (one save, whose steps come within a few
    /// milliseconds; at most --settle).
    #[arg(long, value_name = "MS", default_value_t = 5)]
    pub first_settle: u64,
    /// Seconds between cheap full rescans (stat of every watched file,
    /// manifest globs re-expanded) that heal missed events; 0 disables.
    #[arg(long, value_name = "S", default_value_t = 30)]
    pub rescan: u64,
    /// How long a newly appearing source must have been left alone (no
    /// write for this long) before it becomes an asset: exporters write a
    /// file, then rename or delete it.
    #[arg(long, value_name = "MS", default_value_t = 500)]
    pub new_asset_settle: u64,
    /// The newest generations kept on disk (with their packages), besides
    /// pinned and leased ones.
    #[arg(long, default_value_t = 8)]
    pub keep: usize,
    /// Also keep generations superseded less than S seconds ago (0: only
    /// --keep counts).
    #[arg(long, value_name = "S", default_value_t = 0)]
    pub keep_within: u64,
    /// Remove the oldest kept generations (never the current, pinned or
    /// leased ones) until the kept ones' files and packages fit in MB
    /// megabytes (0: no limit).
    #[arg(long, value_name = "MB", default_value_t = 0)]
    pub keep_max_mb: u64,
    /// A host name (or IP) requests may name in `Host` and `Origin`, besides
    /// the loopback names and the --addr IP; repeatable; `*` allows any.
    #[arg(long = "allow-host", value_name = "NAME")]
    pub allow_hosts: Vec<String>,
    /// Remote cache base URL, as `ludus-anim cook --remote-cache`.
    #[arg(long = "remote-cache", value_name = "URL")]
    pub remote_cache: Option<String>,
    /// `read` (default) or `read-write`, as `cook --remote-cache-mode`.
    #[arg(long = "remote-cache-mode", value_enum, value_name = "MODE")]
    pub remote_cache_mode: Option<ludus_anim_cooker::manifest::RemoteMode>,
    /// Credentials, as `cook --remote-cache-auth` (bearer-file:PATH, ...).
    #[arg(long = "remote-cache-auth", value_name = "SPEC")]
    pub remote_cache_auth: Option<String>,
    /// Entry signing secret, as `cook --remote-cache-signing` (file:PATH
    /// or env:NAME).
    #[arg(long = "remote-cache-signing", value_name = "SPEC")]
    pub remote_cache_signing: Option<String>,
    /// Worker threads for cooks (0: one per core).
    #[arg(short, long, default_value_t = 0)]
    pub jobs: usize,
    /// Test hook: sleep this long at the start of every asset's cook, so a
    /// test can act while a cook is in flight.
    #[arg(long = "debug-slow-asset-ms", hide = true)]
    pub slow_asset_ms: Option<u64>,
    /// Test hook: refuse every file-system watch, as a full inotify table
    /// does, to exercise the fallback to polling.
    #[arg(long = "debug-refuse-watches", hide = true)]
    pub refuse_watches: bool,
    /// Test hook: while this file exists, writing a generation fails as a
    /// full disk does.
    #[arg(long = "debug-fail-publish", hide = true, value_name = "FILE")]
    pub fail_publish: Option<PathBuf>,
}

/// Why the server refuses to start.
#[derive(Debug, thiserror::Error)]
pub enum ArgsError {
    #[error("--addr {0} is not a loopback address: pass --token-file so that every request must carry a bearer token")]
    TokenRequired(SocketAddr),
    #[error("--token-file {path}: cannot read: {source}")]
    TokenUnreadable {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("--token-file {0}: the token is empty or shorter than 16 characters")]
    TokenTooShort(String),
    #[error("--poll {0}: must be between 10 and 600000 milliseconds")]
    BadPoll(u64),
    #[error("--debounce {0}: must be at most 60000 milliseconds")]
    BadDebounce(u64),
    #[error("--settle {0}: must be at most --debounce ({1} ms)")]
    BadSettle(u64, u64),
    #[error("--first-settle {0}: must be at most --settle ({1} ms)")]
    BadFirstSettle(u64, u64),
    #[error("--keep {0}: must keep at least 2 generations")]
    BadKeep(usize),
    #[error("--new-asset-settle {0}: must be at most 60000 milliseconds")]
    BadNewAssetSettle(u64),
}

/// How the server watches for changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WatchMode {
    /// File-system events (inotify and friends).
    Events,
    /// Stat every watched file at this interval.
    Poll(Duration),
}

/// Checked settings.
#[derive(Clone, Debug)]
pub struct Settings {
    pub addr: SocketAddr,
    pub token: Option<String>,
    /// What to tell the person about the settings (a token file others can
    /// read).
    pub warnings: Vec<String>,
    /// Host names `Host` and `Origin` may carry (`None`: any).
    pub hosts: Option<Vec<String>>,
    pub new_asset_settle: Duration,
    pub fail_publish: Option<PathBuf>,
    pub watch: WatchMode,
    pub debounce: Duration,
    pub settle: Duration,
    pub first_settle: Duration,
    pub rescan: Option<Duration>,
    pub retention: Policy,
    pub threads: usize,
    pub slow_asset: Option<Duration>,
    pub refuse_watches: bool,
}

impl ServeArgs {
    /// The settings, or why they are refused (before anything starts).
    pub fn settings(&self) -> Result<Settings, ArgsError> {
        let token = self.token_file.as_ref().map(read_token).transpose()?;
        let mut warnings: Vec<String> = self.token_file.iter().filter_map(exposed).collect();
        if !self.addr.ip().is_loopback() && self.allow_hosts.is_empty() {
            warnings.push(format!(
                "--addr {}: requests must name localhost or this address in Host; pass --allow-host NAME for each name clients use",
                self.addr
            ));
        }
        if token.is_none() && !self.addr.ip().is_loopback() {
            return Err(ArgsError::TokenRequired(self.addr));
        }
        let watch = match self.poll {
            Some(ms) if !(10..=600_000).contains(&ms) => return Err(ArgsError::BadPoll(ms)),
            Some(ms) => WatchMode::Poll(Duration::from_millis(ms)),
            None => WatchMode::Events,
        };
        if self.debounce > 60_000 {
            return Err(ArgsError::BadDebounce(self.debounce));
        }
        if self.settle > self.debounce {
            return Err(ArgsError::BadSettle(self.settle, self.debounce));
        }
        if self.first_settle > self.settle {
            return Err(ArgsError::BadFirstSettle(self.first_settle, self.settle));
        }
        if self.keep < 2 {
            return Err(ArgsError::BadKeep(self.keep));
        }
        if self.new_asset_settle > 60_000 {
            return Err(ArgsError::BadNewAssetSettle(self.new_asset_settle));
        }
        Ok(Settings {
            addr: self.addr,
            token,
            warnings,
            hosts: self.hosts(),
            new_asset_settle: Duration::from_millis(self.new_asset_settle),
            fail_publish: self.fail_publish.clone(),
            watch,
            debounce: Duration::from_millis(self.debounce),
            settle: Duration::from_millis(self.settle),
            first_settle: Duration::from_millis(self.first_settle),
            rescan: (self.rescan > 0).then(|| Duration::from_secs(self.rescan)),
            retention: Policy {
                keep: self.keep,
                within: (self.keep_within > 0).then(|| Duration::from_secs(self.keep_within)),
                max_bytes: (self.keep_max_mb > 0).then(|| self.keep_max_mb.saturating_mul(1 << 20)),
            },
            threads: self.jobs,
            slow_asset: self.slow_asset_ms.map(Duration::from_millis),
            refuse_watches: self.refuse_watches,
        })
    }
}

impl ServeArgs {
    /// The names `Host` may carry: loopback names, the --addr IP when it
    /// names one interface, and --allow-host; `None` with `--allow-host *`.
    fn hosts(&self) -> Option<Vec<String>> {
        if self.allow_hosts.iter().any(|h| h == "*") {
            return None;
        }
        let mut v: Vec<String> = ["localhost", "127.0.0.1", "[::1]"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let ip = self.addr.ip();
        if !ip.is_unspecified() && !ip.is_loopback() {
            v.push(match ip {
                std::net::IpAddr::V6(a) => format!("[{a}]"),
                std::net::IpAddr::V4(a) => a.to_string(),
            });
        }
        v.extend(self.allow_hosts.iter().map(|h| h.to_ascii_lowercase()));
        Some(v)
    }

    /// The remote cache flags, for project resolution.
    pub fn remote(&self) -> ludus_anim_cooker::remote::RemoteArgs {
        ludus_anim_cooker::remote::RemoteArgs {
            url: self.remote_cache.clone(),
            mode: self.remote_cache_mode,
            auth: self.remote_cache_auth.clone(),
            signing: self.remote_cache_signing.clone(),
        }
    }
}

/// A warning when the token file can be read or written by other users.
#[cfg(unix)]
fn exposed(path: &PathBuf) -> Option<String> {
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(path).ok()?.permissions().mode() & 0o777;
    (mode & 0o077 != 0).then(|| {
        format!(
            "--token-file {}: other users can read it (mode {mode:o}); run chmod 600 on it",
            path.display()
        )
    })
}

#[cfg(not(unix))]
fn exposed(_path: &PathBuf) -> Option<String> {
    None
}

fn read_token(path: &PathBuf) -> Result<String, ArgsError> {
    let text = std::fs::read_to_string(path).map_err(|source| ArgsError::TokenUnreadable {
        path: path.display().to_string(),
        source,
    })?;
    let token = text.trim().to_string();
    if token.len() < 16 {
        return Err(ArgsError::TokenTooShort(path.display().to_string()));
    }
    Ok(token)
}
