//! ACL raw clip importer (`*.acl.sjson`, file format version 5).
//!
//! ACL's raw clip format is a uniformly sampled clip in "simplified JSON":
//! a `clip` header (name, sample count and rate), a `bones` list (name,
//! parent by name, virtual-vertex distance, optional bind transform) and a
//! `tracks` list holding, per bone, one rotation/translation/scale value per
//! sample. It is what ACL's own tools read, so importing it lets the cooker
//! run on exactly the data ACL was measured on (see `shared/anchors/acl.md`).
//!
//! Mapping to the source model:
//! - joints are the bones in file order; the rest pose is the bone's
//!   `bind_*` transform where present, identity otherwise (ACL raw clips
//!   normally store animation only);
//! - one clip, sample `i` at `i / sample_rate`, duration
//!   `(num_samples - 1) / sample_rate`, every array becomes a Linear curve
//!   keyed at every sample (Linear rotation is slerp, which passes through
//!   the samples exactly like any other interpolation would);
//! - a track that omits an array holds identity for that channel (ACL's
//!   reader does the same); a bone without any track keeps its rest pose;
//! - `vertex_distance` becomes [`SourceAsset::joint_shell_distance`].
//!
//! The file declares no units and no axes. Units are assumed centimetres
//! (ACL measures error in the clip's units and its defaults assume cm) and
//! axes +Y up, right-handed; both are recorded as decisions so the report
//! shows them and `--units` can override.
//!
//! Anything malformed is an [`ImportError::Malformed`] whose diagnostic
//! names the line (and the bone where there is one): a raw clip is machine
//! written, so a damaged one should be fixed at the source, not guessed at.

mod parser;

use crate::{CompanionReader, FormatImporter, ImportError, ImportOptions};
use ludus_anim_model::limits::{Limit, LimitExceeded, Limits};
use ludus_anim_model::SourceFormat;
use ludus_anim_model::{
    AxisSystem, Curve, Decision, Diagnostic, Diagnostics, Interpolation, JointTracks, Quat,
    SourceAsset, SourceClip, SourceJoint, SourceSkeleton, Transform, Vec3,
};
use parser::{Member, ParseError, Pos, Value, ValueKind};
use std::collections::BTreeMap;
use std::path::Path;

/// Meters per unit assumed for ACL clips (centimetres).
pub const ASSUMED_UNIT_SCALE_M: f32 = 0.01;

/// The newest file format version this importer was written against.
const FORMAT_VERSION: i64 = 5;

/// Why an SJSON file was rejected. Each kind maps to a stable diagnostic
/// code (see [`SjsonError::code`]).
#[derive(Debug, thiserror::Error)]
enum SjsonError {
    /// The text is not SJSON.
    #[error("{0}")]
    Syntax(#[from] ParseError),
    /// The header declares more than the limits allow.
    #[error("{0}")]
    Limit(Box<LimitExceeded>),
    /// The text is SJSON but not an ACL raw clip we can import.
    #[error("{pos}: {message}")]
    Schema {
        code: &'static str,
        pos: Pos,
        joint: Option<String>,
        message: String,
    },
}

impl SjsonError {
    fn schema(code: &'static str, pos: Pos, message: impl Into<String>) -> Self {
        SjsonError::Schema {
            code,
            pos,
            joint: None,
            message: message.into(),
        }
    }

    fn with_joint(self, name: &str) -> Self {
        match self {
            SjsonError::Schema {
                code, pos, message, ..
            } => SjsonError::Schema {
                code,
                pos,
                joint: Some(name.to_string()),
                message,
            },
            other => other,
        }
    }

    /// Stable diagnostic code.
    fn code(&self) -> &'static str {
        match self {
            SjsonError::Syntax(_) => "sjson_syntax",
            SjsonError::Limit(_) => ludus_anim_model::limits::LIMIT_CODE,
            SjsonError::Schema { code, .. } => code,
        }
    }

