//! `ludus-anim cache stats|gc|push|verify`.

use super::output::Output;
use super::Exit;
use crate::cli::output::outln;
use clap::{Args, Subcommand};
use ludus_anim_cache::Store;
use ludus_anim_cooker::manifest::RemoteMode;
use ludus_anim_cooker::project::default_cache_dir;
use ludus_anim_cooker::remote::{self, RemoteArgs};
use ludus_anim_remote_cache::RemoteCache;
use rayon::prelude::*;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

#[derive(Args)]
pub struct CacheArgs {
    #[command(subcommand)]
    action: CacheAction,
    /// Cache directory (default: LUDUS_ANIM_CACHE, else per-user).
    #[arg(long, global = true)]
    cache: Option<PathBuf>,
}

#[derive(Subcommand)]
enum CacheAction {
    /// Entries, bytes, and the ages of the least and most recently used
    /// entries. A missing cache directory is reported, not created.
    Stats,
    /// Evict least-recently-used entries until the cache fits.
    Gc {
        /// Size bound: a number of bytes, or with a suffix: K, M, G, T
        /// (and KiB, MiB, GiB, TiB) are powers of 1024; KB, MB, GB, TB are
        /// powers of 1000. E.g. 500M, 2G, 2GB, 1.5GiB, 1048576.
        #[arg(long)]
        max_size: String,
    },
    /// Upload every local entry the remote cache lacks (HEAD, then PUT):
    /// fills a new, wiped or evicted server from a warm cache. The remote
    /// settings come from these flags or the LUDUS_ANIM_REMOTE_CACHE*
    /// variables, as for `cook`.
    Push {
        /// Base URL of the remote cache.
        #[arg(long = "remote-cache", value_name = "URL")]
        url: Option<String>,
        /// Credentials: bearer-file:PATH, bearer-env:NAME, basic-file:PATH
        /// or basic-env:NAME (never printed).
        #[arg(long = "remote-cache-auth", value_name = "SPEC")]
        auth: Option<String>,
        /// Entry signing secret: file:PATH or env:NAME; entries are
        /// uploaded signed with it.
        #[arg(long = "remote-cache-signing", value_name = "SPEC")]
        signing: Option<String>,
    },
    /// Re-cook a sample of the project's assets here, from scratch, and
    /// compare every entry with the remote cache's under the same key
    /// (entries are deterministic, so any difference is a disagreement).
    /// Prints each disagreement (key, stage, asset, field); exit 1 if
    /// there is one. Reads the remote only.
    Verify(super::cache_verify::VerifyArgs),
}

