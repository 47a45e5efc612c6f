//! Sync groups, event channels and contact windows end to end through the
//! CLI on real files: the ProAnimationBank locomotion set (walk, jog, run;
//! shared fixtures) in one group, with a control channel and a contact
//! window; `inspect` shows them; failing manifests give located messages.
//! The marker times are placed at half cycles by hand, not measured.

mod common;
use common::*;
use ludus_anim_format::events::MarkerKind;
use ludus_anim_runtime::Package;
use std::path::Path;

const MANIFEST: &str = r#"
[project]
output = "out"

[[sync_group]]
name = "locomotion"
clips = ["walk", "jog", "run"]
markers = ["left_foot_down", "right_foot_down"]
max_rate = 1.9

[[event_channel]]
prefix = "gameplay_"
kind = "control"

[[asset]]
sources = ["pab_locomotions.fbx"]

[asset.clips.walk]
loop = "loop"
root_motion = { joint = "Hips" }
markers = [
  { name = "left_foot_down", time_s = 0.0, kind = "sync" },
  { name = "right_foot_down", time_s = 0.6667, kind = "sync" },
  { name = "fx_dust", time_s = 0.0, kind = "event" },
  { name = "gameplay_step_noise", time_s = 1.3333, kind = "event" },
]
contacts = [ { name = "foot_l", start_s = 1.2, end_s = 0.3 } ]

[asset.clips.jog]
loop = "loop"
root_motion = { joint = "Hips" }
markers = [
  { name = "left_foot_down", time_s = 0.0, kind = "sync" },
  { name = "right_foot_down", time_s = 0.4, kind = "sync" },
]

[asset.clips.run]
loop = "loop"
root_motion = { joint = "Hips" }
markers = [
  { name = "left_foot_down", time_s = 0.0, kind = "sync" },
  { name = "right_foot_down", time_s = 0.3333, kind = "sync" },
]
"#;

fn project(fixtures: &Path, manifest: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixtures.join("fbx/pab_locomotions.fbx");
    std::fs::copy(src, tmp.path().join("pab_locomotions.fbx")).unwrap();
    std::fs::write(tmp.path().join("ludus-anim.toml"), manifest).unwrap();
    tmp
}

#[test]
fn a_locomotion_group_cooks_and_inspects() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = project(&fixtures, MANIFEST);
    let d = tmp.path();
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    // walk 0.667 s per step against run 0.333 s: 2x, past max_rate 1.9.
    let out = text(&o);
    assert!(
        out.contains("warning[sync_rate_range]")
            && out.contains("clip 'walk' and 0.3333 s in clip 'run'")
            && out.contains("beyond the group's max_rate 1.9"),
        "{out}"
    );
    let r = report(&d.join("out"));
    let walk = r["assets"][0]["clips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "walk")
        .unwrap();
    // fx_dust, gameplay_step_noise and the window's two edges; two markers.
    assert_eq!(
        (walk["events"].as_u64(), walk["markers"].as_u64()),
        (Some(4), Some(2))
    );
    let pkg = package_path(&d.join("out"), &r, 0);
    let bytes = std::fs::read(&pkg).unwrap();
    let p = Package::load(&bytes).unwrap();
    let g = &p.sync_groups()[0];
    assert_eq!(g.name, "locomotion");
    assert_eq!(g.clips.len(), 3);
    assert!((g.rate_range.1 - 2.0).abs() < 1e-3, "{:?}", g.rate_range);
    let walk = p.clip("walk").unwrap();
    let kind = |n: &str| walk.markers().iter().find(|m| m.name == n).map(|m| m.kind);
    assert_eq!(kind("gameplay_step_noise"), Some(MarkerKind::Control));
    assert_eq!(kind("fx_dust"), Some(MarkerKind::Event));
    assert_eq!(kind("foot_l.start"), Some(MarkerKind::ContactStart));
    assert_eq!(kind("foot_l.end"), Some(MarkerKind::ContactEnd));
    // The control event 33 µs before the loop end is the loop-start event.
    let noise = walk
        .markers()
        .iter()
        .find(|m| m.name == "gameplay_step_noise");
    assert_eq!(noise.map(|m| m.event.time_s), Some(0.0));

    let o = ludus_anim(&["inspect", pkg.to_str().unwrap()], d);
    let s = String::from_utf8_lossy(&o.stdout);
    for line in [
        "0.0000 s  control 'gameplay_step_noise'",
        "1.2000 s  contact-start 'foot_l.start'",
        "sync groups:    1",
        "locomotion: markers left_foot_down → right_foot_down, rate range 0.500x-2.000x",
        "walk: left_foot_down@0.0000s, right_foot_down@0.6667s",
    ] {
        assert!(s.contains(line), "{line}\n{s}");
    }
    let o = ludus_anim(&["inspect", "--json", pkg.to_str().unwrap()], d);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["sync_groups"][0]["clips"].as_array().unwrap().len(), 3);
}

#[test]
fn a_misspelt_group_marker_fails_the_asset_with_a_suggestion() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let bad = MANIFEST.replacen(
        "{ name = \"right_foot_down\", time_s = 0.4",
        "{ name = \"rigth_foot_down\", time_s = 0.4",
        1,
    );
    let tmp = project(&fixtures, &bad);
    let o = ludus_anim(&["cook"], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("error[prepare_failed]: file 'pab_locomotions.fbx', clip 'jog': clip 'jog': sync group 'locomotion': the clip has no marker 'right_foot_down'; did you mean 'rigth_foot_down'?"),
        "{out}"
    );
    // The group's clips are that failed asset's: the notice says so.
    assert!(
        out.contains("names clip 'walk', which no asset of this cook produced (asset 'pab_locomotions.fbx' failed: it may hold it)"),
        "{out}"
    );
}

