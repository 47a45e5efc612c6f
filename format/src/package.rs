//! Package v2 layout constants (`schemas/package-format.md`), shared by
//! the runtime's reader and the cooker's writer.

use crate::hash::fnv1a64;

pub const MAGIC: [u8; 8] = *b"LUDANIM\0";
pub const FORMAT_VERSION: u32 = 3;
pub const HEADER_SIZE: usize = 64;
/// Header offset of the u64 checksum: FNV-1a 64 over every byte after
/// the header.
pub const CHECKSUM_OFFSET: usize = 32;

/// The checksum of a package: FNV-1a 64 over the bytes after the header
/// (0 bytes if there are none).
#[inline]
pub fn checksum(bytes: &[u8]) -> u64 {
    fnv1a64(bytes.get(HEADER_SIZE..).unwrap_or(&[]))
}

/// Store the checksum of `bytes` in its header (nothing if the header is
/// short). Cook side: the writer seals a package with it, and robustness
/// tests reseal corrupted bytes so the loader's structural checks run.
#[inline]
pub fn reseal_checksum(bytes: &mut [u8]) {
    let sum = checksum(bytes);
    if let Some(field) = bytes.get_mut(CHECKSUM_OFFSET..CHECKSUM_OFFSET + 8) {
        field.copy_from_slice(&sum.to_le_bytes());
    }
}
pub const SECTION_ENTRY_SIZE: usize = 24;
/// Every section and every blob inside DATA starts on this alignment.
pub const ALIGN: usize = 16;
pub const MAX_SECTIONS: u32 = 64;

#[inline]
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
pub const SECTION_SYNC: u32 = fourcc(b"SYNC");
/// Optional: mesh skin bindings (`crate::skin`); absent without skins.
pub const SECTION_SKINS: u32 = fourcc(b"SKIN");
/// Optional: each clip's motion bounds (`crate::skin::ClipBounds`).
pub const SECTION_BOUNDS: u32 = fourcc(b"BNDS");
/// Optional: named frames on joints (`crate::sockets`); absent without.
pub const SECTION_SOCKETS: u32 = fourcc(b"SOCK");
/// Optional: cooked masks and LOD levels (`crate::joint_sets`).
pub const SECTION_JOINT_SETS: u32 = fourcc(b"JSET");

/// Written by the cooker; the reader checks META through its field reads.
pub const META_SIZE: usize = 48;
pub const SKELETON_HEADER_SIZE: usize = 24;
/// Bytes per joint in SKEL: parent u32, subtree end u32, id u64,
/// rest 10 x f32, name u32.
pub const JOINT_RECORD_SIZE: usize = 4 + 4 + 8 + 40 + 4;
/// Bytes per clip in CLIP (fields: [`clip_record`]).
pub const CLIP_RECORD_SIZE: usize = clip_record::SIZE;
/// Bytes per curve channel in CURV (the runtime's `CurveChannel`).
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
#[inline]
pub const fn curve_bits_valid(bits: u8) -> bool {
    bits <= CURVE_MAX_QUANT_BITS || bits == CURVE_BITS_RAW
}

/// Exact byte size of a curve's sample data: `ceil(count * bits / 8)`.
#[inline]
pub const fn curve_data_size(count: u32, bits: u8) -> u64 {
    (count as u64 * bits as u64).div_ceil(8)
}

/// Decoder step of a quantized width: `extent / (2^bits - 1)` (0 for
/// widths 0 and 32, which do not dequantize).
#[inline]
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
/// Version 3: a control event (authoritative), the start and the end of
/// a contact window. At most one kind bit is set; none is a visual event.
pub const EVENT_FLAG_CONTROL: u32 = 1 << 2;
pub const EVENT_FLAG_CONTACT_START: u32 = 1 << 3;
pub const EVENT_FLAG_CONTACT_END: u32 = 1 << 4;
pub const EVENT_FLAGS_KIND: u32 =
    EVENT_FLAG_SYNC_MARKER | EVENT_FLAG_CONTROL | EVENT_FLAG_CONTACT_START | EVENT_FLAG_CONTACT_END;
pub const EVENT_FLAGS_KNOWN: u32 = EVENT_FLAG_REVERSIBLE | EVENT_FLAGS_KIND;

