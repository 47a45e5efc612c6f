//! Generations on disk. Layout under the output directory:
//!
//! ```text
//! OUT/packages/<asset>-<hash16>.ludanim   content-named, shared by generations
//! OUT/generations/<n>/manifest.json        the packages generation n serves
//! OUT/generations/<n>/report.json          its report (latest cook of every asset)
//! OUT/generations/<n>/stale.json           assets served from an older cook
//! OUT/generations/<n>/report-sidecar.json  the dashboard's per-time data, every asset
//! OUT/generations/<n>/pinned               present: kept whatever the retention (POST /generations/{n}/pin)
//! OUT/generations/<n>/lease-<id>           a client lease: its expiry, Unix ms (`crate::lease`)
//! OUT/current                              "<n>\n": the published generation
//! OUT/{report-sidecar,report,manifest}.json  links to the current generation's
//! OUT/server.pid                           the serving process (one per directory)
//! ```
//!
//! Publishing writes the generation into `generations/.tmp-<n>-<pid>/`
//! and the new pointer into a temp file (all flushed together), renames
//! the directory to `generations/<n>/`, then renames the pointer over
//! `current`. A crash at any point leaves
//! `current` naming a complete generation; temp directories and pointer
//! files are removed at the next start. `current` is the server's one-entry transaction log
//! (bevy_asset's processor keeps a log of begun and finished work for the
//! same reason; a pointer swap makes the log a single atomic record).
//!
//! Which generations are listed, pinned, leased and collected: [`kept`].

pub mod kept;

use crate::sidecar::SidecarPart;
use ludus_anim_cooker::filelock;
use ludus_anim_cooker::fsutil::{write_atomic, OutputDir};
use ludus_anim_cooker::pipeline::sidecar_doc::NamedPart;
use ludus_anim_cooker::publish::LOCK_FILE;
use ludus_anim_cooker::report::sidecar::{Sidecar, SIDECAR_FILE};
use ludus_anim_cooker::report::{PackageManifest, Report, ReportDiagnostic};
use ludus_anim_cooker::sink::{PublishError, Sink};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

pub const CURRENT: &str = "current";
const PID_FILE: &str = "server.pid";
const DIR: &str = "generations";
/// A generation holding this file is kept whatever `--keep` says.
const PIN_FILE: &str = "pinned";
/// How long updating the top-level files waits for `OUT/.lock` (held by a
/// `ludus-anim cook` or `prune` into the same directory): the cook thread
/// must not stall; the next publication updates them.
const MIRROR_LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Assets served from an older cook because their latest cook failed:
/// asset name → that cook's diagnostics.
pub type StaleMap = BTreeMap<String, Vec<ReportDiagnostic>>;

/// One generation as files hold it.
#[derive(Clone, Debug)]
pub struct GenerationFiles {
    pub number: u64,
    pub manifest: PackageManifest,
    pub report: Report,
    pub stale: StaleMap,
}

#[derive(Serialize, Deserialize)]
struct StaleFile {
    stale: StaleMap,
}

#[derive(Debug, thiserror::Error)]
pub enum GenerationError {
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: io::Error,
    },
    #[error("{path}: {message}")]
    Corrupt { path: String, message: String },
}

fn io_err(path: &Path) -> impl FnOnce(io::Error) -> GenerationError + '_ {
    move |source| GenerationError::Io {
        path: path.display().to_string(),
        source,
    }
}

/// A generation's `report.json` and `manifest.json` bytes as written.
pub struct Written {
    pub report: Vec<u8>,
    pub manifest: Vec<u8>,
}

/// Package hash → its path relative to OUT (`packages/<name>`).
pub type PackageIndex = BTreeMap<String, String>;

/// The generations of one output directory.
pub struct Generations {
    out: PathBuf,
    /// The packages of each generation this process published or read,
    /// so that collecting does not re-read kept generations from disk.
    named: BTreeMap<u64, PackageIndex>,
    /// Whether `OUT/packages/` was swept whole since the start.
    swept: bool,
    /// The highest generation number on disk or published: numbers are
    /// never reused, even for a generation whose `current` was lost.
    highest: u64,
    /// Package path (relative to OUT) → bytes, for the size budget.
    sizes: HashMap<String, u64>,
    /// Generation → bytes of its own files, once it has its sidecar.
    own: BTreeMap<u64, u64>,
}

