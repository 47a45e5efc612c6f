//! Segment range reduction and quantization of one animated track over one
//! segment. Reconstruction goes through the runtime's own functions, so the
//! values the search measures are bit-identical to what the decoder makes.
//!
//! Adapted ideas: Nicholas Frechette, "Animation Compression: Range
//! Reduction" and "Simple Quantization" (normalize each component to
//! [0, 1] over the clip, again over the segment with 8-bit bounds, then
//! quantize uniformly).

use crate::classify::AnimTrack;
use ludus_anim_format::vbr::{
    dequantize, dequantize_constant, rate_id, rotation_from_xyz, segment_bias_scale,
    FULL_SEGMENT_RANGE, RATE_BITS, RATE_CONSTANT, RATE_RAW, RATE_UNRANGED,
};

/// A track's per-segment constants: the 8-bit range and the rate-0 value.
#[derive(Clone, Copy, Debug)]
pub(crate) struct SegRange {
    /// min x, y, z then extent x, y, z (units of 1/255 of the clip range).
    pub range: [u8; 6],
    /// Rate-0 value per component (units of 1/65535 of the clip range).
    pub constant: [u16; 3],
}

fn normalized(v: f32, min: f32, ext: f32) -> f64 {
    if ext > 0.0 {
        ((v as f64 - min as f64) / ext as f64).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

pub(crate) fn seg_range(track: &AnimTrack, start: usize, end: usize) -> SegRange {
    let mut range = [0u8; 6];
    let mut constant = [0u16; 3];
    for c in 0..3 {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for v in &track.values[start..end] {
            let u = normalized(v[c], track.clip_min[c], track.clip_ext[c]);
            lo = lo.min(u);
            hi = hi.max(u);
        }
        // Conservative 8-bit bounds: floor the min, ceil the max.
        let qlo = (lo * 255.0).floor().clamp(0.0, 255.0) as u8;
        let qhi = (hi * 255.0).ceil().clamp(qlo as f64, 255.0) as u8;
        range[c] = qlo;
        range[3 + c] = qhi - qlo;
        // Rate-0 value: the 16-bit code closest to the middle, refined on
        // the decoded value to minimize the largest deviation.
        let mid = ((lo + hi) * 0.5 * 65535.0).round().clamp(0.0, 65535.0) as u16;
        let worst = |code: u16| {
            let d = dequantize_constant(code, track.clip_min[c], track.clip_ext[c]);
            track.values[start..end]
                .iter()
                .map(|v| (v[c] - d).abs())
                .fold(0.0f32, f32::max)
        };
        let mut best = (worst(mid), mid);
        for code in [mid.saturating_sub(1), mid.saturating_add(1)] {
            let w = worst(code);
            if w < best.0 {
                best = (w, code);
            }
        }
        constant[c] = best.1;
    }
    SegRange { range, constant }
}

/// Per-component constants of one quantization (rate id `1..RAW`).
#[derive(Clone, Copy)]
struct Component {
    cmin: f32,
    cext: f32,
    bias: f32,
    scale: f32,
    seg_min: f64,
    seg_ext: f64,
    sext: u8,
}

/// One sample's stored integers and decoded value at a quantized id.
#[inline]
fn quantize_sample(v: &[f32; 4], comps: &[Component; 3], bits: u32) -> ([u32; 4], [f32; 4]) {
    let max = (1u32 << bits) - 1;
    let mut qi = [0u32; 4];
    let mut d = [0.0f32; 4];
    for (c, k) in comps.iter().enumerate() {
        let u = normalized(v[c], k.cmin, k.cext);
        let guess = if k.sext == 0 {
            0
        } else {
            // Nearest code, rounding half up (`as` truncates and saturates
            // at 0; baseline x86-64 has no rounding instruction, and
            // `f64::round` is a call). The window below absorbs the odd
            // half-way case.
            ((((u - k.seg_min) / k.seg_ext) * max as f64 + 0.5) as u32).min(max)
        };
        // Pick the code whose exact reconstruction is closest.
        let mut best = (f32::INFINITY, guess);
        for code in [guess.saturating_sub(1), guess, (guess + 1).min(max)] {
            let e = (dequantize(code, bits, k.bias, k.scale) - v[c]).abs();
            if e < best.0 {
                best = (e, code);
            }
        }
        qi[c] = best.1;
        d[c] = dequantize(best.1, bits, k.bias, k.scale);
    }
    (qi, d)
}

/// Decoded value of one sample at rate byte `rate` (`None`: a quantized
/// id, see [`quantize_sample`]).
#[inline]
fn special_sample(
    track: &AnimTrack,
    sr: &SegRange,
    v: &[f32; 4],
    id: u8,
) -> Option<([u32; 4], [f32; 4])> {
    let rot = track.is_rotation();
    if id == RATE_RAW {
        let mut qi = v.map(f32::to_bits);
        let mut d = *v;
        if !rot {
            qi[3] = 0;
            d[3] = 0.0;
        }
        return Some((qi, d));
    }
    if id == RATE_CONSTANT {
        let d = std::array::from_fn(|c| {
            if c < 3 {
                dequantize_constant(sr.constant[c], track.clip_min[c], track.clip_ext[c])
            } else {
                0.0
            }
        });
        return Some(([0; 4], d));
    }
    None
}

/// Visit every sample of `start..end` of `track` at rate byte `rate`:
/// stored integers and decoded (unnormalized for rotations) value.
fn for_each_sample(
    track: &AnimTrack,
    sr: &SegRange,
    start: usize,
    end: usize,
    rate: u8,
    mut f: impl FnMut([u32; 4], [f32; 4]),
) {
    // Unranged: quantized over the whole clip range.
    let range = if rate & RATE_UNRANGED != 0 {
        FULL_SEGMENT_RANGE
    } else {
        sr.range
    };
    let id = rate_id(rate);
    let rot = track.is_rotation();
    let bits = RATE_BITS[id as usize];
    let comps: [Component; 3] = std::array::from_fn(|c| {
        let (cmin, cext) = (track.clip_min[c], track.clip_ext[c]);
        let (smin, sext) = (range[c], range[3 + c]);
        let (bias, scale) = segment_bias_scale(smin, sext, cmin, cext);
        Component {
            cmin,
            cext,
            bias,
            scale,
            seg_min: smin as f64 / 255.0,
            seg_ext: sext as f64 / 255.0,
            sext,
        }
    });
    for v in &track.values[start..end] {
        let (qi, mut d) = match special_sample(track, sr, v, id) {
            Some(x) => x,
            None => quantize_sample(v, &comps, bits),
        };
        if rot && id != RATE_RAW {
            d[3] = rotation_from_xyz(d[0], d[1], d[2]).w;
        }
        f(qi, d);
    }
}

/// Stored integers of `track` over `start..end` at rate byte `rate`, one
/// per segment sample (what the writer packs).
pub(crate) fn quantize(
    track: &AnimTrack,
    sr: &SegRange,
    start: usize,
    end: usize,
    rate: u8,
) -> Vec<[u32; 4]> {
    let mut q = Vec::with_capacity(end - start);
    for_each_sample(track, sr, start, end, rate, |qi, _| q.push(qi));
    q
}

/// Decoded (unnormalized for rotations) values of `track` over
/// `start..end` at rate byte `rate`, into `out`: what the search measures.
pub(crate) fn decode_into(
    track: &AnimTrack,
    sr: &SegRange,
    start: usize,
    end: usize,
    rate: u8,
    out: &mut Vec<[f32; 4]>,
) {
    out.clear();
    for_each_sample(track, sr, start, end, rate, |_, d| out.push(d));
}
