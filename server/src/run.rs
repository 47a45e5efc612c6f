//! Start-up and shutdown: check the settings, resolve the project as
//! `cook` does, serve the published generation at once (a restart), cook,
//! watch, and on SIGINT/SIGTERM stop accepting, end event streams, and give
//! the cook in flight a few seconds to finish before abandoning it (an
//! abandoned cook leaves only temp files, which the next start ignores).

use crate::args::ServeArgs;
use crate::generation::Generations;
use crate::http::{self, App};
use crate::state::Shared;
use crate::watch::{ticker, Watch};
use crate::worker::{Resolver, Worker};
use ludus_anim_cooker::project::{self, Origin, ProjectArgs};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, AtomicUsize};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a cook in flight may take to finish after a shutdown signal.
const COOK_GRACE: Duration = Duration::from_secs(5);

/// Exit codes: 0 after a signal; 2 bad arguments or project; 3 the output
/// directory or the address cannot be used.
pub fn main(args: ServeArgs) -> ExitCode {
    match start(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err((code, message)) => {
            eprintln!("ludus-anim-server: error: {message}");
            ExitCode::from(code)
        }
    }
}

type Failure = (u8, String);

fn start(args: ServeArgs) -> Result<(), Failure> {
    let settings = args.settings().map_err(|e| (2, e.to_string()))?;
    for w in &settings.warnings {
        eprintln!("ludus-anim-server: warning: {w}");
    }
    let mut resolver = Resolver {
        args: ProjectArgs {
            inputs: args.inputs.clone(),
            manifest: args.manifest.clone(),
            out: args.out.clone(),
            profile: args.profile.clone(),
            cache: args.cache.clone(),
            remote: args.remote(),
        },
        cwd: PathBuf::from("."),
        fixtures: fixtures_dir(),
    };
    let project = project::resolve(&resolver.args, &resolver.cwd, &resolver.fixtures)
        .map_err(|e| (2, e.to_string()))?;
    if project.origin == Origin::Bundled {
        return Err((2, format!(
            "no inputs and no {} here: pass --manifest FILE or the files to serve (serve never serves the bundled demo)",
            ludus_anim_cooker::manifest::FILE_NAME
        )));
    }
    // Resolve the same manifest again on changes: a manifest that is
    // missing for a moment is then a project error, never another project.
    if project.origin == Origin::Manifest {
        resolver.args.manifest = project.manifest_path.clone();
    }
    let gens = Generations::open(&project.out).map_err(|e| (3, e.to_string()))?;
    gens.claim().map_err(|e| (3, e.to_string()))?;
    let out = project.out.clone();
    let listener = std::net::TcpListener::bind(settings.addr)
        .and_then(|l| l.set_nonblocking(true).map(|_| l))
        .map_err(|e| (3, format!("cannot listen on {}: {e}", settings.addr)))?;
    let local = listener.local_addr().map_err(|e| (3, e.to_string()))?;
    let shared = Arc::new(Shared::new(project.out.clone()));
    let watch = Watch::start(settings.watch, &shared, settings.refuse_watches);
    let worker = Worker::new(
        Arc::clone(&shared),
        settings.clone(),
        resolver,
        project,
        gens,
        watch,
    );
    let cook_thread = std::thread::spawn(move || worker.run());
    let stop_rescan = Arc::new(AtomicBool::new(false));
    if let Some(every) = settings.rescan {
        let (s, st) = (Arc::clone(&shared), Arc::clone(&stop_rescan));
        std::thread::spawn(move || ticker(every, &s, &st, true));
    }
    println!("ludus-anim-server: listening on http://{local}");
    let _ = std::io::stdout().flush();
    serve_until_signal(listener, &shared, &settings)?;
    shared.submit(|p| p.shutdown = true);
    stop_rescan.store(true, std::sync::atomic::Ordering::Relaxed);
    finish_cook(cook_thread);
    if let Ok(g) = Generations::open(&out) {
        g.release();
    }
    Ok(())
}

fn serve_until_signal(
    listener: std::net::TcpListener,
    shared: &Arc<Shared>,
    settings: &crate::args::Settings,
) -> Result<(), Failure> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| (3, format!("cannot start the HTTP runtime: {e}")))?;
    rt.block_on(async {
        let listener = tokio::net::TcpListener::from_std(listener)
            .map_err(|e| (3, format!("cannot listen: {e}")))?;
        let (tx, rx) = tokio::sync::watch::channel(false);
        let app = App {
            shared: Arc::clone(shared),
            token: settings.token.clone().map(Arc::from),
            hosts: settings.hosts.clone().map(Arc::from),
            streams: Arc::new(AtomicUsize::new(0)),
            shutdown: rx,
        };
        let stop = async move {
            signal().await;
            eprintln!("ludus-anim-server: shutting down");
            let _ = tx.send(true);
        };
        http::serve(listener, http::router(app), stop, Duration::from_secs(2)).await;
        Ok(())
    })
}

async fn signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// Wait for the cook thread to finish its cook, up to [`COOK_GRACE`].
fn finish_cook(t: std::thread::JoinHandle<()>) {
    let deadline = Instant::now() + COOK_GRACE;
    while !t.is_finished() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    if t.is_finished() {
        let _ = t.join();
    } else {
        eprintln!(
            "ludus-anim-server: abandoning the cook in flight (nothing it wrote is published)"
        );
    }
}

/// Where the bundled demo lives: `./fixtures`, else the source checkout's
/// (as `ludus-anim cook`).
fn fixtures_dir() -> PathBuf {
    let local = PathBuf::from("fixtures");
    if local.is_dir() {
        return local;
    }
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join("fixtures")
}
