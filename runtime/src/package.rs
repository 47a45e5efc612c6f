//! Package v2 reader. The byte layout is specified in
//! `schemas/package-format.md`; this module is its reference reader.
//!
//! [`Package::load`] validates every count, offset, alignment, size, string
//! and codec blob before returning a view; afterwards sampling trusts only
//! what was validated. Any byte string gives either a valid package or a
//! typed [`PackageError`] — never a panic, never an out-of-bounds read.
//! Loading allocates (the clip table, the skeleton, decoded root-motion
//! keys and events); sampling, curve evaluation, trajectory deltas and
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
//! event checks are the runtime's own constructors
//! ([`Trajectory::new`], [`EventTrack::new`]): a package whose data they
//! would refuse does not load.

use crate::additive::ADDITIVE_IDENTITY;
use crate::codec::{ClipCodec, CodecError, CodecId};
use crate::events::{Event, EventTrack};
use crate::hash::fnv1a64;
use crate::math::{Quat, Transform, Vec3};
use crate::root_motion::{trajectory_key_count, RigidTransform, Trajectory};
use crate::skeleton::{JointId, Skeleton, SkeletonError, SkeletonIdentity};
use crate::timing::{sample_position, LoopMode, SamplePosition};

/// Layout constants shared with the cooker's writer.
pub mod format {
    pub const MAGIC: [u8; 8] = *b"LUDANIM\0";
    pub const FORMAT_VERSION: u32 = 2;
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
    pub const SECTION_EVENTS: u32 = fourcc(b"EVNT");

    pub const META_SIZE: usize = 48;
    pub const SKELETON_HEADER_SIZE: usize = 24;
    /// Bytes per joint in SKEL: parent u32, subtree end u32, id u64,
    /// rest 10 x f32, name u32.
    pub const JOINT_RECORD_SIZE: usize = 4 + 4 + 8 + 40 + 4;
    pub const CLIP_RECORD_SIZE: usize = 176;
    /// Bytes per curve channel in CURV (see [`super::CurveChannel`]).
    pub const CURVE_RECORD_SIZE: usize = 48;
    /// Bytes per event in EVNT: time f32, flags u32, id u64, name u32,
    /// reserved u32.
    pub const EVENT_RECORD_SIZE: usize = 24;
    /// Bytes per trajectory key in DATA: rotation xyzw, translation xyz.
    pub const TRAJECTORY_KEY_SIZE: usize = 28;
    /// No string index.
    pub const NO_STRING: u32 = u32::MAX;

    /// Curve record interpolation byte.
    pub const CURVE_INTERP_LINEAR: u8 = 0;
    pub const CURVE_INTERP_STEP: u8 = 1;
    /// Curve record composition byte.
    pub const CURVE_COMPOSE_BLEND: u8 = 0;
    pub const CURVE_COMPOSE_OVERRIDE: u8 = 1;
    pub const CURVE_COMPOSE_ADDITIVE: u8 = 2;
    pub const CURVE_COMPOSE_MAX: u8 = 3;
    /// Curve record flags byte: bit 0 clamps decoded values to the range.
    pub const CURVE_FLAG_CLAMP: u8 = 1 << 0;
    pub const CURVE_FLAGS_KNOWN: u8 = CURVE_FLAG_CLAMP;
    /// Widest quantized sample; width [`CURVE_BITS_RAW`] stores raw f32.
    pub const CURVE_MAX_QUANT_BITS: u8 = 24;
    pub const CURVE_BITS_RAW: u8 = 32;

    /// Whether `bits` is a valid curve sample width: 0 (constant),
    /// 1..=24 (quantized) or 32 (raw f32).
    pub const fn curve_bits_valid(bits: u8) -> bool {
        bits <= CURVE_MAX_QUANT_BITS || bits == CURVE_BITS_RAW
    }

    /// Exact byte size of a curve's sample data: `ceil(count * bits / 8)`.
    pub const fn curve_data_size(count: u32, bits: u8) -> u64 {
        (count as u64 * bits as u64).div_ceil(8)
    }

    /// Decoder step of a quantized width: `extent / (2^bits - 1)` (0 for
    /// widths 0 and 32, which do not dequantize).
    pub fn curve_scale(extent: f32, bits: u8) -> f32 {
        if bits == 0 || bits > CURVE_MAX_QUANT_BITS {
            0.0
        } else {
            extent / ((1u32 << bits) - 1) as f32
        }
    }

    /// The decoded value of quantized sample `q`: `min + q * scale`, with
    /// `scale` from [`curve_scale`]. The cooker measures its error with this
    /// same function, so cook-time and run-time values are bit-identical.
    #[inline]
    pub fn curve_dequantize(min: f32, scale: f32, q: u32) -> f32 {
        min + q as f32 * scale
    }

