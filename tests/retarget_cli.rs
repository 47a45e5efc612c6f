//! Retargeting from the command line on real files: `retarget suggest`
//! writes a profile that cooks; a profile-only change re-runs retarget
//! onward and a quality-only change nothing before encode; incompatible
//! rigs and T-pose vs arms-down poses fail naming chain and joint;
//! `inspect` and the dashboard sidecar show what the retarget did.

mod common;
use common::retarget::{edit, project, KNIGHT, PROFILE, WALK};
use common::*;
use serde_json::Value;
use std::path::Path;

/// `cook --json` in `dir`: exit code, the summary event and every stage
/// event.
fn cook_json(dir: &Path, args: &[&str]) -> (Option<i32>, Value, Vec<Value>, String) {
    let mut all = vec!["cook", "--json"];
    all.extend_from_slice(args);
    let o = ludus_anim(&all, dir);
    let events: Vec<Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let summary = events
        .iter()
        .rev()
        .find(|e| e["event"] == "summary")
        .cloned()
        .unwrap_or(Value::Null);
    let stages = events
        .iter()
        .filter(|e| e["event"] == "stage")
        .cloned()
        .collect();
    (o.status.code(), summary, stages, text(&o))
}

fn misses(summary: &Value, stage: &str) -> u64 {
    summary["stages"][stage]["misses"].as_u64().unwrap_or(0)
}

#[test]
fn suggest_writes_a_profile_that_cooks_with_sane_metrics() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    // Printed without -o (paths relative to the working directory).
    let o = ludus_anim(&["retarget", "suggest", WALK, KNIGHT], d);
    assert!(o.status.success(), "{}", text(&o));
    let printed = String::from_utf8_lossy(&o.stdout).to_string();
    assert!(
        printed.contains("skeleton = \"src/cmu_walk.bvh\""),
        "{printed}"
    );
    assert!(!d.join("profiles").exists(), "nothing written without -o");
    // Written with -o: paths relative to the profile, comments to check.
    let o = ludus_anim(
        &[
            "retarget",
            "suggest",
            WALK,
            KNIGHT,
            "-o",
            "profiles/suggested.toml",
        ],
        d,
    );
    assert!(o.status.success(), "{}", text(&o));
    let written = std::fs::read_to_string(d.join("profiles/suggested.toml")).unwrap();
    for want in [
        "# Proposed by `ludus-anim retarget suggest`",
        "# Check:",
        "rest kinds: source T-pose, target arms down",
        "skeleton = \"../src/cmu_walk.bvh\"",
        "skeleton = \"../rig/knight.glb\"",
        "rest_kind = \"T-pose\"",
        "[[source.pose.overrides]]",
    ] {
        assert!(written.contains(want), "{want:?} missing:\n{written}");
    }
    assert!(!written.contains("DOES NOT FIT"), "{written}");
    // Never applied implicitly: the project's cook does not read it.
    let (code, summary, _, log) = cook_json(
        d,
        &[
            WALK,
            "--retarget",
            "profiles/suggested.toml",
            "-o",
            "out-suggested",
        ],
    );
    assert_eq!(code, Some(0), "{log}");
    assert!(misses(&summary, "retarget") >= 1, "{summary}");
    let r = report(&d.join("out-suggested"));
    let asset = &r["assets"][0];
    let knight_identity = "e3250295ef4479f65f476d705303456b";
    assert_eq!(asset["skeleton"]["identity"], knight_identity);
    let clip = &asset["clips"][0];
    let rt = &clip["retarget"];
    assert_eq!(rt["target_identity"], knight_identity, "{rt}");
    let m = &rt["metrics"];
    let contacts = m["contacts"].as_array().unwrap();
    assert_eq!(contacts.len(), 2, "{m}");
    for c in contacts {
        let f = |k: &str| c[k].as_f64().unwrap();
        assert!(c["source_contact_frames"].as_u64().unwrap() > 50, "{c}");
        assert!(f("preservation") >= 0.9, "{c}");
        assert!(f("added_skate_fraction") <= 0.25, "{c}");
        assert!(
            f("target_skate_distance_h") <= f("source_skate_distance_h") + 0.05,
            "{c}"
        );
    }
    assert!(
        m["end_effector_error"]["value"].as_f64().unwrap() < 0.25,
        "{m}"
    );
    assert!(
        m["bone_length_deviation_m"]["value"].as_f64().unwrap() < 1e-4,
        "{m}"
    );
}

