//! Scalar curve channels (morph weights, custom properties): quantized
//! through per-channel range reduction and the smallest sample width within
//! the profile's `curve_error_threshold`, stored with their schema in CURV,
//! and decoded by the runtime within that threshold.

use ludus_anim_cooker::package_writer::{
    write_package, CurveEntry, PackageClip, PackageContents, QuantizedCurve,
};
use ludus_anim_cooker::profile::{Profile, BUNDLED, DEFAULT_CURVE_ERROR_THRESHOLD};
use ludus_anim_format::codec::CodecId;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_format::package::reseal_checksum;
use ludus_anim_format::package::CurveComposition;
use ludus_anim_format::package::{
    CURVE_BITS_RAW, CURVE_MAX_QUANT_BITS, CURVE_RECORD_SIZE, HEADER_SIZE, SECTION_CURVES,
    SECTION_ENTRY_SIZE,
};
use ludus_anim_format::timing::{LoopMode, SamplePosition};
use ludus_anim_runtime::{JointId, Package, PackageError, Skeleton, Transform, NO_PARENT};

/// Deterministic xorshift64* in [0, 1).
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 40) as f32 / (1u64 << 24) as f32
    }
}

/// Constant, ramp, noise and step-like curves of assorted lengths and
/// scales (unit weights, small and large custom properties).
fn corpus() -> Vec<(String, Vec<f32>)> {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut out = Vec::new();
    for n in [1usize, 2, 3, 7, 31, 120] {
        out.push((format!("constant0/{n}"), vec![0.0; n]));
        out.push((format!("constant/{n}"), vec![0.731; n]));
        out.push((format!("negconstant/{n}"), vec![-12.5; n]));
        for (lo, hi) in [(0.0f32, 1.0f32), (1.0, 0.0), (-3.0, 250.0), (0.2, 0.2004)] {
            let ramp = (0..n)
                .map(|i| lo + (hi - lo) * i as f32 / (n.max(2) - 1) as f32)
                .collect();
            out.push((format!("ramp {lo}..{hi}/{n}"), ramp));
        }
        for scale in [1e-4f32, 1.0, 100.0, 1e5] {
            let noise = (0..n).map(|_| (rng.next() * 2.0 - 1.0) * scale).collect();
            out.push((format!("noise {scale}/{n}"), noise));
        }
        let weights = (0..n).map(|_| rng.next()).collect();
        out.push((format!("weights/{n}"), weights));
        let steps = (0..n).map(|i| ((i / 4) % 3) as f32).collect();
        out.push((format!("steps/{n}"), steps));
    }
    out
}

const THRESHOLDS: [f32; 4] = [DEFAULT_CURVE_ERROR_THRESHOLD, 1e-4, 1e-6, 0.05];

#[test]
fn quantized_round_trip_stays_within_the_threshold() {
    for (name, values) in corpus() {
        for t in THRESHOLDS {
            let q = QuantizedCurve::for_threshold(&values, t);
            assert!(
                q.bits() <= CURVE_MAX_QUANT_BITS || q.bits() == CURVE_BITS_RAW,
                "{name} @ {t}: width {}",
                q.bits()
            );
            assert_eq!(q.len(), values.len());
            assert_eq!(
                q.data().len() as u64,
                (values.len() as u64 * q.bits() as u64).div_ceil(8),
                "{name} @ {t}: data is exactly ceil(count * bits / 8) bytes"
            );
            for (i, &v) in values.iter().enumerate() {
                let d = q.value(i).unwrap();
                assert!(
                    (d - v).abs() <= t,
                    "{name} @ {t}: sample {i} decodes {d}, source {v}, width {}",
                    q.bits()
                );
            }
            assert!(q.max_error(&values) <= t);
        }
    }
}