impl Generations {
    /// Open `out`, creating its directories and removing temp generation
    /// directories a killed server left.
    pub fn open(out: &Path) -> Result<Generations, GenerationError> {
        let dir = out.join(DIR);
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        let mut highest = 0;
        for e in std::fs::read_dir(&dir).map_err(io_err(&dir))?.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if name.starts_with(".tmp-") {
                let _ = std::fs::remove_dir_all(e.path());
            }
            highest = highest.max(name.parse().unwrap_or(0));
        }
        // The new pointer's temp file of a killed server (not a live one's).
        for e in std::fs::read_dir(out).map_err(io_err(out))?.flatten() {
            let name = e.file_name().to_string_lossy().to_string();
            if let Some(pid) = name.strip_prefix(".current.tmp-") {
                if !Path::new("/proc").join(pid).exists() {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        Ok(Generations {
            out: out.to_path_buf(),
            named: BTreeMap::new(),
            swept: false,
            highest,
            sizes: HashMap::new(),
            own: BTreeMap::new(),
        })
    }

    /// Claim the output directory for this process (`OUT/server.pid`):
    /// two servers publishing into one directory would race for
    /// generation numbers. A pid file whose process is gone (a `kill -9`)
    /// is taken over.
    pub fn claim(&self) -> Result<(), GenerationError> {
        let p = self.out.join(PID_FILE);
        if let Ok(text) = std::fs::read_to_string(&p) {
            let pid = text.trim();
            let alive = pid
                .parse::<u32>()
                .is_ok_and(|n| n != std::process::id() && Path::new("/proc").join(pid).exists());
            if alive {
                return Err(GenerationError::Corrupt {
                    path: p.display().to_string(),
                    message: format!("another server (pid {pid}) serves this output directory"),
                });
            }
        }
        write_atomic(&p, format!("{}\n", std::process::id()).as_bytes()).map_err(io_err(&p))
    }

    /// Give the output directory up (clean shutdown).
    pub fn release(&self) {
        let _ = std::fs::remove_file(self.out.join(PID_FILE));
    }

    pub fn out(&self) -> &Path {
        &self.out
    }

    /// The published generation, if any.
    pub fn current(&self) -> Result<Option<GenerationFiles>, GenerationError> {
        let p = self.out.join(CURRENT);
        let text = match std::fs::read_to_string(&p) {
            Ok(t) => t,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&p)(e)),
        };
        let number: u64 = text.trim().parse().map_err(|_| GenerationError::Corrupt {
            path: p.display().to_string(),
            message: format!("'{}' is not a generation number", text.trim()),
        })?;
        self.load(number).map(Some)
    }

    fn load(&self, number: u64) -> Result<GenerationFiles, GenerationError> {
        let dir = self.dir_of(number);
        let stale: StaleFile = read_json(&dir.join("stale.json"))?;
        Ok(GenerationFiles {
            number,
            manifest: read_json(&dir.join("manifest.json"))?,
            report: read_json(&dir.join("report.json"))?,
            stale: stale.stale,
        })
    }

    /// `report.json` of generation `number` as written.
    pub fn report_bytes(&self, number: u64) -> Result<Vec<u8>, GenerationError> {
        let p = self.dir_of(number).join("report.json");
        std::fs::read(&p).map_err(io_err(&p))
    }

