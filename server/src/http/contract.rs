//! What a client that follows a project reads: the current manifest, a
//! package by asset name, kept generations' files (immutable), and pins
//! and leases that keep a generation and its packages past retention.

use super::cache::{conditional, tagged, IMMUTABLE, REVALIDATE};
use super::errors::{api_error, no_generation, no_package, not_found, ApiError};
use super::App;
use crate::{generation, lease};
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;
use std::time::SystemTime;

fn json_bytes(bytes: Vec<u8>) -> Response {
    (
        [(header::CONTENT_TYPE, "application/json")],
        Body::from(bytes),
    )
        .into_response()
}

/// `GET /manifest`: the current generation's `manifest.json`.
pub async fn manifest(State(app): State<App>, headers: HeaderMap) -> Result<Response, ApiError> {
    let c = app.shared.current().ok_or_else(no_generation)?;
    let mut r = conditional(&headers, &c.manifest_etag, REVALIDATE, || {
        json_bytes(c.manifest_json.as_ref().clone())
    });
    generation_header(&mut r, c.number);
    Ok(r)
}

fn generation_header(r: &mut Response, n: u64) {
    if let Ok(v) = HeaderValue::from_str(&n.to_string()) {
        r.headers_mut().insert("x-ludus-anim-generation", v);
    }
}

#[derive(Serialize)]
struct Kept {
    generation: u64,
    pinned: bool,
    /// When its last live lease expires (Unix ms), if it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    leased_until_unix_ms: Option<u64>,
}

#[derive(Serialize)]
struct GenerationList {
    current: Option<u64>,
    generations: Vec<Kept>,
}

/// `GET /generations`: the generations on disk, oldest first.
pub async fn generations(State(app): State<App>) -> Result<Response, ApiError> {
    let out = app.shared.out.clone();
    let list = tokio::task::spawn_blocking(move || generation::kept::list(&out))
        .await
        .map_err(|_| internal("listing generations failed"))?;
    let body = GenerationList {
        current: app.shared.current().map(|c| c.number),
        generations: list
            .into_iter()
            .map(|g| Kept {
                generation: g.number,
                pinned: g.pinned,
                leased_until_unix_ms: g.leased_until,
            })
            .collect(),
    };
    let mut r = Json(body).into_response();
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(r)
}

fn internal(message: &str) -> ApiError {
    api_error(StatusCode::INTERNAL_SERVER_ERROR, "internal", message)
}

fn unknown_generation(n: u64) -> ApiError {
    api_error(
        StatusCode::NOT_FOUND,
        "unknown_generation",
        format!("generation {n} is not kept (GET /generations lists them; POST /generations/{{n}}/pin keeps one)"),
    )
}

fn number(n: &str) -> Result<u64, ApiError> {
    n.parse().map_err(|_| {
        api_error(
            StatusCode::BAD_REQUEST,
            "bad_generation",
            "a generation is a decimal number",
        )
    })
}

/// `GET /generations/{n}/manifest|report|stale`: a kept generation's
/// file, immutable; `GET /generations/{n}/assets/{name}/package`: the
/// package that generation serves for `name`.
pub async fn generation_file(
    State(app): State<App>,
    Path((n, file)): Path<(String, String)>,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    let n = number(&n)?;
    if let Some(name) = file
        .strip_prefix("assets/")
        .and_then(|f| f.strip_suffix("/package"))
    {
        return package_of_generation(app, n, name, headers).await;
    }
    let name = match file.as_str() {
        "manifest" | "manifest.json" => "manifest.json",
        "report" | "report.json" => "report.json",
        "stale" | "stale.json" => "stale.json",
        _ => return Err(not_found().await),
    };
    let etag = format!("\"gen-{n}-{name}\"");
    let path =
        generation::file_of(&app.shared.out, n, name).ok_or_else(|| unknown_generation(n))?;
    if super::cache::none_match(&headers, &etag) {
        return Ok(tagged(
            StatusCode::NOT_MODIFIED.into_response(),
            &etag,
            IMMUTABLE,
        ));
    }
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|_| unknown_generation(n))?;
    Ok(tagged(json_bytes(bytes), &etag, IMMUTABLE))
}

async fn package_of_generation(
    app: App,
    n: u64,
    name: &str,
    headers: HeaderMap,
) -> Result<Response, ApiError> {
    if let Some(why) = super::validate::name_problem(name) {
        return Err(api_error(StatusCode::BAD_REQUEST, "bad_name", why));
    }
    let path = generation::file_of(&app.shared.out, n, "manifest.json")
        .ok_or_else(|| unknown_generation(n))?;
    let bytes = tokio::fs::read(&path)
        .await
        .map_err(|_| unknown_generation(n))?;
    let m: ludus_anim_cooker::report::PackageManifest =
        serde_json::from_slice(&bytes).map_err(|_| internal("generation manifest unreadable"))?;
    let hash = m
        .assets
        .iter()
        .find(|a| a.source == name)
        .map(|a| a.package_hash.clone())
        .ok_or_else(|| no_package(name))?;
    super::api::package_bytes(&app, &hash, &headers, IMMUTABLE).await
}

