//! The build farm's remote cache in the cooker: the settings a person
//! gives (flags > environment > manifest, resolved by `project`), and the
//! [`CacheBackend`] over `ludus-anim-remote-cache`'s [`Tiered`] (local
//! store, then remote, then compute; write-behind uploads flushed, bounded,
//! before the report is written). Protocol and failure policy:
//! `docs/remote-cache.md`.

use crate::manifest::{RemoteCacheEntry, RemoteMode};
use crate::stage::Stage;
use crate::stage_cache::{CacheBackend, Tier};
use ludus_anim_cache::{Backend, CacheError, Key, Store};
use ludus_anim_remote_cache::{
    parse_signing_source, AuthSpec, CredentialSource, Lookup, Mode, RemoteCache, RemoteConfig,
    RemoteError, RemoteStats, Tiered, WaitBudget,
};
use ludus_anim_report::{RemoteReport, RemoteStageStats};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// Base URL (`--remote-cache`).
pub const ENV_URL: &str = "LUDUS_ANIM_REMOTE_CACHE";
/// `read` or `read-write` (`--remote-cache-mode`).
pub const ENV_MODE: &str = "LUDUS_ANIM_REMOTE_CACHE_MODE";
/// Credentials spec (`--remote-cache-auth`).
pub const ENV_AUTH: &str = "LUDUS_ANIM_REMOTE_CACHE_AUTH";
/// Entry signing secret (`--remote-cache-signing`): `file:PATH` or
/// `env:NAME`.
pub const ENV_SIGNING: &str = "LUDUS_ANIM_REMOTE_CACHE_SIGNING";
/// Connect and I/O timeout in seconds (slow links; tests). Environment
/// only: it is a property of the machine's network, not of the project.
pub const ENV_TIMEOUT: &str = "LUDUS_ANIM_REMOTE_CACHE_TIMEOUT";
/// How long, in seconds, a cook waits for a lookup's answer from a server
/// that answers nothing meanwhile before it cooks locally and turns the
/// remote off (default 0.2: `ludus_anim_remote_cache::DEFAULT_LOOKUP_WAIT`).
/// Environment only, like the timeout: a property of the network.
pub const ENV_WAIT: &str = "LUDUS_ANIM_REMOTE_CACHE_WAIT";

/// Until the server's first answer, all of a cook's waits for lookups
/// take at most 50 ms plus half the time the cook spent on anything
/// else, so a server that never answers in time costs at most half again
/// a cold cook plus 50 ms, however short the cook (a fixed 0.2 s first
/// wait doubled a 0.2 s cook). A server that has answered nothing once a
/// lookup has been in flight `lookup_wait` is still turned off with a
/// notice, at the latest when the cook ends. `LUDUS_ANIM_REMOTE_CACHE_WAIT`
/// sets the floor with the wait.
pub const WAIT_BUDGET: WaitBudget = WaitBudget {
    floor: Duration::from_millis(50),
    share: 0.5,
};

/// The most the end of a cook waits for queued uploads (and never longer
/// than half the cook took: `RemoteCache::flush_budgeted`).
pub const FLUSH_TIMEOUT: Duration = Duration::from_secs(30);

/// The remote cache flags as given (`None` where unset).
#[derive(Clone, Debug, Default)]
pub struct RemoteArgs {
    pub url: Option<String>,
    pub mode: Option<RemoteMode>,
    pub auth: Option<String>,
    pub signing: Option<String>,
}

/// A remote cache setting that cannot be used; the cook stops before it
/// starts (the person asked for the remote).
#[derive(Debug, thiserror::Error)]
pub enum RemoteSettingError {
    #[error("{from}: {source}")]
    Invalid {
        /// The flag, variable or manifest field the value came from.
        from: String,
        #[source]
        source: RemoteError,
    },
    #[error("{from}: {message}")]
    Value { from: String, message: String },
    #[error("--remote-cache-mode and --remote-cache-auth need a remote cache URL (--remote-cache, {ENV_URL} or the manifest's [project] remote_cache)")]
    NoUrl,
}

/// One setting and where it came from, for messages.
struct Sourced<T> {
    value: T,
    from: String,
}

