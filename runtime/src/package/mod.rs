//! Package v2 reader. The byte layout is specified in
//! `schemas/package-format.md`; this module is its reference reader.
//!
//! [`Package::load`] validates every count, offset, alignment, size, string
//! and codec blob before returning a view; afterwards sampling trusts only
//! what was validated. Any byte string gives either a valid package or a
//! typed [`PackageError`] — never a panic, never an out-of-bounds read.
//! Loading allocates (the clip table, the skeleton, decoded root-motion
//! keys and events, each clip's static base); sampling, curve evaluation, trajectory deltas and
//! event queries do not.
//!
//! Scalar curve channels carry a schema (interpolation, default, range
//! with an optional clamp, composition) and are stored quantized per
//! channel (range reduction and a fixed sample width, bit-packed); a
//! [`CurveChannel`] decodes samples straight from the package bytes.
//!
//! Version 2 adds the prepared clip semantics: the wrap loop mode, the
//! additive flag and its named reference, the root-motion trajectory (keys
//! stored as plain f32, never through a pose codec, so the seed's "preserve
//! root trajectories and event metadata independently of pose compression"
//! holds) and the `EVNT` section of markers and events. The trajectory and
//! event checks are the ones the cook side runs too (`Trajectory::new` and
//! `check_events` of `ludus-anim-format`): a package whose data they would
//! refuse does not load.

mod bytes;
mod clip;
mod clip_record;
mod curve;
mod joint_sets;
mod records;
mod skins;
mod sockets;
mod sync;
#[cfg(test)]
mod tests;

pub use crate::codec::CodecError;
pub(crate) use bytes::Strings;
pub use clip::Clip;
pub(crate) use clip::Timing;
pub use curve::CurveChannel;

