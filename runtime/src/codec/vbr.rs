//! Variable-bit-rate clip codec: the decoder, and the bit-exact
//! reconstruction helpers the encoder (`ludus-anim-compress`) reuses so
//! that what it measures is exactly what the runtime produces.
//!
//! The layout is specified in `schemas/codec-vbr.md`. In short: per joint a
//! type byte (default / constant / animated per rotation, translation and
//! scale track), full-precision constants, a per-clip range (f32 min and
//! extent) for every animated track, a segment table, then per segment one
//! bit-rate id and six bytes of segment range per animated track followed
//! by the sample-major bit-packed samples. Eight zero bytes of padding end
//! the blob so that every 64-bit load inside the sample data is in bounds.
//!
//! Adapted ideas (Nicholas Frechette, Animation Compression Library and his
//! "Animation Compression" blog series): uniform sampling, constant and
//! default track stripping, uniform segmenting, clip and segment range
//! reduction, per-track variable bit rates from a fixed table, rotations
//! stored as a quaternion with w >= 0 and w dropped. The byte layout is
//! ours; it is not ACL's and is not compatible with it.

use super::CodecError;
use crate::math::{nlerp_shortest, Quat, Transform, Vec3, Vec3A};
use crate::timing::SamplePosition;

pub const VERSION: u16 = 1;

/// Bytes of the fixed header.
pub const HEADER_BYTES: usize = 16;
/// Zero bytes after the last segment so 64-bit loads never run past the end.
pub const PADDING_BYTES: usize = 8;
/// Bytes of one clip range entry (min xyz, extent xyz as f32).
pub const CLIP_RANGE_BYTES: usize = 24;
/// Bytes of one segment table entry (u32 block offset, u32 sample bits).
pub const SEGMENT_ENTRY_BYTES: usize = 8;
/// Bytes of one per-segment range entry of an animated track.
pub const SEGMENT_RANGE_BYTES: usize = 6;

/// Track kinds (two bits each in a joint's type byte).
pub const KIND_DEFAULT: u8 = 0;
pub const KIND_CONSTANT: u8 = 1;
pub const KIND_ANIMATED: u8 = 2;
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

/// Sample bits one animated track uses at `rate` (rotation raw keeps w).
#[inline]
pub fn track_sample_bits(rate: u8, is_rotation: bool) -> u32 {
    if rate == RATE_RAW {
        if is_rotation {
            128
        } else {
            96
        }
    } else {
        RATE_BITS.get(rate as usize).copied().unwrap_or(0) * 3
    }
}

/// Reciprocal of the largest integer of each quantized width.
const INV_MAX: [f32; 20] = {
    let mut t = [0.0f32; 20];
    let mut b = 1;
    while b < 20 {
        t[b] = 1.0 / ((1u32 << b) - 1) as f32;
        b += 1;
    }
    t
};
const INV_255: f32 = 1.0 / 255.0;
const INV_65535: f32 = 1.0 / 65535.0;

/// Reconstruction of a quantized component is `bias + scale * (q / (2^bits - 1))`
/// with `bias` and `scale` fixed per segment and track. This gives them
/// from the 8-bit segment range and the f32 clip range; the encoder calls
/// it and [`dequantize`] so it measures exactly what the decoder makes.
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

#[inline]
fn read_u32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

/// Little-endian 64-bit load; zero if out of bounds (never on a validated
/// view, where padding keeps every load inside the blob).
#[inline]
fn load_u64(b: &[u8], at: usize) -> u64 {
    match b.get(at..at + 8) {
        Some(s) => u64::from_le_bytes([s[0], s[1], s[2], s[3], s[4], s[5], s[6], s[7]]),
        None => 0,
    }
}

/// `bits` (<= 32) bits at absolute bit position `pos` of `b`.
#[inline]
fn read_bits(b: &[u8], pos: usize, bits: u32) -> u32 {
    let v = load_u64(b, pos >> 3) >> (pos & 7);
    (v & ((1u64 << bits) - 1)) as u32
}

