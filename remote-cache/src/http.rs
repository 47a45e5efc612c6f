//! The Bazel HTTP remote-cache protocol, client side: `GET`, `PUT` and
//! `HEAD` of opaque bytes at `BASE/ac/<64 hex>`; 200 is a hit, 404 a miss.
//! This is the whole protocol bazel-remote, nginx/Apache WebDAV and Google
//! Cloud Storage's XML API have in common.
//!
//! The bytes are a complete cache entry (see
//! [`ludus_anim_cache::encode_entry`]); this layer neither frames nor
//! checks them.

use std::io;
use std::time::Duration;

use ludus_anim_cache::Key;
use ureq::http::{self, HeaderValue, Response};
use ureq::{Agent, Body};

use crate::auth::Auth;
use crate::config::RemoteConfig;
use crate::error::RemoteError;
use crate::url::BaseUrl;

/// Idle connections kept per server: one per worker thread the cooker
/// might run plus the upload threads, so steady traffic reuses sockets.
const POOL_PER_HOST: usize = 16;

/// A blocking HTTP client for one remote cache.
pub(crate) struct HttpClient {
    agent: Agent,
    url: BaseUrl,
    auth: Option<Auth>,
    max_entry_bytes: u64,
    /// Limit on a lookup's wait for its response headers.
    lookup_timeout: Duration,
}

impl HttpClient {
    pub fn new(config: &RemoteConfig, auth: Option<Auth>) -> HttpClient {
        HttpClient {
            agent: agent(config),
            url: config.url.clone(),
            auth,
            max_entry_bytes: config.max_entry_bytes,
            lookup_timeout: config.lookup_timeout.min(config.io_timeout),
        }
    }

    /// Which credentials are sent (for Debug output; never the value).
    pub fn auth_scheme(&self) -> Option<crate::auth::Scheme> {
        self.auth.as_ref().map(|a| a.spec().scheme)
    }

    /// The entry bytes stored under `key`, or `None` on 404.
    pub fn get(&self, key: &Key) -> Result<Option<Vec<u8>>, RemoteError> {
        let url = self.url.entry_url(key);
        let mut response = self.send_with_retry("GET", &url, || {
            self.lookup(self.authed(self.agent.get(&url))).call()
        })?;
        match response.status().as_u16() {
            200 => self.read_body(&url, response.body_mut()).map(Some),
            404 => Ok(None),
            status => Err(status_error("GET", &url, status)),
        }
    }

    /// Whether the server has an object under `key` (HEAD).
    pub fn head(&self, key: &Key) -> Result<bool, RemoteError> {
        let url = self.url.entry_url(key);
        let response = self.send_with_retry("HEAD", &url, || {
            self.lookup(self.authed(self.agent.head(&url))).call()
        })?;
        match response.status().as_u16() {
            200 => Ok(true),
            404 => Ok(false),
            status => Err(status_error("HEAD", &url, status)),
        }
    }

    /// Stores `entry` under `key`. A 409 Conflict (WebDAV without
    /// automatic parent collections: Apache mod_dav, nginx without
    /// `create_full_put_path`) creates `BASE/ac/` with MKCOL and retries
    /// once.
    pub fn put(&self, key: &Key, entry: &[u8]) -> Result<(), RemoteError> {
        let url = self.url.entry_url(key);
        match self.put_once(&url, entry)? {
            status if is_stored(status) => Ok(()),
            409 => {
                self.make_collections()?;
                match self.put_once(&url, entry)? {
                    status if is_stored(status) => Ok(()),
                    status => Err(status_error("PUT", &url, status)),
                }
            }
            status => Err(status_error("PUT", &url, status)),
        }
    }

    fn put_once(&self, url: &str, entry: &[u8]) -> Result<u16, RemoteError> {
        let response = self.send_with_retry("PUT", url, || {
            self.authed(self.agent.put(url))
                .header("Content-Type", "application/octet-stream")
                .send(entry)
        })?;
        Ok(response.status().as_u16())
    }

    /// MKCOL of every level of the base path, then `BASE/ac/`
    /// ([`BaseUrl::collection_urls`]); "already exists" answers (405, 301)
    /// are fine, the PUT that follows tells whether it worked.
    fn make_collections(&self) -> Result<(), RemoteError> {
        for url in self.url.collection_urls() {
            self.send_with_retry("MKCOL", &url, || {
                let mut request = http::Request::builder().method("MKCOL").uri(&url);
                if let Some(value) = self.auth_header() {
                    request = request.header(http::header::AUTHORIZATION, value);
                }
                let request = request.body(()).map_err(ureq::Error::Http)?;
                self.agent.run(request)
            })?;
        }
        Ok(())
    }