use crate::hash::fnv1a64;
use crate::math::Transform;
use crate::skeleton::{Skeleton, SkeletonError};
use bytes::Bytes;
use clip_record::{parse_clips, ClipContext};
use curve::parse_curve;
use format::*;
use ludus_anim_format::additive::ADDITIVE_IDENTITY;
use ludus_anim_format::package as format;
use ludus_anim_format::package::Meta;
use ludus_anim_format::skin::Bindings;
use ludus_anim_format::sync::SyncGroup;
use records::{parse_events, parse_skeleton};
use std::sync::Arc;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum PackageError {
    #[error("not a ludus-anim package (bad magic)")]
    BadMagic,
    #[error("package format version {found} is not supported by this runtime (it reads version {expected}); re-cook the asset")]
    Version { found: u32, expected: u32 },
    #[error("package truncated: {what} needs bytes {start}..{end} but the package has {len}")]
    Truncated {
        what: &'static str,
        start: u64,
        end: u64,
        len: usize,
    },
    #[error("package checksum mismatch (stored {stored:016x}, computed {computed:016x}): the file is corrupted")]
    Checksum { stored: u64, computed: u64 },
    #[error("package invalid: {0}")]
    Invalid(String),
    #[error("section {0} missing")]
    MissingSection(&'static str),
    #[error("skeleton invalid: {0}")]
    Skeleton(#[from] SkeletonError),
    #[error("package skeleton {} is not the skeleton its clips must play on ({}): re-cook the clips against that skeleton", found.to_hex(), expected.to_hex())]
    SkeletonMismatch {
        expected: crate::skeleton::SkeletonIdentity,
        found: crate::skeleton::SkeletonIdentity,
    },
    #[error("clip '{clip}': {source}")]
    Codec {
        clip: String,
        #[source]
        source: CodecError,
    },
}

fn invalid(msg: impl Into<String>) -> PackageError {
    PackageError::Invalid(msg.into())
}

/// A loaded, validated package.
#[derive(Clone, Debug)]
pub struct Package<'a> {
    meta: Meta<'a>,
    skeleton: Skeleton,
    clips: Vec<Clip<'a>>,
    curves: Vec<CurveChannel<'a>>,
    /// The SYNC section's groups, checked against the clips' markers.
    sync_groups: Vec<SyncGroup<'a>>,
    /// The optional SKIN section's skin bindings.
    bindings: Bindings<'a>,
    /// The skeleton's rest pose: the defaults pose clips decode missing
    /// tracks with. Shared with every clip's static base, whose one-shot
    /// decode recognizes this very slice (see [`Clip::sample`]).
    rest_defaults: Arc<[Transform]>,
    /// `joint_count` copies of [`ADDITIVE_IDENTITY`]: the defaults additive
    /// clips decode missing tracks with (shared the same way).
    additive_defaults: Arc<[Transform]>,
}

struct Section {
    kind: u32,
    offset: u64,
    size: u64,
}

impl<'a> Package<'a> {
    /// Validate `bytes` and build a view. Checks, in order: magic, version,
    /// declared size, checksum, section table (bounds, alignment, overlap,
    /// duplicates), strings, meta, skeleton (all invariants plus the stored
    /// identity), curves, events (flags, names, ids), clips (fields, codec
    /// blobs, additive reference, root-motion trajectory through
    /// `Trajectory::new`, event range through `EventTrack::new`), sync groups,
    /// skins, bounds and sockets (optional sections: joints, finite values),
    /// masks and LOD levels (optional section: see `joint_sets`).
    pub fn load(bytes: &'a [u8]) -> Result<Package<'a>, PackageError> {
        let version = check_header(bytes)?;
        let file = Bytes {
            b: bytes,
            what: "header",
        };
        let stored = file.u64(CHECKSUM_OFFSET as u64)?;
        let body = bytes.get(HEADER_SIZE..).ok_or(PackageError::Truncated {
            what: "header",
            start: 0,
            end: HEADER_SIZE as u64,
            len: bytes.len(),
        })?;
        let computed = fnv1a64(body);
        if stored != computed {
            return Err(PackageError::Checksum { stored, computed });
        }
        Self::load_unchecked_checksum(bytes, version)
    }

    /// [`Package::load`] for clips that play on a shared skeleton (a
    /// project's skeleton package): a package whose skeleton identity
    /// (joint IDs, order, hierarchy, rest pose, conventions) is not
    /// `skeleton`'s is refused with [`PackageError::SkeletonMismatch`].
    pub fn load_for(bytes: &'a [u8], skeleton: &Skeleton) -> Result<Package<'a>, PackageError> {
        let package = Self::load(bytes)?;
        let (expected, found) = (skeleton.identity(), package.skeleton.identity());
        if expected != found {
            return Err(PackageError::SkeletonMismatch { expected, found });
        }
        Ok(package)
    }

    /// Everything after the checksum. Separate so that robustness tests can
    /// exercise the structural validation behind a recomputed checksum.
    fn load_unchecked_checksum(bytes: &'a [u8], version: u32) -> Result<Package<'a>, PackageError> {
        let file = Bytes {
            b: bytes,
            what: "section table",
        };
        let sections = parse_sections(&file)?;
        let section = |kind: u32, what: &'static str| -> Result<Bytes<'a>, PackageError> {
            let s = sections
                .iter()
                .find(|s| s.kind == kind)
                .ok_or(PackageError::MissingSection(what))?;
            Ok(Bytes {
                b: file.range(s.offset, s.size)?,
                what,
            })
        };

        let strings = Strings::parse(section(SECTION_STRINGS, "STRS")?)?;
        let meta = parse_meta(&section(SECTION_META, "META")?, &strings)?;
        let skeleton = parse_skeleton(section(SECTION_SKELETON, "SKEL")?, &strings)?;
        let joint_count = skeleton.joint_count();
        let data = section(SECTION_DATA, "DATA")?;
        let curves = parse_curves(&section(SECTION_CURVES, "CURV")?, &data, &strings)?;
        let events = parse_events(section(SECTION_EVENTS, "EVNT")?, &strings)?;
        let context = ClipContext {
            data: &data,
            strings: &strings,
            skeleton: &skeleton,
            curves: &curves,
            events: &events,
        };
        let mut clips = parse_clips(&section(SECTION_CLIPS, "CLIP")?, &context)?;
        let sync_groups = sync::parse_sync(section(SECTION_SYNC, "SYNC")?, &strings, &clips)?;
        let skins = match sections.iter().any(|s| s.kind == SECTION_SKINS) {
            true => skins::parse_skins(section(SECTION_SKINS, "SKIN")?, &strings, joint_count)?,
            false => Vec::new(),
        };
        let clip_bounds = match sections.iter().any(|s| s.kind == SECTION_BOUNDS) {
            true => skins::parse_bounds(section(SECTION_BOUNDS, "BNDS")?, clips.len())?,
            false => Vec::new(),
        };
        let sockets = match sections.iter().any(|s| s.kind == SECTION_SOCKETS) {
            true => {
                sockets::parse_sockets(section(SECTION_SOCKETS, "SOCK")?, &strings, joint_count)?
            }
            false => Vec::new(),
        };
        let joint_sets = match sections.iter().any(|s| s.kind == SECTION_JOINT_SETS) {
            true => joint_sets::parse_joint_sets(
                section(SECTION_JOINT_SETS, "JSET")?,
                &strings,
                skeleton.parents(),
                &skins,
            )?,
            false => Default::default(),
        };

        let rest_defaults: Arc<[Transform]> = Arc::from(skeleton.rest_pose());
        let additive_defaults: Arc<[Transform]> = Arc::from(vec![ADDITIVE_IDENTITY; joint_count]);
        for clip in &mut clips {
            let defaults = if clip.is_additive() {
                &additive_defaults
            } else {
                &rest_defaults
            };
            clip.build_static_base(defaults);
        }

        debug_assert_eq!(version, FORMAT_VERSION);
        Ok(Package {
            meta,
            skeleton,
            clips,
            curves,
            sync_groups,
            bindings: Bindings {
                skins,
                clip_bounds,
                sockets,
                joint_sets,
            },
            rest_defaults,
            additive_defaults,
        })
    }

    /// Provenance: cooker version, asset name, source path and hash (the
    /// format version is `ludus_anim_format::package::FORMAT_VERSION`, the
    /// only one that loads).
    pub fn meta(&self) -> &Meta<'a> {
        &self.meta
    }
    /// The skeleton every clip of the package plays on.
    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }
    /// Every clip, in package order.
    pub fn clips(&self) -> &[Clip<'a>] {
        &self.clips
    }
    /// The clip named `name`.
    pub fn clip(&self, name: &str) -> Option<&Clip<'a>> {
        self.clips.iter().find(|c| c.name == name)
    }
    /// The package's sync groups (format version 3): member clips, their
    /// shared sync markers in cycle order, the cook-time rate range.
    pub fn sync_groups(&self) -> &[SyncGroup<'a>] {
        &self.sync_groups
    }
    /// What a renderer needs beyond the skeleton (the optional SKIN, BNDS
    /// and SOCK sections): the skin bindings, clip bounds and sockets,
    /// validated at load (joints inside the skeleton, finite values,
    /// invertible inverse binds, unit socket rotations).
    pub fn bindings(&self) -> &Bindings<'a> {
        &self.bindings
    }
    /// The scalar curve channels of `clip` (a clip of this package).
    pub fn clip_curves(&self, clip: &Clip<'a>) -> &[CurveChannel<'a>] {
        self.curves.get(clip.curve_range()).unwrap_or(&[])
    }

    /// The `defaults` to pass to [`Clip::sample`] for `clip`: the rest pose
    /// for a pose clip, [`ADDITIVE_IDENTITY`] for every joint of an
    /// additive clip (seed: an additive sample's missing tracks are the
    /// additive identity, never the rest pose). The package's clips
    /// recognize this slice and decode from their static base.
    pub fn sample_defaults(&self, clip: &Clip<'_>) -> &[Transform] {
        if clip.is_additive() {
            &self.additive_defaults
        } else {
            &self.rest_defaults
        }
    }
}

