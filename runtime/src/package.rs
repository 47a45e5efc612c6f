//! Package v1 reader. The byte layout is specified in
//! `schemas/package-format.md`; this module is its reference reader.
//!
//! [`Package::load`] validates every count, offset, alignment, size, string
//! and codec blob before returning a view; afterwards sampling trusts only
//! what was validated. Any byte string gives either a valid package or a
//! typed [`PackageError`] — never a panic, never an out-of-bounds read.
//! Loading allocates (the clip table, the skeleton); sampling does not.

use crate::codec::{ClipCodec, CodecError, CodecId};
use crate::hash::fnv1a64;
use crate::math::{Quat, Transform, Vec3};
use crate::skeleton::{JointId, Skeleton, SkeletonError, SkeletonIdentity};
use crate::timing::{sample_position, LoopMode, SamplePosition};

/// Layout constants shared with the cooker's writer.
pub mod format {
    pub const MAGIC: [u8; 8] = *b"LUDANIM\0";
    pub const FORMAT_VERSION: u32 = 1;
    pub const HEADER_SIZE: usize = 64;
    pub const SECTION_ENTRY_SIZE: usize = 24;
    /// Every section and every blob inside DATA starts on this alignment.
    pub const ALIGN: usize = 16;
    pub const MAX_SECTIONS: u32 = 64;

    pub const fn fourcc(s: &[u8; 4]) -> u32 {
        u32::from_le_bytes(*s)
    }
    pub const SECTION_STRINGS: u32 = fourcc(b"STRS");
    pub const SECTION_META: u32 = fourcc(b"META");
    pub const SECTION_SKELETON: u32 = fourcc(b"SKEL");
    pub const SECTION_CLIPS: u32 = fourcc(b"CLIP");
    pub const SECTION_CURVES: u32 = fourcc(b"CURV");
    pub const SECTION_DATA: u32 = fourcc(b"DATA");

    pub const META_SIZE: usize = 48;
    pub const SKELETON_HEADER_SIZE: usize = 24;
    /// Bytes per joint in SKEL: parent u32, subtree end u32, id u64,
    /// rest 10 x f32, name u32.
    pub const JOINT_RECORD_SIZE: usize = 4 + 4 + 8 + 40 + 4;
    pub const CLIP_RECORD_SIZE: usize = 96;
    pub const CURVE_RECORD_SIZE: usize = 32;
    /// No string index.
    pub const NO_STRING: u32 = u32::MAX;

    pub const CURVE_INTERP_LINEAR: u32 = 0;
    pub const CURVE_INTERP_STEP: u32 = 1;
}

use format::*;

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

/// Bounds-checked little-endian reads over a byte slice.
#[derive(Clone, Copy)]
struct Bytes<'a> {
    b: &'a [u8],
    what: &'static str,
}

impl<'a> Bytes<'a> {
    fn range(&self, start: u64, len: u64) -> Result<&'a [u8], PackageError> {
        let end = start.checked_add(len).ok_or(PackageError::Truncated {
            what: self.what,
            start,
            end: u64::MAX,
            len: self.b.len(),
        })?;
        if end > self.b.len() as u64 {
            return Err(PackageError::Truncated {
                what: self.what,
                start,
                end,
                len: self.b.len(),
            });
        }
        Ok(&self.b[start as usize..end as usize])
    }
    fn u8(&self, at: u64) -> Result<u8, PackageError> {
        Ok(self.range(at, 1)?[0])
    }
    fn u16(&self, at: u64) -> Result<u16, PackageError> {
        let r = self.range(at, 2)?;
        Ok(u16::from_le_bytes([r[0], r[1]]))
    }
    fn u32(&self, at: u64) -> Result<u32, PackageError> {
        let r = self.range(at, 4)?;
        Ok(u32::from_le_bytes([r[0], r[1], r[2], r[3]]))
    }
    fn u64(&self, at: u64) -> Result<u64, PackageError> {
        let r = self.range(at, 8)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(r);
        Ok(u64::from_le_bytes(a))
    }
    fn f32(&self, at: u64) -> Result<f32, PackageError> {
        Ok(f32::from_bits(self.u32(at)?))
    }
    fn hash32(&self, at: u64) -> Result<[u8; 32], PackageError> {
        let mut h = [0u8; 32];
        h.copy_from_slice(self.range(at, 32)?);
        Ok(h)
    }
}