/// The width the uniform-quantization bound asks for:
/// smallest `b` with `extent / (2^b - 1) / 2 <= t`.
fn bound_bits(extent: f32, t: f32) -> u8 {
    if extent / 2.0 <= t {
        return 0;
    }
    (1..=CURVE_MAX_QUANT_BITS)
        .find(|&b| extent as f64 / ((1u64 << b) - 1) as f64 / 2.0 <= t as f64)
        .unwrap_or(CURVE_BITS_RAW)
}

#[test]
fn bit_width_is_minimal() {
    let mut widths = std::collections::BTreeSet::new();
    for (name, values) in corpus() {
        for t in THRESHOLDS {
            let q = QuantizedCurve::for_threshold(&values, t);
            widths.insert(q.bits());
            // Every narrower width exceeds the threshold (in particular the
            // next one down).
            let narrower = if q.bits() == CURVE_BITS_RAW {
                0..=CURVE_MAX_QUANT_BITS
            } else {
                0..=q.bits().saturating_sub(1)
            };
            if q.bits() > 0 {
                for b in narrower {
                    let e = QuantizedCurve::encode(&values, b)
                        .map_or(f32::INFINITY, |n| n.max_error(&values));
                    assert!(
                        e > t,
                        "{name} @ {t}: width {b} already meets it ({e}), chose {}",
                        q.bits()
                    );
                }
            }
            // And no wider than the uniform-quantization bound, plus one
            // bit where the f32 decode's own rounding (half an ulp of the
            // largest magnitude) is not negligible against the threshold.
            if q.bits() != CURVE_BITS_RAW {
                let bound = bound_bits(q.extent(), t);
                let max_abs = values.iter().fold(0.0f32, |m, v| m.max(v.abs()));
                let slack = u8::from(max_abs * f32::EPSILON * 16.0 >= t);
                assert!(
                    q.bits() <= bound + slack,
                    "{name} @ {t}: {} > {bound} + {slack}",
                    q.bits()
                );
            }
        }
    }
    // The corpus exercises constants, several quantized widths and raw.
    assert!(
        widths.contains(&0) && widths.contains(&CURVE_BITS_RAW),
        "{widths:?}"
    );
    assert!(
        widths.iter().filter(|&&b| b > 0 && b <= 24).count() >= 5,
        "{widths:?}"
    );
}

#[test]
fn unit_weight_ramp_needs_nine_bits_at_the_default_threshold() {
    // extent 1, t 0.001: 2^b - 1 >= 500 -> b = 9.
    let ramp: Vec<f32> = (0..=1000).map(|i| i as f32 / 1000.0).collect();
    let q = QuantizedCurve::for_threshold(&ramp, DEFAULT_CURVE_ERROR_THRESHOLD);
    assert_eq!(q.bits(), 9);
    assert_eq!(q.min(), 0.0);
    assert_eq!(q.extent(), 1.0);
    assert_eq!(q.data().len(), (1001 * 9usize).div_ceil(8));
}

#[test]
fn non_finite_samples_and_thresholds_fall_back_to_raw() {
    let q = QuantizedCurve::for_threshold(&[0.0, f32::NAN, 1.0], 0.1);
    assert_eq!(q.bits(), CURVE_BITS_RAW);
    assert!(q.value(1).unwrap().is_nan());
    let q = QuantizedCurve::for_threshold(&[0.0, 0.5], f32::NAN);
    assert_eq!(q.bits(), CURVE_BITS_RAW);
    // A span that overflows f32 cannot be range-reduced.
    let q = QuantizedCurve::for_threshold(&[-3e38, 3e38], 1e38);
    assert_eq!(q.bits(), CURVE_BITS_RAW);
    assert!(QuantizedCurve::encode(&[1.0], 25).is_none());
}

fn skeleton() -> Skeleton {
    Skeleton::new(
        vec![NO_PARENT],
        vec![JointId(fnv1a64(b"root"))],
        vec![Transform::IDENTITY],
        vec!["root".to_string()],
    )
    .unwrap()
}

