//! The procedural matrix: rig variants from the fixture generator, each
//! retarget checked against ground truth (the target variant's own clip)
//! or against metrics, never just "it ran".

mod common;
use common::*;
use ludus_anim_fixture_gen::rigs::{
    build, BoneAxes, Motion, Naming, RestPose, RigSpec, RootPlacement, Units,
};
use ludus_anim_normalize::Normalized;
use ludus_anim_retarget::{suggest, RetargetError, RetargetPoses, Retargeted};

fn rig(spec: RigSpec) -> Normalized {
    norm(&build(&spec))
}

fn go(src: &Normalized, tgt: &Normalized) -> Retargeted {
    run(src, tgt, &suggest(&src.skeleton, "a", &tgt.skeleton, "b"))
}

/// Worst component-space position error (in meters) of every target joint
/// against the target rig's own clip, joints matched by name, skipping
/// `skip` (joints whose ground truth differs by construction).
fn position_error(tgt: &Normalized, out: &Retargeted, clip: &str, skip: &[&str]) -> (f32, String) {
    let c = out.clips.iter().position(|c| c.name == clip).expect("clip");
    let truth = &tgt.clips[c];
    let (mut worst, mut at) = (0.0f32, String::new());
    for &t in &truth.key_times {
        let a = fk(&tgt.skeleton, &sample(&tgt.skeleton, truth, t));
        let b = fk(&tgt.skeleton, &sample(&tgt.skeleton, &out.clips[c], t));
        for j in 0..a.len() {
            if skip.contains(&tgt.skeleton.name(j)) {
                continue;
            }
            let e = (a[j].translation - b[j].translation).length();
            if e > worst {
                worst = e;
                at = format!("{} t={t}", tgt.skeleton.name(j));
            }
        }
    }
    (worst, at)
}

fn report(name: &str, out: &Retargeted) {
    for m in &out.metrics {
        let c: Vec<String> = m
            .contacts
            .iter()
            .map(|c| format!("{} frames {} added-skate {:.3} preserve {:.3} skate-dist src {:.4}h tgt {:.4}h", c.joint, c.source_contact_frames, c.added_skate_fraction, c.preservation, c.source_skate_distance_h, c.target_skate_distance_h))
            .collect();
        println!(
            "{name} {}: ee {:.4} ({}), bone {:.2e} m, jump {:.2} deg (src {:.2}), least headroom {:?}, twist {:?}; {}",
            m.clip,
            m.end_effector_error.value,
            m.end_effector_error.joint,
            m.bone_length_deviation_m.value,
            m.max_angular_jump.target_deg,
            m.max_angular_jump.source_deg,
            m.angular_jump_least_headroom,
            m.twists
                .iter()
                .map(|t| format!("{} {:.1}", t.joint, t.range_deg))
                .collect::<Vec<_>>(),
            c.join("; ")
        );
    }
}

fn base() -> RigSpec {
    RigSpec::default()
}

#[test]
fn bone_axes_units_and_names_reproduce_the_target_clip() {
    let src = rig(base());
    for (axes, units, naming) in [
        (BoneAxes::Blender, Units::Centimeters, Naming::Unreal),
        (BoneAxes::Maya, Units::Meters, Naming::Rigify),
        (BoneAxes::Blender, Units::Meters, Naming::Mixamo),
    ] {
        let tgt = rig(RigSpec {
            axes,
            units,
            naming,
            ..base()
        });
        let out = go(&src, &tgt);
        report(&format!("{axes:?}/{units:?}/{naming:?}"), &out);
        assert!(!out.diagnostics.has_errors(), "{:?}", out.diagnostics);
        for clip in ["walk", "twist"] {
            let (e, at) = position_error(&tgt, &out, clip, &[]);
            println!("  {clip}: worst joint position error {e:.2e} m at {at}");
            assert!(
                e < 1e-4,
                "{axes:?}/{units:?}/{naming:?} {clip}: {e} at {at}"
            );
        }
        let m = &out.metrics[0];
        assert!(m.contacts.iter().all(|c| c.source_contact_frames > 10
            && c.preservation >= 0.95
            && c.added_skate_fraction == 0.0));
        assert!(m.end_effector_error.value < 1e-4 && m.bone_length_deviation_m.value < 1e-5);
    }
}