#[test]
fn a_control_event_at_both_loop_aliases_fails_the_asset() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let bad = MANIFEST.replacen(
        "{ name = \"fx_dust\", time_s = 0.0, kind = \"event\" },",
        "{ name = \"gameplay_step_noise\", time_s = 0.0, kind = \"event\" },",
        1,
    );
    let tmp = project(&fixtures, &bad);
    let o = ludus_anim(&["cook"], tmp.path());
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let out = text(&o);
    assert!(
        out.contains("marker 'gameplay_step_noise' at t=0 s: control event would fire twice"),
        "{out}"
    );
}

#[test]
fn manifest_typos_in_the_new_tables_are_caught() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    std::fs::copy(repo().join("fixtures/biped.glb"), d.join("biped.glb")).unwrap();
    let base = "[[asset]]\nsources = [\"biped.glb\"]\n";
    for (table, want) in [
        (
            "[[sync_group]]\nname = \"g\"\nclips = [\"walk\"]\nmarker = [\"a\"]\n",
            "did you mean `markers`?",
        ),
        (
            "[[event_channel]]\nprefix = \"hit_\"\nkind = \"authoritative\"\n",
            "authoritative",
        ),
        (
            "[[event_channel]]\nname = \"hit\"\nprefix = \"hit_\"\nkind = \"control\"\n",
            "exactly one of a non-empty `name` or `prefix`",
        ),
    ] {
        std::fs::write(d.join("ludus-anim.toml"), format!("{table}{base}")).unwrap();
        let o = ludus_anim(&["cook"], d);
        assert_eq!(o.status.code(), Some(2), "{}", text(&o));
        assert!(text(&o).contains(want), "{want}: {}", text(&o));
    }
}

#[test]
fn a_group_clip_no_asset_has_is_told_with_a_suggestion() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let bad = MANIFEST.replacen(
        "clips = [\"walk\", \"jog\", \"run\"]",
        "clips = [\"wlak\", \"jog\", \"run\"]",
        1,
    );
    let tmp = project(&fixtures, &bad);
    let o = ludus_anim(&["cook"], tmp.path());
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("sync group 'locomotion' names clip 'wlak', which no asset of this cook produced; did you mean 'walk'?"),
        "{}",
        text(&o)
    );
}

/// Two assets whose members of one group differ past its `max_rate`: no
/// package alone shows it (one member each), the cook does.
const ACROSS: &str = r#"
[project]
output = "out"

[[sync_group]]
name = "locomotion"
clips = ["walk", "cmu"]
markers = ["left_foot_down", "right_foot_down"]
max_rate = 1.9

[[asset]]
sources = ["pab_locomotions.fbx"]

[asset.clips.walk]
loop = "loop"
markers = [
  { name = "left_foot_down", time_s = 0.0, kind = "sync" },
  { name = "right_foot_down", time_s = 0.6667, kind = "sync" },
]

[[asset]]
sources = ["cmu.bvh"]
units = "cmu"

[asset.clips.cmu]
markers = [
  { name = "left_foot_down", time_s = 0.2, kind = "sync" },
  { name = "right_foot_down", time_s = 0.5, kind = "sync" },
]
"#;

#[test]
fn a_group_across_assets_is_measured_by_the_cook_and_by_merge() {
    let Some(fixtures) = shared_fixtures() else {
        return;
    };
    let tmp = project(&fixtures, ACROSS);
    let d = tmp.path();
    std::fs::copy(fixtures.join("bvh/cmu_12_01_walk.bvh"), d.join("cmu.bvh")).unwrap();
    let o = ludus_anim(&["cook"], d);
    assert!(o.status.success(), "{}", text(&o));
    let told = "sync group 'locomotion': interval left_foot_down → right_foot_down lasts 0.6667 s in pab_locomotions.fbx:walk and 0.3000 s in cmu.bvh:cmu: a follower plays at 0.450x-2.222x, beyond the group's max_rate 1.9";
    assert!(text(&o).contains(told), "{}", text(&o));
    let groups = |dir: &str| report(&d.join(dir))["sync_groups"].clone();
    let g = groups("out");
    assert_eq!(
        g[0]["clips"],
        serde_json::json!(["pab_locomotions.fbx:walk", "cmu.bvh:cmu"])
    );
    assert!(
        (g[0]["rate_max"].as_f64().unwrap() - 2.2223).abs() < 1e-3,
        "{g}"
    );

    // Sharded so each shard holds one member: merge measures the group.
    for s in ["1/2", "2/2"] {
        let o = ludus_anim(&["cook", "--quiet", "--out", "shards", "--shard", s], d);
        assert!(o.status.success(), "{}", text(&o));
        assert!(
            !text(&o).contains(told),
            "a shard sees one member: {}",
            text(&o)
        );
    }
    let o = ludus_anim(&["merge", "shards", "--out", "merged"], d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains(told), "{}", text(&o));
    assert_eq!(groups("merged"), g);
}
