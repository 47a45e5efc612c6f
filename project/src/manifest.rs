//! The project manifest, `ludus-anim.toml`: which sources a project cooks
//! and with what settings, per asset and per clip. Schema:
//! `schemas/manifest.schema.json`; unknown keys are rejected with a
//! suggestion, so a typo never silently falls back to a default.
//!
//! Precedence, most specific first: clip settings, asset settings, the
//! command line, the `[project]` defaults, built-in defaults.

use crate::clip_semantics::{ContactWindow, EventChannel, SyncGroupEntry};
use crate::curve_schema::{describe_invalid, CurveRule};
use crate::keys::{KeyInput, KeyWriter};
use crate::settings::{AdditiveReference, LoopPolicy, MarkerSpec, RootMotionSettings};
use crate::sockets::SocketSpec;
use ludus_anim_model::limits::LimitOverrides;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "ludus-anim.toml";

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[serde(default)]
    pub project: ProjectSettings,
    /// `[[asset]]` entries, cooked in order.
    #[serde(default, rename = "asset")]
    pub assets: Vec<AssetEntry>,
    /// `[report]`: the dashboard sidecar and the regression rules of
    /// `ludus-anim report --fail-on-regression`.
    #[serde(default)]
    pub report: ludus_anim_report::rules::ReportConfig,
    /// `[[sync_group]]`: clips synchronized by named contact markers.
    #[serde(default, rename = "sync_group")]
    pub sync_groups: Vec<SyncGroupEntry>,
    /// `[[event_channel]]`: control or visual, by event name or prefix.
    #[serde(default, rename = "event_channel")]
    pub event_channels: Vec<EventChannel>,
    /// `[[skeleton]]`: shared skeletons, each cooked once into its own
    /// package; assets naming one are bound to it.
    #[serde(default, rename = "skeleton")]
    pub skeletons: Vec<SkeletonEntry>,
}

/// A shared skeleton: a rig file, or the skeleton of one of the project's
/// assets (`asset`, that asset's source file). Its `name` is the
/// skeleton's authoring identity (declared, stable across re-exports);
/// its compatibility identity is the cooked skeleton's hash.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SkeletonEntry {
    pub name: String,
    /// The rig file (relative to the manifest).
    pub source: Option<String>,
    /// Or: the source file of an `[[asset]]` whose skeleton this is.
    pub asset: Option<String>,
    /// Sockets on the skeleton's joints (`crate::sockets`).
    #[serde(default)]
    pub sockets: Vec<SocketSpec>,
    /// The skeleton's masks and LOD plan (`schemas/joint-sets.md`),
    /// relative to the manifest; reaches every package on the skeleton.
    pub joint_sets: Option<String>,
}

impl SkeletonEntry {
    /// The file the skeleton is read from.
    pub fn file(&self) -> &str {
        self.source
            .as_deref()
            .or(self.asset.as_deref())
            .unwrap_or("")
    }
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ProjectSettings {
    /// Output directory (relative to the manifest).
    pub output: Option<String>,
    /// Stage cache directory (relative to the manifest).
    pub cache: Option<String>,
    /// Default quality profile: a bundled name or a .toml path.
    pub profile: Option<String>,
    /// Resource limits for every asset (`[project.limits]`), over the
    /// defaults of `docs/limits.md`; an asset's own `limits` win.
    #[serde(default)]
    pub limits: LimitOverrides,
    /// The build farm's shared remote cache (`docs/remote-cache.md`);
    /// `--remote-cache*` flags and `LUDUS_ANIM_REMOTE_CACHE*` variables
    /// override it field by field.
    pub remote_cache: Option<RemoteCacheEntry>,
    /// Glob patterns (relative to the manifest) of files that `sources`
    /// globs never match, on top of [`is_editor_leftover`].
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Curve schemas for every asset (`[[project.curve_schema]]`); an
    /// asset's own rules win (`crate::curve_schema`).
    #[serde(default)]
    pub curve_schema: Vec<CurveRule>,
}

/// Whether a file name is one editors and exporters leave behind while
/// saving (hidden files, backups, temp and swap files, Emacs autosaves,
/// Vim's `4913` probe). A glob never matches one; a source named exactly
/// in the manifest is still cooked.
pub fn is_editor_leftover(name: &str) -> bool {
    name.starts_with('.')
        || name.starts_with('~')
        || name.ends_with('~')
        || name.ends_with(".tmp")
        || name.ends_with(".swp")
        || (name.len() > 1 && name.starts_with('#') && name.ends_with('#'))
        || name == "4913"
}

/// `[project] remote_cache = { url, mode, auth }`.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RemoteCacheEntry {
    /// Base URL of a Bazel HTTP remote cache, e.g. `http://cache:8080/ludus`.
    pub url: String,
    /// `read` (default) or `read-write`.
    pub mode: Option<RemoteMode>,
    /// `bearer-file:PATH`, `bearer-env:NAME`, `basic-file:PATH` or
    /// `basic-env:NAME` (a relative PATH is relative to the manifest).
    pub auth: Option<String>,
    /// Entry signing secret: `file:PATH` or `env:NAME` (a relative PATH is
    /// relative to the manifest). Uploads are signed with it and only
    /// entries signed with it are used (`docs/remote-cache.md`).
    pub signing: Option<String>,
}