    /// Clip record flags.
    pub const CLIP_FLAG_ADDITIVE: u32 = 1 << 0;
    pub const CLIP_FLAG_ROOT_MOTION: u32 = 1 << 1;
    pub const CLIP_FLAG_LOOP_SEAM: u32 = 1 << 2;
    pub const CLIP_FLAG_DRIFT: u32 = 1 << 3;
    pub const CLIP_FLAGS_KNOWN: u32 =
        CLIP_FLAG_ADDITIVE | CLIP_FLAG_ROOT_MOTION | CLIP_FLAG_LOOP_SEAM | CLIP_FLAG_DRIFT;

    /// Root-motion policy byte of a clip record.
    pub const ROOT_MOTION_NONE: u8 = 0;
    pub const ROOT_MOTION_PLANAR: u8 = 1;
    pub const ROOT_MOTION_FULL: u8 = 2;

    /// Event record flags.
    pub const EVENT_FLAG_REVERSIBLE: u32 = 1 << 0;
    pub const EVENT_FLAG_SYNC_MARKER: u32 = 1 << 1;
    pub const EVENT_FLAGS_KNOWN: u32 = EVENT_FLAG_REVERSIBLE | EVENT_FLAG_SYNC_MARKER;
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

/// How a curve channel combines with the same channel from other sources
/// (layers, blend-tree inputs). The runtime stores it; the animation
/// graph applies it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum CurveComposition {
    /// Weighted average with the other inputs (the default).
    #[default]
    Blend,
    /// The highest-priority input replaces the others.
    Override,
    /// Added (times its weight) to the result of the lower layers.
    Additive,
    /// The largest input wins.
    Max,
}

impl CurveComposition {
    pub fn as_u8(self) -> u8 {
        match self {
            CurveComposition::Blend => CURVE_COMPOSE_BLEND,
            CurveComposition::Override => CURVE_COMPOSE_OVERRIDE,
            CurveComposition::Additive => CURVE_COMPOSE_ADDITIVE,
            CurveComposition::Max => CURVE_COMPOSE_MAX,
        }
    }
    pub fn from_u8(v: u8) -> Option<CurveComposition> {
        match v {
            CURVE_COMPOSE_BLEND => Some(CurveComposition::Blend),
            CURVE_COMPOSE_OVERRIDE => Some(CurveComposition::Override),
            CURVE_COMPOSE_ADDITIVE => Some(CurveComposition::Additive),
            CURVE_COMPOSE_MAX => Some(CurveComposition::Max),
            _ => None,
        }
    }
    /// The schema name: "blend", "override", "additive" or "max".
    pub fn as_str(self) -> &'static str {
        match self {
            CurveComposition::Blend => "blend",
            CurveComposition::Override => "override",
            CurveComposition::Additive => "additive",
            CurveComposition::Max => "max",
        }
    }
    pub fn parse(s: &str) -> Option<CurveComposition> {
        [
            CurveComposition::Blend,
            CurveComposition::Override,
            CurveComposition::Additive,
            CurveComposition::Max,
        ]
        .into_iter()
        .find(|c| c.as_str() == s)
    }
}

/// One scalar curve channel (a morph weight, a custom property), sampled on
/// its clip's grid and stored quantized: each sample is `bits` wide in an
/// LSB-first bit stream and decodes as `min + q * extent / (2^bits - 1)`;
/// width 0 is a constant channel (every sample is `min`, no data) and
/// width 32 stores raw f32. Validated at load; decoding never allocates.
#[derive(Clone, Copy, Debug)]
pub struct CurveChannel<'a> {
    pub id: u64,
    pub name: &'a str,
    /// Schema: the value when the channel is absent from a clip.
    pub default: f32,
    /// Schema: step interpolation (hold sample `i0`) instead of linear.
    pub step: bool,
    /// Schema: how the channel combines with other sources.
    pub composition: CurveComposition,
    /// Schema: the channel's value range `[lo, hi]` (`lo <= hi`; either
    /// may be infinite for an unbounded side).
    pub range: (f32, f32),
    /// Schema: decoded values are clamped to `range`.
    pub clamp: bool,
    bits: u8,
    count: u32,
    min: f32,
    extent: f32,
    /// `extent / (2^bits - 1)`, precomputed at load.
    scale: f32,
    data: &'a [u8],
}

impl<'a> CurveChannel<'a> {
    pub fn num_samples(&self) -> usize {
        self.count as usize
    }
    /// Stored sample width: 0 (constant), 1..=24 (quantized) or 32 (raw).
    pub fn bits(&self) -> u8 {
        self.bits
    }
    /// Quantization range start (the constant for width 0; 0 for raw).
    pub fn min(&self) -> f32 {
        self.min
    }
    /// Quantization range extent (0 for widths 0 and 32).
    pub fn extent(&self) -> f32 {
        self.extent
    }
    /// Bytes of sample data in DATA: `ceil(count * bits / 8)`.
    pub fn data_size(&self) -> usize {
        self.data.len()
    }