    fn into_import_error(self, path: &Path) -> ImportError {
        if let SjsonError::Limit(e) = self {
            return ImportError::limit(path, *e);
        }
        let mut d =
            Diagnostic::error(self.code(), self.to_string()).file(path.display().to_string());
        if let SjsonError::Schema { joint: Some(j), .. } = &self {
            d = d.joint(j.clone());
        }
        ImportError::Malformed(Box::new(d))
    }
}

/// Codes of schema errors (the diagnostic `code` field).
mod code {
    /// A key is missing, has the wrong type, or a value is out of range.
    pub const SCHEMA: &str = "sjson_schema";
    /// A sample array does not have `clip.num_samples` entries.
    pub const SAMPLE_COUNT: &str = "sample_count_mismatch";
    /// `parent` names no bone of the file.
    pub const UNKNOWN_PARENT: &str = "unknown_parent";
    /// A track names no bone of the file.
    pub const UNKNOWN_BONE: &str = "unknown_bone";
    /// Two bones share a name (parents and tracks refer to bones by name).
    pub const DUPLICATE_BONE: &str = "duplicate_bone";
    /// Two tracks animate the same bone.
    pub const DUPLICATE_TRACK: &str = "duplicate_track";
    /// A file format version or content kind this importer does not read.
    pub const UNSUPPORTED: &str = "unsupported_sjson";
}

type Result<T, E = SjsonError> = std::result::Result<T, E>;

/// The ACL raw clips (`.acl.sjson`) importer.
pub const SJSON: FormatImporter = FormatImporter {
    formats: &[SourceFormat::AclSjson],
    import: import_limited,
};

/// Import an ACL raw clip. `options` has nothing to choose here: a raw clip
/// lists exactly the bones it animates, so there are no unused leaves. The
/// header's sample count and duration are checked against `limits` before
/// any sample is allocated.
// The signature is the one every importer shares (see lib.rs); the size of
// `ImportError` is lib.rs's choice.
fn import_limited(
    path: &Path,
    bytes: &[u8],
    _options: &ImportOptions,
    _companions: &dyn CompanionReader,
    limits: &Limits,
) -> Result<SourceAsset, ImportError> {
    let text = decode_utf8(bytes).map_err(|e| e.into_import_error(path))?;
    let doc =
        parser::parse_document(text).map_err(|e| SjsonError::from(e).into_import_error(path))?;
    convert(path, &doc, limits).map_err(|e| e.into_import_error(path))
}

/// The input as text; invalid UTF-8 is a syntax error at its line.
fn decode_utf8(bytes: &[u8]) -> Result<&str> {
    std::str::from_utf8(bytes).map_err(|e| {
        let ok = bytes.get(..e.valid_up_to()).unwrap_or_default();
        let line = ok.iter().filter(|&&b| b == b'\n').count() + 1;
        let col = ok.iter().rev().take_while(|&&b| b != b'\n').count() + 1;
        SjsonError::Syntax(ParseError {
            pos: Pos {
                line: line.min(u32::MAX as usize) as u32,
                col: col.min(u32::MAX as usize) as u32,
            },
            message: "invalid UTF-8 (not a text file?)".into(),
        })
    })
}

/// Decisions and warnings gathered while converting. Unknown keys are
/// counted per (object kind, key) so a key repeated on every bone makes one
/// line in the report, not hundreds.
#[derive(Default)]
struct Notes {
    decisions: Vec<Decision>,
    diagnostics: Diagnostics,
    ignored_keys: BTreeMap<(&'static str, String), (usize, Pos)>,
}

impl Notes {
    /// Record members of an object of kind `what` that are not in `known`.
    fn ignore_unknown(&mut self, what: &'static str, members: &[Member], known: &[&str]) {
        for m in members {
            if !known.contains(&m.key.as_str()) {
                let e = self
                    .ignored_keys
                    .entry((what, m.key.clone()))
                    .or_insert((0, m.key_pos));
                e.0 += 1;
            }
        }
    }

