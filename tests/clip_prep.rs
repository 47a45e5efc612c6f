//! Clip preparation at the library level: root motion, loops and the
//! wrap loop mode, additive conversion, markers/events, and package v2
//! carrying them through the runtime reader.
//!
//! Everything goes through `ludus_anim_cooker::stages::prepare::prepare`
//! and the package writer/reader (the CLI wiring is tested elsewhere).

mod common;
use common::*;
use ludus_anim_cooker::profile::Profile;
use ludus_anim_cooker::stages::normalize::normalize;
use ludus_anim_cooker::stages::prepare::{
    prepare, verify_additive, AdditiveReference, ClipPrepSettings, LoopPolicy, MarkerKind,
    MarkerSpec, PrepareError, Prepared, RootMotionPolicy, RootMotionSettings,
};
use ludus_anim_cooker::stages::resample::{resample, GridLimits, SourceKind};
use ludus_anim_format::additive::apply_additive;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_format::math::{interpolate, Affine3A, Quat, Transform, Vec3};
use ludus_anim_format::package::HEADER_SIZE;
use ludus_anim_format::rigid::RigidTransform;
use ludus_anim_format::timing::LoopMode;
use ludus_anim_format::trajectory::extract_planar;
use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::events::{Crossing, Direction, PlaybackLatch};
use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};
use ludus_anim_runtime::{Package, Skeleton};
use ludus_anim_verify::{check_times, pose_errors, Scratch};
use std::f32::consts::TAU;

// ---------------------------------------------------------------------------
// synthetic content
// ---------------------------------------------------------------------------

const JOINTS: [&str; 4] = ["root", "pelvis", "thigh", "shin"];

fn skeleton() -> Skeleton {
    Skeleton::new(
        vec![NO_PARENT, 0, 1, 2],
        JOINTS.iter().map(|n| JointId::from_path(n)).collect(),
        vec![
            Transform::IDENTITY,
            Transform::new(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY, Vec3::ONE),
            Transform::new(Vec3::new(0.1, -0.05, 0.0), Quat::IDENTITY, Vec3::ONE),
            Transform::new(Vec3::new(0.0, -0.45, 0.0), Quat::IDENTITY, Vec3::ONE),
        ],
        JOINTS.iter().map(|s| s.to_string()).collect(),
    )
    .expect("valid skeleton")
}

const DUR: f32 = 1.2;
const RATE: f32 = 30.0;
const BOB: f32 = 0.03;
/// Heading change per second of the curving walk (rad/s).
const TURN: f32 = 0.5;

/// The authored local pose of a curving walk at `t`: the root travels
/// forward along its turning heading (1.4 m/s, `TURN` rad/s about +Y) from
/// an arbitrary start, the pelvis bobs twice per cycle and the leg swings;
/// everything but the root is periodic in `DUR`.
fn walk_pose(t: f32) -> Vec<Transform> {
    let ph = TAU * t / DUR;
    let yaw0 = 0.4f32;
    let yaw = yaw0 + TURN * t;
    // Position: integral of 1.4 m/s along the heading (closed form).
    let pos = |t: f32| {
        let a = yaw0 + TURN * t;
        Vec3::new(
            1.4 / TURN * (yaw0.cos() - a.cos()),
            0.0,
            1.4 / TURN * (a.sin() - yaw0.sin()),
        )
    };
    let p = pos(t) + Vec3::new(0.3, 0.0, -0.2);
    let mut pose = skeleton().rest_pose().to_vec();
    pose[0] = Transform::new(p, Quat::from_rotation_y(yaw), Vec3::ONE);
    pose[1].translation = Vec3::new(0.02 * ph.sin(), 1.0 - BOB * (2.0 * ph).cos(), 0.0);
    pose[1].rotation =
        Quat::from_rotation_y(0.1 * ph.cos()) * Quat::from_rotation_z(0.04 * ph.sin());
    pose[2].rotation = Quat::from_rotation_x(-0.4 * ph.cos());
    pose[3].rotation = Quat::from_rotation_x(0.6 * (0.5 + 0.5 * (ph - 1.0).cos()));
    pose
}

/// A clip on the 30 Hz grid from a pose function (what resampling makes).
fn grid_clip(name: &str, dur: f32, pose: impl Fn(f32) -> Vec<Transform>) -> ResampledClip {
    let n = ResampledClip::samples_for(dur, RATE);
    let mut samples = Vec::new();
    for i in 0..n {
        samples.extend(pose((i as f32 / RATE).min(dur)));
    }
    ResampledClip {
        name: name.into(),
        sample_rate_hz: RATE,
        num_samples: n,
        duration_s: dur,
        loop_mode: LoopMode::Once,
        joint_count: JOINTS.len(),
        samples,
        curves: vec![],
    }
}

