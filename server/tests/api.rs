//! The HTTP API: every JSON response against its schema in
//! `schemas/server/`, package caching headers, bad requests (unknown
//! names, malformed hashes, traversal, oversized bodies, tokens) with the
//! right status and nothing read outside the output directory.

mod common;
use common::*;
use ludus_anim_report::schema::validate;
use serde_json::{json, Value};
use std::path::Path;

fn schema(name: &str) -> Value {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../schemas/{name}"));
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

fn check(name: &str, v: &Value) {
    let errors = validate(&schema(&format!("server/{name}.schema.json")), v);
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{v:#}");
}

/// The asset entry of report.json, against report.schema.json's `asset`.
fn check_report_asset(v: &Value) {
    let r = schema("report.schema.json");
    let s = json!({"$ref": "#/$defs/asset", "$defs": r["$defs"]});
    let errors = validate(&s, v);
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn responses_follow_their_schemas() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    project(&fixtures, tmp.path());
    let s = Server::start(tmp.path(), &[]);
    let ev = Events::open(&s);
    check("status", &s.status());
    s.wait_idle(60);
    check("status", &s.status());
    let assets = s.json("/assets");
    check("assets", &assets);
    for a in assets["assets"].as_array().unwrap() {
        let name = a["name"].as_str().unwrap();
        let detail = s.json(&format!("/assets/{name}"));
        check("asset", &detail);
        check_report_asset(&detail["report"]);
        let hash = a["package_hash"].as_str().unwrap();
        let p = s.get(&format!("/packages/{hash}"));
        assert_eq!(p.status, 200);
        assert_eq!(p.header("etag"), Some(format!("\"{hash}\"").as_str()));
        assert!(p.header("cache-control").unwrap().contains("immutable"));
        assert_eq!(blake3::hash(&p.body).to_hex().as_str(), hash);
        let cached = request(
            s.addr,
            "GET",
            &format!("/packages/{hash}"),
            &[("If-None-Match".into(), format!("\"{hash}\""))],
            b"",
        );
        assert_eq!(cached.status, 304);
    }
    let report = s.json("/report");
    let errors = validate(&schema("report.schema.json"), &report);
    assert!(errors.is_empty(), "{errors:#?}");
    let r = s.post("/cook", br#"{"assets": ["src/makehuman_zombieWalk1.bvh"]}"#);
    assert_eq!(r.status, 202, "{}", r.text());
    check("cook", &r.json());
    let r = s.post("/cook", b"");
    assert_eq!(r.status, 202);
    check("cook", &r.json());
    assert_eq!(r.json()["all"], true);
    s.wait_idle(30);
    // Generation events: from the first cook.
    let published = wait_for(10, "generation_published", || {
        ev.find(|e| e["event"] == "generation_published")
    });
    check("event-generation-published", &published);
    let m = s.get("/metrics");
    assert_eq!(m.status, 200);
    let text = m.text();
    for name in [
        "ludus_anim_cooks_total",
        "ludus_anim_generation ",
        "ludus_anim_stage_total{stage=\"encode\",cache=\"miss\"}",
        "ludus_anim_cook_duration_seconds_bucket",
        "ludus_anim_asset_errors_total",
    ] {
        assert!(text.contains(name), "{name} in\n{text}");
    }
    // `/` is the dashboard of the current generation: one self-contained
    // page naming every asset of the report.
    let index = s.get("/");
    assert_eq!(index.status, 200);
    let page = index.text();
    assert!(
        page.contains("ludus-anim — generation"),
        "{}",
        &page[..page.len().min(400)]
    );
    let report: serde_json::Value = serde_json::from_str(&s.get("/report").text()).unwrap();
    for a in report["assets"].as_array().unwrap() {
        let source = a["source"].as_str().unwrap();
        let name = source.rsplit('/').next().unwrap();
        assert!(page.contains(name), "{source} missing from the dashboard");
    }
    assert!(!page.contains("http://") && !page.contains("https://"));
    // Its clip details are fragments the index names, served beside it.
    let data = page
        .split("id=\"ludus-data\">")
        .nth(1)
        .and_then(|s| s.split("</script>").next())
        .unwrap();
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(data["details"], "report-details");
    let hash = data["assets"][0][1].as_str().unwrap();
    let frag = s.get(&format!("/report-details/{hash}.js"));
    assert_eq!(frag.status, 200);
    assert!(frag
        .text()
        .starts_with(&format!("ludusDetails(\"{hash}\", ")));
    assert_eq!(s.get("/report-details/0000000000000000.js").status, 404);
}

#[test]
fn bad_requests_get_the_right_status_and_read_nothing_outside() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    project(&fixtures, tmp.path());
    // Files a traversal would reach: the project's own sources, a secret
    // beside the project, /etc/passwd.
    std::fs::write(tmp.path().join("secret.txt"), "SECRET-MARKER-7731").unwrap();
    let s = Server::start(tmp.path(), &[]);
    s.wait_idle(60);
    let cases: &[(&str, &str, u16, &str)] = &[
        ("GET", "/assets/nothing.fbx", 404, "unknown_asset"),
        ("GET", "/assets/src/../secret.txt", 400, "bad_name"),
        ("GET", "/assets/../../etc/passwd", 400, "bad_name"),
        ("GET", "/assets/%2e%2e/%2e%2e/etc/passwd", 400, "bad_name"),
        ("GET", "/assets/src%2f..%2f..%2fsecret.txt", 400, "bad_name"),
        ("GET", "/assets//etc/passwd", 400, "bad_name"),
        ("GET", "/packages/abc", 400, "bad_hash"),
        ("GET", "/packages/..%2f..%2fsecret.txt", 400, "bad_hash"),
        ("GET", "/packages/%2e%2e", 400, "bad_hash"),
        ("GET", "/packages/../../ludus-anim.toml", 404, "not_found"),
        (
            "GET",
            &format!("/packages/{}", "0".repeat(64)),
            404,
            "unknown_package",
        ),
        (
            "GET",
            &format!("/packages/{}", "A".repeat(64)),
            400,
            "bad_hash",
        ),
        ("GET", "/secret.txt", 404, "not_found"),
        ("GET", "/../secret.txt", 404, "not_found"),
        ("DELETE", "/report", 405, "method_not_allowed"),
        ("GET", "/cook", 405, "method_not_allowed"),
    ];
    for (method, path, status, code) in cases {
        let r = request(s.addr, method, path, &[], b"");
        assert_eq!(r.status, *status, "{method} {path}: {}", r.text());
        let v = r.json();
        assert_eq!(v["error"], *code, "{method} {path}: {v}");
        check("error", &v);
        assert!(
            !r.text().contains("SECRET-MARKER") && !r.text().contains("root:"),
            "{path}"
        );
    }
    let post = |body: &[u8]| s.post("/cook", body);
    let r = post(br#"{"assets": ["../secret.txt"]}"#);
    assert_eq!(
        (r.status, r.json()["error"].clone()),
        (400, json!("bad_name"))
    );
    let r = post(br#"{"assets": ["nothing.bvh"]}"#);
    assert_eq!(
        (r.status, r.json()["error"].clone()),
        (404, json!("unknown_asset"))
    );
    let r = post(b"{not json");
    assert_eq!(
        (r.status, r.json()["error"].clone()),
        (400, json!("bad_request"))
    );
    let r = post(br#"{"asset": []}"#);
    assert_eq!(r.status, 400, "unknown fields are refused");
    let big = vec![b' '; 200 * 1024];
    let r = post(&big);
    assert_eq!(r.status, 413, "{}", r.text());
    check("error", &r.json());
    // A request whose headers never finish is cut off (bounded in time).
    let mut slow = std::net::TcpStream::connect(s.addr).unwrap();
    std::io::Write::write_all(&mut slow, b"GET /status HTTP/1.1\r\nHost: x\r\n").unwrap();
    slow.set_read_timeout(Some(std::time::Duration::from_secs(30)))
        .unwrap();
    let start = std::time::Instant::now();
    let mut buf = Vec::new();
    let _ = std::io::Read::read_to_end(&mut slow, &mut buf);
    assert!(
        start.elapsed().as_secs() < 25,
        "the slow client was cut off"
    );
    // Still serving.
    assert_eq!(s.get("/status").status, 200);
}

#[test]
fn tokens_and_non_loopback_binds() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    project(&fixtures, tmp.path());
    let d = tmp.path();
    // A non-loopback bind without a token refuses to start (before binding).
    for addr in ["0.0.0.0:0", "[::]:0"] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_ludus-anim-server"))
            .args(["--addr", addr])
            .current_dir(d)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(2), "{addr}");
        assert!(String::from_utf8_lossy(&o.stderr).contains("--token-file"));
    }
    std::fs::write(d.join("short"), "abc").unwrap();
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_ludus-anim-server"))
        .args(["--addr", "0.0.0.0:0", "--token-file", "short"])
        .current_dir(d)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a short token is refused");
    // With a token (on loopback here), every request must carry it.
    let token = "t0ken-for-the-tests-0123456789";
    std::fs::write(d.join("token"), format!("{token}\n")).unwrap();
    let mut s = Server::start(d, &["--token-file", "token"]);
    for (auth, status) in [
        (None, 401),
        (Some("Bearer wrong-token-wrong-token-xx".to_string()), 401),
        (Some(format!("Basic {token}")), 401),
        (Some(format!("Bearer {token}")), 200),
    ] {
        let h: Vec<(String, String)> = auth
            .iter()
            .map(|a| ("Authorization".into(), a.clone()))
            .collect();
        for path in ["/status", "/report", "/events", "/metrics", "/"] {
            if path == "/events" && status == 200 {
                continue;
            }
            let r = request(s.addr, "GET", path, &h, b"");
            // Before the first generation these two answer 503.
            let expect = if (path == "/report" || path == "/") && status == 200 {
                r.status
            } else {
                status
            };
            assert_eq!(r.status, expect, "{path} with {auth:?}");
            if status == 401 {
                assert_eq!(r.header("www-authenticate"), Some("Bearer"));
                assert!(!r.text().contains(token));
            }
        }
    }
    s.token = Some(token.into());
    s.wait_idle(60);
    let ev = Events::open(&s);
    assert!(ev.len() >= 1);
}
