//! The page in a real browser: the shared fixtures cooked under standard,
//! hero and crowd with sidecars, against a baseline with one clip changed,
//! rendered by the `report` command and opened from a file in headless
//! Chromium (Debian's `chromium`, driven over the DevTools protocol on a
//! pipe by `tests/dashboard_browser_check.py`, Python standard library only).
//!
//! Asserts: no console error or exception; every request is `file:` or
//! `data:`; the clip table's first page drawn, every clip counted; a real
//! mouse click on a header sorts every clip ascending, a second
//! descending; the text filter works; an opened clip's detail fragment
//! loads, its plot SVGs have content and its heat-map images decode;
//! screenshots are written.
//!
//! Layout (`tests/dashboard_layout_check.py`, the bundled biped under
//! three profiles against a baseline, so every section has content): at
//! 390, 1400 and 2560 px no element is wider than the viewport or reaches
//! past it (outside a horizontally scrolling box) and no table row is
//! taller than its tallest cell's content needs.
//! Player (`tests/dashboard_player_check.py`): the bundled biped's walk
//! and a retargeted clip (the CMU walk on the Knight) draw their stick
//! figures (source and result side by side for the retarget) on every
//! canvas, and playing and scrubbing move the clock.
//! Chromium is installed with apt-get when missing (as `.ci/run` does);
//! the test skips with a message only if that is impossible.
//! `LUDUS_DASHBOARD_SCREENSHOTS=DIR` also copies the screenshots there
//! (how `docs/dashboard/*.png` are made).

#[path = "dashboard_common/mod.rs"]
mod common;

use common::browser::{chromium, found};
use ludus_anim_dashboard::{run, ReportArgs};
use std::path::{Path, PathBuf};
use std::process::Command;

const CLIP: &str = "clip-pab-locomotions-walk-standard";

fn browser_check(chromium: &Path, html: &Path, out: &Path) -> serde_json::Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/dashboard_browser_check.py");
    let o = Command::new("python3")
        .arg(script)
        .arg(chromium)
        .arg(html)
        .arg(out)
        .arg(CLIP)
        .output()
        .expect("python3 runs");
    assert!(
        o.status.success(),
        "browser_check.py failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).expect("browser_check.py prints JSON")
}

#[test]
fn the_dashboard_works_in_headless_chromium() {
    let Some(chromium) = chromium() else { return };
    if found("python3").is_none() {
        eprintln!("skipped: python3 not found (it drives Chromium)");
        return;
    }
    let Some(f) = common::fixtures::fixture_cooks() else {
        return;
    };
    let html = f.dir.path().join("dashboard.html");
    let out = run(&ReportArgs {
        outs: vec![f.standard.clone(), f.hero.clone(), f.crowd.clone()],
        baseline: Some(f.baseline.clone()),
        html: Some(html.clone()),
        ..Default::default()
    })
    .expect("report runs");
    assert!(
        out.regressions > 0,
        "the changed clip regressed:\n{}",
        out.stdout
    );
    let shots = f.dir.path().join("shots");
    let r = browser_check(&chromium, &html, &shots);
    eprintln!("{}", serde_json::to_string(&r["sort"]).unwrap_or_default());
    assert_eq!(r["console_errors"], serde_json::json!([]), "console errors");
    let requests = r["requests"].as_array().expect("requests");
    let foreign: Vec<&str> = requests
        .iter()
        .filter_map(|u| u.as_str())
        .filter(|u| !(u.starts_with("file:") || u.starts_with("data:")))
        .collect();
    assert!(
        foreign.is_empty(),
        "requests other than file:/data: {foreign:?}"
    );
    let first_page = f.clips.min(100) as u64;
    assert_eq!(r["rows"].as_u64(), Some(first_page), "the first page");
    assert_eq!(r["data_rows"].as_u64(), Some(f.clips as u64));
    assert_eq!(
        r["shown_rows"].as_u64(),
        Some(f.clips as u64),
        "all counted"
    );
    assert_eq!(r["clip_found"], true, "the clip's fragment loaded");
    assert_eq!(r["sort"]["ascending"], true, "first click sorts ascending");
    assert_eq!(
        r["sort"]["descending"], true,
        "second click sorts descending"
    );
    let filtered = r["filtered_rows"].as_u64().unwrap_or(0);
    assert!(
        filtered > 0 && filtered < f.clips as u64,
        "filter 'walk' keeps some rows: {filtered}"
    );
    assert!(
        r["plots"].as_u64().unwrap_or(0) >= 3,
        "plots: {}",
        r["plots"]
    );
    assert_eq!(r["empty_plots"], serde_json::json!([]), "empty plots");
    assert_eq!(
        r["images_failed"].as_u64(),
        Some(0),
        "heat-map images decode"
    );
    assert!(r["images"].as_u64().unwrap_or(0) > 0);
    for s in r["screenshots"].as_array().expect("screenshots") {
        let p = PathBuf::from(s.as_str().unwrap_or_default());
        let bytes = std::fs::read(&p).expect("screenshot written");
        assert!(
            bytes.len() > 10_000 && bytes.starts_with(b"\x89PNG"),
            "{}",
            p.display()
        );
        if let Some(dir) = std::env::var_os("LUDUS_DASHBOARD_SCREENSHOTS") {
            let name = p.file_name().unwrap_or_default();
            std::fs::copy(&p, Path::new(&dir).join(name)).expect("screenshot copied");
        }
    }
}