    fn flush_ignored(&mut self, file: &str) {
        for ((what, key), (count, pos)) in std::mem::take(&mut self.ignored_keys) {
            let times = if count > 1 {
                format!(" ({count} times)")
            } else {
                String::new()
            };
            self.decisions.push(Decision::new(
                "ignored_key",
                format!("unknown key `{key}` in {what} ignored{times}; first at {pos}"),
            ));
            self.diagnostics.push(
                Diagnostic::warning(
                    "unknown_sjson_key",
                    format!("{pos}: unknown key `{key}` in {what} ignored{times}"),
                )
                .file(file),
            );
        }
    }
}

fn convert(path: &Path, doc: &[Member], limits: &Limits) -> Result<SourceAsset> {
    let file = path.display().to_string();
    let mut notes = Notes::default();
    let top = Obj {
        what: "the top level",
        pos: Pos { line: 1, col: 1 },
        members: doc,
    };

    // `track_list` files hold scalar tracks, not a skeleton clip.
    if let (Some(tl), None) = (top.get("track_list"), top.get("clip")) {
        return Err(SjsonError::schema(
            code::UNSUPPORTED,
            tl.pos,
            "this is an ACL track list (scalar tracks), not a clip; only clips can be imported",
        ));
    }

    let version_v = top.req("version")?;
    let version = as_integer(version_v, "`version`")?;
    if !(1..=FORMAT_VERSION).contains(&version) {
        return Err(SjsonError::schema(
            code::UNSUPPORTED,
            version_v.pos,
            format!("ACL file format version {version} is not supported (expected 1 to {FORMAT_VERSION})"),
        ));
    }
    if version < FORMAT_VERSION {
        notes.decisions.push(Decision::new(
            "format_version",
            format!(
                "file format version {version} read with version {FORMAT_VERSION} rules (clip, bones and tracks are unchanged since version 1)"
            ),
        ));
    }

    for m in doc {
        match m.key.as_str() {
            "version" | "clip" | "bones" | "tracks" => {}
            "settings" => notes.decisions.push(Decision::new(
                "ignored_section",
                format!(
                    "`settings` ({}) ignored: ACL compression settings are not part of the source asset; the cooker's profile decides",
                    m.key_pos
                ),
            )),
            "base_tracks" => {
                notes.decisions.push(Decision::new(
                    "ignored_section",
                    format!("`base_tracks` ({}) ignored: the additive base clip is not imported", m.key_pos),
                ));
                notes.diagnostics.push(
                    Diagnostic::warning(
                        "additive_base_ignored",
                        format!("{}: additive base clip (`base_tracks`) ignored", m.key_pos),
                    )
                    .file(&file),
                );
            }
            other => {
                notes.decisions.push(Decision::new(
                    "ignored_section",
                    format!("unknown top-level section `{other}` ({}) ignored", m.key_pos),
                ));
                notes.diagnostics.push(
                    Diagnostic::warning(
                        "unknown_sjson_section",
                        format!("{}: unknown top-level section `{other}` ignored", m.key_pos),
                    )
                    .file(&file),
                );
            }
        }
    }

    let header = read_header(path, &top, &mut notes)?;
    let bones = read_bones(&top, &header, &mut notes)?;
    check_limits(&header, bones.len(), limits)
        .map_err(|e| SjsonError::Limit(Box::new(e.clip(header.name.clone()))))?;
    let skeleton = build_skeleton(&bones)?;
    let rest_detail = describe_rest(&bones);
    notes
        .decisions
        .push(Decision::new("rest_pose", rest_detail));

    let times: Vec<f32> = (0..header.num_samples)
        .map(|i| (f64::from(i) / header.sample_rate) as f32)
        .collect();
    let tracks = read_tracks(&top, &header, &bones, &skeleton, &times, &mut notes)?;

    let duration_s = if header.num_samples > 1 {
        (f64::from(header.num_samples - 1) / header.sample_rate) as f32
    } else {
        0.0
    };
    let key_times = if tracks.is_empty() { Vec::new() } else { times };
    let clip = SourceClip {
        name: header.name.clone(),
        duration_s,
        tracks,
        curves: Vec::new(),
        frame_rate_hz: Some(header.sample_rate as f32),
        key_times,
        markers: vec![],
    };

    notes.decisions.push(Decision::new(
        "assumed_units",
        "assumed centimetres (ACL's default unit): unit_scale_m = 0.01; the file declares no unit; override with --units",
    ));
    notes.decisions.push(Decision::new(
        "assumed_axes",
        "+Y up, right-handed (as stored): ACL raw clips declare no axes; values are used unchanged",
    ));
    notes.flush_ignored(&file);

    Ok(SourceAsset {
        path: file,
        format: SourceFormat::AclSjson,
        skeleton,
        clips: vec![clip],
        unit_scale_m: ASSUMED_UNIT_SCALE_M,
        source_axes: AxisSystem {
            description: "+Y up, right-handed (as stored)".into(),
        },
        joint_shell_distance: Some(bones.iter().map(|b| b.vertex_distance).collect()),
        diagnostics: notes.diagnostics,
        decisions: notes.decisions,
        companions: Vec::new(),
        skins: Vec::new(),
        sockets: Vec::new(),
    })
}

/// The `clip` header.
struct Header {
    name: String,
    num_samples: u32,
    sample_rate: f64,
    /// Floats are stored as hex strings of their 64-bit pattern.
    binary_exact: bool,
}

fn read_header(path: &Path, top: &Obj<'_>, notes: &mut Notes) -> Result<Header> {
    let clip = top.req("clip")?;
    let clip = Obj::of(clip, "`clip`")?;
    notes.ignore_unknown(
        "`clip`",
        clip.members,
        &[
            "name",
            "num_samples",
            "sample_rate",
            "is_binary_exact",
            "additive_format",
            "additive_base_name",
            "additive_base_num_samples",
            "additive_base_sample_rate",
        ],
    );

    let name = match clip.get("name") {
        Some(v) => as_str(v, "`clip.name`")?.to_string(),
        None => {
            let stem = clip_name_from_path(path);
            notes.decisions.push(Decision::new(
                "clip_name",
                format!("`clip.name` missing: clip named '{stem}' after the file"),
            ));
            stem
        }
    };

    let ns_v = clip.req("num_samples")?;
    let ns = as_integer(ns_v, "`clip.num_samples`")?;
    let num_samples = u32::try_from(ns).ok().filter(|&n| n >= 1).ok_or_else(|| {
        SjsonError::schema(
            code::SCHEMA,
            ns_v.pos,
            format!("`clip.num_samples` must be at least 1, found {ns}"),
        )
    })?;

    let binary_exact = match clip.get("is_binary_exact") {
        Some(v) => as_bool(v, "`clip.is_binary_exact`")?,
        None => false,
    };

    let sr_v = clip.req("sample_rate")?;
    let sample_rate = as_number(sr_v, "`clip.sample_rate`", binary_exact)?;
    if !(sample_rate.is_finite() && sample_rate > 0.0) {
        return Err(SjsonError::schema(
            code::SCHEMA,
            sr_v.pos,
            format!("`clip.sample_rate` must be a positive number, found {sample_rate}"),
        ));
    }

    if let Some(v) = clip.get("additive_format") {
        let f = as_str(v, "`clip.additive_format`")?;
        if f != "none" {
            notes.decisions.push(Decision::new(
                "additive_clip",
                format!("additive_format \"{f}\": tracks imported as stored (local poses relative to the additive base), base not applied"),
            ));
            notes.diagnostics.push(
                Diagnostic::warning(
                    "additive_clip",
                    format!("{}: clip is additive (\"{f}\"); its tracks are imported as plain local poses", v.pos),
                )
                .file(path.display().to_string()),
            );
        }
    }

    Ok(Header {
        name,
        num_samples,
        sample_rate,
        binary_exact,
    })
}

/// `cmu_01_01.acl.sjson` -> `cmu_01_01`.
/// Samples, duration and the memory the tracks need (a rotation, a
/// translation and a scale key per bone and sample), before any is read.
fn check_limits(header: &Header, bones: usize, limits: &Limits) -> Result<(), LimitExceeded> {
    let n = u64::from(header.num_samples);
    limits.check_samples(n)?;
    limits.check_duration(f64::from(header.num_samples.saturating_sub(1)) / header.sample_rate)?;
    let key = std::mem::size_of::<ludus_anim_model::Key<Quat>>()
        + 2 * std::mem::size_of::<ludus_anim_model::Key<Vec3>>();
    let bytes = n.saturating_mul(bones as u64).saturating_mul(key as u64);
    Limits::check(
        Limit::AssetMemory,
        "estimated memory (bytes) for the tracks",
        bytes,
        limits.max_asset_memory_bytes,
    )
}

fn clip_name_from_path(path: &Path) -> String {
    let file = path.file_name().and_then(|f| f.to_str()).unwrap_or("clip");
    let lower = file.to_ascii_lowercase();
    for ext in [".acl.sjson", ".sjson"] {
        if lower.ends_with(ext) {
            return file
                .get(..file.len() - ext.len())
                .unwrap_or(file)
                .to_string();
        }
    }
    file.to_string()
}

/// One `bones` entry, parent still by name.
struct Bone {
    name: String,
    pos: Pos,
    parent: String,
    parent_pos: Pos,
    vertex_distance: f32,
    rest: Transform,
    /// Which of rotation/translation/scale came from `bind_*`.
    bind: [bool; 3],
}

fn read_bones(top: &Obj<'_>, header: &Header, notes: &mut Notes) -> Result<Vec<Bone>> {
    let list = top.req("bones")?;
    let items = as_array(list, "`bones`")?;
    let mut bones = Vec::with_capacity(items.len());
    for item in items {
        let b = Obj::of(item, "a `bones` entry")?;
        notes.ignore_unknown(
            "a `bones` entry",
            b.members,
            &[
                "name",
                "parent",
                "vertex_distance",
                "bind_rotation",
                "bind_translation",
                "bind_scale",
            ],
        );
        let name = as_str(b.req("name")?, "bone `name`")?.to_string();
        if name.is_empty() {
            return Err(SjsonError::schema(
                code::SCHEMA,
                item.pos,
                "bone `name` is empty",
            ));
        }
        let in_bone = |e: SjsonError| e.with_joint(&name);
        let parent_v = b.req("parent").map_err(in_bone)?;
        let parent = as_str(parent_v, "bone `parent`")
            .map_err(in_bone)?
            .to_string();
        let vd_v = b.req("vertex_distance").map_err(in_bone)?;
        let vd = as_number(vd_v, "`vertex_distance`", header.binary_exact).map_err(in_bone)?;
        if !(vd.is_finite() && vd >= 0.0) {
            return Err(SjsonError::schema(
                code::SCHEMA,
                vd_v.pos,
                format!(
                    "bone '{name}': `vertex_distance` must be a finite number >= 0, found {vd}"
                ),
            )
            .with_joint(&name));
        }
        let mut rest = Transform::IDENTITY;
        let mut bind = [false; 3];
        if let Some(v) = b.get("bind_rotation") {
            let [x, y, z, w] = fixed::<4>(v, header.binary_exact, || {
                format!("bone '{name}' `bind_rotation`")
            })
            .map_err(in_bone)?;
            rest.rotation = Quat::from_xyzw(x as f32, y as f32, z as f32, w as f32);
            bind[0] = true;
        }
        if let Some(v) = b.get("bind_translation") {
            let [x, y, z] = fixed::<3>(v, header.binary_exact, || {
                format!("bone '{name}' `bind_translation`")
            })
            .map_err(in_bone)?;
            rest.translation = Vec3::new(x as f32, y as f32, z as f32);
            bind[1] = true;
        }
        if let Some(v) = b.get("bind_scale") {
            let [x, y, z] = fixed::<3>(v, header.binary_exact, || {
                format!("bone '{name}' `bind_scale`")
            })
            .map_err(in_bone)?;
            rest.scale = Vec3::new(x as f32, y as f32, z as f32);
            bind[2] = true;
        }
        bones.push(Bone {
            name,
            pos: item.pos,
            parent,
            parent_pos: parent_v.pos,
            vertex_distance: vd as f32,
            rest,
            bind,
        });
    }
    Ok(bones)
}

/// Resolve parents by name. Bones may be listed in any order (ACL itself
/// wants parents first; the normalize stage reorders anyway).
fn build_skeleton(bones: &[Bone]) -> Result<SourceSkeleton> {
    let mut index: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, b) in bones.iter().enumerate() {
        if let Some(&first) = index.get(b.name.as_str()) {
            let first_pos = bones.get(first).map(|f| f.pos).unwrap_or(b.pos);
            return Err(SjsonError::schema(
                code::DUPLICATE_BONE,
                b.pos,
                format!("bone '{}' is defined twice (first at {first_pos})", b.name),
            )
            .with_joint(&b.name));
        }
        index.insert(&b.name, i);
    }
    let mut joints = Vec::with_capacity(bones.len());
    for b in bones {
        let parent = if b.parent.is_empty() {
            None
        } else if b.parent == b.name {
            return Err(SjsonError::schema(
                code::UNKNOWN_PARENT,
                b.parent_pos,
                format!("bone '{}' names itself as its parent", b.name),
            )
            .with_joint(&b.name));
        } else {
            match index.get(b.parent.as_str()) {
                Some(&p) => Some(p),
                None => {
                    return Err(SjsonError::schema(
                        code::UNKNOWN_PARENT,
                        b.parent_pos,
                        format!(
                            "bone '{}' has parent '{}', which is not a bone of this file",
                            b.name, b.parent
                        ),
                    )
                    .with_joint(&b.name))
                }
            }
        };
        joints.push(SourceJoint {
            name: b.name.clone(),
            parent,
            rest: b.rest,
        });
    }
    Ok(SourceSkeleton { joints })
}

