//! Round trips through the encoder and the runtime decoder. Errors are
//! computed here independently: FK of the decoded pose against FK of the
//! raw pose, at every sample and at blends 0.25 / 0.5 / 0.75.

mod common;

use common::{decoder, random_clip, random_skeleton, worst_ratio, Rng};
use ludus_anim_compress::{encode_vbr, EncodeError, EncodeSettings};
use ludus_anim_format::codec::CodecId;
use ludus_anim_format::math::{Quat, Transform, Vec3};
use ludus_anim_format::timing::LoopMode;
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::{Clip, JointId, Player, Request, Skeleton};
use proptest::prelude::*;

fn chain_skeleton(rest: Vec<Transform>) -> Skeleton {
    let n = rest.len();
    let parents = (0..n)
        .map(|j| if j == 0 { u32::MAX } else { j as u32 - 1 })
        .collect();
    let names: Vec<String> = (0..n).map(|j| format!("c{j}")).collect();
    Skeleton::new(
        parents,
        names.iter().map(|s| JointId::from_path(s)).collect(),
        rest,
        names,
    )
    .expect("skeleton")
}

fn clip_of(joints: usize, poses: Vec<Transform>, rate: f32) -> ResampledClip {
    let n = (poses.len() / joints) as u32;
    ResampledClip {
        name: "t".into(),
        sample_rate_hz: rate,
        num_samples: n,
        duration_s: (n - 1) as f32 / rate,
        loop_mode: LoopMode::Once,
        joint_count: joints,
        samples: poses,
        curves: Vec::new(),
    }
}

fn check_roundtrip(sk: &Skeleton, clip: &ResampledClip, settings: &EncodeSettings) -> Vec<u8> {
    let enc = encode_vbr(sk, clip, settings).expect("encodes");
    let vbr = decoder(&enc.blob, sk, clip);
    let (ratio, _) = worst_ratio(
        |t, o| vbr.sample(t, sk.rest_pose(), o).is_ok(),
        sk,
        clip,
        &settings.joint_threshold_m,
        &settings.joint_shell_m,
    );
    assert!(ratio <= 1.0, "error exceeds threshold: ratio {ratio}");
    assert!(enc.stats.worst_error_ratio <= 1.0);
    enc.blob
}

#[test]
fn default_and_constant_tracks_are_exact() {
    let rest = vec![
        Transform::new(
            Vec3::new(0.0, 1.0, 0.0),
            Quat::from_rotation_y(0.3),
            Vec3::ONE,
        ),
        Transform::new(Vec3::new(0.2, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE),
        Transform::new(
            Vec3::new(0.0, 0.3, 0.1),
            Quat::from_rotation_x(-0.4),
            Vec3::new(1.0, 2.0, 1.0),
        ),
    ];
    let sk = chain_skeleton(rest.clone());
    let constant = Transform::new(
        Vec3::new(0.5, -0.25, 0.125),
        Quat::from_rotation_z(2.5),
        Vec3::new(1.5, 1.0, 0.5),
    );
    let mut poses = Vec::new();
    for i in 0..40 {
        let t = i as f32 * 0.1;
        poses.push(rest[0]); // all default
        poses.push(constant); // all constant, none equal to rest
                              // Joint 2: default rotation and scale, animated translation.
        poses.push(Transform::new(
            Vec3::new(t.sin() * 0.1, 0.3, 0.1),
            rest[2].rotation,
            rest[2].scale,
        ));
    }
    let clip = clip_of(3, poses, 30.0);
    let settings = EncodeSettings::uniform(3, 1e-4, 0.03);
    let enc = encode_vbr(&sk, &clip, &settings).expect("encodes");
    assert_eq!(enc.stats.animated_tracks, 1);
    assert_eq!(enc.stats.constant_tracks, 3);
    assert_eq!(enc.stats.default_tracks, 5);
    let vbr = decoder(&enc.blob, &sk, &clip);
    let mut out = vec![Transform::IDENTITY; 3];
    for i in 0..40 {
        let t = i as f32 / clip.sample_rate_hz;
        assert!(vbr.sample(t, sk.rest_pose(), &mut out).is_ok());
        assert_eq!(out[0], rest[0], "default is exactly the rest value");
        assert_eq!(out[2].rotation, rest[2].rotation);
        assert_eq!(out[2].scale, rest[2].scale);
        assert_eq!(
            out[1].translation, constant.translation,
            "constant vectors are stored exactly"
        );
        assert_eq!(out[1].scale, constant.scale);
        assert!(out[1].rotation.dot(constant.rotation).abs() > 1.0 - 1e-7);
    }
    check_roundtrip(&sk, &clip, &settings);
}

#[test]
fn identity_tracks_are_default_on_identity_rest() {
    let sk = chain_skeleton(vec![Transform::IDENTITY; 2]);
    let poses = vec![Transform::IDENTITY; 2 * 10];
    let clip = clip_of(2, poses, 30.0);
    let enc = encode_vbr(&sk, &clip, &EncodeSettings::uniform(2, 1e-4, 0.03)).expect("encodes");
    assert_eq!(enc.stats.default_tracks, 6);
    assert_eq!(enc.stats.segment_count, 0);
}

#[test]
fn random_clips_stay_within_threshold() {
    let mut rng = Rng(42);
    for case in 0..12 {
        let joints = 1 + rng.below(40);
        let samples = 1 + rng.below(70) as u32;
        let sk = random_skeleton(&mut rng, joints, true);
        let clip = random_clip(&mut rng, &sk, samples, 30.0, true);
        let mut settings = EncodeSettings::uniform(joints, 1e-4, 0.03);
        settings.max_segment_samples = [16, 5, 31, 1][case % 4];
        for j in 0..joints {
            // Per-joint tolerances.
            settings.joint_threshold_m[j] = rng.range(2e-5, 1e-3);
            settings.joint_shell_m[j] = rng.range(0.0, 0.2);
        }
        check_roundtrip(&sk, &clip, &settings);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, .. ProptestConfig::default() })]
    #[test]
    fn prop_random_hierarchies_roundtrip(seed in any::<u64>(), joints in 1usize..40, samples in 1u32..50, scale in any::<bool>()) {
        let mut rng = Rng(seed);
        let sk = random_skeleton(&mut rng, joints, scale);
        let clip = random_clip(&mut rng, &sk, samples, 24.0, scale);
        let settings = EncodeSettings::uniform(joints, 1e-4, 0.03);
        check_roundtrip(&sk, &clip, &settings);
    }
}

