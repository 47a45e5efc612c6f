//! Credentials: a bearer token or basic `user:password`, read from a file
//! or an environment variable, kept out of every printed form.
//!
//! Why a file or a variable and never a flag or the URL: command lines and
//! URLs end up in process listings, shell history, CI logs and the cook
//! report; a file readable only by the build user does not.

use std::fmt;
use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::RemoteError;

/// How often a credentials *file* is read again, so a token rotated by a
/// cron job (`gcloud auth print-access-token` tokens live an hour) is picked
/// up by a long cook without a restart.
pub const CREDENTIALS_REFRESH: Duration = Duration::from_secs(5 * 60);

/// A string that must never be printed. `Debug` and `Display` show
/// `<redacted>`; only the HTTP layer reads the value.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Secret {
        Secret(value.into())
    }

    pub(crate) fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// The HTTP authentication scheme.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scheme {
    /// `Authorization: Bearer <token>`; the source holds the token (Google
    /// Cloud Storage access tokens, reverse proxies with token auth).
    Bearer,
    /// `Authorization: Basic base64(user:password)`; the source holds
    /// `user:password` (bazel-remote `--htpasswd_file`, nginx/Apache basic
    /// auth).
    Basic,
}

/// Where the credentials are read from. Printing it prints the path or the
/// variable's name, never the secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CredentialSource {
    /// A file; surrounding whitespace (the trailing newline) is ignored.
    /// Re-read every [`CREDENTIALS_REFRESH`].
    File(PathBuf),
    /// An environment variable, read once.
    Env(String),
}

impl fmt::Display for CredentialSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CredentialSource::File(p) => write!(f, "file {}", p.display()),
            CredentialSource::Env(name) => write!(f, "environment variable {name}"),
        }
    }
}

/// What credentials to send and where to find them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AuthSpec {
    pub scheme: Scheme,
    pub source: CredentialSource,
}

impl AuthSpec {
    /// Parses the command-line form `bearer-file:PATH`, `bearer-env:NAME`,
    /// `basic-file:PATH` or `basic-env:NAME`.
    pub fn parse(spec: &str) -> Result<AuthSpec, RemoteError> {
        let bad = || RemoteError::Credentials {
            from: spec.to_string(),
            reason: "expected bearer-file:PATH, bearer-env:NAME, basic-file:PATH or basic-env:NAME"
                .to_string(),
        };
        let (kind, arg) = spec.split_once(':').ok_or_else(bad)?;
        if arg.is_empty() {
            return Err(bad());
        }
        let (scheme, source) = match kind {
            "bearer-file" => (Scheme::Bearer, CredentialSource::File(arg.into())),
            "bearer-env" => (Scheme::Bearer, CredentialSource::Env(arg.into())),
            "basic-file" => (Scheme::Basic, CredentialSource::File(arg.into())),
            "basic-env" => (Scheme::Basic, CredentialSource::Env(arg.into())),
            _ => return Err(bad()),
        };
        Ok(AuthSpec { scheme, source })
    }
}

/// Loaded credentials: the `Authorization` header value, refreshed from a
/// file source every [`CREDENTIALS_REFRESH`].
pub struct Auth {
    spec: AuthSpec,
    cached: Mutex<(Secret, Instant)>,
}

impl Auth {
    /// Reads the credentials now, so a missing file or variable is reported
    /// when the cook starts rather than as a stream of 401s.
    pub fn load(spec: AuthSpec) -> Result<Auth, RemoteError> {
        let header = read_header(&spec)?;
        Ok(Auth {
            spec,
            cached: Mutex::new((header, Instant::now())),
        })
    }

    /// The spec these credentials were loaded from.
    pub fn spec(&self) -> &AuthSpec {
        &self.spec
    }

    /// The current `Authorization` header value. A refresh that fails keeps
    /// the previous value (the server will say if it expired).
    pub(crate) fn header_value(&self) -> Secret {
        // A panic elsewhere while holding the lock leaves a valid value.
        let mut cached = self.cached.lock().unwrap_or_else(PoisonError::into_inner);
        let stale = cached.1.elapsed() >= CREDENTIALS_REFRESH;
        if stale && matches!(self.spec.source, CredentialSource::File(_)) {
            if let Ok(fresh) = read_header(&self.spec) {
                cached.0 = fresh;
            }
            cached.1 = Instant::now();
        }
        cached.0.clone()
    }
}

