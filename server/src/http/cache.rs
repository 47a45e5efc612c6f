//! Conditional requests: `ETag` and `If-None-Match` (RFC 9110 §13.1.2:
//! weak comparison, a list of tags, or `*`) on every cacheable response.

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// Content-addressed: the URL names these bytes forever.
pub const IMMUTABLE: &str = "public, max-age=31536000, immutable";
/// The URL's content changes: revalidate before every use.
pub const REVALIDATE: &str = "no-cache";

/// Whether `If-None-Match` in `headers` matches `etag` (a quoted tag).
pub fn none_match(headers: &HeaderMap, etag: &str) -> bool {
    let want = etag.trim_start_matches("W/");
    headers
        .get_all(header::IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/") == want)
}

/// Set `ETag` and `Cache-Control` on `r`.
pub fn tagged(mut r: Response, etag: &str, cache: &'static str) -> Response {
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(etag) {
        h.insert(header::ETAG, v);
    }
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    r
}

/// 304 when the client holds `etag`, else `body` (made only then).
pub fn conditional(
    headers: &HeaderMap,
    etag: &str,
    cache: &'static str,
    body: impl FnOnce() -> Response,
) -> Response {
    let r = match none_match(headers, etag) {
        true => StatusCode::NOT_MODIFIED.into_response(),
        false => body(),
    };
    tagged(r, etag, cache)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(v: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(header::IF_NONE_MATCH, HeaderValue::from_str(v).unwrap());
        h
    }

    #[test]
    fn if_none_match_is_weak_takes_lists_and_star() {
        let tag = "\"abc\"";
        assert!(none_match(&with("\"abc\""), tag));
        assert!(none_match(&with("W/\"abc\""), tag));
        assert!(none_match(&with("\"x\", W/\"abc\""), tag));
        assert!(none_match(&with("*"), tag));
        assert!(!none_match(&with("\"abcd\""), tag));
        assert!(!none_match(&with("abc"), tag));
        assert!(!none_match(&HeaderMap::new(), tag));
    }
}