    /// The stored sample `i` (before clamping); `None` out of range.
    #[inline]
    fn stored(&self, i: u32) -> Option<f32> {
        if i >= self.count {
            return None;
        }
        match self.bits {
            0 => Some(self.min),
            CURVE_BITS_RAW => {
                let at = i as usize * 4;
                let b = self.data.get(at..at + 4)?;
                Some(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            bits => {
                // Bits [i * bits, (i + 1) * bits) of the LSB-first stream
                // span at most 4 bytes (bits <= 24, shift <= 7).
                let bit = i as u64 * bits as u64;
                let first = (bit / 8) as usize;
                let mut word = 0u32;
                for k in 0..4 {
                    if let Some(&b) = self.data.get(first + k) {
                        word |= (b as u32) << (8 * k);
                    }
                }
                let q = (word >> (bit % 8)) & ((1u32 << bits) - 1);
                Some(curve_dequantize(self.min, self.scale, q))
            }
        }
    }

    /// Value at sample `i`, clamped to the range if the schema says so
    /// (out of range gives the default).
    #[inline]
    pub fn value(&self, i: u32) -> f32 {
        match self.stored(i) {
            Some(v) if self.clamp => v.max(self.range.0).min(self.range.1),
            Some(v) => v,
            None => self.default,
        }
    }

    /// Value at a sample position: sample `i0` for step channels, else the
    /// lerp of samples `i0` and `i1` by `alpha`.
    #[inline]
    pub fn evaluate(&self, pos: SamplePosition) -> f32 {
        let a = self.value(pos.i0);
        if self.step || pos.alpha == 0.0 {
            return a;
        }
        let b = self.value(pos.i1);
        a + (b - a) * pos.alpha
    }
}

/// One CURV record, validated on its own (the sample count is checked
/// against the owning clip's later).
fn parse_curve<'a>(
    sec: &Bytes<'a>,
    at: u64,
    data: &Bytes<'a>,
    strings: &Strings<'a>,
) -> Result<CurveChannel<'a>, PackageError> {
    let id = sec.u64(at)?;
    let name_index = sec.u32(at + 8)?;
    strings.check(name_index, "curve name")?;
    let name = strings.get(name_index);
    let interp = sec.u8(at + 12)?;
    let compose = sec.u8(at + 13)?;
    let bits = sec.u8(at + 14)?;
    let flags = sec.u8(at + 15)?;
    let default = sec.f32(at + 16)?;
    let lo = sec.f32(at + 20)?;
    let hi = sec.f32(at + 24)?;
    let count = sec.u32(at + 28)?;
    let min = sec.f32(at + 32)?;
    let extent = sec.f32(at + 36)?;
    let off = sec.u64(at + 40)?;
    let bad = |what: String| invalid(format!("curve '{name}' {what}"));
    if interp > CURVE_INTERP_STEP {
        return Err(bad(format!("has unknown interpolation {interp}")));
    }
    let composition = CurveComposition::from_u8(compose)
        .ok_or_else(|| bad(format!("has unknown composition {compose}")))?;
    if flags & !CURVE_FLAGS_KNOWN != 0 {
        return Err(bad(format!("has unknown flags {flags:#x}")));
    }
    if !default.is_finite() {
        return Err(bad(format!("has default {default}")));
    }
    if lo.is_nan() || hi.is_nan() || lo > hi {
        return Err(bad(format!("has range [{lo}, {hi}]")));
    }
    if !curve_bits_valid(bits) {
        return Err(bad(format!("has sample width {bits} (0..=24 or 32)")));
    }
    if !(min.is_finite() && extent.is_finite() && extent >= 0.0) {
        return Err(bad(format!("has quantization range {min} + {extent}")));
    }
    // Widths that do not dequantize store no extent (raw: no min either).
    let unused_nonzero = match bits {
        0 => extent.to_bits() != 0,
        CURVE_BITS_RAW => min.to_bits() != 0 || extent.to_bits() != 0,
        _ => false,
    };
    if unused_nonzero {
        return Err(bad(format!(
            "stores a quantization range its width {bits} does not use"
        )));
    }
    let size = curve_data_size(count, bits);
    if size == 0 && off != 0 {
        return Err(bad("has no sample data but a data offset".to_string()));
    }
    if off % 4 != 0 {
        return Err(bad("data misaligned".to_string()));
    }
    let bytes = data.range(off, size)?;
    // The stream's padding bits (past count * bits) are zero.
    let used = (count as u64 * bits as u64) % 8;
    if used != 0 && bytes.last().is_some_and(|&b| b >> used != 0) {
        return Err(bad("has non-zero padding bits".to_string()));
    }
    Ok(CurveChannel {
        id,
        name,
        default,
        step: interp == CURVE_INTERP_STEP,
        composition,
        range: (lo, hi),
        clamp: flags & CURVE_FLAG_CLAMP != 0,
        bits,
        count,
        min,
        extent,
        scale: curve_scale(extent, bits),
        data: bytes,
    })
}

/// How a clip's motion root was extracted into its trajectory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RootMotionPolicy {
    /// Ground-plane translation (x, z) and heading (yaw about +Y).
    Planar,
    /// The whole rigid transform of the motion joint (scale removed).
    Full,
}

