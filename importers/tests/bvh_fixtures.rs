//! Every BVH fixture imports cleanly, with the joint and frame counts the
//! fixture manifest records.

use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::{Quat, SourceAsset};
use std::path::{Path, PathBuf};

/// `LUDUS_SHARED_FIXTURES`, else `<repo>/../shared/fixtures`.
fn fixtures_dir() -> PathBuf {
    match std::env::var_os("LUDUS_SHARED_FIXTURES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures"),
    }
}

/// BVH rows of MANIFEST.tsv: (local_path, joints, frames).
///
/// The manifest's `joints` column counts ROOT + JOINT entries and excludes
/// End Sites, which it lists separately in `anim_objects` (`end_sites=N`):
/// CMU 31 (+7 End Sites), MakeHuman zombieWalk1 75 (+16), MakeHuman T-pose
/// 173 (+49). That is exactly what the importer produces by default, since
/// End Sites are dropped unless `keep_unused_leaves` is set.
fn manifest_rows(dir: &Path) -> Option<Vec<(String, usize, usize, usize)>> {
    let text = std::fs::read_to_string(dir.join("MANIFEST.tsv")).ok()?;
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next()?.split('\t').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (c_path, c_format, c_joints, c_anim) = (
        col("local_path"),
        col("format"),
        col("joints"),
        col("anim_objects"),
    );
    let field = |anim: &str, key: &str| -> usize {
        anim.split_whitespace()
            .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
            .unwrap()
            .parse()
            .unwrap()
    };
    Some(
        lines
            .map(|l| l.split('\t').collect::<Vec<_>>())
            .filter(|f| f.get(c_format) == Some(&"BVH"))
            .map(|f| {
                (
                    f[c_path].to_string(),
                    f[c_joints].parse().unwrap(),
                    field(f[c_anim], "frames"),
                    field(f[c_anim], "end_sites"),
                )
            })
            .collect(),
    )
}

fn no_errors(asset: &SourceAsset) {
    let mut d = asset.diagnostics.clone();
    d.extend(validate_asset(asset));
    let errors: Vec<String> = d.errors().map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{}: {errors:?}", asset.path);
}

