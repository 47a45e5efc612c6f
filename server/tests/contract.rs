//! Issue #43, items 3 to 6: health over HTTP, the client contract
//! (packages by name, manifest, generations and pins, event ids and
//! resume, long-polls, conditional requests) and browser safety. Real
//! server, loopback HTTP, every wait bounded.

mod common;
use common::*;
use serde_json::Value;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

fn setup(extra: &[&str]) -> Option<(tempfile::TempDir, Server)> {
    let fixtures = shared_fixtures()?;
    let tmp = tempfile::tempdir().unwrap();
    project(&fixtures, tmp.path());
    let s = Server::start(tmp.path(), extra);
    s.wait_idle(60);
    Some((tmp, s))
}

/// `v` against `schemas/server/{name}.schema.json`.
fn check(name: &str, v: &Value) {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("../schemas/server/{name}.schema.json"));
    let schema: Value = serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap();
    let errors = ludus_anim_report::schema::validate(&schema, v);
    assert!(errors.is_empty(), "{name}: {errors:#?}\n{v:#}");
}

fn not_applied(s: &Server, name: &str) -> Value {
    s.status()["health"]["not_applied"][name].clone()
}

#[test]
fn health_shows_project_errors_failed_cooks_and_unwritten_generations() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fixtures, d);
    let full = d.join("disk-full");
    let s = Server::start(
        d,
        &[
            "--rescan",
            "1",
            "--debug-fail-publish",
            full.to_str().unwrap(),
        ],
    );
    s.wait_idle(60);
    let ev = Events::open(&s);
    assert!(s.logged("published:") >= 1, "one log line per generation");

    // A manifest that does not parse: a project error, still serving.
    let m = d.join("ludus-anim.toml");
    let good = std::fs::read(&m).unwrap();
    std::fs::write(&m, b"[[asset]\nsources = 3").unwrap();
    let e = wait_for(10, "the project error", || {
        Some(s.status()["health"]["project_error"].clone()).filter(|e| !e.is_null())
    });
    assert_eq!(e["cause"], "manifest_invalid", "{e}");
    check("status", &s.status());
    assert_eq!(s.hashes().len(), 4);
    assert_eq!(s.logged("project error (manifest_invalid)"), 1);
    std::fs::write(&m, &good).unwrap();
    wait_for(10, "the project error to clear", || {
        s.status()["health"]["project_error"]
            .is_null()
            .then_some(())
    });

    // A broken source: stale, not applied, with the diagnostic.
    let bvh = d.join(BVH);
    let original = std::fs::read(&bvh).unwrap();
    std::fs::write(&bvh, b"HIERARCHY\nnot a bvh").unwrap();
    let p = wait_for(20, "the failed cook", || {
        Some(not_applied(&s, BVH)).filter(|p| p["cause"] == "cook_failed")
    });
    assert!(!p["diagnostics"].as_array().unwrap().is_empty(), "{p}");
    let a = s.json("/assets");
    let row = a["assets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == BVH)
        .unwrap()
        .clone();
    assert_eq!(row["not_applied"]["cause"], "cook_failed", "{row}");
    check("assets", &a);
    check("asset", &s.json(&format!("/assets/{BVH}")));
    check("status", &s.status());
    assert_eq!(
        s.logged(&format!("{BVH}: change not applied (cook_failed)")),
        1
    );
    assert!(ev
        .find(|e| e["event"] == "health" && !e["health"]["not_applied"][BVH].is_null())
        .is_some());

    // A full disk: the edit cooks but cannot be published.
    let g = s.generation();
    std::fs::write(&full, b"").unwrap();
    std::fs::write(&bvh, edited_bvh(&original, 2)).unwrap();
    let p = wait_for(20, "the unwritten generation", || {
        Some(not_applied(&s, BVH)).filter(|p| p["cause"] == "publish_failed")
    });
    assert!(
        p["message"].as_str().unwrap().contains("No space left"),
        "{p}"
    );
    check("status", &s.status());
    assert_eq!(s.generation(), g);
    assert_eq!(s.status()["ok"], false);
    std::fs::remove_file(&full).unwrap();
    wait_for(20, "the retried publication", || {
        (s.status()["ok"] == true && s.generation() > g).then_some(())
    });
    assert!(s.logged(&format!("{BVH}: change applied")) >= 1);
}

/// GET `path` with extra headers.
fn get_with(s: &Server, path: &str, headers: &[(&str, &str)]) -> Resp {
    s.send("GET", path, headers, b"")
}

