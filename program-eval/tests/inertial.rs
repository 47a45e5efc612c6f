//! Inertialization with the source's velocity (`kernels::inertial_curve`,
//! `inertial_rates`, `apply_inertial`): the quintic starts at the offset
//! with its rate and ends at rest at the duration; applied to a joint, a
//! source moving at a constant linear and angular velocity switched to a
//! still destination carries on with that pose and velocity at the switch
//! and reaches the destination exactly by the duration.

use ludus_anim_format::math::{Quat, Transform, Vec3};
use ludus_anim_program_eval::kernels::{
    apply_inertial, inertial_curve, inertial_decay, inertial_offset, inertial_rates, InertialRates,
};
use proptest::prelude::*;

/// Rotation taking `a` to `b`'s angle (radians, shorter arc).
fn angle(a: Quat, b: Quat) -> f32 {
    2.0 * a.dot(b).abs().min(1.0).acos()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn the_curve_starts_at_the_offset_with_its_rate_and_ends_at_rest(
        x0 in -3.0f32..3.0,
        v0 in -20.0f32..20.0,
        t1 in 0.05f32..2.0,
    ) {
        let x = |t: f32| f64::from(inertial_curve(x0, v0, t, t1));
        prop_assert!((x(0.0) - f64::from(x0)).abs() <= 1e-5 * (1.0 + f64::from(x0.abs())));
        // One-sided second-order difference at 0 against the rate.
        let h = 1e-3 * t1;
        let slope = (-3.0 * x(0.0) + 4.0 * x(h) - x(2.0 * h)) / (2.0 * f64::from(h));
        let scale = f64::from(v0.abs() + x0.abs() / t1);
        prop_assert!((slope - f64::from(v0)).abs() <= 0.01 * scale + 0.01,
            "slope {slope} vs rate {v0}");
        // At rest at the end: value and slope 0, and 0 from then on.
        prop_assert_eq!(x(t1), 0.0);
        prop_assert_eq!(x(t1 * 1.5), 0.0);
        let end = x(t1 * (1.0 - 1e-3));
        // (f32 cancellation in the polynomial: about 1e-5 of its terms.)
        let round = 2e-5 * (1.0 + scale * f64::from(t1));
        prop_assert!(end.abs() <= round, "near the end {end}");
        let slope_end = (x(t1 * (1.0 - 2e-3)) - end) / f64::from(1e-3 * t1);
        prop_assert!(slope_end.abs() <= 2.0 * round / (1e-3 * f64::from(t1)) + 1e-3 * scale, "end slope {slope_end}");
    }

    #[test]
    fn a_moving_source_carries_on_and_reaches_the_destination_by_the_duration(
        s0 in prop::array::uniform3(-1.0f32..1.0),
        v in prop::array::uniform3(-2.0f32..2.0),
        axis in prop::array::uniform3(-1.0f32..1.0),
        angle0 in -1.2f32..1.2,
        w in prop::array::uniform3(-3.0f32..3.0),
        c_t in prop::array::uniform3(-1.0f32..1.0),
        c_axis in prop::array::uniform3(-1.0f32..1.0),
        c_angle in -1.0f32..1.0,
        t1 in 0.2f32..1.0,
    ) {
        let dt = 1.0 / 30.0;
        let axis = Vec3::from(axis).try_normalize().unwrap_or(Vec3::Y);
        let c_axis = Vec3::from(c_axis).try_normalize().unwrap_or(Vec3::X);
        let (v, w) = (Vec3::from(v), Vec3::from(w));
        let q0 = Quat::from_axis_angle(axis, angle0);
        // The source at time t (0: its last output before the switch).
        let source = |t: f32| Transform {
            translation: Vec3::from(s0) + v * t,
            rotation: (Quat::from_scaled_axis(w * t) * q0).normalize(),
            scale: Vec3::ONE,
        };
        let dest = Transform {
            translation: Vec3::from(c_t),
            rotation: Quat::from_axis_angle(c_axis, c_angle),
            scale: Vec3::ONE,
        };
        let off = inertial_offset(&source(0.0), &dest);
        let older = inertial_offset(&source(-dt), &dest);
        let rates = inertial_rates(&off, &older, dt);
        let out = |t: f32| apply_inertial(&dest, &off, &rates, t, t1);

        // Pose continuity: at the capture time the output is the source.
        let o0 = out(0.0);
        prop_assert!((o0.translation - source(0.0).translation).length() <= 1e-5);
        prop_assert!(angle(o0.rotation, source(0.0).rotation) <= 1e-3);

        // Velocity continuity: the output's velocity just after the
        // capture is the source's (translation exactly linear; rotation
        // through the rotation-vector difference over one tick).
        let d = 1e-3f32;
        let od = out(d);
        let lin = (od.translation - o0.translation) / d;
        let off_len = off.translation.abs().max_element();
        let lin_tol = 0.02 * (v.length() + off_len / t1) + 0.02;
        prop_assert!((lin - v).length() <= lin_tol, "linear {lin} vs {v} (tol {lin_tol})");
        let ang = (od.rotation * o0.rotation.conjugate()).normalize();
        let ang = if ang.w < 0.0 { -ang } else { ang };
        let omega = ang.to_scaled_axis() / d;
        let ang_tol = 0.15 * w.length() + 0.05 * (off.rotation.to_scaled_axis().length() / t1) + 0.05;
        prop_assert!((omega - w).length() <= ang_tol, "angular {omega} vs {w} (tol {ang_tol})");

        // Decay: the destination exactly from the duration on.
        prop_assert_eq!(out(t1), dest);
        prop_assert_eq!(out(t1 + 0.5), dest);
        // Finite and unit all the way.
        for k in 0..=20 {
            let o = out(t1 * k as f32 / 20.0);
            prop_assert!(o.translation.is_finite() && (o.rotation.length() - 1.0).abs() < 1e-4);
        }
    }
}

