//! Test servers: a real nginx with WebDAV PUT on loopback, and a scripted
//! fake HTTP server for the faults nginx will not produce on demand. Both
//! listen on 127.0.0.1 only, on a free port, and stop when dropped.
#![allow(dead_code)] // each test binary uses a different subset

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use ludus_anim_cache::{Key, KeyBuilder};

/// The key of test item `i`.
pub fn key(i: u64) -> Key {
    KeyBuilder::new().str("remote-test-item").u64(i).finish()
}

/// A deterministic value for item `i`, `len` bytes long.
pub fn value(i: u64, len: usize) -> Vec<u8> {
    let mut state = i.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..len)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 24) as u8
        })
        .collect()
}

/// A port nothing listens on right now (bound, then released).
pub fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1:0");
    listener.local_addr().expect("local addr").port()
}

// ---------------------------------------------------------------- nginx

/// Where nginx is, installing Debian's `nginx-light` (which has the DAV
/// module) once per test process if it is missing. `None`: it cannot be
/// had here, and the caller skips with a message.
fn nginx_binary() -> Option<PathBuf> {
    static BINARY: OnceLock<Option<PathBuf>> = OnceLock::new();
    BINARY
        .get_or_init(|| {
            let find = || {
                ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"]
                    .iter()
                    .map(PathBuf::from)
                    .find(|p| p.is_file())
            };
            find().or_else(|| {
                eprintln!("nginx not found; trying `apt-get install -y nginx-light`");
                let install = |args: &[&str]| {
                    run_bounded(
                        Command::new("apt-get")
                            .args(args)
                            .env("DEBIAN_FRONTEND", "noninteractive"),
                        Duration::from_secs(300),
                    )
                };
                if !install(&["install", "-y", "-qq", "nginx-light"]) {
                    install(&["update", "-qq"]);
                    install(&["install", "-y", "-qq", "nginx-light"]);
                }
                find()
            })
        })
        .clone()
}