/// `POST /generations/{n}/pin`: keep generation `n` and its packages until
/// unpinned (across restarts).
pub async fn pin(
    State(app): State<App>,
    _: super::guard::Scripted,
    Path(n): Path<String>,
) -> Result<Response, ApiError> {
    set_pin(app, number(&n)?, true).await
}

/// `DELETE /generations/{n}/pin`: let `--keep` collect it again.
pub async fn unpin(
    State(app): State<App>,
    _: super::guard::Scripted,
    Path(n): Path<String>,
) -> Result<Response, ApiError> {
    set_pin(app, number(&n)?, false).await
}

async fn set_pin(app: App, n: u64, on: bool) -> Result<Response, ApiError> {
    let shared = app.shared.clone();
    let done = tokio::task::spawn_blocking(move || {
        // Collection holds this lock: the directory cannot go in between.
        let _held = shared.pin_lock.lock();
        generation::kept::pin(&shared.out, n, on)
    })
    .await
    .map_err(|_| internal("pinning failed"))?;
    match done {
        Ok(true) => Ok(Json(Kept {
            generation: n,
            pinned: on,
            leased_until_unix_ms: None,
        })
        .into_response()),
        Ok(false) => Err(unknown_generation(n)),
        Err(e) => Err(internal(&e.to_string())),
    }
}

#[derive(serde::Deserialize)]
pub struct Ttl {
    ttl: Option<u64>,
}

fn ttl_of(t: &Ttl) -> Result<u64, ApiError> {
    match t.ttl.unwrap_or(lease::DEFAULT_TTL_S) {
        s @ 1..=lease::MAX_TTL_S => Ok(s),
        _ => Err(api_error(
            StatusCode::BAD_REQUEST,
            "bad_request",
            format!("ttl: between 1 and {} seconds", lease::MAX_TTL_S),
        )),
    }
}

fn unknown_lease(n: u64) -> ApiError {
    api_error(
        StatusCode::NOT_FOUND,
        "unknown_lease",
        format!("no live lease with this id on generation {n} (it expired or was released): take a new one"),
    )
}

/// `POST /generations/{n}/lease?ttl=S`: keep generation `n` and its
/// packages for S seconds (default 300); 201 with the lease.
pub async fn lease(
    State(app): State<App>,
    _: super::guard::Scripted,
    Path(n): Path<String>,
    Query(t): Query<Ttl>,
) -> Result<Response, ApiError> {
    let (n, ttl) = (number(&n)?, ttl_of(&t)?);
    let granted = held(&app, move |out| {
        let Some(dir) = generation::kept::dir_if_kept(out, n) else {
            return Ok(None);
        };
        lease::grant(&dir, n, ttl, SystemTime::now()).map(Some)
    })
    .await?;
    let l = granted.ok_or_else(|| unknown_generation(n))?;
    Ok((StatusCode::CREATED, Json(l)).into_response())
}

/// `POST /generations/{n}/lease/{id}?ttl=S`: renew a live lease for S
/// seconds from now.
pub async fn renew(
    State(app): State<App>,
    _: super::guard::Scripted,
    Path((n, id)): Path<(String, String)>,
    Query(t): Query<Ttl>,
) -> Result<Response, ApiError> {
    let (n, ttl) = (number(&n)?, ttl_of(&t)?);
    let renewed = held(&app, move |out| {
        match generation::kept::dir_if_kept(out, n) {
            Some(dir) => lease::renew(&dir, n, &id, ttl, SystemTime::now()),
            None => Ok(None),
        }
    })
    .await?;
    renewed
        .map(|l| Json(l).into_response())
        .ok_or_else(|| unknown_lease(n))
}

/// `DELETE /generations/{n}/lease/{id}`: end a lease now (204).
pub async fn release(
    State(app): State<App>,
    _: super::guard::Scripted,
    Path((n, id)): Path<(String, String)>,
) -> Result<Response, ApiError> {
    let n = number(&n)?;
    let released = held(&app, move |out| {
        match generation::kept::dir_if_kept(out, n) {
            Some(dir) => lease::release(&dir, &id),
            None => Ok(false),
        }
    })
    .await?;
    match released {
        true => Ok(StatusCode::NO_CONTENT.into_response()),
        false => Err(unknown_lease(n)),
    }
}

/// Run `f` on the output directory under the lock collection holds.
async fn held<T: Send + 'static>(
    app: &App,
    f: impl FnOnce(&std::path::Path) -> std::io::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let shared = app.shared.clone();
    tokio::task::spawn_blocking(move || {
        let _held = shared.pin_lock.lock();
        f(&shared.out)
    })
    .await
    .map_err(|_| internal("lease failed"))?
    .map_err(|e| internal(&e.to_string()))
}