fn biped(dir: &Path, name: &str, profile: &str, walk: Option<&Path>) -> PathBuf {
    let root = common::repo().join("fixtures");
    let text = match walk {
        Some(p) => format!("sources = []\n[clips.walk]\nprofile = '{}'\n", p.display()),
        None => "sources = []".to_string(),
    };
    let files = vec![root.join("biped.glb")];
    let extra = [("biped.glb", common::settings(&text))];
    let out = dir.join(name);
    common::cook_jobs(common::jobs(&files, &extra), &root, &out, profile, false);
    out
}

#[test]
fn the_layout_holds_at_phone_desktop_and_wide_widths() {
    let Some(chromium) = chromium() else { return };
    if found("python3").is_none() {
        eprintln!("skipped: python3 not found (it drives Chromium)");
        return;
    }
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let tight = common::fixtures::standard_at(d, 0.00005);
    let outs: Vec<PathBuf> = ["standard", "hero", "crowd"]
        .iter()
        .map(|p| biped(d, p, p, None))
        .collect();
    let baseline = biped(d, "baseline", "standard", Some(&tight));
    let html = d.join("dashboard.html");
    run(&ReportArgs {
        outs,
        baseline: Some(baseline),
        html: Some(html.clone()),
        ..Default::default()
    })
    .expect("report runs");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/dashboard_layout_check.py");
    let shots = d.join("shots");
    let o = Command::new("python3")
        .args([script.as_os_str(), chromium.as_os_str(), html.as_os_str()])
        .arg(&shots)
        .arg("clip-biped-walk-standard")
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let r: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(r["console_errors"], serde_json::json!([]), "console errors");
    for w in r["widths"].as_array().expect("widths") {
        let width = &w["width"];
        assert_eq!(w["clip_opened"], true, "{width}: the clip's detail loads");
        assert_eq!(
            w["overflow"]["count"], 0,
            "{width}: too wide: {}",
            w["overflow"]
        );
        assert_eq!(
            w["rows"]["count"], 0,
            "{width}: rows too tall: {}",
            w["rows"]
        );
        assert!(
            w["rows"]["rows"].as_u64().unwrap_or(0) > 20,
            "{width}: rows measured"
        );
        for s in w["screenshots"].as_array().expect("screenshots") {
            let p = PathBuf::from(s.as_str().unwrap_or_default());
            let bytes = std::fs::read(&p).expect("screenshot written");
            assert!(bytes.starts_with(b"\x89PNG"), "{}", p.display());
            if let Some(dir) = std::env::var_os("LUDUS_DASHBOARD_SCREENSHOTS") {
                let name = p.file_name().unwrap_or_default();
                std::fs::copy(&p, Path::new(&dir).join(name)).expect("screenshot copied");
            }
        }
    }
}

#[test]
fn the_player_draws_the_biped_and_a_retargeted_clip() {
    let Some(chromium) = chromium() else { return };
    if found("python3").is_none() {
        eprintln!("skipped: python3 not found (it drives Chromium)");
        return;
    }
    let Some(fx) = common::shared_fixtures() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let biped_html = d.join("biped.html");
    run(&ReportArgs {
        outs: vec![biped(d, "standard", "standard", None)],
        html: Some(biped_html.clone()),
        ..Default::default()
    })
    .expect("report runs");
    let rt = d.join("retarget");
    common::retarget::project(&fx, &rt, "");
    let o = common::ludus_anim(&["cook"], &rt);
    assert!(o.status.success(), "{}", common::text(&o));
    let rt_html = d.join("retarget.html");
    run(&ReportArgs {
        outs: vec![rt.join("out")],
        html: Some(rt_html.clone()),
        ..Default::default()
    })
    .expect("report runs");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/dashboard_player_check.py");
    let shots = d.join("shots");
    let o = Command::new("python3")
        .args([script.as_os_str(), chromium.as_os_str(), shots.as_os_str()])
        .args([biped_html.as_os_str(), "clip-biped-walk-standard".as_ref()])
        .arg("player-biped.png")
        .args([
            rt_html.as_os_str(),
            "-".as_ref(),
            "player-retarget.png".as_ref(),
        ])
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
    for (page, figures) in r["pages"].as_array().expect("pages").iter().zip([1, 2]) {
        let clip = &page["clip"];
        let before = &page["before"];
        assert!(before.is_object(), "{clip}: no player");
        assert_eq!(before["error"], serde_json::Value::Null, "{clip}");
        assert_eq!(before["figures"], figures, "{clip}: figures drawn");
        assert!(before["drawn"].as_u64().unwrap_or(0) >= 1, "{clip}");
        let canvases = before["canvases"].as_array().expect("canvases");
        assert_eq!(
            canvases.len(),
            figures * 2 + 1,
            "{clip}: side + top per figure, timeline"
        );
        for c in canvases {
            let (ink, area) = (
                c["ink"].as_u64().unwrap_or(0),
                c["w"].as_u64().unwrap_or(0) * c["h"].as_u64().unwrap_or(0),
            );
            assert!(
                ink > 200 && ink < area / 2,
                "{clip}: canvas {c} drew {ink} of {area} pixels"
            );
        }
        let playing = &page["playing"];
        assert!(
            playing["drawn"].as_u64() > before["drawn"].as_u64(),
            "{clip}: playing draws frames: {playing}"
        );
        assert!(
            playing["t"].as_f64().unwrap_or(0.0) > 0.0,
            "{clip}: the clock moves"
        );
        let scrubbed = page["scrubbed"]["t"].as_f64().unwrap_or(0.0);
        assert!(scrubbed > 0.0, "{clip}: scrubbing seeks");
        let p = PathBuf::from(page["screenshot"].as_str().unwrap_or_default());
        let bytes = std::fs::read(&p).expect("screenshot written");
        assert!(bytes.starts_with(b"\x89PNG"), "{}", p.display());
        if let Some(dir) = std::env::var_os("LUDUS_DASHBOARD_SCREENSHOTS") {
            let name = p.file_name().unwrap_or_default();
            std::fs::copy(&p, Path::new(&dir).join(name)).expect("screenshot copied");
        }
    }
}