impl fmt::Debug for Auth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Auth")
            .field("scheme", &self.spec.scheme)
            .field("source", &self.spec.source)
            .field("header", &"<redacted>")
            .finish()
    }
}

/// Reads the source and builds the header value.
fn read_header(spec: &AuthSpec) -> Result<Secret, RemoteError> {
    let fail = |reason: String| RemoteError::Credentials {
        from: spec.source.to_string(),
        reason,
    };
    let raw = match &spec.source {
        CredentialSource::File(path) => {
            std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?
        }
        CredentialSource::Env(name) => std::env::var(name).map_err(|e| fail(e.to_string()))?,
    };
    let value = raw.trim();
    if value.is_empty() {
        return Err(fail("empty".to_string()));
    }
    // Printable ASCII without spaces: anything else cannot travel in a
    // header, and is more likely a wrong file than a real token.
    if !value.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(fail(
            "contains spaces, control or non-ASCII characters (not a token)".to_string(),
        ));
    }
    match spec.scheme {
        Scheme::Bearer => Ok(Secret::new(format!("Bearer {value}"))),
        Scheme::Basic if value.contains(':') => Ok(Secret::new(format!(
            "Basic {}",
            base64_encode(value.as_bytes())
        ))),
        Scheme::Basic => Err(fail("expected user:password".to_string())),
    }
}

/// Standard base64 with padding (RFC 4648 section 4), for basic auth.
fn base64_encode(bytes: &[u8]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let vectors = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, encoded) in vectors {
            assert_eq!(base64_encode(plain.as_bytes()), encoded, "{plain}");
        }
    }

    #[test]
    fn parses_the_four_spec_forms() {
        let spec = AuthSpec::parse("bearer-file:/run/token").expect("valid");
        assert_eq!(spec.scheme, Scheme::Bearer);
        assert_eq!(spec.source, CredentialSource::File("/run/token".into()));
        let spec = AuthSpec::parse("basic-env:CACHE_AUTH").expect("valid");
        assert_eq!(spec.scheme, Scheme::Basic);
        assert_eq!(spec.source, CredentialSource::Env("CACHE_AUTH".into()));
        assert!(AuthSpec::parse("bearer-env:").is_err());
        assert!(AuthSpec::parse("token:abc").is_err());
    }

    #[test]
    fn file_credentials_build_headers_and_never_print() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("token");
        std::fs::write(&path, "s3cr3t-t0ken\n").expect("write");
        let auth = Auth::load(AuthSpec {
            scheme: Scheme::Bearer,
            source: CredentialSource::File(path.clone()),
        })
        .expect("load");
        assert_eq!(auth.header_value().expose(), "Bearer s3cr3t-t0ken");
        let shown = format!("{auth:?} {:?} {}", auth.header_value(), auth.header_value());
        assert!(!shown.contains("s3cr3t"), "{shown}");

        std::fs::write(&path, "aladdin:opensesame").expect("write");
        let basic = Auth::load(AuthSpec {
            scheme: Scheme::Basic,
            source: CredentialSource::File(path),
        })
        .expect("load");
        assert_eq!(
            basic.header_value().expose(),
            "Basic YWxhZGRpbjpvcGVuc2VzYW1l"
        );
    }

    #[test]
    fn bad_credentials_are_reported_without_their_contents() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("creds");
        let load = |scheme| {
            Auth::load(AuthSpec {
                scheme,
                source: CredentialSource::File(path.clone()),
            })
        };
        assert!(load(Scheme::Bearer).is_err(), "missing file");
        std::fs::write(&path, "  \n").expect("write");
        assert!(load(Scheme::Bearer).is_err(), "empty file");
        std::fs::write(&path, "no-colon-secret").expect("write");
        let err = load(Scheme::Basic).expect_err("basic needs user:password");
        assert!(!err.to_string().contains("no-colon-secret"), "{err}");
        std::fs::write(&path, "two words").expect("write");
        let err = load(Scheme::Bearer).expect_err("spaces");
        assert!(!err.to_string().contains("words"), "{err}");
        let env = Auth::load(AuthSpec {
            scheme: Scheme::Bearer,
            source: CredentialSource::Env("LUDUS_TEST_SURELY_UNSET_VARIABLE".into()),
        });
        assert!(env.is_err());
    }
}
