//! The remote cache's base URL and the Bazel HTTP cache object names.

use std::fmt;

use ludus_anim_cache::Key;

use crate::error::RemoteError;

/// Where action-cache objects live below the base URL, as in Bazel's HTTP
/// cache protocol (`BASE/ac/<64 hex>`). The cooker's entries are keyed by
/// stage inputs, not by content, so they belong in `ac/`; nothing is put
/// in `cas/`, whose keys servers may check to be the SHA-256 of the body.
const AC: &str = "ac";

/// A validated `http://host[:port][/path]` base URL (`https://` with the
/// `tls` feature).
///
/// Credentials in the URL (`user:pass@host`) are refused: URLs are printed
/// in notices, reports and logs, so secrets travel only in
/// [`Auth`](crate::Auth), read from a file or an environment variable.
#[derive(Clone, PartialEq, Eq)]
pub struct BaseUrl {
    /// Scheme, authority and path, without a trailing slash.
    base: String,
}

impl BaseUrl {
    /// Parses and checks a base URL.
    pub fn parse(url: &str) -> Result<BaseUrl, RemoteError> {
        let invalid = |reason: &str| RemoteError::InvalidUrl {
            url: redact_userinfo(url),
            reason: reason.to_string(),
        };
        let trimmed = url.trim().trim_end_matches('/');
        let rest = strip_scheme(trimmed).map_err(invalid)?;
        let authority = rest.split('/').next().unwrap_or("");
        if authority.contains('@') {
            return Err(invalid(
                "credentials in the URL would be printed in logs; \
                 pass them with a credentials file or environment variable",
            ));
        }
        if authority.is_empty() {
            return Err(invalid("no host"));
        }
        if rest.contains(['?', '#']) {
            return Err(invalid("query strings and fragments are not supported"));
        }
        let base = BaseUrl {
            base: trimmed.to_string(),
        };
        ureq::http::Uri::try_from(base.entry_url(&Key([0; 32])))
            .map_err(|e| invalid(&e.to_string()))?;
        Ok(base)
    }

    /// `BASE/ac/<64 lowercase hex>`: where `key`'s entry is stored.
    pub fn entry_url(&self, key: &Key) -> String {
        format!("{}/{AC}/{}", self.base, key.to_hex())
    }

    /// `BASE/ac/`: the collection WebDAV servers without automatic parent
    /// creation (Apache mod_dav) need before the first PUT.
    pub fn ac_collection_url(&self) -> String {
        format!("{}/{AC}/", self.base)
    }

    /// Every collection from the first level of the base path down to
    /// `BASE/ac/`, parents first: what MKCOL must create on a WebDAV server
    /// without automatic parent creation when the base is nested
    /// (`http://host/team/ludus` needs `/team/`, `/team/ludus/` and
    /// `/team/ludus/ac/`).
    pub fn collection_urls(&self) -> Vec<String> {
        let after_scheme = self.base.find("://").map_or(0, |i| i + 3);
        let path_start = self.base[after_scheme..]
            .find('/')
            .map_or(self.base.len(), |i| after_scheme + i);
        let (origin, path) = self.base.split_at(path_start);
        let mut urls = Vec::new();
        let mut at = origin.to_string();
        for segment in path.split('/').filter(|s| !s.is_empty()) {
            at = format!("{at}/{segment}");
            urls.push(format!("{at}/"));
        }
        urls.push(self.ac_collection_url());
        urls
    }

    /// The base URL as given, without a trailing slash.
    pub fn as_str(&self) -> &str {
        &self.base
    }
}

impl fmt::Display for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.base)
    }
}

impl fmt::Debug for BaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BaseUrl({})", self.base)
    }
}

/// The URL after `http://` (or `https://` with the `tls` feature).
fn strip_scheme(url: &str) -> Result<&str, &'static str> {
    if let Some(rest) = url.strip_prefix("http://") {
        return Ok(rest);
    }
    match url.strip_prefix("https://") {
        Some(rest) if cfg!(feature = "tls") => Ok(rest),
        Some(_) => Err("https needs ludus-anim-remote-cache built with the `tls` feature"),
        None => Err("expected http://host[:port][/path]"),
    }
}

/// The URL with any `userinfo@` replaced, so even a refused URL's error
/// message does not echo a password.
fn redact_userinfo(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find('/').unwrap_or(rest.len());
    match rest[..end].rfind('@') {
        Some(at) => format!("{scheme}://<credentials removed>@{}", &rest[at + 1..]),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_urls_follow_the_bazel_layout() {
        let base = BaseUrl::parse("http://127.0.0.1:8080/ludus/").expect("valid");
        assert_eq!(base.as_str(), "http://127.0.0.1:8080/ludus");
        let url = base.entry_url(&Key([0xab; 32]));
        assert_eq!(
            url,
            format!("http://127.0.0.1:8080/ludus/ac/{}", "ab".repeat(32))
        );
        assert_eq!(base.ac_collection_url(), "http://127.0.0.1:8080/ludus/ac/");
        let nested = BaseUrl::parse("http://h:1/team/ludus").expect("valid");
        assert_eq!(
            nested.collection_urls(),
            [
                "http://h:1/team/",
                "http://h:1/team/ludus/",
                "http://h:1/team/ludus/ac/"
            ]
        );
        let bare = BaseUrl::parse("http://h").expect("valid");
        assert_eq!(bare.collection_urls(), ["http://h/ac/"]);
        let bare = BaseUrl::parse("http://cache").expect("valid");
        assert_eq!(
            bare.entry_url(&Key([0; 32])),
            format!("http://cache/ac/{}", "0".repeat(64))
        );
    }

    #[test]
    fn refuses_bad_urls_without_echoing_secrets() {
        for bad in [
            "ftp://x",
            "cache:8080",
            "http://",
            "http://h/p?q=1",
            "http://h/a b",
        ] {
            assert!(BaseUrl::parse(bad).is_err(), "{bad}");
        }
        let err = BaseUrl::parse("http://user:hunter2@cache:8080/x").expect_err("userinfo");
        let msg = err.to_string();
        assert!(!msg.contains("hunter2") && !msg.contains("user:"), "{msg}");
        assert!(msg.contains("cache:8080"), "{msg}");
    }

    #[cfg(feature = "tls")]
    #[test]
    fn https_with_the_tls_feature() {
        let base = BaseUrl::parse("https://storage.googleapis.com/bucket").expect("tls");
        assert!(base
            .entry_url(&Key([0; 32]))
            .starts_with("https://storage.googleapis.com/bucket/ac/"));
    }

    #[cfg(not(feature = "tls"))]
    #[test]
    fn https_needs_the_tls_feature() {
        let err = BaseUrl::parse("https://storage.googleapis.com/b").expect_err("no tls");
        assert!(err.to_string().contains("tls"), "{err}");
    }
}