/// A reference-codec clip of `n` samples at 30 Hz holding `curves`.
fn clip(name: &str, n: u32, curves: Vec<CurveEntry>) -> PackageClip {
    let mut blob = Vec::new();
    for _ in 0..n {
        for v in [0.0f32, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 1.0] {
            blob.extend_from_slice(&v.to_le_bytes());
        }
    }
    PackageClip {
        name: name.to_string(),
        duration_s: (n - 1) as f32 / 30.0,
        sample_rate_hz: 30.0,
        num_samples: n,
        loop_mode: LoopMode::Once,
        codec: CodecId::Reference,
        codec_version: 1,
        profile: "standard".to_string(),
        source_hash: [0; 32],
        resample_error_m: 0.0,
        max_error_m: 0.0,
        blob,
        curves,
    }
}

fn package(clips: Vec<PackageClip>) -> Vec<u8> {
    let sk = skeleton();
    write_package(
        &PackageContents {
            cooker_version: "test".to_string(),
            asset_name: "curves".to_string(),
            source_path: "curves.gltf".to_string(),
            source_hash: [0; 32],
            skeleton: &sk,
            clips,
            skins: &[],
            bounds: &[],
            sockets: &[],
            joint_sets: None,
        },
        &[],
    )
}

fn entry(name: &str, values: &[f32], t: f32) -> CurveEntry {
    CurveEntry::quantized(fnv1a64(name.as_bytes()), name, 0.0, false, values, t)
}

const N: u32 = 61;

/// The channels of the round-trip package, with the source values and the
/// threshold each was quantized with.
fn channels() -> Vec<(CurveEntry, Vec<f32>, f32)> {
    let mut rng = Rng(7);
    let breathe: Vec<f32> = (0..N).map(|i| 0.5 + 0.5 * (i as f32 * 0.3).sin()).collect();
    let noise: Vec<f32> = (0..N).map(|_| rng.next() * 40.0 - 20.0).collect();
    let constant = vec![0.25f32; N as usize];
    let flags: Vec<f32> = (0..N).map(|i| ((i / 10) % 2) as f32).collect();
    let mut out = vec![
        (
            entry("Body/weights/Breathe", &breathe, 1e-3),
            breathe.clone(),
            1e-3,
        ),
        (entry("Custom/noise", &noise, 1e-4), noise.clone(), 1e-4),
        (entry("Body/weights/Blink", &constant, 1e-3), constant, 1e-3),
    ];
    let mut step = CurveEntry::quantized(
        fnv1a64(b"Custom/flag"),
        "Custom/flag",
        1.0,
        true,
        &flags,
        1e-3,
    );
    step.composition = CurveComposition::Override;
    step.range = (0.0, 1.0);
    step.clamp = true;
    out.push((step, flags, 1e-3));
    let mut raw = CurveEntry::raw(fnv1a64(b"Custom/raw"), "Custom/raw", -1.0, false, &noise);
    raw.composition = CurveComposition::Max;
    out.push((raw, noise, 0.0));
    let mut add = entry("Custom/additive", &breathe, 0.01);
    add.composition = CurveComposition::Additive;
    add.range = (f32::NEG_INFINITY, 2.0);
    out.push((add, breathe, 0.01));
    out
}

