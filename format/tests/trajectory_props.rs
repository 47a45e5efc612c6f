//! Properties of `trajectory::Trajectory::delta` and friends.

use ludus_anim_format::math::{Quat, Vec3};
use ludus_anim_format::rigid::RigidTransform;
use ludus_anim_format::trajectory::{
    extract_planar, normalize_trajectory, trajectory_key_count, yaw_twist, Trajectory,
    TrajectoryError,
};
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

/// (translation error, rotation angle) between two rigid transforms.
fn err(a: &RigidTransform, b: &RigidTransform) -> (f32, f32) {
    (
        (a.translation - b.translation).length(),
        rotation_angle(a.rotation, b.rotation),
    )
}

fn close(a: &RigidTransform, b: &RigidTransform, tol_t: f32, tol_r: f32) -> bool {
    let (et, er) = err(a, b);
    et <= tol_t && er <= tol_r
}

/// Keys of a plausible locomotion trajectory: a random walk of small
/// per-sample steps (rotation about a tilted axis plus translation),
/// normalized so key 0 is the identity.
fn arb_trajectory() -> impl Strategy<Value = (Vec<RigidTransform>, f32, f32)> {
    let rate = prop_oneof![Just(10.0f32), Just(24.0), Just(30.0), Just(60.0)];
    (rate, 0.2f32..2.5).prop_flat_map(|(rate, dur)| {
        let n = trajectory_key_count(dur, rate).unwrap();
        let step = (
            -0.3f32..0.3,
            -0.3f32..0.3,
            -0.3f32..0.3,
            -0.2f32..0.2,
            -0.05f32..0.05,
            0.0f32..0.2,
        );
        (
            prop::collection::vec(step, n),
            Just(rate),
            Just(dur),
            (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -3.0f32..3.0),
        )
            .prop_map(|(steps, rate, dur, (ox, oy, oz, oa))| {
                // Start from an arbitrary reference offset, then walk.
                let axis = Vec3::new(ox, 1.0, oz).normalize();
                let mut cur =
                    RigidTransform::new(Quat::from_axis_angle(axis, oa), Vec3::new(ox, oy, oz));
                let mut keys = Vec::with_capacity(steps.len());
                for (yaw, pitch, roll, dx, dy, dz) in steps {
                    keys.push(cur);
                    let r = Quat::from_euler(glam::EulerRot::YXZ, yaw, pitch * 0.3, roll * 0.3);
                    cur = cur * RigidTransform::new(r, Vec3::new(dx, dy, dz));
                }
                let offset = normalize_trajectory(&mut keys);
                assert!(offset.is_finite());
                (keys, rate, dur)
            })
    })
}

/// Absolute times spanning several cycles either side of zero.
fn arb_abs() -> impl Strategy<Value = f64> {
    -4.0f64..4.0
}

fn naive_pow(c: &RigidTransform, n: u32) -> RigidTransform {
    let mut r = RigidTransform::IDENTITY;
    for _ in 0..n {
        r = r * *c;
    }
    r
}