/// Whether a cook may write to the remote cache (artists read, CI writes).
#[derive(Clone, Copy, Debug, Default, Deserialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum RemoteMode {
    #[default]
    Read,
    ReadWrite,
}

/// A source length unit a person can declare (manifest `units`, `--units`).
#[derive(Clone, Copy, Debug, Deserialize, PartialEq, Eq, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum Units {
    M,
    /// Decimetres (MakeHuman's BVH exports).
    Dm,
    Cm,
    Mm,
    In,
    /// 1/0.45 inch: CMU motion capture as converted to BVH by cgspeed.
    Cmu,
}

impl Units {
    pub fn meters(self) -> f32 {
        match self {
            Units::M => 1.0,
            Units::Dm => 0.1,
            Units::Cm => 0.01,
            Units::Mm => 0.001,
            Units::In => 0.0254,
            Units::Cmu => ludus_anim_model::units::CMU_CGSPEED_M,
        }
    }
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct AssetEntry {
    /// Files or glob patterns (relative to the manifest), e.g.
    /// `"anim/**/*.fbx"`. Each match is one asset with these settings.
    pub sources: Vec<String>,
    pub profile: Option<String>,
    pub units: Option<Units>,
    pub keep_unused_leaves: Option<bool>,
    /// Custom animated float properties (FBX) to keep as scalar curves:
    /// `prop` on every node, or `Node.prop`.
    #[serde(default)]
    pub curves: Vec<String>,
    /// Retarget profile (TOML, `schemas/retarget.md`; relative to the
    /// manifest) that bakes this asset's clips onto the profile's target
    /// skeleton. Never applied implicitly.
    pub retarget: Option<String>,
    /// The `[[skeleton]]` (by name) these assets' clips are bound to, by
    /// joint name; their packages then carry that skeleton.
    pub skeleton: Option<String>,
    /// The named skeleton's file, relative to the project root (set by
    /// [`Manifest::jobs`]).
    #[serde(skip)]
    pub skeleton_source: Option<String>,
    /// This job cooks the named skeleton's own package (no clips), set by
    /// [`Manifest::jobs`] for each `[[skeleton]]`.
    #[serde(skip)]
    pub skeleton_package: bool,
    /// Sockets on this asset's skeleton (`crate::sockets`); in the job of
    /// an asset bound to a `[[skeleton]]`, that skeleton's (set by
    /// [`Manifest::jobs`]).
    #[serde(default)]
    pub sockets: Vec<SocketSpec>,
    /// Meshless assets: the radius (meters) around each joint that motion
    /// bounds hold (default: joint positions only).
    pub joint_radius_m: Option<f32>,
    /// This asset's masks and LOD plan file (`schemas/joint-sets.md`),
    /// relative to the manifest (an asset bound to a `[[skeleton]]` takes
    /// the skeleton's).
    pub joint_sets: Option<String>,
    /// The joint sets file read (set by [`Manifest::jobs`]).
    #[serde(skip)]
    pub joint_sets_spec: Option<std::sync::Arc<crate::joint_sets::JointSets>>,
    /// Per-clip settings, keyed by clip name as imported (or a new name
    /// with `from` set, to cut a range out of another clip).
    #[serde(default)]
    pub clips: BTreeMap<String, ClipEntry>,
    /// Resource limits of these assets, over `[project.limits]` (in an
    /// [`AssetJob`], the two already combined).
    #[serde(default)]
    pub limits: LimitOverrides,
    /// Curve schemas of these assets (`[[asset.curve_schema]]`). In an
    /// [`AssetJob`], followed by the project's with
    /// [`AssetEntry::project_curve_rules`] counting them.
    #[serde(default)]
    pub curve_schema: Vec<CurveRule>,
    /// How many rules at the end of `curve_schema` are the project's
    /// (set by [`Manifest::jobs`]).
    #[serde(skip)]
    pub project_curve_rules: usize,
    /// The manifest's sync groups and event channels (not written in an
    /// asset entry: [`Manifest::jobs`] copies them into each job, so they
    /// reach every key the asset's clips are cooked under).
    #[serde(skip)]
    pub sync_groups: Vec<SyncGroupEntry>,
    #[serde(skip)]
    pub event_channels: Vec<EventChannel>,
}

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ClipEntry {
    pub profile: Option<String>,
    #[serde(rename = "loop")]
    pub loop_mode: Option<LoopPolicy>,
    /// For looping clips: drop a last sample equal to the first.
    pub drop_duplicate_end: Option<bool>,
    /// Cut this clip out of clip `from` (seconds, start and end).
    pub from: Option<String>,
    pub range: Option<[f32; 2]>,
    pub root_motion: Option<RootMotionSettings>,
    pub additive: Option<AdditiveReference>,
    #[serde(default)]
    pub markers: Vec<MarkerSpec>,
    /// Contact windows (foot plants), cooked as markers.
    #[serde(default)]
    pub contacts: Vec<ContactWindow>,
    /// Skip this clip.
    #[serde(default)]
    pub skip: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("{path}: cannot read: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: {message}")]
    Parse { path: String, message: String },
    #[error("{path}: asset {index}: {message}")]
    Invalid {
        path: String,
        index: usize,
        message: String,
    },
}

