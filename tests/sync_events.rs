//! Sync groups, event channels and contact windows (#44 items 2-3), one
//! test per rule, each failing case with its message: group markers
//! present as sync markers and in the group's cyclic order, the rate range
//! over the members and its warning; control events refused on a
//! zero-duration clip and when they would fire twice (the loop-end alias),
//! snapped to the loop start near the end; contact windows as markers; all
//! read back from the package.

mod common;
use common::reference_package;
use ludus_anim_cooker::clip_semantics::{ChannelKind, ContactWindow, EventChannel, SyncMembership};
use ludus_anim_cooker::settings::classify_events;
use ludus_anim_cooker::stages::prepare::{
    prepare, ClipPrepSettings, LoopPolicy, MarkerKind, MarkerSpec, PrepareError, Prepared,
};
use ludus_anim_cooker::sync_groups::{rate_warnings, summarize};
use ludus_anim_format::math::{Quat, Transform, Vec3};
use ludus_anim_format::timing::LoopMode;
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};
use ludus_anim_runtime::{Package, Skeleton};

const RATE: f32 = 30.0;

fn skeleton() -> Skeleton {
    let names = ["root", "leg"];
    Skeleton::new(
        vec![NO_PARENT, 0],
        names.iter().map(|n| JointId::from_path(n)).collect(),
        vec![
            Transform::IDENTITY,
            Transform::new(Vec3::new(0.0, 1.0, 0.0), Quat::IDENTITY, Vec3::ONE),
        ],
        names.iter().map(|s| s.to_string()).collect(),
    )
    .expect("valid skeleton")
}

/// A static clip of `dur` seconds on the 30 Hz grid.
fn clip(name: &str, dur: f32) -> ResampledClip {
    let sk = skeleton();
    let n = ResampledClip::samples_for(dur, RATE);
    ResampledClip {
        name: name.into(),
        sample_rate_hz: RATE,
        num_samples: n,
        duration_s: dur,
        loop_mode: LoopMode::Once,
        joint_count: 2,
        samples: sk.rest_pose().repeat(n as usize),
        curves: vec![],
    }
}

fn marker(name: &str, time_s: f32, kind: MarkerKind) -> MarkerSpec {
    MarkerSpec {
        name: name.into(),
        time_s,
        kind,
        reversible: false,
    }
}

fn sync(l: f32, r: f32) -> Vec<MarkerSpec> {
    vec![
        marker("left_foot_down", l, MarkerKind::SyncMarker),
        marker("right_foot_down", r, MarkerKind::SyncMarker),
    ]
}

fn locomotion() -> Vec<SyncMembership> {
    vec![SyncMembership {
        group: "locomotion".into(),
        markers: vec!["left_foot_down".into(), "right_foot_down".into()],
        max_rate: 2.0,
    }]
}

fn run(name: &str, dur: f32, s: ClipPrepSettings) -> Result<Prepared, PrepareError> {
    prepare(
        &skeleton(),
        clip(name, dur),
        &s,
        &[1e-4; 2],
        &[0.1; 2],
        &|_| None,
    )
}

fn looping(markers: Vec<MarkerSpec>, sync: Vec<SyncMembership>) -> ClipPrepSettings {
    ClipPrepSettings {
        loop_policy: LoopPolicy::Loop,
        markers,
        sync,
        ..Default::default()
    }
}

#[test]
fn a_group_reaches_the_package_with_its_rate_range() {
    let walk = run("walk", 1.2, looping(sync(0.0, 0.6), locomotion())).expect("walk");
    let run_ = run("run", 0.8, looping(sync(0.1, 0.5), locomotion())).expect("run");
    let idle = run("idle", 1.0, looping(vec![], vec![])).expect("idle");
    assert_eq!(walk.sync[0].intervals_s, [Some(0.6), Some(0.6)]);
    let bytes = reference_package(&skeleton(), &[&walk, &idle, &run_]);
    let p = Package::load(&bytes).expect("loads");
    let g = &p.sync_groups()[0];
    assert_eq!(g.name, "locomotion");
    assert_eq!(g.markers, ["left_foot_down", "right_foot_down"]);
    assert_eq!(g.clips, [0, 2]);
    assert!((g.rate_range.1 - 1.5).abs() < 1e-5, "{:?}", g.rate_range);
    assert!((g.rate_range.0 - 1.0 / 1.5).abs() < 1e-5);
    // Within the bound: no warning.
    let groups = summarize(&[&walk, &idle, &run_]);
    assert!(rate_warnings(&groups, &["walk", "idle", "run"], "f.glb").is_empty());
}