#[test]
fn package_round_trip_decodes_within_threshold() {
    let chans = channels();
    let bytes = package(vec![clip(
        "idle",
        N,
        chans.iter().map(|(e, _, _)| e.clone()).collect(),
    )]);
    let pkg = Package::load(&bytes).expect("package loads");
    let clip = &pkg.clips()[0];
    let loaded = pkg.clip_curves(clip);
    assert_eq!(loaded.len(), chans.len());
    for (ch, (e, values, t)) in loaded.iter().zip(&chans) {
        assert_eq!(ch.id(), e.id);
        assert_eq!(ch.name(), e.name);
        assert_eq!(ch.record().default_value, e.default);
        assert_eq!(ch.record().step, e.step);
        assert_eq!(ch.record().composition, e.composition);
        assert_eq!(ch.record().range, e.range);
        assert_eq!(ch.record().clamp, e.clamp);
        assert_eq!(ch.record().bits, e.samples.bits());
        assert_eq!(ch.record().min, e.samples.min());
        assert_eq!(ch.record().extent, e.samples.extent());
        assert_eq!(ch.record().num_samples as usize, N as usize);
        assert_eq!(ch.record().data_size, e.samples.data().len());
        for i in 0..N {
            // Bit-identical to the cooker's own decode.
            assert_eq!(
                ch.value(i).to_bits(),
                e.samples.value(i as usize).unwrap().to_bits()
            );
        }
        assert_eq!(
            ch.value(N),
            ch.record().default_value,
            "past the end is the default"
        );
        // Through the clip's time mapping, at and between samples.
        for k in 0..=(4 * (N - 1)) {
            let time = k as f32 / 120.0;
            let p = clip.position(time);
            let a = values[p.i0 as usize];
            let b = values[p.i1 as usize];
            let want = if e.step { a } else { a + (b - a) * p.alpha };
            let got = ch.evaluate(p);
            assert!(
                (got - want).abs() <= t + 1e-6 * want.abs().max(1.0),
                "{} at {time}: {got} vs {want} (width {})",
                e.name,
                ch.record().bits
            );
        }
    }
    // Widths: the unit sine needs 9 bits at 1e-3, the constant none, raw 32.
    let bits: Vec<u8> = loaded.iter().map(|c| c.record().bits).collect();
    assert_eq!(bits[0], 9);
    assert_eq!(bits[2], 0);
    assert_eq!(bits[4], CURVE_BITS_RAW);
}

#[test]
fn constant_channels_cost_no_sample_bytes() {
    let constant = vec![0.75f32; N as usize];
    // Within the threshold of a constant: spread 0.0015 <= 2 * 0.001.
    let nearly: Vec<f32> = (0..N).map(|i| 0.5 + 0.0015 * (i % 2) as f32).collect();
    let base = package(vec![clip("c", N, vec![])]);
    let with = package(vec![clip(
        "c",
        N,
        vec![entry("k", &constant, 1e-3), entry("m", &nearly, 1e-3)],
    )]);
    let pkg = Package::load(&with).unwrap();
    for (ch, v) in pkg
        .clip_curves(&pkg.clips()[0])
        .iter()
        .zip([&constant, &nearly])
    {
        assert_eq!(ch.record().bits, 0);
        assert_eq!(ch.record().data_size, 0);
        assert_eq!(ch.record().extent, 0.0);
        for i in 0..N {
            assert!((ch.value(i) - v[i as usize]).abs() <= 1e-3);
        }
    }
    assert_eq!(
        pkg.clip_curves(&pkg.clips()[0])[0].value(3),
        0.75,
        "an exact constant is exact"
    );
    // Two records (and two names), no DATA growth: the difference is the
    // CURV records plus the string table, rounded to section alignment.
    let strings = 2 + 4 + 4;
    assert!(
        with.len() - base.len() <= 2 * CURVE_RECORD_SIZE + strings + 2 * 16,
        "{} -> {}",
        base.len(),
        with.len()
    );
    let data = |b: &[u8]| section(b, u32::from_le_bytes(*b"DATA")).1;
    assert_eq!(data(&base), data(&with));
}

#[test]
fn step_channels_hold_the_earlier_sample() {
    let values: Vec<f32> = (0..N).map(|i| (i % 5) as f32 * 0.25).collect();
    let e = CurveEntry::quantized(1, "s", 0.0, true, &values, 1e-3);
    let bytes = package(vec![clip("s", N, vec![e])]);
    let pkg = Package::load(&bytes).unwrap();
    let ch = &pkg.clip_curves(&pkg.clips()[0])[0];
    assert!(ch.record().step);
    for i in 0..N - 1 {
        for alpha in [0.0, 0.25, 0.5, 0.99] {
            let p = SamplePosition {
                i0: i,
                i1: i + 1,
                alpha,
            };
            assert_eq!(ch.evaluate(p), ch.value(i));
            assert!((ch.evaluate(p) - values[i as usize]).abs() <= 1e-3);
        }
    }
}