/// One asset to cook, with the manifest settings that apply to it.
#[derive(Clone, Debug, PartialEq)]
pub struct AssetJob {
    pub path: PathBuf,
    pub settings: AssetEntry,
}

impl Manifest {
    pub fn load(path: &Path) -> Result<Manifest, ManifestError> {
        let text = std::fs::read_to_string(path).map_err(|source| ManifestError::Io {
            path: path.display().to_string(),
            source,
        })?;
        Manifest::parse(&text, &path.display().to_string())
    }

    pub fn parse(text: &str, path: &str) -> Result<Manifest, ManifestError> {
        let m: Manifest = toml::from_str(text).map_err(|e| ManifestError::Parse {
            path: path.to_string(),
            message: ludus_anim_model::suggest::with_suggestion(&e.to_string()),
        })?;
        m.validate(path)?;
        Ok(m)
    }

    fn validate(&self, path: &str) -> Result<(), ManifestError> {
        let semantics = self.sync_groups.iter().filter_map(SyncGroupEntry::invalid);
        let channels = self.event_channels.iter().filter_map(EventChannel::invalid);
        if let Some(message) = semantics.chain(channels).next() {
            return Err(ManifestError::Parse {
                path: path.to_string(),
                message,
            });
        }
        if let Some(field) = self.project.limits.invalid_field() {
            return Err(ManifestError::Parse {
                path: path.to_string(),
                message: format!("[project.limits]: {field} must be a number above zero"),
            });
        }
        for (j, r) in self.project.curve_schema.iter().enumerate() {
            if let Some(message) = describe_invalid(&format!("[[project.curve_schema]] {j}"), r) {
                return Err(ManifestError::Parse {
                    path: path.to_string(),
                    message,
                });
            }
        }
        for (i, sk) in self.skeletons.iter().enumerate() {
            let bad = |message: String| ManifestError::Parse {
                path: path.to_string(),
                message: format!("[[skeleton]] {i}: {message}"),
            };
            if sk.name.is_empty() || sk.name.contains(['/', '\\']) {
                return Err(bad("`name` must be a non-empty name without '/'".into()));
            }
            if sk.source.is_some() == sk.asset.is_some() {
                return Err(bad("give exactly one of `source` and `asset`".into()));
            }
            if let Some(m) = SocketSpec::invalid(&sk.sockets, "") {
                return Err(bad(m.trim_start().to_string()));
            }
            if self.skeletons[..i].iter().any(|o| o.name == sk.name) {
                return Err(bad(format!("skeleton '{}' is declared twice", sk.name)));
            }
            if let Some(a) = &sk.asset {
                if !self.assets.iter().any(|e| e.sources.iter().any(|s| s == a)) {
                    return Err(bad(format!("`asset` '{a}' is no [[asset]] source")));
                }
            }
        }
        for (i, a) in self.assets.iter().enumerate() {
            let bad = |message: String| ManifestError::Invalid {
                path: path.to_string(),
                index: i,
                message,
            };
            if let Some(field) = a.limits.invalid_field() {
                return Err(bad(format!("limits: {field} must be a number above zero")));
            }
            for (j, r) in a.curve_schema.iter().enumerate() {
                if let Some(m) = describe_invalid(&format!("curve_schema[{j}]"), r) {
                    return Err(bad(m));
                }
            }
            if a.sources.is_empty() {
                return Err(bad(
                    "`sources` must name at least one file or pattern".into()
                ));
            }
            if let Some(name) = &a.skeleton {
                if !self.skeletons.iter().any(|s| &s.name == name) {
                    return Err(bad(format!("`skeleton` '{name}' is no [[skeleton]] name")));
                }
                if a.retarget.is_some() {
                    return Err(bad(
                        "`skeleton` and `retarget` cannot both be set (a retarget bakes onto its own target)".into(),
                    ));
                }
                if !a.sockets.is_empty() {
                    return Err(bad(format!(
                        "`sockets` of an asset bound to skeleton '{name}' go in that [[skeleton]] (its package carries them)"
                    )));
                }
            }
            if a.joint_radius_m
                .is_some_and(|r| !(r.is_finite() && r >= 0.0))
            {
                return Err(bad("`joint_radius_m` must be a number >= 0".into()));
            }
            if let Some(m) = SocketSpec::invalid(&a.sockets, "") {
                return Err(bad(m.trim_start().to_string()));
            }
            for (name, c) in &a.clips {
                if let Some([s, e]) = c.range {
                    if !(s.is_finite() && e.is_finite() && s >= 0.0 && e >= s) {
                        return Err(bad(format!(
                            "clip '{name}': range [{s}, {e}] must satisfy 0 <= start <= end"
                        )));
                    }
                }
                if c.from.is_some() != c.range.is_some() {
                    return Err(bad(format!(
                        "clip '{name}': `from` and `range` go together"
                    )));
                }
                for m in &c.markers {
                    if !(m.time_s.is_finite() && m.time_s >= 0.0) {
                        return Err(bad(format!(
                            "clip '{name}': marker '{}' time {} is invalid",
                            m.name, m.time_s
                        )));
                    }
                }
            }
        }
        Ok(())
    }