#[test]
fn a_rate_range_past_max_rate_warns_naming_both_clips() {
    let walk = run("walk", 1.2, looping(sync(0.0, 0.6), locomotion())).expect("walk");
    let sprint = run("sprint", 0.5, looping(sync(0.0, 0.25), locomotion())).expect("sprint");
    let groups = summarize(&[&walk, &sprint]);
    let w = rate_warnings(&groups, &["walk", "sprint"], "loco.glb");
    assert_eq!(w.len(), 1);
    let msg = &w[0].message;
    assert!(
        msg.contains("'walk'") && msg.contains("'sprint'") && msg.contains("2.400x"),
        "{msg}"
    );
    assert_eq!(w[0].file.as_deref(), Some("loco.glb"));
}

#[test]
fn a_missing_group_marker_is_named_with_a_suggestion() {
    let markers = vec![
        marker("left_foot_down", 0.0, MarkerKind::SyncMarker),
        marker("rigth_foot_down", 0.6, MarkerKind::SyncMarker),
    ];
    let e = run("walk", 1.2, looping(markers, locomotion()))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "clip 'walk': sync group 'locomotion': the clip has no marker 'right_foot_down'; did you mean 'rigth_foot_down'?"
    );
}

#[test]
fn a_group_marker_must_be_a_sync_marker() {
    let markers = vec![
        marker("left_foot_down", 0.0, MarkerKind::SyncMarker),
        marker("right_foot_down", 0.6, MarkerKind::Event),
    ];
    let e = run("walk", 1.2, looping(markers, locomotion()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("'right_foot_down' has kind 'event'"), "{e}");
}

#[test]
fn markers_out_of_the_group_order_are_refused() {
    // left, right, right: the second right follows a right.
    let mut markers = sync(0.0, 0.4);
    markers.push(marker("right_foot_down", 0.8, MarkerKind::SyncMarker));
    let e = run("walk", 1.2, looping(markers, locomotion()))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "clip 'walk': sync group 'locomotion': marker 'right_foot_down' at t=0.8 s follows 'right_foot_down' at t=0.4 s; the group's cyclic order is left_foot_down → right_foot_down → left_foot_down"
    );
    // Two full cycles are in order, and each interval is averaged.
    let mut two = sync(0.0, 0.3);
    two.extend(sync(0.6, 0.9));
    let p = run("walk2", 1.2, looping(two, locomotion())).expect("two cycles");
    let i = &p.sync[0].intervals_s;
    assert!((i[0].unwrap() - 0.3).abs() < 1e-5 && (i[1].unwrap() - 0.3).abs() < 1e-5);
}

#[test]
fn a_one_shot_member_does_not_wrap() {
    let s = ClipPrepSettings {
        loop_policy: LoopPolicy::Once,
        markers: sync(0.2, 0.5),
        sync: locomotion(),
        ..Default::default()
    };
    let p = run("start", 1.0, s).expect("prepares");
    assert_eq!(p.sync[0].intervals_s[1], None);
}

#[test]
fn event_channels_classify_by_name_then_longest_prefix() {
    let channels = vec![
        EventChannel {
            name: None,
            prefix: Some("hit_".into()),
            kind: ChannelKind::Control,
        },
        EventChannel {
            name: Some("hit_spark".into()),
            prefix: None,
            kind: ChannelKind::Visual,
        },
    ];
    let mut m = vec![
        marker("hit_damage", 0.2, MarkerKind::Event),
        marker("hit_spark", 0.2, MarkerKind::Event),
        marker("left_foot_down", 0.0, MarkerKind::SyncMarker),
    ];
    classify_events(&channels, &mut m);
    let kinds: Vec<MarkerKind> = m.iter().map(|m| m.kind).collect();
    assert_eq!(
        kinds,
        [
            MarkerKind::Control,
            MarkerKind::Event,
            MarkerKind::SyncMarker
        ]
    );
}

#[test]
fn a_control_event_on_a_zero_duration_clip_is_refused() {
    let s = ClipPrepSettings {
        loop_policy: LoopPolicy::Once,
        markers: vec![marker("hit", 0.0, MarkerKind::Control)],
        ..Default::default()
    };
    let e = run("pose", 0.0, s).unwrap_err().to_string();
    assert_eq!(
        e,
        "clip 'pose' has zero duration and cannot carry events (marker 'hit' at t=0 s)"
    );
}

#[test]
fn a_control_event_at_both_loop_aliases_is_refused() {
    let m = vec![
        marker("hit", 0.0, MarkerKind::Control),
        marker("hit", 1.2, MarkerKind::Control),
    ];
    let e = run("attack", 1.2, looping(m, vec![]))
        .unwrap_err()
        .to_string();
    assert_eq!(
        e,
        "clip 'attack': marker 'hit' at t=0 s: control event would fire twice (authored at 0 s and at the loop end 1.2 s, its alias); a control event fires once"
    );
    // A visual notify's aliases merge instead.
    let m = vec![
        marker("whoosh", 0.0, MarkerKind::Event),
        marker("whoosh", 1.2, MarkerKind::Event),
    ];
    let p = run("attack", 1.2, looping(m, vec![])).expect("merges");
    assert_eq!(p.events.len(), 1);
}