#[test]
fn a_pose_source_needs_a_declared_pose() {
    let src = rig(RigSpec {
        rest: RestPose::A,
        ..base()
    });
    let tgt = rig(base());
    let mut profile = suggest(&src.skeleton, "a", &tgt.skeleton, "b");
    assert_eq!(profile.source.rest_kind.as_deref(), Some("A-pose"));
    assert_eq!(profile.target.rest_kind.as_deref(), Some("T-pose"));
    assert_eq!(
        profile.source.pose.overrides.len(),
        2,
        "suggest turns both upper arms"
    );
    let out = run(&src, &tgt, &profile);
    let (e, at) = position_error(&tgt, &out, "walk", &[]);
    println!("A -> T with suggested overrides: worst position error {e:.2e} m at {at}");
    assert!(e < 1e-3, "{e} at {at}");
    profile.source.pose.overrides.clear();
    let poses = RetargetPoses::resolve(
        &profile,
        &src.skeleton,
        &src.clips,
        &tgt.skeleton,
        &tgt.clips,
    )
    .unwrap();
    let err =
        ludus_anim_retarget::retarget(&src.skeleton, &src.clips, &tgt.skeleton, &profile, &poses)
            .unwrap_err();
    println!("without overrides: {err}");
    assert!(matches!(err, RetargetError::PoseMismatch { .. }), "{err}");
    assert!(
        err.to_string().contains("arm_l")
            && err.to_string().contains("A-pose")
            && err.to_string().contains("T-pose")
    );
}

#[test]
fn long_to_short_legs_keep_feet_planted() {
    for (ls, lt) in [(1.2, 0.8), (0.8, 1.25)] {
        let src = rig(RigSpec {
            leg_scale: ls,
            ..base()
        });
        let tgt = rig(RigSpec {
            leg_scale: lt,
            arm_scale: 1.1,
            naming: Naming::Unreal,
            ..base()
        });
        let out = go(&src, &tgt);
        report(&format!("legs {ls} -> {lt}"), &out);
        assert!(!out.diagnostics.has_errors(), "{:?}", out.diagnostics);
        let m = &out.metrics[0];
        for c in &m.contacts {
            assert!(c.source_contact_frames > 10);
            assert!(c.preservation >= 0.95, "{c:?}");
            assert!(c.added_skate_fraction <= 0.05, "{c:?}");
            assert!(
                c.target_skate_distance_h <= c.source_skate_distance_h + 0.01,
                "{c:?}"
            );
        }
        assert!(
            m.bone_length_deviation_m.value < 1e-5,
            "{:?}",
            m.bone_length_deviation_m
        );
        assert!(
            m.end_effector_error.value < 0.15,
            "{:?}",
            m.end_effector_error
        );
        let ratio = out.scales.vertical;
        let hip = |l: f64| 0.84 * l + 0.05; // pelvis above the ankles
        assert!(
            (ratio as f64 - hip(lt) / hip(ls)).abs() < 1e-3,
            "hip-height ratio {ratio}"
        );
        // Root motion scaled by the motion-root scale.
        let root_z = |n: &Normalized, c: &ludus_anim_model::SourceClip| {
            let j = n
                .skeleton
                .names()
                .iter()
                .position(|x| x.eq_ignore_ascii_case("root"))
                .unwrap();
            sample(&n.skeleton, c, c.duration_s)[j].translation.z
                - sample(&n.skeleton, c, 0.0)[j].translation.z
        };
        let (zs, zt) = (root_z(&src, &src.clips[0]), root_z(&tgt, &out.clips[0]));
        println!(
            "  root travel {zs:.4} -> {zt:.4} (scale {:.4})",
            out.scales.motion_root
        );
        assert!((zt - zs * out.scales.motion_root).abs() < 1e-4);
    }
}

#[test]
fn three_and_five_joint_spines() {
    for (a, b) in [(3, 5), (5, 3)] {
        let src = rig(RigSpec {
            spine_joints: a,
            ..base()
        });
        let tgt = rig(RigSpec {
            spine_joints: b,
            ..base()
        });
        let out = go(&src, &tgt);
        report(&format!("spine {a} -> {b}"), &out);
        // Everything above the spine lands where the target's own clip has
        // it (the chest's component rotation is transferred exactly); the
        // spine's inner joints are distributed differently by design.
        let inner: Vec<String> = (1..b).map(|k| format!("Spine{k}")).collect();
        let skip: Vec<&str> = inner.iter().map(String::as_str).collect();
        let (e, at) = position_error(&tgt, &out, "walk", &skip);
        println!("  worst position error {e:.2e} m at {at}");
        assert!(e < 5e-3, "{e} at {at}");
        let j = &out.metrics[0].max_angular_jump;
        assert!(j.target_deg < j.source_deg + 1.0, "{j:?}");
    }
}

