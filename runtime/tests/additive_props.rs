//! Properties of the additive convention.

use ludus_anim_format::additive::{
    apply_additive, make_additive, make_additive_pose, ADDITIVE_IDENTITY,
};
use ludus_anim_format::math::{Quat, Transform, Vec3};
use ludus_anim_runtime::additive::apply_additive_pose;
use proptest::prelude::*;

/// No failure persistence: the regression file would land outside the
/// files this suite owns.
fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Rotation angle between `a` and `b`, sign-insensitive and well
/// conditioned near zero (unlike `acos` of the dot product in f32).
fn rotation_angle(a: Quat, b: Quat) -> f32 {
    let d = a.conjugate() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

fn arb_transform() -> impl Strategy<Value = Transform> {
    (
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0),
        -3.1f32..3.1,
        (-5.0f32..5.0, -5.0f32..5.0, -5.0f32..5.0),
        (0.2f32..5.0, 0.2f32..5.0, 0.2f32..5.0),
    )
        .prop_filter_map("axis", |(a, ang, t, s)| {
            let axis = Vec3::new(a.0, a.1, a.2);
            (axis.length() > 1e-3).then(|| {
                Transform::new(
                    Vec3::new(t.0, t.1, t.2),
                    Quat::from_axis_angle(axis.normalize(), ang),
                    Vec3::new(s.0, s.1, s.2),
                )
            })
        })
}

fn assert_close(a: &Transform, b: &Transform) -> Result<(), TestCaseError> {
    prop_assert!(
        (a.translation - b.translation).length() < 1e-5,
        "{a:?} {b:?}"
    );
    prop_assert!(rotation_angle(a.rotation, b.rotation) < 1e-3, "{a:?} {b:?}");
    prop_assert!(
        ((a.scale - b.scale) / b.scale).abs().max_element() < 1e-5,
        "{a:?} {b:?}"
    );
    Ok(())
}

proptest! {
    #![proptest_config(config(512))]

    /// apply(R, make(A, R), 1) == A (rotation up to sign), including
    /// non-uniform positive scales.
    #[test]
    fn full_weight_reconstructs_authored(a in arb_transform(), r in arb_transform()) {
        let delta = make_additive(&a, &r);
        let out = apply_additive(&r, &delta, 1.0);
        assert_close(&out, &a)?;
        // Componentwise ratio for non-uniform scale.
        prop_assert!(((delta.scale * r.scale - a.scale) / a.scale).abs().max_element() < 1e-6);
    }

    /// w = 0 returns the base exactly; the additive identity is a no-op at
    /// any weight.
    #[test]
    fn zero_weight_and_identity_are_noops(
        base in arb_transform(), a in arb_transform(), r in arb_transform(), w in 0.0f32..=1.0,
    ) {
        let delta = make_additive(&a, &r);
        prop_assert_eq!(apply_additive(&base, &delta, 0.0), base);
        let same = apply_additive(&base, &ADDITIVE_IDENTITY, w);
        assert_close(&same, &base)?;
        // make(R, R) is the identity delta.
        let id = make_additive(&r, &r);
        prop_assert!(id.translation.length() < 1e-6);
        prop_assert!((id.scale - Vec3::ONE).abs().max_element() < 1e-6);
        prop_assert!(rotation_angle(id.rotation, Quat::IDENTITY) < 1e-3);
    }

    /// Partial weights follow the binding formulas term by term.
    #[test]
    fn partial_weight_matches_formula(
        base in arb_transform(), a in arb_transform(), r in arb_transform(), w in 0.0f32..=1.0,
    ) {
        let delta = make_additive(&a, &r);
        let out = apply_additive(&base, &delta, w);
        let t = base.translation + w * (a.translation - r.translation);
        let dq = r.rotation.inverse() * a.rotation;
        let dq = if dq.w < 0.0 { -dq } else { dq };
        let q = (base.rotation * Quat::IDENTITY.slerp(dq, w)).normalize();
        let s = base.scale * Vec3::ONE.lerp(a.scale / r.scale, w);
        assert_close(&out, &Transform::new(t, q, s))?;
        prop_assert!(out.scale.min_element() > 0.0);
    }

    /// The pose version equals the per-joint function; bad weights and length
    /// mismatches are refused without writing.
    #[test]
    fn pose_versions(
        pose in prop::collection::vec((arb_transform(), arb_transform(), arb_transform()), 1..6),
        w in 0.0f32..=1.0,
    ) {
        let base: Vec<Transform> = pose.iter().map(|p| p.0).collect();
        let authored: Vec<Transform> = pose.iter().map(|p| p.1).collect();
        let reference: Vec<Transform> = pose.iter().map(|p| p.2).collect();
        let mut delta = vec![ADDITIVE_IDENTITY; pose.len()];
        prop_assert!(make_additive_pose(&authored, &reference, &mut delta));
        let mut out = vec![Transform::IDENTITY; pose.len()];
        prop_assert!(apply_additive_pose(&base, &delta, w, &mut out));
        for i in 0..pose.len() {
            prop_assert_eq!(out[i], apply_additive(&base[i], &delta[i], w));
        }

        let untouched = vec![Transform::IDENTITY; pose.len()];
        for bad in [-0.1f32, 1.5, f32::NAN, f32::INFINITY] {
            let mut o = untouched.clone();
            prop_assert!(!apply_additive_pose(&base, &delta, bad, &mut o));
            prop_assert_eq!(&o, &untouched);
        }
        let mut short = vec![Transform::IDENTITY; pose.len() - 1];
        prop_assert!(!apply_additive_pose(&base, &delta, w, &mut short));
        prop_assert!(!make_additive_pose(&authored, &reference, &mut short));
    }
}

#[test]
fn scalar_weight_clamps() {
    let base = Transform::new(Vec3::new(1.0, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
    let delta = Transform::new(
        Vec3::new(0.0, 2.0, 0.0),
        Quat::from_rotation_z(0.4),
        Vec3::new(2.0, 0.5, 1.0),
    );
    assert_eq!(
        apply_additive(&base, &delta, 3.0),
        apply_additive(&base, &delta, 1.0)
    );
    assert_eq!(apply_additive(&base, &delta, -1.0), base);
    assert_eq!(apply_additive(&base, &delta, f32::NAN), base);
    let half = apply_additive(&base, &delta, 0.5);
    assert!((half.translation - Vec3::new(1.0, 1.0, 0.0)).length() < 1e-6);
    assert!((half.scale - Vec3::new(1.5, 0.75, 1.0)).length() < 1e-6);
    assert!(rotation_angle(half.rotation, Quat::from_rotation_z(0.2)) < 1e-3);
    assert_eq!(ADDITIVE_IDENTITY, Transform::IDENTITY);
}