    /// Expand every asset's sources (globs relative to `root`) into jobs,
    /// in manifest order, each file once (its first matching entry wins).
    pub fn jobs(&self, root: &Path) -> Result<Vec<AssetJob>, ManifestError> {
        let excluded = self.excluded(root)?;
        let mut jobs: Vec<AssetJob> = Vec::new();
        // Each shared skeleton's own package first.
        for (i, sk) in self.skeletons.iter().enumerate() {
            let path = root.join(sk.file());
            if !path.is_file() {
                return Err(ManifestError::Parse {
                    path: root.join(FILE_NAME).display().to_string(),
                    message: format!("[[skeleton]] {i}: '{}' is not a file", sk.file()),
                });
            }
            let settings = AssetEntry {
                sources: vec![sk.file().to_string()],
                skeleton: Some(sk.name.clone()),
                skeleton_package: true,
                sockets: sk.sockets.clone(),
                limits: self.project.limits.clone(),
                joint_sets_spec: read_joint_sets(root, sk.joint_sets.as_deref())?,
                ..AssetEntry::default()
            };
            jobs.push(AssetJob { path, settings });
        }
        for (i, a) in self.assets.iter().enumerate() {
            for pattern in &a.sources {
                let full = root.join(pattern);
                let full = full.to_string_lossy();
                let paths = glob::glob(&full).map_err(|e| ManifestError::Invalid {
                    path: root.join(FILE_NAME).display().to_string(),
                    index: i,
                    message: format!("bad pattern '{pattern}': {e}"),
                })?;
                let wildcard = pattern.contains(['*', '?', '[']);
                let mut matched: Vec<PathBuf> = paths
                    .filter_map(Result::ok)
                    .filter(|p| p.is_file())
                    .filter(|p| !wildcard || !skipped(p, root, &excluded))
                    .collect();
                matched.sort();
                if matched.is_empty() {
                    return Err(ManifestError::Invalid {
                        path: root.join(FILE_NAME).display().to_string(),
                        index: i,
                        message: format!("'{pattern}' matches no file"),
                    });
                }
                for p in matched {
                    if !jobs
                        .iter()
                        .any(|j| j.path == p && !j.settings.skeleton_package)
                    {
                        let mut settings = a.clone();
                        let shared = a
                            .skeleton
                            .as_ref()
                            .and_then(|n| self.skeletons.iter().find(|s| &s.name == n));
                        settings.skeleton_source = shared.map(|sk| sk.file().to_string());
                        if let Some(sk) = shared {
                            settings.sockets = sk.sockets.clone();
                        }
                        settings.limits = self.project.limits.then(&a.limits);
                        self.layer_curve_rules(&mut settings, i);
                        settings.sync_groups = self.sync_groups.clone();
                        settings.event_channels = self.event_channels.clone();
                        settings.joint_sets_spec = self.joint_sets_of(root, a)?;
                        jobs.push(AssetJob { path: p, settings });
                    }
                }
            }
        }
        Ok(jobs)
    }

