//! Scalar curve channels: their schema and quantized samples (CURV).

use super::bytes::{Bytes, Strings};
use super::format::*;
use super::{invalid, PackageError};
use crate::timing::SamplePosition;
use ludus_anim_format::package::{CurveComposition, CurveRecord};

/// One scalar curve channel (a morph weight, a custom property), sampled on
/// its clip's grid and stored quantized: each sample is `bits` wide in an
/// LSB-first bit stream and decodes as `min + q * extent / (2^bits - 1)`;
/// width 0 is a constant channel (every sample is `min`, no data) and
/// width 32 stores raw f32. Validated at load; decoding never allocates.
#[derive(Clone, Copy, Debug)]
pub struct CurveChannel<'a> {
    id: u64,
    name: &'a str,
    /// Schema: the value when the channel is absent from a clip.
    default: f32,
    /// Schema: step interpolation (hold sample `i0`) instead of linear.
    step: bool,
    /// Schema: how the channel combines with other sources.
    composition: CurveComposition,
    /// Schema: the channel's value range `[lo, hi]` (`lo <= hi`; either
    /// may be infinite for an unbounded side).
    range: (f32, f32),
    /// Schema: decoded values are clamped to `range`.
    clamp: bool,
    bits: u8,
    count: u32,
    min: f32,
    extent: f32,
    /// `extent / (2^bits - 1)`, precomputed at load.
    scale: f32,
    data: &'a [u8],
}

impl<'a> CurveChannel<'a> {
    /// Stable channel id: FNV-1a 64 of the name.
    pub fn id(&self) -> u64 {
        self.id
    }
    /// The channel's name (a morph target, a custom property).
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// Samples on the owning clip's grid.
    pub(super) fn num_samples(&self) -> usize {
        self.count as usize
    }
    /// The channel's schema (default, interpolation, composition, range,
    /// clamp) and storage (sample width, quantization range, sizes), as
    /// its record holds them.
    pub fn record(&self) -> CurveRecord {
        CurveRecord {
            default_value: self.default,
            step: self.step,
            composition: self.composition,
            range: self.range,
            clamp: self.clamp,
            bits: self.bits,
            num_samples: self.count,
            min: self.min,
            extent: self.extent,
            data_size: self.data.len(),
        }
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

    /// Value at a sample position ([`super::Clip::position`] of the owning
    /// clip): sample `i0` for step channels, else the lerp of samples `i0`
    /// and `i1` by `alpha`.
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
pub(super) fn parse_curve<'a>(
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