fn describe_rest(bones: &[Bone]) -> String {
    let with_bind = bones.iter().filter(|b| b.bind.iter().any(|&x| x)).count();
    if with_bind == 0 {
        format!(
            "no bone carries bind_rotation/bind_translation/bind_scale: rest pose is identity for all {} bones",
            bones.len()
        )
    } else {
        format!(
            "rest pose from bind_* for {with_bind} of {} bones (identity for channels without bind_*)",
            bones.len()
        )
    }
}

fn read_tracks(
    top: &Obj<'_>,
    header: &Header,
    bones: &[Bone],
    skeleton: &SourceSkeleton,
    times: &[f32],
    notes: &mut Notes,
) -> Result<Vec<JointTracks>> {
    let list = top.req("tracks")?;
    let items = as_array(list, "`tracks`")?;
    let mut seen: Vec<Option<Pos>> = vec![None; bones.len()];
    let mut out = Vec::with_capacity(items.len());
    let mut filled_identity = 0usize;
    for item in items {
        let t = Obj::of(item, "a `tracks` entry")?;
        notes.ignore_unknown(
            "a `tracks` entry",
            t.members,
            &["name", "rotations", "translations", "scales"],
        );
        let name_v = t.req("name")?;
        let name = as_str(name_v, "track `name`")?;
        let Some(joint) = skeleton.find(name) else {
            return Err(SjsonError::schema(
                code::UNKNOWN_BONE,
                name_v.pos,
                format!("track for '{name}', which is not a bone of this file"),
            )
            .with_joint(name));
        };
        match seen.get_mut(joint) {
            Some(Some(first)) => {
                return Err(SjsonError::schema(
                    code::DUPLICATE_TRACK,
                    item.pos,
                    format!("bone '{name}' has a second track (first at {first})"),
                )
                .with_joint(name))
            }
            Some(slot) => *slot = Some(item.pos),
            None => {}
        }
        let rest = bones
            .get(joint)
            .map(|b| b.rest)
            .unwrap_or(Transform::IDENTITY);
        let mut tr = JointTracks::new(joint);

        match t.get("rotations") {
            Some(v) => {
                let vals = samples::<4>(v, header, name, "rotations")?;
                let q: Vec<Quat> = vals
                    .iter()
                    .map(|&[x, y, z, w]| Quat::from_xyzw(x as f32, y as f32, z as f32, w as f32))
                    .collect();
                tr.rotation = Some(Curve::from_values(Interpolation::Linear, times, &q));
            }
            None if rest.rotation != Quat::IDENTITY => {
                tr.rotation = Some(Curve::constant(Quat::IDENTITY));
                filled_identity += 1;
            }
            None => {}
        }
        match t.get("translations") {
            Some(v) => {
                let vals = samples::<3>(v, header, name, "translations")?;
                let p: Vec<Vec3> = vals
                    .iter()
                    .map(|&[x, y, z]| Vec3::new(x as f32, y as f32, z as f32))
                    .collect();
                tr.translation = Some(Curve::from_values(Interpolation::Linear, times, &p));
            }
            None if rest.translation != Vec3::ZERO => {
                tr.translation = Some(Curve::constant(Vec3::ZERO));
                filled_identity += 1;
            }
            None => {}
        }
        match t.get("scales") {
            Some(v) => {
                let vals = samples::<3>(v, header, name, "scales")?;
                let s: Vec<Vec3> = vals
                    .iter()
                    .map(|&[x, y, z]| Vec3::new(x as f32, y as f32, z as f32))
                    .collect();
                tr.scale = Some(Curve::from_values(Interpolation::Linear, times, &s));
            }
            None if rest.scale != Vec3::ONE => {
                tr.scale = Some(Curve::constant(Vec3::ONE));
                filled_identity += 1;
            }
            None => {}
        }
        if tr.rotation.is_some() || tr.translation.is_some() || tr.scale.is_some() {
            out.push(tr);
        }
    }
    if filled_identity > 0 {
        notes.decisions.push(Decision::new(
            "missing_channel",
            format!(
                "{filled_identity} track channel(s) absent where the bind pose is not identity: held at identity, as ACL reads a missing array"
            ),
        ));
    }
    let untracked = seen.iter().filter(|s| s.is_none()).count();
    if untracked > 0 {
        notes.decisions.push(Decision::new(
            "untracked_bones",
            format!("{untracked} bone(s) have no track and keep their rest pose"),
        ));
    }
    Ok(out)
}

