use super::*;
use crate::timing::SamplePosition;

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
    assert_eq!(ch.name(), "w");
    assert_eq!(ch.num_samples(), 5);
    assert_eq!(ch.record().composition, CurveComposition::Max);
    assert_eq!(
        (ch.record().bits, ch.record().min, ch.record().extent),
        (3, 1.0, 7.0)
    );
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
    assert!(ch.record().step && ch.record().clamp);
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
    assert_eq!((ch.num_samples(), ch.record().data_size), (9, 0));
    assert!((0..9).all(|i| ch.value(i) == 0.25));
    let data: Vec<u8> = [1.5f32, -2.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let rec = curve_record(0, 1, 32, 0, (-5.0, 5.0), 2, 0.0, 0.0, 0);
    let ch = parse_one(&rec, &data, &strs).unwrap();
    assert_eq!((ch.value(0), ch.value(1)), (1.5, -2.0));
    assert_eq!(ch.record().composition, CurveComposition::Override);
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