/// A validated VBR blob. Every offset it uses was checked by [`VbrClip::parse`].
#[derive(Clone, Copy, Debug)]
pub struct VbrClip<'a> {
    types: &'a [u8],
    constants: &'a [u8],
    ranges: &'a [u8],
    table: &'a [u8],
    /// Segment blocks followed by the padding.
    data: &'a [u8],
    joint_count: usize,
    num_samples: u32,
    animated: usize,
    segments: u32,
    /// Samples in the short segments (`num_samples / segments`).
    seg_len: u32,
    /// Number of leading segments holding one more sample.
    seg_long: u32,
}

fn truncated(what: &'static str) -> CodecError {
    CodecError::Truncated { what }
}
fn invalid(what: &'static str) -> CodecError {
    CodecError::Invalid { what }
}

/// Where a sample lives: its segment's block offset in `data`, the sample's
/// first bit (absolute, in `data`) and the segment's rate ids offset.
#[derive(Clone, Copy, Debug)]
struct SampleRef {
    /// Byte offset of the segment block (rate ids first, then ranges).
    block: usize,
    /// Absolute bit position of the sample's first track.
    bit: usize,
}

/// Reconstruction parameters of one animated track in one segment.
#[derive(Clone, Copy, Debug)]
struct TrackParams {
    /// 0 (segment constant: `bias`), 3..=19, or 32 (raw).
    bits: u32,
    bias: Vec3A,
    scale: Vec3A,
    /// `1 / (2^bits - 1)`.
    inv: f32,
}

/// Rotation blends deferred so that the square roots and divisions of
/// neighbouring joints overlap instead of forming one long dependency
/// chain. Results are exactly [`nlerp_shortest`]'s.
struct RotationBatch {
    alpha: f32,
    len: usize,
    index: [usize; ROTATION_BATCH],
    a: [Quat; ROTATION_BATCH],
    b: [Quat; ROTATION_BATCH],
}

const ROTATION_BATCH: usize = 16;

impl RotationBatch {
    #[inline(always)]
    fn new(alpha: f32) -> Self {
        RotationBatch {
            alpha,
            len: 0,
            index: [0; ROTATION_BATCH],
            a: [Quat::IDENTITY; ROTATION_BATCH],
            b: [Quat::IDENTITY; ROTATION_BATCH],
        }
    }

    #[inline(always)]
    fn push(&mut self, index: usize, a: Quat, b: Quat, out: &mut [Transform]) {
        if self.len == ROTATION_BATCH {
            self.flush(out);
        }
        self.index[self.len] = index;
        self.a[self.len] = a;
        self.b[self.len] = b;
        self.len += 1;
    }

    #[inline(always)]
    fn flush(&mut self, out: &mut [Transform]) {
        let n = self.len.min(ROTATION_BATCH);
        for k in 0..n {
            let q = nlerp_shortest(self.a[k], self.b[k], self.alpha);
            if let Some(o) = out.get_mut(self.index[k]) {
                o.rotation = q;
            }
        }
        self.len = 0;
    }
}

/// Walk state over joints: byte offset into constants, animated track
/// index, and the running bit position of each of the two samples.
#[derive(Clone, Copy, Debug)]
struct Cursor {
    joint: usize,
    constant: usize,
    track: usize,
    bit0: usize,
    bit1: usize,
}