impl RootMotionPolicy {
    pub fn as_u8(self) -> u8 {
        match self {
            RootMotionPolicy::Planar => ROOT_MOTION_PLANAR,
            RootMotionPolicy::Full => ROOT_MOTION_FULL,
        }
    }
    pub fn from_u8(v: u8) -> Option<RootMotionPolicy> {
        match v {
            ROOT_MOTION_PLANAR => Some(RootMotionPolicy::Planar),
            ROOT_MOTION_FULL => Some(RootMotionPolicy::Full),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            RootMotionPolicy::Planar => "planar",
            RootMotionPolicy::Full => "full",
        }
    }
}

/// What an authored marker is for. Both kinds are delivered as
/// [`Event`]s; the kind tells a sync group which markers are gait contacts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum MarkerKind {
    /// A named contact marker for locomotion synchronization.
    SyncMarker,
    /// A notify (sound, VFX, presentation), delivered once per crossing.
    Event,
}

impl MarkerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MarkerKind::SyncMarker => "sync-marker",
            MarkerKind::Event => "event",
        }
    }
}

/// A clip's root-motion description (the keys are behind
/// [`Clip::trajectory`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMotion<'a> {
    /// Debug name of the designated motion joint (a skeleton joint).
    pub joint: &'a str,
    pub policy: RootMotionPolicy,
    /// The trajectory's original first key: `R_char(t) = offset * R(t)`
    /// places the character in the authored frame.
    pub reference_offset: RigidTransform,
    /// Cook-time figure: position error of per-tick (30 Hz) delta
    /// composition over 100 loops against `C^100` (looping clips only).
    pub drift_100_loops_m: Option<f32>,
}

