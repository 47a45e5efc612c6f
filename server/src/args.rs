//! The server's command line (`ludus-anim-server`, also reached as
//! `ludus-anim serve`): the project flags of `cook`, plus where to listen,
//! how to watch and who may ask.

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
    /// place, before it is re-hashed (at most --debounce).
    #[arg(long, value_name = "MS", default_value_t = 40)]
    pub settle: u64,
    /// Seconds between cheap full rescans (stat of every watched file,
    /// manifest globs re-expanded) that heal missed events; 0 disables.
    #[arg(long, value_name = "S", default_value_t = 30)]
    pub rescan: u64,
    /// Generations kept on disk (and their packages).
    #[arg(long, default_value_t = 8)]
    pub keep: usize,
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
    #[error("--keep {0}: must keep at least 2 generations")]
    BadKeep(usize),
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
    pub watch: WatchMode,
    pub debounce: Duration,
    pub settle: Duration,
    pub rescan: Option<Duration>,
    pub keep: usize,
    pub threads: usize,
    pub slow_asset: Option<Duration>,
    pub refuse_watches: bool,
}

impl ServeArgs {
    /// The settings, or why they are refused (before anything starts).
    pub fn settings(&self) -> Result<Settings, ArgsError> {
        let token = self.token_file.as_ref().map(read_token).transpose()?;
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
        if self.keep < 2 {
            return Err(ArgsError::BadKeep(self.keep));
        }
        Ok(Settings {
            addr: self.addr,
            token,
            watch,
            debounce: Duration::from_millis(self.debounce),
            settle: Duration::from_millis(self.settle),
            rescan: (self.rescan > 0).then(|| Duration::from_secs(self.rescan)),
            keep: self.keep,
            threads: self.jobs,
            slow_asset: self.slow_asset_ms.map(Duration::from_millis),
            refuse_watches: self.refuse_watches,
        })
    }
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