fn thresholds() -> Vec<f32> {
    vec![1e-4; JOINTS.len()]
}
fn shells() -> Vec<f32> {
    vec![0.1; JOINTS.len()]
}
fn no_refs(_: &str) -> Option<ResampledClip> {
    None
}

fn fk(sk: &Skeleton, pose: &[Transform]) -> Vec<Affine3A> {
    let mut c = vec![Affine3A::IDENTITY; pose.len()];
    assert!(sk.local_to_component(pose, &mut c));
    c
}

fn rigid(m: &Affine3A) -> RigidTransform {
    let (_, r, t) = m.to_scale_rotation_translation();
    RigidTransform::new(r, t)
}

/// Rotation angle between `a` and `b`, sign-insensitive and well
/// conditioned near zero (f32 `acos` of a dot product is not).
fn angle(a: Quat, b: Quat) -> f32 {
    let d = a.conjugate() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

fn rigid_err(a: &RigidTransform, b: &RigidTransform) -> (f32, f32) {
    (
        (a.translation - b.translation).length(),
        angle(a.rotation, b.rotation),
    )
}

/// Largest component-space virtual-vertex distance between two poses.
fn pose_distance(sk: &Skeleton, a: &[Transform], b: &[Transform]) -> f32 {
    let n = sk.joint_count();
    let mut scratch = Scratch::new(n);
    let (mut pe, mut re) = (vec![0.0; n], vec![0.0; n]);
    pose_errors(sk, a, b, &vec![0.1; n], &mut scratch, &mut pe, &mut re);
    pe.into_iter().fold(0.0, f32::max)
}

fn planar_walk(sk: &Skeleton, drop_end: bool) -> Prepared {
    prepare(
        sk,
        grid_clip("walk", DUR, walk_pose),
        &ClipPrepSettings {
            loop_policy: LoopPolicy::Auto,
            drop_duplicate_end: drop_end,
            root_motion: Some(RootMotionSettings {
                joint: "root".into(),
                policy: RootMotionPolicy::Planar,
            }),
            additive: None,
            markers: vec![],
            contacts: vec![],
            sync: vec![],
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .expect("walk prepares")
}

// ---------------------------------------------------------------------------
// root motion
// ---------------------------------------------------------------------------

#[test]
fn synthetic_walk_root_motion_is_extracted_once() {
    let sk = skeleton();
    let p = planar_walk(&sk, false);
    let tr = p.trajectory.as_ref().expect("trajectory");
    let n = p.clip.num_samples as usize;
    assert_eq!(
        tr.keys.len(),
        n,
        "one key per sample, the last at the duration"
    );
    assert_eq!(tr.keys[0], RigidTransform::IDENTITY, "R(0) is the identity");
    // Once the root stays in place the gait repeats: detected as a loop.
    assert_eq!(p.clip.loop_mode, LoopMode::Loop);
    assert!(p.loop_seam_error_m.expect("seam measured") < 1e-4);

    for i in 0..n {
        let t = (i as f32 / RATE).min(DUR);
        let authored = walk_pose(t);
        let before = fk(&sk, &authored);
        let after = fk(&sk, p.clip.pose(i));
        // Visual root in place: no x/z drift and no heading.
        let root = after[0].translation;
        assert!(
            root.x.abs() < 2e-5 && root.z.abs() < 2e-5,
            "sample {i}: {root}"
        );
        // Pelvis bob kept exactly.
        let want_y = 1.0 - BOB * (2.0 * TAU * t / DUR).cos();
        assert!((after[1].translation.y - want_y).abs() < 1e-5, "sample {i}");
        // R_char(t) = offset * R(t) is the planar part of the authored root.
        let r_char = tr.reference_offset.compose(&tr.keys[i]);
        let (et, er) = rigid_err(&r_char, &extract_planar(rigid(&before[0])));
        assert!(et < 2e-5 && er < 2e-5, "sample {i}: {et} m {er} rad");
        // Removed exactly once: R_char * visual = authored, every joint.
        let kc = Affine3A::from_rotation_translation(r_char.rotation, r_char.translation);
        for j in 0..sk.joint_count() {
            let back = kc * after[j];
            assert!(
                (back.translation - before[j].translation).length() < 3e-5
                    && back.matrix3.abs_diff_eq(before[j].matrix3, 3e-5),
                "sample {i} joint {j}"
            );
        }
    }

    // The runtime trajectory: split intervals compose to one long one,
    // across wraps, forward and reverse.
    let t = tr.trajectory().expect("valid");
    for (a, b, c) in [(0.1, 0.7, 1.1), (0.3, 1.7, 5.05), (-0.4, 2.5, 9.9)] {
        let whole = t.delta(a, c, true);
        let split = t.delta(a, b, true) * t.delta(b, c, true);
        let (et, er) = rigid_err(&whole, &split);
        assert!(et < 1e-4 && er < 1e-5, "({a}, {b}, {c}): {et} m {er} rad");
        let (et, er) = rigid_err(&t.delta(c, a, true), &whole.inverse());
        assert!(et < 1e-4 && er < 1e-5);
    }
    // The cycle is the authored displacement in the character frame.
    let c = t.cycle();
    let turn = angle(c.rotation, Quat::IDENTITY);
    assert!((turn - TURN * DUR).abs() < 1e-4, "cycle turns {turn} rad");

    // Drift over 100 loops, stored in full f32: bound as the runtime's
    // own property test (5e-5 m per meter travelled).
    let drift = tr.drift_100_loops_m.expect("looping clip measures drift");
    let reach = c.pow(100).translation.length();
    println!("synthetic walk: drift over 100 loops {drift:.3e} m (C^100 reaches {reach:.3} m)");
    assert!(drift < 5e-5 * (1.0 + reach), "drift {drift} m");
}

#[test]
fn full_policy_on_a_non_root_joint() {
    let sk = skeleton();
    // The root holds a constant rotated offset; the pelvis carries the
    // motion (the motion root is a child of the skeleton root).
    let pose = |t: f32| {
        let mut p = walk_pose(t);
        p[0] = Transform::new(
            Vec3::new(0.0, 0.0, 0.5),
            Quat::from_rotation_y(0.3),
            Vec3::ONE,
        );
        p[1].translation += Vec3::new(0.0, 0.0, 1.4 * t);
        p
    };
    let p = prepare(
        &sk,
        grid_clip("pelvis_walk", DUR, pose),
        &ClipPrepSettings {
            root_motion: Some(RootMotionSettings {
                joint: "pelvis".into(),
                policy: RootMotionPolicy::Full,
            }),
            ..Default::default()
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .expect("prepares");
    let tr = p.trajectory.as_ref().expect("trajectory");
    for i in 0..p.clip.num_samples as usize {
        let after = fk(&sk, p.clip.pose(i));
        // Full: the pelvis' whole rigid component transform is removed.
        let r = rigid(&after[1]);
        let (et, er) = rigid_err(&r, &RigidTransform::IDENTITY);
        assert!(et < 2e-5 && er < 2e-5, "sample {i}: {et} m {er} rad");
        // Parent chain unchanged.
        assert_eq!(p.clip.pose(i)[0], pose(0.0)[0]);
        let before = fk(&sk, &pose((i as f32 / RATE).min(DUR)));
        let r_char = tr.reference_offset.compose(&tr.keys[i]);
        let kc = Affine3A::from_rotation_translation(r_char.rotation, r_char.translation);
        let back = kc * after[3];
        assert!((back.translation - before[3].translation).length() < 3e-5);
    }
}

#[test]
fn unknown_root_joint_is_an_error_naming_near_matches() {
    let sk = skeleton();
    let e = prepare(
        &sk,
        grid_clip("walk", DUR, walk_pose),
        &ClipPrepSettings {
            root_motion: Some(RootMotionSettings {
                joint: "Pelvis".into(),
                policy: RootMotionPolicy::Planar,
            }),
            ..Default::default()
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .unwrap_err();
    let msg = e.to_string();
    assert!(matches!(e, PrepareError::UnknownJoint { .. }), "{msg}");
    assert!(
        msg.contains("'walk'") && msg.contains("'Pelvis'") && msg.contains("pelvis"),
        "{msg}"
    );
}

/// The bundled biped's walk, imported, normalized and resampled by the
/// cooker's own stages (as the cook does), with root motion on `Root`.
#[test]
fn biped_walk_root_motion_drift_is_bounded() {
    let asset = import_file(
        &repo().join("fixtures/biped.glb"),
        &ImportOptions::default(),
    )
    .expect("biped imports");
    let norm = normalize(&asset, None).expect("normalizes");
    let sk = &norm.skeleton;
    let profile = Profile::load("standard").expect("standard profile");
    let (thresholds, shells) = profile.joint_settings(sk.names(), norm.file_shells_m.as_deref());
    let walk = norm
        .clips
        .iter()
        .find(|c| c.name == "walk")
        .expect("walk clip");
    let (resampled, _) = resample(
        walk,
        sk,
        &profile.sample_rate,
        &shells,
        SourceKind::Curves,
        LoopMode::Once,
        &GridLimits {
            max_samples: u64::MAX,
            max_bytes: u64::MAX,
            work_per_sample: 1,
            max_work: u64::MAX,
        },
    )
    .expect("within limits");
    let n = resampled.num_samples;
    let p = prepare(
        sk,
        resampled,
        &ClipPrepSettings {
            loop_policy: LoopPolicy::Auto,
            drop_duplicate_end: true,
            root_motion: Some(RootMotionSettings {
                joint: "Root".into(),
                policy: RootMotionPolicy::Planar,
            }),
            additive: None,
            markers: vec![],
            contacts: vec![],
            sync: vec![],
        },
        &thresholds,
        &shells,
        &no_refs,
    )
    .expect("walk prepares");
    // Root motion removed: the gait repeats, the duplicated end is dropped.
    assert_eq!(p.clip.loop_mode, LoopMode::LoopWrap, "{:?}", p.decisions);
    assert_eq!(p.clip.num_samples, n - 1);
    let tr = p.trajectory.as_ref().expect("trajectory");
    assert_eq!(tr.keys.len(), n as usize, "endpoint key kept");
    let t = tr.trajectory().expect("valid");
    let c = t.cycle();
    // 1.4 m/s for 1.2 s along +Z.
    assert!(
        (c.translation - Vec3::new(0.0, 0.0, 1.68)).length() < 1e-3,
        "{c:?}"
    );
    let drift = tr.drift_100_loops_m.expect("drift");
    let reach = c.pow(100).translation.length();
    println!("biped walk: drift over 100 loops {drift:.3e} m (C^100 reaches {reach:.3} m)");
    for d in p
        .decisions
        .iter()
        .filter(|d| d.kind.starts_with("root_motion"))
    {
        println!("{}: {}", d.kind, d.detail);
    }
    assert!(drift < 5e-5 * (1.0 + reach), "drift {drift} m");

    // Through the package: trajectory and wrap mode survive.
    let bytes = reference_package(sk, &[&p]);
    let pkg = Package::load(&bytes).expect("loads");
    let clip = &pkg.clips()[0];
    assert_eq!(clip.loop_mode(), LoopMode::LoopWrap);
    let rm = clip.root_motion().expect("root motion");
    assert_eq!((rm.joint, rm.policy), ("Root", RootMotionPolicy::Planar));
    assert_eq!(rm.drift_100_loops_m, Some(drift));
    let lt = clip.trajectory().expect("trajectory loads");
    assert_eq!(lt.keys(), &tr.keys[..]);
    assert_eq!(lt.delta(0.0, 120.0, true), t.delta(0.0, 120.0, true));
}

// ---------------------------------------------------------------------------
// loops
// ---------------------------------------------------------------------------

#[test]
fn dropped_end_sample_wraps_last_to_first_with_the_same_duration() {
    let sk = skeleton();
    let kept = planar_walk(&sk, false);
    let p = planar_walk(&sk, true);
    assert_eq!(p.clip.loop_mode, LoopMode::LoopWrap);
    assert_eq!(p.clip.num_samples, kept.clip.num_samples - 1);
    assert_eq!(p.clip.duration_s, DUR, "duration unchanged");
    assert!(p
        .decisions
        .iter()
        .any(|d| d.kind == "duplicate_end_dropped"));
    // The trajectory keeps its endpoint key at the exact duration.
    assert_eq!(p.trajectory.as_ref().map(|t| t.keys.len()), Some(37));

    let bytes = reference_package(&sk, &[&p]);
    let pkg = Package::load(&bytes).expect("loads");
    let clip = &pkg.clips()[0];
    assert_eq!((clip.num_samples(), clip.duration_s()), (36, DUR));
    let rest = sk.rest_pose();
    let mut out = vec![Transform::IDENTITY; sk.joint_count()];
    let last = p.clip.pose(35);
    let first = p.clip.pose(0);
    // Across the seam: t in (35/30, 36/30) blends sample 35 into sample 0.
    for (t, alpha) in [(DUR - 0.5 / RATE, 0.5f32), (DUR - 0.25 / RATE, 0.75)] {
        assert!(clip.sample(t, rest, &mut out).is_ok());
        let want: Vec<Transform> = last
            .iter()
            .zip(first)
            .map(|(a, b)| interpolate(a, b, alpha))
            .collect();
        assert!(pose_distance(&sk, &out, &want) < 1e-5, "t = {t}");
    }
    // At and just past the duration: the first samples again.
    assert!(clip.sample(DUR, rest, &mut out).is_ok());
    assert!(pose_distance(&sk, &out, first) < 1e-6);
    assert!(clip.sample(DUR + 0.5 / RATE, rest, &mut out).is_ok());
    let want: Vec<Transform> = first
        .iter()
        .zip(p.clip.pose(1))
        .map(|(a, b)| interpolate(a, b, 0.5))
        .collect();
    assert!(pose_distance(&sk, &out, &want) < 1e-5);
    // And the wrap-mode clip matches the kept-end clip everywhere within
    // the seam error.
    for t in check_times(DUR, RATE, clip.num_samples(), true) {
        assert!(clip.sample(t, rest, &mut out).is_ok());
        let mut want = vec![Transform::IDENTITY; sk.joint_count()];
        let pos = ludus_anim_format::timing::sample_position(t, DUR, RATE, 37, LoopMode::Loop);
        for (j, w) in want.iter_mut().enumerate() {
            *w = interpolate(
                &kept.clip.pose(pos.i0 as usize)[j],
                &kept.clip.pose(pos.i1 as usize)[j],
                pos.alpha,
            );
        }
        assert!(pose_distance(&sk, &out, &want) < 1e-4, "t = {t}");
    }
    // Verification's check times cross the wrap.
    let times = check_times(DUR, RATE, 36, false);
    assert!(times.iter().any(|&t| t > 35.0 / RATE && t < DUR));
    assert!(times.iter().any(|&t| t > DUR));
}

#[test]
fn wrap_loop_with_the_wrong_duration_does_not_load() {
    let sk = skeleton();
    let mut p = planar_walk(&sk, true);
    assert_eq!(p.clip.loop_mode, LoopMode::LoopWrap);
    assert!(Package::load(&reference_package(&sk, &[&p])).is_ok());
    // 36 samples at 30 Hz are 1.2 s of wrap loop, not 1.1 s.
    p.clip.duration_s = 1.1;
    if let Some(t) = p.trajectory.as_mut() {
        t.duration_s = 1.1;
        t.keys.truncate(34);
    }
    let e = Package::load(&reference_package(&sk, &[&p]))
        .unwrap_err()
        .to_string();
    assert!(e.contains("wrap loop") && e.contains("'walk'"), "{e}");
}

#[test]
fn a_clip_that_does_not_repeat_is_not_a_loop() {
    let sk = skeleton();
    // Without root-motion extraction the walk's root travels: no loop.
    let p = prepare(
        &sk,
        grid_clip("walk", DUR, walk_pose),
        &ClipPrepSettings {
            drop_duplicate_end: true,
            ..Default::default()
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .expect("prepares");
    assert_eq!(p.clip.loop_mode, LoopMode::Once);
    assert_eq!(p.loop_seam_error_m, None);
    assert_eq!(p.clip.num_samples, 37);
    // Forced looping keeps the end sample and warns about the pop.
    let p = prepare(
        &sk,
        grid_clip("walk", DUR, walk_pose),
        &ClipPrepSettings {
            loop_policy: LoopPolicy::Loop,
            drop_duplicate_end: true,
            ..Default::default()
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .expect("prepares");
    assert_eq!(p.clip.loop_mode, LoopMode::Loop);
    assert!(p.loop_seam_error_m.expect("seam") > 1.0);
    assert!(!p.warnings.is_empty());
}

// ---------------------------------------------------------------------------
// additive
// ---------------------------------------------------------------------------

/// A shorter, different clip to serve as a reference.
fn idle_pose(t: f32) -> Vec<Transform> {
    let mut p = skeleton().rest_pose().to_vec();
    p[1].translation.y = 0.98 + 0.01 * (TAU * t).sin();
    p[1].rotation = Quat::from_rotation_x(0.05 * t);
    p[2].rotation = Quat::from_rotation_z(0.2);
    p[2].scale = Vec3::new(1.0, 1.1, 1.0);
    p
}

#[test]
fn additive_round_trip_against_every_reference_kind() {
    let sk = skeleton();
    let refs = |name: &str| match name {
        "idle" => Some(grid_clip("idle", 0.6, idle_pose)),
        _ => None,
    };
    let authored = grid_clip("walk", DUR, walk_pose);
    let cases = [
        (AdditiveReference::RestPose, "rest"),
        (
            AdditiveReference::Frame {
                clip: None,
                time_s: 0.5,
            },
            "frame 'walk'@0.5s",
        ),
        (
            AdditiveReference::Frame {
                clip: Some("idle".into()),
                time_s: 0.25,
            },
            "frame 'idle'@0.25s",
        ),
        (
            AdditiveReference::Clip {
                name: "idle".into(),
            },
            "clip 'idle'",
        ),
    ];
    let mut prepared = Vec::new();
    for (reference, label) in cases {
        let p = prepare(
            &sk,
            authored.clone(),
            &ClipPrepSettings {
                loop_policy: LoopPolicy::Once,
                additive: Some(reference.clone()),
                ..Default::default()
            },
            &thresholds(),
            &shells(),
            &refs,
        )
        .unwrap_or_else(|e| panic!("{label}: {e}"));
        let a = p.additive.as_ref().expect("additive");
        assert!(a.reference.starts_with(label), "{} vs {label}", a.reference);
        assert!(a.reference.contains(" rev "), "{}", a.reference);
        // Deltas applied at w = 1 onto the reference reconstruct the clip.
        for i in 0..p.clip.num_samples as usize {
            let base = &a.base[i * 4..(i + 1) * 4];
            let back: Vec<Transform> = base
                .iter()
                .zip(p.clip.pose(i))
                .map(|(b, d)| apply_additive(b, d, 1.0))
                .collect();
            let e = pose_distance(&sk, &back, authored.pose(i));
            assert!(e < 1e-5, "{label} sample {i}: {e} m");
        }
        prepared.push(p);
    }
    // The same-time clip reference clamps past the reference's end.
    let clip_ref = &prepared[3];
    let base = &clip_ref.additive.as_ref().expect("additive").base;
    let idle_end = idle_pose(0.6);
    assert!(pose_distance(&sk, &base[30 * 4..31 * 4], &idle_end) < 1e-6);

    // Through the package: flagged additive, reference named, decoded with
    // the additive identity as defaults, reconstructs at every sample.
    let refs_list: Vec<&Prepared> = prepared.iter().collect();
    let bytes = reference_package(&sk, &refs_list);
    let pkg = Package::load(&bytes).expect("loads");
    let mut delta = vec![Transform::IDENTITY; 4];
    let mut back = vec![Transform::IDENTITY; 4];
    for (clip, p) in pkg.clips().iter().zip(&prepared) {
        assert!(clip.is_additive());
        assert_eq!(
            clip.cook_info().additive_reference.unwrap_or(""),
            p.additive
                .as_ref()
                .map(|a| a.reference.as_str())
                .unwrap_or("")
        );
        assert!(pkg
            .sample_defaults(clip)
            .iter()
            .all(|d| *d == Transform::IDENTITY));
        for i in 0..clip.num_samples() {
            let t = i as f32 / RATE;
            assert!(clip
                .sample(t, pkg.sample_defaults(clip), &mut delta)
                .is_ok());
            assert!(p.apply_onto_base(t, &delta, &mut back));
            let e = pose_distance(&sk, &back, authored.pose(i as usize));
            assert!(e < 1e-5, "{} t={t}: {e} m", clip.name());
        }
        // Verification in the seed's terms (deltas applied onto the base),
        // at samples, quarter points, random times and the end.
        let times = check_times(clip.duration_s(), RATE, clip.num_samples(), false);
        let stats = verify_additive(
            &sk,
            p,
            clip,
            pkg.sample_defaults(clip),
            &times,
            &shells(),
            &thresholds(),
        )
        .expect("additive clip verifies");
        // Every listed time, plus the peak search around the worst.
        assert_eq!(stats.times_checked, times.len() + stats.counts.refined);
        assert!(stats.max_error_m < 1e-5, "{:?}", stats.max_error_m);
        assert!(stats.violations.is_empty());
    }
}

#[test]
fn additive_reference_errors_name_clip_and_reference() {
    let sk = skeleton();
    let run = |r: AdditiveReference| {
        prepare(
            &sk,
            grid_clip("walk", DUR, walk_pose),
            &ClipPrepSettings {
                additive: Some(r),
                ..Default::default()
            },
            &thresholds(),
            &shells(),
            &no_refs,
        )
        .unwrap_err()
        .to_string()
    };
    let e = run(AdditiveReference::Clip {
        name: "nope".into(),
    });
    assert!(e.contains("'walk'") && e.contains("'nope'"), "{e}");
    let e = run(AdditiveReference::Frame {
        clip: None,
        time_s: 3.0,
    });
    assert!(e.contains("'walk'") && e.contains("3"), "{e}");
}

// ---------------------------------------------------------------------------
// markers and events
// ---------------------------------------------------------------------------

fn marker(name: &str, time_s: f32, kind: MarkerKind, reversible: bool) -> MarkerSpec {
    MarkerSpec {
        name: name.into(),
        time_s,
        kind,
        reversible,
    }
}

#[test]
fn markers_round_trip_and_cross_on_the_loaded_package() {
    let sk = skeleton();
    let p = prepare(
        &sk,
        grid_clip("walk", DUR, walk_pose),
        &ClipPrepSettings {
            loop_policy: LoopPolicy::Auto,
            drop_duplicate_end: true,
            root_motion: Some(RootMotionSettings {
                joint: "root".into(),
                policy: RootMotionPolicy::Planar,
            }),
            additive: None,
            markers: vec![
                marker("contact_r", 0.6, MarkerKind::SyncMarker, true),
                marker("whoosh", DUR, MarkerKind::Event, false),
                marker("contact_l", 0.0, MarkerKind::SyncMarker, true),
            ],
            contacts: vec![],
            sync: vec![],
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .expect("prepares");
    assert_eq!(p.clip.loop_mode, LoopMode::LoopWrap);
    // The marker at the loop's duration is the loop-start marker at 0.
    assert!(p.events.iter().all(|e| e.time_s < DUR));
    assert!(p
        .decisions
        .iter()
        .any(|d| d.kind == "marker_canonicalized" && d.detail.contains("whoosh")));
    let id = |n: &str| fnv1a64(n.as_bytes());
    assert_eq!(p.events.len(), 3);
    assert_eq!(p.events[2].id, id("contact_r"));

    let bytes = reference_package(&sk, &[&p]);
    let pkg = Package::load(&bytes).expect("loads");
    let clip = &pkg.clips()[0];
    let events: Vec<_> = clip.markers().iter().map(|m| m.event).collect();
    assert_eq!(events, p.events);
    assert!(clip.loop_mode().is_looping());
    let kinds: Vec<(String, MarkerKind)> = clip
        .markers()
        .iter()
        .map(|m| (m.name.to_string(), m.kind))
        .collect();
    assert!(kinds.contains(&("contact_r".into(), MarkerKind::SyncMarker)));
    assert!(kinds.contains(&("whoosh".into(), MarkerKind::Event)));

    // Forward across the wrap: contact_r in cycle 0, then both loop-start
    // markers with the new cycle's identity.
    let mut latch = PlaybackLatch::default();
    let mut out = [Crossing::default(); 8];
    let n = clip
        .crossed_events(0.5, 1.3, &mut latch, &mut out)
        .expect("fits");
    let got: Vec<(&str, i64)> = out[..n]
        .iter()
        .map(|c| (clip.markers()[c.index as usize].name, c.cycle))
        .collect();
    let mut start = vec![("contact_l", 1), ("whoosh", 1)];
    start.sort_by_key(|(n, _)| id(n));
    let mut want = vec![("contact_r", 0)];
    want.extend(start);
    assert_eq!(got, want);
    // Reverse: only reversible markers.
    let n = clip
        .crossed_events(1.3, 0.5, &mut latch, &mut out)
        .expect("fits");
    let got: Vec<(&str, Direction)> = out[..n]
        .iter()
        .map(|c| (clip.markers()[c.index as usize].name, c.direction))
        .collect();
    assert_eq!(
        got,
        vec![
            ("contact_l", Direction::Reverse),
            ("contact_r", Direction::Reverse)
        ]
    );
}

#[test]
fn marker_validation_names_clip_marker_and_time() {
    let sk = skeleton();
    let run = |clip: ResampledClip, markers: Vec<MarkerSpec>| {
        prepare(
            &sk,
            clip,
            &ClipPrepSettings {
                loop_policy: LoopPolicy::Once,
                markers,
                ..Default::default()
            },
            &thresholds(),
            &shells(),
            &no_refs,
        )
    };
    // An eventful zero-duration clip is rejected.
    let pose = grid_clip("pose", 0.0, walk_pose);
    assert_eq!(pose.num_samples, 1);
    let e = run(
        pose.clone(),
        vec![marker("step", 0.0, MarkerKind::Event, false)],
    )
    .unwrap_err();
    assert!(matches!(e, PrepareError::EventfulZeroDuration { .. }));
    let msg = e.to_string();
    assert!(msg.contains("'pose'") && msg.contains("'step'"), "{msg}");
    // ... but the same static pose without events is fine.
    assert!(run(pose, vec![]).is_ok());
    // Out of range and non-finite times.
    for t in [-0.1, DUR + 0.01, f32::NAN] {
        let e = run(
            grid_clip("walk", DUR, walk_pose),
            vec![marker("late", t, MarkerKind::Event, false)],
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("'walk'") && e.contains("'late'"), "{e}");
    }
    // Once clips keep an endpoint marker at the duration.
    let p = run(
        grid_clip("walk", DUR, walk_pose),
        vec![marker("end", DUR, MarkerKind::Event, false)],
    )
    .expect("prepares");
    assert_eq!(p.events[0].time_s, DUR);
    // One name cannot be both kinds.
    let e = run(
        grid_clip("walk", DUR, walk_pose),
        vec![
            marker("x", 0.1, MarkerKind::Event, false),
            marker("x", 0.2, MarkerKind::SyncMarker, false),
        ],
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("'x'"), "{e}");
}

// ---------------------------------------------------------------------------
// package v2 robustness
// ---------------------------------------------------------------------------

fn patch(bytes: &mut [u8]) {
    if bytes.len() >= HEADER_SIZE {
        let len = bytes.len() as u64;
        bytes[16..24].copy_from_slice(&len.to_le_bytes());
        let sum = fnv1a64(&bytes[HEADER_SIZE..]);
        bytes[32..40].copy_from_slice(&sum.to_le_bytes());
    }
}

/// Load and, if it loads, use every v2 accessor.
fn exercise(bytes: &[u8]) -> bool {
    let Ok(p) = Package::load(bytes) else {
        return false;
    };
    let mut out = vec![Transform::IDENTITY; p.skeleton().joint_count()];
    let mut crossings = [Crossing::default(); 4];
    for c in p.clips() {
        let defaults = p.sample_defaults(c);
        for t in [
            0.0,
            0.013,
            c.duration_s() * 0.99,
            c.duration_s(),
            1e9,
            f32::NAN,
        ] {
            assert!(c.sample(t, defaults, &mut out).is_ok());
        }
        if let Some(tr) = c.trajectory() {
            tr.delta(-3.0, 250.0, true);
            tr.delta(1.0, 0.2, false);
        }
        let mut latch = PlaybackLatch::default();
        let _ = c.crossed_events(-1.0, 7.5, &mut latch, &mut crossings);
        let _ = c.root_motion_delta(-1.0, 7.5);
        let _ = (c.markers().len(), c.is_additive(), c.cook_info());
    }
    true
}

#[test]
fn package_v2_survives_every_truncation_and_byte_corruption() {
    let sk = skeleton();
    let walk = |name: &str, dur: f32| {
        let mut c = grid_clip(name, dur, walk_pose);
        c.num_samples = 10.min(c.num_samples);
        c.samples.truncate(c.num_samples as usize * 4);
        c.duration_s = (c.num_samples - 1) as f32 / RATE;
        c
    };
    let moving = prepare(
        &sk,
        walk("moving", DUR),
        &ClipPrepSettings {
            loop_policy: LoopPolicy::Loop,
            drop_duplicate_end: false,
            root_motion: Some(RootMotionSettings {
                joint: "root".into(),
                policy: RootMotionPolicy::Planar,
            }),
            additive: None,
            markers: vec![
                marker("a", 0.0, MarkerKind::SyncMarker, true),
                marker("b", 0.1, MarkerKind::Event, false),
            ],
            contacts: vec![],
            sync: vec![],
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .expect("prepares");
    let stat = |t: f32| {
        let mut p = walk_pose(0.0);
        p[1].rotation = Quat::from_rotation_x(0.01 * (TAU * t / 0.3).sin());
        p
    };
    let wrap = prepare(
        &sk,
        grid_clip("wrap", 0.3, stat),
        &ClipPrepSettings {
            drop_duplicate_end: true,
            additive: Some(AdditiveReference::RestPose),
            markers: vec![marker("c", 0.3, MarkerKind::Event, true)],
            ..Default::default()
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .expect("prepares");
    assert_eq!(wrap.clip.loop_mode, LoopMode::LoopWrap);
    let original = reference_package(&sk, &[&moving, &wrap]);
    assert!(exercise(&original), "the original loads");
    let mut b = original.clone();
    b[original.len() / 2] ^= 0x40;
    assert!(Package::load(&b).is_err(), "checksum catches corruption");
    for cut in 0..original.len() {
        let mut b = original[..cut].to_vec();
        assert!(Package::load(&b).is_err(), "truncation at {cut}");
        patch(&mut b);
        exercise(&b);
    }
    let mut loaded = 0usize;
    for i in 0..original.len() {
        for v in [original[i] ^ 0x01, original[i] ^ 0x80, 0xff, 0x00] {
            if v == original[i] {
                continue;
            }
            let mut b = original.clone();
            b[i] = v;
            patch(&mut b);
            loaded += usize::from(exercise(&b));
        }
    }
    eprintln!(
        "{} bytes: {loaded} corrupted variants still formed valid views",
        original.len()
    );
}

#[test]
fn inspect_shows_prepared_semantics() {
    let sk = skeleton();
    let p = prepare(
        &sk,
        grid_clip("walk", DUR, walk_pose),
        &ClipPrepSettings {
            drop_duplicate_end: true,
            root_motion: Some(RootMotionSettings {
                joint: "root".into(),
                policy: RootMotionPolicy::Planar,
            }),
            markers: vec![marker("contact_l", 0.0, MarkerKind::SyncMarker, true)],
            ..Default::default()
        },
        &thresholds(),
        &shells(),
        &no_refs,
    )
    .expect("prepares");
    let bytes = reference_package(&sk, &[&p]);
    let pkg = Package::load(&bytes).expect("loads");
    let text = ludus_anim_cooker::inspect::describe(&pkg);
    for want in [
        "loop-wrap",
        "root motion: joint root, planar, 37 keys",
        "contact_l",
        "sync-marker",
        "loop seam error",
    ] {
        assert!(text.contains(want), "missing {want:?} in\n{text}");
    }
    let json = ludus_anim_cooker::inspect::describe_json(&pkg);
    let c = &json["clips"][0];
    assert_eq!(c["loop_mode"], "loop-wrap");
    assert_eq!(c["root_motion"]["joint"], "root");
    assert_eq!(c["root_motion"]["keys"], 37);
    assert_eq!(c["events"][0]["name"], "contact_l");
    assert_eq!(c["additive"], false);
}