#[test]
fn profile_and_quality_changes_rerun_exactly_their_stages() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    let (code, cold, _, log) = cook_json(d, &[]);
    assert_eq!(code, Some(0), "{log}");
    for s in ["import", "normalize", "retarget", "resample", "encode"] {
        assert!(
            misses(&cold, s) > 0,
            "cold cook runs {s}: {}",
            cold["stages"]
        );
    }
    let sidecar = std::fs::read(d.join("out/report-sidecar.json")).unwrap();

    // Profile only: retarget onward; the source's and the target's import
    // and normalize are hits.
    edit(d, PROFILE, "blend_s = 0.1", "blend_s = 0.15");
    let (code, s, stages, log) = cook_json(d, &[]);
    assert_eq!(code, Some(0), "{log}");
    assert_eq!(misses(&s, "import"), 0, "{}", s["stages"]);
    assert_eq!(misses(&s, "normalize"), 0, "{}", s["stages"]);
    for later in [
        "retarget", "resample", "prepare", "encode", "verify", "package",
    ] {
        assert!(misses(&s, later) > 0, "{later}: {}", s["stages"]);
    }
    let rt: Vec<&Value> = stages.iter().filter(|e| e["stage"] == "retarget").collect();
    assert!(
        !rt.is_empty() && rt.iter().all(|e| e["cache"] == "miss"),
        "{rt:?}"
    );

    // Quality only (the quality profile's error threshold): nothing before
    // encode re-runs.
    edit(
        d,
        "custom.toml",
        "error_threshold_m = 0.0001",
        "error_threshold_m = 0.0002",
    );
    let (code, s, _, log) = cook_json(d, &[]);
    assert_eq!(code, Some(0), "{log}");
    for early in ["import", "normalize", "retarget", "resample", "prepare"] {
        assert_eq!(misses(&s, early), 0, "{early}: {}", s["stages"]);
    }
    assert!(misses(&s, "encode") > 0, "{}", s["stages"]);

    // No change: every stage hits, and the sidecar (from the cached
    // outcome) is the one the last cook wrote.
    let before = std::fs::read(d.join("out/report-sidecar.json")).unwrap();
    let (code, s, _, log) = cook_json(d, &[]);
    assert_eq!(code, Some(0), "{log}");
    for (stage, st) in s["stages"].as_object().unwrap() {
        assert_eq!(st["misses"], 0, "{stage}: {}", s["stages"]);
    }
    assert_eq!(
        std::fs::read(d.join("out/report-sidecar.json")).unwrap(),
        before
    );
    assert_ne!(sidecar, before, "a new blend changes the feet");
}

/// Cook the project with the profile edited by `f`; exit code and output.
fn cook_with_profile(d: &Path, f: impl Fn(&str) -> String) -> (Option<i32>, String) {
    let original = std::fs::read_to_string(d.join(PROFILE)).unwrap();
    std::fs::write(d.join(PROFILE), f(&original)).unwrap();
    let o = ludus_anim(&["cook", "--color", "never"], d);
    std::fs::write(d.join(PROFILE), original).unwrap();
    (o.status.code(), text(&o))
}

#[test]
fn incompatible_rigs_fail_naming_the_chain_and_the_joint() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    let arm_map = "[[map]]\nsource = \"arm_l\"\ntarget = \"arm_l\"\nrotation = \"one_to_one\"\ntranslation = \"none\"\n";
    type Edit = Box<dyn Fn(&str) -> String>;
    let cases: Vec<(&str, Edit, &[&str])> = vec![
        (
            "unmapped required chain",
            Box::new(move |p: &str| p.replacen(arm_map, "", 1)),
            &["'arm_l'", "'UpperArm.L'", "'Palm.L'", "required"],
        ),
        (
            "missing joint",
            Box::new(|p: &str| p.replacen("start = \"UpperArm.L\"", "start = \"UpperArmm.L\"", 1)),
            &[
                "chain 'arm_l'",
                "'UpperArmm.L'",
                "did you mean 'UpperArm.L'",
            ],
        ),
        (
            "degenerate chain",
            Box::new(|p: &str| p.replacen("end = \"Palm.L\"", "end = \"Palm.R\"", 1)),
            &[
                "chain 'arm_l'",
                "'UpperArm.L'",
                "'Palm.R'",
                "not an ancestor",
            ],
        ),
    ];
    for (what, f, wants) in cases {
        let (code, log) = cook_with_profile(d, f);
        assert_eq!(code, Some(1), "{what}: {log}");
        assert!(log.contains("FAILED src/cmu_walk.bvh"), "{what}: {log}");
        for w in wants {
            assert!(log.contains(w), "{what}: no {w:?} in\n{log}");
        }
    }
}