proptest! {
    #![proptest_config(config(256))]

    /// delta(a, b) * delta(b, c) == delta(a, c) for any a, b, c (any order,
    /// across several wraps), looping and clamped.
    #[test]
    fn split_deltas_compose(
        (keys, rate, dur) in arb_trajectory(),
        fa in arb_abs(), fb in arb_abs(), fc in arb_abs(), looping in any::<bool>(),
    ) {
        let tr = Trajectory::new(&keys, rate, dur).unwrap();
        let d = dur as f64;
        let (a, b, c) = (fa * d, fb * d, fc * d);
        let whole = tr.delta(a, c, looping);
        let split = tr.delta(a, b, looping) * tr.delta(b, c, looping);
        let scale = 1.0 + whole.translation.length() + tr.cycle().translation.length() * 8.0;
        prop_assert!(close(&whole, &split, 2e-5 * scale, 2e-4), "{:?}", err(&whole, &split));
    }

    /// Many small forward pieces across several wraps compose to the big delta.
    #[test]
    fn many_pieces_compose(
        (keys, rate, dur) in arb_trajectory(),
        start in arb_abs(),
        cuts in prop::collection::vec(0.0f64..0.7, 1..40),
    ) {
        let tr = Trajectory::new(&keys, rate, dur).unwrap();
        let d = dur as f64;
        let mut t = start * d;
        let t0 = t;
        let mut acc = RigidTransform::IDENTITY;
        for c in &cuts {
            let next = t + c * d;
            acc = acc * tr.delta(t, next, true);
            t = next;
        }
        let whole = tr.delta(t0, t, true);
        let scale = 1.0 + whole.translation.length() + tr.cycle().translation.length() * 8.0;
        prop_assert!(close(&whole, &acc, 5e-5 * scale, 5e-4), "{:?}", err(&whole, &acc));
    }

    /// Reverse is the inverse of forward; delta(t, t) is the identity.
    #[test]
    fn reverse_is_inverse_and_zero_is_identity(
        (keys, rate, dur) in arb_trajectory(),
        fa in arb_abs(), fb in arb_abs(), looping in any::<bool>(),
    ) {
        let tr = Trajectory::new(&keys, rate, dur).unwrap();
        let d = dur as f64;
        let (a, b) = (fa * d, fb * d);
        let fwd = tr.delta(a, b, looping);
        let rev = tr.delta(b, a, looping);
        let prod = fwd * rev;
        let scale = 1.0 + fwd.translation.length();
        prop_assert!(close(&prod, &RigidTransform::IDENTITY, 2e-5 * scale, 2e-4));
        prop_assert!(close(&rev, &fwd.inverse(), 2e-5 * scale, 2e-4));
        prop_assert_eq!(tr.delta(a, a, looping), RigidTransform::IDENTITY);
    }

    /// Whole-cycle deltas equal C^n composed naively, from any phase:
    /// delta(k d + x, (k + n) d + x) = inv(R(x)) C^n R(x).
    #[test]
    fn multi_loop_is_cycle_power(
        (keys, rate, dur) in arb_trajectory(),
        k in -3i64..3, n in 0u32..12, x in 0.0f32..1.0,
    ) {
        let tr = Trajectory::new(&keys, rate, dur).unwrap();
        let d = dur as f64;
        let c = tr.cycle();
        let cn = naive_pow(&c, n);
        prop_assert!(close(&c.pow(n as u64), &cn, 1e-4 * (1.0 + cn.translation.length()), 1e-4));
        let got = tr.delta(k as f64 * d, (k + n as i64) as f64 * d, true);
        let scale = 1.0 + cn.translation.length();
        prop_assert!(close(&got, &cn, 2e-5 * scale, 2e-4), "{:?}", err(&got, &cn));
        let lx = x * dur;
        let rx = tr.sample(lx);
        let expect = rx.inverse() * cn * rx;
        let got = tr.delta(k as f64 * d + lx as f64, (k + n as i64) as f64 * d + lx as f64, true);
        let scale = 1.0 + expect.translation.length();
        prop_assert!(close(&got, &expect, 5e-5 * scale, 3e-4), "{:?}", err(&got, &expect));
    }

    /// Within one cycle the delta is literally inv(R(a)) * R(b); nonlooping
    /// clamps to the endpoints.
    #[test]
    fn single_interval_and_clamp(
        (keys, rate, dur) in arb_trajectory(),
        x in 0.0f32..1.0, y in 0.0f32..1.0,
    ) {
        let tr = Trajectory::new(&keys, rate, dur).unwrap();
        let (a, b) = (x * dur, y * dur);
        let expect = tr.sample(a).inverse() * tr.sample(b);
        prop_assert!(close(&tr.delta(a as f64, b as f64, true), &expect, 1e-5, 1e-4));
        prop_assert!(close(&tr.delta(a as f64, b as f64, false), &expect, 1e-5, 1e-4));
        // Past the end, nonlooping sees R(duration) = C.
        let past = tr.delta(a as f64, dur as f64 * 5.0, false);
        prop_assert!(close(&past, &(tr.sample(a).inverse() * tr.cycle()), 1e-5, 1e-4));
        prop_assert_eq!(tr.delta(-3.0, -1.0, false), RigidTransform::IDENTITY);
    }
}