/// `retarget preview` from the CLI on a real cook (the CMU walk on the
/// Knight): one page per retargeted clip, which draws the source and the
/// result on every canvas in headless Chromium, plays and scrubs, and
/// fetches nothing; a cook with no retargeted clip is refused naming the
/// sidecar, with exit code 2 and no page.
#[test]
fn the_retarget_preview_page_draws_source_and_result() {
    let Some(chromium) = chromium() else { return };
    if found("python3").is_none() {
        eprintln!("skipped: python3 not found (it drives Chromium)");
        return;
    }
    let Some(fx) = common::shared_fixtures() else {
        return;
    };
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let rt = d.join("retarget");
    common::retarget::project(&fx, &rt, "");
    let o = common::ludus_anim(&["cook"], &rt);
    assert!(o.status.success(), "{}", common::text(&o));
    let o = common::ludus_anim(&["retarget", "preview", "out", "--out", "pages"], &rt);
    assert!(o.status.success(), "{}", common::text(&o));
    let pages: Vec<PathBuf> = std::fs::read_dir(rt.join("pages"))
        .expect("pages written")
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(pages.len(), 1, "one page per retargeted clip: {pages:?}");
    let page = &pages[0];
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        stdout.contains(&*page.file_name().unwrap_or_default().to_string_lossy()),
        "the page is named: {stdout}"
    );
    let html = std::fs::read_to_string(page).expect("page");
    assert_eq!(common::external_refs(&html), Vec::<String>::new());
    // The rigs' axes reach the player (a +z-up rig is stood up by them).
    assert!(
        html.contains(r#""axes":["+y","+z"]"#),
        "the figures carry their rigs' axes"
    );
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/dashboard_player_check.py");
    let shots = d.join("shots");
    let o = Command::new("python3")
        .args([script.as_os_str(), chromium.as_os_str(), shots.as_os_str()])
        .args([page.as_os_str(), "preview".as_ref(), "preview.png".as_ref()])
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
    let page = &r["pages"][0];
    let before = &page["before"];
    assert!(before.is_object(), "no player on the preview page");
    assert_eq!(before["error"], serde_json::Value::Null);
    assert_eq!(before["figures"], 2, "source and result");
    let canvases = before["canvases"].as_array().expect("canvases");
    assert_eq!(canvases.len(), 5, "side + top per figure, timeline");
    for c in canvases {
        let (ink, area) = (
            c["ink"].as_u64().unwrap_or(0),
            c["w"].as_u64().unwrap_or(0) * c["h"].as_u64().unwrap_or(0),
        );
        assert!(
            ink > 200 && ink < area / 2,
            "canvas {c} drew {ink} of {area} pixels"
        );
    }
    assert!(
        page["playing"]["drawn"].as_u64() > before["drawn"].as_u64(),
        "playing draws frames"
    );
    assert!(
        page["scrubbed"]["t"].as_f64().unwrap_or(0.0) > 0.0,
        "scrubbing seeks"
    );
    let shot = PathBuf::from(page["screenshot"].as_str().unwrap_or_default());
    assert!(std::fs::read(&shot)
        .expect("screenshot")
        .starts_with(b"\x89PNG"));

    // A cook without a retargeted clip: refused, nothing written.
    let plain = biped(d, "plain", "standard", None);
    let o = common::ludus_anim(&["retarget", "preview", "plain"], d);
    assert_eq!(o.status.code(), Some(2), "{}", common::text(&o));
    let err = common::text(&o);
    assert!(
        err.contains("report-sidecar.json") && err.contains("no retargeted clip"),
        "{err}"
    );
    assert!(!plain.join("retarget-preview").exists());
}