impl<'a> VbrClip<'a> {
    /// Validate `blob` completely. Any byte string gives a valid view or a
    /// typed error; nothing here or in decoding can panic or read out of
    /// bounds afterwards.
    pub fn parse(
        blob: &'a [u8],
        joint_count: usize,
        num_samples: u32,
    ) -> Result<VbrClip<'a>, CodecError> {
        if blob.len() < HEADER_BYTES {
            return Err(truncated("vbr header"));
        }
        let jc = read_u32(blob, 0) as usize;
        let ns = read_u32(blob, 4);
        let animated = read_u32(blob, 8) as usize;
        let segments = read_u32(blob, 12);
        if jc != joint_count {
            return Err(invalid("vbr joint count differs from the skeleton"));
        }
        if ns != num_samples {
            return Err(invalid("vbr sample count differs from the clip"));
        }
        if ns == 0 {
            return Err(invalid("vbr clip has no samples"));
        }
        let mut at = HEADER_BYTES;
        let types = blob
            .get(at..at.checked_add(jc).ok_or(invalid("vbr size overflows"))?)
            .ok_or(truncated("vbr track types"))?;
        at += jc;
        // Count constants and animated tracks.
        let mut constant_bytes = 0usize;
        let mut anim_count = 0usize;
        for &t in types {
            if t >> 6 != 0 {
                return Err(invalid("vbr type byte has reserved bits set"));
            }
            for k in 0..3 {
                let kind = (t >> (2 * k)) & 3;
                match kind {
                    KIND_DEFAULT => {}
                    KIND_CONSTANT => constant_bytes += 12,
                    KIND_ANIMATED => anim_count += 1,
                    _ => {
                        if k != 0 {
                            return Err(invalid("vbr full constant on a non-rotation track"));
                        }
                        constant_bytes += 16;
                    }
                }
            }
        }
        if anim_count != animated {
            return Err(invalid(
                "vbr animated track count differs from the type bytes",
            ));
        }
        if (animated == 0) != (segments == 0) {
            return Err(invalid(
                "vbr segment count inconsistent with animated tracks",
            ));
        }
        if segments > ns {
            return Err(invalid("vbr has more segments than samples"));
        }
        let end = at
            .checked_add(constant_bytes)
            .ok_or(invalid("vbr size overflows"))?;
        let constants = blob.get(at..end).ok_or(truncated("vbr constants"))?;
        at = end;
        for c in constants.chunks_exact(4) {
            if !f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite() {
                return Err(invalid("vbr constant is not finite"));
            }
        }
        let end = animated
            .checked_mul(CLIP_RANGE_BYTES)
            .and_then(|n| n.checked_add(at))
            .ok_or(invalid("vbr size overflows"))?;
        let ranges = blob.get(at..end).ok_or(truncated("vbr clip ranges"))?;
        at = end;
        for c in ranges.chunks_exact(4) {
            if !f32::from_le_bytes([c[0], c[1], c[2], c[3]]).is_finite() {
                return Err(invalid("vbr clip range is not finite"));
            }
        }
        let end = (segments as usize)
            .checked_mul(SEGMENT_ENTRY_BYTES)
            .and_then(|n| n.checked_add(at))
            .ok_or(invalid("vbr size overflows"))?;
        let table = blob.get(at..end).ok_or(truncated("vbr segment table"))?;
        at = end;
        let data = blob.get(at..).unwrap_or(&[]);