/// One sample array of a track: exactly `num_samples` entries of `N`
/// numbers each.
fn samples<const N: usize>(
    v: &Value,
    header: &Header,
    bone: &str,
    array: &str,
) -> Result<Vec<[f64; N]>> {
    let items = as_array(v, &format!("bone '{bone}' `{array}`")).map_err(|e| e.with_joint(bone))?;
    if items.len() != header.num_samples as usize {
        return Err(SjsonError::schema(
            code::SAMPLE_COUNT,
            v.pos,
            format!(
                "bone '{bone}': `{array}` has {} entries, expected {} (clip.num_samples)",
                items.len(),
                header.num_samples
            ),
        )
        .with_joint(bone));
    }
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            fixed::<N>(item, header.binary_exact, || {
                format!("bone '{bone}' `{array}`[{i}]")
            })
            .map_err(|e| e.with_joint(bone))
        })
        .collect()
}

/// An object value with the helpers the schema needs.
struct Obj<'v> {
    /// How errors name the object, e.g. "`clip`".
    what: &'static str,
    pos: Pos,
    members: &'v [Member],
}

impl<'v> Obj<'v> {
    fn of(v: &'v Value, what: &'static str) -> Result<Self> {
        match &v.kind {
            ValueKind::Object(members) => Ok(Obj {
                what,
                pos: v.pos,
                members,
            }),
            _ => Err(expected(v, what, "an object")),
        }
    }

