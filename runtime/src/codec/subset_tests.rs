//! Decoding a subset of joints gives exactly the full pose's values for
//! those joints, for both codecs, at sample times and between samples.

use super::{ClipCodec, CodecId};
use crate::math::{Quat, Transform, Vec3};
use crate::timing::SamplePosition;
use ludus_anim_format::reference;

#[test]
fn reference_subset_matches_full_pose() {
    let joints = 5;
    let samples = 4;
    let poses: Vec<Transform> = (0..joints * samples)
        .map(|i| {
            Transform::new(
                Vec3::splat(i as f32),
                Quat::from_rotation_y(i as f32 * 0.1),
                Vec3::ONE,
            )
        })
        .collect();
    let blob = reference::encode(&poses);
    let codec = ClipCodec::parse(
        CodecId::Reference,
        reference::VERSION,
        &blob,
        joints,
        samples as u32,
    )
    .unwrap();
    let ClipCodec::Reference(reference) = codec else {
        panic!("a reference blob parses as the reference codec");
    };
    let rest = vec![Transform::IDENTITY; joints];
    let mut full = vec![Transform::IDENTITY; joints];
    for pos in [
        SamplePosition {
            i0: 1,
            i1: 2,
            alpha: 0.0,
        },
        SamplePosition {
            i0: 2,
            i1: 3,
            alpha: 0.4,
        },
    ] {
        assert!(codec.decode_pose(pos, &rest, &mut full));
        let want = [4u32, 0, 2];
        let mut sub = vec![Transform::IDENTITY; want.len()];
        assert!(reference.decode_joints(pos, &want, &mut sub));
        for (k, &j) in want.iter().enumerate() {
            assert_eq!(sub[k], full[j as usize]);
        }
        assert!(!reference.decode_joints(pos, &[9], &mut sub[..1]));
    }
}