    /// Reads a 200 body, refusing more than `max_entry_bytes`.
    fn read_body(&self, url: &str, body: &mut Body) -> Result<Vec<u8>, RemoteError> {
        let too_large = || RemoteError::TooLarge {
            url: url.to_string(),
            limit: self.max_entry_bytes,
        };
        if body
            .content_length()
            .is_some_and(|n| n > self.max_entry_bytes)
        {
            return Err(too_large());
        }
        match body.with_config().limit(self.max_entry_bytes).read_to_vec() {
            Ok(bytes) => Ok(bytes),
            Err(ureq::Error::BodyExceedsLimit(_)) => Err(too_large()),
            Err(e) => Err(classify("GET", url, e)),
        }
    }

    /// Runs `send`, and once more if the connection broke before an answer
    /// arrived: an idle pooled connection the server closed looks exactly
    /// like that, and a fresh connection is the cure. Connect failures and
    /// timeouts are not retried (the remote is then treated as down).
    fn send_with_retry(
        &self,
        method: &'static str,
        url: &str,
        send: impl Fn() -> Result<Response<Body>, ureq::Error>,
    ) -> Result<Response<Body>, RemoteError> {
        match send() {
            Ok(response) => Ok(response),
            Err(e) if is_broken_connection(&e) => send().map_err(|e| classify(method, url, e)),
            Err(e) => Err(classify(method, url, e)),
        }
    }

    /// A lookup waits at most `lookup_timeout` for its response headers.
    fn lookup<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        request
            .config()
            .timeout_recv_response(Some(self.lookup_timeout))
            .build()
    }

    fn authed<B>(&self, request: ureq::RequestBuilder<B>) -> ureq::RequestBuilder<B> {
        match self.auth_header() {
            Some(value) => request.header(http::header::AUTHORIZATION, value),
            None => request,
        }
    }

    /// The `Authorization` value, marked sensitive so the http crate's own
    /// Debug output hides it too.
    fn auth_header(&self) -> Option<HeaderValue> {
        let secret = self.auth.as_ref()?.header_value();
        let mut value = HeaderValue::from_str(secret.expose()).ok()?;
        value.set_sensitive(true);
        Some(value)
    }
}

/// The agent: timeouts on every phase, no redirects (a cache that
/// redirects is misconfigured, and following would need to re-decide where
/// credentials go), no proxy from the environment (a cache is on the local
/// network, and a proxy would see the credentials), non-standard methods
/// for MKCOL.
fn agent(config: &RemoteConfig) -> Agent {
    let some = Some::<Duration>;
    Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .proxy(None)
        .allow_non_standard_methods(true)
        .user_agent(concat!(
            "ludus-anim-remote-cache/",
            env!("CARGO_PKG_VERSION")
        ))
        .timeout_resolve(some(config.connect_timeout))
        .timeout_connect(some(config.connect_timeout))
        .timeout_send_request(some(config.io_timeout))
        .timeout_recv_response(some(config.io_timeout))
        .timeout_per_read(some(config.io_timeout))
        .timeout_per_write(some(config.io_timeout))
        .timeout_per_call(some(config.request_timeout))
        .max_idle_connections(POOL_PER_HOST)
        .max_idle_connections_per_host(POOL_PER_HOST)
        .build()
        .new_agent()
}

fn is_stored(status: u16) -> bool {
    // 200 OK (bazel-remote, GCS), 201 Created / 204 No Content (WebDAV).
    matches!(status, 200 | 201 | 204)
}

fn status_error(method: &'static str, url: &str, status: u16) -> RemoteError {
    RemoteError::Status {
        method,
        url: url.to_string(),
        status,
    }
}

/// A connection that broke before any answer: worth one retry.
fn is_broken_connection(e: &ureq::Error) -> bool {
    matches!(e, ureq::Error::Io(io) if matches!(
        io.kind(),
        io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
            | io::ErrorKind::UnexpectedEof
    ))
}

/// Maps a ureq error onto the failure policy: can't connect or too slow
/// (the remote is down), or a failed transfer (this request only).
fn classify(method: &'static str, url: &str, e: ureq::Error) -> RemoteError {
    let url = url.to_string();
    match e {
        ureq::Error::Timeout(phase) => RemoteError::Timeout {
            url,
            phase: phase.to_string(),
        },
        ureq::Error::HostNotFound | ureq::Error::ConnectionFailed => RemoteError::Unreachable {
            url,
            detail: e.to_string(),
        },
        ureq::Error::Io(ref io) if is_unreachable(io.kind()) => RemoteError::Unreachable {
            url,
            detail: e.to_string(),
        },
        ureq::Error::Io(ref io) if io.kind() == io::ErrorKind::TimedOut => RemoteError::Timeout {
            url,
            phase: e.to_string(),
        },
        other => RemoteError::Transfer {
            method,
            url,
            detail: other.to_string(),
        },
    }
}

fn is_unreachable(kind: io::ErrorKind) -> bool {
    matches!(
        kind,
        io::ErrorKind::ConnectionRefused
            | io::ErrorKind::NotConnected
            | io::ErrorKind::AddrNotAvailable
            | io::ErrorKind::NetworkUnreachable
            | io::ErrorKind::HostUnreachable
            | io::ErrorKind::NetworkDown
    )
}