/// The first of flag, variable, manifest field that is set.
fn pick<T>(
    flag: (Option<T>, &str),
    env: (Option<T>, &str),
    manifest: (Option<T>, &str),
) -> Option<Sourced<T>> {
    [flag, env, manifest]
        .into_iter()
        .find_map(|(v, from)| v.map(|value| (value, from.to_string())))
        .map(|(value, from)| Sourced { value, from })
}

/// The remote cache configuration from flags, environment (`env` looks a
/// variable up; empty values count as unset) and the manifest (whose
/// relative credential paths are relative to `root`), field by field in
/// that order of precedence. `None`: no remote cache.
pub fn resolve(
    flags: &RemoteArgs,
    env: &dyn Fn(&str) -> Option<String>,
    manifest: Option<&RemoteCacheEntry>,
    root: &Path,
) -> Result<Option<RemoteConfig>, RemoteSettingError> {
    let var = |name: &str| env(name).filter(|v| !v.trim().is_empty());
    let url = pick(
        (flags.url.clone(), "--remote-cache"),
        (var(ENV_URL), ENV_URL),
        (
            manifest.map(|m| m.url.clone()),
            "[project] remote_cache.url",
        ),
    );
    let Some(url) = url else {
        if flags.mode.is_some() || flags.auth.is_some() {
            return Err(RemoteSettingError::NoUrl);
        }
        return Ok(None);
    };
    let invalid = |from: &str| {
        let from = from.to_string();
        move |source| RemoteSettingError::Invalid { from, source }
    };
    let mut config = RemoteConfig::parse(&url.value).map_err(invalid(&url.from))?;
    config.mode = mode(flags, &var, manifest)?;
    config.auth = auth(flags, &var, manifest, root)?;
    config.signing = signing(flags, &var, manifest, root)?;
    config.wait_budget = Some(WAIT_BUDGET);
    if let Some(t) = var(ENV_TIMEOUT) {
        let secs = parse_timeout(&t).ok_or_else(|| RemoteSettingError::Value {
            from: ENV_TIMEOUT.to_string(),
            message: format!("{t:?} is not a number of seconds between 0.05 and 600"),
        })?;
        config = config.with_timeouts(secs, secs);
    }
    if let Some(t) = var(ENV_WAIT) {
        config.lookup_wait = parse_timeout(&t).ok_or_else(|| RemoteSettingError::Value {
            from: ENV_WAIT.to_string(),
            message: format!("{t:?} is not a number of seconds between 0.05 and 600"),
        })?;
        if let Some(b) = config.wait_budget.as_mut() {
            b.floor = config.lookup_wait;
        }
    }
    Ok(Some(config))
}

fn parse_timeout(text: &str) -> Option<Duration> {
    let s: f64 = text.trim().parse().ok()?;
    (s.is_finite() && (0.05..=600.0).contains(&s)).then(|| Duration::from_secs_f64(s))
}

fn mode(
    flags: &RemoteArgs,
    var: &dyn Fn(&str) -> Option<String>,
    manifest: Option<&RemoteCacheEntry>,
) -> Result<Mode, RemoteSettingError> {
    let env_mode = match var(ENV_MODE) {
        None => None,
        Some(v) => Some(match v.trim() {
            "read" => RemoteMode::Read,
            "read-write" => RemoteMode::ReadWrite,
            other => {
                return Err(RemoteSettingError::Value {
                    from: ENV_MODE.to_string(),
                    message: format!("unknown mode {other:?}; expected \"read\" or \"read-write\""),
                })
            }
        }),
    };
    let picked = pick(
        (flags.mode, "--remote-cache-mode"),
        (env_mode, ENV_MODE),
        (manifest.and_then(|m| m.mode), "[project] remote_cache.mode"),
    );
    Ok(match picked.map(|p| p.value).unwrap_or_default() {
        RemoteMode::Read => Mode::Read,
        RemoteMode::ReadWrite => Mode::ReadWrite,
    })
}

fn auth(
    flags: &RemoteArgs,
    var: &dyn Fn(&str) -> Option<String>,
    manifest: Option<&RemoteCacheEntry>,
    root: &Path,
) -> Result<Option<AuthSpec>, RemoteSettingError> {
    let manifest_auth = manifest.and_then(|m| m.auth.clone());
    let from_manifest = flags.auth.is_none() && var(ENV_AUTH).is_none();
    let Some(spec) = pick(
        (flags.auth.clone(), "--remote-cache-auth"),
        (var(ENV_AUTH), ENV_AUTH),
        (manifest_auth, "[project] remote_cache.auth"),
    ) else {
        return Ok(None);
    };
    let mut parsed =
        AuthSpec::parse(&spec.value).map_err(|source| RemoteSettingError::Invalid {
            from: spec.from.clone(),
            source,
        })?;
    if from_manifest {
        if let CredentialSource::File(p) = &parsed.source {
            if p.is_relative() {
                parsed.source = CredentialSource::File(root.join(p));
            }
        }
    }
    Ok(Some(parsed))
}

