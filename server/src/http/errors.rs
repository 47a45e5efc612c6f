//! Error responses: `{"error": code, "message": ...}` with a status, one
//! shape for every endpoint (and the guard that answers before them).

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde::Serialize;

/// An error response: `{"error": code, "message": ...}`.
pub struct ApiError {
    pub status: StatusCode,
    pub code: &'static str,
    pub message: String,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    error: &'a str,
    message: &'a str,
}

pub fn error(status: StatusCode, code: &str, message: String) -> Response {
    let body = ErrorBody {
        error: code,
        message: &message,
    };
    (status, Json(body)).into_response()
}

pub fn api_error(status: StatusCode, code: &'static str, message: impl Into<String>) -> ApiError {
    ApiError {
        status,
        code,
        message: message.into(),
    }
}

pub fn no_generation() -> ApiError {
    api_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "no_generation",
        "nothing is published yet: the first cook is running",
    )
}

pub async fn not_found() -> ApiError {
    api_error(StatusCode::NOT_FOUND, "not_found", "no such endpoint")
}

/// The asset exists but has no package in this generation.
pub fn no_package(name: &str) -> ApiError {
    api_error(
        StatusCode::NOT_FOUND,
        "no_package",
        format!("'{name}' has no package in this generation (GET /assets/{name} says why)"),
    )
}
