//! The asset server's request handling (issues #12 and #15): any method,
//! path, `Authorization` header and body through the real router (token
//! check, body limit, path and name validation, the handlers, `POST
//! /cook` body parsing) against a server that has published nothing yet.
//! No request may panic or get a 500, and every JSON response must be
//! JSON. Input: one selector byte (method; bit 7: a token is set), then
//! the path, a newline, the header value, a newline, the body.
#![no_main]

use axum::body::Body;
use axum::http::{header, Request, StatusCode};
use libfuzzer_sys::fuzz_target;
use ludus_anim_server::http::{router, App};
use ludus_anim_server::state::Shared;
use std::sync::atomic::AtomicUsize;
use std::sync::{Arc, OnceLock};
use tokio::sync::watch;
use tower::ServiceExt;

const METHODS: [&str; 6] = ["GET", "POST", "PUT", "DELETE", "HEAD", "OPTIONS"];

struct Fixture {
    runtime: tokio::runtime::Runtime,
    shared: Arc<Shared>,
    // Kept so the shutdown channel stays open. It starts at `true` (shut
    // down): a long-poll (`/status?after=N`) then answers at once instead
    // of waiting up to 60 s, and event streams end at once (only their
    // headers are checked).
    _shutdown: watch::Sender<bool>,
    shutdown: watch::Receiver<bool>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio runtime");
        let out = std::env::temp_dir().join("ludus-anim-fuzz-server-out");
        let (tx, rx) = watch::channel(true);
        Fixture {
            runtime,
            shared: Arc::new(Shared::new(out)),
            _shutdown: tx,
            shutdown: rx,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&sel, rest)) = data.split_first() else {
        return;
    };
    let mut parts = rest.splitn(3, |b| *b == b'\n');
    let (path, auth, body) = (
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
        parts.next().unwrap_or_default(),
    );
    let f = fixture();
    let app = App {
        shared: f.shared.clone(),
        token: (sel & 0x80 != 0).then(|| Arc::from("fuzz-token")),
        // Requests carry no Host header here: allow any, so the handlers
        // behind the Host check are reached.
        hosts: None,
        streams: Arc::new(AtomicUsize::new(0)),
        shutdown: f.shutdown.clone(),
    };
    let method = METHODS[usize::from(sel & 0x7f) % METHODS.len()];
    let mut req = Request::builder().method(method);
    req = req.uri(path);
    if !auth.is_empty() {
        req = req.header(header::AUTHORIZATION, auth);
    }
    let head = method == "HEAD";
    let Ok(req) = req.body(Body::from(body.to_vec())) else {
        return; // not an HTTP request at all (bad URI or header bytes)
    };
    f.runtime.block_on(async move {
        let resp = router(app).oneshot(req).await.expect("infallible router");
        let status = resp.status();
        assert_ne!(status, StatusCode::INTERNAL_SERVER_ERROR, "500 for {path:?}");
        let kind = resp
            .headers()
            .get(header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
            .to_string();
        if kind.starts_with("text/event-stream") {
            return; // a stream: its headers are the response
        }
        let bytes = axum::body::to_bytes(resp.into_body(), 64 << 20)
            .await
            .expect("a complete body");
        // HEAD responses carry the headers of a GET and no body.
        if kind.starts_with("application/json") && !head {
            serde_json::from_slice::<serde_json::Value>(&bytes).expect("JSON body is JSON");
        }
    });
});
