use super::format::*;
use super::simd::PendingRotation;
use super::simd::{blend4, fields3_uniform, fields3_uniform2, load_u64, normalize4, read_u32};
use super::*;
use crate::math::{nlerp_shortest, Quat, Transform, Vec3, Vec3A};
use crate::timing::SamplePosition;

fn put_f32(b: &mut Vec<u8>, v: f32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_u16(b: &mut Vec<u8>, v: u16) {
    b.extend_from_slice(&v.to_le_bytes());
}

/// Hand-built blob: joint 0 constant translation, animated rotation at
/// 8 bits then segment-constant; joint 1 default; 3 samples in 2
/// segments.
fn tiny_blob() -> Vec<u8> {
    // Two segments; one-byte block offsets and sample bits; the type bytes.
    let mut b = vec![2, 0, KIND_ANIMATED | (KIND_CONSTANT << 2), 0];
    for v in [1.0, 2.0, 3.0] {
        put_f32(&mut b, v);
    }
    // Clip range of the rotation: min 0 on every axis, extent 0 on x and
    // y (so only z stores bits), z up to about 0.5.
    for v in [32768, 32768, 32768, 0, 0, 16384] {
        put_u16(&mut b, v);
    }
    // Segment 0: 2 samples at rate id 6 (8 bits, z only), segment 1: 1
    // sample at rate 0.
    let seg0 = 1 + 2 + 6;
    b.extend_from_slice(&[0, 8, seg0, 0]);
    b.push(6);
    // Samples: z = 0 then z = 255.
    b.extend_from_slice(&[0, 255]);
    // Segment range: z spans the whole clip range.
    b.extend_from_slice(&[0, 0, 0, 0, 0, 255]);
    b.push(RATE_CONSTANT);
    b.extend_from_slice(&[0, 0, 0, 0, 0xff, 0xff]);
    b.extend_from_slice(&[0; SEGMENT_PADDING]);
    b
}

/// Offset of the segment data in both tiny blobs.
const TINY_TABLE: usize = 2 + 2 + 12 + 12;
const TINY_DATA: usize = TINY_TABLE + 4;

/// Like [`tiny_blob`] with segment 0 unranged at 8 bits and segment 1
/// raw (no range bytes in either).
fn tiny_blob_unranged_raw() -> Vec<u8> {
    let mut b = tiny_blob();
    b.truncate(TINY_DATA);
    // Segment 0: rate byte, samples (no range); segment 1: raw w..
    b[TINY_TABLE + 2] = 3;
    b[TINY_TABLE + 3] = 128;
    b.push(6 | RATE_UNRANGED);
    b.extend_from_slice(&[0, 255]);
    b.push(RATE_RAW);
    for v in [0.0f32, 0.0, 0.6, 0.8] {
        put_f32(&mut b, v);
    }
    b.extend_from_slice(&[0; SEGMENT_PADDING]);
    b
}

/// The segment count as a varint, and table widths, round-trip through
/// the parser: wider fields than needed are valid, a non-canonical count
/// is not.
#[test]
fn header_widths_and_varint() {
    assert_eq!(varint(0), [0]);
    assert_eq!(varint(127), [127]);
    assert_eq!(varint(128), [0x80, 1]);
    assert_eq!(varint(u32::MAX).len(), MAX_VARINT_BYTES);
    assert_eq!(width_byte(255, 256), Some(4));
    assert_eq!(width_byte(1 << 24, 0), Some(3));
    assert_eq!(table_widths(0b1011), (4, 3));
    let blob = tiny_blob();
    // The same clip with two-byte sample bits.
    let mut wide = blob[..TINY_TABLE].to_vec();
    wide[1] = 1 << 2;
    wide.extend_from_slice(&[0, 8, 0, blob[TINY_TABLE + 2], 0, 0]);
    wide.extend_from_slice(&blob[TINY_DATA..]);
    let (a, b) = (
        VbrClip::parse(&blob, 2, 3).expect("valid"),
        VbrClip::parse(&wide, 2, 3).expect("valid"),
    );
    let mut out = [[Transform::IDENTITY; 2]; 2];
    for s in 0..3 {
        assert!(a.decode_sample(s, &[Transform::IDENTITY; 2], &mut out[0]));
        assert!(b.decode_sample(s, &[Transform::IDENTITY; 2], &mut out[1]));
        assert_eq!(out[0], out[1]);
    }
    let mut long = vec![0x82, 0];
    long.extend_from_slice(&blob[1..]);
    assert!(VbrClip::parse(&long, 2, 3).is_err());
    let mut reserved = blob.clone();
    reserved[1] = 0x10;
    assert!(VbrClip::parse(&reserved, 2, 3).is_err());
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
    assert!(out[0].rotation.abs_diff_eq(Quat::IDENTITY, 1e-4));
    assert_eq!(out[1], defaults[1]);
    assert!(clip.decode_sample(1, &defaults, &mut out));
    assert!((out[0].rotation.z - 0.5).abs() < 1e-4);
    assert!(clip.decode_sample(2, &defaults, &mut out));
    assert!((out[0].rotation.z - 0.5).abs() < 1e-4);
    let pos = SamplePosition {
        i0: 0,
        i1: 1,
        alpha: 0.5,
    };
    assert!(clip.decode_pose(pos, &defaults, &mut out));
    let mut sub = [Transform::IDENTITY; 3];
    assert!(clip.joints_for_test(None, pos, &defaults, &[1, 0, 0], &mut sub));
    assert_eq!(sub[1], out[0]);
    assert_eq!(sub[2], out[0]);
    assert_eq!(sub[0], out[1]);
    // Across the segment boundary, and joints-only decoding agrees.
    let pos = SamplePosition {
        i0: 1,
        i1: 2,
        alpha: 0.25,
    };
    assert!(clip.decode_pose(pos, &defaults, &mut out));
    assert!(clip.joints_for_test(None, pos, &defaults, &[1, 0], &mut sub[..2]));
    assert_eq!(sub[1], out[0]);
    assert_eq!(sub[0], out[1]);
}

/// The batched SIMD blend equals `rotation_from_xyz` + `nlerp_shortest`
/// bit for bit, over rebuilt and full rotations, both signs and many
/// blend factors.
#[test]
fn batch_matches_scalar() {
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    for round in 0..20_000 {
        let mut p = || {
            let q = Quat::from_xyzw(next(), next(), next(), next());
            let q = if round % 7 == 0 {
                q * 1e-7
            } else {
                q.normalize()
            };
            if round % 3 == 0 {
                PendingRotation::full(q)
            } else {
                PendingRotation::xyz(Vec3A::new(q.x, q.y, q.z) * 0.9)
            }
        };
        let a: [PendingRotation; 4] = core::array::from_fn(|_| p());
        let b: [PendingRotation; 4] = core::array::from_fn(|_| p());
        let alpha = if round % 5 == 0 { 0.0 } else { next().abs() };
        let bits =
            |p: &[PendingRotation; 4]| (0..4).fold(0u32, |m, l| m | (u32::from(p[l].rebuild) << l));
        let got = blend4(&a.map(|p| p.q), &b.map(|p| p.q), bits(&a), bits(&b), alpha);
        for l in 0..4 {
            let want = nlerp_shortest(a[l].quat(), b[l].quat(), alpha);
            assert_eq!(
                got[l].to_array().map(f32::to_bits),
                want.to_array().map(f32::to_bits),
                "round {round} lane {l}"
            );
        }
    }
}

#[test]
fn static_pose_decode_matches_direct_decode() {
    for (blob, joints, samples) in [(tiny_blob(), 2, 3), (tiny_blob_unranged_raw(), 2, 3)] {
        let clip = VbrClip::parse(&blob, joints, samples).expect("valid");
        let defaults = [
            Transform::new(Vec3::Y, Quat::from_rotation_x(0.3), Vec3::splat(2.0)),
            Transform::new(Vec3::X, Quat::from_rotation_z(-0.7), Vec3::ONE),
        ];
        let mut base = [Transform::IDENTITY; 2];
        assert!(clip.static_pose(&defaults, &mut base));
        let (mut direct, mut fast) = ([Transform::IDENTITY; 2], [Transform::IDENTITY; 2]);
        for i0 in 0..samples {
            for i1 in i0..samples {
                for alpha in [0.0, 0.25, 0.5, 0.9] {
                    let pos = SamplePosition { i0, i1, alpha };
                    assert!(clip.decode_pose(pos, &defaults, &mut direct));
                    assert!(clip.static_for_test(None, VbrRequest::Pose, pos, &base, &mut fast));
                    let bits = |p: &[Transform; 2]| p.map(|t| t.to_array().map(f32::to_bits));
                    assert_eq!(bits(&direct), bits(&fast), "{i0} {i1} {alpha}");
                }
            }
        }
        // Wrong lengths and positions write nothing.
        let before = fast;
        let pos = SamplePosition {
            i0: samples,
            i1: 0,
            alpha: 0.0,
        };
        assert!(!clip.static_for_test(None, VbrRequest::Pose, pos, &base, &mut fast));
        let pos = SamplePosition {
            i0: 0,
            i1: 0,
            alpha: 0.0,
        };
        assert!(!clip.static_for_test(None, VbrRequest::Pose, pos, &base[..1], &mut fast));
        assert!(!clip.static_pose(&defaults[..1], &mut base));
        assert_eq!(fast, before);
    }
}

#[test]
fn normalize_batch_matches_scalar() {
    let mut seed = 0x51_7cc1_b727_220au64;
    let mut next = move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        ((seed >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
    };
    for round in 0..20_000 {
        let mut p = || {
            let q = Quat::from_xyzw(next(), next(), next(), next());
            let q = match round % 7 {
                0 => q * 1e-7,
                1 => Quat::from_xyzw(0.0, -0.0, q.z, q.w),
                _ => q.normalize(),
            };
            if round % 3 == 0 {
                PendingRotation::full(q)
            } else {
                PendingRotation::xyz(Vec3A::new(q.x, q.y, q.z) * 0.9)
            }
        };
        let a: [PendingRotation; 4] = core::array::from_fn(|_| p());
        let bits = (0..4).fold(0u32, |m, l| m | (u32::from(a[l].rebuild) << l));
        let alpha = if round % 5 == 0 { 0.0 } else { next().abs() };
        let got = normalize4(&a.map(|p| p.q), bits);
        for l in 0..4 {
            let q = a[l].quat();
            let want = nlerp_shortest(q, q, alpha);
            // Equal as numbers (+0 and -0 alike), and so bit for bit
            // once zeros are folded.
            assert_eq!(
                got[l].to_array().map(|v| (v + 0.0).to_bits()),
                want.to_array().map(|v| (v + 0.0).to_bits()),
                "round {round} lane {l}"
            );
        }
    }
}

#[test]
fn unranged_and_raw_decode() {
    let blob = tiny_blob_unranged_raw();
    let clip = VbrClip::parse(&blob, 2, 3).expect("valid");
    let defaults = [Transform::IDENTITY; 2];
    let mut out = [Transform::IDENTITY; 2];
    assert!(clip.decode_sample(1, &defaults, &mut out));
    assert!((out[0].rotation.z - 0.5).abs() < 1e-4);
    assert!(clip.decode_sample(2, &defaults, &mut out));
    assert_eq!(out[0].rotation, Quat::from_xyzw(0.0, 0.0, 0.6, 0.8));
    // A blend of a quantized sample with a raw one is not queued (the
    // queue rebuilds every w) but blended at once: the same rotation from
    // every path, the nlerp of the two.
    let pos = SamplePosition {
        i0: 1,
        i1: 2,
        alpha: 0.25,
    };
    assert!(clip.decode_pose(pos, &defaults, &mut out));
    let mut sub = [Transform::IDENTITY; 1];
    assert!(clip.joints_for_test(None, pos, &defaults, &[0], &mut sub));
    assert_eq!(sub[0], out[0]);
    let mut one = [Transform::IDENTITY; 2];
    assert!(clip.decode_sample(1, &defaults, &mut one));
    let want = nlerp_shortest(one[0].rotation, Quat::from_xyzw(0.0, 0.0, 0.6, 0.8), 0.25);
    assert!(
        out[0].rotation.abs_diff_eq(want, 1e-6),
        "{:?}",
        out[0].rotation
    );
    // The unranged flag is invalid on the segment-constant and raw ids.
    let mut bad = blob.clone();
    bad[TINY_DATA + 3] = RATE_RAW | RATE_UNRANGED;
    assert!(VbrClip::parse(&bad, 2, 3).is_err());
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
    // The blob does not store the sample count: other counts fail only
    // where they change a segment's size (here 3 samples in segment 0).
    assert!(VbrClip::parse(&blob, 2, 5).is_err());
    assert!(VbrClip::parse(&blob, 2, 0).is_err());
    let mut longer = blob.clone();
    longer.push(0);
    assert!(VbrClip::parse(&longer, 2, 3).is_err());
}

#[test]
fn corrupted_bytes_never_panic() {
    for blob in [tiny_blob(), tiny_blob_unranged_raw()] {
        corrupt_all(&blob);
    }
}

fn corrupt_all(blob: &[u8]) {
    let defaults = [Transform::IDENTITY; 2];
    let mut out = [Transform::IDENTITY; 2];
    for i in 0..blob.len() {
        for v in [0u8, 1, 3, 7, 0x12, 0x20, 0x26, 0x32, 0x40, 0x80, 0xff] {
            let mut b = blob.to_vec();
            b[i] = v;
            if let Ok(c) = VbrClip::parse(&b, 2, 3) {
                for s in 0..3 {
                    let _ = c.decode_sample(s, &defaults, &mut out);
                    let pos = SamplePosition {
                        i0: s,
                        i1: (s + 1).min(2),
                        alpha: 0.5,
                    };
                    let _ = c.decode_pose(pos, &defaults, &mut out);
                    let _ = c.joints_for_test(None, pos, &defaults, &[1, 0], &mut out);
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
                off_w: 1,
                bits_w: 1,
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

#[test]
fn index_seeks_match_the_walk_and_refuse_other_clips() {
    for blob in [tiny_blob(), tiny_blob_unranged_raw()] {
        let clip = VbrClip::parse(&blob, 2, 3).unwrap();
        let index = VbrIndex::build(&clip).unwrap();
        // The entries carry the blob's type bytes; joint 1 is static.
        for (j, &t) in clip.types.iter().enumerate() {
            assert_eq!(index.view().joint(j).3, t);
        }
        assert!(!index.view().is_static(0) && index.view().is_static(1));
        let rest = [Transform::IDENTITY; 2];
        let mut rest_static = [Transform::IDENTITY; 2];
        assert!(clip.static_pose(&rest, &mut rest_static));
        let mut cache = SegmentCache::default();
        // A static joint alone locates no sample, but a position out of
        // range is still refused.
        for (i0, i1) in [(3, 3), (0, 3), (3, 0)] {
            let pos = SamplePosition { i0, i1, alpha: 0.5 };
            let mut out = [Transform::IDENTITY; 1];
            assert!(!clip.joints_for_test(Some(&index), pos, &rest, &[1], &mut out));
            assert!(!clip.static_for_test(
                Some(&index),
                VbrRequest::Joints(&[1]),
                pos,
                &rest,
                &mut out
            ));
        }
        // From a static pose, a static joint alone is its entry.
        let mut sp = [Transform::IDENTITY; 2];
        assert!(clip.static_pose(&rest, &mut sp));
        sp[1].translation.x = 7.0;
        let pos = SamplePosition {
            i0: 0,
            i1: 1,
            alpha: 0.5,
        };
        let mut out = [Transform::IDENTITY; 1];
        assert!(clip.static_for_test(Some(&index), VbrRequest::Joints(&[1]), pos, &sp, &mut out));
        assert_eq!(out[0], sp[1]);
        for (i0, i1, alpha) in [
            (0, 0, 0.0),
            (0, 1, 0.25),
            (1, 2, 0.5),
            (2, 2, 0.0),
            (2, 1, 0.5),
        ] {
            let pos = SamplePosition { i0, i1, alpha };
            for joints in [&[1u32, 0][..], &[0], &[1], &[0, 0, 1]] {
                let mut walk = vec![Transform::IDENTITY; joints.len()];
                let mut seek = walk.clone();
                assert!(clip.joints_for_test(None, pos, &rest, joints, &mut walk));
                assert!(clip.joints_for_test(Some(&index), pos, &rest, joints, &mut seek));
                assert_eq!(walk, seek);
                let req = VbrRequest::Joints(joints);
                let stat = &rest_static;
                assert!(clip.decode_cached(req, Some(&index), &mut cache, pos, stat, &mut seek));
                assert_eq!(walk, seek);
            }
        }
    }
    // An index of another shape is refused, not followed.
    let other = tiny_blob_unranged_raw();
    let blob = tiny_blob();
    let a = VbrClip::parse(&blob, 2, 3).unwrap();
    let mut b_index = VbrIndex::build(&VbrClip::parse(&other, 2, 3).unwrap()).unwrap();
    if b_index == VbrIndex::build(&a).unwrap() {
        b_index = VbrIndex::default();
    }
    let pos = SamplePosition {
        i0: 0,
        i1: 0,
        alpha: 0.0,
    };
    let mut out = [Transform::IDENTITY; 1];
    let rest = [Transform::IDENTITY; 2];
    assert!(!a.joints_for_test(Some(&b_index), pos, &rest, &[0], &mut out));
}

/// The bounded loads read bytes past the end of the slice as zero, at
/// every position near the end and for every slice length (the tail
/// side shifts the slice's last eight bytes; under eight it loops).
#[test]
fn bounded_loads_read_past_the_end_as_zero() {
    let bytes: Vec<u8> = (1..=40u8).map(|b| b.wrapping_mul(37)).collect();
    for n in 0..bytes.len() {
        let b = &bytes[..n];
        let expect = |at: usize, len: usize| {
            (0..len).fold(0u64, |v, k| {
                v | u64::from(*b.get(at + k).unwrap_or(&0)) << (8 * k)
            })
        };
        for at in 0..n + 12 {
            assert_eq!(load_u64(b, at), expect(at, 8), "load_u64 len {n} at {at}");
            assert_eq!(
                u64::from(read_u32(b, at)),
                expect(at, 4),
                "read_u32 len {n} at {at}"
            );
        }
    }
}

/// The SSE2 uniform field extraction gives the scalar fields, for every
/// width the codec stores (0..=19 bits) and words over the whole range.
#[test]
fn uniform_fields_match_the_scalar_extraction() {
    let mut w = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..2000 {
        w = w.rotate_left(13).wrapping_mul(0x2545_f491_4f6c_dd1d) ^ 0x5851_f42d;
        for b in 0..=19usize {
            let v = fields3_uniform(w, b);
            let mask = (1u64 << b) - 1;
            let expect = [w & mask, (w >> b) & mask, (w >> (2 * b)) & mask];
            for (k, e) in expect.iter().enumerate() {
                assert_eq!(v[k], *e as f32, "word {w:#x} width {b} lane {k}");
            }
            // Two words at once give each word's fields.
            let other = w.rotate_left(29) ^ 0x0123_4567_89ab_cdef;
            let (p0, p1) = fields3_uniform2(w, other, b);
            let q1 = fields3_uniform(other, b);
            for k in 0..3 {
                assert_eq!(p0[k], v[k], "pair word 0 {w:#x} width {b} lane {k}");
                assert_eq!(p1[k], q1[k], "pair word 1 {other:#x} width {b} lane {k}");
            }
        }
    }
}

/// Every instruction-set level this CPU runs decodes the tiny blobs (a
/// ranged, a segment-constant, an unranged and a raw track; one sample,
/// both in a segment, across segments) to the baseline's bits, for
/// poses and for subsets; a level it does not run cannot be had.
#[test]
fn every_level_gives_the_baseline_bits() {
    use super::decode::{FullPose, JointSubset};
    use super::isa::{Isa, SupportedIsa};
    let baseline = SupportedIsa::new(Isa::Sse2).expect("every CPU runs the baseline");
    let levels: Vec<SupportedIsa> = Isa::ALL.into_iter().filter_map(SupportedIsa::new).collect();
    assert_eq!(
        levels.len(),
        Isa::ALL.iter().filter(|i| i.supported()).count()
    );
    assert!(SupportedIsa::best() == *levels.last().expect("the baseline at least"));
    let defaults = [
        Transform::IDENTITY,
        Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE),
    ];
    let bits = |p: &[Transform]| -> Vec<u32> {
        p.iter()
            .flat_map(|x| x.to_array().map(f32::to_bits))
            .collect()
    };
    for blob in [tiny_blob(), tiny_blob_unranged_raw()] {
        let clip = VbrClip::parse(&blob, 2, 3).expect("valid");
        for (i0, i1, alpha) in [(0, 0, 0.0), (0, 1, 0.5), (1, 2, 0.25), (2, 2, 0.0)] {
            let pos = SamplePosition { i0, i1, alpha };
            let subset = JointSubset::<false, false> {
                joints: &[1, 0, 0],
                index: None,
            };
            let mut want = [Transform::IDENTITY; 2];
            let mut want_sub = [Transform::IDENTITY; 3];
            assert!(clip.decode_on(baseline, &FullPose, pos, &defaults, &mut want, None, None));
            assert!(clip.decode_on(baseline, &subset, pos, &defaults, &mut want_sub, None, None));
            for &isa in &levels {
                let (mut got, mut sub) = ([Transform::IDENTITY; 2], [Transform::IDENTITY; 3]);
                assert!(clip.decode_on(isa, &FullPose, pos, &defaults, &mut got, None, None));
                assert!(clip.decode_on(isa, &subset, pos, &defaults, &mut sub, None, None));
                assert_eq!(bits(&want), bits(&got), "{:?} at {pos:?}", isa.isa());
                assert_eq!(bits(&want_sub), bits(&sub), "{:?} at {pos:?}", isa.isa());
            }
        }
    }
}

/// Version 4's padding after the last segment is exactly
/// [`SEGMENT_PADDING`] zero bytes: missing, short, non-zero or longer is
/// refused (the whole-pose walk's unchecked loads rely on it).
#[test]
fn segment_padding_is_checked() {
    let blob = tiny_blob();
    assert!(VbrClip::parse(&blob, 2, 3).is_ok());
    let end = blob.len();
    assert!(VbrClip::parse(&blob[..end - SEGMENT_PADDING], 2, 3).is_err());
    assert!(VbrClip::parse(&blob[..end - 1], 2, 3).is_err());
    let mut dirty = blob.clone();
    dirty[end - 1] = 1;
    assert!(VbrClip::parse(&dirty, 2, 3).is_err());
    let mut long = blob.clone();
    long.push(0);
    assert!(VbrClip::parse(&long, 2, 3).is_err());
}