/// The string table: UTF-8 strings addressed by index.
#[derive(Clone, Debug)]
pub struct Strings<'a> {
    offsets: Vec<u32>,
    bytes: &'a [u8],
}

impl<'a> Strings<'a> {
    fn parse(sec: Bytes<'a>) -> Result<Strings<'a>, PackageError> {
        let count = sec.u32(0)? as u64;
        if count > sec.b.len() as u64 / 4 {
            return Err(invalid("string count exceeds section size"));
        }
        let mut offsets = Vec::with_capacity(count as usize + 1);
        for i in 0..=count {
            offsets.push(sec.u32(4 + i * 4)?);
        }
        let data_start = 4 + (count + 1) * 4;
        let total = *offsets.last().unwrap_or(&0) as u64;
        let bytes = sec.range(data_start, total)?;
        for (i, w) in offsets.windows(2).enumerate() {
            let s = bytes
                .get(w[0] as usize..w[1] as usize)
                .ok_or_else(|| invalid(format!("string {i} lies outside the string table")))?;
            if std::str::from_utf8(s).is_err() {
                return Err(invalid(format!("string {i} is not UTF-8")));
            }
        }
        Ok(Strings { offsets, bytes })
    }

    pub fn len(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The string at `index` (validated at load), or "" for [`NO_STRING`].
    pub fn get(&self, index: u32) -> &'a str {
        let i = index as usize;
        match (self.offsets.get(i), self.offsets.get(i + 1)) {
            (Some(&a), Some(&b)) => self
                .bytes
                .get(a as usize..b as usize)
                .and_then(|s| std::str::from_utf8(s).ok())
                .unwrap_or(""),
            _ => "",
        }
    }

    fn check(&self, index: u32, what: &str) -> Result<(), PackageError> {
        if index == NO_STRING || (index as usize) < self.len() {
            Ok(())
        } else {
            Err(invalid(format!(
                "{what} names string {index}, out of range"
            )))
        }
    }
}

/// Package-wide provenance.
#[derive(Clone, Debug, PartialEq)]
pub struct Meta<'a> {
    pub cooker_version: &'a str,
    pub asset_name: &'a str,
    pub source_path: &'a str,
    /// blake3 of the source file bytes (and companions).
    pub source_hash: [u8; 32],
}

/// One scalar curve channel, sampled on its clip's grid.
#[derive(Clone, Copy, Debug)]
pub struct CurveChannel<'a> {
    pub id: u64,
    pub name: &'a str,
    pub default: f32,
    pub step: bool,
    data: &'a [u8],
}

impl<'a> CurveChannel<'a> {
    pub fn num_samples(&self) -> usize {
        self.data.len() / 4
    }
    /// Value at sample `i` (validated range; out of range gives the default).
    pub fn value(&self, i: u32) -> f32 {
        let at = i as usize * 4;
        match self.data.get(at..at + 4) {
            Some(b) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            None => self.default,
        }
    }
    pub fn evaluate(&self, pos: SamplePosition) -> f32 {
        let a = self.value(pos.i0);
        if self.step || pos.alpha == 0.0 {
            return a;
        }
        let b = self.value(pos.i1);
        a + (b - a) * pos.alpha
    }
}

/// A validated clip.
#[derive(Clone, Debug)]
pub struct Clip<'a> {
    pub name: &'a str,
    pub duration_s: f32,
    pub sample_rate_hz: f32,
    pub num_samples: u32,
    pub loop_mode: LoopMode,
    pub codec_id: CodecId,
    pub codec_version: u16,
    pub profile: &'a str,
    pub source_hash: [u8; 32],
    /// Cook-time quality figures (informational).
    pub resample_error_m: f32,
    pub max_error_m: f32,
    pub blob_size: usize,
    pub codec: ClipCodec<'a>,
    curves: std::ops::Range<usize>,
    joint_count: usize,
}