#[test]
fn twist_is_distributed_and_unwrapped() {
    let src = rig(base());
    let tgt = rig(RigSpec {
        twist_joints: true,
        naming: Naming::Unreal,
        ..base()
    });
    let profile = suggest(&src.skeleton, "a", &tgt.skeleton, "b");
    assert_eq!(profile.twists.len(), 2, "{:?}", profile.twists);
    assert_eq!(profile.twists[0].targets[0].weight, 0.5);
    let out = run(&src, &tgt, &profile);
    report("twist", &out);
    let m = out.metrics.iter().find(|m| m.clip == "twist").unwrap();
    let left = m
        .twists
        .iter()
        .find(|t| t.joint == "lowerarm_twist_01_l")
        .unwrap();
    assert!((left.range_deg - 100.0).abs() < 1.0, "{left:?}");
    let j = &m.angular_jump_least_headroom;
    assert!(j.target_deg < j.source_deg + 1.0, "no flip: {j:?}");
    let (e, at) = position_error(&tgt, &out, "twist", &[]);
    assert!(e < 1e-4, "{e} at {at}");
    let c = out.clips.iter().position(|c| c.name == "twist").unwrap();
    let j = tgt.skeleton.find_by_name("lowerarm_twist_01_l").unwrap();
    let (mut worst, mut prev) = (0.0f32, None);
    for &t in &tgt.clips[c].key_times {
        let a = sample(&tgt.skeleton, &tgt.clips[c], t)[j].rotation;
        let b = sample(&tgt.skeleton, &out.clips[c], t)[j].rotation;
        worst = worst.max(angle(a, b));
        if let Some(p) = prev {
            assert!(angle(p, b) < 0.1, "twist joint jumps at t={t}");
        }
        prev = Some(b);
    }
    println!("twist joint rotation vs ground truth: {worst:.2e} rad");
    assert!(worst < 1e-3);
}

#[test]
fn root_at_feet_or_pelvis_and_in_place_clips() {
    let feet = base();
    let pelvis = RigSpec {
        root: RootPlacement::AtPelvis,
        ..base()
    };
    for (s, t) in [(feet, pelvis), (pelvis, feet)] {
        let (src, tgt) = (rig(s), rig(t));
        let out = go(&src, &tgt);
        report(&format!("root {:?} -> {:?}", s.root, t.root), &out);
        // A moving root on one side only: compare below the root.
        let (e, at) = position_error(&tgt, &out, "walk", &["Root"]);
        let rel = if t.root == RootPlacement::AtFeet {
            "(root stays, hips travel)"
        } else {
            ""
        };
        println!("  worst position error {e:.2e} m at {at} {rel}");
        assert!(e < 1e-4, "{e} at {at}");
    }
    let src = rig(RigSpec {
        motion: Motion::InPlace,
        ..base()
    });
    let tgt = rig(RigSpec {
        motion: Motion::InPlace,
        axes: BoneAxes::Maya,
        ..base()
    });
    let out = go(&src, &tgt);
    report("in place", &out);
    // Stance feet slide back at walking speed: only the instant a swing
    // foot turns around near the floor can look like a contact.
    assert!(
        out.metrics[0]
            .contacts
            .iter()
            .all(|c| c.source_contact_frames <= 6),
        "in-place feet slide"
    );
    let (e, at) = position_error(&tgt, &out, "walk", &[]);
    println!("  in place: worst position error {e:.2e} m at {at}");
    assert!(e < 2e-2, "{e} at {at}");
}

#[test]
fn looping_walk_seam_still_closes() {
    let src = rig(base());
    let tgt = rig(RigSpec {
        leg_scale: 0.85,
        spine_joints: 5,
        axes: BoneAxes::Blender,
        ..base()
    });
    let out = go(&src, &tgt);
    let m = &out.metrics[0];
    assert!(m.looping, "the walk is detected as a loop");
    let clip = &out.clips[0];
    let (a, b) = (
        sample(&tgt.skeleton, clip, 0.0),
        sample(&tgt.skeleton, clip, clip.duration_s),
    );
    let (mut rot, mut tr) = (0.0f32, 0.0f32);
    for j in 1..a.len() {
        rot = rot.max(angle(a[j].rotation, b[j].rotation));
        if tgt.skeleton.name(j) != "Root" {
            tr = tr.max((a[j].translation - b[j].translation).length());
        }
    }
    println!("seam: rotation {rot:.2e} rad, translation {tr:.2e} m");
    assert!(rot < 1e-4 && tr < 1e-5, "seam opened: {rot} rad, {tr} m");
}

#[test]
fn round_trip_a_to_b_to_a() {
    let a = rig(base());
    let b = rig(RigSpec {
        leg_scale: 1.2,
        spine_joints: 5,
        axes: BoneAxes::Blender,
        units: Units::Centimeters,
        naming: Naming::Unreal,
        twist_joints: true,
        ..base()
    });
    let ab = go(&a, &b);
    let b2 = Normalized {
        clips: ab.clips.clone(),
        ..b.clone()
    };
    let aba = go(&b2, &a);
    let mut worst = (0.0f32, 0.0f32);
    for (orig, back) in a.clips.iter().zip(&aba.clips) {
        let (r, t, at) = clip_diff(&a.skeleton, orig, back);
        println!(
            "round trip {}: rotation {r:.2e} rad, translation {t:.2e} m (worst {at})",
            orig.name
        );
        worst = (worst.0.max(r), worst.1.max(t));
    }
    assert!(worst.0 < 1e-2 && worst.1 < 1e-3, "{worst:?}");
}
