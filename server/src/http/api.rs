//! The endpoints. Every JSON response has a schema in `schemas/server/`.

use super::cache::{conditional, IMMUTABLE, REVALIDATE};
use super::errors::{api_error, no_generation, ApiError};
use super::validate::{is_hash, name_problem};
use super::{App, MAX_STREAMS};
use crate::health::{Health, Problem};
use crate::state::{unix_ms, Cooking, LastCook, Logged, Published};
use axum::body::{Body, Bytes};
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use axum::Json;
use futures_util::StreamExt;
use ludus_anim_cooker::report::{AssetReport, AssetStatus, ReportDiagnostic};
use serde::{Deserialize, Serialize};
use std::convert::Infallible;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use tokio_stream::wrappers::errors::BroadcastStreamRecvError;
use tokio_stream::wrappers::BroadcastStream;

/// The current generation's dashboard, rendered once per generation off
/// the async threads.
async fn dashboard(app: &App) -> Result<Arc<ludus_anim_dashboard::html::site::Site>, ApiError> {
    let current = app.shared.current().ok_or_else(no_generation)?;
    tokio::task::spawn_blocking(move || current.dashboard())
        .await
        .map_err(|_| {
            api_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "dashboard",
                "rendering failed",
            )
        })
}

/// `/`: the dashboard index of the current generation (the page `ludus-anim
/// report` writes).
pub async fn index(State(app): State<App>) -> Result<Html<String>, ApiError> {
    Ok(Html(dashboard(&app).await?.index.clone()))
}

/// `/report-details/{name}`: one detail fragment the index names, looked
/// up by name (never joined onto a path); content-named, so immutable.
pub async fn details(
    State(app): State<App>,
    Path(name): Path<String>,
) -> Result<Response, ApiError> {
    let site = dashboard(&app).await?;
    let f = site
        .fragments
        .iter()
        .find(|f| f.name == name)
        .ok_or_else(|| api_error(StatusCode::NOT_FOUND, "not_found", "no such fragment"))?;
    let headers = [
        (header::CONTENT_TYPE, "text/javascript; charset=utf-8"),
        (header::CACHE_CONTROL, IMMUTABLE),
    ];
    Ok((headers, f.bytes.clone()).into_response())
}

#[derive(Serialize)]
pub struct Status {
    generation: Option<u64>,
    published_unix_ms: Option<u64>,
    cooker_version: &'static str,
    revision: &'static str,
    watch: String,
    queue: Queue,
    last_cook: Option<LastCook>,
    counts: Counts,
    /// No project error and every change applied.
    ok: bool,
    health: Health,
}

#[derive(Serialize)]
struct Queue {
    pending_changes: usize,
    pending_assets: Vec<String>,
    cooking: Option<Cooking>,
}

#[derive(Serialize, Default)]
struct Counts {
    assets: usize,
    ok: usize,
    failed: usize,
    stale: usize,
    packages: usize,
}

/// `/status?after=N&timeout=S`: a long-poll.
#[derive(Deserialize)]
pub struct StatusQuery {
    after: Option<u64>,
    timeout: Option<u64>,
}

/// The longest a long-poll waits (seconds).
const LONG_POLL_MAX_S: u64 = 60;
/// A long-poll's wait when `timeout` is not given (seconds).
const LONG_POLL_DEFAULT_S: u64 = 30;

