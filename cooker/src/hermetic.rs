//! One asset cooked as a hermetic build action (`ludus-anim cook-asset`),
//! for build engines that schedule, cache and distribute actions
//! themselves (Bazel and its remote execution API: `bazel/`).
//!
//! An action reads only the files it declares (the source, its
//! companions, the profile files, the retarget profile and target, the
//! project manifest: what `ludus-anim query` lists), through
//! [`DeclaredReader`], which refuses every other path; the asset then
//! fails naming the file. It writes only the files named in advance in
//! its output directory ([`PACKAGE_FILE`], [`MANIFEST_FRAGMENT`],
//! [`REPORT_FRAGMENT`], [`SIDECAR_FRAGMENT`]): the package under a fixed
//! name, its real name and content hash in the manifest fragment. No lock,
//! generation or staging file is written, and no cache is read or written
//! unless one is named (`--cache DIR`). `ludus-anim merge` joins the
//! fragments of every asset into the `manifest.json`, `report.json` and
//! `report-sidecar.json` an unsharded cook writes (`crate::fragment_merge`).

use crate::events::{CookEvent, Observer};
use crate::manifest::{AssetJob, Manifest};
use crate::pipeline::sidecar_doc::NamedPart;
use crate::pipeline::{cook_with, CookError, CookOptions};
use crate::report::Report;
use crate::sink::{PublishError, Sink};
use crate::source::{FileSystem, SourceReader};
use crate::stage_cache::StageCache;
use crate::stamps::FileStamp;
use std::collections::BTreeSet;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The package, whatever its content hash (the manifest fragment names it).
pub const PACKAGE_FILE: &str = "asset.ludanim";
/// A one-asset `manifest.json` (no asset when the cook failed).
pub const MANIFEST_FRAGMENT: &str = "asset.manifest.json";
/// A one-asset `report.json`.
pub const REPORT_FRAGMENT: &str = "asset.report.json";
/// The asset's part of `report-sidecar.json` (only when the sidecar is
/// on): [`SIDECAR_MAGIC`], the size limit and whether there is a part,
/// each on a line, then the part's bytes (`SidecarPart::to_bytes`), from
/// which `merge` writes the very document an unsharded cook writes.
pub const SIDECAR_FRAGMENT: &str = "asset.sidecar.part";
/// The first line of [`SIDECAR_FRAGMENT`].
pub const SIDECAR_MAGIC: &str = "ludus-anim sidecar part 1";

/// Sources read only from a declared set of files. Paths are compared
/// after resolving symbolic links (a sandbox links its inputs), so any
/// spelling of a declared file is one file, and a link to an undeclared one
/// is refused.
pub struct DeclaredReader {
    allowed: BTreeSet<PathBuf>,
    /// Declared files as given, for messages.
    listed: usize,
}

impl DeclaredReader {
    /// `files` must all exist (a missing declared input is the build
    /// system's error, named here rather than at first read).
    pub fn new(files: &[PathBuf]) -> Result<DeclaredReader, HermeticError> {
        let mut allowed = BTreeSet::new();
        for f in files {
            let real = f.canonicalize().map_err(|e| HermeticError::Input {
                path: f.display().to_string(),
                message: e.to_string(),
            })?;
            allowed.insert(real);
        }
        Ok(DeclaredReader {
            allowed,
            listed: files.len(),
        })
    }

    /// Whether `path` is one of the declared files.
    pub fn allows(&self, path: &Path) -> bool {
        path.canonicalize()
            .is_ok_and(|real| self.allowed.contains(&real))
    }

    fn check(&self, path: &Path) -> io::Result<()> {
        if self.allows(path) {
            return Ok(());
        }
        Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "'{}' is not a declared input of this action ({} declared; `ludus-anim query` lists what an asset reads)",
                path.display(),
                self.listed
            ),
        ))
    }
}