#[test]
fn a_control_event_just_before_the_loop_end_is_the_loop_start_event() {
    let m = vec![marker("hit", 1.1999, MarkerKind::Control)];
    let p = run("attack", 1.2, looping(m, vec![])).expect("prepares");
    assert_eq!(p.events[0].time_s, 0.0);
    assert!(p
        .decisions
        .iter()
        .any(|d| d.kind == "control_event_snapped"));
    // On a one-shot clip it stays where it was authored.
    let s = ClipPrepSettings {
        loop_policy: LoopPolicy::Once,
        markers: vec![marker("hit", 1.1999, MarkerKind::Control)],
        ..Default::default()
    };
    assert_eq!(
        run("attack", 1.2, s).expect("once").events[0].time_s,
        1.1999
    );
}

#[test]
fn contact_windows_become_markers_in_the_package() {
    let s = ClipPrepSettings {
        loop_policy: LoopPolicy::Loop,
        markers: vec![marker("hit", 0.5, MarkerKind::Control)],
        contacts: vec![ContactWindow {
            name: "foot_l".into(),
            start_s: 1.0,
            end_s: 0.3,
        }],
        ..Default::default()
    };
    let p = run("walk", 1.2, s).expect("a window across the seam of a loop");
    let bytes = reference_package(&skeleton(), &[&p]);
    let pkg = Package::load(&bytes).expect("loads");
    let got: Vec<(f32, &str, MarkerKind)> = pkg.clips()[0]
        .markers()
        .iter()
        .map(|m| (m.event.time_s, m.name, m.kind))
        .collect();
    assert_eq!(
        got,
        [
            (0.3, "foot_l.end", MarkerKind::ContactEnd),
            (0.5, "hit", MarkerKind::Control),
            (1.0, "foot_l.start", MarkerKind::ContactStart),
        ]
    );
    // Reversed on a one-shot clip, or empty: refused.
    for (start_s, end_s) in [(1.0, 0.3), (0.4, 0.4)] {
        let s = ClipPrepSettings {
            loop_policy: LoopPolicy::Once,
            contacts: vec![ContactWindow {
                name: "foot_l".into(),
                start_s,
                end_s,
            }],
            ..Default::default()
        };
        let e = run("walk", 1.2, s).unwrap_err().to_string();
        assert!(
            e.starts_with("clip 'walk': marker 'contact foot_l'")
                && e.contains("empty or reversed"),
            "{e}"
        );
    }
}

/// Every byte of a SYNC section with a group, changed and resealed, loads
/// or gives a typed error (never a panic); targeted corruptions are
/// refused by name.
#[test]
fn a_corrupt_sync_section_is_an_error_not_a_panic() {
    use ludus_anim_format::package::{reseal_checksum, SECTION_SYNC};
    let walk = run("walk", 1.2, looping(sync(0.0, 0.6), locomotion())).expect("walk");
    let idle = run("idle", 1.0, looping(vec![], vec![])).expect("idle");
    let bytes = reference_package(&skeleton(), &[&walk, &idle]);
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let count = u32_at(&bytes, 24) as usize;
    let entry = (0..count)
        .map(|i| 64 + i * 24)
        .find(|&e| u32_at(&bytes, e) == SECTION_SYNC)
        .expect("a SYNC section");
    let off = u32_at(&bytes, entry + 8) as usize;
    let size = u32_at(&bytes, entry + 16) as usize;
    for i in off..off + size {
        for v in [0u8, 1, 0x7f, 0xff] {
            let mut b = bytes.clone();
            b[i] = v;
            reseal_checksum(&mut b);
            let _ = Package::load(&b);
        }
    }
    // The member list names clip 1 (idle), which has no group markers.
    let clips_at = off + 16 + 32 + 2 * 4;
    let mut b = bytes.clone();
    b[clips_at..clips_at + 4].copy_from_slice(&1u32.to_le_bytes());
    reseal_checksum(&mut b);
    let e = Package::load(&b).unwrap_err().to_string();
    assert!(
        e.contains("clip 'idle' has no sync marker 'left_foot_down'"),
        "{e}"
    );
    // A member past the clip table.
    b[clips_at..clips_at + 4].copy_from_slice(&9u32.to_le_bytes());
    reseal_checksum(&mut b);
    let e = Package::load(&b).unwrap_err().to_string();
    assert!(e.contains("names clip 9, out of range"), "{e}");
}
