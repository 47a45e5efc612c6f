//! Package v2 writer: the inverse of `ludus_anim_runtime::package`. Output
//! is a pure function of its inputs (deterministic string order, zeroed
//! padding), so identical cooks give identical bytes.
//!
//! The prepared clip semantics of v2 (additive reference, root-motion
//! trajectory, markers/events, loop seam figure) travel in a
//! [`ClipPrepEntry`] per clip, passed beside the [`PackageContents`] to
//! [`write_package_prepared`]; [`write_package`] writes plain clips. They
//! are kept apart from [`ClipEntry`] so a caller that has no preparation
//! (or predates it) builds clips exactly as before.

use ludus_anim_runtime::codec::CodecId;
use ludus_anim_runtime::hash::fnv1a64;
use ludus_anim_runtime::package::format::*;
use ludus_anim_runtime::package::{CurveComposition, MarkerKind, RootMotionPolicy};
use ludus_anim_runtime::root_motion::RigidTransform;
use ludus_anim_runtime::timing::LoopMode;
use ludus_anim_runtime::Skeleton;
use std::collections::BTreeMap;

/// One clip to write.
#[derive(Clone, Debug)]
pub struct ClipEntry {
    pub name: String,
    pub duration_s: f32,
    pub sample_rate_hz: f32,
    pub num_samples: u32,
    pub loop_mode: LoopMode,
    pub codec: CodecId,
    pub codec_version: u16,
    pub profile: String,
    pub source_hash: [u8; 32],
    pub resample_error_m: f32,
    pub max_error_m: f32,
    pub blob: Vec<u8>,
    pub curves: Vec<CurveEntry>,
}

/// A clip's prepared semantics (package v2). `Default` is a plain pose clip
/// with no root motion, no events and no seam figure.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClipPrepEntry {
    /// `Some(description)` flags the clip additive and names its reference.
    pub additive_reference: Option<String>,
    pub root_motion: Option<RootMotionEntry>,
    /// In track order (sorted by time, then id; canonicalized for loops).
    pub events: Vec<EventEntry>,
    pub loop_seam_error_m: Option<f32>,
}

/// A clip's root trajectory: full-f32 keys, never through a pose codec.
#[derive(Clone, Debug, PartialEq)]
pub struct RootMotionEntry {
    pub joint: String,
    pub policy: RootMotionPolicy,
    pub reference_offset: RigidTransform,
    pub sample_rate_hz: f32,
    /// `trajectory_key_count(duration, rate)` keys, key 0 the identity.
    pub keys: Vec<RigidTransform>,
    pub drift_100_loops_m: Option<f32>,
}

/// One marker or event.
#[derive(Clone, Debug, PartialEq)]
pub struct EventEntry {
    pub time_s: f32,
    /// FNV-1a 64 of `name` (the reader checks it).
    pub id: u64,
    pub kind: MarkerKind,
    pub reversible: bool,
    pub name: String,
}

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

pub struct PackageContents<'a> {
    pub cooker_version: String,
    pub asset_name: String,
    pub source_path: String,
    pub source_hash: [u8; 32],
    pub skeleton: &'a Skeleton,
    pub clips: Vec<ClipEntry>,
}

#[derive(Default)]
struct StringTable {
    index: BTreeMap<String, u32>,
    list: Vec<String>,
}

impl StringTable {
    fn add(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.index.insert(s.to_string(), i);
        self.list.push(s.to_string());
        i
    }
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.list.len() as u32).to_le_bytes());
        let mut off = 0u32;
        out.extend_from_slice(&off.to_le_bytes());
        for s in &self.list {
            off += s.len() as u32;
            out.extend_from_slice(&off.to_le_bytes());
        }
        for s in &self.list {
            out.extend_from_slice(s.as_bytes());
        }
        out
    }
}