/// The section table: bounds, alignment, no overlap with the header or
/// with each other, no repeated kind.
fn parse_sections(file: &Bytes<'_>) -> Result<Vec<Section>, PackageError> {
    let count = file.u32(24)?;
    if count > MAX_SECTIONS {
        return Err(invalid(format!("{count} sections (limit {MAX_SECTIONS})")));
    }
    let table_end = HEADER_SIZE as u64 + count as u64 * SECTION_ENTRY_SIZE as u64;
    file.range(HEADER_SIZE as u64, count as u64 * SECTION_ENTRY_SIZE as u64)?;
    let mut sections: Vec<Section> = Vec::with_capacity(count as usize);
    for i in 0..count as u64 {
        let at = HEADER_SIZE as u64 + i * SECTION_ENTRY_SIZE as u64;
        let s = Section {
            kind: file.u32(at)?,
            offset: file.u64(at + 8)?,
            size: file.u64(at + 16)?,
        };
        if !s.offset.is_multiple_of(ALIGN as u64) {
            return Err(invalid(format!("section {i} is not {ALIGN}-byte aligned")));
        }
        if s.offset < table_end {
            return Err(invalid(format!("section {i} overlaps the header")));
        }
        file.range(s.offset, s.size)?;
        if sections.iter().any(|o| o.kind == s.kind) {
            return Err(invalid(format!("section {i} kind repeated")));
        }
        sections.push(s);
    }
    let mut spans: Vec<(u64, u64)> = sections
        .iter()
        .map(|s| (s.offset, s.offset + s.size))
        .collect();
    spans.sort();
    if spans.windows(2).any(|w| w[1].0 < w[0].1) {
        return Err(invalid("sections overlap"));
    }
    Ok(sections)
}