impl SourceReader for DeclaredReader {
    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.check(path)?;
        FileSystem.read(path)
    }
    fn exists(&self, path: &Path) -> bool {
        self.allows(path) && FileSystem.exists(path)
    }
    fn read_bounded(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        self.check(path)?;
        FileSystem.read_bounded(path, max_bytes)
    }
    /// Lexical, not through links: a build sandbox links each declared
    /// file to its real place, outside the sandbox's directories, and the
    /// companion confinement compares resolved paths. The declared set
    /// already bounds what can be read, links or not.
    fn resolve(&self, path: &Path) -> io::Result<PathBuf> {
        let cwd = std::env::current_dir()?;
        Ok(crate::paths::normalize(&cwd.join(path)))
    }
    /// No stamps: a stamp stands for a hash only in a cache kept between
    /// runs, which a hermetic action does not have.
    fn stamp(&self, _path: &Path) -> Option<FileStamp> {
        None
    }
}

/// Writes one asset's outputs at their fixed names in `dir`, each through
/// a temporary name in `dir` renamed into place (removed on failure).
pub struct FragmentSink {
    dir: PathBuf,
    /// The sidecar's size limit (`[report] sidecar_max_mb`), recorded
    /// with the part: the merged document applies it to the whole.
    sidecar_max_mb: Option<f64>,
    /// A failed sidecar write, reported by `publish`.
    sidecar_error: Mutex<Option<io::Error>>,
}

impl FragmentSink {
    pub fn new(dir: &Path, sidecar_max_mb: Option<f64>) -> FragmentSink {
        FragmentSink {
            dir: dir.to_path_buf(),
            sidecar_max_mb,
            sidecar_error: Mutex::new(None),
        }
    }

    fn target(&self, rel: &str) -> PathBuf {
        let name = match rel {
            r if r.starts_with("packages/") => PACKAGE_FILE,
            "manifest.json" => MANIFEST_FRAGMENT,
            "report.json" => REPORT_FRAGMENT,
            other => other,
        };
        self.dir.join(name)
    }

    fn put(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        let target = self.target(rel);
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let tmp = self.dir.join(format!(".{name}.partial"));
        let written = std::fs::write(&tmp, bytes).and_then(|_| std::fs::rename(&tmp, &target));
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written
    }
}

impl Sink for FragmentSink {
    fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        self.put(rel, bytes)
    }
    fn describe(&self, rel: &str) -> String {
        self.target(rel).display().to_string()
    }
    /// The asset's sidecar part is kept as it is (the merge joins parts);
    /// no document is published.
    fn take_sidecar(&self, parts: Vec<NamedPart>) -> Option<Vec<NamedPart>> {
        let limit = match self.sidecar_max_mb {
            Some(mb) => format!("{:016x}", mb.to_bits()),
            None => "none".to_string(),
        };
        let mut bytes =
            format!("{SIDECAR_MAGIC}\nmax_mb {limit}\nparts {}\n", parts.len()).into_bytes();
        for (_, p) in &parts {
            bytes.extend_from_slice(&p.to_bytes());
        }
        if let Err(e) = self.put(SIDECAR_FRAGMENT, &bytes) {
            // Published with the rest or not at all: `publish` reports it.
            if let Ok(mut failed) = self.sidecar_error.lock() {
                *failed = Some(e);
            }
        }
        None
    }
    fn publish(&self, index: &[(&str, &[u8])]) -> Result<(), PublishError> {
        if let Some(source) = self.sidecar_error.lock().ok().and_then(|mut e| e.take()) {
            return Err(PublishError::Stage {
                path: self.describe(SIDECAR_FRAGMENT),
                source,
            });
        }
        for (rel, bytes) in index {
            self.put(rel, bytes).map_err(|source| PublishError::Stage {
                path: self.describe(rel),
                source,
            })?;
        }
        Ok(())
    }
}

/// Why an action did not run.
#[derive(Debug, thiserror::Error)]
pub enum HermeticError {
    #[error("declared input '{path}': {message}")]
    Input { path: String, message: String },
    #[error("the project manifest {0} must be among the declared inputs")]
    ManifestUndeclared(String),
    #[error("the source '{0}' must be among the declared inputs")]
    SourceUndeclared(String),
    #[error(transparent)]
    Manifest(#[from] crate::manifest::ManifestError),
    #[error(
        "'{source_path}' is not an asset of {manifest} (no [[asset]] sources pattern matches it)"
    )]
    NotAnAsset {
        source_path: String,
        manifest: String,
    },
    #[error("cannot create the output directory {path}: {source}")]
    OutDir {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error(transparent)]
    Cook(#[from] CookError),
}