    /// The `report-sidecar.json` of generation `number`, if it has one
    /// (read once after a start: a stale asset's last good records).
    pub fn sidecar(&self, number: u64) -> Result<Option<Sidecar>, GenerationError> {
        let p = self.dir_of(number).join(SIDECAR_FILE);
        let bytes = match std::fs::read(&p) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(io_err(&p)(e)),
        };
        Sidecar::from_json(&bytes)
            .map(Some)
            .map_err(|e| GenerationError::Corrupt {
                path: p.display().to_string(),
                message: e.to_string(),
            })
    }

    /// Write the `report-sidecar.json` of published generation `number`
    /// from `parts` (streamed: the whole is never one buffer), flushed,
    /// under a temp name renamed in, so a reader sees none or all of it.
    /// Called after the generation was announced: at ~60 MB for the
    /// 1,000-clip bench, writing and flushing it cost 100-200 ms that no
    /// client waiting for packages should wait for.
    pub fn write_sidecar<'a>(
        &self,
        number: u64,
        parts: impl Iterator<Item = &'a SidecarPart> + Clone,
        max_mb: Option<f64>,
    ) -> Result<(), GenerationError> {
        let dir = self.dir_of(number);
        let (tmp, path) = (dir.join(".report-sidecar.json.tmp"), dir.join(SIDECAR_FILE));
        let f = std::fs::File::create(&tmp).map_err(io_err(&tmp))?;
        let mut w = io::BufWriter::with_capacity(1 << 20, f);
        crate::sidecar::write(&mut w, parts, max_mb).map_err(io_err(&tmp))?;
        let f = w.into_inner().map_err(|e| io_err(&tmp)(e.into_error()))?;
        f.sync_all().map_err(io_err(&tmp))?;
        std::fs::rename(&tmp, &path).map_err(io_err(&path))?;
        sync_dir(&dir);
        Ok(())
    }

    /// Whether published generation `number` has its sidecar (a server
    /// killed between announcing it and writing the sidecar left none).
    pub fn has_sidecar(&self, number: u64) -> bool {
        self.dir_of(number).join(SIDECAR_FILE).is_file()
    }

    /// Make `OUT/report-sidecar.json`, `OUT/report.json` and
    /// `OUT/manifest.json` those of generation `number` (the files a
    /// `ludus-anim cook` of the whole project would leave, which the
    /// dashboard and scripts read), in the cook's publish order (sidecar,
    /// report, manifest last) under `OUT/.lock`, so a reader holding the
    /// lock sees one generation's three. Each is a hard link to the
    /// immutable generation file (a copy where links are refused), renamed
    /// into place: no byte is re-serialized or re-written. A generation
    /// without a sidecar removes `OUT/report-sidecar.json` first (it would
    /// describe another cook).
    pub fn mirror(&self, number: u64) -> Result<(), GenerationError> {
        let lock_path = self.out.join(LOCK_FILE);
        let _lock = filelock::lock(&lock_path, MIRROR_LOCK_WAIT).map_err(io_err(&lock_path))?;
        let dir = self.dir_of(number);
        let tmp = self.out.join(".tmp");
        std::fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
        for name in [SIDECAR_FILE, "report.json", "manifest.json"] {
            let (from, to) = (dir.join(name), self.out.join(name));
            if !from.exists() {
                match std::fs::remove_file(&to) {
                    Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(io_err(&to)(e)),
                    _ => continue,
                }
            }
            let staged = tmp.join(format!("mirror-{}-{name}", std::process::id()));
            let _ = std::fs::remove_file(&staged);
            if std::fs::hard_link(&from, &staged).is_err() {
                std::fs::copy(&from, &staged).map_err(io_err(&staged))?;
            }
            std::fs::rename(&staged, &to).map_err(io_err(&to))?;
        }
        sync_dir(&self.out);
        Ok(())
    }

    fn dir_of(&self, number: u64) -> PathBuf {
        self.out.join(DIR).join(number.to_string())
    }

    /// Where a package file of a generation lives (`rel` as the manifest
    /// records it: `packages/<name>`).
    pub fn package_path(&self, rel: &str) -> PathBuf {
        self.out.join(rel)
    }

    /// The number of the next generation after `current`.
    pub fn next_number(&self, current: Option<u64>) -> u64 {
        current.unwrap_or(0).max(self.highest) + 1
    }

    /// Write generation `g` (`report`: its `report.json` bytes) completely,
    /// then point `current` at it. Returns the bytes of its `report.json`
    /// and `manifest.json` as written. Its sidecar follows
    /// ([`Generations::write_sidecar`]), and [`Generations::sync_current`]
    /// once it is announced.
    ///
    /// Durability in two rounds of flushes instead of six in a row: the
    /// generation's files and the new pointer's temp file are flushed
    /// together (in parallel: a journaling file system commits them in one
    /// transaction), then the renamed directory's entry; only then is
    /// `current` renamed over. A `kill -9` at any point leaves `current`
    /// naming a complete generation (renames are atomic), and so does a
    /// power loss (what `current` names was flushed before it was renamed).
    pub fn publish(
        &mut self,
        g: &GenerationFiles,
        report: Vec<u8>,
    ) -> Result<Written, GenerationError> {
        let base = self.out.join(DIR);
        let tmp = base.join(format!(".tmp-{}-{}", g.number, std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
        let manifest = to_json(&g.manifest);
        let stale = to_json(&StaleFile {
            stale: g.stale.clone(),
        });
        let cur = self.out.join(CURRENT);
        let cur_tmp = self
            .out
            .join(format!(".{CURRENT}.tmp-{}", std::process::id()));
        let number = format!("{}\n", g.number);
        let files: [(PathBuf, &[u8]); 4] = [
            (tmp.join("manifest.json"), &manifest),
            (tmp.join("report.json"), &report),
            (tmp.join("stale.json"), &stale),
            (cur_tmp.clone(), number.as_bytes()),
        ];
        let written: Vec<Result<(), GenerationError>> = std::thread::scope(|s| {
            let handles: Vec<_> = files
                .iter()
                .map(|(p, b)| s.spawn(move || write_synced(p, b)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|_| Err(panicked(&tmp))))
                .collect()
        });
        written.into_iter().collect::<Result<Vec<()>, _>>()?;
        let dir = self.dir_of(g.number);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::rename(&tmp, &dir).map_err(io_err(&dir))?;
        sync_dir(&base);
        std::fs::rename(&cur_tmp, &cur).map_err(io_err(&cur))?;
        self.highest = self.highest.max(g.number);
        self.named.insert(g.number, packages_of(&g.manifest));
        Ok(Written { report, manifest })
    }

    /// Flush the output directory's entry for `current` (after the
    /// generation was announced: until then a power loss keeps the
    /// previous, complete, generation current, and its number is not
    /// reused since the new generation's directory was flushed).
    pub fn sync_current(&self) {
        sync_dir(&self.out);
    }
}

/// One file of generation `number` (`manifest.json`, `report.json`,
/// `stale.json`); `None` when it is not on disk.
pub fn file_of(out: &Path, number: u64, file: &str) -> Option<PathBuf> {
    let p = out.join(DIR).join(number.to_string()).join(file);
    p.is_file().then_some(p)
}

fn packages_of(m: &PackageManifest) -> PackageIndex {
    m.assets
        .iter()
        .map(|a| (a.package_hash.clone(), a.package.clone()))
        .collect()
}

fn read_json<T: serde::de::DeserializeOwned>(p: &Path) -> Result<T, GenerationError> {
    let bytes = std::fs::read(p).map_err(io_err(p))?;
    serde_json::from_slice(&bytes).map_err(|e| GenerationError::Corrupt {
        path: p.display().to_string(),
        message: e.to_string(),
    })
}

pub fn to_json<T: Serialize>(v: &T) -> Vec<u8> {
    // The report types serialize to JSON infallibly (string keys, no
    // non-finite floats reach them: the cooker writes them the same way).
    serde_json::to_vec_pretty(v).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}").into_bytes())
}