/// Byte offsets of the fields of a CLIP record, in record order
/// (`schemas/package-format.md`, "CLIP: clip table"). The reader and the
/// cooker's writer both address the record through these, so the two
/// cannot disagree on where a field is.
pub mod clip_record {
    /// u32 string index: the clip name.
    pub const NAME: usize = 0;
    /// u32: `CLIP_FLAG_*` bits.
    pub const FLAGS: usize = 4;
    /// f32: authored duration in seconds.
    pub const DURATION_S: usize = 8;
    /// f32: sample rate in Hz.
    pub const SAMPLE_RATE_HZ: usize = 12;
    /// u32: sample count.
    pub const NUM_SAMPLES: usize = 16;
    /// u8: loop mode.
    pub const LOOP_MODE: usize = 20;
    /// u8: `ROOT_MOTION_*` policy.
    pub const ROOT_MOTION_POLICY: usize = 21;
    /// u16: codec id.
    pub const CODEC: usize = 22;
    /// u16: codec version.
    pub const CODEC_VERSION: usize = 24;
    /// u16: reserved, zero.
    pub const RESERVED_16: usize = 26;
    /// u32 string index: the quality profile name.
    pub const PROFILE: usize = 28;
    /// u64: blob offset within DATA.
    pub const BLOB_OFFSET: usize = 32;
    /// u64: blob size.
    pub const BLOB_SIZE: usize = 40;
    /// u32: first curve index in CURV.
    pub const CURVE_FIRST: usize = 48;
    /// u32: curve count.
    pub const CURVE_COUNT: usize = 52;
    /// f32: resampling error measured at cook time (m).
    pub const RESAMPLE_ERROR_M: usize = 56;
    /// f32: verified codec error measured at cook time (m).
    pub const MAX_ERROR_M: usize = 60;
    /// u8[32]: source content hash.
    pub const SOURCE_HASH: usize = 64;
    /// u32 string index: the additive reference, or `NO_STRING`.
    pub const ADDITIVE_REFERENCE: usize = 96;
    /// u32 string index: the root-motion joint, or `NO_STRING`.
    pub const ROOT_JOINT: usize = 100;
    /// f32[7]: root-motion reference offset, rotation xyzw then translation xyz.
    pub const ROOT_OFFSET: usize = 104;
    /// Bytes of [`ROOT_OFFSET`].
    pub const ROOT_OFFSET_BYTES: usize = 28;
    /// u32: trajectory key count.
    pub const TRAJECTORY_KEY_COUNT: usize = 132;
    /// f32: trajectory key rate in Hz.
    pub const TRAJECTORY_RATE_HZ: usize = 136;
    /// f32: drift over 100 loops (m).
    pub const DRIFT_100_LOOPS_M: usize = 140;
    /// u64: trajectory keys offset within DATA.
    pub const TRAJECTORY_OFFSET: usize = 144;
    /// u32: first event index in EVNT.
    pub const EVENT_FIRST: usize = 152;
    /// u32: event count.
    pub const EVENT_COUNT: usize = 156;
    /// f32: loop seam error (m).
    pub const LOOP_SEAM_ERROR_M: usize = 160;
    /// u8[12]: reserved, zero.
    pub const RESERVED_TAIL: usize = 164;
    /// Bytes of [`RESERVED_TAIL`].
    pub const RESERVED_TAIL_BYTES: usize = 12;
    /// Bytes of the record.
    pub const SIZE: usize = 176;

    // Each field ends where the next begins.
    const _: () = {
        assert!(CODEC_VERSION + 2 == RESERVED_16 && RESERVED_16 + 2 == PROFILE);
        assert!(SOURCE_HASH + 32 == ADDITIVE_REFERENCE);
        assert!(ROOT_OFFSET + ROOT_OFFSET_BYTES == TRAJECTORY_KEY_COUNT);
        assert!(TRAJECTORY_OFFSET + 8 == EVENT_FIRST);
        assert!(RESERVED_TAIL + RESERVED_TAIL_BYTES == SIZE);
    };
}

// What a loaded package describes beside its poses: plain values a reader
// fills from validated records, for tools and the cook side (the runtime
// hands them out by reference; games play clips without them).