    fn get(&self, key: &str) -> Option<&'v Value> {
        self.members.iter().find(|m| m.key == key).map(|m| &m.value)
    }

    fn req(&self, key: &str) -> Result<&'v Value> {
        self.get(key).ok_or_else(|| {
            SjsonError::schema(
                code::SCHEMA,
                self.pos,
                format!(
                    "missing key `{key}` in {} (starting at {})",
                    self.what, self.pos
                ),
            )
        })
    }
}

fn expected(v: &Value, what: &str, want: &str) -> SjsonError {
    SjsonError::schema(
        code::SCHEMA,
        v.pos,
        format!("{what} must be {want}, found {}", v.type_name()),
    )
}

fn as_str<'v>(v: &'v Value, what: &str) -> Result<&'v str> {
    match &v.kind {
        ValueKind::Str(s) => Ok(s),
        _ => Err(expected(v, what, "a string")),
    }
}

fn as_bool(v: &Value, what: &str) -> Result<bool> {
    match v.kind {
        ValueKind::Bool(b) => Ok(b),
        _ => Err(expected(v, what, "true or false")),
    }
}

/// A number; in binary-exact files, also a hex string of an f64's bits.
fn as_number(v: &Value, what: &str, binary_exact: bool) -> Result<f64> {
    match &v.kind {
        ValueKind::Number(n) => Ok(*n),
        ValueKind::Str(s) if binary_exact => hex_f64(s).ok_or_else(|| {
            SjsonError::schema(
                code::SCHEMA,
                v.pos,
                format!("{what}: \"{s}\" is not a binary-exact value (up to 16 hex digits)"),
            )
        }),
        _ => Err(expected(v, what, "a number")),
    }
}