#[test]
fn clamped_range_limits_decoded_values() {
    let values: Vec<f32> = (0..N).map(|i| i as f32 / 30.0 - 0.5).collect();
    let mut e = CurveEntry::quantized(1, "w", 0.0, false, &values, 1e-3);
    e.range = (0.0, 1.0);
    e.clamp = true;
    let bytes = package(vec![clip("w", N, vec![e])]);
    let pkg = Package::load(&bytes).unwrap();
    let ch = &pkg.clip_curves(&pkg.clips()[0])[0];
    for i in 0..N {
        let want = values[i as usize].clamp(0.0, 1.0);
        assert!((ch.value(i) - want).abs() <= 1e-3, "{i}");
    }
}

/// (offset, size) of section `kind`.
fn section(bytes: &[u8], kind: u32) -> (usize, Vec<u8>) {
    let count = u32::from_le_bytes(bytes[24..28].try_into().unwrap()) as usize;
    for i in 0..count {
        let at = HEADER_SIZE + i * SECTION_ENTRY_SIZE;
        if u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) == kind {
            let off = u64::from_le_bytes(bytes[at + 8..at + 16].try_into().unwrap()) as usize;
            let size = u64::from_le_bytes(bytes[at + 16..at + 24].try_into().unwrap()) as usize;
            return (off, bytes[off..off + size].to_vec());
        }
    }
    panic!("no section {kind:08x}");
}

fn invalid_after(what: &str, bytes: &[u8], edit: impl Fn(&mut [u8])) -> PackageError {
    let mut b = bytes.to_vec();
    edit(&mut b);
    reseal_checksum(&mut b);
    match Package::load(&b) {
        Err(e) => e,
        Ok(_) => panic!("{what}: the edited package must not load"),
    }
}

#[test]
fn malformed_curve_records_are_typed_errors() {
    let chans = channels();
    let bytes = package(vec![clip(
        "idle",
        N,
        chans.iter().map(|(e, _, _)| e.clone()).collect(),
    )]);
    assert!(Package::load(&bytes).is_ok());
    let (curv, _) = section(&bytes, SECTION_CURVES);
    // Record 0: the 9-bit sine; record 2: the constant; record 4: raw.
    let rec = |i: usize| curv + 16 + i * CURVE_RECORD_SIZE;
    let put_f32 = |b: &mut [u8], at: usize, v: f32| b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    type Edit<'a> = Box<dyn Fn(&mut [u8]) + 'a>;
    let cases: Vec<(&str, Edit)> = vec![
        ("interpolation 2", Box::new(|b| b[rec(0) + 12] = 2)),
        ("composition 4", Box::new(|b| b[rec(0) + 13] = 4)),
        ("width 25", Box::new(|b| b[rec(0) + 14] = 25)),
        ("width 31", Box::new(|b| b[rec(0) + 14] = 31)),
        ("width 33", Box::new(|b| b[rec(0) + 14] = 33)),
        ("unknown flag", Box::new(|b| b[rec(0) + 15] = 2)),
        (
            "NaN default",
            Box::new(move |b| put_f32(b, rec(0) + 16, f32::NAN)),
        ),
        // Record 3 is the clamped step channel, range [0, 1].
        (
            "range lo > hi",
            Box::new(move |b| put_f32(b, rec(3) + 20, 5.0)),
        ),
        (
            "NaN range",
            Box::new(move |b| put_f32(b, rec(0) + 24, f32::NAN)),
        ),
        ("count", Box::new(|b| b[rec(0) + 28] ^= 1)),
        (
            "infinite min",
            Box::new(move |b| put_f32(b, rec(0) + 32, f32::INFINITY)),
        ),
        (
            "negative extent",
            Box::new(move |b| put_f32(b, rec(0) + 36, -1.0)),
        ),
        (
            "NaN extent",
            Box::new(move |b| put_f32(b, rec(0) + 36, f32::NAN)),
        ),
        ("misaligned data", Box::new(|b| b[rec(0) + 40] ^= 1)),
        ("data past DATA", Box::new(|b| b[rec(0) + 46] = 0x7f)),
        (
            "constant with extent",
            Box::new(move |b| put_f32(b, rec(2) + 36, 1.0)),
        ),
        (
            "constant with data offset",
            Box::new(|b| b[rec(2) + 40] = 4),
        ),
        (
            "raw with min",
            Box::new(move |b| put_f32(b, rec(4) + 32, 1.0)),
        ),
    ];
    for (what, edit) in &cases {
        let e = invalid_after(what, &bytes, edit);
        assert!(
            matches!(e, PackageError::Invalid(_) | PackageError::Truncated { .. }),
            "{what}: {e:?}"
        );
    }
    // Non-zero padding bits after the last 9-bit sample (61 * 9 = 549 bits,
    // so the last byte uses 5 bits).
    let (data_off, _) = section(&bytes, u32::from_le_bytes(*b"DATA"));
    let off = u64::from_le_bytes(bytes[rec(0) + 40..rec(0) + 48].try_into().unwrap()) as usize;
    let last = data_off + off + (N as usize * 9).div_ceil(8) - 1;
    let e = invalid_after("padding", &bytes, |b| b[last] |= 0x80);
    assert!(e.to_string().contains("padding"), "{e}");
}