#[test]
fn packages_by_name_manifest_generations_pins_and_conditional_requests() {
    let Some((tmp, s)) = setup(&["--keep", "2"]) else {
        return;
    };
    let hash = s.hash_of(BVH).unwrap();
    let tag = format!("\"{hash}\"");

    let r = s.get(&format!("/assets/{BVH}/package"));
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(blake3::hash(&r.body).to_hex().as_str(), hash);
    assert_eq!(r.header("etag"), Some(tag.as_str()));
    assert_eq!(r.header("cache-control"), Some("no-cache"));
    assert_eq!(
        r.header("content-location"),
        Some(format!("/packages/{hash}").as_str())
    );
    let weak = format!("W/{tag}");
    let list = format!("\"nope\", {weak}");
    for inm in [tag.as_str(), weak.as_str(), list.as_str(), "*"] {
        for path in [
            format!("/assets/{BVH}/package"),
            format!("/packages/{hash}"),
        ] {
            let r = get_with(&s, &path, &[("If-None-Match", inm)]);
            assert_eq!(r.status, 304, "{path} If-None-Match: {inm}");
            assert!(r.body.is_empty());
        }
    }
    assert_eq!(
        get_with(
            &s,
            &format!("/packages/{hash}"),
            &[("If-None-Match", "\"other\"")]
        )
        .status,
        200
    );
    let p = s.get(&format!("/packages/{hash}"));
    assert_eq!(
        p.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );

    for path in ["/manifest", "/report"] {
        let r = s.get(path);
        assert_eq!(r.status, 200, "{path}");
        let etag = r.header("etag").unwrap().to_string();
        assert_eq!(
            get_with(&s, path, &[("If-None-Match", &format!("W/{etag}"))]).status,
            304,
            "{path}"
        );
        assert_eq!(
            get_with(&s, path, &[("If-None-Match", "*")]).status,
            304,
            "{path}"
        );
    }
    let m = s.json("/manifest");
    assert_eq!(m["assets"].as_array().unwrap().len(), 4);

    // Pin the current generation, then publish past --keep 2.
    let g = s.generation();
    let r = s.post(&format!("/generations/{g}/pin"), b"");
    assert_eq!(r.status, 200, "{}", r.text());
    let gm = s.get(&format!("/generations/{g}/manifest"));
    assert_eq!(gm.status, 200);
    assert_eq!(
        gm.header("cache-control"),
        Some("public, max-age=31536000, immutable")
    );
    let gtag = gm.header("etag").unwrap().to_string();
    assert_eq!(
        get_with(
            &s,
            &format!("/generations/{g}/manifest"),
            &[("If-None-Match", &gtag)]
        )
        .status,
        304
    );
    let bvh = tmp.path().join(BVH);
    let original = std::fs::read(&bvh).unwrap();
    for i in 1..=3 {
        std::fs::write(&bvh, edited_bvh(&original, i)).unwrap();
        wait_for(20, "a new generation", || {
            (s.generation() >= g + i as u64).then_some(())
        });
        s.wait_idle(20);
    }
    let list = s.json("/generations");
    let kept: Vec<(u64, bool)> = list["generations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["generation"].as_u64().unwrap(),
                k["pinned"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(kept.contains(&(g, true)), "{list}");
    assert!(
        !kept.contains(&(g + 1, false)),
        "unpinned generations beyond --keep go: {list}"
    );
    assert_eq!(
        s.get(&format!("/packages/{hash}")).status,
        200,
        "a pinned generation's package stays"
    );
    let old = s.get(&format!("/generations/{g}/assets/{BVH}/package"));
    assert_eq!(old.status, 200, "{}", old.text());
    assert_eq!(blake3::hash(&old.body).to_hex().as_str(), hash);
    assert_eq!(
        s.send(
            "DELETE",
            &format!("/generations/{g}/pin"),
            &[("X-Ludus-Anim", "1")],
            b""
        )
        .status,
        200
    );
    std::fs::write(&bvh, edited_bvh(&original, 9)).unwrap();
    wait_for(20, "the unpinned generation to go", || {
        (s.get(&format!("/generations/{g}/manifest")).status == 404).then_some(())
    });
    assert_eq!(s.get(&format!("/packages/{hash}")).status, 404);
    assert_eq!(s.get("/generations/x/manifest").status, 400);
}

/// Read `/events` (optionally resuming) until `enough` holds or `secs`
/// pass: every event as (id, data).
fn sse(
    s: &Server,
    last: Option<&str>,
    secs: u64,
    enough: impl Fn(&[(Option<String>, Value)]) -> bool,
) -> Vec<(Option<String>, Value)> {
    let mut c = TcpStream::connect(s.addr).unwrap();
    let mut head = format!("GET /events HTTP/1.1\r\nHost: {}\r\n", s.addr);
    if let Some(l) = last {
        head.push_str(&format!("Last-Event-ID: {l}\r\n"));
    }
    c.write_all(format!("{head}\r\n").as_bytes()).unwrap();
    c.set_read_timeout(Some(Duration::from_millis(200)))
        .unwrap();
    let (mut raw, mut out) = (Vec::new(), Vec::new());
    let end = Instant::now() + Duration::from_secs(secs);
    while Instant::now() < end && !enough(&out) {
        let mut buf = [0u8; 8192];
        if let Ok(n) = c.read(&mut buf) {
            if n == 0 {
                break;
            }
            raw.extend_from_slice(&buf[..n]);
        }
        out = parse_sse(&String::from_utf8_lossy(&raw));
    }
    out
}

fn parse_sse(text: &str) -> Vec<(Option<String>, Value)> {
    let mut id = None;
    let mut out = Vec::new();
    for l in text.lines() {
        if let Some(v) = l.strip_prefix("id:") {
            id = Some(v.trim().to_string());
        } else if let Some(d) = l.strip_prefix("data:") {
            if let Ok(v) = serde_json::from_str(d.trim()) {
                out.push((id.take(), v));
            }
        }
    }
    out
}

#[test]
fn event_ids_resume_long_polls_and_removed_assets() {
    let Some((tmp, s)) = setup(&[]) else { return };
    let d = tmp.path();
    let g = s.generation();

    // A long-poll that times out answers with the same generation.
    let t = Instant::now();
    let r = s.json(&format!("/status?after={g}&timeout=1"));
    assert_eq!(r["generation"], g);
    assert!(
        t.elapsed() >= Duration::from_millis(900),
        "{:?}",
        t.elapsed()
    );

    // A long-poll answered by an edit.
    let addr = s.addr;
    let poll = std::thread::spawn(move || {
        let t = Instant::now();
        let r = request(
            addr,
            "GET",
            &format!("/status?after={g}&timeout=30"),
            &[],
            b"",
        );
        (r.json(), t.elapsed())
    });
    std::thread::sleep(Duration::from_millis(300));
    let bvh = d.join(BVH);
    let original = std::fs::read(&bvh).unwrap();
    std::fs::write(&bvh, edited_bvh(&original, 1)).unwrap();
    let (r, took) = poll.join().unwrap();
    assert!(
        r["generation"].as_u64().unwrap() > g || r["ok"] == true,
        "{r}"
    );
    assert!(took < Duration::from_secs(20), "{took:?}");
    s.wait_idle(20);

    // Ids on every event; a resume from an id of this run replays what
    // followed it, from the server's history.
    let prefix = boot_of(&s, &bvh, &original);
    let first_id = {
        let v = sse(&s, Some(&format!("{prefix}-0")), 10, |v| {
            v.iter().any(|(_, e)| e["event"] == "generation_published")
        });
        assert_eq!(v[0].1["event"], "hello");
        assert!(
            v.iter().skip(1).all(|(id, _)| id.is_some()),
            "every replayed event has an id"
        );
        v[1].0.clone().unwrap()
    };
    let replay = sse(&s, Some(&first_id), 10, |v| {
        v.iter().any(|(_, e)| e["event"] == "generation_published")
    });
    let (_, seq) = first_id.split_once('-').unwrap();
    let next: u64 = replay[1]
        .0
        .as_ref()
        .unwrap()
        .split_once('-')
        .unwrap()
        .1
        .parse()
        .unwrap();
    assert_eq!(
        next,
        seq.parse::<u64>().unwrap() + 1,
        "the resume starts right after the id given"
    );
    let foreign = sse(&s, Some("1-5"), 5, |v| v.len() >= 2);
    assert_eq!(foreign[1].1["event"], "resync", "{foreign:?}");

    // A manifest change that drops the FBX lists it as removed.
    let ev = Events::open(&s);
    let m = d.join("ludus-anim.toml");
    let text = std::fs::read_to_string(&m).unwrap();
    std::fs::write(&m, text.replace(", \"src/*.fbx\"", "")).unwrap();
    let e = wait_for(20, "the removal", || {
        ev.find(|e| e["event"] == "generation_published" && e["removed"] != serde_json::json!([]))
    });
    assert_eq!(e["removed"], serde_json::json!([FBX]), "{e}");
}

/// This run's event-id prefix, read from a live event.
fn boot_of(s: &Server, bvh: &std::path::Path, original: &[u8]) -> String {
    std::fs::write(bvh, edited_bvh(original, 5)).unwrap();
    let v = sse(s, None, 20, |v| v.iter().any(|(id, _)| id.is_some()));
    let id = v.iter().find_map(|(id, _)| id.clone()).unwrap();
    s.wait_idle(20);
    id.split_once('-').unwrap().0.to_string()
}

#[test]
fn hosts_origins_cross_site_posts_browser_tokens_and_idle_connections() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    project(&fixtures, tmp.path());
    let token_file = tmp.path().join("token");
    std::fs::write(&token_file, "0123456789abcdef0123").unwrap();
    let mut s = Server::start(tmp.path(), &["--token-file", token_file.to_str().unwrap()]);
    s.token = Some("0123456789abcdef0123".into());
    s.wait_idle(60);
    assert_eq!(
        s.logged("other users can read it"),
        1,
        "a token file others can read is warned about"
    );

    // DNS rebinding: a foreign Host or Origin is refused.
    let raw = |headers: &[(&str, &str)]| {
        let h: Vec<(String, String)> = headers
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        raw_request(s.addr, "GET", "/status", &h)
    };
    assert!(raw(&[("Host", "evil.example:7878")]).starts_with("HTTP/1.1 403"));
    let port = s.addr.port().to_string();
    let r = get_with(&s, "/status", &[("Origin", "http://evil.example")]);
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["error"], "forbidden_origin");
    assert_eq!(
        get_with(
            &s,
            "/status",
            &[("Origin", &format!("http://localhost:{port}"))]
        )
        .status,
        200
    );

    // A cross-site simple POST changes nothing; a scripted one does.
    let cooks = s.cooks();
    let r = s.send("POST", "/cook", &[("Content-Type", "text/plain")], b"");
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["error"], "cross_site");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(s.cooks(), cooks);
    assert_eq!(
        s.send("POST", "/cook", &[("X-Ludus-Anim", "1")], b"")
            .status,
        202
    );

    // A browser: /login?token= sets a session cookie EventSource sends.
    let no = request(s.addr, "GET", "/login?token=wrong-token-000000", &[], b"");
    assert_eq!(no.status, 401);
    let yes = request(s.addr, "GET", "/login?token=0123456789abcdef0123", &[], b"");
    assert_eq!(yes.status, 303);
    let cookie = yes.header("set-cookie").unwrap().to_string();
    assert!(
        cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict"),
        "{cookie}"
    );
    assert!(
        !cookie.contains("0123456789abcdef0123"),
        "the cookie is not the token"
    );
    let pair = cookie.split(';').next().unwrap().to_string();
    let with_cookie = vec![("Cookie".to_string(), pair)];
    assert_eq!(
        request(s.addr, "GET", "/status", &with_cookie, b"").status,
        200
    );
    assert_eq!(request(s.addr, "GET", "/status", &[], b"").status, 401);
    let ev = raw_request(s.addr, "GET", "/events", &with_cookie);
    assert!(ev.starts_with("HTTP/1.1 200"), "{ev}");
    assert!(ev.contains("\"hello\""), "{ev}");

    // 520 idle keep-alive connections do not keep a new client waiting.
    let auth = format!("Authorization: Bearer {}\r\n", s.token.as_ref().unwrap());
    let mut idle = Vec::new();
    for _ in 0..520 {
        let Ok(mut c) = TcpStream::connect(s.addr) else {
            break;
        };
        let _ = c.write_all(
            format!("GET /metrics HTTP/1.1\r\nHost: {}\r\n{auth}\r\n", s.addr).as_bytes(),
        );
        idle.push(c);
    }
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    let r = s.get("/status");
    assert_eq!(r.status, 200);
    assert!(
        t.elapsed() < Duration::from_secs(3),
        "a new client waited {:?}",
        t.elapsed()
    );
    drop(idle);
    assert!(s.terminate(10).is_some());
}

