//! The worked program example in the dashboard: `fixtures/locomotion/`
//! cooked, compiled with its input script (`program compile --script`
//! writes `out/programs/<name>.view.json` beside the `.ludprog`), and
//! reported (`ludus-anim report out`): the page's Programs section holds
//! the plan dump, the capacities and the evaluated stick-figure sequence
//! (a static strip and the shared player). In headless Chromium
//! (`tests/dashboard_program_check.py`): no console error, only `file:`
//! requests, the strip's figures drawn with their bones, and the player's
//! canvases inked, its clock advancing on Play and moving on scrub.
//! Also: the view is the same bytes on a second compile, a bad script
//! leaves neither file, and an unreadable view is a notice, not a failure.

#[path = "dashboard_common/mod.rs"]
mod common;

use common::browser::{chromium, found};
use common::{ludus_anim, text};
use ludus_anim_report::program_view::ProgramView;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The example cooked and compiled in a fresh directory: (tempdir,
/// `locomotion/`).
fn compiled() -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = common::program::cooked_example();
    let o = ludus_anim(
        &[
            "program",
            "compile",
            "locomotion.program.toml",
            "--script",
            "script.toml",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("dashboard view"), "{}", text(&o));
    (tmp, dir)
}

fn view(dir: &Path) -> (Vec<u8>, ProgramView) {
    let b = std::fs::read(dir.join("out/programs/biped_locomotion.view.json")).unwrap();
    let v = ProgramView::from_json(&b).unwrap();
    (b, v)
}

fn report(dir: &Path) -> String {
    let o = ludus_anim(&["report", "out"], dir);
    assert!(o.status.success(), "{}", text(&o));
    std::fs::read_to_string(dir.join("out/report.html")).unwrap()
}

#[test]
fn the_view_holds_the_plan_capacities_and_the_evaluated_sequence() {
    let (_t, dir) = compiled();
    let (bytes, v) = view(&dir);
    let dump = ludus_anim(
        &["program", "dump", "out/programs/biped_locomotion.ludprog"],
        &dir,
    );
    assert!(dump.status.success(), "{}", text(&dump));
    assert_eq!(
        v.dump.trim_end(),
        String::from_utf8_lossy(&dump.stdout).trim_end(),
        "the dump's text"
    );
    assert_eq!(v.ops, 17);
    let c = &v.capacities;
    assert_eq!(
        c.pose_bytes,
        u64::from((c.scratch_buffers + c.persistent_buffers) * c.padded_joints * c.stride_bytes)
    );
    assert!(
        v.dump.contains(&format!("= {} B", c.pose_bytes)),
        "{}",
        v.dump
    );
    let q = &v.sequence;
    // script.toml: 1 + 1.5 + 1.5 + 2 + 1 s at 30 Hz.
    assert_eq!(q.ticks, 210);
    assert_eq!(q.poses.frames, 210);
    assert_eq!(q.joints.len(), 32);
    let states: Vec<&str> = q.states.iter().map(|s| s.state.as_str()).collect();
    assert_eq!(states, ["Move", "Rest", "Move"], "{:?}", q.states);
    let ids: Vec<u32> = q.transitions.iter().map(|t| t.id).collect();
    assert_eq!(ids, [1, 2]);
    // Standing still for a second after the stop (t = 4 s) settles into
    // Rest: transition #1 needs state_time > 1 s with speed < 0.05.
    assert!(
        (q.transitions[0].time_s - 4.0).abs() < 0.1,
        "{:?}",
        q.transitions
    );
    assert!(
        (q.transitions[1].time_s - 6.0).abs() < 0.1,
        "{:?}",
        q.transitions
    );
    // The figure moves: the hand's path over the run is longer than 0.5 m.
    let hand = q.joints.iter().position(|n| n == "LeftHand").unwrap();
    let at = |f: usize, a: usize| {
        let k = (f * q.joints.len() + hand) * 3 + a;
        q.poses.origin_m[a] + f32::from(q.poses.q.get(k).unwrap()) * q.poses.step_m[a]
    };
    let path: f32 = (1..q.poses.frames as usize)
        .map(|f| {
            (0..3)
                .map(|a| (at(f, a) - at(f - 1, a)).powi(2))
                .sum::<f32>()
                .sqrt()
        })
        .sum();
    assert!(path > 0.5, "hand path {path} m");
    // A second compile writes the same bytes.
    let o = ludus_anim(
        &[
            "program",
            "compile",
            "locomotion.program.toml",
            "--script",
            "script.toml",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", text(&o));
    assert!(view(&dir).0 == bytes, "the view is deterministic");

    let html = report(&dir);
    assert!(
        html.contains("<section id=\"programs\">"),
        "programs section"
    );
    assert!(html.contains("<a href=\"#programs\">Programs</a>"));
    assert!(html.contains("BlendSpace &#39;gait&#39;") || html.contains("BlendSpace 'gait'"));
    assert!(html.contains("class=\"capacities\""));
    assert_eq!(html.matches("class=\"strip-fig\"").count(), 8);
    assert!(common::external_refs(&html).is_empty(), "no external URL");
}

#[test]
fn a_bad_script_writes_nothing_and_a_bad_view_is_a_notice() {
    let (_t, dir) = compiled();
    std::fs::write(dir.join("bad.toml"), "dt = 0.0333\n[[step]]\nsped = 1.0\n").unwrap();
    let o = ludus_anim(
        &[
            "program",
            "compile",
            "locomotion.program.toml",
            "--script",
            "bad.toml",
            "-o",
            "fresh/x.ludprog",
        ],
        &dir,
    );
    assert!(!o.status.success());
    let t = text(&o);
    assert!(
        t.contains("bad.toml") && t.contains("did you mean 'speed'"),
        "{t}"
    );
    assert!(!dir.join("fresh/x.ludprog").exists());
    assert!(!dir.join("fresh/x.view.json").exists());

    std::fs::write(dir.join("out/programs/broken.view.json"), "{ not json").unwrap();
    let html = report(&dir);
    assert!(
        html.contains("broken.view.json"),
        "the notice names the file"
    );
    assert_eq!(html.matches("<article class=\"program\"").count(), 1);
}

#[test]
fn the_program_section_draws_in_headless_chromium() {
    let Some(chromium) = chromium() else { return };
    if found("python3").is_none() {
        eprintln!("skipped: python3 not found (it drives Chromium)");
        return;
    }
    let (t, dir) = compiled();
    report(&dir);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/dashboard_program_check.py");
    let shots = t.path().join("shots");
    let o = Command::new("python3")
        .arg(script)
        .arg(&chromium)
        .arg(&shots)
        .arg(dir.join("out/report.html"))
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(r["console_errors"], serde_json::json!([]), "console errors");
    let requests = r["requests"].as_array().expect("requests");
    assert!(
        requests
            .iter()
            .filter_map(|u| u.as_str())
            .all(|u| u.starts_with("file:") || u.starts_with("data:")),
        "{requests:?}"
    );
    let s = &r["section"];
    assert!(s.is_object(), "no programs section: {r}");
    assert_eq!(s["name"], "biped_locomotion");
    assert_eq!(s["nav"], true);
    let plan = s["plan"].as_str().unwrap();
    for op in [
        "Sample",
        "BlendSpace 'gait'",
        "OverrideMask",
        "AddLocal",
        "Inertialize",
        "LocalToComponent",
    ] {
        assert!(plan.contains(op), "{op} in the plan:\n{plan}");
    }
    assert!(plan.contains("capacities:"), "{plan}");
    assert_eq!(s["capacities"].as_array().unwrap().len(), 6);
    assert!(s["verified"].as_str().unwrap().contains("deterministic"));
    let strip = s["strip"].as_array().unwrap();
    assert_eq!(strip.len(), 8, "{s}");
    for f in strip {
        assert_eq!(f["lines"], 31, "one line per non-root joint: {f}");
        assert!(
            f["height"].as_f64().unwrap() > 100.0,
            "a standing figure: {f}"
        );
    }
    let labels: Vec<&str> = s["labels"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|l| l.as_str())
        .collect();
    assert!(
        labels.iter().any(|l| l.ends_with("Rest")) && labels[0].ends_with("Move"),
        "{labels:?}"
    );
    let p = &r["player"];
    for phase in ["before", "playing", "scrubbed"] {
        let ph = &p[phase];
        assert!(ph["error"].is_null(), "{phase}: {ph}");
        assert_eq!(ph["figures"], 1, "{phase}");
        for c in ph["canvases"].as_array().unwrap() {
            assert!(
                c["ink"].as_u64().unwrap() > 100,
                "{phase}: empty canvas {c}"
            );
        }
    }
    let t0 = p["before"]["t"].as_f64().unwrap();
    let t1 = p["playing"]["t"].as_f64().unwrap();
    let t2 = p["scrubbed"]["t"].as_f64().unwrap();
    assert!(t1 > t0, "Play advances the clock: {t0} -> {t1}");
    assert!((t2 - 3.48).abs() < 0.05, "scrub to the middle: {t2}");
    if let Ok(d) = std::env::var("LUDUS_DASHBOARD_SCREENSHOTS") {
        let _ = std::fs::copy(
            shots.join("program-player.png"),
            Path::new(&d).join("program-player.png"),
        );
    }
}