    /// The job `jobs` would make for the file `rel` (relative to `root`),
    /// without listing the project: the first entry with a pattern matching
    /// it (a wildcard match skipping excluded files and editor leftovers,
    /// as `jobs` does). A hermetic per-asset cook sees only its declared
    /// files, where `jobs` would find other assets' sources missing.
    pub fn job_for(&self, root: &Path, rel: &Path) -> Result<Option<AssetJob>, ManifestError> {
        let excluded = self.excluded(root)?;
        let file = crate::paths::normalize(rel);
        let options = glob::MatchOptions {
            require_literal_separator: true,
            ..Default::default()
        };
        for (i, a) in self.assets.iter().enumerate() {
            for pattern in &a.sources {
                let norm = crate::paths::normalize(Path::new(pattern));
                let p = glob::Pattern::new(&norm.to_string_lossy()).map_err(|e| {
                    ManifestError::Invalid {
                        path: root.join(FILE_NAME).display().to_string(),
                        index: i,
                        message: format!("bad pattern '{pattern}': {e}"),
                    }
                })?;
                let wildcard = pattern.contains(['*', '?', '[']);
                if p.matches_path_with(&file, options)
                    && !(wildcard && skipped(&root.join(&file), root, &excluded))
                {
                    let mut settings = a.clone();
                    settings.limits = self.project.limits.then(&a.limits);
                    self.layer_curve_rules(&mut settings, i);
                    settings.sync_groups = self.sync_groups.clone();
                    settings.event_channels = self.event_channels.clone();
                    settings.joint_sets_spec = self.joint_sets_of(root, a)?;
                    return Ok(Some(AssetJob {
                        path: root.join(&file),
                        settings,
                    }));
                }
            }
        }
        Ok(None)
    }
}

impl Manifest {
    /// The `[project] exclude` patterns (relative to the project root).
    fn excluded(&self, root: &Path) -> Result<Vec<glob::Pattern>, ManifestError> {
        self.project
            .exclude
            .iter()
            .map(|p| {
                glob::Pattern::new(p.trim_start_matches("./")).map_err(|e| ManifestError::Parse {
                    path: root.join(FILE_NAME).display().to_string(),
                    message: format!("[project] exclude: bad pattern '{p}': {e}"),
                })
            })
            .collect()
    }
}

impl Manifest {
    /// The joint sets file an asset's packages carry: its own, or its
    /// `[[skeleton]]`'s.
    fn joint_sets_of(
        &self,
        root: &Path,
        a: &AssetEntry,
    ) -> Result<Option<std::sync::Arc<crate::joint_sets::JointSets>>, ManifestError> {
        let of_skeleton = a
            .skeleton
            .as_ref()
            .and_then(|n| self.skeletons.iter().find(|s| &s.name == n))
            .and_then(|s| s.joint_sets.as_deref());
        read_joint_sets(root, a.joint_sets.as_deref().or(of_skeleton))
    }
}

/// Read and check a joint sets file named in the manifest (relative to
/// `root`, never outside it).
fn read_joint_sets(
    root: &Path,
    rel: Option<&str>,
) -> Result<Option<std::sync::Arc<crate::joint_sets::JointSets>>, ManifestError> {
    let Some(rel) = rel else { return Ok(None) };
    let outside = Path::new(rel).is_absolute()
        || Path::new(rel)
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir));
    if outside {
        return Err(ManifestError::Parse {
            path: root.join(FILE_NAME).display().to_string(),
            message: format!("joint_sets '{rel}' must be a path inside the project"),
        });
    }
    let path = root.join(rel);
    let text = std::fs::read_to_string(&path).map_err(|source| ManifestError::Io {
        path: path.display().to_string(),
        source,
    })?;
    crate::joint_sets::JointSets::parse(&text, rel)
        .map(|s| Some(std::sync::Arc::new(s)))
        .map_err(|e| ManifestError::Parse {
            path: e.file,
            message: e.message,
        })
}