/// Package-wide provenance (META).
#[derive(Clone, Debug, PartialEq)]
pub struct Meta<'a> {
    pub cooker_version: &'a str,
    pub asset_name: &'a str,
    pub source_path: &'a str,
    /// blake3 of the source file bytes (and companions).
    pub source_hash: [u8; 32],
}

/// A clip record's cook-time figures and provenance (informational: no
/// decode reads them).
#[derive(Clone, Debug, PartialEq)]
pub struct CookInfo<'a> {
    /// The codec id and layout version of the clip's blob.
    pub codec: crate::codec::CodecId,
    pub codec_version: u16,
    /// Bytes of the codec blob.
    pub blob_size: usize,
    /// Name of the quality profile the clip was cooked with.
    pub profile: &'a str,
    /// blake3 of the source file bytes (and companions).
    pub source_hash: [u8; 32],
    /// Resampling error in meters.
    pub resample_error_m: f32,
    /// Verified codec error in meters.
    pub max_error_m: f32,
    /// Looping clips: how far the last authored pose was from the first
    /// (component space, virtual vertices, meters).
    pub loop_seam_error_m: Option<f32>,
    /// Additive clips: the named, revisioned reference the deltas were
    /// made against (e.g. `rest rev 0123…`).
    pub additive_reference: Option<&'a str>,
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
    /// The policy byte of a clip record.
    pub fn as_u8(self) -> u8 {
        match self {
            RootMotionPolicy::Planar => ROOT_MOTION_PLANAR,
            RootMotionPolicy::Full => ROOT_MOTION_FULL,
        }
    }
    /// The policy of byte `v` (`None` for no root motion or an unknown byte).
    pub fn from_u8(v: u8) -> Option<RootMotionPolicy> {
        match v {
            ROOT_MOTION_PLANAR => Some(RootMotionPolicy::Planar),
            ROOT_MOTION_FULL => Some(RootMotionPolicy::Full),
            _ => None,
        }
    }
    /// The policy's name in manifests and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            RootMotionPolicy::Planar => "planar",
            RootMotionPolicy::Full => "full",
        }
    }
}

/// A clip's root-motion description (the keys are the clip's trajectory).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMotion<'a> {
    /// Debug name of the designated motion joint (a skeleton joint).
    pub joint: &'a str,
    pub policy: RootMotionPolicy,
    /// The trajectory's original first key: `R_char(t) = offset * R(t)`
    /// places the character in the authored frame.
    pub reference_offset: crate::rigid::RigidTransform,
    /// Cook-time figure: position error of per-tick (30 Hz) delta
    /// composition over 100 loops against `C^100` (looping clips only).
    pub drift_100_loops_m: Option<f32>,
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
    /// The composition byte of a CURV record.
    pub fn as_u8(self) -> u8 {
        match self {
            CurveComposition::Blend => CURVE_COMPOSE_BLEND,
            CurveComposition::Override => CURVE_COMPOSE_OVERRIDE,
            CurveComposition::Additive => CURVE_COMPOSE_ADDITIVE,
            CurveComposition::Max => CURVE_COMPOSE_MAX,
        }
    }
    /// The composition of byte `v`.
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
    /// The composition named `s` ([`CurveComposition::as_str`]).
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

/// A curve channel's schema and storage as its CURV record holds them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CurveRecord {
    /// Schema: the value when the channel is absent from a clip.
    pub default_value: f32,
    /// Schema: step interpolation (hold sample `i0`) instead of linear.
    pub step: bool,
    /// Schema: how the channel combines with other sources.
    pub composition: CurveComposition,
    /// Schema: the value range `[lo, hi]` (`lo <= hi`; either side may be
    /// infinite).
    pub range: (f32, f32),
    /// Schema: decoded values are clamped to `range`.
    pub clamp: bool,
    /// Stored sample width: 0 (constant), 1..=24 (quantized) or 32 (raw).
    pub bits: u8,
    /// Samples (the owning clip's sample count).
    pub num_samples: u32,
    /// Quantization range start (the constant for width 0; 0 for raw).
    pub min: f32,
    /// Quantization range extent (0 for widths 0 and 32).
    pub extent: f32,
    /// Bytes of sample data in DATA: `ceil(num_samples * bits / 8)`.
    pub data_size: usize,
}