/// A smooth walk sampled at `rate`; `turn` is the heading change per
/// second (0 gives a cycle transform with no net yaw: a straight line).
fn walk_keys_turning(dur: f32, rate: f32, turn: f32) -> Vec<RigidTransform> {
    let n = trajectory_key_count(dur, rate).unwrap();
    let mut keys: Vec<RigidTransform> = (0..n)
        .map(|i| {
            let t = if i + 1 == n { dur } else { i as f32 / rate };
            // Sway, bob and lean are periodic in the cycle (two steps).
            let ph = std::f32::consts::TAU * t / dur;
            let yaw = turn * t + 0.1 * (2.0 * ph).sin();
            let bob = 0.04 * (2.0 * ph).sin();
            let rot = Quat::from_rotation_y(yaw) * Quat::from_rotation_z(0.05 * ph.sin());
            RigidTransform::new(rot, Vec3::new(0.3 * (2.0 * t).sin() + 0.2, bob, 1.4 * t))
        })
        .collect();
    normalize_trajectory(&mut keys);
    keys
}

/// A curving walk (0.6 rad/s).
fn walk_keys(dur: f32, rate: f32) -> Vec<RigidTransform> {
    walk_keys_turning(dur, rate, 0.6)
}

/// Composing per-frame deltas at 30 Hz over 100 loops of a 1.37 s clip
/// stays within a small bound of C^100 (and of the one-shot delta), for a
/// curving walk (ends near its start) and a straight one (ends ~190 m
/// away). Run with `--nocapture` to see the measured drift.
#[test]
fn drift_over_100_loops_at_30hz() {
    for turn in [0.6f32, 0.0] {
        let (dur, rate) = (1.37f32, 30.0f32);
        let keys = walk_keys_turning(dur, rate, turn);
        let tr = Trajectory::new(&keys, rate, dur).unwrap();
        let d = dur as f64;
        let total = 100.0 * d;
        let dt = 1.0 / 30.0;
        let mut acc = RigidTransform::IDENTITY;
        let mut pos64 = glam::DVec3::ZERO;
        let mut t = 0.0f64;
        let mut i = 0u64;
        while t < total {
            i += 1;
            let next = (i as f64 * dt).min(total);
            let step = tr.delta(t, next, true);
            // Same composition with the position accumulated in f64, to
            // separate the deltas' error from f32 world-position rounding.
            pos64 += (acc.rotation * step.translation).as_dvec3();
            acc = acc * step;
            t = next;
        }
        let e64 = (pos64 - tr.cycle().pow(100).translation.as_dvec3()).length();
        let c100 = tr.cycle().pow(100);
        let naive = naive_pow(&tr.cycle(), 100);
        let direct = tr.delta(0.0, total, true);
        let (et, er) = err(&acc, &c100);
        let (nt, nr) = err(&naive, &c100);
        let (dt_, dr) = err(&direct, &c100);
        println!(
            "turn {turn} rad/s, 100 loops ({i} ticks), |C^100.t| = {:.3} m: per-frame \
             composition vs C^100: {et:.3e} m, {er:.3e} rad (position accumulated in f64: \
             {e64:.3e} m); naive C*C*.. vs squaring: \
             {nt:.3e} m, {nr:.3e} rad; delta(0, 100d) vs C^100: {dt_:.3e} m, {dr:.3e} rad",
            c100.translation.length()
        );
        assert!(
            et < 5e-5 * (1.0 + c100.translation.length()) && er < 1e-4,
            "drift {et} m {er} rad"
        );
        assert!(
            e64 < 1e-5 * (1.0 + c100.translation.length() as f64),
            "f64 drift {e64} m"
        );
        assert!(dt_ < 1e-4 * (1.0 + c100.translation.length()) && dr < 1e-4);
    }
}