impl Manifest {
    /// The asset's curve rules, then the project's, each with its origin.
    fn layer_curve_rules(&self, settings: &mut AssetEntry, index: usize) {
        for (j, r) in settings.curve_schema.iter_mut().enumerate() {
            r.origin = format!("{FILE_NAME} [[asset]] {index} curve_schema[{j}]");
        }
        settings.project_curve_rules = self.project.curve_schema.len();
        for (j, r) in self.project.curve_schema.iter().enumerate() {
            let mut r = r.clone();
            r.origin = format!("{FILE_NAME} [[project.curve_schema]] {j}");
            settings.curve_schema.push(r);
        }
    }
}

impl AssetEntry {
    /// The asset's own curve rules and the project's, as layers.
    pub fn curve_layers(&self) -> (&[CurveRule], &[CurveRule]) {
        let own = self
            .curve_schema
            .len()
            .saturating_sub(self.project_curve_rules);
        self.curve_schema.split_at(own)
    }
}

/// Whether a glob match is left out: an editor leftover, or excluded
/// (`excluded` is relative to `root`).
fn skipped(path: &Path, root: &Path, excluded: &[glob::Pattern]) -> bool {
    let leftover = path
        .file_name()
        .and_then(|n| n.to_str())
        .is_none_or(is_editor_leftover);
    let rel = path.strip_prefix(root).unwrap_or(path);
    let rel = rel.strip_prefix(".").unwrap_or(rel);
    leftover || excluded.iter().any(|e| e.matches_path(rel))
}

/// What of an asset's settings reaches its package (its `sources`
/// patterns do not: they select files, they do not change one; nor do its
/// `limits`: they decide whether work runs, never what it produces).
impl KeyInput for AssetEntry {
    fn feed(&self, k: &mut KeyWriter) {
        let AssetEntry {
            sources: _,
            limits: _,
            profile,
            units,
            keep_unused_leaves,
            curves,
            retarget,
            skeleton,
            skeleton_source,
            skeleton_package,
            sockets,
            joint_radius_m,
            joint_sets: _,
            joint_sets_spec,
            clips,
            curve_schema,
            project_curve_rules,
            sync_groups,
            event_channels,
        } = self;
        // Only when declared: keys of assets without sockets are unchanged.
        if !sockets.is_empty() {
            k.put(sockets);
        }
        if let Some(r) = joint_radius_m {
            k.tag("joint_radius_m").put(r);
        }
        k.put(profile)
            .put(&units.map(Units::meters))
            .put(keep_unused_leaves)
            .put(curves)
            .put(retarget)
            .put(skeleton)
            .put(skeleton_source)
            .put(skeleton_package)
            .put(clips)
            .put(curve_schema)
            .put(&(*project_curve_rules as u64))
            .put(sync_groups)
            .put(event_channels);
        // Only when present, so keys of projects without one are unchanged
        // (the file's contents, not its path, decide the package).
        if let Some(spec) = joint_sets_spec {
            k.tag("joint_sets").put(spec.as_ref());
        }
    }
}