fn hex_f64(s: &str) -> Option<f64> {
    let digits = s
        .strip_prefix("0x")
        .or_else(|| s.strip_prefix("0X"))
        .unwrap_or(s);
    if digits.is_empty() || digits.len() > 16 || !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(digits, 16).ok().map(f64::from_bits)
}

fn as_integer(v: &Value, what: &str) -> Result<i64> {
    match v.kind {
        ValueKind::Number(n) if n.fract() == 0.0 && n.abs() < 1e15 => Ok(n as i64),
        ValueKind::Number(n) => Err(SjsonError::schema(
            code::SCHEMA,
            v.pos,
            format!("{what} must be a whole number, found {n}"),
        )),
        _ => Err(expected(v, what, "a whole number")),
    }
}

/// An array's elements as values (an all-number array is stored flat, so
/// this only succeeds for arrays of non-numbers or the empty array).
fn as_array<'v>(v: &'v Value, what: &str) -> Result<&'v [Value]> {
    match &v.kind {
        ValueKind::Array(items) => Ok(items),
        ValueKind::Numbers(n) if n.is_empty() => Ok(&[]),
        ValueKind::Numbers(_) => Err(SjsonError::schema(
            code::SCHEMA,
            v.pos,
            format!("{what} must be an array of arrays or objects, found an array of numbers"),
        )),
        _ => Err(expected(v, what, "an array")),
    }
}