/// Runs a command with its output discarded; false if it failed or ran
/// past `limit` (then it is killed).
fn run_bounded(cmd: &mut Command, limit: Duration) -> bool {
    let Ok(mut child) = cmd.stdout(Stdio::null()).stderr(Stdio::null()).spawn() else {
        return false;
    };
    let deadline = Instant::now() + limit;
    while Instant::now() < deadline {
        match child.try_wait() {
            Ok(Some(status)) => return status.success(),
            Ok(None) => thread::sleep(Duration::from_millis(100)),
            Err(_) => break,
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    false
}

/// A private nginx serving `DIR/root` with WebDAV PUT/DELETE/MKCOL on
/// 127.0.0.1, single process (`master_process off`), so killing the child
/// by its PID stops everything.
pub struct Nginx {
    child: Child,
    pub port: u16,
    pub dir: tempfile::TempDir,
}

/// The cache's base path on the server.
const BASE_PATH: &str = "ludus";

impl Nginx {
    /// Starts nginx, or prints why not and returns `None` (the test then
    /// skips). Panics if nginx exists but will not serve.
    pub fn start() -> Option<Nginx> {
        let Some(binary) = nginx_binary() else {
            eprintln!(
                "SKIPPED: nginx is not installed and `apt-get install nginx-light` failed; \
                 the nginx-backed remote cache tests did not run"
            );
            return None;
        };
        let mut last = String::new();
        // The port is free when chosen but another process could take it
        // before nginx binds: a few attempts.
        for _ in 0..3 {
            match Nginx::try_start(&binary) {
                Ok(nginx) => return Some(nginx),
                Err(e) => last = e,
            }
        }
        panic!("nginx did not start: {last}");
    }

    fn try_start(binary: &Path) -> Result<Nginx, String> {
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let port = free_port();
        let conf = dir.path().join("nginx.conf");
        std::fs::create_dir_all(dir.path().join("root").join(BASE_PATH))
            .map_err(|e| e.to_string())?;
        std::fs::create_dir_all(dir.path().join("body")).map_err(|e| e.to_string())?;
        std::fs::write(&conf, nginx_config(dir.path(), port)).map_err(|e| e.to_string())?;
        let child = Command::new(binary)
            .arg("-p")
            .arg(dir.path())
            .arg("-c")
            .arg(&conf)
            .arg("-e")
            .arg(dir.path().join("error.log"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| format!("spawn {}: {e}", binary.display()))?;
        let mut nginx = Nginx { child, port, dir };
        nginx.wait_ready()?;
        Ok(nginx)
    }

    /// Polls (bounded: 5 s) until nginx serves a marker file only this
    /// instance has: if the port was taken meanwhile, whatever answers
    /// there does not serve it, and the attempt fails instead of testing
    /// against someone else's server.
    fn wait_ready(&mut self) -> Result<(), String> {
        let marker = format!("ready-{}-{}", std::process::id(), self.port);
        std::fs::write(self.dir.path().join("root").join(&marker), &marker)
            .map_err(|e| e.to_string())?;
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                let log =
                    std::fs::read_to_string(self.dir.path().join("error.log")).unwrap_or_default();
                return Err(format!("nginx exited with {status}: {log}"));
            }
            if http_get(self.port, &format!("/{marker}")).is_some_and(|b| b.ends_with(&marker)) {
                return Ok(());
            }
            thread::sleep(Duration::from_millis(20));
        }
        Err("nginx did not serve its marker file within 5 s".to_string())
    }

    /// The remote cache base URL.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/{BASE_PATH}", self.port)
    }

    /// Where nginx stores `key`'s object.
    pub fn object_path(&self, key: &Key) -> PathBuf {
        self.ac_dir().join(key.to_hex())
    }

    pub fn ac_dir(&self) -> PathBuf {
        self.dir.path().join("root").join(BASE_PATH).join("ac")
    }

    /// The access log once it has at least `lines` lines containing
    /// `needle`, or as it is after 2 s. nginx writes a request's line after
    /// sending the response, so the client can be ahead of the log.
    pub fn access_log_with(&self, needle: &str, lines: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(2);
        loop {
            let log =
                std::fs::read_to_string(self.dir.path().join("access.log")).unwrap_or_default();
            if log.lines().filter(|l| l.contains(needle)).count() >= lines
                || Instant::now() >= deadline
            {
                return log;
            }
            thread::sleep(Duration::from_millis(10));
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A minimal HTTP/1.0 GET on 127.0.0.1 (readiness probe): the raw
/// response, or `None` on any error. Bounded by short timeouts.
fn http_get(port: u16, path: &str) -> Option<String> {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_millis(200)).ok()?;
    stream
        .set_read_timeout(Some(Duration::from_millis(500)))
        .ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    Some(response)
}

fn nginx_config(dir: &Path, port: u16) -> String {
    let d = dir.display();
    // As root, serve as root: the temp dir is root's. Otherwise nginx runs
    // as the calling user anyway.
    let user = if is_root() { "user root;\n" } else { "" };
    format!(
        "{user}daemon off;
master_process off;
worker_processes 1;
pid {d}/nginx.pid;
error_log {d}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {d}/access.log;
    client_body_temp_path {d}/body;
    client_max_body_size 1g;
    server {{
        listen 127.0.0.1:{port};
        root {d}/root;
        location / {{
            dav_methods PUT DELETE MKCOL;
            create_full_put_path on;
            dav_access user:rw;
        }}
    }}
}}
"
    )
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(1) == Some("0"))
        })
        .unwrap_or(false)
}

// ---------------------------------------------------------- fake server

/// One request the fake server read.
#[derive(Clone, Debug)]
pub struct Seen {
    pub method: String,
    pub path: String,
    /// Header lines, names lowercased.
    pub headers: Vec<(String, String)>,
    pub body_len: usize,
}