impl KeyInput for ClipEntry {
    fn feed(&self, k: &mut KeyWriter) {
        let ClipEntry {
            profile,
            loop_mode,
            drop_duplicate_end,
            from,
            range,
            root_motion,
            additive,
            markers,
            contacts,
            skip,
        } = self;
        k.put(profile)
            .put(loop_mode)
            .put(drop_duplicate_end)
            .put(from)
            .put(range)
            .put(root_motion)
            .put(additive)
            .put(markers)
            .put(contacts)
            .put(skip);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = r#"
[project]
output = "out"
cache = ".cache"
profile = "standard"

[[asset]]
sources = ["fixtures/*.glb"]
units = "m"

[asset.clips.walk]
loop = "loop"
root_motion = { joint = "Root", policy = "planar" }
markers = [ { name = "foot_l", time_s = 0.1, kind = "sync" } ]

[asset.clips.idle]
profile = "hero"
additive = { reference = "frame", time_s = 0.0 }

[asset.clips.walk_start]
from = "walk"
range = [0.0, 0.6]
"#;

    #[test]
    fn example_parses() {
        let m = Manifest::parse(EXAMPLE, "ludus-anim.toml").unwrap();
        assert_eq!(m.project.profile.as_deref(), Some("standard"));
        let a = &m.assets[0];
        assert_eq!(a.units, Some(Units::M));
        assert_eq!(a.clips["walk"].loop_mode, Some(LoopPolicy::Loop));
        assert_eq!(
            a.clips["idle"].additive,
            Some(AdditiveReference::Frame {
                clip: None,
                time_s: 0.0
            })
        );
        assert_eq!(
            a.clips["walk"].root_motion.as_ref().unwrap().policy,
            ludus_anim_format::package::RootMotionPolicy::Planar
        );
    }

    #[test]
    fn unknown_key_gets_a_suggestion() {
        let e = Manifest::parse(&EXAMPLE.replace("units = \"m\"", "unit = \"m\""), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown field `unit`") && e.contains("did you mean `units`?"),
            "{e}"
        );
        let e = Manifest::parse(
            &EXAMPLE.replace("loop = \"loop\"", "lop = \"loop\""),
            "p.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("did you mean `loop`?"), "{e}");
    }

    #[test]
    fn remote_cache_settings_parse_and_typos_are_caught() {
        let text = EXAMPLE.replace(
            "profile = \"standard\"\n",
            "profile = \"standard\"\nremote_cache = { url = \"http://cache:8080/ludus\", mode = \"read-write\", auth = \"bearer-file:token\" }\n",
        );
        let m = Manifest::parse(&text, "p.toml").unwrap();
        let r = m.project.remote_cache.unwrap();
        assert_eq!(r.url, "http://cache:8080/ludus");
        assert_eq!(r.mode, Some(RemoteMode::ReadWrite));
        assert_eq!(r.auth.as_deref(), Some("bearer-file:token"));
        let e = Manifest::parse(&text.replace("auth =", "auht ="), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("did you mean `auth`?"), "{e}");
        let e = Manifest::parse(&text.replace("\"read-write\"", "\"write\""), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("write") && e.contains("read-write"), "{e}");
    }

    #[test]
    fn invalid_values_are_named() {
        let e = Manifest::parse(
            &EXAMPLE.replace("range = [0.0, 0.6]", "range = [0.6, 0.1]"),
            "p.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("walk_start") && e.contains("range"), "{e}");
        let e = Manifest::parse(
            &EXAMPLE.replace("units = \"m\"", "units = \"furlong\""),
            "p.toml",
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("furlong"), "{e}");
    }

    #[test]
    fn globs_skip_editor_leftovers_and_excluded_files() {
        for name in [
            ".x.bvh",
            "~export1.bvh",
            "a.bvh~",
            "a.tmp",
            ".a.swp",
            "#a.bvh#",
            "4913",
        ] {
            assert!(is_editor_leftover(name), "{name}");
        }
        for name in ["walk.bvh", "a~b.bvh", "#", "49130"] {
            assert!(!is_editor_leftover(name), "{name}");
        }
        let dir = tempfile::tempdir().unwrap();
        for f in ["a.bvh", ".a.bvh", "~a.bvh", "wip_b.bvh"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        let text =
            "[project]\nexclude = [\"wip_*\"]\n[[asset]]\nsources = [\"*.bvh\", \".a.bvh\"]\n";
        let m = Manifest::parse(text, "x").unwrap();
        let names: Vec<String> = m
            .jobs(dir.path())
            .unwrap()
            .iter()
            .map(|j| j.path.file_name().unwrap().to_string_lossy().to_string())
            .collect();
        assert_eq!(names, ["a.bvh", ".a.bvh"], "a source named exactly is kept");
    }

    #[test]
    fn job_for_finds_the_entry_jobs_would_without_listing_the_project() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join("sub")).unwrap();
        for f in ["a.bvh", "~a.bvh", "wip_b.bvh", "sub/c.bvh", "named.fbx"] {
            std::fs::write(dir.path().join(f), "x").unwrap();
        }
        let text = "[project]\nexclude = [\"wip_*\"]\n\
            [[asset]]\nsources = [\"named.fbx\"]\nprofile = \"hero\"\n\
            [[asset]]\nsources = [\"*.bvh\"]\nprofile = \"crowd\"\n\
            [[asset]]\nsources = [\"**/*.bvh\", \"a.bvh\"]\n";
        let m = Manifest::parse(text, "x").unwrap();
        let root = dir.path();
        for job in m.jobs(root).unwrap() {
            let rel = job.path.strip_prefix(root).unwrap();
            let found = m.job_for(root, rel).unwrap().expect("an asset");
            assert_eq!(found.path, job.path);
            assert_eq!(found.settings.profile, job.settings.profile, "{rel:?}");
        }
        for skipped in ["~a.bvh", "wip_b.bvh", "other.glb"] {
            assert!(m.job_for(root, Path::new(skipped)).unwrap().is_none());
        }
        // Only the asset's own file present (a build sandbox): `jobs`
        // fails on the other entries' missing files, `job_for` does not.
        std::fs::remove_file(root.join("named.fbx")).unwrap();
        assert!(m.jobs(root).is_err());
        let walk = m.job_for(root, Path::new("./a.bvh")).unwrap().unwrap();
        assert_eq!(walk.settings.profile.as_deref(), Some("crowd"));
        assert_eq!(walk.path, root.join("a.bvh"));
    }

    #[test]
    fn globs_expand_relative_to_the_manifest() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let m = Manifest::parse(EXAMPLE, "x").unwrap();
        let jobs = m.jobs(&root).unwrap();
        assert!(jobs.iter().any(|j| j.path.ends_with("fixtures/biped.glb")));
        let m = Manifest::parse(&EXAMPLE.replace("fixtures/*.glb", "nothing/*.glb"), "x").unwrap();
        assert!(m
            .jobs(&root)
            .unwrap_err()
            .to_string()
            .contains("matches no file"));
    }

    #[test]
    fn limits_layer_project_then_asset_and_reach_the_jobs() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = EXAMPLE.replace(
            "profile = \"standard\"\n",
            "profile = \"standard\"\nlimits = { max_joints = 20, max_clip_duration_s = 60.0, companion_root = \"project\" }\n",
        );
        let text = text.replacen(
            "units = \"m\"\n",
            "units = \"m\"\nlimits = { max_joints = 30 }\n",
            1,
        );
        let m = Manifest::parse(&text, "x").unwrap();
        let jobs = m.jobs(&root).unwrap();
        let l = jobs[0]
            .settings
            .limits
            .apply(&ludus_anim_model::Limits::default());
        assert_eq!((l.max_joints, l.max_clip_duration_s), (30, 60.0));
        assert_eq!(l.companion_root, ludus_anim_model::CompanionRoot::Project);
        let bad = EXAMPLE.replace(
            "units = \"m\"\n",
            "units = \"m\"\nlimits = { max_joints = 0 }\n",
        );
        let e = Manifest::parse(&bad, "x").unwrap_err().to_string();
        assert!(e.contains("max_joints must be a number above zero"), "{e}");
        let typo = EXAMPLE.replace(
            "units = \"m\"\n",
            "units = \"m\"\nlimits = { max_jionts = 3 }\n",
        );
        assert!(Manifest::parse(&typo, "x").is_err());
    }