#[test]
fn every_curve_byte_corruption_is_an_error_or_a_valid_view() {
    let chans = channels();
    let bytes = package(vec![clip(
        "idle",
        N,
        chans.iter().map(|(e, _, _)| e.clone()).collect(),
    )]);
    let (curv, sec) = section(&bytes, SECTION_CURVES);
    let (data_off, data) = section(&bytes, u32::from_le_bytes(*b"DATA"));
    let spans = [(curv, sec.len()), (data_off, data.len())];
    for (start, len) in spans {
        for i in start..start + len {
            for v in [bytes[i] ^ 0x01, bytes[i] ^ 0x80, 0x00, 0xff] {
                let mut b = bytes.clone();
                b[i] = v;
                reseal_checksum(&mut b);
                if let Ok(p) = Package::load(&b) {
                    for c in p.clips() {
                        for ch in p.clip_curves(c) {
                            for time in [0.0, 0.51, 1.0, 5.0, f32::NAN] {
                                ch.evaluate(c.position(time));
                            }
                            ch.value(u32::MAX);
                        }
                    }
                }
            }
        }
    }
    // Every truncation is a typed error.
    for cut in 0..bytes.len() {
        assert!(Package::load(&bytes[..cut]).is_err());
    }
}

#[test]
fn profile_curve_error_threshold() {
    for (name, _) in BUNDLED {
        let p = Profile::load(name).unwrap();
        assert_eq!(p.curve_error_threshold, 0.001, "{name}");
    }
    let text = BUNDLED[0].1;
    let without: String = text
        .lines()
        .filter(|l| !l.starts_with("curve_error_threshold"))
        .map(|l| format!("{l}\n"))
        .collect();
    assert_ne!(without, text);
    let p = Profile::parse(&without, "p.toml").unwrap();
    assert_eq!(p.curve_error_threshold, DEFAULT_CURVE_ERROR_THRESHOLD);
    let with = text.replace(
        "curve_error_threshold = 0.001",
        "curve_error_threshold = 0.02",
    );
    assert_eq!(
        Profile::parse(&with, "p.toml")
            .unwrap()
            .curve_error_threshold,
        0.02
    );
    for bad in ["0.0", "-0.001", "nan", "inf"] {
        let t = text.replace(
            "curve_error_threshold = 0.001",
            &format!("curve_error_threshold = {bad}"),
        );
        let e = Profile::parse(&t, "p.toml").unwrap_err().to_string();
        assert!(e.contains("curve_error_threshold"), "{bad}: {e}");
    }
}
