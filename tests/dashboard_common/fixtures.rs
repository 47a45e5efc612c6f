//! The shared fixtures cooked the ways the dashboard tests need: the
//! standard, hero and crowd profiles (each with its sidecar), and a
//! baseline in which one clip was cooked tighter (the "one clip changed"
//! case). One clip (pab_locomotions walk) gets root motion, markers and
//! events so the page shows a real trajectory and timeline.

use super::*;

pub struct FixtureCooks {
    pub dir: tempfile::TempDir,
    pub standard: PathBuf,
    pub hero: PathBuf,
    pub crowd: PathBuf,
    pub baseline: PathBuf,
    pub clips: usize,
}

/// A profile file named `standard` with another threshold: a cook with it
/// keys its clips exactly as a standard cook (same profile name).
pub fn standard_at(dir: &Path, threshold_m: f32) -> PathBuf {
    let text =
        std::fs::read_to_string(repo().join("profiles/standard.toml")).expect("standard profile");
    let text = text.replace(
        "error_threshold_m = 0.0001",
        &format!("error_threshold_m = {threshold_m}"),
    );
    let p = dir.join(format!("standard-{threshold_m}.toml"));
    std::fs::write(&p, text).expect("profile written");
    p
}

fn walk_settings(profile: Option<&Path>) -> AssetEntry {
    let mut s = settings(
        r#"
sources = []
[clips.walk]
loop = "loop"
root_motion = { joint = "Hips", policy = "planar" }
markers = [
  { name = "foot_l", time_s = 0.0, kind = "sync" },
  { name = "step_l", time_s = 0.3, kind = "event" },
  { name = "foot_r", time_s = 0.65, kind = "sync" },
  { name = "step_r", time_s = 0.95, kind = "event", reversible = true },
]
"#,
    );
    if let (Some(p), Some(c)) = (profile, s.clips.get_mut("walk")) {
        c.profile = Some(p.display().to_string());
    }
    s
}

fn cook_with_sidecar(
    root: &Path,
    files: &[PathBuf],
    out: &Path,
    profile: &str,
    extra: &[(&str, AssetEntry)],
) -> Report {
    // The cook writes its own sidecar (`report-sidecar.json`).
    cook_jobs(jobs(files, extra), root, out, profile, false)
}

/// Cook everything; `None` (with a message) without the shared fixtures.
pub fn fixture_cooks() -> Option<FixtureCooks> {
    let root = shared_fixtures()?;
    let files = fixture_files(&root);
    let dir = tempfile::tempdir().expect("temp dir");
    let d = dir.path();
    let extra = [("pab_locomotions.fbx", walk_settings(None))];
    let mut clips = 0;
    for (name, profile) in [
        ("standard", "standard"),
        ("hero", "hero"),
        ("crowd", "crowd"),
    ] {
        let r = cook_with_sidecar(&root, &files, &d.join(name), profile, &extra);
        clips += r.totals.clips;
    }
    let tight = standard_at(d, 0.00005);
    let base_extra = [("pab_locomotions.fbx", walk_settings(Some(&tight)))];
    cook_with_sidecar(&root, &files, &d.join("baseline"), "standard", &base_extra);
    Some(FixtureCooks {
        standard: d.join("standard"),
        hero: d.join("hero"),
        crowd: d.join("crowd"),
        baseline: d.join("baseline"),
        clips,
        dir,
    })
}