impl<'a> Clip<'a> {
    /// Bracketing samples for clip-local time `t`, with the clip's duration
    /// and loop semantics.
    #[inline]
    pub fn position(&self, t: f32) -> SamplePosition {
        sample_position(
            t,
            self.duration_s,
            self.sample_rate_hz,
            self.num_samples,
            self.loop_mode,
        )
    }

    /// Sample the local pose at time `t` into `out` (length = joint count).
    /// `defaults` is the skeleton rest pose. No allocation. Returns false if
    /// a buffer has the wrong length.
    #[inline]
    pub fn sample(&self, t: f32, defaults: &[Transform], out: &mut [Transform]) -> bool {
        if defaults.len() != self.joint_count {
            return false;
        }
        self.codec.decode_pose(self.position(t), defaults, out)
    }

    /// Index range of this clip's curves in [`Package::curves`].
    pub fn curve_range(&self) -> std::ops::Range<usize> {
        self.curves.clone()
    }
}

/// A loaded, validated package.
#[derive(Clone, Debug)]
pub struct Package<'a> {
    pub format_version: u32,
    pub meta: Meta<'a>,
    skeleton: Skeleton,
    strings: Strings<'a>,
    clips: Vec<Clip<'a>>,
    curves: Vec<CurveChannel<'a>>,
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
    /// identity), clips (fields, codec blobs) and curves.
    pub fn load(bytes: &'a [u8]) -> Result<Package<'a>, PackageError> {
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
        let stored = file.u64(32)?;
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

    /// Everything after the checksum. Separate so that robustness tests can
    /// exercise the structural validation behind a recomputed checksum.
    fn load_unchecked_checksum(bytes: &'a [u8], version: u32) -> Result<Package<'a>, PackageError> {
        let file = Bytes {
            b: bytes,
            what: "section table",
        };
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
            if s.offset % ALIGN as u64 != 0 {
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

        let meta_sec = section(SECTION_META, "META")?;
        let str_at = |sec: &Bytes<'a>, at: u64, what: &str| -> Result<&'a str, PackageError> {
            let i = sec.u32(at)?;
            strings.check(i, what)?;
            Ok(strings.get(i))
        };
        let meta = Meta {
            cooker_version: str_at(&meta_sec, 0, "meta cooker version")?,
            asset_name: str_at(&meta_sec, 4, "meta asset name")?,
            source_path: str_at(&meta_sec, 8, "meta source path")?,
            source_hash: meta_sec.hash32(16)?,
        };

        let skeleton = parse_skeleton(section(SECTION_SKELETON, "SKEL")?, &strings)?;
        let joint_count = skeleton.joint_count();

        let data = section(SECTION_DATA, "DATA")?;
        let curves_sec = section(SECTION_CURVES, "CURV")?;
        let curve_count = curves_sec.u32(0)? as u64;
        if curve_count > curves_sec.b.len() as u64 / CURVE_RECORD_SIZE as u64 {
            return Err(invalid("curve count exceeds section size"));
        }
        let mut curves = Vec::with_capacity(curve_count as usize);
        for i in 0..curve_count {
            let at = 16 + i * CURVE_RECORD_SIZE as u64;
            let name = str_at(&curves_sec, at + 8, "curve name")?;
            let flags = curves_sec.u32(at + 12)?;
            if flags > CURVE_INTERP_STEP {
                return Err(invalid(format!(
                    "curve '{name}' has unknown interpolation {flags}"
                )));
            }
            let default = curves_sec.f32(at + 16)?;
            let n = curves_sec.u32(at + 20)? as u64;
            let off = curves_sec.u64(at + 24)?;
            if off % 4 != 0 {
                return Err(invalid(format!("curve '{name}' data misaligned")));
            }
            curves.push(CurveChannel {
                id: curves_sec.u64(at)?,
                name,
                default,
                step: flags == CURVE_INTERP_STEP,
                data: data.range(
                    off,
                    n.checked_mul(4)
                        .ok_or_else(|| invalid("curve size overflows"))?,
                )?,
            });
        }

        let clips_sec = section(SECTION_CLIPS, "CLIP")?;
        let clip_count = clips_sec.u32(0)? as u64;
        if clip_count > clips_sec.b.len() as u64 / CLIP_RECORD_SIZE as u64 {
            return Err(invalid("clip count exceeds section size"));
        }
        let mut clips = Vec::with_capacity(clip_count as usize);
        for i in 0..clip_count {
            let at = 16 + i * CLIP_RECORD_SIZE as u64;
            let c = &clips_sec;
            let name = str_at(c, at, "clip name")?;
            let duration_s = c.f32(at + 8)?;
            let sample_rate_hz = c.f32(at + 12)?;
            let num_samples = c.u32(at + 16)?;
            let loop_mode = LoopMode::from_u8(c.u8(at + 20)?)
                .ok_or_else(|| invalid(format!("clip '{name}' has an unknown loop mode")))?;
            let codec_raw = c.u16(at + 22)?;
            let codec_version = c.u16(at + 24)?;
            let profile = str_at(c, at + 28, "clip profile")?;
            let blob_off = c.u64(at + 32)?;
            let blob_size = c.u64(at + 40)?;
            let curve_first = c.u32(at + 48)? as usize;
            let curve_n = c.u32(at + 52)? as usize;
            let resample_error_m = c.f32(at + 56)?;
            let max_error_m = c.f32(at + 60)?;
            let source_hash = c.hash32(at + 64)?;
            if !(duration_s.is_finite() && duration_s >= 0.0) {
                return Err(invalid(format!("clip '{name}' has duration {duration_s}")));
            }
            if !(sample_rate_hz.is_finite() && sample_rate_hz > 0.0) {
                return Err(invalid(format!(
                    "clip '{name}' has sample rate {sample_rate_hz}"
                )));
            }
            if num_samples == 0 {
                return Err(invalid(format!("clip '{name}' has no samples")));
            }
            // The grid must cover the duration (with float slack).
            let covered = (num_samples - 1) as f32 / sample_rate_hz;
            if covered + 1e-3 / sample_rate_hz < duration_s {
                return Err(invalid(format!(
                    "clip '{name}': {num_samples} samples at {sample_rate_hz} Hz do not cover {duration_s} s"
                )));
            }
            if blob_off % ALIGN as u64 != 0 {
                return Err(invalid(format!(
                    "clip '{name}' blob is not {ALIGN}-byte aligned"
                )));
            }
            let codec_id = CodecId::from_u16(codec_raw).ok_or_else(|| PackageError::Codec {
                clip: name.to_string(),
                source: CodecError::UnknownCodec(codec_raw),
            })?;
            let blob = data.range(blob_off, blob_size)?;
            let codec = ClipCodec::parse(codec_id, codec_version, blob, joint_count, num_samples)
                .map_err(|source| PackageError::Codec {
                clip: name.to_string(),
                source,
            })?;
            let curve_end = curve_first
                .checked_add(curve_n)
                .filter(|&e| e <= curves.len())
                .ok_or_else(|| invalid(format!("clip '{name}' curve range out of bounds")))?;
            for ch in &curves[curve_first..curve_end] {
                if ch.num_samples() != num_samples as usize {
                    return Err(invalid(format!(
                        "clip '{name}' curve '{}' has {} samples, clip has {num_samples}",
                        ch.name,
                        ch.num_samples()
                    )));
                }
            }
            clips.push(Clip {
                name,
                duration_s,
                sample_rate_hz,
                num_samples,
                loop_mode,
                codec_id,
                codec_version,
                profile,
                source_hash,
                resample_error_m,
                max_error_m,
                blob_size: blob_size as usize,
                codec,
                curves: curve_first..curve_end,
                joint_count,
            });
        }

        Ok(Package {
            format_version: version,
            meta,
            skeleton,
            strings,
            clips,
            curves,
        })
    }

    pub fn skeleton(&self) -> &Skeleton {
        &self.skeleton
    }
    pub fn clips(&self) -> &[Clip<'a>] {
        &self.clips
    }
    pub fn clip(&self, name: &str) -> Option<&Clip<'a>> {
        self.clips.iter().find(|c| c.name == name)
    }
    pub fn curves(&self) -> &[CurveChannel<'a>] {
        &self.curves
    }
    pub fn clip_curves(&self, clip: &Clip<'a>) -> &[CurveChannel<'a>] {
        self.curves.get(clip.curve_range()).unwrap_or(&[])
    }
    pub fn strings(&self) -> &Strings<'a> {
        &self.strings
    }
}

fn parse_skeleton(sec: Bytes<'_>, strings: &Strings<'_>) -> Result<Skeleton, PackageError> {
    let n = sec.u32(0)? as u64;
    if n == 0 {
        return Err(PackageError::Skeleton(SkeletonError::Empty));
    }
    if n > sec.b.len() as u64 / JOINT_RECORD_SIZE as u64 {
        return Err(invalid("joint count exceeds section size"));
    }
    let mut stored_identity = [0u8; 16];
    stored_identity.copy_from_slice(sec.range(8, 16)?);
    let mut parents = Vec::with_capacity(n as usize);
    let mut ends = Vec::with_capacity(n as usize);
    let mut ids = Vec::with_capacity(n as usize);
    let mut rest = Vec::with_capacity(n as usize);
    let mut names = Vec::with_capacity(n as usize);
    for j in 0..n {
        let at = SKELETON_HEADER_SIZE as u64 + j * JOINT_RECORD_SIZE as u64;
        parents.push(sec.u32(at)?);
        ends.push(sec.u32(at + 4)?);
        ids.push(JointId(sec.u64(at + 8)?));
        let f = |k: u64| sec.f32(at + 16 + k * 4);
        rest.push(Transform {
            rotation: Quat::from_xyzw(f(0)?, f(1)?, f(2)?, f(3)?),
            translation: Vec3::new(f(4)?, f(5)?, f(6)?),
            scale: Vec3::new(f(7)?, f(8)?, f(9)?),
        });
        let name = sec.u32(at + 56)?;
        strings.check(name, "joint name")?;
        names.push(strings.get(name).to_string());
    }
    let skeleton = Skeleton::new(parents, ids, rest, names)?;
    if skeleton.subtree_ends() != ends.as_slice() {
        return Err(invalid("stored subtree ends disagree with the hierarchy"));
    }
    if skeleton.identity() != SkeletonIdentity(stored_identity) {
        return Err(invalid(
            "stored skeleton identity disagrees with its contents",
        ));
    }
    Ok(skeleton)
}

#[doc(hidden)]
/// Structural validation without the checksum, for robustness tests that
/// corrupt bytes and must reach the deeper checks.
pub fn load_ignoring_checksum(bytes: &[u8]) -> Result<Package<'_>, PackageError> {
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
    let file_size = file.u64(16)?;
    if file_size != bytes.len() as u64 {
        return Err(PackageError::Truncated {
            what: "package",
            start: 0,
            end: file_size,
            len: bytes.len(),
        });
    }
    Package::load_unchecked_checksum(bytes, version)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[0..8].copy_from_slice(&MAGIC);
        b[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[12..16].copy_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
        b[16..24].copy_from_slice(&(len as u64).to_le_bytes());
        b
    }

    #[test]
    fn short_file_declaring_its_own_size_is_truncated_not_a_panic() {
        for len in [24, 40, 63] {
            assert!(matches!(
                Package::load(&header(len)),
                Err(PackageError::Truncated { .. })
            ));
        }
    }

    #[test]
    fn string_offsets_out_of_order_are_invalid() {
        // count 2, offsets [0, 40000, 3], 3 bytes of data.
        let mut sec = Vec::new();
        for v in [2u32, 0, 40_000, 3] {
            sec.extend_from_slice(&v.to_le_bytes());
        }
        sec.extend_from_slice(b"abc");
        let r = Strings::parse(Bytes {
            b: &sec,
            what: "STRS",
        });
        assert!(matches!(r, Err(PackageError::Invalid(_))));
    }
}
