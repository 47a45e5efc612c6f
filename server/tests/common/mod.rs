//! Helpers for the server's end-to-end tests: a temp project copied from
//! the shared fixtures, the real `ludus-anim-server` process on a free
//! loopback port, a minimal HTTP/1.1 client (raw, so traversal attempts go
//! out unnormalized) and an event-stream reader. Every wait is bounded.
#![allow(dead_code)]

use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

pub const BVH: &str = "src/makehuman_zombieWalk1.bvh";
pub const GLTF_BIN: &str = "src/interp/interpolation_test.gltf";
pub const SKIN: &str = "src/khronos_SimpleSkin.gltf";
pub const FBX: &str = "src/ufbx_blender_279_sausage_7400.fbx";

/// `../shared/fixtures` (or `LUDUS_SHARED_FIXTURES`); `None`, with a
/// notice, when absent.
pub fn shared_fixtures() -> Option<PathBuf> {
    let p = std::env::var_os("LUDUS_SHARED_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures"));
    if p.join("MANIFEST.tsv").is_file() {
        Some(p)
    } else {
        eprintln!(
            "skipped: shared fixtures not found at {} (set LUDUS_SHARED_FIXTURES); CI has them",
            p.display()
        );
        None
    }
}

/// A project in `dir`: a glTF with a .bin companion, an embedded glTF and
/// an FBX on the default profile, and a BVH on its own profile file
/// (`custom.toml`).
pub fn project(fixtures: &Path, dir: &Path) {
    let src = dir.join("src");
    std::fs::create_dir_all(src.join("interp")).unwrap();
    let copy = |from: &str, to: &str| {
        std::fs::copy(fixtures.join(from), dir.join(to)).unwrap();
    };
    copy(
        "gltf/khronos_InterpolationTest/interpolation_test.gltf",
        GLTF_BIN,
    );
    copy(
        "gltf/khronos_InterpolationTest/interpolation_test.bin",
        "src/interp/interpolation_test.bin",
    );
    copy("gltf/khronos_SimpleSkin.gltf", SKIN);
    copy("bvh/makehuman_zombieWalk1.bvh", BVH);
    copy("fbx/ufbx_blender_279_sausage_7400.fbx", FBX);
    let standard = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/standard.toml"),
    )
    .unwrap();
    std::fs::write(
        dir.join("custom.toml"),
        standard.replace("name = \"standard\"", "name = \"custom\""),
    )
    .unwrap();
    std::fs::write(
        dir.join("ludus-anim.toml"),
        r#"[project]
output = "out"
cache = "cache"

[[asset]]
sources = ["src/*.gltf", "src/interp/*.gltf", "src/*.fbx"]

[[asset]]
sources = ["src/*.bvh"]
profile = "custom.toml"
"#,
    )
    .unwrap();
}

/// A running server; killed when dropped.
pub struct Server {
    pub child: Child,
    pub addr: SocketAddr,
    pub dir: PathBuf,
    pub token: Option<String>,
    /// Every line the server wrote on stderr so far.
    pub log: Arc<Mutex<Vec<String>>>,
}

impl Server {
    /// Start `ludus-anim-server` in `dir` on a free loopback port.
    pub fn start(dir: &Path, extra: &[&str]) -> Server {
        Server::try_start(dir, extra).unwrap_or_else(|e| panic!("server did not start: {e}"))
    }

