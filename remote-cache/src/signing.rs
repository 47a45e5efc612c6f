//! Per-writer signing of remote entries: a machine holding the signing
//! secret (CI) signs what it uploads, and a machine configured with the
//! same secret accepts only entries signed with it, so a server that holds
//! objects from anyone else (a mis-configured agent, a rogue writer) cannot
//! get them into its cooks.
//!
//! The signature is BLAKE3 in keyed mode (a MAC; O'Connor, Aumasson,
//! Neves, Wilcox-O'Hearn, "BLAKE3: one function, fast everywhere", 2020,
//! section 2.3: keyed hashing as a PRF/MAC; adopted as is) over the entry's
//! key and payload, with the MAC key derived from the secret by BLAKE3's
//! key-derivation mode and a context string fixed here. It travels as the
//! payload's last 32 bytes, the header flagged
//! [`FLAG_SIGNED`](ludus_anim_cache::FLAG_SIGNED), so the header's own
//! length and checksum still cover everything.

use std::fmt;
use std::path::PathBuf;

use ludus_anim_cache::{encode_entry_with_flags, Key, FLAG_SIGNED};

use crate::auth::CredentialSource;
use crate::error::RemoteError;

/// BLAKE3 key-derivation context: fixed forever for this signature format.
const CONTEXT: &str = "ludus-anim remote cache entry signature v1";
/// Bytes of a signature.
pub const SIGNATURE_LEN: usize = 32;
/// Shortest secret accepted: anything shorter is more likely a wrong file
/// than a key.
const MIN_SECRET_LEN: usize = 16;

/// Parses `file:PATH` or `env:NAME`.
pub fn parse_signing_source(spec: &str) -> Result<CredentialSource, RemoteError> {
    let bad = || RemoteError::Credentials {
        from: spec.to_string(),
        reason: "expected file:PATH or env:NAME for the signing secret".to_string(),
    };
    match spec.split_once(':') {
        Some(("file", p)) if !p.is_empty() => Ok(CredentialSource::File(PathBuf::from(p))),
        Some(("env", n)) if !n.is_empty() => Ok(CredentialSource::Env(n.to_string())),
        _ => Err(bad()),
    }
}

/// The MAC key; never printed.
pub struct SigningKey([u8; 32]);

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SigningKey(<redacted>)")
    }
}

impl SigningKey {
    /// Reads the secret now (a missing file is reported before the cook
    /// starts).
    pub fn load(source: &CredentialSource) -> Result<SigningKey, RemoteError> {
        let fail = |reason: String| RemoteError::Credentials {
            from: source.to_string(),
            reason,
        };
        let raw = match source {
            CredentialSource::File(path) => {
                std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?
            }
            CredentialSource::Env(name) => std::env::var(name).map_err(|e| fail(e.to_string()))?,
        };
        let secret = raw.trim();
        if secret.len() < MIN_SECRET_LEN {
            return Err(fail(format!(
                "the signing secret must be at least {MIN_SECRET_LEN} characters"
            )));
        }
        Ok(SigningKey::from_secret(secret.as_bytes()))
    }

    pub fn from_secret(secret: &[u8]) -> SigningKey {
        SigningKey(blake3::derive_key(CONTEXT, secret))
    }

    fn mac(&self, key: &Key, data: &[u8]) -> blake3::Hash {
        let mut h = blake3::Hasher::new_keyed(&self.0);
        h.update(&key.0).update(data);
        h.finalize()
    }

    /// `payload` framed as `key`'s entry, signed.
    pub fn frame(&self, key: &Key, payload: &[u8]) -> Vec<u8> {
        let mut body = Vec::with_capacity(payload.len() + SIGNATURE_LEN);
        body.extend_from_slice(payload);
        body.extend_from_slice(self.mac(key, payload).as_bytes());
        encode_entry_with_flags(key, &body, FLAG_SIGNED)
    }

    /// The payload of a signed entry's body (payload and signature), if
    /// the signature is this key's over `key` and the payload. The
    /// comparison is constant-time (`blake3::Hash`'s equality).
    pub fn open<'a>(&self, key: &Key, body: &'a [u8]) -> Option<&'a [u8]> {
        let split = body.len().checked_sub(SIGNATURE_LEN)?;
        let (data, sig) = body.split_at(split);
        let sig: [u8; SIGNATURE_LEN] = sig.try_into().ok()?;
        (self.mac(key, data) == blake3::Hash::from_bytes(sig)).then_some(data)
    }
}

/// The payload of a signed body when nothing is verified (a reader with no
/// signing secret): the signature stripped.
pub fn strip_signature(body: &[u8]) -> Option<&[u8]> {
    body.get(..body.len().checked_sub(SIGNATURE_LEN)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_cache::{check_entry, check_entry_allowing, KeyBuilder};

    fn key(i: u64) -> Key {
        KeyBuilder::new().str("signing-test").u64(i).finish()
    }

    #[test]
    fn a_signed_entry_opens_only_with_its_secret_and_key() {
        let ci = SigningKey::from_secret(b"the CI secret, long enough");
        let other = SigningKey::from_secret(b"another secret, long enough");
        let entry = ci.frame(&key(1), b"payload");
        let (flags, body) = check_entry_allowing(&key(1), &entry, FLAG_SIGNED).unwrap();
        assert_eq!(flags, FLAG_SIGNED);
        assert_eq!(ci.open(&key(1), body), Some(&b"payload"[..]));
        assert_eq!(other.open(&key(1), body), None);
        // The same body under another key (reframed): the MAC covers the key.
        assert_eq!(ci.open(&key(2), body), None);
        let mut flipped = body.to_vec();
        flipped[0] ^= 1;
        assert_eq!(ci.open(&key(1), &flipped), None);
        assert_eq!(ci.open(&key(1), &body[..10]), None);
        // A reader that does not allow signed entries refuses it.
        assert!(check_entry(&key(1), &entry).is_err());
        assert_eq!(strip_signature(body), Some(&b"payload"[..]));
    }

    #[test]
    fn sources_parse_and_short_secrets_are_refused() {
        assert_eq!(
            parse_signing_source("env:X").unwrap(),
            CredentialSource::Env("X".into())
        );
        assert!(parse_signing_source("bearer-env:X").is_err());
        assert!(parse_signing_source("file:").is_err());
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("k");
        std::fs::write(&p, "short\n").unwrap();
        let e = SigningKey::load(&CredentialSource::File(p.clone())).unwrap_err();
        assert!(e.to_string().contains("at least"), "{e}");
        std::fs::write(&p, "0123456789abcdef0123\n").unwrap();
        assert!(SigningKey::load(&CredentialSource::File(p)).is_ok());
    }
}
