//! Cooking with Bazel (`bazel/`), for real on loopback with Debian's
//! `bazel-bootstrap` (installed by `.ci/run`; skipped with a message when
//! `bazel` is not on PATH):
//! - a workspace over a project with every kind of declared input builds
//!   one `LudusAnimCook` action per asset plus the merge, and its outputs
//!   are byte-identical to `ludus-anim cook`'s (report.json timings aside;
//!   its per-stage counters add up to the same);
//! - a build with an empty output base against the nginx remote cache that
//!   the first build filled runs nothing: every action is a remote cache
//!   hit, and the outputs are the same bytes;
//! - the checked-in example workspace (`//example:all`) builds and equals
//!   `ludus-anim cook --manifest example/ludus-anim.toml`;
//! - remote execution against BuildGrid (PyPI `buildgrid==0.0.97`, started
//!   here on 127.0.0.1 with two bots from `tests/reapi/buildgrid_bot.py`)
//!   runs every action on the workers and gives the same bytes. Its
//!   Python is `LUDUS_BUILDGRID_PYTHON` (`.ci/run` installs the venv),
//!   else `/tmp/ludus-buildgrid-venv/bin/python`; skipped with a message
//!   when neither has BuildGrid.
//!
//! Every Bazel server started here has its own output base under a temp
//! directory, exits after 30 idle seconds and is shut down at the end.

mod common;
#[path = "../remote-cache/tests/common/mod.rs"]
mod servers;

use common::hermetic::hermetic_project;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One Bazel test at a time: each starts a Bazel server (a JVM) and the
/// machine may have two cores.
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

/// `bazel` on PATH, or `None` with the reason printed.
fn bazel() -> Option<PathBuf> {
    let found = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("bazel"))
            .find(|b| b.is_file())
    });
    if found.is_none() {
        eprintln!(
            "SKIPPED: bazel is not on PATH (CI installs Debian's bazel-bootstrap: \
             `apt-get install -y bazel-bootstrap`); the Bazel tests did not run"
        );
    }
    found
}

/// A Bazel client over one output base, shut down when dropped.
struct Bazel {
    bin: PathBuf,
    workspace: PathBuf,
    user_root: PathBuf,
    output_base: PathBuf,
}

impl Bazel {
    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        c.arg(format!("--output_user_root={}", self.user_root.display()))
            .arg(format!("--output_base={}", self.output_base.display()))
            .arg("--max_idle_secs=30")
            .args(args)
            .current_dir(&self.workspace)
            .env_remove("LUDUS_ANIM_BIN");
        c
    }

    /// `bazel build TARGET` with `flags`; the spawns of its execution log.
    fn build(&self, target: &str, flags: &[String]) -> Vec<Value> {
        let log = self.output_base.with_extension("exec.json");
        let mut args = vec![
            "build".to_string(),
            "--noshow_progress".to_string(),
            format!("--execution_log_json_file={}", log.display()),
        ];
        args.extend(flags.iter().cloned());
        args.push(target.to_string());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = self.command(&refs).output().expect("run bazel");
        assert!(o.status.success(), "bazel build {target}: {}", text(&o));
        let text = std::fs::read_to_string(&log).expect("execution log");
        serde_json::Deserializer::from_str(&text)
            .into_iter::<Value>()
            .map(|v| v.expect("execution log entry"))
            .collect()
    }

    fn bin_dir(&self) -> PathBuf {
        let o = self
            .command(&["info", "bazel-bin"])
            .output()
            .expect("bazel info");
        assert!(o.status.success(), "{}", text(&o));
        PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
    }
}

impl Drop for Bazel {
    fn drop(&mut self) {
        let _ = self.command(&["shutdown"]).output();
    }
}

/// A workspace at `ws` with the repository's rules and the hermetic
/// project in `ws/proj` (target `//proj:anim`).
fn workspace(fx: &Path, ws: &Path) {
    std::fs::create_dir_all(ws.join("bazel")).unwrap();
    for f in ["BUILD.bazel", "defs.bzl", "repositories.bzl"] {
        std::fs::copy(repo().join("bazel").join(f), ws.join("bazel").join(f)).unwrap();
    }
    hermetic_project(fx, &ws.join("proj"));
    std::fs::write(
        ws.join("WORKSPACE"),
        format!(
            "workspace(name = \"t\")\nload(\"//bazel:repositories.bzl\", \"ludus_anim_repository\")\n\
             ludus_anim_repository(name = \"proj_assets\", manifest = \"//proj:ludus-anim.toml\", tool = \"{}\")\n",
            env!("CARGO_BIN_EXE_ludus-anim")
        ),
    )
    .unwrap();
    std::fs::write(
        ws.join("proj/BUILD.bazel"),
        "load(\"@proj_assets//:assets.bzl\", \"LUDUS_ANIM_PROJECT\")\n\
         load(\"//bazel:defs.bzl\", \"ludus_anim_project\")\n\
         exports_files([\"ludus-anim.toml\"])\n\
         ludus_anim_project(name = \"anim\", project = LUDUS_ANIM_PROJECT)\n",
    )
    .unwrap();
}

