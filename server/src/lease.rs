//! Client leases on a generation: `POST /generations/{n}/lease?ttl=S`
//! keeps generation n and its packages for S seconds, renewable, and
//! releasable before then. A lease is a file `lease-<id>` in the
//! generation's directory holding its expiry (Unix ms), so it survives a
//! restart as pins do; an expired lease holds nothing and its file is
//! removed at the next collection.
//!
//! Callers hold the lock collection holds (`Shared::pin_lock`), so a
//! generation cannot be removed while a lease on it is being written.

use std::io::{self, Write};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

/// The longest lease, in seconds (a day); a client that needs longer pins.
pub const MAX_TTL_S: u64 = 86_400;
/// A lease's length when the request does not say.
pub const DEFAULT_TTL_S: u64 = 300;
const PREFIX: &str = "lease-";

/// One lease, as granted or renewed.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Lease {
    pub generation: u64,
    /// 16 lowercase hex digits.
    pub lease: String,
    pub expires_unix_ms: u64,
    pub ttl_s: u64,
}

/// Whether `id` has the shape of a lease id (it is then safe in a file
/// name).
pub fn valid_id(id: &str) -> bool {
    id.len() == 16
        && id
            .bytes()
            .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase())
}

/// Grant a lease of `ttl_s` seconds on the generation in `dir`.
pub fn grant(dir: &Path, generation: u64, ttl_s: u64, now: SystemTime) -> io::Result<Lease> {
    let lease = new_id(generation, now);
    write(dir, generation, lease, ttl_s, now)
}

/// Extend lease `id` to `ttl_s` seconds from `now`; `Ok(None)` when it is
/// unknown or expired (the generation may be gone: take a new one).
pub fn renew(
    dir: &Path,
    generation: u64,
    id: &str,
    ttl_s: u64,
    now: SystemTime,
) -> io::Result<Option<Lease>> {
    match expiry(dir, id) {
        Some(until) if until > unix_ms(now) => {
            write(dir, generation, id.to_string(), ttl_s, now).map(Some)
        }
        _ => Ok(None),
    }
}

/// End lease `id` now; `Ok(false)` when there was none.
pub fn release(dir: &Path, id: &str) -> io::Result<bool> {
    if !valid_id(id) {
        return Ok(false);
    }
    match std::fs::remove_file(dir.join(format!("{PREFIX}{id}"))) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// The latest expiry (Unix ms) of the unexpired leases on the generation
/// in `dir`; with `sweep`, expired lease files are removed.
pub fn held_until(dir: &Path, now: SystemTime, sweep: bool) -> Option<u64> {
    let now = unix_ms(now);
    let mut latest = None;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = e.file_name();
        let Some(id) = name.to_str().and_then(|n| n.strip_prefix(PREFIX)) else {
            continue;
        };
        match expiry(dir, id) {
            Some(until) if until > now => latest = latest.max(Some(until)),
            _ if sweep => {
                let _ = std::fs::remove_file(e.path());
            }
            _ => {}
        }
    }
    latest
}

fn expiry(dir: &Path, id: &str) -> Option<u64> {
    if !valid_id(id) {
        return None;
    }
    let text = std::fs::read_to_string(dir.join(format!("{PREFIX}{id}"))).ok()?;
    text.trim().parse().ok()
}

fn write(
    dir: &Path,
    generation: u64,
    lease: String,
    ttl_s: u64,
    now: SystemTime,
) -> io::Result<Lease> {
    let expires_unix_ms = unix_ms(now).saturating_add(ttl_s.saturating_mul(1000));
    // Temp file + rename: a reader (collection) never sees a partial expiry.
    let (tmp, path) = (
        dir.join(format!(".{PREFIX}{lease}.tmp")),
        dir.join(format!("{PREFIX}{lease}")),
    );
    let mut f = std::fs::File::create(&tmp)?;
    writeln!(f, "{expires_unix_ms}")?;
    f.sync_all()?;
    std::fs::rename(&tmp, &path)?;
    Ok(Lease {
        generation,
        lease,
        expires_unix_ms,
        ttl_s,
    })
}

/// A fresh id: unique per process and call, not a secret (the bearer
/// token, when set, guards every request; an id only names a lease).
fn new_id(generation: u64, now: SystemTime) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut h = blake3::Hasher::new();
    h.update(&std::process::id().to_le_bytes());
    h.update(&generation.to_le_bytes());
    h.update(&COUNTER.fetch_add(1, Ordering::Relaxed).to_le_bytes());
    let nanos = now
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.update(&nanos.to_le_bytes());
    h.finalize().to_hex()[..16].to_string()
}

fn unix_ms(t: SystemTime) -> u64 {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_lease_holds_until_it_expires_is_renewed_or_released() {
        let d = tempfile::tempdir().unwrap();
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000_000);
        let l = grant(d.path(), 4, 60, t0).unwrap();
        assert!(valid_id(&l.lease));
        assert_eq!(l.expires_unix_ms, 1_000_060_000);
        assert_eq!(held_until(d.path(), t0, false), Some(1_000_060_000));
        let later = t0 + Duration::from_secs(50);
        let r = renew(d.path(), 4, &l.lease, 60, later).unwrap().unwrap();
        assert_eq!(r.expires_unix_ms, 1_000_110_000);
        let expired = t0 + Duration::from_secs(111);
        assert_eq!(held_until(d.path(), expired, true), None);
        assert_eq!(
            renew(d.path(), 4, &l.lease, 60, expired).unwrap(),
            None,
            "swept"
        );
        let m = grant(d.path(), 4, 60, t0).unwrap();
        assert_ne!(m.lease, l.lease);
        assert!(release(d.path(), &m.lease).unwrap());
        assert!(!release(d.path(), &m.lease).unwrap());
        assert_eq!(held_until(d.path(), t0, false), None);
    }

    #[test]
    fn only_lease_shaped_ids_are_looked_up() {
        for bad in ["", "../../current", "ABCDEF0123456789", "0123456789abcdef0"] {
            assert!(!valid_id(bad), "{bad}");
        }
        assert!(valid_id("0123456789abcdef"));
    }
}