/// One marker with its debug name and kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Marker<'a> {
    pub event: Event,
    pub name: &'a str,
    pub kind: MarkerKind,
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
    /// Cook-time figure for looping clips: how far the last authored pose
    /// was from the first (component space, virtual vertices, meters).
    pub loop_seam_error_m: Option<f32>,
    /// Root motion, if the cooker extracted it.
    pub root_motion: Option<RootMotion<'a>>,
    curves: std::ops::Range<usize>,
    joint_count: usize,
    additive_reference: Option<&'a str>,
    /// Decoded at load (package bytes need not be aligned for
    /// `RigidTransform`); validated through `Trajectory::new`.
    trajectory_keys: Vec<RigidTransform>,
    trajectory_rate_hz: f32,
    /// Validated through `EventTrack::new`; `markers[i]` names `events[i]`.
    events: Vec<Event>,
    marker_info: Vec<(&'a str, MarkerKind)>,
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

    /// Sample only `joints` (skeleton indices) at time `t`: `out[k]` is
    /// joint `joints[k]`'s local transform. No allocation; false if a
    /// length or index is wrong.
    pub fn sample_joints(
        &self,
        t: f32,
        defaults: &[Transform],
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        if defaults.len() != self.joint_count {
            return false;
        }
        self.codec
            .decode_joints(self.position(t), defaults, joints, out)
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

    /// The clip's static pose for [`Clip::sample_static`]: the value of
    /// every track that is not animated. Compute it once per clip and
    /// `defaults` (when the clip is bound to a skeleton) into caller-owned
    /// memory. False if a length is wrong.
    pub fn static_pose(&self, defaults: &[Transform], out: &mut [Transform]) -> bool {
        defaults.len() == self.joint_count && self.codec.static_pose(defaults, out)
    }

    /// [`Clip::sample`] that starts from the clip's [`Clip::static_pose`]
    /// and decodes only the animated tracks: the same pose, faster when
    /// many tracks are default or constant (most rigs). No allocation.
    /// False if a length is wrong.
    #[inline]
    pub fn sample_static(&self, t: f32, static_pose: &[Transform], out: &mut [Transform]) -> bool {
        self.codec
            .decode_pose_static(self.position(t), static_pose, out)
    }

    /// Index range of this clip's curves in [`Package::curves`].
    pub fn curve_range(&self) -> std::ops::Range<usize> {
        self.curves.clone()
    }

    /// Whether the clip holds additive deltas (Ludus convention, see
    /// [`crate::additive`]) rather than a pose. Decode it with
    /// [`Package::sample_defaults`] so untracked joints read as
    /// [`ADDITIVE_IDENTITY`].
    pub fn is_additive(&self) -> bool {
        self.additive_reference.is_some()
    }

    /// The named, revisioned reference the deltas were made against
    /// (e.g. `rest rev 0123…`); "" for a non-additive clip.
    pub fn additive_reference(&self) -> &'a str {
        self.additive_reference.unwrap_or("")
    }

    /// The root trajectory, if the clip has one. Borrows the keys decoded
    /// at load; re-runs the (allocation-free, `O(keys)`) validation load
    /// already passed, so hold the result for a whole update.
    pub fn trajectory(&self) -> Option<Trajectory<'_>> {
        self.root_motion?;
        Trajectory::new(
            &self.trajectory_keys,
            self.trajectory_rate_hz,
            self.duration_s,
        )
        .ok()
    }

    /// The clip's markers and events as a track for
    /// [`crate::events::crossed_events`] (looping per the loop mode).
    /// Validated at load; re-validation here is allocation-free `O(events)`.
    pub fn event_track(&self) -> EventTrack<'_> {
        const NO_EVENTS: &[Event] = &[];
        EventTrack::new(&self.events, self.duration_s, self.loop_mode.is_looping())
            // Only reachable if a caller edited the public fields of a
            // loaded clip: an empty track is the safe answer.
            .or_else(|_| EventTrack::new(NO_EVENTS, 0.0, false))
            .expect("an empty event track on a zero duration is always valid")
    }

    /// The debug name of the marker with author id `id`.
    pub fn event_name(&self, id: u64) -> Option<&'a str> {
        self.events
            .iter()
            .zip(&self.marker_info)
            .find(|(e, _)| e.id == id)
            .map(|(_, &(name, _))| name)
    }

    /// Every marker in track order with its name and kind.
    pub fn markers(&self) -> impl Iterator<Item = Marker<'a>> + '_ {
        self.events
            .iter()
            .zip(&self.marker_info)
            .map(|(&event, &(name, kind))| Marker { event, name, kind })
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
    /// `joint_count` copies of [`ADDITIVE_IDENTITY`]: the defaults additive
    /// clips decode missing tracks with.
    additive_defaults: Vec<Transform>,
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
    /// `Trajectory::new`, event range through `EventTrack::new`).
    pub fn load(bytes: &'a [u8]) -> Result<Package<'a>, PackageError> {
        let version = check_header(bytes)?;
        let file = Bytes {
            b: bytes,
            what: "header",
        };
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
            curves.push(parse_curve(&curves_sec, at, &data, &strings)?);
        }

        let events = parse_events(section(SECTION_EVENTS, "EVNT")?, &strings)?;

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
            let flags = c.u32(at + 4)?;
            let duration_s = c.f32(at + 8)?;
            let sample_rate_hz = c.f32(at + 12)?;
            let num_samples = c.u32(at + 16)?;
            let loop_mode = LoopMode::from_u8(c.u8(at + 20)?)
                .ok_or_else(|| invalid(format!("clip '{name}' has an unknown loop mode")))?;
            let policy_raw = c.u8(at + 21)?;
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
            if flags & !CLIP_FLAGS_KNOWN != 0 {
                return Err(invalid(format!(
                    "clip '{name}' has unknown flags {flags:#x}"
                )));
            }
            if c.u16(at + 26)? != 0 || c.range(at + 164, 12)?.iter().any(|&b| b != 0) {
                return Err(invalid(format!(
                    "clip '{name}' has non-zero reserved bytes"
                )));
            }
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
            if loop_mode == LoopMode::LoopWrap {
                // No duplicated end sample: the grid's span plus the seam
                // interval is exactly the duration.
                let span = num_samples as f64 / sample_rate_hz as f64;
                if (span - duration_s as f64).abs() > 1e-3 / sample_rate_hz as f64 {
                    return Err(invalid(format!(
                        "clip '{name}': wrap loop with {num_samples} samples at {sample_rate_hz} Hz needs duration {span} s, not {duration_s} s"
                    )));
                }
            } else {
                // The grid must cover the duration (with float slack).
                let covered = (num_samples - 1) as f32 / sample_rate_hz;
                if covered + 1e-3 / sample_rate_hz < duration_s {
                    return Err(invalid(format!(
                        "clip '{name}': {num_samples} samples at {sample_rate_hz} Hz do not cover {duration_s} s"
                    )));
                }
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

            // Additive reference.
            let additive_index = c.u32(at + 96)?;
            let additive_reference = if flags & CLIP_FLAG_ADDITIVE != 0 {
                if additive_index == NO_STRING {
                    return Err(invalid(format!(
                        "additive clip '{name}' names no reference"
                    )));
                }
                Some(str_at(c, at + 96, "clip additive reference")?)
            } else {
                if additive_index != NO_STRING {
                    return Err(invalid(format!(
                        "clip '{name}' names an additive reference but is not additive"
                    )));
                }
                None
            };

            // Loop seam figure.
            let seam = c.f32(at + 160)?;
            let loop_seam_error_m = if flags & CLIP_FLAG_LOOP_SEAM != 0 {
                if !(seam.is_finite() && seam >= 0.0) {
                    return Err(invalid(format!("clip '{name}' has loop seam error {seam}")));
                }
                Some(seam)
            } else {
                if seam.to_bits() != 0 {
                    return Err(invalid(format!(
                        "clip '{name}' stores a seam error without its flag"
                    )));
                }
                None
            };

            // Root motion.
            let (root_motion, trajectory_keys, trajectory_rate_hz) = parse_root_motion(
                c, at, flags, policy_raw, name, duration_s, &data, &strings, &skeleton,
            )?;

            // Events.
            let event_first = c.u32(at + 152)? as usize;
            let event_n = c.u32(at + 156)? as usize;
            let clip_events = event_first
                .checked_add(event_n)
                .and_then(|e| events.get(event_first..e))
                .ok_or_else(|| invalid(format!("clip '{name}' event range out of bounds")))?;
            let ev: Vec<Event> = clip_events.iter().map(|m| m.event).collect();
            EventTrack::new(&ev, duration_s, loop_mode.is_looping())
                .map_err(|e| invalid(format!("clip '{name}' events: {e}")))?;
            let marker_info = clip_events.iter().map(|m| (m.name, m.kind)).collect();

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
                loop_seam_error_m,
                root_motion,
                curves: curve_first..curve_end,
                joint_count,
                additive_reference,
                trajectory_keys,
                trajectory_rate_hz,
                events: ev,
                marker_info,
            });
        }

        Ok(Package {
            format_version: version,
            meta,
            skeleton,
            strings,
            clips,
            curves,
            additive_defaults: vec![ADDITIVE_IDENTITY; joint_count],
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

    /// The `defaults` to pass to [`Clip::sample`] for `clip`: the rest pose
    /// for a pose clip, [`ADDITIVE_IDENTITY`] for every joint of an
    /// additive clip (seed: an additive sample's missing tracks are the
    /// additive identity, never the rest pose).
    pub fn sample_defaults(&self, clip: &Clip<'_>) -> &[Transform] {
        if clip.is_additive() {
            &self.additive_defaults
        } else {
            self.skeleton.rest_pose()
        }
    }
}

/// One EVNT record, validated on its own (the per-clip track checks run
/// through [`EventTrack::new`] once the owning clip is known).
struct EventRecord<'a> {
    event: Event,
    name: &'a str,
    kind: MarkerKind,
}