/// The signing secret's source: flag, variable, then manifest (a relative
/// manifest path is relative to `root`).
fn signing(
    flags: &RemoteArgs,
    var: &dyn Fn(&str) -> Option<String>,
    manifest: Option<&RemoteCacheEntry>,
    root: &Path,
) -> Result<Option<CredentialSource>, RemoteSettingError> {
    let from_manifest = flags.signing.is_none() && var(ENV_SIGNING).is_none();
    let Some(spec) = pick(
        (flags.signing.clone(), "--remote-cache-signing"),
        (var(ENV_SIGNING), ENV_SIGNING),
        (
            manifest.and_then(|m| m.signing.clone()),
            "[project] remote_cache.signing",
        ),
    ) else {
        return Ok(None);
    };
    let source =
        parse_signing_source(&spec.value).map_err(|source| RemoteSettingError::Invalid {
            from: spec.from.clone(),
            source,
        })?;
    Ok(Some(match source {
        CredentialSource::File(p) if from_manifest && p.is_relative() => {
            CredentialSource::File(root.join(p))
        }
        s => s,
    }))
}

/// The local store layered over the remote cache, as a [`CacheBackend`]
/// (stage names are the remote's counter tags).
pub struct FarmCache {
    tiered: Tiered,
    flush_timeout: Duration,
    pending: AtomicU64,
}

impl FarmCache {
    /// Opens the remote (credentials are read now: a missing file is an
    /// error before the cook starts; no request is made yet).
    pub fn open(local: Store, config: RemoteConfig) -> Result<FarmCache, RemoteError> {
        let remote = RemoteCache::open(config)?;
        Ok(FarmCache {
            tiered: Tiered::new(local, Some(remote)),
            flush_timeout: FLUSH_TIMEOUT,
            pending: AtomicU64::new(0),
        })
    }

    /// Changes how long [`CacheBackend::flush`] waits (tests).
    pub fn with_flush_timeout(mut self, t: Duration) -> FarmCache {
        self.flush_timeout = t;
        self
    }
}

impl CacheBackend for FarmCache {
    fn get(&self, stage: Stage, key: &Key) -> Result<Option<Vec<u8>>, CacheError> {
        Backend::get(&self.tiered, key, stage.name())
    }

    fn put(&self, stage: Stage, key: &Key, bytes: &[u8]) -> Result<(), CacheError> {
        Backend::put(&self.tiered, key, bytes, stage.name())
    }

    fn lookup(&self, stage: Stage, key: &Key) -> Result<Option<(Vec<u8>, Tier)>, CacheError> {
        Ok(match self.tiered.lookup(key, stage.name()) {
            Lookup::Local(v) => Some((v, Tier::Local)),
            Lookup::Remote(v) => Some((v, Tier::Remote)),
            Lookup::Miss => None,
        })
    }

    fn prefetch(&self, keys: &[Key]) {
        for k in keys {
            self.tiered.prefetch(k);
        }
    }

    fn take_notices(&self) -> Vec<String> {
        self.tiered.take_notices()
    }

    /// Within the cook's budget: at most half the cook's time so far.
    fn flush(&self) {
        if let Some(r) = self.tiered.flush_budgeted(self.flush_timeout) {
            self.pending.store(r.pending as u64, Ordering::Relaxed);
        }
    }

    fn remote_report(&self) -> Option<RemoteReport> {
        let remote = self.tiered.remote()?;
        let stats = self.tiered.remote_stats()?;
        Some(RemoteReport {
            url: remote.url().to_string(),
            mode: remote.mode().as_str().to_string(),
            disabled: stats.disabled,
            pending_uploads: self.pending.load(Ordering::Relaxed),
            stages: stage_stats(&stats),
        })
    }
}