    pub fn try_start(dir: &Path, extra: &[&str]) -> Result<Server, String> {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ludus-anim-server"))
            .args(["--addr", "127.0.0.1:0"])
            .args(extra)
            .current_dir(dir)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| e.to_string())?;
        let stdout = child.stdout.take().ok_or("no stdout")?;
        let stderr = child.stderr.take().ok_or("no stderr")?;
        let log = Arc::new(Mutex::new(Vec::new()));
        let sink = Arc::clone(&log);
        std::thread::spawn(move || {
            for l in BufReader::new(stderr).lines().map_while(Result::ok) {
                eprintln!("[server] {l}");
                sink.lock().unwrap().push(l);
            }
        });
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stdout).lines();
            if let Some(Ok(l)) = lines.next() {
                let _ = tx.send(l);
            }
            for _ in lines {}
        });
        let line = rx
            .recv_timeout(Duration::from_secs(20))
            .map_err(|_| "no 'listening on' line within 20 s".to_string())?;
        let addr = line
            .rsplit("http://")
            .next()
            .and_then(|a| a.trim().parse().ok())
            .ok_or(format!("bad first line: {line}"))?;
        Ok(Server {
            child,
            addr,
            dir: dir.to_path_buf(),
            token: None,
            log,
        })
    }

    pub fn get(&self, path: &str) -> Resp {
        request(self.addr, "GET", path, &self.auth(), b"")
    }

    /// A POST as a script sends it (`Content-Type: application/json`).
    pub fn post(&self, path: &str, body: &[u8]) -> Resp {
        let mut h = self.auth();
        h.push(("Content-Type".into(), "application/json".into()));
        request(self.addr, "POST", path, &h, body)
    }

    /// A request with extra headers (and the token, if any).
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Resp {
        let mut h = self.auth();
        h.extend(headers.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        request(self.addr, method, path, &h, body)
    }

    fn auth(&self) -> Vec<(String, String)> {
        self.token
            .iter()
            .map(|t| ("Authorization".to_string(), format!("Bearer {t}")))
            .collect()
    }

    pub fn json(&self, path: &str) -> Value {
        let r = self.get(path);
        assert_eq!(r.status, 200, "GET {path}: {}", r.text());
        serde_json::from_slice(&r.body).unwrap_or_else(|e| panic!("GET {path}: {e}: {}", r.text()))
    }

    pub fn status(&self) -> Value {
        self.json("/status")
    }

    pub fn generation(&self) -> u64 {
        self.status()["generation"].as_u64().unwrap_or(0)
    }

    /// Wait until the server has published and has nothing pending.
    pub fn wait_idle(&self, secs: u64) -> Value {
        wait_for(secs, "the server to be idle", || {
            let s = self.status();
            let q = &s["queue"];
            let idle = s["generation"].is_u64()
                && q["cooking"].is_null()
                && q["pending_changes"] == 0
                && q["pending_assets"].as_array().is_some_and(|a| a.is_empty());
            idle.then_some(s)
        })
    }

    /// Asset name → served package hash.
    pub fn hashes(&self) -> Vec<(String, Option<String>)> {
        let v = self.json("/assets");
        v["assets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| {
                (
                    a["name"].as_str().unwrap().to_string(),
                    a["package_hash"].as_str().map(String::from),
                )
            })
            .collect()
    }

    pub fn hash_of(&self, name: &str) -> Option<String> {
        self.hashes()
            .into_iter()
            .find(|(n, _)| n == name)
            .and_then(|(_, h)| h)
    }

    /// A counter or gauge from `/metrics`.
    pub fn metric(&self, line_prefix: &str) -> f64 {
        let r = self.get("/metrics");
        r.text()
            .lines()
            .find(|l| l.starts_with(line_prefix) && l[line_prefix.len()..].starts_with(' '))
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("no metric {line_prefix}"))
    }

    pub fn cooks(&self) -> u64 {
        self.metric("ludus_anim_cooks_total") as u64
    }

    /// How many log lines contain `needle`.
    pub fn logged(&self, needle: &str) -> usize {
        self.log
            .lock()
            .unwrap()
            .iter()
            .filter(|l| l.contains(needle))
            .count()
    }

    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then the exit status within `secs`.
    pub fn terminate(&mut self, secs: u64) -> Option<std::process::ExitStatus> {
        let _ = Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        let end = Instant::now() + Duration::from_secs(secs);
        while Instant::now() < end {
            if let Ok(Some(s)) = self.child.try_wait() {
                return Some(s);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Poll `f` every 50 ms for up to `secs`; panic naming `what` on timeout.
pub fn wait_for<T>(secs: u64, what: &str, mut f: impl FnMut() -> Option<T>) -> T {
    let end = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(v) = f() {
            return v;
        }
        assert!(
            Instant::now() < end,
            "timed out after {secs} s waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

pub struct Resp {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Resp {
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).to_string()
    }
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", self.text()))
    }
}

/// One HTTP/1.1 request with `Connection: close`; `path` is sent exactly
/// as given. The body must be complete (Content-Length checked).
pub fn request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Resp {
    try_request(addr, method, path, headers, body)
        .unwrap_or_else(|e| panic!("{method} {path}: {e}"))
}

pub fn try_request(
    addr: SocketAddr,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> Result<Resp, String> {
    let mut s =
        TcpStream::connect_timeout(&addr, Duration::from_secs(5)).map_err(|e| e.to_string())?;
    s.set_read_timeout(Some(Duration::from_secs(20)))
        .map_err(|e| e.to_string())?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        head.push_str(&format!("{k}: {v}\r\n"));
    }
    head.push_str("\r\n");
    s.write_all(head.as_bytes()).map_err(|e| e.to_string())?;
    // A server may answer (413) before reading a large body.
    let _ = s.write_all(body);
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    parse_response(&raw)
}

fn parse_response(raw: &[u8]) -> Result<Resp, String> {
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let mut lines = head.split("\r\n");
    let status: u16 = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .ok_or("bad status line")?;
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_string(), v.trim().to_string()))
        .collect();
    let mut body = raw[end + 4..].to_vec();
    let find = |n: &str| {
        headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(n))
            .map(|(_, v)| v.clone())
    };
    if find("transfer-encoding").is_some_and(|v| v.contains("chunked")) {
        body = dechunk(&body)?;
    } else if let Some(len) = find("content-length").and_then(|v| v.parse::<usize>().ok()) {
        if body.len() != len {
            return Err(format!(
                "body is {} bytes, Content-Length says {len}",
                body.len()
            ));
        }
    }
    Ok(Resp {
        status,
        headers,
        body,
    })
}