/// The shipped profile without the source pose overrides: CMU's T-pose
/// against the Knight's arms-down rest.
fn without_overrides(p: &str) -> String {
    let mut out = String::new();
    let mut skipping = false;
    for line in p.lines() {
        if line == "[[source.pose.overrides]]" {
            skipping = true;
            continue;
        }
        if skipping && (line.starts_with("joint") || line.starts_with("rotate_deg")) {
            continue;
        }
        skipping = false;
        out.push_str(line);
        out.push('\n');
    }
    out
}

#[test]
fn t_pose_against_arms_down_is_refused_or_warned_clearly() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    let (code, log) = cook_with_profile(d, without_overrides);
    assert_eq!(code, Some(1), "{log}");
    for w in [
        "retarget poses disagree",
        "T-pose",
        "arms down",
        "on_mismatch",
    ] {
        assert!(log.contains(w), "no {w:?} in\n{log}");
    }
    let warn =
        |p: &str| without_overrides(p).replace("on_mismatch = \"error\"", "on_mismatch = \"warn\"");
    let (_, log) = cook_with_profile(d, warn);
    let line = log
        .lines()
        .find(|l| l.starts_with("warning[") && l.contains("T-pose"))
        .unwrap_or_else(|| panic!("no pose warning in\n{log}"));
    assert!(line.contains("arms down"), "{line}");
}

#[test]
fn inspect_and_the_sidecar_show_the_retarget() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    let (code, _, _, log) = cook_json(d, &[]);
    assert_eq!(code, Some(0), "{log}");
    let out = d.join("out");
    let r = report(&out);
    let pkg = package_path(&out, &r, 0);
    let pkg_s = pkg.to_str().unwrap();
    let o = ludus_anim(&["inspect", pkg_s], d);
    assert!(o.status.success(), "{}", text(&o));
    let t = String::from_utf8_lossy(&o.stdout);
    let name = r["assets"][0]["clips"][0]["retarget"]["profile"]
        .as_str()
        .unwrap();
    for want in [
        "retarget (from ",
        name,
        PROFILE,
        "contacts preserved",
        "Foot.L",
    ] {
        assert!(t.contains(want), "{want:?} missing:\n{t}");
    }
    assert!(!t.contains("warning:"), "{t}");
    let o = ludus_anim(&["inspect", "--json", pkg_s], d);
    let j: Value = serde_json::from_slice(&o.stdout).unwrap();
    let clip = &j["retarget"]["clips"][0]["retarget"];
    assert_eq!(
        clip["profile_hash"],
        r["assets"][0]["clips"][0]["retarget"]["profile_hash"]
    );
    // A report of another cook is named, not believed.
    let o = ludus_anim(&["inspect", pkg_s, "--report", "cmu_to_knight.toml"], d);
    assert!(o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a cook report"),
        "{}",
        text(&o)
    );

    // The sidecar: both feet at the bake rate over the clip, with contact
    // bands; the dashboard draws its retarget panel from it.
    let bytes = std::fs::read(out.join("report-sidecar.json")).unwrap();
    let s = ludus_anim_report::sidecar::Sidecar::from_json(&bytes).unwrap();
    assert_eq!(s.clips.len(), 1);
    let c = &s.clips[0];
    assert_eq!(c.source, WALK);
    let rt = c.retarget.as_ref().unwrap();
    assert_eq!(rt.rate_hz, 30.0);
    assert_eq!(rt.feet.len(), 2);
    for f in &rt.feet {
        let n = f.height_m.len();
        assert_eq!(
            n,
            (c.duration_s * 30.0 + 1e-3).floor() as usize + 1,
            "{}",
            f.joint
        );
        assert!(f.contacts.len() >= 3, "{}: {:?}", f.joint, f.contacts);
        let heights = &f.height_m.0;
        let low = heights.iter().copied().fold(f32::INFINITY, f32::min);
        assert!(
            (-0.02..0.05).contains(&low),
            "{} stands on the floor: {low}",
            f.joint
        );
        let planted: f32 = f.contacts.iter().map(|k| k.end_s - k.start_s).sum();
        assert!(planted > 0.25 * c.duration_s, "{}: {planted}", f.joint);
    }
    let o = ludus_anim(&["report", "out", "--html", "dash.html"], d);
    assert!(o.status.success(), "{}", text(&o));
    // The clip's detail is in its asset's fragment beside the index.
    let mut html = std::fs::read_to_string(d.join("dash.html")).unwrap();
    for f in all_files(&d.join("dash-details")) {
        html.push_str(&std::fs::read_to_string(f).unwrap());
    }
    assert!(html.contains("Retarget ("), "retarget panel drawn");
    assert!(html.contains("data-player"), "the player is drawn");
}