fn parse_events<'a>(
    sec: Bytes<'a>,
    strings: &Strings<'a>,
) -> Result<Vec<EventRecord<'a>>, PackageError> {
    let count = sec.u32(0)? as u64;
    if count > sec.b.len() as u64 / EVENT_RECORD_SIZE as u64 {
        return Err(invalid("event count exceeds section size"));
    }
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = 16 + i * EVENT_RECORD_SIZE as u64;
        let time_s = sec.f32(at)?;
        let flags = sec.u32(at + 4)?;
        let id = sec.u64(at + 8)?;
        let name_index = sec.u32(at + 16)?;
        if flags & !EVENT_FLAGS_KNOWN != 0 || sec.u32(at + 20)? != 0 {
            return Err(invalid(format!(
                "event {i} has unknown flags or reserved bits"
            )));
        }
        if name_index == NO_STRING {
            return Err(invalid(format!("event {i} has no name")));
        }
        strings.check(name_index, "event name")?;
        let name = strings.get(name_index);
        // The id is defined as the name's hash: a mismatch is corruption.
        if fnv1a64(name.as_bytes()) != id {
            return Err(invalid(format!(
                "event {i} id {id:016x} is not the FNV-1a 64 of its name '{name}'"
            )));
        }
        out.push(EventRecord {
            event: Event {
                time_s,
                id,
                reversible: flags & EVENT_FLAG_REVERSIBLE != 0,
            },
            name,
            kind: if flags & EVENT_FLAG_SYNC_MARKER != 0 {
                MarkerKind::SyncMarker
            } else {
                MarkerKind::Event
            },
        });
    }
    Ok(out)
}