fn dechunk(mut b: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let nl = b.windows(2).position(|w| w == b"\r\n").ok_or("bad chunk")?;
        let size = usize::from_str_radix(String::from_utf8_lossy(&b[..nl]).trim(), 16)
            .map_err(|e| e.to_string())?;
        b = &b[nl + 2..];
        if size == 0 {
            return Ok(out);
        }
        if b.len() < size + 2 {
            return Err("truncated chunk".into());
        }
        out.extend_from_slice(&b[..size]);
        b = &b[size + 2..];
    }
}

/// An `/events` stream read on its own thread: every `data:` line parsed
/// as JSON, in order, with when it arrived.
pub struct Events {
    pub seen: Arc<Mutex<Vec<Value>>>,
    /// Arrival of each event in `seen` (pushed under `seen`'s lock).
    arrived: Arc<Mutex<Vec<Instant>>>,
    pub errors: Arc<Mutex<Vec<String>>>,
    stream: TcpStream,
}

impl Events {
    pub fn open(server: &Server) -> Events {
        let mut s = TcpStream::connect(server.addr).unwrap();
        let mut head = format!("GET /events HTTP/1.1\r\nHost: {}\r\n", server.addr);
        if let Some(t) = &server.token {
            head.push_str(&format!("Authorization: Bearer {t}\r\n"));
        }
        head.push_str("\r\n");
        s.write_all(head.as_bytes()).unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let arrived = Arc::new(Mutex::new(Vec::new()));
        let errors = Arc::new(Mutex::new(Vec::new()));
        let (r, sn, ar, er) = (
            s.try_clone().unwrap(),
            Arc::clone(&seen),
            Arc::clone(&arrived),
            Arc::clone(&errors),
        );
        std::thread::spawn(move || read_events(r, &sn, &ar, &er));
        let ev = Events {
            seen,
            arrived,
            errors,
            stream: s,
        };
        wait_for(10, "the event stream's hello", || {
            ev.find(|e| e["event"] == "hello")
        });
        ev
    }