/// Facing is inferred (and said how); a person's `--target-forward` that
/// contradicts the body is written with the cues that disagree, and the
/// cook of the mirrored result fails on facing agreement instead of
/// passing every other budget.
#[test]
fn facing_is_inferred_and_a_mirrored_result_fails_the_cook() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    // `--retarget` applies to assets whose manifest names no profile:
    // cook the files without the project's manifest.
    std::fs::remove_file(d.join("ludus-anim.toml")).unwrap();
    let o = ludus_anim(
        &[
            "retarget",
            "suggest",
            WALK,
            KNIGHT,
            "-o",
            "profiles/ok.toml",
        ],
        d,
    );
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    assert!(log.contains("source forward +z (inferred)"), "{log}");
    assert!(log.contains("root travel +z"), "{log}");
    let (code, _, _, log) = cook_json(d, &[WALK, "--retarget", "profiles/ok.toml", "-o", "out-ok"]);
    assert_eq!(code, Some(0), "{log}");
    let r = report(&d.join("out-ok"));
    let f = &r["assets"][0]["clips"][0]["retarget"]["metrics"]["facing"];
    assert!(f["agreement"].as_f64().unwrap() > 0.9, "{f}");
    assert!(f["target_travel_m"].as_f64().unwrap() > 1.0, "{f}");

    let o = ludus_anim(
        &[
            "retarget",
            "suggest",
            WALK,
            KNIGHT,
            "--target-forward",
            "-z",
            "-o",
            "profiles/mirrored.toml",
        ],
        d,
    );
    let log = text(&o);
    assert!(o.status.success(), "{log}");
    assert!(log.contains("target forward -z (given)"), "{log}");
    assert!(log.contains("DISAGREES"), "{log}");
    let (code, _, _, log) = cook_json(
        d,
        &[
            WALK,
            "--retarget",
            "profiles/mirrored.toml",
            "--cache",
            "cache",
            "-o",
            "out-m",
        ],
    );
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("retarget_facing"), "{log}");
    assert!(log.contains("facing agreement -1.00"), "{log}");
}

/// `suggest` fails (non-zero) when its proposal does not fit: a target
/// with no limbs (an animated box) maps no chain.
#[test]
fn suggest_fails_when_nothing_maps() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    let boxed = fx.join("gltf/khronos_BoxAnimated_embedded.gltf");
    let o = ludus_anim(&["retarget", "suggest", WALK, boxed.to_str().unwrap()], d);
    assert!(!o.status.success(), "{}", text(&o));
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(
        text(&o).contains("the profile maps no chain"),
        "{}",
        text(&o)
    );
}