    #[test]
    fn curve_schema_layers_reach_the_jobs_and_bad_values_are_located() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let text = EXAMPLE.replace(
            "profile = \"standard\"\n",
            "profile = \"standard\"\ncurve_schema = [ { match = \"*\", composition = \"max\" } ]\n",
        ) + "\n[[asset.curve_schema]]\nmatch = \"blink*\"\ninterpolation = \"step\"\ndefault = 0\nrange = [0, 1]\nclamp = true\ncomposition = \"override\"\n";
        let m = Manifest::parse(&text, "x").unwrap();
        let jobs = m.jobs(&root).unwrap();
        let (own, project) = jobs[0].settings.curve_layers();
        assert_eq!((own.len(), project.len()), (1, 1));
        assert_eq!(own[0].origin, "ludus-anim.toml [[asset]] 0 curve_schema[0]");
        assert_eq!(
            project[0].origin,
            "ludus-anim.toml [[project.curve_schema]] 0"
        );
        let e = Manifest::parse(&text.replace("range = [0, 1]", "range = [1, 0]"), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("p.toml") && e.contains("curve_schema[0]") && e.contains("range"),
            "{e}"
        );
        let e = Manifest::parse(&text.replace("default = 0", "default = 2"), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(e.contains("default = 2 must lie within range"), "{e}");
        let e = Manifest::parse(&text.replace("\"override\"", "\"reduce\""), "p.toml")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("p.toml") && e.contains("reduce") && e.contains("override"),
            "{e}"
        );
    }
}