fn pad_to(buf: &mut Vec<u8>, align: usize) {
    while !buf.len().is_multiple_of(align) {
        buf.push(0);
    }
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_f32(b: &mut Vec<u8>, v: f32) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// Write `bytes` at `field` of a fixed-size record (the field offsets are
/// constants inside the record, so the range is always in bounds).
fn set(record: &mut [u8], field: usize, bytes: &[u8]) {
    debug_assert!(field + bytes.len() <= record.len());
    if let Some(dst) = record.get_mut(field..field + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

fn put_rigid(b: &mut Vec<u8>, r: &RigidTransform) {
    for v in [
        r.rotation.x,
        r.rotation.y,
        r.rotation.z,
        r.rotation.w,
        r.translation.x,
        r.translation.y,
        r.translation.z,
    ] {
        put_f32(b, v);
    }
}

/// Serialize a package of plain clips (no prepared semantics).
pub fn write_package(p: &PackageContents<'_>) -> Vec<u8> {
    write_package_prepared(p, &[])
}

/// Serialize a package. `prep[i]` holds clip `i`'s prepared semantics
/// (clips past the end of `prep` are plain). Layout: header, section
/// table, then sections STRS, META, SKEL, CLIP, CURV, EVNT, DATA, each
/// 16-byte aligned.
pub fn write_package_prepared(p: &PackageContents<'_>, prep: &[ClipPrepEntry]) -> Vec<u8> {
    let plain = ClipPrepEntry::default();
    let mut strings = StringTable::default();
    let cooker = strings.add(&p.cooker_version);
    let asset = strings.add(&p.asset_name);
    let path = strings.add(&p.source_path);

    // META
    let mut meta = Vec::new();
    put_u32(&mut meta, cooker);
    put_u32(&mut meta, asset);
    put_u32(&mut meta, path);
    put_u32(&mut meta, 0);
    meta.extend_from_slice(&p.source_hash);

    // SKEL
    let sk = p.skeleton;
    let mut skel = Vec::new();
    put_u32(&mut skel, sk.joint_count() as u32);
    put_u32(&mut skel, 0);
    skel.extend_from_slice(&sk.identity().0);
    for j in 0..sk.joint_count() {
        put_u32(&mut skel, sk.parents()[j]);
        put_u32(&mut skel, sk.subtree_ends()[j]);
        put_u64(&mut skel, sk.ids()[j].0);
        let t = sk.rest_pose()[j];
        for v in t.to_array() {
            put_f32(&mut skel, v);
        }
        let name = strings.add(sk.name(j));
        put_u32(&mut skel, name);
    }

    // DATA, CLIP, CURV
    let mut data: Vec<u8> = Vec::new();
    let mut clips = Vec::new();
    let mut curves = Vec::new();
    put_u32(&mut clips, p.clips.len() as u32);
    pad_to(&mut clips, 16);
    let total_curves: usize = p.clips.iter().map(|c| c.curves.len()).sum();
    put_u32(&mut curves, total_curves as u32);
    pad_to(&mut curves, 16);
    let mut curve_index = 0u32;
    let mut events = Vec::new();
    let total_events: usize = prep
        .iter()
        .take(p.clips.len())
        .map(|e| e.events.len())
        .sum();
    put_u32(&mut events, total_events as u32);
    pad_to(&mut events, 16);
    let mut event_index = 0u32;
    for (ci, c) in p.clips.iter().enumerate() {
        let x = prep.get(ci).unwrap_or(&plain);
        pad_to(&mut data, ALIGN);
        let blob_off = data.len() as u64;
        data.extend_from_slice(&c.blob);
        let first_curve = curve_index;
        for ch in &c.curves {
            let q = &ch.samples;
            let off = if q.data().is_empty() {
                0
            } else {
                pad_to(&mut data, 4);
                let off = data.len() as u64;
                data.extend_from_slice(q.data());
                off
            };
            let rec_start = curves.len();
            put_u64(&mut curves, ch.id);
            let name = strings.add(&ch.name);
            put_u32(&mut curves, name);
            curves.push(if ch.step {
                CURVE_INTERP_STEP
            } else {
                CURVE_INTERP_LINEAR
            });
            curves.push(ch.composition.as_u8());
            curves.push(q.bits());
            curves.push(if ch.clamp { CURVE_FLAG_CLAMP } else { 0 });
            put_f32(&mut curves, ch.default);
            put_f32(&mut curves, ch.range.0);
            put_f32(&mut curves, ch.range.1);
            put_u32(&mut curves, q.len() as u32);
            put_f32(&mut curves, q.min());
            put_f32(&mut curves, q.extent());
            put_u64(&mut curves, off);
            debug_assert_eq!(curves.len() - rec_start, CURVE_RECORD_SIZE);
            curve_index += 1;
        }
        // Trajectory keys: 16-aligned in DATA, 7 f32 each.
        let keys_off = match &x.root_motion {
            Some(rm) => {
                pad_to(&mut data, ALIGN);
                let off = data.len() as u64;
                for k in &rm.keys {
                    put_rigid(&mut data, k);
                }
                off
            }
            None => 0,
        };
        let first_event = event_index;
        for e in &x.events {
            put_f32(&mut events, e.time_s);
            let mut flags = 0u32;
            if e.reversible {
                flags |= EVENT_FLAG_REVERSIBLE;
            }
            if e.kind == MarkerKind::SyncMarker {
                flags |= EVENT_FLAG_SYNC_MARKER;
            }
            put_u32(&mut events, flags);
            put_u64(&mut events, e.id);
            let name = strings.add(&e.name);
            put_u32(&mut events, name);
            put_u32(&mut events, 0);
            event_index += 1;
        }
        let mut flags = 0u32;
        if x.additive_reference.is_some() {
            flags |= CLIP_FLAG_ADDITIVE;
        }
        if x.root_motion.is_some() {
            flags |= CLIP_FLAG_ROOT_MOTION;
        }
        if x.loop_seam_error_m.is_some() {
            flags |= CLIP_FLAG_LOOP_SEAM;
        }
        if x.root_motion
            .as_ref()
            .is_some_and(|r| r.drift_100_loops_m.is_some())
        {
            flags |= CLIP_FLAG_DRIFT;
        }
        let name = strings.add(&c.name);
        let profile = strings.add(&c.profile);
        // Fields at their named offsets; unset bytes (reserved, and the
        // root-motion block of a clip without it) stay zero.
        let mut r = [0u8; CLIP_RECORD_SIZE];
        set(&mut r, clip_record::NAME, &name.to_le_bytes());
        set(&mut r, clip_record::FLAGS, &flags.to_le_bytes());
        set(&mut r, clip_record::DURATION_S, &c.duration_s.to_le_bytes());
        set(
            &mut r,
            clip_record::SAMPLE_RATE_HZ,
            &c.sample_rate_hz.to_le_bytes(),
        );
        set(
            &mut r,
            clip_record::NUM_SAMPLES,
            &c.num_samples.to_le_bytes(),
        );
        set(&mut r, clip_record::LOOP_MODE, &[c.loop_mode as u8]);
        let policy = x
            .root_motion
            .as_ref()
            .map_or(ROOT_MOTION_NONE, |r| r.policy.as_u8());
        set(&mut r, clip_record::ROOT_MOTION_POLICY, &[policy]);
        set(&mut r, clip_record::CODEC, &(c.codec as u16).to_le_bytes());
        set(
            &mut r,
            clip_record::CODEC_VERSION,
            &c.codec_version.to_le_bytes(),
        );
        set(&mut r, clip_record::PROFILE, &profile.to_le_bytes());
        set(&mut r, clip_record::BLOB_OFFSET, &blob_off.to_le_bytes());
        set(
            &mut r,
            clip_record::BLOB_SIZE,
            &(c.blob.len() as u64).to_le_bytes(),
        );
        set(&mut r, clip_record::CURVE_FIRST, &first_curve.to_le_bytes());
        set(
            &mut r,
            clip_record::CURVE_COUNT,
            &(c.curves.len() as u32).to_le_bytes(),
        );
        set(
            &mut r,
            clip_record::RESAMPLE_ERROR_M,
            &c.resample_error_m.to_le_bytes(),
        );
        set(
            &mut r,
            clip_record::MAX_ERROR_M,
            &c.max_error_m.to_le_bytes(),
        );
        set(&mut r, clip_record::SOURCE_HASH, &c.source_hash);
        // v2 fields.
        let additive = x
            .additive_reference
            .as_deref()
            .map_or(NO_STRING, |r| strings.add(r));
        set(
            &mut r,
            clip_record::ADDITIVE_REFERENCE,
            &additive.to_le_bytes(),
        );
        match &x.root_motion {
            Some(rm) => {
                let joint = strings.add(&rm.joint);
                set(&mut r, clip_record::ROOT_JOINT, &joint.to_le_bytes());
                let mut offset = Vec::with_capacity(clip_record::ROOT_OFFSET_BYTES);
                put_rigid(&mut offset, &rm.reference_offset);
                set(&mut r, clip_record::ROOT_OFFSET, &offset);
                let keys = rm.keys.len() as u32;
                set(
                    &mut r,
                    clip_record::TRAJECTORY_KEY_COUNT,
                    &keys.to_le_bytes(),
                );
                let rate = rm.sample_rate_hz.to_le_bytes();
                set(&mut r, clip_record::TRAJECTORY_RATE_HZ, &rate);
                let drift = rm.drift_100_loops_m.unwrap_or(0.0).to_le_bytes();
                set(&mut r, clip_record::DRIFT_100_LOOPS_M, &drift);
                set(
                    &mut r,
                    clip_record::TRAJECTORY_OFFSET,
                    &keys_off.to_le_bytes(),
                );
            }
            None => set(&mut r, clip_record::ROOT_JOINT, &NO_STRING.to_le_bytes()),
        }
        set(&mut r, clip_record::EVENT_FIRST, &first_event.to_le_bytes());
        set(
            &mut r,
            clip_record::EVENT_COUNT,
            &(x.events.len() as u32).to_le_bytes(),
        );
        let seam = x.loop_seam_error_m.unwrap_or(0.0).to_le_bytes();
        set(&mut r, clip_record::LOOP_SEAM_ERROR_M, &seam);
        clips.extend_from_slice(&r);
    }
    pad_to(&mut data, ALIGN);

    let strs = strings.bytes();
    let sections: [(u32, &[u8]); 7] = [
        (SECTION_STRINGS, &strs),
        (SECTION_META, &meta),
        (SECTION_SKELETON, &skel),
        (SECTION_CLIPS, &clips),
        (SECTION_CURVES, &curves),
        (SECTION_EVENTS, &events),
        (SECTION_DATA, &data),
    ];

    let mut out = vec![0u8; HEADER_SIZE + sections.len() * SECTION_ENTRY_SIZE];
    pad_to(&mut out, ALIGN);
    let mut table = Vec::new();
    for (kind, bytes) in sections {
        pad_to(&mut out, ALIGN);
        put_u32(&mut table, kind);
        put_u32(&mut table, 0);
        put_u64(&mut table, out.len() as u64);
        put_u64(&mut table, bytes.len() as u64);
        out.extend_from_slice(bytes);
    }
    pad_to(&mut out, ALIGN);
    out[HEADER_SIZE..HEADER_SIZE + table.len()].copy_from_slice(&table);
    out[0..8].copy_from_slice(&MAGIC);
    out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
    let len = out.len() as u64;
    out[16..24].copy_from_slice(&len.to_le_bytes());
    out[24..28].copy_from_slice(&(sections.len() as u32).to_le_bytes());
    let checksum = fnv1a64(&out[HEADER_SIZE..]);
    out[32..40].copy_from_slice(&checksum.to_le_bytes());
    out
}