/// `GET /status`; with `after=N`, answered once a generation newer than N
/// is published, health changes, or `timeout` seconds pass (default 30,
/// at most 60), whichever is first.
pub async fn status(State(app): State<App>, Query(q): Query<StatusQuery>) -> Response {
    if let Some(after) = q.after {
        let secs = q
            .timeout
            .unwrap_or(LONG_POLL_DEFAULT_S)
            .min(LONG_POLL_MAX_S);
        wait_past(&app, after, std::time::Duration::from_secs(secs)).await;
    }
    let mut r = Json(status_now(&app)).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

async fn wait_past(app: &App, after: u64, limit: std::time::Duration) {
    let mut changes = app.shared.changes.subscribe();
    changes.borrow_and_update();
    if app.shared.current().is_some_and(|c| c.number > after) {
        return;
    }
    let mut stop = app.shutdown.clone();
    tokio::select! {
        _ = changes.changed() => {}
        _ = tokio::time::sleep(limit) => {}
        _ = stop.wait_for(|v| *v) => {}
    }
}

fn status_now(app: &App) -> Status {
    let s = &app.shared;
    let current = s.current();
    let (pending_changes, pending_assets) = s
        .pending
        .lock()
        // A requested full cook or re-resolve counts as a pending change:
        // before the cook thread takes it, the server is not idle.
        .map(|p| {
            let flags = usize::from(p.all) + usize::from(p.resolve);
            (p.paths.len() + flags, p.assets.iter().cloned().collect())
        })
        .unwrap_or_default();
    let health = s.health();
    Status {
        generation: current.as_ref().map(|c| c.number),
        published_unix_ms: current.as_ref().map(|c| unix_ms(c.published_at)),
        cooker_version: ludus_anim_cooker::COOKER_VERSION,
        revision: ludus_anim_cooker::REVISION,
        watch: s.watch_mode.lock().map(|m| m.clone()).unwrap_or_default(),
        queue: Queue {
            pending_changes,
            pending_assets,
            cooking: s.cooking.lock().ok().and_then(|c| c.clone()),
        },
        last_cook: s.last_cook.lock().ok().and_then(|l| l.clone()),
        counts: counts(current.as_deref()),
        ok: health.ok(),
        health,
    }
}

fn counts(current: Option<&Published>) -> Counts {
    let Some(c) = current else {
        return Counts::default();
    };
    let a = &c.files.report.assets;
    Counts {
        assets: a.len(),
        ok: a.iter().filter(|x| x.status == AssetStatus::Ok).count(),
        failed: a.iter().filter(|x| x.status == AssetStatus::Failed).count(),
        stale: c.stale().len(),
        packages: c.files.manifest.assets.len(),
    }
}

#[derive(Serialize)]
struct AssetSummary<'a> {
    name: &'a str,
    status: &'static str,
    stale: bool,
    package: Option<&'a str>,
    package_hash: Option<&'a str>,
    /// Why the asset's latest change is not what is served, if it is not.
    not_applied: Option<Problem>,
}

#[derive(Serialize)]
pub struct AssetList<'a> {
    generation: Option<u64>,
    assets: Vec<AssetSummary<'a>>,
}

fn status_name(r: Option<&AssetReport>) -> &'static str {
    match r.map(|r| &r.status) {
        Some(AssetStatus::Ok) => "ok",
        Some(AssetStatus::Failed) => "failed",
        None => "pending",
    }
}

fn summary<'a>(c: Option<&'a Published>, h: &Health, name: &'a str) -> AssetSummary<'a> {
    let served = c.and_then(|c| c.served(name));
    AssetSummary {
        name,
        status: status_name(c.and_then(|c| c.report_of(name))),
        stale: c.is_some_and(|c| c.stale().contains_key(name)),
        package: served.map(|m| m.package.as_str()),
        package_hash: served.map(|m| m.package_hash.as_str()),
        not_applied: h.not_applied.get(name).cloned(),
    }
}

pub async fn assets(State(app): State<App>) -> Response {
    let names = app
        .shared
        .names
        .read()
        .map(|n| n.clone())
        .unwrap_or_default();
    let current = app.shared.current();
    let health = app.shared.health();
    let list = AssetList {
        generation: current.as_ref().map(|c| c.number),
        assets: names
            .iter()
            .map(|n| summary(current.as_deref(), &health, n))
            .collect(),
    };
    Json(list).into_response()
}

#[derive(Serialize)]
struct AssetDetail<'a> {
    #[serde(flatten)]
    summary: AssetSummary<'a>,
    generation: Option<u64>,
    /// The error diagnostics of the failing cook, when stale.
    stale_diagnostics: Vec<ReportDiagnostic>,
    report: Option<&'a AssetReport>,
}