/// An array of exactly `N` numbers.
fn fixed<const N: usize>(
    v: &Value,
    binary_exact: bool,
    what: impl Fn() -> String,
) -> Result<[f64; N]> {
    let mut out = [0.0; N];
    let len = match &v.kind {
        ValueKind::Numbers(n) => {
            if n.len() == N {
                out.copy_from_slice(n);
            }
            n.len()
        }
        ValueKind::Array(items) => {
            if items.len() == N {
                for (o, item) in out.iter_mut().zip(items) {
                    *o = as_number(item, &what(), binary_exact)?;
                }
            }
            items.len()
        }
        _ => return Err(expected(v, &what(), &format!("an array of {N} numbers"))),
    };
    if len != N {
        return Err(SjsonError::schema(
            code::SCHEMA,
            v.pos,
            format!("{} has {len} values, expected {N}", what()),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_values_are_bit_exact() {
        assert_eq!(hex_f64("3ff0000000000000"), Some(1.0));
        assert_eq!(hex_f64("0xbff0000000000000"), Some(-1.0));
        assert_eq!(hex_f64("xyz"), None);
        assert_eq!(hex_f64("10000000000000000"), None);
    }

    #[test]
    fn clip_name_strips_both_extensions() {
        assert_eq!(clip_name_from_path(Path::new("a/b/walk.acl.sjson")), "walk");
        assert_eq!(clip_name_from_path(Path::new("run.sjson")), "run");
    }
}