/// The remote's counters per tag as the report's per-stage map.
fn stage_stats(stats: &RemoteStats) -> std::collections::BTreeMap<String, RemoteStageStats> {
    stats
        .by_tag
        .iter()
        .map(|(tag, t)| (tag.to_string(), *t))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let m: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        move |k| m.get(k).cloned()
    }

    fn entry() -> RemoteCacheEntry {
        RemoteCacheEntry {
            url: "http://manifest:8080/m".into(),
            mode: Some(RemoteMode::ReadWrite),
            auth: Some("bearer-file:token".into()),
            signing: Some("file:ci.key".into()),
        }
    }

    #[test]
    fn flags_beat_environment_beat_manifest_field_by_field() {
        let root = Path::new("/proj");
        let none = RemoteArgs::default();
        let c = resolve(&none, &env(&[]), Some(&entry()), root)
            .unwrap()
            .unwrap();
        assert_eq!(c.url.as_str(), "http://manifest:8080/m");
        assert_eq!(c.mode, Mode::ReadWrite);
        assert_eq!(
            c.auth.unwrap().source,
            CredentialSource::File("/proj/token".into()),
            "manifest paths are relative to the manifest"
        );
        assert_eq!(
            c.signing,
            Some(CredentialSource::File("/proj/ci.key".into()))
        );
        let e = env(&[(ENV_URL, "http://env:1/e"), (ENV_MODE, "read")]);
        let c = resolve(&none, &e, Some(&entry()), root).unwrap().unwrap();
        assert_eq!(c.url.as_str(), "http://env:1/e");
        assert_eq!(c.mode, Mode::Read);
        let flags = RemoteArgs {
            url: Some("http://flag:2/f".into()),
            mode: Some(RemoteMode::ReadWrite),
            auth: Some("basic-env:CREDS".into()),
            signing: Some("env:SIGNING".into()),
        };
        let c = resolve(&flags, &e, Some(&entry()), root).unwrap().unwrap();
        assert_eq!(c.url.as_str(), "http://flag:2/f");
        assert_eq!(c.mode, Mode::ReadWrite);
        assert_eq!(
            c.auth.unwrap().source,
            CredentialSource::Env("CREDS".into())
        );
        assert_eq!(c.signing, Some(CredentialSource::Env("SIGNING".into())));
        let e = env(&[(ENV_URL, "http://env:1/e"), (ENV_SIGNING, "bearer-env:X")]);
        let err = resolve(&none, &e, None, root).unwrap_err();
        assert!(err.to_string().contains(ENV_SIGNING), "{err}");
    }

    #[test]
    fn nothing_set_is_no_remote_and_bad_values_are_named() {
        let root = Path::new(".");
        let none = RemoteArgs::default();
        assert!(resolve(&none, &env(&[(ENV_URL, " ")]), None, root)
            .unwrap()
            .is_none());
        let e = resolve(&none, &env(&[(ENV_URL, "ftp://x")]), None, root).unwrap_err();
        assert!(e.to_string().starts_with(ENV_URL), "{e}");
        let e = resolve(
            &none,
            &env(&[(ENV_URL, "http://u:hunter2@x/c")]),
            None,
            root,
        )
        .unwrap_err()
        .to_string();
        assert!(!e.contains("hunter2"), "{e}");
        let e = resolve(
            &none,
            &env(&[(ENV_URL, "http://x"), (ENV_MODE, "write")]),
            None,
            root,
        )
        .unwrap_err();
        assert!(e.to_string().contains(ENV_MODE), "{e}");
        let flags = RemoteArgs {
            mode: Some(RemoteMode::ReadWrite),
            ..Default::default()
        };
        assert!(matches!(
            resolve(&flags, &env(&[]), None, root),
            Err(RemoteSettingError::NoUrl)
        ));
        let c = resolve(
            &none,
            &env(&[(ENV_URL, "http://x"), (ENV_TIMEOUT, "0.5")]),
            None,
            root,
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.io_timeout, Duration::from_millis(500));
        let c = resolve(
            &none,
            &env(&[(ENV_URL, "http://x"), (ENV_WAIT, "2")]),
            None,
            root,
        )
        .unwrap()
        .unwrap();
        assert_eq!(c.lookup_wait, Duration::from_secs(2));
        assert!(resolve(
            &none,
            &env(&[(ENV_URL, "http://x"), (ENV_TIMEOUT, "soon")]),
            None,
            root
        )
        .is_err());
    }
}