/// Bazel's merged output directory equals `ludus-anim cook`'s `out`.
fn assert_same_as_cook(cooked: &Path, built: &Path, what: &str) {
    assert_eq!(packages(cooked), packages(built), "{what}: packages");
    for f in ["manifest.json", "report-sidecar.json"] {
        assert!(
            std::fs::read(cooked.join(f)).unwrap() == std::fs::read(built.join(f)).unwrap(),
            "{what}: {f} differs"
        );
    }
    let (mut a, mut b) = (report(cooked), report(built));
    strip(&mut a, TIMING);
    strip(&mut b, TIMING);
    assert_eq!(a, b, "{what}: report.json (timings aside)");
    let mut names: Vec<String> = std::fs::read_dir(built)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(
        names,
        [
            "manifest.json",
            "packages",
            "report-sidecar.json",
            "report.json"
        ],
        "{what}: nothing else in the output directory"
    );
}

fn spawns<'a>(log: &'a [Value], mnemonic: &str) -> Vec<&'a Value> {
    log.iter().filter(|s| s["mnemonic"] == mnemonic).collect()
}

#[test]
fn bazel_builds_the_cook_and_a_fresh_output_base_is_served_from_the_remote_cache() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(bin) = bazel() else { return };
    let _serial = one_at_a_time();
    let Some(nginx) = servers::Nginx::start() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    workspace(&fx, &ws);
    let o = ludus_anim(
        &["cook", "--quiet", "--no-cache", "--out", "../cooked"],
        &ws.join("proj"),
    );
    assert!(o.status.success(), "{}", text(&o));
    let cooked = ws.join("cooked");
    let assets = report(&cooked)["assets"].as_array().unwrap().len();

    let remote = vec![
        format!("--remote_cache={}", nginx.url()),
        "--remote_upload_local_results".to_string(),
    ];
    let first = Bazel {
        bin: bin.clone(),
        workspace: ws.clone(),
        user_root: tmp.path().join("user-root"),
        output_base: tmp.path().join("base-1"),
    };
    let log = first.build("//proj:anim", &remote);
    let cooks = spawns(&log, "LudusAnimCook");
    assert_eq!(cooks.len(), assets, "one action per asset");
    assert!(cooks.iter().all(|s| s["remoteCacheHit"] != true));
    assert_eq!(spawns(&log, "LudusAnimMerge").len(), 1);
    assert_same_as_cook(&cooked, &first.bin_dir().join("proj/anim"), "bazel build");
    drop(first);

    // Another machine: an empty output base, the same remote cache.
    let second = Bazel {
        bin,
        workspace: ws.clone(),
        user_root: tmp.path().join("user-root"),
        output_base: tmp.path().join("base-2"),
    };
    let log = second.build("//proj:anim", &remote);
    let cooks = spawns(&log, "LudusAnimCook");
    assert_eq!(cooks.len(), assets);
    for s in cooks.iter().chain(&spawns(&log, "LudusAnimMerge")) {
        assert_eq!(
            s["remoteCacheHit"], true,
            "every action served by the remote cache: {s}"
        );
    }
    assert_same_as_cook(
        &cooked,
        &second.bin_dir().join("proj/anim"),
        "remote cache hit",
    );
}

#[test]
fn the_example_workspace_builds_what_cook_writes() {
    let Some(bin) = bazel() else { return };
    let _serial = one_at_a_time();
    let tmp = tempfile::tempdir().unwrap();
    // The checked-in workspace files over a copy of the repository's
    // example and fixtures (a build never writes into the checkout).
    let ws = tmp.path().join("ws");
    for dir in ["bazel", "example", "fixtures"] {
        std::fs::create_dir_all(ws.join(dir)).unwrap();
        for e in std::fs::read_dir(repo().join(dir)).unwrap().flatten() {
            if e.path().is_file() {
                std::fs::copy(e.path(), ws.join(dir).join(e.file_name())).unwrap();
            }
        }
    }
    for f in ["WORKSPACE", ".bazelignore"] {
        std::fs::copy(repo().join(f), ws.join(f)).unwrap();
    }
    let o = ludus_anim(
        &[
            "cook",
            "--quiet",
            "--no-cache",
            "--manifest",
            "example/ludus-anim.toml",
            "--out",
            "cooked",
        ],
        &ws,
    );
    assert!(o.status.success(), "{}", text(&o));
    let b = Bazel {
        bin,
        workspace: ws.clone(),
        user_root: tmp.path().join("user-root"),
        output_base: tmp.path().join("base"),
    };
    let mut c = b.command(&["build", "--noshow_progress", "//example:all"]);
    c.env("LUDUS_ANIM_BIN", env!("CARGO_BIN_EXE_ludus-anim"));
    let o = c.output().expect("run bazel");
    assert!(o.status.success(), "{}", text(&o));
    assert_same_as_cook(
        &ws.join("cooked"),
        &b.bin_dir().join("example/anim"),
        "example",
    );
}