    pub fn find(&self, f: impl Fn(&Value) -> bool) -> Option<Value> {
        self.seen.lock().unwrap().iter().find(|e| f(e)).cloned()
    }

    pub fn count(&self, f: impl Fn(&Value) -> bool) -> usize {
        self.seen.lock().unwrap().iter().filter(|e| f(e)).count()
    }

    pub fn len(&self) -> usize {
        self.seen.lock().unwrap().len()
    }

    /// Events after the first `from`.
    pub fn since(&self, from: usize) -> Vec<Value> {
        self.seen.lock().unwrap()[from..].to_vec()
    }

    /// The first event after the first `from` for which `f` holds, with
    /// when it arrived.
    pub fn first_since(&self, from: usize, f: impl Fn(&Value) -> bool) -> Option<(Value, Instant)> {
        let seen = self.seen.lock().unwrap();
        let i = from + seen[from..].iter().position(f)?;
        let at = *self.arrived.lock().unwrap().get(i)?;
        Some((seen[i].clone(), at))
    }
}

impl Drop for Events {
    fn drop(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

fn read_events(
    s: TcpStream,
    seen: &Mutex<Vec<Value>>,
    arrived: &Mutex<Vec<Instant>>,
    errors: &Mutex<Vec<String>>,
) {
    let mut r = BufReader::new(s);
    let mut line = String::new();
    // Status line and headers.
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if line == "\r\n" {
            break;
        }
    }
    // Chunked body: size line, data, CRLF; SSE lines inside.
    let mut pending = String::new();
    loop {
        line.clear();
        if r.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let Ok(size) = usize::from_str_radix(line.trim(), 16) else {
            errors
                .lock()
                .unwrap()
                .push(format!("bad chunk size {line:?}"));
            return;
        };
        if size == 0 {
            return;
        }
        let mut buf = vec![0; size + 2];
        if r.read_exact(&mut buf).is_err() {
            return;
        }
        pending.push_str(&String::from_utf8_lossy(&buf[..size]));
        while let Some(i) = pending.find('\n') {
            let l: String = pending.drain(..=i).collect();
            if let Some(d) = l.trim_end().strip_prefix("data:") {
                match serde_json::from_str::<Value>(d.trim()) {
                    Ok(v) => {
                        let mut seen = seen.lock().unwrap();
                        seen.push(v);
                        arrived.lock().unwrap().push(Instant::now());
                    }
                    Err(e) => errors.lock().unwrap().push(format!("{e}: {d}")),
                }
            }
        }
    }
}

/// Replace the file at `path` with `bytes` by writing a sibling temp file
/// and renaming it over (an editor's atomic save).
pub fn save_by_rename(path: &Path, bytes: &[u8]) {
    let tmp = path.with_file_name(".editor-save.tmp");
    std::fs::write(&tmp, bytes).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// A BVH with one motion value changed (same structure, different bytes).
pub fn edited_bvh(original: &[u8], n: u32) -> Vec<u8> {
    let text = String::from_utf8_lossy(original).to_string();
    let motion = text.find("Frame Time").unwrap();
    let line_end = motion + text[motion..].find('\n').unwrap() + 1;
    let next_end = line_end + text[line_end..].find('\n').unwrap();
    let first_frame = &text[line_end..next_end];
    let mut values: Vec<String> = first_frame.split_whitespace().map(String::from).collect();
    let v: f64 = values[3].parse().unwrap();
    values[3] = format!("{:.4}", v + 0.5 * n as f64);
    format!(
        "{}{}{}",
        &text[..line_end],
        values.join(" "),
        &text[next_end..]
    )
    .into_bytes()
}