/// A budget breach fails the asset (no package) by default; with
/// `budgets.on_breach = "warn"` the same breach is a located warning and
/// the package is written.
#[test]
fn a_budget_breach_fails_or_warns_per_profile() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    // A budget no real clip meets: 1e-4 limb lengths of end-effector error.
    let tight = |p: &str| {
        p.replacen(
            "max_end_effector_error = 0.25",
            "max_end_effector_error = 0.0001",
            1,
        )
    };
    let (code, log) = cook_with_profile(d, tight);
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("FAILED src/cmu_walk.bvh"), "{log}");
    assert!(
        log.contains("error[retarget_end_effector]"),
        "no located error in\n{log}"
    );
    let r = report(&d.join("out"));
    assert_eq!(r["assets"][0]["status"], "failed", "{}", r["assets"][0]);
    let warn = |p: &str| tight(p).replacen("[budgets]\n", "[budgets]\non_breach = \"warn\"\n", 1);
    let (code, log) = cook_with_profile(d, warn);
    assert_eq!(code, Some(0), "{log}");
    let line = log
        .lines()
        .find(|l| l.starts_with("warning[retarget_end_effector]"))
        .unwrap_or_else(|| panic!("no breach warning in\n{log}"));
    assert!(line.contains("on_breach"), "{line}");
    let r = report(&d.join("out"));
    let asset = &r["assets"][0];
    assert_ne!(asset["status"], "failed", "{asset}");
    let pkg = asset["package"].as_str().expect("package written");
    assert!(d.join("out").join(pkg).exists(), "{pkg}");
    let w = asset["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|w| w["code"] == "retarget_end_effector")
        .expect("the warning in report.json");
    assert_eq!(w["severity"], "warning", "{w}");
    assert!(
        w["clip"].is_string() && w["joint"].is_string() && w["time_s"].is_number(),
        "{w}"
    );
}

/// A profile that names a clip the file does not hold: the error names
/// the profile file and the field, and lists the clips there are.
#[test]
fn a_wrong_clip_name_names_the_profile_field_and_lists_the_clips() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    let wrong = |p: &str| {
        p.replacen(
            "[source.pose]\nkind = \"rest\"\n",
            "[source.pose]\nkind = \"clip_frame\"\nclip = \"cmu_walk_typo\"\ntime_s = 0.0\n",
            1,
        )
    };
    let (code, log) = cook_with_profile(d, wrong);
    assert_eq!(code, Some(1), "{log}");
    let line = log
        .lines()
        .find(|l| l.contains("cmu_walk_typo"))
        .unwrap_or_else(|| panic!("no clip error in\n{log}"));
    let profile = format!("profile '{PROFILE}'");
    for want in [
        profile.as_str(),
        "source.pose.clip",
        "not found",
        "clips: 'cmu_walk'",
    ] {
        assert!(line.contains(want), "no {want:?} in {line}");
    }
}

/// Split `glb` into `dir/name.gltf` and a buffer file at `bin_uri`
/// (relative to the .gltf).
fn split_gltf(glb: &[u8], dir: &Path, name: &str, bin_uri: &str) {
    let u32_at =
        |o: usize| u32::from_le_bytes([glb[o], glb[o + 1], glb[o + 2], glb[o + 3]]) as usize;
    let json_len = u32_at(12);
    let json = &glb[20..20 + json_len];
    let bin_at = 20 + json_len;
    let bin = &glb[bin_at + 8..bin_at + 8 + u32_at(bin_at)];
    let mut doc: Value = serde_json::from_slice(json).unwrap();
    doc["buffers"][0]["uri"] = Value::String(bin_uri.to_string());
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{name}.gltf")), doc.to_string()).unwrap();
    let bin_path = dir.join(bin_uri);
    std::fs::create_dir_all(bin_path.parent().unwrap()).unwrap();
    std::fs::write(bin_path, bin).unwrap();
}