/// A Python with BuildGrid, or `None` with the reason printed.
fn buildgrid_python() -> Option<PathBuf> {
    let p = std::env::var_os("LUDUS_BUILDGRID_PYTHON")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/tmp/ludus-buildgrid-venv/bin/python"));
    let ok = Command::new(&p)
        .args(["-c", "import buildgrid.client.cas, buildgrid._app.cli"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!(
            "SKIPPED: no Python with BuildGrid at {} (set LUDUS_BUILDGRID_PYTHON; .ci/run makes \
             one with `python3 -m venv /tmp/ludus-buildgrid-venv && \
             /tmp/ludus-buildgrid-venv/bin/pip install buildgrid==0.0.97`); \
             the remote-execution test did not run",
            p.display()
        );
        return None;
    }
    Some(p)
}

/// BuildGrid and its bots on 127.0.0.1, killed when dropped.
struct Grid {
    children: Vec<std::process::Child>,
    port: u16,
}

impl Grid {
    fn start(python: &Path, dir: &Path, bots: usize) -> Grid {
        let port = servers::free_port();
        let config = std::fs::read_to_string(repo().join("tests/reapi/buildgrid.yml"))
            .unwrap()
            .replace("PORT", &port.to_string())
            .replace("STATE", &dir.join("state.db").display().to_string());
        std::fs::write(dir.join("buildgrid.yml"), config).unwrap();
        let log = |name: &str| std::fs::File::create(dir.join(name)).unwrap();
        let bgd = python.with_file_name("bgd");
        let server = Command::new(&bgd)
            .args(["server", "start"])
            .arg(dir.join("buildgrid.yml"))
            .stdout(log("server.log"))
            .stderr(log("server.err"))
            .spawn()
            .expect("start bgd server");
        let mut grid = Grid {
            children: vec![server],
            port,
        };
        for i in 0..bots {
            let bot = Command::new(python)
                .arg(repo().join("tests/reapi/buildgrid_bot.py"))
                .arg(format!("127.0.0.1:{port}"))
                .arg(dir.join(format!("bot-{i}")))
                .arg(format!("bot-{i}"))
                .arg("300")
                .stdout(log(&format!("bot-{i}.log")))
                .stderr(log(&format!("bot-{i}.err")))
                .spawn()
                .expect("start bot");
            grid.children.push(bot);
        }
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                std::time::Instant::now() < deadline,
                "BuildGrid did not listen within 60 s: {}",
                std::fs::read_to_string(dir.join("server.err")).unwrap_or_default()
            );
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        grid
    }
}

impl Drop for Grid {
    fn drop(&mut self) {
        for c in &mut self.children {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

#[test]
fn remote_execution_on_buildgrid_gives_the_same_bytes() {
    let Some(fx) = shared_fixtures() else { return };
    let Some(bin) = bazel() else { return };
    let _serial = one_at_a_time();
    let Some(python) = buildgrid_python() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    workspace(&fx, &ws);
    let o = ludus_anim(
        &["cook", "--quiet", "--no-cache", "--out", "../cooked"],
        &ws.join("proj"),
    );
    assert!(o.status.success(), "{}", text(&o));
    let cooked = ws.join("cooked");
    let assets = report(&cooked)["assets"].as_array().unwrap().len();
    let grid_dir = tmp.path().join("grid");
    std::fs::create_dir_all(&grid_dir).unwrap();
    let grid = Grid::start(&python, &grid_dir, 2);
    let b = Bazel {
        bin,
        workspace: ws.clone(),
        user_root: tmp.path().join("user-root"),
        output_base: tmp.path().join("base-remote"),
    };
    let flags = vec![format!("--remote_executor=grpc://127.0.0.1:{}", grid.port)];
    let log = b.build("//proj:anim", &flags);
    let cooks = spawns(&log, "LudusAnimCook");
    assert_eq!(cooks.len(), assets, "one action per asset");
    for s in cooks.iter().chain(&spawns(&log, "LudusAnimMerge")) {
        assert_eq!(s["runner"], "remote", "ran on a BuildGrid bot: {s}");
        assert_ne!(s["remoteCacheHit"], true);
    }
    assert_same_as_cook(&cooked, &b.bin_dir().join("proj/anim"), "remote execution");
}
