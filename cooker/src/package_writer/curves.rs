//! Scalar curve channels as the package stores them: a schema and the
//! samples quantized to the profile's curve threshold.

use ludus_anim_format::package::CurveComposition;
use ludus_anim_format::package::*;

/// One scalar channel (morph weight, custom property): its schema and its
/// samples on the clip's grid, already encoded. Build it with
/// [`CurveEntry::quantized`] (the smallest sample width within an error
/// threshold) or [`CurveEntry::raw`] (lossless f32); both give the default
/// schema (linear or step as asked, composition "blend", unbounded range,
/// no clamp), which the public fields then adjust.
///
/// The reader rejects a non-finite `default` and a `range` with a NaN or
/// `lo > hi`; a `clamp` range narrower than the samples adds error the
/// quantizer did not account for.
#[derive(Clone, Debug, PartialEq)]
pub struct CurveEntry {
    /// FNV-1a 64 of `name`.
    pub id: u64,
    pub name: String,
    pub default: f32,
    /// Step interpolation (else linear).
    pub step: bool,
    pub composition: CurveComposition,
    /// Value range `[lo, hi]`; `(-inf, +inf)` when none is declared.
    pub range: (f32, f32),
    /// Clamp decoded values to `range`.
    pub clamp: bool,
    pub samples: QuantizedCurve,
}

impl CurveEntry {
    /// A channel whose sample width is the smallest that keeps every
    /// decoded sample within `threshold` of `values` (see
    /// [`QuantizedCurve::for_threshold`]).
    pub fn quantized(
        id: u64,
        name: impl Into<String>,
        default: f32,
        step: bool,
        values: &[f32],
        threshold: f32,
    ) -> CurveEntry {
        CurveEntry::with_samples(
            id,
            name,
            default,
            step,
            QuantizedCurve::for_threshold(values, threshold),
        )
    }

    /// A channel stored as raw f32 samples (width 32, lossless).
    pub fn raw(
        id: u64,
        name: impl Into<String>,
        default: f32,
        step: bool,
        values: &[f32],
    ) -> CurveEntry {
        CurveEntry::with_samples(id, name, default, step, QuantizedCurve::raw(values))
    }

    fn with_samples(
        id: u64,
        name: impl Into<String>,
        default: f32,
        step: bool,
        samples: QuantizedCurve,
    ) -> CurveEntry {
        CurveEntry {
            id,
            name: name.into(),
            default,
            step,
            composition: CurveComposition::Blend,
            range: (f32::NEG_INFINITY, f32::INFINITY),
            clamp: false,
            samples,
        }
    }
}

/// A curve's samples encoded for CURV/DATA: range reduction (`min`,
/// `extent`) and a fixed width per channel, `bits` per sample packed
/// LSB-first. Width 0 is a constant (`min`, no data), 1..=24 quantize
/// (`min + q * extent / (2^bits - 1)`), 32 stores raw f32. Decoding uses
/// the runtime's own [`curve_dequantize`], so [`QuantizedCurve::value`]
/// is bit-identical to what a loaded package returns (before any clamp).
#[derive(Clone, Debug, PartialEq)]
pub struct QuantizedCurve {
    bits: u8,
    count: u32,
    min: f32,
    extent: f32,
    data: Vec<u8>,
}

impl QuantizedCurve {
    /// The smallest width `b` in `0..=24` whose actual decoded error
    /// ([`QuantizedCurve::max_error`]) is at most `threshold`, else raw
    /// f32 (width 32). Uniform quantization bounds that error by
    /// `extent / (2^b - 1) / 2` (half the spread for width 0), so a
    /// channel needs about `ceil(log2(extent / (2 threshold) + 1))` bits.
    /// The search measures instead of trusting the bound: it can undercut
    /// it (samples that sit on the grid), f32 rounding of the decode can
    /// never push a sample over the threshold (for large magnitudes against
    /// a small threshold that may cost one bit more than the bound), and
    /// width `b - 1` is known to exceed the threshold. Non-finite samples,
    /// and a non-finite or negative threshold, fall back to raw.
    pub fn for_threshold(values: &[f32], threshold: f32) -> QuantizedCurve {
        if threshold.is_finite() && threshold >= 0.0 {
            for bits in 0..=CURVE_MAX_QUANT_BITS {
                if let Some(q) = QuantizedCurve::encode(values, bits) {
                    if q.max_error(values) <= threshold {
                        return q;
                    }
                }
            }
        }
        QuantizedCurve::raw(values)
    }

    /// Raw f32 samples (width 32).
    pub fn raw(values: &[f32]) -> QuantizedCurve {
        QuantizedCurve {
            bits: CURVE_BITS_RAW,
            count: values.len() as u32,
            min: 0.0,
            extent: 0.0,
            data: values.iter().flat_map(|v| v.to_le_bytes()).collect(),
        }
    }