#[test]
fn every_fixture_imports_with_manifest_counts() {
    let dir = fixtures_dir();
    let Some(rows) = manifest_rows(&dir) else {
        println!(
            "skipped: no fixtures at {} (set LUDUS_SHARED_FIXTURES)",
            dir.display()
        );
        return;
    };
    assert!(
        rows.len() >= 4,
        "expected the 4 BVH fixtures, found {}",
        rows.len()
    );
    for (rel, joints, frames, end_sites) in rows {
        let path = dir.join(&rel);
        let started = std::time::Instant::now();
        let asset =
            import_file(&path, &ImportOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
        println!(
            "{rel}: {} joints, imported in {:?}",
            asset.skeleton.joints.len(),
            started.elapsed()
        );
        no_errors(&asset);
        assert_eq!(asset.format, ludus_anim_model::SourceFormat::Bvh);
        assert_eq!(asset.skeleton.joints.len(), joints, "{rel}");
        assert_eq!(asset.unit_scale_m, 0.01);
        assert!(asset
            .decisions
            .iter()
            .any(|d| d.kind == "assumed_units" && d.detail.contains("centimetres")));
        assert!(asset
            .decisions
            .iter()
            .any(|d| d.kind == "assumed_axes" && d.detail.contains("+Y up")));
        assert!(asset.decisions.iter().any(|d| d.kind == "dropped_end_sites"
            && d.detail.starts_with(&format!("{end_sites} End Site"))));

        let clip = &asset.clips[0];
        let stem = path.file_stem().unwrap().to_str().unwrap();
        assert_eq!(clip.name, stem);
        assert_eq!(clip.key_times.len(), frames, "{rel}");
        let rate = clip.frame_rate_hz.unwrap();
        assert!(rate == 120.0 || rate == 24.0, "{rel}: {rate}");
        let expected = (frames - 1) as f32 / rate;
        assert!(
            (clip.duration_s - expected).abs() < 1e-4,
            "{rel}: {} vs {expected}",
            clip.duration_s
        );
        for tr in &clip.tracks {
            if let Some(r) = &tr.rotation {
                assert_eq!(r.keys.len(), frames);
                // Hemisphere-continuous.
                assert!(r.keys.windows(2).all(|w| w[0].value.dot(w[1].value) >= 0.0));
            }
        }

        // Keeping End Sites adds them as `<parent>_end` joints.
        let opts = ImportOptions {
            keep_unused_leaves: true,
            custom_curves: Vec::new(),
        };
        let all = import_file(&path, &opts).unwrap();
        no_errors(&all);
        assert_eq!(all.skeleton.joints.len(), joints + end_sites, "{rel}");
        assert!(all.skeleton.joints.iter().any(|j| j.name.ends_with("_end")));
    }
}

#[test]
fn cmu_root_and_rotation_values() {
    let path = fixtures_dir().join("bvh/cmu_01_01.bvh");
    if !path.exists() {
        println!("skipped: no fixtures at {}", path.display());
        return;
    }
    let asset = import_file(&path, &ImportOptions::default()).unwrap();
    let sk = &asset.skeleton;
    assert_eq!(sk.joints[0].name, "Hips");
    assert_eq!(sk.joints[0].parent, None);
    assert_eq!(sk.joints[1].name, "LHipJoint");
    assert_eq!(sk.joints[1].parent, Some(0));
    assert_eq!(sk.joints[2].rest.translation.x, 1.36306);
    let clip = &asset.clips[0];
    assert_eq!(clip.frame_rate_hz, Some(120.0));
    assert!(asset
        .decisions
        .iter()
        .any(|d| d.kind == "frame_time" && d.detail.contains("1/120")));
    // Frame 0 of the root: position 9.3722 17.8693 -17.3198, rotation
    // Z Y X = 0 0 0; LHipJoint (ZYX) = 0 0 0; LeftUpLeg Z = -17.
    let root = clip.tracks.iter().find(|t| t.joint == 0).unwrap();
    let t0 = root.translation.as_ref().unwrap().keys[0].value;
    assert_eq!(t0.to_array(), [9.3722, 17.8693, -17.3198]);
    assert_eq!(
        root.rotation.as_ref().unwrap().keys[0].value,
        Quat::IDENTITY
    );
    let leg = clip.tracks.iter().find(|t| t.joint == 2).unwrap();
    assert!(leg.translation.is_none());
    let q = leg.rotation.as_ref().unwrap().keys[0].value;
    assert!(q.angle_between(Quat::from_rotation_z((-17.0f32).to_radians())) < 1e-5);
}

#[test]
fn makehuman_tpose_keeps_its_bones() {
    let path = fixtures_dir().join("bvh/makehuman_tpose.bvh");
    if !path.exists() {
        println!("skipped: no fixtures at {}", path.display());
        return;
    }
    let asset = import_file(&path, &ImportOptions::default()).unwrap();
    // 144 joints carry position channels; all but the root's are zero (plus
    // float noise under 0.02% of the OFFSET) in the single frame, so they
    // are offsets and the T-pose keeps its bone lengths: every animated
    // translation stays at the rest OFFSET.
    let d = asset
        .decisions
        .iter()
        .find(|d| d.kind == "position_channels_as_offsets")
        .expect("decision");
    assert!(d.detail.contains("143 joint(s)"), "{}", d.detail);
    let mut checked = 0;
    for tr in &asset.clips[0].tracks {
        let joint = &asset.skeleton.joints[tr.joint];
        if let (Some(t), Some(_)) = (&tr.translation, joint.parent) {
            let d = t.keys[0].value.distance(joint.rest.translation);
            assert!(
                d <= 2e-4 * joint.rest.translation.length(),
                "{}",
                joint.name
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 143);
}
