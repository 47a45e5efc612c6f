//! Every ACL anchor clip imports cleanly and matches the anchor table.

use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_model::source::validate_asset;
use std::path::PathBuf;

/// `LUDUS_SHARED_ANCHORS`, else `<repo>/../shared/anchors`.
fn anchors_dir() -> PathBuf {
    match std::env::var_os("LUDUS_SHARED_ANCHORS") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/anchors"),
    }
}

/// One row of `acl_dev_clips.csv`.
struct Row {
    clip: String,
    bones: usize,
    samples: u32,
    rate: f32,
    looping: bool,
}

fn read_table(text: &str) -> Vec<Row> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().expect("header").split(',').collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| *h == name)
            .unwrap_or_else(|| panic!("no column {name}"))
    };
    let (c_clip, c_bones, c_samples, c_rate, c_loop) = (
        col("clip"),
        col("bones"),
        col("samples"),
        col("sample_rate_hz"),
        col("looping"),
    );
    lines
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            // No field of the columns used here contains a comma.
            let f: Vec<&str> = l.split(',').collect();
            Row {
                clip: f[c_clip].to_string(),
                bones: f[c_bones].parse().unwrap(),
                samples: f[c_samples].parse().unwrap(),
                rate: f[c_rate].parse().unwrap(),
                looping: f[c_loop] == "true",
            }
        })
        .collect()
}

#[test]
fn all_anchor_clips_import_with_expected_counts() {
    let dir = anchors_dir();
    let Ok(table) = std::fs::read_to_string(dir.join("acl_dev_clips.csv")) else {
        println!(
            "skipped: no anchors at {} (set LUDUS_SHARED_ANCHORS)",
            dir.display()
        );
        return;
    };
    let rows = read_table(&table);
    assert_eq!(rows.len(), 41);
    for row in &rows {
        let path = dir
            .join("acl-clips")
            .join(format!("{}.acl.sjson", row.clip));
        let asset = import_file(&path, &ImportOptions::default())
            .unwrap_or_else(|e| panic!("{}: {e}", row.clip));
        let mut diags = asset.diagnostics.clone();
        diags.extend(validate_asset(&asset));
        let errors: Vec<String> = diags.errors().map(|d| d.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", row.clip);

        assert_eq!(asset.format, ludus_anim_model::SourceFormat::AclSjson);
        assert_eq!(asset.skeleton.joints.len(), row.bones, "{}", row.clip);
        assert_eq!(asset.unit_scale_m, 0.01);
        assert_eq!(
            asset.joint_shell_distance.as_ref().map(Vec::len),
            Some(row.bones)
        );
        assert!(asset
            .decisions
            .iter()
            .any(|d| d.kind == "assumed_units" && d.detail.contains("centimetres")));
        assert!(asset.decisions.iter().any(|d| d.kind == "assumed_axes"));

        let clip = &asset.clips[0];
        assert_eq!(clip.name, row.clip);
        assert_eq!(clip.frame_rate_hz, Some(row.rate));
        // The table counts samples after ACL's `optimize_loops`, which drops
        // the last sample of a looping clip (it repeats the first): the raw
        // file has one more.
        let num_samples = row.samples + u32::from(row.looping);
        let expected_duration = (num_samples - 1) as f32 / row.rate;
        assert!(
            (clip.duration_s - expected_duration).abs() < 1e-5,
            "{}",
            row.clip
        );
        assert_eq!(clip.key_times.len(), num_samples as usize, "{}", row.clip);
        for tr in &clip.tracks {
            let lens = [
                tr.rotation.as_ref().map(|c| c.keys.len()),
                tr.translation.as_ref().map(|c| c.keys.len()),
                tr.scale.as_ref().map(|c| c.keys.len()),
            ];
            for n in lens.into_iter().flatten() {
                assert_eq!(n, num_samples as usize, "{}", row.clip);
            }
        }
    }
}

#[test]
fn rigged_simple_values_and_hierarchy() {
    let dir = anchors_dir();
    let path = dir.join("acl-clips/khronos_RiggedSimple_embedded__anim0.acl.sjson");
    if !path.exists() {
        println!(
            "skipped: no anchors at {} (set LUDUS_SHARED_ANCHORS)",
            dir.display()
        );
        return;
    }
    let asset = import_file(&path, &ImportOptions::default()).unwrap();
    let sk = &asset.skeleton;
    assert_eq!(sk.joints[0].name, "Bone");
    assert_eq!(sk.joints[0].parent, None);
    assert_eq!(sk.joints[1].parent, Some(0));
    assert_eq!(asset.joint_shell_distance, Some(vec![3.0, 3.0]));
    let clip = &asset.clips[0];
    assert_eq!(clip.tracks.len(), 2);
    let t = clip.tracks[0].translation.as_ref().unwrap();
    assert_eq!(t.keys[0].value.z, -418.032_99_f64 as f32);
    assert!((t.keys[1].time - 1.0 / 24.0).abs() < 1e-7);
}
