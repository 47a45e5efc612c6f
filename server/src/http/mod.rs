//! The HTTP API (`schemas/server-api.md`): axum handlers over the shared
//! state, behind a bearer-token check (when a token is set), body-size and
//! time limits, and a connection cap. Connections are served by hyper with
//! a header-read timeout, so a client that never finishes its request
//! holds nothing for long.

mod api;
mod cache;
mod contract;
mod errors;
mod guard;
mod validate;

use crate::state::Shared;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::sync::atomic::AtomicUsize;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;

/// Largest request body (`POST /cook`).
pub const MAX_BODY: usize = 64 * 1024;
/// Longest time to produce a response (event streams: their headers).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);
/// Longest time for a client to send its request headers.
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; more wait in the listen backlog.
pub const MAX_CONNECTIONS: usize = 512;
/// `/events` streams open at once.
pub const MAX_STREAMS: usize = 64;

/// What handlers share.
#[derive(Clone)]
pub struct App {
    pub shared: Arc<Shared>,
    pub token: Option<Arc<str>>,
    /// Host names `Host` and `Origin` may carry (`None`: any).
    pub hosts: Option<Arc<[String]>>,
    pub streams: Arc<AtomicUsize>,
    /// Flips to true at shutdown: event streams end.
    pub shutdown: watch::Receiver<bool>,
}

pub fn router(app: App) -> Router {
    let timed = Router::new()
        .route("/", get(api::index))
        // The dashboard's detail fragments (the index is served at `/`).
        .route("/report-details/{name}", get(api::details))
        .route("/assets", get(api::assets))
        .route("/assets/{*name}", get(api::asset))
        .route("/packages/{hash}", get(api::package))
        .route("/report", get(api::report))
        .route("/manifest", get(contract::manifest))
        .route("/generations", get(contract::generations))
        .route(
            "/generations/{n}/pin",
            post(contract::pin).delete(contract::unpin),
        )
        .route("/generations/{n}/lease", post(contract::lease))
        .route(
            "/generations/{n}/lease/{id}",
            post(contract::renew).delete(contract::release),
        )
        .route("/generations/{n}/{*file}", get(contract::generation_file))
        .route("/cook", post(api::cook))
        .route("/events", get(api::events))
        .route("/metrics", get(api::metrics))
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            REQUEST_TIMEOUT,
        ));
    // A long-poll answers within its own bound (`/status?after=N`).
    let untimed = Router::new().route("/status", get(api::status));
    timed
        .merge(untimed)
        .fallback(errors::not_found)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(RequestBodyLimitLayer::new(MAX_BODY))
        .layer(middleware::from_fn_with_state(app.clone(), authorize))
        .layer(middleware::from_fn_with_state(app.clone(), guard::check))
        .layer(middleware::from_fn_with_state(app.clone(), count))
        .with_state(app)
}

/// Every request carries `Authorization: Bearer <token>`, or the session
/// cookie `/login?token=...` set, when a token is set; compared in
/// constant time.
async fn authorize(State(app): State<App>, req: Request, next: Next) -> Response {
    let Some(token) = &app.token else {
        return next.run(req).await;
    };
    if req.uri().path() == "/login" {
        return guard::login(req.uri().query(), token);
    }
    let given = req
        .headers()
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let bearer = given.is_some_and(|g| same(g.as_bytes(), token.as_bytes()));
    let session = guard::cookie(req.headers())
        .is_some_and(|c| same(c.as_bytes(), guard::session_of(token).as_bytes()));
    if bearer || session {
        return next.run(req).await;
    }
    let mut r = errors::error(
        StatusCode::UNAUTHORIZED,
        "unauthorized",
        "this server requires 'Authorization: Bearer <token>' (browsers: open /login?token=<token>)"
            .into(),
    );
    r.headers_mut().insert(
        header::WWW_AUTHENTICATE,
        header::HeaderValue::from_static("Bearer"),
    );
    r
}

fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// Count the response; an error the framework or a layer produced (413,
/// 408, 405, a path that does not decode) gets the API's JSON error body.
async fn count(State(app): State<App>, req: Request, next: Next) -> Response {
    let mut r = next.run(req).await;
    let status = r.status();
    let json = r
        .headers()
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/json"));
    if (status.is_client_error() || status.is_server_error()) && !json {
        let (code, message) = match status {
            StatusCode::PAYLOAD_TOO_LARGE => (
                "too_large",
                format!("request bodies are at most {MAX_BODY} bytes"),
            ),
            StatusCode::REQUEST_TIMEOUT => (
                "timeout",
                format!("no response within {} s", REQUEST_TIMEOUT.as_secs()),
            ),
            StatusCode::METHOD_NOT_ALLOWED => (
                "method_not_allowed",
                "method not allowed on this endpoint".into(),
            ),
            _ => ("bad_request", format!("request refused ({status})")),
        };
        r = errors::error(status, code, message);
    }
    app.shared.metrics.response(status.as_u16());
    r
}

/// Serve `router` on `listener` until `stop` resolves, then let open
/// requests finish (event streams end at shutdown) for up to `grace`.
/// At [`MAX_CONNECTIONS`], a new connection makes every open one close
/// once it is idle (idle keep-alive connections at once), so idle clients
/// never keep a new one waiting.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    stop: impl std::future::Future<Output = ()>,
    grace: Duration,
) {
    let slots = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    let (shed, _) = watch::channel(0u64);
    let (end, _) = watch::channel(false);
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            a = listener.accept() => a,
            _ = &mut stop => break,
        };
        let Ok((stream, _)) = accepted else { continue };
        let permit = match Arc::clone(&slots).try_acquire_owned() {
            Ok(p) => Ok(p),
            Err(_) => {
                shed.send_modify(|n| *n += 1);
                tokio::select! {
                    p = Arc::clone(&slots).acquire_owned() => p,
                    _ = &mut stop => break,
                }
            }
        };
        let Ok(permit) = permit else { break };
        let (shed, end) = (shed.subscribe(), end.subscribe());
        let service = TowerToHyperService::new(router.clone());
        tokio::spawn(async move {
            connection(stream, service, shed, end).await;
            drop(permit);
        });
    }
    let _ = end.send(true);
    let all = MAX_CONNECTIONS as u32;
    let _ = tokio::time::timeout(grace, slots.acquire_many(all)).await;
}

/// Serve one connection until the client closes it, the server sheds idle
/// connections, or shuts down (both: after the response in flight).
async fn connection(
    stream: tokio::net::TcpStream,
    service: TowerToHyperService<Router>,
    mut shed: watch::Receiver<u64>,
    mut end: watch::Receiver<bool>,
) {
    let conn = hyper::server::conn::http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_TIMEOUT)
        .serve_connection(TokioIo::new(stream), service);
    tokio::pin!(conn);
    tokio::select! {
        _ = conn.as_mut() => return,
        _ = shed.changed() => {}
        _ = end.wait_for(|v| *v) => {}
    }
    conn.as_mut().graceful_shutdown();
    let _ = conn.await;
}

impl IntoResponse for crate::http::errors::ApiError {
    fn into_response(self) -> Response {
        errors::error(self.status, self.code, self.message)
    }
}