pub async fn asset(
    State(app): State<App>,
    Path(name): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Some(asset) = name.strip_suffix("/package") {
        return package_by_name(&app, asset, &headers).await;
    }
    if let Some(why) = name_problem(&name) {
        return Err(api_error(StatusCode::BAD_REQUEST, "bad_name", why));
    }
    let known = app.shared.names.read().is_ok_and(|n| n.contains(&name));
    if !known {
        return Err(api_error(
            StatusCode::NOT_FOUND,
            "unknown_asset",
            format!("no asset '{name}' in the project (GET /assets lists them)"),
        ));
    }
    let current = app.shared.current();
    let c = current.as_deref();
    let health = app.shared.health();
    let detail = AssetDetail {
        summary: summary(c, &health, &name),
        generation: c.map(|c| c.number),
        stale_diagnostics: c
            .and_then(|c| c.stale().get(&name).cloned())
            .unwrap_or_default(),
        report: c.and_then(|c| c.report_of(&name)),
    };
    Ok(Json(detail).into_response())
}

pub async fn package(
    State(app): State<App>,
    Path(hash): Path<String>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    package_bytes(&app, &hash, &headers, IMMUTABLE).await
}

/// `GET /assets/{name}/package`: the package the current generation
/// serves for `name`. The URL's content changes with generations, so it
/// is revalidated (`no-cache`); the ETag is the package hash, the same as
/// `/packages/{hash}`'s, and `Content-Location` names that immutable URL.
async fn package_by_name(app: &App, name: &str, headers: &HeaderMap) -> Result<Response, ApiError> {
    if let Some(why) = name_problem(name) {
        return Err(api_error(StatusCode::BAD_REQUEST, "bad_name", why));
    }
    let c = app.shared.current().ok_or_else(no_generation)?;
    let Some(served) = c.served(name) else {
        let known = app
            .shared
            .names
            .read()
            .is_ok_and(|n| n.iter().any(|x| x == name));
        return Err(match known {
            true => super::errors::no_package(name),
            false => api_error(
                StatusCode::NOT_FOUND,
                "unknown_asset",
                format!("no asset '{name}' in the project (GET /assets lists them)"),
            ),
        });
    };
    let hash = served.package_hash.clone();
    let mut r = package_bytes(app, &hash, headers, REVALIDATE).await?;
    let h = r.headers_mut();
    if let Ok(v) = HeaderValue::from_str(&format!("/packages/{hash}")) {
        h.insert(header::CONTENT_LOCATION, v);
    }
    if let Ok(v) = HeaderValue::from_str(&c.number.to_string()) {
        h.insert("x-ludus-anim-generation", v);
    }
    Ok(r)
}

/// The package with blake3 `hash` (any kept generation's), re-hashed
/// before it is sent; 304 when `If-None-Match` holds it.
pub(super) async fn package_bytes(
    app: &App,
    hash: &str,
    headers: &HeaderMap,
    cache: &'static str,
) -> Result<Response, ApiError> {
    if !is_hash(hash) {
        return Err(api_error(
            StatusCode::BAD_REQUEST,
            "bad_hash",
            "a package hash is 64 lowercase hex digits (manifest.json's package_hash)",
        ));
    }
    let rel = app
        .shared
        .packages
        .read()
        .ok()
        .and_then(|p| p.get(hash).cloned());
    let Some(rel) = rel else {
        return Err(api_error(
            StatusCode::NOT_FOUND,
            "unknown_package",
            "no kept generation serves a package with this hash",
        ));
    };
    let etag = format!("\"{hash}\"");
    if super::cache::none_match(headers, &etag) {
        return Ok(super::cache::tagged(
            StatusCode::NOT_MODIFIED.into_response(),
            &etag,
            cache,
        ));
    }
    let bytes = tokio::fs::read(app.shared.out.join(&rel))
        .await
        .map_err(|e| {
            api_error(
                StatusCode::INTERNAL_SERVER_ERROR,
                "package_unreadable",
                format!("{rel}: {e}"),
            )
        })?;
    if blake3::hash(&bytes).to_hex().as_str() != hash {
        return Err(api_error(
            StatusCode::INTERNAL_SERVER_ERROR,
            "package_corrupt",
            format!("{rel} does not hash to its name"),
        ));
    }
    let r = (
        [(header::CONTENT_TYPE, "application/octet-stream")],
        Body::from(bytes),
    )
        .into_response();
    Ok(super::cache::tagged(r, &etag, cache))
}