#[test]
fn validation_and_sampling_endpoints() {
    // 0.7 s at 30 Hz: 0.7 * 30 rounds above 21 in f32 but is on the grid.
    assert_eq!(trajectory_key_count(0.7, 30.0), Some(22));
    assert_eq!(trajectory_key_count(1.158, 24.0), Some(29));
    assert_eq!(trajectory_key_count(0.0, 30.0), Some(1));
    assert_eq!(trajectory_key_count(1.0, 0.0), None);
    let keys = walk_keys(1.158, 24.0);
    let tr = Trajectory::new(&keys, 24.0, 1.158).unwrap();
    assert_eq!(tr.sample(1.158), tr.cycle());
    assert_eq!(tr.sample(99.0), tr.cycle());
    assert_eq!(tr.sample(-1.0), RigidTransform::IDENTITY);
    assert_eq!(tr.sample(f32::NAN), RigidTransform::IDENTITY);
    assert_eq!(tr.sample(2.0 / 24.0), keys[2]);
    assert!(matches!(
        Trajectory::new(&keys[1..], 24.0, 1.158),
        Err(TrajectoryError::KeyCount { .. })
    ));
    let mut shifted = keys.clone();
    shifted[0].translation.x = 0.5;
    assert_eq!(
        Trajectory::new(&shifted, 24.0, 1.158).unwrap_err(),
        TrajectoryError::NotNormalized
    );
    let one = [RigidTransform::IDENTITY];
    let z = Trajectory::new(&one, 30.0, 0.0).unwrap();
    assert_eq!(z.delta(0.0, 5.0, true), RigidTransform::IDENTITY);
}

#[test]
fn compose_and_inverse_follow_column_vectors() {
    let a = RigidTransform::new(Quat::from_rotation_y(0.5), Vec3::new(1.0, 2.0, 3.0));
    let b = RigidTransform::new(Quat::from_rotation_x(-0.3), Vec3::new(-0.5, 0.1, 0.7));
    let p = Vec3::new(0.3, -0.2, 0.9);
    let ab = a * b;
    assert!((ab.transform_point(p) - a.transform_point(b.transform_point(p))).length() < 1e-6);
    assert!((ab.translation - (a.translation + a.rotation * b.translation)).length() < 1e-6);
    assert!(close(
        &(a * a.inverse()),
        &RigidTransform::IDENTITY,
        1e-6,
        1e-3
    ));
    // Rotation and translation do not commute.
    assert!(!close(&(a * b), &(b * a), 1e-3, 1e-3));
}

proptest! {
    #![proptest_config(config(256))]

    /// The planar policy keeps x/z and the twist about +Y: the result has
    /// no swing, y = 0, and the removed swing has no +Y component.
    #[test]
    fn planar_extraction(
        (ax, ay, az, ang) in (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0, -3.1f32..3.1),
        t in (-5.0f32..5.0, -5.0f32..5.0, -5.0f32..5.0),
    ) {
        let axis = Vec3::new(ax, ay, az);
        prop_assume!(axis.length() > 1e-3);
        let q = Quat::from_axis_angle(axis.normalize(), ang);
        let p = extract_planar(RigidTransform::new(q, Vec3::new(t.0, t.1, t.2)));
        prop_assert_eq!(p.translation, Vec3::new(t.0, 0.0, t.2));
        prop_assert!(p.rotation.x == 0.0 && p.rotation.z == 0.0 && p.rotation.w >= 0.0);
        let swing = q * p.rotation.conjugate();
        prop_assert!(swing.y.abs() < 1e-5, "swing {:?}", swing);
        // Pure yaw is kept exactly (up to float).
        let yaw = Quat::from_rotation_y(ang);
        prop_assert!(rotation_angle(yaw_twist(yaw), yaw) < 1e-4);
    }
}

#[test]
fn planar_singular_case() {
    // Upside down: 180 degrees about a horizontal axis at heading 0.4.
    let h = Vec3::new(0.4f32.cos(), 0.0, 0.4f32.sin());
    let q = Quat::from_axis_angle(h, std::f32::consts::PI);
    let tw = yaw_twist(q);
    assert!(tw.is_finite() && (tw.length() - 1.0).abs() < 1e-6);
    // q == swing_X(180) * twist
    let rebuilt = Quat::from_rotation_x(std::f32::consts::PI) * tw;
    assert!(rotation_angle(rebuilt, q) < 1e-3);
    assert_eq!(
        yaw_twist(Quat::from_xyzw(f32::NAN, 0.0, 0.0, 1.0)),
        Quat::IDENTITY
    );
}