#[test]
fn without_a_rate_the_offset_decays_by_the_plain_quintic() {
    let dest = Transform::IDENTITY;
    let off = Transform {
        translation: Vec3::new(0.4, -0.2, 0.1),
        rotation: Quat::from_rotation_y(0.6),
        scale: Vec3::ONE,
    };
    let still = InertialRates::default();
    for k in 0..=10 {
        let s = k as f32 / 10.0;
        let o = apply_inertial(&dest, &off, &still, s * 0.5, 0.5);
        let d = inertial_decay(s);
        assert!((o.translation - off.translation * d).length() < 1e-5, "{k}");
        assert!(
            angle(o.rotation, Quat::from_rotation_y(0.6 * d)) < 1e-4,
            "{k}"
        );
    }
    // No earlier sample (dt 0) or a broken one: at rest.
    assert_eq!(inertial_rates(&off, &dest, 0.0), still);
    assert_eq!(inertial_rates(&off, &dest, f32::NAN), still);
}

#[test]
fn the_rate_is_the_sources_velocity() {
    // A joint moving +x at 1.5 m/s and turning about +y at 2 rad/s,
    // against a still destination.
    let dt = 1.0 / 30.0;
    let at = |t: f32| Transform {
        translation: Vec3::new(1.5 * t, 0.0, 0.0),
        rotation: Quat::from_rotation_y(0.3 + 2.0 * t),
        scale: Vec3::ONE,
    };
    let dest = Transform::IDENTITY;
    let r = inertial_rates(
        &inertial_offset(&at(0.0), &dest),
        &inertial_offset(&at(-dt), &dest),
        dt,
    );
    assert!(
        (r.translation - Vec3::new(1.5, 0.0, 0.0)).length() < 1e-3,
        "{r:?}"
    );
    assert!(
        (r.rotation - Vec3::new(0.0, 2.0, 0.0)).length() < 1e-3,
        "{r:?}"
    );
}