/// `GET /report`: the current generation's `report.json`.
pub async fn report(State(app): State<App>, headers: HeaderMap) -> Result<Response, ApiError> {
    let c = app.shared.current().ok_or_else(no_generation)?;
    let etag = format!("\"gen-{}\"", c.number);
    Ok(conditional(&headers, &etag, REVALIDATE, || {
        (
            [(header::CONTENT_TYPE, "application/json")],
            Body::from(c.report_json.as_ref().clone()),
        )
            .into_response()
    }))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct CookRequest {
    #[serde(default)]
    assets: Option<Vec<String>>,
}

#[derive(Serialize)]
pub struct CookAccepted {
    queued: Vec<String>,
    all: bool,
    generation: Option<u64>,
}

/// `POST /cook`: body `{"assets": [names]}` (optional; empty cooks all).
pub async fn cook(
    State(app): State<App>,
    _: super::guard::Scripted,
    body: Bytes,
) -> Result<Response, ApiError> {
    let req: CookRequest = if body.iter().all(u8::is_ascii_whitespace) {
        CookRequest::default()
    } else {
        serde_json::from_slice(&body)
            .map_err(|e| api_error(StatusCode::BAD_REQUEST, "bad_request", format!("body: {e}")))?
    };
    let names = app
        .shared
        .names
        .read()
        .map(|n| n.clone())
        .unwrap_or_default();
    let queued = match &req.assets {
        Some(list) => check_names(list, &names)?,
        None => Vec::new(),
    };
    let all = req.assets.is_none();
    app.shared.submit(|p| {
        p.all |= all;
        p.assets.extend(queued.iter().cloned());
    });
    let body = CookAccepted {
        queued,
        all,
        generation: app.shared.current().map(|c| c.number),
    };
    Ok((StatusCode::ACCEPTED, Json(body)).into_response())
}

fn check_names(list: &[String], names: &[String]) -> Result<Vec<String>, ApiError> {
    if list.len() > names.len().max(1) {
        return Err(api_error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            "more names than assets",
        ));
    }
    for n in list {
        if let Some(why) = name_problem(n) {
            return Err(api_error(StatusCode::BAD_REQUEST, "bad_name", why));
        }
        if !names.contains(n) {
            return Err(api_error(
                StatusCode::NOT_FOUND,
                "unknown_asset",
                format!("no asset '{n}' in the project"),
            ));
        }
    }
    Ok(list.to_vec())
}

/// Decrements the open-stream count when a stream ends.
struct StreamSlot(Arc<std::sync::atomic::AtomicUsize>);