        let seg_len = ns.checked_div(segments).unwrap_or(0);
        let seg_long = ns.checked_rem(segments).unwrap_or(0);
        // Walk the segments: offsets must be contiguous, ids in range and
        // the declared sample bits equal to what the ids imply.
        let mut off = 0usize;
        for s in 0..segments {
            let e = s as usize * SEGMENT_ENTRY_BYTES;
            let block = read_u32(table, e) as usize;
            let sample_bits = read_u32(table, e + 4) as usize;
            if block != off {
                return Err(invalid("vbr segment offset is not contiguous"));
            }
            let rates_end = block
                .checked_add(animated)
                .ok_or(invalid("vbr size overflows"))?;
            let rates = data
                .get(block..rates_end)
                .ok_or(truncated("vbr segment rates"))?;
            let mut bits = 0usize;
            let mut track = 0usize;
            for &t in types {
                for k in 0..3 {
                    if (t >> (2 * k)) & 3 == KIND_ANIMATED {
                        let r = rates[track];
                        if r >= NUM_RATES {
                            return Err(invalid("vbr bit-rate id out of range"));
                        }
                        bits += track_sample_bits(r, k == 0) as usize;
                        track += 1;
                    }
                }
            }
            if bits != sample_bits {
                return Err(invalid("vbr segment sample bits differ from its rates"));
            }
            let n = (seg_len + u32::from(s < seg_long)) as usize;
            let sample_bytes = n
                .checked_mul(sample_bits)
                .map(|b| b.div_ceil(8))
                .ok_or(invalid("vbr size overflows"))?;
            off = animated
                .checked_mul(1 + SEGMENT_RANGE_BYTES)
                .and_then(|h| h.checked_add(block))
                .and_then(|h| h.checked_add(sample_bytes))
                .ok_or(invalid("vbr size overflows"))?;
            if off > data.len() {
                return Err(truncated("vbr segment data"));
            }
        }
        let total = off
            .checked_add(PADDING_BYTES)
            .ok_or(invalid("vbr size overflows"))?;
        if data.len() < total {
            return Err(truncated("vbr padding"));
        }
        if data.len() > total {
            return Err(invalid("vbr blob has trailing bytes"));
        }
        Ok(VbrClip {
            types,
            constants,
            ranges,
            table,
            data,
            joint_count: jc,
            num_samples: ns,
            animated,
            segments,
            seg_len,
            seg_long,
        })
    }

    pub fn joint_count(&self) -> usize {
        self.joint_count
    }
    pub fn num_samples(&self) -> u32 {
        self.num_samples
    }
    pub fn segment_count(&self) -> u32 {
        self.segments
    }
    pub fn animated_track_count(&self) -> usize {
        self.animated
    }

    /// First sample of segment `s` (`s <= segments`).
    #[inline]
    pub fn segment_start(&self, s: u32) -> u32 {
        s * self.seg_len + s.min(self.seg_long)
    }

    /// Segment holding `sample` (< num_samples, and at least one segment).
    #[inline]
    fn segment_of(&self, sample: u32) -> u32 {
        let long_end = self.seg_long * (self.seg_len + 1);
        if sample < long_end {
            sample / (self.seg_len + 1)
        } else {
            self.seg_long + (sample - long_end) / self.seg_len.max(1)
        }
    }

    #[inline]
    fn sample_ref(&self, sample: u32) -> SampleRef {
        if self.segments == 0 {
            return SampleRef { block: 0, bit: 0 };
        }
        let s = self.segment_of(sample).min(self.segments - 1);
        let e = s as usize * SEGMENT_ENTRY_BYTES;
        let block = read_u32(self.table, e) as usize;
        let sample_bits = read_u32(self.table, e + 4) as usize;
        let local = sample.saturating_sub(self.segment_start(s)) as usize;
        let first = (block + self.animated * (1 + SEGMENT_RANGE_BYTES)) * 8;
        SampleRef {
            block,
            bit: first + local * sample_bits,
        }
    }

    /// Reconstruction parameters of animated track `track` in the segment
    /// whose block starts at `block`.
    #[inline(always)]
    fn params(&self, block: usize, track: usize) -> TrackParams {
        let d = self.data;
        let rate = d.get(block + track).copied().unwrap_or(0);
        let at = track * CLIP_RANGE_BYTES;
        let cr: [u8; CLIP_RANGE_BYTES] = match self.ranges.get(at..at + CLIP_RANGE_BYTES) {
            Some(x) => x.try_into().unwrap_or([0; CLIP_RANGE_BYTES]),
            None => [0; CLIP_RANGE_BYTES],
        };
        let f = |i: usize| f32::from_le_bytes([cr[i], cr[i + 1], cr[i + 2], cr[i + 3]]);
        let cmin = Vec3A::new(f(0), f(4), f(8));
        let cext = Vec3A::new(f(12), f(16), f(20));
        let ro = block + self.animated + track * SEGMENT_RANGE_BYTES;
        let sr: [u8; SEGMENT_RANGE_BYTES] = match d.get(ro..ro + SEGMENT_RANGE_BYTES) {
            Some(x) => x.try_into().unwrap_or([0; SEGMENT_RANGE_BYTES]),
            None => [0; SEGMENT_RANGE_BYTES],
        };
        if rate == RATE_CONSTANT {
            let u = |i: usize| u16::from_le_bytes([sr[i], sr[i + 1]]) as f32;
            let v = Vec3A::new(u(0), u(2), u(4)) * INV_65535;
            TrackParams {
                bits: 0,
                bias: cmin + cext * v,
                scale: Vec3A::ZERO,
                inv: 0.0,
            }
        } else if rate >= RATE_RAW {
            TrackParams {
                bits: 32,
                bias: Vec3A::ZERO,
                scale: Vec3A::ZERO,
                inv: 0.0,
            }
        } else {
            let bits = RATE_BITS[rate as usize];
            let smin = Vec3A::new(sr[0] as f32, sr[1] as f32, sr[2] as f32) * INV_255;
            let sext = Vec3A::new(sr[3] as f32, sr[4] as f32, sr[5] as f32) * INV_255;
            TrackParams {
                bits,
                bias: cmin + cext * smin,
                scale: cext * sext,
                inv: INV_MAX[bits as usize],
            }
        }
    }

    /// One vector sample at bit position `bit` (advanced).
    #[inline(always)]
    fn vec_sample(&self, p: &TrackParams, bit: &mut usize) -> Vec3A {
        match p.bits {
            0 => p.bias,
            32 => {
                let d = self.data;
                let v = Vec3A::new(
                    f32::from_bits(read_bits(d, *bit, 32)),
                    f32::from_bits(read_bits(d, *bit + 32, 32)),
                    f32::from_bits(read_bits(d, *bit + 64, 32)),
                );
                *bit += 96;
                v
            }
            bits => {
                // 3 * 19 bits + 7 bits of shift fit one 64-bit load.
                let word = load_u64(self.data, *bit >> 3) >> (*bit & 7);
                let mask = (1u64 << bits) - 1;
                let b = bits as usize;
                let q = Vec3A::new(
                    (word & mask) as u32 as f32,
                    ((word >> b) & mask) as u32 as f32,
                    ((word >> (2 * b)) & mask) as u32 as f32,
                );
                *bit += 3 * b;
                p.bias + p.scale * (q * p.inv)
            }
        }
    }

    /// One rotation sample (not normalized) at bit position `bit` (advanced).
    #[inline(always)]
    fn rot_sample(&self, p: &TrackParams, bit: &mut usize) -> Quat {
        if p.bits == 32 {
            let d = self.data;
            let q = Quat::from_xyzw(
                f32::from_bits(read_bits(d, *bit, 32)),
                f32::from_bits(read_bits(d, *bit + 32, 32)),
                f32::from_bits(read_bits(d, *bit + 64, 32)),
                f32::from_bits(read_bits(d, *bit + 96, 32)),
            );
            *bit += 128;
            return q;
        }
        let v = self.vec_sample(p, bit);
        rotation_from_xyz(v.x, v.y, v.z)
    }

    #[inline]
    fn skip_track(&self, s: &SampleRef, track: usize, rot: bool, bit: &mut usize) {
        let rate = self.data.get(s.block + track).copied().unwrap_or(0);
        *bit += track_sample_bits(rate, rot) as usize;
    }

    #[inline(always)]
    fn read_vec3(&self, at: &mut usize) -> Vec3 {
        let v = match self.constants.get(*at..*at + 12) {
            Some(b) => {
                let f = |i: usize| f32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
                Vec3::new(f(0), f(4), f(8))
            }
            None => Vec3::ZERO,
        };
        *at += 12;
        v
    }

    /// Decode the joint at the cursor and advance it. `two` says whether
    /// the second sample is blended in at `alpha`; `same` whether both
    /// samples lie in one segment (their parameters are then shared).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn decode_joint(
        &self,
        c: &mut Cursor,
        s0: &SampleRef,
        s1: &SampleRef,
        two: bool,
        same: bool,
        alpha: f32,
        default: &Transform,
    ) -> (Transform, Option<(Quat, Quat)>) {
        let t = self.types.get(c.joint).copied().unwrap_or(0);
        let mut out = *default;
        let mut pending = None;
        c.joint += 1;
        if t == 0 {
            return (out, None);
        }
        // Rotation.
        match t & 3 {
            KIND_DEFAULT => {}
            KIND_CONSTANT => {
                let v = self.read_vec3(&mut c.constant);
                let q = rotation_from_xyz(v.x, v.y, v.z);
                pending = Some((q, q));
            }
            KIND_ANIMATED => {
                let p0 = self.params(s0.block, c.track);
                let qa = self.rot_sample(&p0, &mut c.bit0);
                let qb = if two {
                    let p1 = if same {
                        p0
                    } else {
                        self.params(s1.block, c.track)
                    };
                    self.rot_sample(&p1, &mut c.bit1)
                } else {
                    qa
                };
                pending = Some((qa, qb));
                c.track += 1;
            }
            _ => {
                let v = self.read_vec3(&mut c.constant);
                let w = match self.constants.get(c.constant..c.constant + 4) {
                    Some(b) => f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                    None => 1.0,
                };
                c.constant += 4;
                out.rotation = Quat::from_xyzw(v.x, v.y, v.z, w);
            }
        }
        // Translation and scale.
        for k in 1..3 {
            let value = match (t >> (2 * k)) & 3 {
                KIND_CONSTANT => self.read_vec3(&mut c.constant),
                KIND_ANIMATED => {
                    let p0 = self.params(s0.block, c.track);
                    let va = self.vec_sample(&p0, &mut c.bit0);
                    let v = if two {
                        let p1 = if same {
                            p0
                        } else {
                            self.params(s1.block, c.track)
                        };
                        va.lerp(self.vec_sample(&p1, &mut c.bit1), alpha)
                    } else {
                        va
                    };
                    c.track += 1;
                    Vec3::from(v)
                }
                _ => continue,
            };
            if k == 1 {
                out.translation = value;
            } else {
                out.scale = value;
            }
        }
        (out, pending)
    }

    /// Advance the cursor past one joint without decoding it.
    #[inline]
    fn skip_joint(&self, c: &mut Cursor, s0: &SampleRef, s1: &SampleRef) {
        let t = self.types.get(c.joint).copied().unwrap_or(0);
        for k in 0..3 {
            match (t >> (2 * k)) & 3 {
                KIND_CONSTANT => c.constant += 12,
                KIND_CONSTANT_FULL => c.constant += 16,
                KIND_ANIMATED => {
                    self.skip_track(s0, c.track, k == 0, &mut c.bit0);
                    self.skip_track(s1, c.track, k == 0, &mut c.bit1);
                    c.track += 1;
                }
                _ => {}
            }
        }
        c.joint += 1;
    }

    #[inline]
    fn start(&self, pos: SamplePosition) -> Option<(SampleRef, SampleRef, bool, Cursor)> {
        if pos.i0 >= self.num_samples || pos.i1 >= self.num_samples {
            return None;
        }
        let s0 = self.sample_ref(pos.i0);
        let two = pos.i1 != pos.i0 && pos.alpha != 0.0;
        let s1 = if two { self.sample_ref(pos.i1) } else { s0 };
        let c = Cursor {
            joint: 0,
            constant: 0,
            track: 0,
            bit0: s0.bit,
            bit1: s1.bit,
        };
        Some((s0, s1, two, c))
    }

    /// Decode every joint at `pos` into `out` (rotation by
    /// [`nlerp_shortest`], translation and scale by lerp). `defaults` is the
    /// skeleton rest pose. Returns false and leaves `out` untouched if a
    /// buffer has the wrong length or the position is out of range.
    pub fn decode_pose(
        &self,
        pos: SamplePosition,
        defaults: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        if out.len() != self.joint_count || defaults.len() != self.joint_count {
            return false;
        }
        let Some((s0, s1, two, mut c)) = self.start(pos) else {
            return false;
        };
        let same = s0.block == s1.block;
        let mut batch = RotationBatch::new(if two { pos.alpha } else { 0.0 });
        // Lengths were checked above: these indices are in bounds.
        for i in 0..self.joint_count {
            let (t, pending) =
                self.decode_joint(&mut c, &s0, &s1, two, same, pos.alpha, &defaults[i]);
            out[i] = t;
            if let Some((a, b)) = pending {
                batch.push(i, a, b, out);
            }
        }
        batch.flush(out);
        true
    }

    /// Decode the joints listed in `joints` (any order, repeats allowed)
    /// into `out` (same length). Ascending lists cost one walk over the
    /// type bytes; others restart the walk when they step back.
    pub fn decode_joints(
        &self,
        pos: SamplePosition,
        defaults: &[Transform],
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        if out.len() != joints.len() || defaults.len() != self.joint_count {
            return false;
        }
        if joints.iter().any(|&j| j as usize >= self.joint_count) {
            return false;
        }
        let Some((s0, s1, two, c0)) = self.start(pos) else {
            return false;
        };
        let same = s0.block == s1.block;
        let mut batch = RotationBatch::new(if two { pos.alpha } else { 0.0 });
        let mut c = c0;
        for (i, &j) in joints.iter().enumerate() {
            let j = j as usize;
            if j < c.joint {
                c = c0;
            }
            while c.joint < j {
                self.skip_joint(&mut c, &s0, &s1);
            }
            let Some(d) = defaults.get(j) else {
                return false;
            };
            let (t, pending) = self.decode_joint(&mut c, &s0, &s1, two, same, pos.alpha, d);
            if let Some(o) = out.get_mut(i) {
                *o = t;
            }
            if let Some((a, b)) = pending {
                batch.push(i, a, b, out);
            }
        }
        batch.flush(out);
        true
    }

    /// Decode the stored sample `sample` exactly (no blend).
    pub fn decode_sample(
        &self,
        sample: u32,
        defaults: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        self.decode_pose(
            SamplePosition {
                i0: sample,
                i1: sample,
                alpha: 0.0,
            },
            defaults,
            out,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put_u32(b: &mut Vec<u8>, v: u32) {
        b.extend_from_slice(&v.to_le_bytes());
    }
    fn put_f32(b: &mut Vec<u8>, v: f32) {
        b.extend_from_slice(&v.to_le_bytes());
    }

    /// Hand-built blob: joint 0 constant translation, animated rotation at
    /// 8 bits; joint 1 default; 3 samples in 2 segments.
    fn tiny_blob() -> Vec<u8> {
        let mut b = Vec::new();
        put_u32(&mut b, 2);
        put_u32(&mut b, 3);
        put_u32(&mut b, 1);
        put_u32(&mut b, 2);
        b.push(KIND_ANIMATED | (KIND_CONSTANT << 2));
        b.push(0);
        for v in [1.0, 2.0, 3.0] {
            put_f32(&mut b, v);
        }
        // Clip range of the rotation: x, y in [0, 0], z in [0, 0.5].
        for v in [0.0, 0.0, 0.0, 0.0, 0.0, 0.5] {
            put_f32(&mut b, v);
        }
        // Segment 0: 2 samples at rate id 6 (8 bits), segment 1: 1 sample at rate 0.
        let seg0 = 1 + 6 + 6;
        put_u32(&mut b, 0);
        put_u32(&mut b, 24);
        put_u32(&mut b, seg0 as u32);
        put_u32(&mut b, 0);
        b.push(6);
        // Segment range: z spans the whole clip range.
        b.extend_from_slice(&[0, 0, 0, 0, 0, 255]);
        // Samples: (0, 0, 0) then (0, 0, 255).
        b.extend_from_slice(&[0, 0, 0, 0, 0, 255]);
        b.push(RATE_CONSTANT);
        b.extend_from_slice(&[0, 0, 0, 0, 0xff, 0xff]);
        b.extend_from_slice(&[0; PADDING_BYTES]);
        b
    }

    #[test]
    fn tiny_blob_decodes() {
        let blob = tiny_blob();
        let clip = VbrClip::parse(&blob, 2, 3).expect("valid");
        let defaults = [
            Transform::IDENTITY,
            Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE),
        ];
        let mut out = [Transform::IDENTITY; 2];
        assert!(clip.decode_sample(0, &defaults, &mut out));
        assert_eq!(out[0].translation, Vec3::new(1.0, 2.0, 3.0));
        assert_eq!(out[0].rotation, Quat::IDENTITY);
        assert_eq!(out[1], defaults[1]);
        assert!(clip.decode_sample(1, &defaults, &mut out));
        assert!((out[0].rotation.z - 0.5).abs() < 1e-6);
        assert!(clip.decode_sample(2, &defaults, &mut out));
        assert!((out[0].rotation.z - 0.5).abs() < 1e-6);
        let pos = SamplePosition {
            i0: 0,
            i1: 1,
            alpha: 0.5,
        };
        assert!(clip.decode_pose(pos, &defaults, &mut out));
        let mut sub = [Transform::IDENTITY; 3];
        assert!(clip.decode_joints(pos, &defaults, &[1, 0, 0], &mut sub));
        assert_eq!(sub[1], out[0]);
        assert_eq!(sub[2], out[0]);
        assert_eq!(sub[0], out[1]);
    }

    #[test]
    fn rejects_every_truncation_and_bad_counts() {
        let blob = tiny_blob();
        for n in 0..blob.len() {
            assert!(
                VbrClip::parse(&blob[..n], 2, 3).is_err(),
                "truncated to {n}"
            );
        }
        assert!(VbrClip::parse(&blob, 3, 3).is_err());
        assert!(VbrClip::parse(&blob, 2, 4).is_err());
        let mut longer = blob.clone();
        longer.push(0);
        assert!(VbrClip::parse(&longer, 2, 3).is_err());
    }

    #[test]
    fn corrupted_bytes_never_panic() {
        let blob = tiny_blob();
        let defaults = [Transform::IDENTITY; 2];
        let mut out = [Transform::IDENTITY; 2];
        for i in 0..blob.len() {
            for v in [0u8, 1, 3, 7, 0x40, 0x80, 0xff] {
                let mut b = blob.clone();
                b[i] = v;
                if let Ok(c) = VbrClip::parse(&b, 2, 3) {
                    for s in 0..3 {
                        let _ = c.decode_sample(s, &defaults, &mut out);
                    }
                }
            }
        }
    }

    #[test]
    fn segment_lookup_covers_all_samples() {
        for ns in 1..60u32 {
            for segs in 1..=ns.min(9) {
                let clip = VbrClip {
                    types: &[],
                    constants: &[],
                    ranges: &[],
                    table: &[],
                    data: &[],
                    joint_count: 0,
                    num_samples: ns,
                    animated: 1,
                    segments: segs,
                    seg_len: ns / segs,
                    seg_long: ns % segs,
                };
                assert_eq!(clip.segment_start(segs), ns);
                for i in 0..ns {
                    let s = clip.segment_of(i);
                    assert!(s < segs);
                    assert!(clip.segment_start(s) <= i && i < clip.segment_start(s + 1));
                }
            }
        }
    }
}
