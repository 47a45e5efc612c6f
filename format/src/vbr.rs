//! The VBR blob layout (`schemas/codec-vbr.md`) as constants, the rate
//! byte's meaning, and the reconstruction formulas: what the decoder
//! (`ludus-anim-runtime`) and the encoder (`ludus-anim-compress`) must
//! agree on bit for bit. The decoder evaluates the same formulas
//! lane-wise in its decode loop.

use crate::math::{nlerp_shortest, Quat};

/// Layout version. 4: version 3 followed, when the clip has segments, by
/// [`SEGMENT_PADDING`] zero bytes, so that the whole-pose walk loads
/// without bounds checks. 3: a varint segment count and a width byte instead of
/// the 16-byte header (the joint and sample counts are the package's, the
/// animated track count the type bytes'), segment table fields as narrow
/// as the clip needs, no end padding; components with a zero clip extent
/// store no sample bits, and the rotation clip range code 32768 is 0. 2: 16-bit rotation clip ranges, per
/// track and segment "no segment range" flag in the rate byte, no range
/// bytes for raw tracks, segment ranges after the samples.
pub const VERSION: u16 = 4;

/// Zero bytes after the last segment block (version 4; none without
/// segments). A decode reads at most 8 bytes at an offset inside a
/// segment block (a sample word, a range entry), so every load it makes
/// from a validated blob ends inside the segment data: the whole-pose
/// walk needs no bounds check per load. Zeros, so a load that reaches
/// into them reads what the checked loads read past the end (zero).
pub const SEGMENT_PADDING: usize = 8;

/// Bytes a decoder's view of the clip ranges holds past the last entry
/// (the blob's next bytes): a 12-byte field is loaded as 16.
pub const CLIP_RANGE_SLACK: usize = 4;

/// Most bytes of the LEB128 segment count (a u32).
pub const MAX_VARINT_BYTES: usize = 5;
/// Width byte: bits 0-1 the segment table's block offset bytes - 1,
/// bits 2-3 its sample bits bytes - 1; the other bits must be zero.
pub const WIDTH_RESERVED: u8 = 0xf0;
/// Bytes of the clip range of an animated rotation (u16 min xyz, u16 extent xyz).
pub const ROTATION_CLIP_RANGE_BYTES: usize = 12;
/// Bytes of the clip range of an animated translation or scale (f32 min xyz, f32 extent xyz).
pub const VECTOR_CLIP_RANGE_BYTES: usize = 24;
/// Bytes of one per-segment range entry of an animated track.
pub const SEGMENT_RANGE_BYTES: usize = 6;

/// The width byte for segment tables whose largest block offset is
/// `max_offset` and largest sample bits `max_bits`: each field takes the
/// fewest bytes (1..=4) that hold it. `None` past 32 bits.
#[inline]
pub fn width_byte(max_offset: usize, max_bits: usize) -> Option<u8> {
    let bytes = |v: usize| (1..=4u8).find(|&w| (v as u64) < 1u64 << (8 * u32::from(w)));
    Some((bytes(max_offset)? - 1) | (bytes(max_bits)? - 1) << 2)
}

/// (block offset bytes, sample bits bytes) of a width byte.
#[inline]
pub fn table_widths(width: u8) -> (usize, usize) {
    (
        usize::from(width & 3) + 1,
        usize::from((width >> 2) & 3) + 1,
    )
}

/// The LEB128 encoding of `v` (7 bits a byte, low first, bit 7 set on
/// every byte but the last).
#[inline]
pub fn varint(mut v: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity(MAX_VARINT_BYTES);
    loop {
        let low = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(low);
            return out;
        }
        out.push(low | 0x80);
    }
}

/// Track kinds (two bits each in a joint's type byte).
pub const KIND_DEFAULT: u8 = 0;
pub const KIND_CONSTANT: u8 = 1;
pub const KIND_ANIMATED: u8 = 2;