    /// `values` at width `bits`: 0 stores the midpoint of their span, 1..=24
    /// quantize over `[min, max]` (each sample takes the code whose decoded
    /// value is nearest), 32 is [`QuantizedCurve::raw`]. `None` for an
    /// invalid width, or for widths below 32 when a sample or the span is
    /// not finite.
    pub fn encode(values: &[f32], bits: u8) -> Option<QuantizedCurve> {
        if bits == CURVE_BITS_RAW {
            return Some(QuantizedCurve::raw(values));
        }
        if !curve_bits_valid(bits) || values.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let lo = values.iter().copied().fold(f32::INFINITY, f32::min);
        let hi = values.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let (lo, hi) = if values.is_empty() {
            (0.0, 0.0)
        } else {
            (lo, hi)
        };
        let count = values.len() as u32;
        if bits == 0 {
            // Midpoint in f64: exact for a constant, no overflow otherwise.
            let mid = ((lo as f64 + hi as f64) / 2.0) as f32;
            return Some(QuantizedCurve {
                bits,
                count,
                min: mid,
                extent: 0.0,
                data: Vec::new(),
            });
        }
        let extent = hi - lo;
        if !extent.is_finite() {
            return None;
        }
        let scale = curve_scale(extent, bits);
        let max_q = (1u32 << bits) - 1;
        let mut data = vec![0u8; curve_data_size(count, bits) as usize];
        for (i, &v) in values.iter().enumerate() {
            let q = if scale > 0.0 {
                let guess = ((v as f64 - lo as f64) / scale as f64)
                    .round()
                    .clamp(0.0, max_q as f64) as u32;
                // The nearest decoded value among the neighbours of the
                // rounded guess (f32 decode rounding may favour one).
                [
                    guess.saturating_sub(1),
                    guess,
                    guess.saturating_add(1).min(max_q),
                ]
                .into_iter()
                .min_by(|&a, &b| {
                    let ea = (curve_dequantize(lo, scale, a) - v).abs();
                    let eb = (curve_dequantize(lo, scale, b) - v).abs();
                    ea.total_cmp(&eb).then(a.cmp(&b))
                })
                .unwrap_or(guess)
            } else {
                0
            };
            put_bits(&mut data, i as u64 * bits as u64, bits, q);
        }
        Some(QuantizedCurve {
            bits,
            count,
            min: lo,
            extent,
            data,
        })
    }

    pub fn bits(&self) -> u8 {
        self.bits
    }
    pub fn len(&self) -> usize {
        self.count as usize
    }
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }
    pub fn min(&self) -> f32 {
        self.min
    }
    pub fn extent(&self) -> f32 {
        self.extent
    }
    /// The packed sample bytes written to DATA (`ceil(count * bits / 8)`).
    pub fn data(&self) -> &[u8] {
        &self.data
    }

    /// Decoded sample `i` exactly as the runtime decodes it (unclamped);
    /// `None` past the end.
    pub fn value(&self, i: usize) -> Option<f32> {
        if i >= self.len() {
            return None;
        }
        match self.bits {
            0 => Some(self.min),
            CURVE_BITS_RAW => {
                let b = self.data.get(i * 4..i * 4 + 4)?;
                Some(f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            }
            bits => {
                let q = get_bits(&self.data, i as u64 * bits as u64, bits);
                Some(curve_dequantize(
                    self.min,
                    curve_scale(self.extent, bits),
                    q,
                ))
            }
        }
    }

    /// Largest `|decoded - values[i]|` (infinite if the counts differ or a
    /// sample does not round-trip a non-finite value).
    pub fn max_error(&self, values: &[f32]) -> f32 {
        if values.len() != self.len() {
            return f32::INFINITY;
        }
        values
            .iter()
            .enumerate()
            .map(|(i, &v)| match self.value(i) {
                Some(d) if d.to_bits() == v.to_bits() => 0.0,
                Some(d) => {
                    let e = (d - v).abs();
                    if e.is_nan() {
                        f32::INFINITY
                    } else {
                        e
                    }
                }
                None => f32::INFINITY,
            })
            .fold(0.0, f32::max)
    }
}

/// Write the low `bits` of `q` at stream bit `at` (LSB-first).
fn put_bits(data: &mut [u8], at: u64, bits: u8, q: u32) {
    for k in 0..bits as u64 {
        if q >> k & 1 != 0 {
            let bit = at + k;
            if let Some(b) = data.get_mut((bit / 8) as usize) {
                *b |= 1 << (bit % 8);
            }
        }
    }
}

/// Read `bits` bits at stream bit `at` (LSB-first).
fn get_bits(data: &[u8], at: u64, bits: u8) -> u32 {
    (0..bits as u64).fold(0u32, |q, k| {
        let bit = at + k;
        let set = data
            .get((bit / 8) as usize)
            .is_some_and(|b| b >> (bit % 8) & 1 != 0);
        q | (set as u32) << k
    })
}
