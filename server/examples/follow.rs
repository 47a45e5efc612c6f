//! Follow a `ludus-anim serve` project and reload what changes, with the
//! standard library only (`schemas/server-api.md`, "Following a project").
//!
//! ```text
//! cargo run --release -p ludus-anim-server --example follow -- 127.0.0.1:7878 [DIR]
//! ```
//!
//! The loop: long-poll `/status?after=N` (answered when generation N is
//! superseded, health changes, or after 30 s), read `/manifest` when the
//! generation moved (`If-None-Match`: a 304 costs no body), fetch each
//! package whose hash changed from `/packages/{hash}` (immutable: cache it
//! by hash forever) into DIR, and drop the assets the manifest no longer
//! lists. While it downloads, it holds a lease on the manifest's
//! generation (`POST /generations/{n}/lease?ttl=60`, released after), so
//! a burst of edits cannot remove the packages it is fetching. A game would hand the new bytes to `ludus_anim_runtime::Package`
//! instead of writing them out. JSON is scanned for the two fields this
//! needs; a real client uses a JSON parser. A server with a token reads
//! it from `LUDUS_ANIM_TOKEN`.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn main() {
    let mut args = std::env::args().skip(1);
    let addr = args.next().unwrap_or_else(|| "127.0.0.1:7878".into());
    let dir = PathBuf::from(args.next().unwrap_or_else(|| "followed".into()));
    if let Err(e) = follow(&addr, &dir) {
        eprintln!("follow: {e}");
        std::process::exit(1);
    }
}

type Result<T> = std::result::Result<T, String>;

fn follow(addr: &str, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
    let (mut seen, mut etag) = (0u64, String::new());
    let mut loaded: BTreeMap<String, String> = BTreeMap::new();
    loop {
        let status = get(addr, &format!("/status?after={seen}&timeout=30"), "")?;
        let generation = number_after(&status.body, "\"generation\":").unwrap_or(0);
        if generation == seen {
            continue;
        }
        let manifest = get(addr, "/manifest", &etag)?;
        if manifest.status == 200 {
            let held = manifest
                .header("x-ludus-anim-generation")
                .and_then(|g| g.parse::<u64>().ok())
                .and_then(|g| lease(addr, g));
            let done = reload(addr, dir, &manifest.body, &mut loaded);
            if let Some(path) = held {
                let _ = request(addr, "DELETE", &path, "");
            }
            if let Err(e) = done {
                // Read the manifest again (no If-None-Match) and retry.
                eprintln!("follow: {e}; retrying");
                etag.clear();
                continue;
            }
            etag = manifest.etag.clone();
        }
        println!("generation {generation}: {} assets loaded", loaded.len());
        seen = generation;
    }
}

/// Fetch the packages whose hash changed; forget the assets that left.
fn reload(
    addr: &str,
    dir: &Path,
    manifest: &str,
    loaded: &mut BTreeMap<String, String>,
) -> Result<()> {
    let now = assets_of(manifest);
    for (source, hash) in &now {
        if loaded.get(source) == Some(hash) {
            continue;
        }
        let pkg = get(addr, &format!("/packages/{hash}"), "")?;
        if pkg.status != 200 {
            return Err(format!("/packages/{hash}: HTTP {}", pkg.status));
        }
        let file = dir.join(format!("{}.ludanim", source.replace('/', "__")));
        std::fs::write(&file, &pkg.bytes).map_err(|e| e.to_string())?;
        println!("reloaded {source} ({} bytes)", pkg.bytes.len());
    }
    for gone in loaded.keys().filter(|s| !now.contains_key(*s)) {
        println!("unloaded {gone}");
        let _ = std::fs::remove_file(dir.join(format!("{}.ludanim", gone.replace('/', "__"))));
    }
    *loaded = now;
    Ok(())
}

/// Lease generation `g` for 60 s; the lease's path (to release it), or
/// `None` when the generation is already gone.
fn lease(addr: &str, g: u64) -> Option<String> {
    let r = request(addr, "POST", &format!("/generations/{g}/lease?ttl=60"), "").ok()?;
    let id = (r.status == 201).then(|| string_after(&r.body, "\"lease\":"))??;
    Some(format!("/generations/{g}/lease/{id}"))
}

/// `source` → `package_hash` of every asset in a `manifest.json`.
fn assets_of(manifest: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut rest = manifest;
    while let Some(i) = rest.find("\"source\":") {
        rest = &rest[i..];
        let source = string_after(rest, "\"source\":");
        let hash = string_after(rest, "\"package_hash\":");
        if let (Some(s), Some(h)) = (source, hash) {
            out.insert(s, h);
        }
        rest = &rest[1..];
    }
    out
}

fn string_after(text: &str, key: &str) -> Option<String> {
    let at = text.find(key)? + key.len();
    let start = text[at..].find('"')? + at + 1;
    let end = text[start..].find('"')? + start;
    Some(text[start..end].to_string())
}

fn number_after(text: &str, key: &str) -> Option<u64> {
    let at = text.find(key)? + key.len();
    let digits: String = text[at..]
        .trim_start()
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}

struct Response {
    status: u16,
    head: String,
    etag: String,
    bytes: Vec<u8>,
    body: String,
}

impl Response {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.eq_ignore_ascii_case(name).then(|| v.trim())
        })
    }
}

fn get(addr: &str, path: &str, if_none_match: &str) -> Result<Response> {
    request(addr, "GET", path, if_none_match)
}

/// One request with `Connection: close` (the server always sends a
/// length). `X-Ludus-Anim` marks it as a script's, as state-changing
/// requests must be.
fn request(addr: &str, method: &str, path: &str, if_none_match: &str) -> Result<Response> {
    let mut s = TcpStream::connect(addr).map_err(|e| format!("{addr}: {e}"))?;
    s.set_read_timeout(Some(Duration::from_secs(70)))
        .map_err(|e| e.to_string())?;
    let mut head = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nX-Ludus-Anim: follow\r\nContent-Length: 0\r\n"
    );
    if !if_none_match.is_empty() {
        head.push_str(&format!("If-None-Match: {if_none_match}\r\n"));
    }
    if let Ok(token) = std::env::var("LUDUS_ANIM_TOKEN") {
        head.push_str(&format!("Authorization: Bearer {token}\r\n"));
    }
    s.write_all(format!("{head}\r\n").as_bytes())
        .map_err(|e| e.to_string())?;
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).map_err(|e| e.to_string())?;
    let end = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("no end of headers")?;
    let head = String::from_utf8_lossy(&raw[..end]).to_string();
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .ok_or("bad status line")?;
    let bytes = raw[end + 4..].to_vec();
    let body = String::from_utf8_lossy(&bytes).to_string();
    let mut r = Response {
        status,
        head,
        etag: String::new(),
        bytes,
        body,
    };
    r.etag = r.header("etag").unwrap_or_default().to_string();
    Ok(r)
}