/// Whether a joint's type byte has an animated track. Kind 2 (animated)
/// is the only kind with bit 1 set and bit 0 clear, so one mask tests
/// all three tracks without a branch.
#[inline(always)]
pub fn has_animated(types: u8) -> bool {
    (types >> 1) & !types & 0b01_0101 != 0
}
/// Rotation only: constant stored as four floats (x, y, z, w).
pub const KIND_CONSTANT_FULL: u8 = 3;

/// Bits per component of each bit-rate id. Id 0 stores no sample bits (the
/// value is in the segment range entry); the last id stores raw f32.
pub const RATE_BITS: [u32; 19] = [
    0, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 32,
];
pub const NUM_RATES: u8 = RATE_BITS.len() as u8;
/// Segment-constant rate: value = the 3 x u16 stored in the range entry.
pub const RATE_CONSTANT: u8 = 0;
/// Raw rate: f32 bit patterns (rotations keep all four components).
pub const RATE_RAW: u8 = NUM_RATES - 1;
/// Rate byte flag (quantized ids only): the track has no segment range in
/// this segment; it is quantized over its whole clip range. Saves the six
/// range bytes where range reduction does not pay for them.
pub const RATE_UNRANGED: u8 = 0x20;
/// Mask of the rate id in a rate byte.
pub const RATE_ID_MASK: u8 = 0x1f;
/// The segment range an unranged track uses (min 0, extent 255 per component).
pub const FULL_SEGMENT_RANGE: [u8; 6] = [0, 0, 0, 255, 255, 255];

/// Rate id of a rate byte.
#[inline]
pub fn rate_id(rate: u8) -> u8 {
    rate & RATE_ID_MASK
}

/// Whether a (valid) rate byte stores a segment range entry.
#[inline]
pub fn has_segment_range(rate: u8) -> bool {
    let id = rate_id(rate);
    id == RATE_CONSTANT || (id < RATE_RAW && rate & RATE_UNRANGED == 0)
}

/// Whether a rate byte is valid: id in range, reserved bits clear, the
/// unranged flag only on quantized ids.
#[inline]
pub fn rate_is_valid(rate: u8) -> bool {
    let id = rate_id(rate);
    rate >> 6 == 0
        && id < NUM_RATES
        && (rate & RATE_UNRANGED == 0 || (id != RATE_CONSTANT && id != RATE_RAW))
}

/// Sample bits one animated track uses at rate byte `rate`: raw keeps
/// every component (rotations w too); the quantized ids store `stored`
/// components ([`stored_components`]) of `RATE_BITS[id]` bits.
#[inline]
pub fn track_sample_bits(rate: u8, is_rotation: bool, stored: u32) -> u32 {
    let id = rate_id(rate);
    if id == RATE_RAW {
        if is_rotation {
            128
        } else {
            96
        }
    } else {
        RATE_BITS.get(id as usize).copied().unwrap_or(0) * stored.min(3)
    }
}