#[test]
fn quaternion_sign_flips_interpolate_on_the_short_arc() {
    let sk = chain_skeleton(vec![Transform::IDENTITY; 2]);
    let mut poses = Vec::new();
    for i in 0..30 {
        let q = Quat::from_rotation_y(i as f32 * 0.05) * Quat::from_rotation_x(0.2);
        // q then -q on alternate samples.
        let q = if i % 2 == 0 { q } else { -q };
        poses.push(Transform::new(Vec3::ZERO, q, Vec3::ONE));
        poses.push(Transform::new(
            Vec3::new(0.0, 0.5, 0.0),
            q.conjugate(),
            Vec3::ONE,
        ));
    }
    let clip = clip_of(2, poses, 30.0);
    let settings = EncodeSettings::uniform(2, 1e-4, 0.03);
    check_roundtrip(&sk, &clip, &settings);
    let enc = encode_vbr(&sk, &clip, &settings).expect("encodes");
    let vbr = decoder(&enc.blob, &sk, &clip);
    let mut out = vec![Transform::IDENTITY; 2];
    assert!(vbr.sample(4.5 / 30.0, sk.rest_pose(), &mut out).is_ok());
    let expect = Quat::from_rotation_y(4.5 * 0.05) * Quat::from_rotation_x(0.2);
    assert!(out[0].rotation.dot(expect).abs() > 0.9999);
}

#[test]
fn exact_sample_times_clip_end_and_segment_boundaries() {
    let mut rng = Rng(5);
    let sk = random_skeleton(&mut rng, 12, false);
    // 12 joints x 420 samples: past the encoder's trial limit (5,000
    // joint-samples), so it keeps the 8-sample maximum and its 53
    // segments (a short clip may pick one segment: no boundary to test).
    const N: u32 = 420;
    let clip = random_clip(&mut rng, &sk, N, 30.0, false);
    let mut settings = EncodeSettings::uniform(12, 1e-4, 0.03);
    settings.max_segment_samples = 8;
    let enc = encode_vbr(&sk, &clip, &settings).expect("encodes");
    assert_eq!(enc.stats.segment_count, 53);
    let vbr = decoder(&enc.blob, &sk, &clip);
    let rest = sk.rest_pose();
    let mut a = vec![Transform::IDENTITY; 12];
    let mut b = vec![Transform::IDENTITY; 12];
    let mut player = Player::new(&vbr, rest).expect("binds");
    // The same blob at 1 Hz: time i is exactly sample i.
    let exact_timing = ((N - 1) as f32, 1.0, N, LoopMode::Once);
    let exact = Clip::from_blob(CodecId::Vbr, &enc.blob, 12, exact_timing).expect("parses");
    let joints: Vec<u32> = (0..12).rev().collect();
    let mut sub = vec![Transform::IDENTITY; 12];
    for i in 0..N {
        // The exact time of sample i decodes the sample itself (to within
        // the time's rounding); the player (segment by segment, through
        // its track cache) and a joint request give the one-shot's bits.
        let t = i as f32 / 30.0;
        assert!(vbr.sample(t, rest, &mut a).is_ok());
        assert!(exact.sample(i as f32, rest, &mut b).is_ok());
        for k in 0..12 {
            assert!(a[k].translation.abs_diff_eq(b[k].translation, 1e-6));
            assert!(a[k].rotation.dot(b[k].rotation).abs() > 1.0 - 1e-6);
        }
        player.seek(t);
        assert!(player.decode(Request::Pose, &mut b).is_ok());
        assert_eq!(a, b);
        // Midway to the next sample: blends across every segment boundary.
        let t = (i as f32 + 0.5) / 30.0;
        assert!(vbr.sample(t, rest, &mut a).is_ok());
        player.seek(t);
        assert!(player.decode(Request::Joints(&joints), &mut sub).is_ok());
        for (k, &j) in joints.iter().enumerate() {
            assert_eq!(sub[k], a[j as usize]);
        }
    }
    // Clip end and beyond clamp to the last sample.
    assert!(vbr.sample(clip.duration_s + 1.0, rest, &mut a).is_ok());
    assert!(vbr.sample(clip.duration_s, rest, &mut b).is_ok());
    assert_eq!(a, b);
}