/// One asset action's request.
pub struct AssetAction {
    /// The project manifest (its directory is the project root); `None`
    /// cooks the source with default settings, paths recorded relative to
    /// the working directory.
    pub manifest: Option<PathBuf>,
    /// The asset's source file (a path as typed: relative to the working
    /// directory, or absolute).
    pub source: PathBuf,
    /// Every file the action may read (the manifest and the source
    /// included).
    pub inputs: Vec<PathBuf>,
    /// Where the fixed-name outputs go (created if missing).
    pub out: PathBuf,
    /// Everything else as `cook` would have it (default profile, units,
    /// codec, limits, sidecar); `jobs`, `project_root` and `out` are set
    /// here.
    pub options: CookOptions,
}

/// The asset's job: the manifest's entry for it, else default settings.
fn job(a: &AssetAction) -> Result<(AssetJob, Option<PathBuf>), HermeticError> {
    let Some(mp) = &a.manifest else {
        let job = AssetJob {
            path: a.source.clone(),
            settings: Default::default(),
        };
        return Ok((job, None));
    };
    let manifest = Manifest::load(mp)?;
    let root = mp
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let abs_root = crate::paths::absolute_root(Some(&root));
    let rel = PathBuf::from(crate::paths::record(&a.source, &abs_root));
    manifest
        .job_for(&root, &rel)?
        .map(|j| (j, Some(root)))
        .ok_or_else(|| HermeticError::NotAnAsset {
            source_path: a.source.display().to_string(),
            manifest: mp.display().to_string(),
        })
}

/// Cook one asset hermetically into `a.out`; its report (the asset failed
/// there, with diagnostics, when it would have read an undeclared file).
pub fn cook_asset(
    a: AssetAction,
    cache: &StageCache,
    observer: &dyn Observer,
) -> Result<Report, HermeticError> {
    let reader = DeclaredReader::new(&a.inputs)?;
    if let Some(m) = &a.manifest {
        if !reader.allows(m) {
            return Err(HermeticError::ManifestUndeclared(m.display().to_string()));
        }
    }
    if !reader.allows(&a.source) {
        return Err(HermeticError::SourceUndeclared(
            a.source.display().to_string(),
        ));
    }
    let (job, root) = job(&a)?;
    std::fs::create_dir_all(&a.out).map_err(|source| HermeticError::OutDir {
        path: a.out.display().to_string(),
        source,
    })?;
    // A previous run's outputs must not outlive this one (a package left
    // from before the asset failed).
    for f in [
        PACKAGE_FILE,
        MANIFEST_FRAGMENT,
        REPORT_FRAGMENT,
        SIDECAR_FRAGMENT,
    ] {
        let _ = std::fs::remove_file(a.out.join(f));
    }
    let mut options = a.options;
    options.jobs = vec![job];
    options.project_root = root;
    options.out = a.out.clone();
    options.shard = None;
    let sink = FragmentSink::new(&a.out, options.sidecar.max_mb);
    // A one-asset cook cannot judge cook-wide checks (sync-group members
    // of other assets, project curve rules no asset uses): its notices
    // are left to `merge`, which sees every asset.
    let quiet = NoNotices(observer);
    Ok(cook_with(&options, cache, &quiet, &reader, &sink)?)
}

/// An observer without `Notice` events.
struct NoNotices<'a>(&'a dyn Observer);

impl Observer for NoNotices<'_> {
    fn event(&self, e: &CookEvent<'_>) {
        if !matches!(e, CookEvent::Notice { .. }) {
            self.0.event(e);
        }
    }
}

/// Whether `dir` holds an asset action's outputs.
pub fn is_fragment_dir(dir: &Path) -> bool {
    dir.join(REPORT_FRAGMENT).is_file()
}