fn panicked(p: &Path) -> GenerationError {
    GenerationError::Corrupt {
        path: p.display().to_string(),
        message: "a writer thread panicked".into(),
    }
}

fn write_synced(p: &Path, bytes: &[u8]) -> Result<(), GenerationError> {
    let mut f = std::fs::File::create(p).map_err(io_err(p))?;
    f.write_all(bytes).map_err(io_err(p))?;
    f.sync_all().map_err(io_err(p))
}

/// Flush a directory's entries (the renames) to disk; best effort.
fn sync_dir(p: &Path) {
    if let Ok(d) = std::fs::File::open(p) {
        let _ = d.sync_all();
    }
}

/// The cook's [`Sink`] in the server: packages go to the shared,
/// content-named `OUT/packages/` (atomically, through `OUT/.tmp/`); the
/// cook's `manifest.json` and `report-sidecar.json` are kept in memory,
/// since a generation's files are assembled by the server from every
/// asset's latest state (a cook of a few assets describes only those).
pub struct PackageSink {
    out: OutputDir,
    manifest: Mutex<Option<Vec<u8>>>,
    sidecar: Mutex<Vec<NamedPart>>,
}

impl PackageSink {
    pub fn new(out: &Path) -> io::Result<PackageSink> {
        Ok(PackageSink {
            out: OutputDir::prepare(out)?,
            manifest: Mutex::new(None),
            sidecar: Mutex::new(Vec::new()),
        })
    }

    /// The manifest the cook wrote.
    pub fn take_manifest(&self) -> Option<PackageManifest> {
        let bytes = self.manifest.lock().ok()?.take()?;
        serde_json::from_slice(&bytes).ok()
    }

    /// The sidecar parts the cook handed over, one per asset (none when
    /// the project writes no sidecar).
    pub fn take_sidecar_parts(&self) -> Vec<NamedPart> {
        self.sidecar
            .lock()
            .map(|mut s| std::mem::take(&mut *s))
            .unwrap_or_default()
    }
}

impl Sink for PackageSink {
    fn write(&self, rel: &str, bytes: &[u8]) -> io::Result<()> {
        match rel {
            "manifest.json" => {
                if let Ok(mut m) = self.manifest.lock() {
                    *m = Some(bytes.to_vec());
                }
                Ok(())
            }
            "report.json" | SIDECAR_FILE => Ok(()),
            _ => self.out.write(rel, bytes),
        }
    }
    fn describe(&self, rel: &str) -> String {
        self.out.path(rel).display().to_string()
    }
    /// The packages are in place already (unreferenced until the server
    /// publishes a generation naming them); the manifest is kept for the
    /// generation, the report dropped (the server assembles its own from
    /// every asset's state, and the sidecar from the records
    /// [`Sink::take_sidecar`] kept).
    fn publish(&self, index: &[(&str, &[u8])]) -> Result<(), PublishError> {
        for (rel, bytes) in index {
            self.write(rel, bytes)
                .map_err(|source| PublishError::Stage {
                    path: self.describe(rel),
                    source,
                })?;
        }
        Ok(())
    }
    fn take_sidecar(&self, parts: Vec<NamedPart>) -> Option<Vec<NamedPart>> {
        if let Ok(mut s) = self.sidecar.lock() {
            *s = parts;
        }
        None
    }
}