#[test]
fn validator_survives_truncation_and_corruption() {
    let mut rng = Rng(11);
    let sk = random_skeleton(&mut rng, 9, true);
    let clip = random_clip(&mut rng, &sk, 45, 30.0, true);
    let blob = encode_vbr(&sk, &clip, &EncodeSettings::uniform(9, 1e-4, 0.03))
        .expect("encodes")
        .blob;
    let rest = sk.rest_pose();
    let mut out = vec![Transform::IDENTITY; 9];
    let timing = (clip.duration_s, 30.0, 45, clip.loop_mode);
    fn parse(b: &[u8], timing: (f32, f32, u32, LoopMode)) -> bool {
        Clip::from_blob(CodecId::Vbr, b, 9, timing).is_ok()
    }
    for n in 0..blob.len() {
        assert!(!parse(&blob[..n], timing), "truncation to {n} accepted");
    }
    let mut accepted = 0;
    for i in 0..blob.len() {
        for _ in 0..6 {
            let mut b = blob.clone();
            b[i] = (rng.next() & 0xff) as u8;
            if let Ok(v) = Clip::from_blob(CodecId::Vbr, &b, 9, timing) {
                accepted += 1;
                for s in (0..45).step_by(4) {
                    let _ = v.sample((s as f32 + 0.5) / 30.0, rest, &mut out);
                }
            }
        }
    }
    assert!(accepted > 0, "sample data corruption should still parse");
}

#[test]
fn encoding_is_deterministic() {
    let mut rng = Rng(99);
    let sk = random_skeleton(&mut rng, 25, true);
    let clip = random_clip(&mut rng, &sk, 60, 30.0, true);
    let s = EncodeSettings::uniform(25, 1e-4, 0.03);
    let a = encode_vbr(&sk, &clip, &s).expect("encodes");
    let b = encode_vbr(&sk, &clip, &s).expect("encodes");
    assert_eq!(a.blob, b.blob);
    assert_eq!(a.stats, b.stats);
}

#[test]
fn input_errors_are_typed() {
    let sk = chain_skeleton(vec![Transform::IDENTITY; 2]);
    let clip = clip_of(2, vec![Transform::IDENTITY; 4], 30.0);
    let s = EncodeSettings::uniform(2, 1e-4, 0.03);
    let mut bad = clip.clone();
    bad.samples[3].translation.x = f32::NAN;
    assert!(matches!(
        encode_vbr(&sk, &bad, &s),
        Err(EncodeError::NonFinite {
            joint: 1,
            sample: 1
        })
    ));
    let mut empty = clip.clone();
    empty.num_samples = 0;
    empty.samples.clear();
    assert_eq!(encode_vbr(&sk, &empty, &s), Err(EncodeError::EmptyClip));
    assert!(matches!(
        encode_vbr(&sk, &clip, &EncodeSettings::uniform(3, 1e-4, 0.03)),
        Err(EncodeError::SettingsLength { .. })
    ));
    assert!(matches!(
        encode_vbr(&sk, &clip, &EncodeSettings::uniform(2, 0.0, 0.03)),
        Err(EncodeError::BadTolerance { joint: 0 })
    ));
    let mut short = clip.clone();
    short.samples.pop();
    assert!(matches!(
        encode_vbr(&sk, &short, &s),
        Err(EncodeError::SampleCountMismatch { .. })
    ));
}