pub fn run(a: CacheArgs, out: &Output) -> Exit {
    if let CacheAction::Verify(v) = a.action {
        return super::cache_verify::run(v, out);
    }
    let dir = a.cache.unwrap_or_else(default_cache_dir);
    if !dir.is_dir() {
        if matches!(a.action, CacheAction::Stats) {
            outln!("cache {}: does not exist (nothing cached)", dir.display());
            return Exit::Ok;
        }
        out.error(format!("cache {} does not exist", dir.display()));
        return Exit::Usage;
    }
    let store = match Store::open(&dir) {
        Ok(s) => s,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    match a.action {
        CacheAction::Stats => stats(&store, out),
        CacheAction::Gc { max_size } => gc(&store, &max_size, out),
        CacheAction::Push { url, auth, signing } => {
            let flags = RemoteArgs {
                url,
                mode: Some(RemoteMode::ReadWrite),
                auth,
                signing,
            };
            push(&store, &flags, out)
        }
        CacheAction::Verify(_) => Exit::Usage,
    }
}

/// Every local entry the remote lacks, uploaded (a few at a time: the
/// requests are latency bound).
fn push(store: &Store, flags: &RemoteArgs, out: &Output) -> Exit {
    let env = |name: &str| std::env::var(name).ok();
    let config = match remote::resolve(flags, &env, None, Path::new(".")) {
        Ok(Some(c)) => c,
        Ok(None) => {
            out.error(format!(
                "cache push needs a remote cache: --remote-cache URL or {}",
                remote::ENV_URL
            ));
            return Exit::Usage;
        }
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let cache = match RemoteCache::open(config) {
        Ok(c) => c,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let keys = match store.keys() {
        Ok(k) => k,
        Err(e) => {
            out.error(e);
            return Exit::Usage;
        }
    };
    let (sent, present, failed) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let count = |c: &AtomicU64| c.fetch_add(1, Ordering::Relaxed);
    let pool = rayon::ThreadPoolBuilder::new().num_threads(4).build();
    let work = || {
        keys.par_iter().for_each(|k| match cache.contains(k) {
            _ if cache.is_disabled() => {}
            Ok(true) => _ = count(&present),
            Ok(false) => match store.get(k) {
                Ok(Some(v)) if cache.upload_now(k, &v, "push").is_ok() => _ = count(&sent),
                Ok(None) => {}
                _ => _ = count(&failed),
            },
            Err(_) => _ = count(&failed),
        })
    };
    match pool {
        Ok(p) => p.install(work),
        Err(_) => work(),
    }
    for n in cache.take_notices() {
        out.warn(n);
    }
    let (sent, present, failed) = (sent.into_inner(), present.into_inner(), failed.into_inner());
    outln!(
        "pushed {sent} of {} entries to {} ({present} already there, {failed} failed)",
        keys.len(),
        cache.url()
    );
    if failed > 0 || cache.is_disabled() {
        return Exit::Write;
    }
    Exit::Ok
}

fn stats(store: &Store, out: &Output) -> Exit {
    match store.stats() {
        Ok(s) => {
            outln!(
                "cache {}: {} entries, {} bytes",
                store.dir().display(),
                s.entries,
                s.total_bytes
            );
            if let (Some(old), Some(new)) = (s.oldest_use, s.newest_use) {
                outln!(
                    "  least recently used {} ago, most recently used {} ago",
                    age(old),
                    age(new)
                );
            }
            if s.temp_files > 0 {
                outln!(
                    "  {} temp files ({} bytes) from writes in progress or killed writers",
                    s.temp_files,
                    s.temp_bytes
                );
            }
            Exit::Ok
        }
        Err(e) => {
            out.error(e);
            Exit::Write
        }
    }
}

/// `3 d`, `5 h`, `12 min`, `40 s`.
fn age(t: SystemTime) -> String {
    let s = t.elapsed().map_or(0, |d| d.as_secs());
    match s {
        0..=119 => format!("{s} s"),
        120..=7199 => format!("{} min", s / 60),
        7200..=172_799 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86_400),
    }
}

fn gc(store: &Store, max_size: &str, out: &Output) -> Exit {
    let Some(limit) = parse_size(max_size) else {
        out.error(format!(
            "--max-size '{max_size}' is not a size (e.g. 500M, 2G, 2GB, 1.5GiB)"
        ));
        return Exit::Usage;
    };
    match store.gc(limit) {
        Ok(r) => {
            outln!(
                "evicted {} entries ({} bytes), removed {} stale temp files; {} entries ({} bytes) remain",
                r.evicted.len(),
                r.evicted_bytes,
                r.stale_temps_removed.len(),
                r.remaining_entries,
                r.remaining_bytes
            );
            Exit::Ok
        }
        Err(e) => {
            out.error(e);
            Exit::Write
        }
    }
}

/// Bytes from `500M`, `2G`, `2GB`, `1.5GiB`, `1048576` (see `--max-size`).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let mul: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kib" => 1024.0,
        "m" | "mib" => 1024f64.powi(2),
        "g" | "gib" => 1024f64.powi(3),
        "t" | "tib" => 1024f64.powi(4),
        "kb" => 1e3,
        "mb" => 1e6,
        "gb" => 1e9,
        "tb" => 1e12,
        _ => return None,
    };
    let v: f64 = num.trim().parse().ok()?;
    let bytes = v * mul;
    (v.is_finite() && v >= 0.0 && bytes < u64::MAX as f64).then_some(bytes as u64)
}

#[cfg(test)]
mod tests {
    use super::parse_size;

    #[test]
    fn sizes_parse_in_every_common_spelling() {
        assert_eq!(parse_size("1048576"), Some(1 << 20));
        assert_eq!(parse_size("2G"), Some(2 << 30));
        assert_eq!(parse_size("2g"), Some(2 << 30));
        assert_eq!(parse_size("2GiB"), Some(2 << 30));
        assert_eq!(parse_size("2GB"), Some(2_000_000_000));
        assert_eq!(parse_size("1.5 M"), Some(3 << 19));
        assert_eq!(parse_size("500MB"), Some(500_000_000));
        assert_eq!(parse_size("10B"), Some(10));
        assert_eq!(parse_size("2X"), None);
        assert_eq!(parse_size("-1G"), None);
        assert_eq!(parse_size("G"), None);
    }
}