/// A split glTF target (.gltf + .bin in its own folder) cooks: its
/// companion resolves relative to its own file, not the source's folder;
/// a buffer outside the target's folder is still refused, naming it.
#[test]
fn a_split_gltf_target_resolves_its_companion_next_to_itself() {
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let glb = std::fs::read(repo().join("fixtures/biped.glb")).unwrap();
    std::fs::create_dir_all(d.join("src")).unwrap();
    std::fs::write(d.join("src/biped.glb"), &glb).unwrap();
    split_gltf(&glb, &d.join("rig/split"), "biped", "biped.bin");
    let o = ludus_anim(
        &[
            "retarget",
            "suggest",
            "src/biped.glb",
            "rig/split/biped.gltf",
            "-o",
            "profiles/split.toml",
        ],
        d,
    );
    assert!(o.status.success(), "{}", text(&o));
    let (code, _, _, log) = cook_json(
        d,
        &[
            "src/biped.glb",
            "--retarget",
            "profiles/split.toml",
            "-o",
            "out",
        ],
    );
    assert_eq!(code, Some(0), "{log}");
    assert!(!log.contains("outside"), "{log}");
    // The same target with its buffer one folder up: refused.
    split_gltf(&glb, &d.join("rig/up"), "biped", "../biped_up.bin");
    let profile = std::fs::read_to_string(d.join("profiles/split.toml"))
        .unwrap()
        .replace("rig/split/biped.gltf", "rig/up/biped.gltf");
    std::fs::write(d.join("profiles/up.toml"), profile).unwrap();
    let o = ludus_anim(
        &[
            "cook",
            "--color",
            "never",
            "src/biped.glb",
            "--retarget",
            "profiles/up.toml",
            "-o",
            "out-up",
        ],
        d,
    );
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let log = text(&o);
    assert!(
        log.contains("rig/up/biped.gltf") && log.contains("outside"),
        "{log}"
    );
}

/// PAB's mocap onto MakeHuman's zombie rig from the command line: no foot
/// pops and no toe under the floor beyond the source's own (the toe of a
/// foot pitched by the source's heel-off went 4.1 cm under it before the
/// foot's children were kept above the floor; two plants at different
/// positions used to pop feet on other pairs).
#[test]
fn pab_onto_makehuman_keeps_toes_above_the_floor_without_pops() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    let (src, tgt) = (
        fx.join("fbx/pab_locomotions.fbx"),
        fx.join("bvh/makehuman_zombieWalk1.bvh"),
    );
    let (src, tgt) = (src.to_str().unwrap(), tgt.to_str().unwrap());
    let o = ludus_anim(&["retarget", "suggest", src, tgt, "-o", "p.toml"], d);
    assert!(o.status.success(), "{}", text(&o));
    let (code, _, _, log) = cook_json(d, &[src, "--retarget", "p.toml", "-o", "out"]);
    assert_eq!(code, Some(0), "{log}");
    let r = report(&d.join("out"));
    let clips = r["assets"][0]["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 3, "jog, run, walk");
    for c in clips {
        let m = &c["retarget"]["metrics"];
        let p = &m["floor_penetration"];
        let (t, s) = (
            p["target_m"].as_f64().unwrap(),
            p["source_m"].as_f64().unwrap(),
        );
        assert!(t <= s + 0.01, "{}: {p}", c["name"]);
        for f in m["foot_speeds"].as_array().unwrap() {
            assert!(
                f["peak_ratio"].as_f64().unwrap() <= 1.0,
                "{}: {f}",
                c["name"]
            );
        }
    }
}

/// A profile suggested with the target read in other units than the cook
/// reads it (`--target-units cm` on the Knight, whose glTF is in meters):
/// the cook fails with a units mismatch naming the side, the factor (100)
/// and the likely units, not "the rig changed"; a profile suggested with
/// the file's own units cooks.
#[test]
fn a_units_mismatch_is_named_with_its_factor() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fx, d, "");
    let o = ludus_anim(
        &[
            "retarget",
            "suggest",
            WALK,
            KNIGHT,
            "--target-units",
            "cm",
            "-o",
            "cm.toml",
        ],
        d,
    );
    assert!(d.join("cm.toml").is_file(), "{}", text(&o));
    edit(d, "ludus-anim.toml", PROFILE, "cm.toml");
    let (code, _, _, log) = cook_json(d, &[]);
    assert_eq!(code, Some(1), "{log}");
    for w in [
        "units mismatch",
        "target rig",
        "100x larger",
        "cm vs m",
        "--target-units",
    ] {
        assert!(log.contains(w), "no {w:?} in\n{log}");
    }
    assert!(!log.contains("the rig changed"), "{log}");
    let o = ludus_anim(&["retarget", "suggest", WALK, KNIGHT, "-o", "m.toml"], d);
    assert!(o.status.success(), "{}", text(&o));
    edit(d, "ludus-anim.toml", "cm.toml", "m.toml");
    let (code, _, _, log) = cook_json(d, &[]);
    assert_eq!(code, Some(0), "{log}");
}