impl Drop for StreamSlot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// `GET /events`: every cook event as `cook --json` prints it, plus
/// `generation_published` and `health`, as server-sent events (`data:` one
/// JSON object, `id:` its place in the stream). A client reconnecting
/// with `Last-Event-ID` gets the events it missed first (the last
/// [`crate::state::EVENT_HISTORY`] are kept), or a `resync` event when
/// they are gone (or the server restarted): it should then re-read
/// `/manifest` and `/status`.
pub async fn events(State(app): State<App>, headers: HeaderMap) -> Result<Response, ApiError> {
    if app.streams.fetch_add(1, Ordering::Relaxed) >= MAX_STREAMS {
        app.streams.fetch_sub(1, Ordering::Relaxed);
        return Err(api_error(
            StatusCode::SERVICE_UNAVAILABLE,
            "too_many_streams",
            format!("at most {MAX_STREAMS} event streams at once"),
        ));
    }
    let slot = StreamSlot(Arc::clone(&app.streams));
    let mut stop = app.shutdown.clone();
    let ended = async move {
        let _ = stop.wait_for(|v| *v).await;
    };
    let boot = app.shared.boot;
    let last = headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .map(|v| parse_id(v, boot));
    let (rx, mut first) = resume(&app, last);
    first.insert(
        0,
        hello(app.shared.current().map(|c| c.number), last.is_some()),
    );
    let stream = futures_util::stream::iter(first)
        .chain(BroadcastStream::new(rx).map(move |r| to_sse(r, boot)))
        .take_until(ended)
        .map(move |e| {
            let _keep = &slot;
            e
        });
    Ok(Sse::new(stream)
        .keep_alive(KeepAlive::default())
        .into_response())
}

/// What a `Last-Event-ID` says: an event of this run, or of another one.
#[derive(Clone, Copy)]
enum LastId {
    Ours(u64),
    Other,
}

fn parse_id(v: &str, boot: u64) -> LastId {
    match v.trim().split_once('-') {
        Some((b, n)) if b.parse() == Ok(boot) => n.parse().map_or(LastId::Other, LastId::Ours),
        _ => LastId::Other,
    }
}

/// Subscribe, and the events to send first: those after `last`, or a
/// `resync` when they are no longer kept. Under the log's lock, so no
/// event is both replayed and received, or neither.
fn resume(
    app: &App,
    last: Option<LastId>,
) -> (
    tokio::sync::broadcast::Receiver<Logged>,
    Vec<Result<Event, Infallible>>,
) {
    let boot = app.shared.boot;
    let Ok(log) = app.shared.log.lock() else {
        return (
            app.shared.events.subscribe(),
            vec![resync("the event log is unavailable")],
        );
    };
    let rx = app.shared.events.subscribe();
    let seq = match last {
        None => return (rx, Vec::new()),
        Some(LastId::Other) => {
            return (rx, vec![resync("the server restarted since that event")]);
        }
        Some(LastId::Ours(seq)) => seq,
    };
    let oldest = log.recent.front().map_or(log.next, |e| e.seq);
    if seq + 1 < oldest {
        return (
            rx,
            vec![resync("the events after that one are no longer kept")],
        );
    }
    let replay = log
        .recent
        .iter()
        .filter(|e| e.seq > seq)
        .map(|e| to_sse(Ok(e.clone()), boot))
        .collect();
    (rx, replay)
}

fn resync(reason: &str) -> Result<Event, Infallible> {
    let v = serde_json::json!({"event": "resync", "reason": reason});
    Ok(Event::default().data(v.to_string()))
}

/// The first event of a stream: which generation is being served.
fn hello(generation: Option<u64>, resumed: bool) -> Result<Event, Infallible> {
    let v = serde_json::json!({"event": "hello", "generation": generation, "resumed": resumed});
    Ok(Event::default().data(v.to_string()))
}

fn to_sse(r: Result<Logged, BroadcastStreamRecvError>, boot: u64) -> Result<Event, Infallible> {
    Ok(match r {
        Ok(e) => Event::default()
            .id(format!("{boot}-{}", e.seq))
            .data(&*e.line),
        Err(BroadcastStreamRecvError::Lagged(n)) => {
            let v = serde_json::json!({"event": "lagged", "missed": n});
            Event::default().data(v.to_string())
        }
    })
}

pub async fn metrics(State(app): State<App>) -> Response {
    let s = &app.shared;
    let c = s.current();
    let dirty = s
        .pending
        .lock()
        .map(|p| p.paths.len() + p.assets.len())
        .unwrap_or(0);
    let text = s.metrics.render(
        c.as_ref().map_or(0, |c| c.number),
        c.as_ref().map_or(0, |c| c.stale().len()),
        dirty,
    );
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], text).into_response()
}