/// A request that reads for at most 2 s and returns the raw text (event
/// streams do not end).
fn raw_request(
    addr: std::net::SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
) -> String {
    let mut c = TcpStream::connect(addr).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    c.write_all(format!("{head}Connection: close\r\n\r\n").as_bytes())
        .unwrap();
    c.set_read_timeout(Some(Duration::from_millis(300)))
        .unwrap();
    let mut raw = Vec::new();
    let end = Instant::now() + Duration::from_secs(2);
    while Instant::now() < end {
        let mut buf = [0u8; 4096];
        match c.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&buf[..n]),
            Err(_) if !raw.is_empty() && String::from_utf8_lossy(&raw).contains("hello") => break,
            Err(_) => {}
        }
    }
    String::from_utf8_lossy(&raw).to_string()
}

#[test]
fn serve_takes_the_remote_cache_flags_and_cook_refuses_a_served_directory() {
    let Some((tmp, s)) = setup(&[]) else { return };
    let bad = Server::try_start(
        tmp.path(),
        &["--out", "other", "--remote-cache", "not a url"],
    );
    assert!(
        bad.is_err(),
        "a bad --remote-cache is refused before serving"
    );
    let cook =
        std::path::Path::new(env!("CARGO_BIN_EXE_ludus-anim-server")).with_file_name("ludus-anim");
    if !cook.is_file() {
        eprintln!(
            "skipped: {} not built (cargo build --release -p ludus-anim-cooker)",
            cook.display()
        );
        return;
    }
    let out = std::process::Command::new(&cook)
        .args(["cook", "--manifest", "ludus-anim.toml"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(3),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("asset server"));
    drop(s);
}
