//! What a browser could be tricked into: requests are refused unless
//! `Host` (and `Origin`, when sent) name an allowed host, so a DNS-rebound
//! page cannot read the server; state-changing requests need a JSON body
//! type or the `X-Ludus-Anim` header, which a cross-site form or simple
//! request cannot send without a CORS preflight this server never grants.
//! With a token, a browser authenticates once at `/login?token=...`, which
//! sets an `HttpOnly`, `SameSite=Strict` session cookie (derived from the
//! token, never the token itself) that `EventSource` and the dashboard send.

use super::errors::error;
use super::App;
use axum::extract::{FromRequestParts, Request, State};
use axum::http::request::Parts;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// The header a script sets to mark a request as not cross-site.
pub const CLIENT_HEADER: &str = "x-ludus-anim";
/// The session cookie's name.
pub const COOKIE: &str = "ludus_anim_session";
/// How long a browser session lasts.
const SESSION_S: u64 = 12 * 3600;

/// Refuse requests naming a host that is not allowed.
pub async fn check(State(app): State<App>, req: Request, next: Next) -> Response {
    if let Some(hosts) = &app.hosts {
        if let Some(r) = host_problem(req.headers(), hosts) {
            return r;
        }
    }
    next.run(req).await
}

/// An extractor for the handlers that change state: the request carries a
/// JSON content type or [`CLIENT_HEADER`], which a cross-site page can
/// only send after a CORS preflight this server never grants.
pub struct Scripted;

impl<S: Send + Sync> FromRequestParts<S> for Scripted {
    type Rejection = Response;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Scripted, Response> {
        match scripted(&parts.headers) {
            true => Ok(Scripted),
            false => Err(error(
                StatusCode::FORBIDDEN,
                "cross_site",
                format!("requests that change state need 'Content-Type: application/json' or an '{CLIENT_HEADER}' header"),
            )),
        }
    }
}

fn host_problem(h: &HeaderMap, hosts: &[String]) -> Option<Response> {
    let host = h.get(header::HOST).and_then(|v| v.to_str().ok());
    if !host.is_some_and(|v| allowed(strip_port(v), hosts)) {
        return Some(error(
            StatusCode::FORBIDDEN,
            "forbidden_host",
            "the Host header names a host this server does not answer for (see --allow-host)"
                .into(),
        ));
    }
    let origin = h.get(header::ORIGIN).and_then(|v| v.to_str().ok());
    let origin_ok = origin.is_none_or(|o| {
        o.split_once("://")
            .is_some_and(|(_, rest)| allowed(strip_port(rest), hosts))
    });
    (!origin_ok).then(|| {
        error(
            StatusCode::FORBIDDEN,
            "forbidden_origin",
            "cross-origin requests are refused (see --allow-host)".into(),
        )
    })
}

/// `host[:port]` → host (`[v6]` keeps its brackets).
fn strip_port(v: &str) -> &str {
    match v.rfind(']') {
        Some(end) => &v[..=end],
        None => v.split(':').next().unwrap_or(v),
    }
}

fn allowed(host: &str, hosts: &[String]) -> bool {
    let host = host.trim_end_matches('.');
    hosts.iter().any(|h| h.eq_ignore_ascii_case(host))
}

fn scripted(h: &HeaderMap) -> bool {
    let json = h
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"));
    json || h.contains_key(CLIENT_HEADER)
}

/// The session cookie's value for `token`.
pub fn session_of(token: &str) -> String {
    blake3::derive_key("ludus-anim server 2026 browser session", token.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The session cookie the request carries, if any.
pub fn cookie(h: &HeaderMap) -> Option<&str> {
    h.get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, _)| *k == COOKIE)
        .map(|(_, v)| v)
}

/// `/login?token=T`: with the right token, set the session cookie and
/// send the browser to `/` (the token leaves the address bar).
pub fn login(query: Option<&str>, token: &str) -> Response {
    let given = query
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|kv| kv.strip_prefix("token="));
    if !given.is_some_and(|g| super::same(g.as_bytes(), token.as_bytes())) {
        return error(
            StatusCode::UNAUTHORIZED,
            "unauthorized",
            "open /login?token=<token> with the server's token".into(),
        );
    }
    let cookie = format!(
        "{COOKIE}={}; Path=/; HttpOnly; SameSite=Strict; Max-Age={SESSION_S}",
        session_of(token)
    );
    let mut r = StatusCode::SEE_OTHER.into_response();
    let h = r.headers_mut();
    h.insert(header::LOCATION, HeaderValue::from_static("/"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        h.insert(header::SET_COOKIE, v);
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_compared_without_port() {
        let hosts = vec!["localhost".to_string(), "[::1]".to_string()];
        assert!(allowed(strip_port("localhost:7878"), &hosts));
        assert!(allowed(strip_port("LOCALHOST."), &hosts));
        assert!(allowed(strip_port("[::1]:80"), &hosts));
        assert!(!allowed(strip_port("evil.example:7878"), &hosts));
        assert!(!allowed(strip_port("localhost.evil.example"), &hosts));
    }
}