/// META: provenance strings and the source hash.
fn parse_meta<'a>(sec: &Bytes<'a>, strings: &Strings<'a>) -> Result<Meta<'a>, PackageError> {
    Ok(Meta {
        cooker_version: strings.read(sec, 0, "meta cooker version")?,
        asset_name: strings.read(sec, 4, "meta asset name")?,
        source_path: strings.read(sec, 8, "meta source path")?,
        source_hash: sec.hash32(16)?,
    })
}

/// Every record of the CURV section.
fn parse_curves<'a>(
    sec: &Bytes<'a>,
    data: &Bytes<'a>,
    strings: &Strings<'a>,
) -> Result<Vec<CurveChannel<'a>>, PackageError> {
    let count = sec.u32(0)? as u64;
    if count > sec.b.len() as u64 / CURVE_RECORD_SIZE as u64 {
        return Err(invalid("curve count exceeds section size"));
    }
    let mut curves = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = 16 + i * CURVE_RECORD_SIZE as u64;
        curves.push(parse_curve(sec, at, data, strings)?);
    }
    Ok(curves)
}

/// Magic, format version, header size and declared file size: the checks
/// every load starts with. Returns the format version.
fn check_header(bytes: &[u8]) -> Result<u32, PackageError> {
    let file = Bytes {
        b: bytes,
        what: "header",
    };
    if file.range(0, 8)? != MAGIC {
        return Err(PackageError::BadMagic);
    }
    let version = file.u32(8)?;
    if version != FORMAT_VERSION {
        return Err(PackageError::Version {
            found: version,
            expected: FORMAT_VERSION,
        });
    }
    let header_size = file.u32(12)? as usize;
    if header_size != HEADER_SIZE {
        return Err(invalid(format!(
            "header size {header_size}, expected {HEADER_SIZE}"
        )));
    }
    let file_size = file.u64(16)?;
    if file_size != bytes.len() as u64 {
        return Err(PackageError::Truncated {
            what: "package",
            start: 0,
            end: file_size,
            len: bytes.len(),
        });
    }
    Ok(version)
}