/// Reciprocal of the largest integer of each quantized width.
pub const INV_MAX: [f32; 20] = {
    let mut t = [0.0f32; 20];
    let mut b = 1;
    while b < 20 {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};
pub const INV_255: f32 = 1.0 / 255.0;
pub const INV_65535: f32 = 1.0 / 65535.0;

/// `INV_MAX` indexed by any 6-bit width: zero outside 1..=19, so a
/// segment-constant track (0 bits) dequantizes its zero fields to zero.
pub const INV_BITS: [f32; 64] = {
    let mut t = [0.0f32; 64];
    let mut b = 1;
    while b < 20 {
        t[b] = INV_MAX[b];
        b += 1;
    }
    t
};
/// Step of a 16-bit rotation clip range code: `1 / 32767`, so that code
/// [`ROTATION_RANGE_ZERO`] is exactly 0 (a component that stays 0, as in a
/// rotation about one axis, gets a zero extent and stores no bits).
pub const ROTATION_RANGE_STEP: f32 = 1.0 / 32767.0;
/// The rotation clip range minimum code that decodes to 0.
pub const ROTATION_RANGE_ZERO: f32 = 32768.0;

/// Clip range (min, extent) of one rotation component from its 16-bit
/// codes: `min = (m - 32768) * step`, `extent = e * step`, covering
/// `[-1.00003, 1]` and extents up to 2. Rotation components lie in
/// [-1, 1], so 16 bits lose at most 1/32767 of the range bounds while
/// halving the clip range bytes.
#[inline]
pub fn rotation_clip_range(code_min: u16, code_ext: u16) -> (f32, f32) {
    (
        (code_min as f32 - ROTATION_RANGE_ZERO) * ROTATION_RANGE_STEP,
        code_ext as f32 * ROTATION_RANGE_STEP,
    )
}

/// Whether a component of an animated track with clip extent `extent` (as
/// decoded) stores sample bits at the quantized rates (ids 1..=17): a
/// zero-extent component decodes to its clip minimum whatever its code
/// (`bias + 0 * q`), so its bits would be waste. A translation along one
/// axis stores one component, not three.
#[inline]
pub fn component_stored(extent: f32) -> bool {
    extent != 0.0
}

/// Stored components (0..=3, [`component_stored`]) of the animated track
/// whose clip range starts at `at` in the clip ranges: rotation extents
/// are 16-bit codes (zero iff the code is), vector extents f32. Zero if
/// out of range (never on a validated view).
#[inline]
pub fn stored_components(ranges: &[u8], at: usize, rotation: bool) -> u32 {
    let word = |o: usize, n: usize| {
        ranges
            .get(at + o..at + o + n)
            .is_some_and(|b| b.iter().any(|&x| x != 0))
    };
    if rotation {
        (0..3).map(|c| u32::from(word(6 + 2 * c, 2))).sum()
    } else {
        (0..3)
            .map(|c| {
                let o = at + 12 + 4 * c;
                let v = ranges
                    .get(o..o + 4)
                    .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
                u32::from(component_stored(f32::from_bits(v)))
            })
            .sum()
    }
}

/// Reconstruction of a quantized component is `bias + scale * (q / (2^bits - 1))`
/// with `bias` and `scale` fixed per segment and track. This gives them
/// from the 8-bit segment range and the clip range; the encoder calls it
/// and [`dequantize`] so it measures exactly what the decoder makes.
#[inline]
pub fn segment_bias_scale(seg_min: u8, seg_ext: u8, clip_min: f32, clip_ext: f32) -> (f32, f32) {
    (
        clip_min + clip_ext * (seg_min as f32 * INV_255),
        clip_ext * (seg_ext as f32 * INV_255),
    )
}

/// Dequantize one component at a quantized rate (`bits` in 3..=19).
#[inline]
pub fn dequantize(q: u32, bits: u32, bias: f32, scale: f32) -> f32 {
    bias + scale * (q as f32 * INV_MAX[(bits as usize).min(19)])
}

/// Dequantize one component of a segment-constant (rate 0) track.
#[inline]
pub fn dequantize_constant(v: u16, clip_min: f32, clip_ext: f32) -> f32 {
    clip_min + clip_ext * (v as f32 * INV_65535)
}

/// Rotation from its stored x, y, z with w >= 0 rebuilt as
/// `sqrt(max(0, 1 - x^2 - y^2 - z^2))`. Not normalized: the blend
/// ([`nlerp_shortest`]) normalizes.
#[inline]
pub fn rotation_from_xyz(x: f32, y: f32, z: f32) -> Quat {
    let w2 = 1.0 - (x * x + y * y + z * z);
    Quat::from_xyzw(x, y, z, w2.max(0.0).sqrt())
}

/// The rotation the decoder outputs for a single stored value (what a blend
/// at alpha 0 gives).
#[inline]
pub fn finish_rotation(q: Quat) -> Quat {
    nlerp_shortest(q, q, 0.0)
}