/// The root-motion fields of clip record `at`: (description, decoded keys,
/// key rate). A clip without root motion must leave every field zero (and
/// the joint name "none").
#[allow(clippy::too_many_arguments)]
fn parse_root_motion<'a>(
    c: &Bytes<'a>,
    at: u64,
    flags: u32,
    policy_raw: u8,
    name: &str,
    duration_s: f32,
    data: &Bytes<'a>,
    strings: &Strings<'a>,
    skeleton: &Skeleton,
) -> Result<(Option<RootMotion<'a>>, Vec<RigidTransform>, f32), PackageError> {
    let joint_index = c.u32(at + 100)?;
    let f = |k: u64| c.f32(at + 104 + k * 4);
    let offset = RigidTransform::new(
        Quat::from_xyzw(f(0)?, f(1)?, f(2)?, f(3)?),
        Vec3::new(f(4)?, f(5)?, f(6)?),
    );
    let key_count = c.u32(at + 132)?;
    let rate = c.f32(at + 136)?;
    let drift = c.f32(at + 140)?;
    let keys_off = c.u64(at + 144)?;
    if flags & CLIP_FLAG_ROOT_MOTION == 0 {
        let zero = policy_raw == ROOT_MOTION_NONE
            && joint_index == NO_STRING
            && key_count == 0
            && keys_off == 0
            && flags & CLIP_FLAG_DRIFT == 0
            && [rate, drift].iter().all(|v| v.to_bits() == 0)
            && c.range(at + 104, 28)?.iter().all(|&b| b == 0);
        if !zero {
            return Err(invalid(format!(
                "clip '{name}' has root-motion fields but no root-motion flag"
            )));
        }
        return Ok((None, Vec::new(), 0.0));
    }
    let policy = RootMotionPolicy::from_u8(policy_raw).ok_or_else(|| {
        invalid(format!(
            "clip '{name}' has unknown root-motion policy {policy_raw}"
        ))
    })?;
    if joint_index == NO_STRING {
        return Err(invalid(format!("clip '{name}' root motion names no joint")));
    }
    strings.check(joint_index, "root-motion joint")?;
    let joint = strings.get(joint_index);
    if skeleton.find_by_name(joint).is_none() {
        return Err(invalid(format!(
            "clip '{name}' root-motion joint '{joint}' is not in the skeleton"
        )));
    }
    if !offset.is_finite() || (offset.rotation.length_squared() - 1.0).abs() > 2e-3 {
        return Err(invalid(format!(
            "clip '{name}' root-motion reference offset is not a finite rigid transform"
        )));
    }
    let drift_100_loops_m = if flags & CLIP_FLAG_DRIFT != 0 {
        if !(drift.is_finite() && drift >= 0.0) {
            return Err(invalid(format!("clip '{name}' has drift {drift}")));
        }
        Some(drift)
    } else {
        if drift.to_bits() != 0 {
            return Err(invalid(format!(
                "clip '{name}' stores a drift figure without its flag"
            )));
        }
        None
    };
    let expected = trajectory_key_count(duration_s, rate).ok_or_else(|| {
        invalid(format!(
            "clip '{name}' trajectory rate {rate} Hz is not usable"
        ))
    })?;
    if key_count as usize != expected {
        return Err(invalid(format!(
            "clip '{name}' trajectory has {key_count} keys, expected {expected}"
        )));
    }
    if keys_off % 4 != 0 {
        return Err(invalid(format!("clip '{name}' trajectory keys misaligned")));
    }
    let bytes = data.range(keys_off, key_count as u64 * TRAJECTORY_KEY_SIZE as u64)?;
    let mut keys = Vec::with_capacity(key_count as usize);
    for k in bytes.chunks_exact(TRAJECTORY_KEY_SIZE) {
        let v = |i: usize| {
            let mut a = [0u8; 4];
            a.copy_from_slice(&k[i * 4..i * 4 + 4]);
            f32::from_le_bytes(a)
        };
        keys.push(RigidTransform::new(
            Quat::from_xyzw(v(0), v(1), v(2), v(3)),
            Vec3::new(v(4), v(5), v(6)),
        ));
    }
    Trajectory::new(&keys, rate, duration_s)
        .map_err(|e| invalid(format!("clip '{name}' trajectory: {e}")))?;
    Ok((
        Some(RootMotion {
            joint,
            policy,
            reference_offset: offset,
            drift_100_loops_m,
        }),
        keys,
        rate,
    ))
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

#[doc(hidden)]
/// Structural validation without the checksum, for robustness tests that
/// corrupt bytes and must reach the deeper checks.
pub fn load_ignoring_checksum(bytes: &[u8]) -> Result<Package<'_>, PackageError> {
    let version = check_header(bytes)?;
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

    /// A CURV record (48 bytes) at offset 16 of a section, with its
    /// string table of one name "w".
    #[allow(clippy::too_many_arguments)]
    fn curve_record(
        interp: u8,
        compose: u8,
        bits: u8,
        flags: u8,
        range: (f32, f32),
        count: u32,
        min: f32,
        extent: f32,
        off: u64,
    ) -> Vec<u8> {
        let mut r = vec![0u8; 16];
        r.extend_from_slice(&fnv1a64(b"w").to_le_bytes());
        r.extend_from_slice(&0u32.to_le_bytes());
        r.extend_from_slice(&[interp, compose, bits, flags]);
        for v in [0.5f32, range.0, range.1] {
            r.extend_from_slice(&v.to_le_bytes());
        }
        r.extend_from_slice(&count.to_le_bytes());
        r.extend_from_slice(&min.to_le_bytes());
        r.extend_from_slice(&extent.to_le_bytes());
        r.extend_from_slice(&off.to_le_bytes());
        assert_eq!(r.len(), 16 + CURVE_RECORD_SIZE);
        r
    }

    fn one_string() -> Vec<u8> {
        let mut s = Vec::new();
        for v in [1u32, 0, 1] {
            s.extend_from_slice(&v.to_le_bytes());
        }
        s.push(b'w');
        s
    }

    fn parse_one<'a>(
        rec: &'a [u8],
        data: &'a [u8],
        strs: &'a [u8],
    ) -> Result<CurveChannel<'a>, PackageError> {
        let strings = Strings::parse(Bytes {
            b: strs,
            what: "STRS",
        })?;
        parse_curve(
            &Bytes {
                b: rec,
                what: "CURV",
            },
            16,
            &Bytes {
                b: data,
                what: "DATA",
            },
            &strings,
        )
    }

    #[test]
    fn quantized_curve_decodes_an_lsb_first_stream() {
        // Five 3-bit codes 0, 7, 3, 5, 1 packed LSB-first: 15 bits in 2
        // bytes; min 1, extent 7 -> value = 1 + q.
        let codes = [0u32, 7, 3, 5, 1];
        let mut data = vec![0u8; 2];
        for (i, q) in codes.iter().enumerate() {
            for k in 0..3 {
                if q >> k & 1 != 0 {
                    let bit = i * 3 + k;
                    data[bit / 8] |= 1 << (bit % 8);
                }
            }
        }
        let strs = one_string();
        let rec = curve_record(0, 3, 3, 0, (0.0, 10.0), 5, 1.0, 7.0, 0);
        let ch = parse_one(&rec, &data, &strs).unwrap();
        assert_eq!(ch.name, "w");
        assert_eq!(ch.num_samples(), 5);
        assert_eq!(ch.composition, CurveComposition::Max);
        assert_eq!((ch.bits(), ch.min(), ch.extent()), (3, 1.0, 7.0));
        for (i, q) in codes.iter().enumerate() {
            assert_eq!(ch.value(i as u32), 1.0 + *q as f32);
        }
        assert_eq!(ch.value(5), 0.5, "past the end: the default");
        let mid = SamplePosition {
            i0: 0,
            i1: 1,
            alpha: 0.5,
        };
        assert_eq!(ch.evaluate(mid), 4.5);
        // Clamped to [0, 5] and step: holds sample 0, clamps sample 1.
        let rec = curve_record(1, 0, 3, CURVE_FLAG_CLAMP, (0.0, 5.0), 5, 1.0, 7.0, 0);
        let ch = parse_one(&rec, &data, &strs).unwrap();
        assert!(ch.step && ch.clamp);
        assert_eq!(ch.evaluate(mid), 1.0);
        assert_eq!(ch.value(1), 5.0);
    }

    #[test]
    fn constant_and_raw_curves() {
        let strs = one_string();
        let rec = curve_record(
            0,
            0,
            0,
            0,
            (f32::NEG_INFINITY, f32::INFINITY),
            9,
            0.25,
            0.0,
            0,
        );
        let ch = parse_one(&rec, &[], &strs).unwrap();
        assert_eq!((ch.num_samples(), ch.data_size()), (9, 0));
        assert!((0..9).all(|i| ch.value(i) == 0.25));
        let data: Vec<u8> = [1.5f32, -2.0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let rec = curve_record(0, 1, 32, 0, (-5.0, 5.0), 2, 0.0, 0.0, 0);
        let ch = parse_one(&rec, &data, &strs).unwrap();
        assert_eq!((ch.value(0), ch.value(1)), (1.5, -2.0));
        assert_eq!(ch.composition, CurveComposition::Override);
    }

    #[test]
    fn malformed_curve_records_are_invalid() {
        let strs = one_string();
        let data = [0u8; 8];
        let inf = (f32::NEG_INFINITY, f32::INFINITY);
        let bad = [
            curve_record(2, 0, 3, 0, inf, 5, 0.0, 1.0, 0),
            curve_record(0, 4, 3, 0, inf, 5, 0.0, 1.0, 0),
            curve_record(0, 0, 25, 0, inf, 5, 0.0, 1.0, 0),
            curve_record(0, 0, 33, 0, inf, 5, 0.0, 1.0, 0),
            curve_record(0, 0, 3, 2, inf, 5, 0.0, 1.0, 0),
            curve_record(0, 0, 3, 0, (1.0, 0.0), 5, 0.0, 1.0, 0),
            curve_record(0, 0, 3, 0, (f32::NAN, 0.0), 5, 0.0, 1.0, 0),
            curve_record(0, 0, 3, 0, inf, 5, f32::NAN, 1.0, 0),
            curve_record(0, 0, 3, 0, inf, 5, 0.0, -1.0, 0),
            curve_record(0, 0, 3, 0, inf, 5, 0.0, f32::INFINITY, 0),
            curve_record(0, 0, 0, 0, inf, 5, 0.0, 1.0, 0),
            curve_record(0, 0, 0, 0, inf, 5, 0.0, 0.0, 4),
            curve_record(0, 0, 32, 0, inf, 2, 1.0, 0.0, 0),
            curve_record(0, 0, 3, 0, inf, 5, 0.0, 1.0, 2),
            // 3 raw samples need 12 bytes; DATA has 8.
            curve_record(0, 0, 32, 0, inf, 3, 0.0, 0.0, 0),
            curve_record(0, 0, 24, 0, inf, u32::MAX, 0.0, 1.0, 0),
        ];
        for (i, rec) in bad.iter().enumerate() {
            assert!(
                matches!(
                    parse_one(rec, &data, &strs),
                    Err(PackageError::Invalid(_) | PackageError::Truncated { .. })
                ),
                "case {i}"
            );
        }
        // Padding bits past the last sample must be zero.
        let rec = curve_record(0, 0, 3, 0, inf, 5, 0.0, 1.0, 0);
        assert!(parse_one(&rec, &[0, 0], &strs).is_ok());
        assert!(parse_one(&rec, &[0, 0x80], &strs).is_err());
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