impl Seen {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the fake server does with a request.
#[derive(Clone)]
pub enum Reply {
    /// Writes these bytes (a whole HTTP response, or part of one) and
    /// closes the connection.
    Raw(Vec<u8>),
    /// Accepts, reads nothing more, never answers; the connection stays
    /// open until the server is dropped.
    Hang,
    /// The reply, written after a delay (on a thread of its own, so other
    /// connections are served meanwhile).
    Slow(Duration, Box<Reply>),
}

impl Reply {
    /// A bodyless response with `status`.
    pub fn status(status: u16) -> Reply {
        Reply::Raw(
            format!("HTTP/1.1 {status} Fake\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                .into_bytes(),
        )
    }

    /// 200 with `body`.
    pub fn ok(body: &[u8]) -> Reply {
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(body);
        Reply::Raw(r)
    }

    /// 200 announcing `body.len()` bytes but sending only `sent` of them.
    pub fn truncated(body: &[u8], sent: usize) -> Reply {
        let mut r = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        r.extend_from_slice(&body[..sent.min(body.len())]);
        Reply::Raw(r)
    }

    /// `reply` after `delay`.
    pub fn slow(delay: Duration, reply: Reply) -> Reply {
        Reply::Slow(delay, Box::new(reply))
    }

    /// 200 without a length, the body ended by closing: a short body is
    /// indistinguishable from a complete one at the HTTP level.
    pub fn close_delimited(body: &[u8]) -> Reply {
        let mut r = b"HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n".to_vec();
        r.extend_from_slice(body);
        Reply::Raw(r)
    }
}

type Handler = dyn Fn(&Seen) -> Reply + Send + Sync;

/// A scripted HTTP/1.1 server on 127.0.0.1: one request per connection,
/// answered by a handler. Bounded: it stops when dropped, and on its own
/// after 60 s or 10,000 connections.
pub struct FakeServer {
    pub port: u16,
    pub seen: Arc<Mutex<Vec<Seen>>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl FakeServer {
    pub fn start(handler: impl Fn(&Seen) -> Reply + Send + Sync + 'static) -> FakeServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind fake server");
        listener.set_nonblocking(true).expect("nonblocking");
        let port = listener.local_addr().expect("addr").port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let handler: Arc<Handler> = Arc::new(handler);
        let thread = {
            let (seen, stop) = (seen.clone(), stop.clone());
            thread::spawn(move || serve(&listener, &*handler, &seen, &stop))
        };
        FakeServer {
            port,
            seen,
            stop,
            thread: Some(thread),
        }
    }

    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/cache", self.port)
    }

    pub fn requests(&self) -> Vec<Seen> {
        self.seen.lock().map(|s| s.clone()).unwrap_or_default()
    }
}

impl Drop for FakeServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

fn serve(listener: &TcpListener, handler: &Handler, seen: &Mutex<Vec<Seen>>, stop: &AtomicBool) {
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut held = Vec::new();
    let mut connections = 0;
    while !stop.load(Ordering::SeqCst) && Instant::now() < deadline && connections < 10_000 {
        let mut stream = match listener.accept() {
            Ok((stream, _)) => stream,
            Err(_) => {
                thread::sleep(Duration::from_millis(2));
                continue;
            }
        };
        connections += 1;
        let _ = stream.set_nonblocking(false);
        let _ = stream.set_read_timeout(Some(Duration::from_secs(2)));
        let Some(request) = read_request(&mut stream) else {
            continue;
        };
        let reply = handler(&request);
        if let Ok(mut s) = seen.lock() {
            s.push(request);
        }
        match reply {
            Reply::Raw(bytes) => {
                let _ = stream.write_all(&bytes);
                let _ = stream.flush();
            }
            Reply::Hang => held.push(stream),
            Reply::Slow(delay, reply) => {
                // Bounded: one sleep and one write, then the thread ends.
                thread::spawn(move || {
                    thread::sleep(delay);
                    if let Reply::Raw(bytes) = *reply {
                        let _ = stream.write_all(&bytes);
                        let _ = stream.flush();
                    }
                });
            }
        }
    }
}

/// Reads one request: head (at most 64 KiB) and a Content-Length body.
fn read_request(stream: &mut TcpStream) -> Option<Seen> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let head_end = loop {
        if let Some(i) = find(&buf, b"\r\n\r\n") {
            break i;
        }
        if buf.len() > 64 * 1024 {
            return None;
        }
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).to_string();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let (method, path) = (first.next()?.to_string(), first.next()?.to_string());
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    let body_len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = buf.len() - (head_end + 4);
    while body < body_len {
        let n = stream.read(&mut chunk).ok().filter(|&n| n > 0)?;
        body += n;
    }
    Some(Seen {
        method,
        path,
        headers,
        body_len,
    })
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
