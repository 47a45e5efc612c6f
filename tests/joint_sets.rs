//! Masks and LOD plans from the command line (#46): a joint sets file
//! named by a `[[skeleton]]` or an `[[asset]]` cooks into every package on
//! that skeleton (the JSET section), reaches a game through
//! `Package::bindings().joint_sets` as `Request::Mask` words and weights,
//! is verified at cook time (masked and LOD decodes bit for bit against the
//! whole pose, FK too), reports decode cost and LOD skin displacement, and
//! is shown by `inspect`. Bad files are located errors.

mod common;
use common::*;
use ludus_anim_format::joint_sets::{contains, members};
use ludus_anim_format::math::Transform;
use ludus_anim_runtime::package::Package;
use ludus_anim_runtime::{Player, Request};
use std::path::Path;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let p = e.path();
        if p.is_dir() {
            copy_dir(&p, &to.join(e.file_name()));
        } else {
            std::fs::copy(&p, to.join(e.file_name())).unwrap();
        }
    }
}

/// The biped-split project with `tests/joint_sets/biped.joints.toml` on
/// its `[[skeleton]]`.
fn split_project(dir: &Path) {
    copy_dir(&repo().join("fixtures/biped-split"), dir);
    std::fs::copy(
        repo().join("tests/joint_sets/biped.joints.toml"),
        dir.join("rig/biped.joints.toml"),
    )
    .unwrap();
    let m = std::fs::read_to_string(dir.join("ludus-anim.toml")).unwrap();
    let m = m.replace(
        "source = \"rig/biped_rig.glb\"",
        "source = \"rig/biped_rig.glb\"\njoint_sets = \"rig/biped.joints.toml\"",
    );
    std::fs::write(dir.join("ludus-anim.toml"), m).unwrap();
}

fn bits(t: &Transform) -> [u32; 10] {
    let (q, p, s) = (t.rotation.to_array(), t.translation, t.scale);
    [q[0], q[1], q[2], q[3], p.x, p.y, p.z, s.x, s.y, s.z].map(f32::to_bits)
}

#[test]
fn a_skeletons_masks_and_lods_reach_every_package_and_decode_sparsely() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    split_project(dir);
    let o = ludus_anim(&["cook", ".", "--out", "out"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&dir.join("out"));
    let assets = r["assets"].as_array().unwrap();
    assert_eq!(assets.len(), 4);
    for (i, a) in assets.iter().enumerate() {
        let js = &a["joint_sets"];
        assert_eq!(js["file"], "rig/biped.joints.toml");
        assert_eq!(js["masks"].as_array().unwrap().len(), 3);
        assert_eq!(js["lods"].as_array().unwrap().len(), 3);
        let bytes = std::fs::read(package_path(&dir.join("out"), &r, i)).unwrap();
        let p = Package::load(&bytes).unwrap();
        let sets = &p.bindings().joint_sets;
        let sk = p.skeleton();
        let upper = sets.masks.iter().find(|m| m.name == "upper_body").unwrap();
        let w = |n: &str| upper.weights[sk.find_by_name(n).unwrap()];
        // Feathered over two joints from Spine; the neck excluded; the
        // hips and root sampled for FK but never blended.
        assert_eq!(
            (w("Spine"), w("Spine1"), w("Chest")),
            (1.0 / 3.0, 2.0 / 3.0, 1.0)
        );
        assert_eq!(
            (w("Neck"), w("Head"), w("Hips"), w("Root")),
            (0.0, 0.0, 0.0, 0.0)
        );
        let hips = sk.find_by_name("Hips").unwrap();
        assert!(contains(&upper.sample, hips) && !contains(&upper.write, hips));
        for j in members(&upper.sample) {
            if let Some(p) = sk.parent(j) {
                assert!(contains(&upper.sample, p), "sample set not ancestor-closed");
            }
        }
        // LOD2 keeps no finger; the pinned hands and their arms stay.
        let lod2 = &sets.lods[2];
        for (n, kept) in [
            ("LeftHandIndex1", false),
            ("LeftHand", true),
            ("LeftArm", true),
        ] {
            assert_eq!(
                contains(&lod2.retained, sk.find_by_name(n).unwrap()),
                kept,
                "{n}"
            );
        }
        // Through the one playback API: the mask's words are a request,
        // and give the whole pose's bits on every sampled joint.
        for clip in p.clips() {
            let defaults = p.sample_defaults(clip);
            let mut whole = Player::new(clip, defaults).unwrap();
            let mut sparse = Player::new(clip, defaults).unwrap();
            let n = sk.joint_count();
            let (mut a, mut b) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
            for k in 0..clip.num_samples() {
                let t = k as f32 / clip.sample_rate_hz();
                whole.seek(t);
                sparse.seek(t);
                whole.decode(Request::Pose, &mut a).unwrap();
                for set in [&upper.sample, &lod2.retained] {
                    sparse.decode(Request::Mask(set), &mut b).unwrap();
                    for j in members(set) {
                        assert_eq!(bits(&a[j]), bits(&b[j]));
                    }
                }
            }
            let m = &js["masks"][0];
            assert_eq!(m["poses_verified"], clip.num_samples());
            assert!(
                m["cost"]["tracks_decoded"].as_u64() < js["whole_pose"]["tracks_decoded"].as_u64()
            );
        }
    }
    // The skeleton package (skins, no clips): the remap and its bind-pose
    // displacement; the LOD re-points removed fingers to the hand.
    let skel = assets
        .iter()
        .find(|a| a["source"] == "rig/biped_rig.glb")
        .unwrap();
    let lod1 = &skel["joint_sets"]["lods"][1];
    assert_eq!(lod1["skins"][0]["remapped_entries"], 9);
    assert!(lod1["skins"][0]["bind_displacement_mm"].as_f64().unwrap() < 0.01);
    let i = assets.iter().position(|a| a == skel).unwrap();
    let path = package_path(&dir.join("out"), &r, i);
    let o = ludus_anim(&["inspect", path.to_str().unwrap()], dir);
    let s = text(&o);
    assert!(s.contains("upper_body: 19 weighted, 21 sampled"), "{s}");
    assert!(
        s.contains("Spine 0.333") && s.contains("Hips 0 (sampled for FK)"),
        "{s}"
    );
    assert!(s.contains("LOD2: 21 joints retained"), "{s}");
    assert!(
        s.contains("skin BipedSkin: LeftHandIndex1 -> LeftHand"),
        "{s}"
    );
    let o = ludus_anim(&["inspect", "--json", path.to_str().unwrap()], dir);
    let j: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(j["joint_sets"]["lods"].as_array().unwrap().len(), 3);
    assert_eq!(j["joint_sets"]["masks"][0]["weights"][0][0], "Spine");
}

/// Fox and Knight (third-party files): three masks or two, three LOD
/// levels, every pose verified, skin displacement measured per level
/// (nothing removed at LOD0, more removed below).
#[test]
fn fox_and_knight_masks_and_three_lods_cook_and_verify() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(fx.join("gltf/khronos_Fox.glb"), dir.join("Fox.glb")).unwrap();
    std::fs::copy(
        fx.join("gltf/quaternius_KnightCharacter.glb"),
        dir.join("Knight.glb"),
    )
    .unwrap();
    for f in ["fox", "knight"] {
        let name = format!("{f}.joints.toml");
        std::fs::copy(repo().join("tests/joint_sets").join(&name), dir.join(&name)).unwrap();
    }
    std::fs::write(
        dir.join("ludus-anim.toml"),
        "[[asset]]\nsources = [\"Fox.glb\"]\njoint_sets = \"fox.joints.toml\"\n\n\
         [[asset]]\nsources = [\"Knight.glb\"]\njoint_sets = \"knight.joints.toml\"\n",
    )
    .unwrap();
    let o = ludus_anim(&["cook", ".", "--out", "out"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&dir.join("out"));
    for a in r["assets"].as_array().unwrap() {
        let js = &a["joint_sets"];
        let samples: u64 = a["clips"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["samples"].as_u64().unwrap())
            .sum();
        for m in js["masks"].as_array().unwrap() {
            assert_eq!(m["poses_verified"], samples, "{}", m["name"]);
            assert!(m["joints_sampled"].as_u64() >= m["joints_weighted"].as_u64());
        }
        let lods = js["lods"].as_array().unwrap();
        assert_eq!(lods.len(), 3);
        let mut retained = u64::MAX;
        for (l, lod) in lods.iter().enumerate() {
            assert_eq!(lod["poses_verified"], samples);
            let n = lod["joints_retained"].as_u64().unwrap();
            assert!(n < retained || l == 0);
            retained = n;
            let skin = &lod["skins"][0];
            let clip_mm = skin["clip_displacement_mm"].as_f64().unwrap();
            println!(
                "{} LOD{l}: {n} joints, {} entries remapped, bind {} mm, clips {clip_mm} mm ({})",
                a["source"],
                skin["remapped_entries"],
                skin["bind_displacement_mm"],
                skin["worst_clip"]
            );
            if l == 0 {
                assert_eq!(clip_mm, 0.0);
            } else {
                assert!(clip_mm > 0.0 && skin["remapped_entries"].as_u64() > Some(0));
            }
        }
    }
}

fn cook_err(dir: &Path, joints: &str) -> String {
    std::fs::write(dir.join("rig/biped.joints.toml"), joints).unwrap();
    let o = ludus_anim(&["cook", ".", "--out", "out"], dir);
    assert!(!o.status.success(), "{}", text(&o));
    text(&o)
}

#[test]
fn bad_joint_sets_are_located_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    split_project(dir);
    let e = cook_err(dir, "[[mask]]\nname = \"up\"\nsubtrees = [\"Spin\"]\n");
    assert!(
        e.contains("rig/biped.joints.toml")
            && e.contains("mask 'up'")
            && e.contains("'Spin'")
            && e.contains("did you mean 'Spine'"),
        "{e}"
    );
    let e = cook_err(dir, "[[mask]]\nname = \"up\"\nweights = { Spine = 1.5 }\n");
    assert!(
        e.contains("rig/biped.joints.toml") && e.contains("[0, 1]"),
        "{e}"
    );
    let e = cook_err(dir, "[[mask]]\nname = \"up\"\nweights = { Spine = nan }\n");
    assert!(e.contains("not a number in [0, 1]"), "{e}");
    let e = cook_err(
        dir,
        "[lod]\n[[lod.level]]\nkeep = [\"Root\", \"Hips\", \"Spine1\"]\n",
    );
    assert!(
        e.contains("keeps 'Spine1' but not its parent 'Spine'"),
        "{e}"
    );
    let e = cook_err(
        dir,
        "[lod]\n[[lod.level]]\ndrop = [\"*Index*\"]\n[[lod.level]]\ndrop = [\"*Thumb*\"]\n",
    );
    assert!(e.contains("LOD level 1: retains 'LeftHandIndex1'"), "{e}");
    let e = cook_err(
        dir,
        "[lod]\npinned = [\"LeftHnd\"]\n[[lod.level]]\ndrop = []\n",
    );
    assert!(e.contains("did you mean 'LeftHand'"), "{e}");
    let e = cook_err(dir, "[[mask]]\nname = \"up\"\nsubtree = [\"Spine\"]\n");
    assert!(e.contains("did you mean `subtrees`"), "{e}");
    // Never read outside the project.
    let m = std::fs::read_to_string(dir.join("ludus-anim.toml")).unwrap();
    std::fs::write(
        dir.join("ludus-anim.toml"),
        m.replace("rig/biped.joints.toml", "../x.toml"),
    )
    .unwrap();
    let o = ludus_anim(&["cook", ".", "--out", "out"], dir);
    assert!(!o.status.success());
    assert!(
        text(&o).contains("must be a path inside the project"),
        "{}",
        text(&o)
    );
}

/// The generated 160-joint rig (fingers, face, twist joints): three masks
/// and three LOD levels cook and verify; each level decodes fewer tracks.
#[test]
fn the_generated_160_joint_rig_cooks_masks_and_three_lods() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_dir(&repo().join("fixtures/rig160"), dir);
    let o = ludus_anim(&["cook", ".", "--out", "out"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&dir.join("out"));
    let js = &r["assets"][0]["joint_sets"];
    assert_eq!(js["joints"], 160);
    let samples = &r["assets"][0]["clips"][0]["samples"];
    for m in js["masks"].as_array().unwrap() {
        assert_eq!(&m["poses_verified"], samples);
    }
    let tracks: Vec<u64> = js["lods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            assert_eq!(&l["poses_verified"], samples);
            l["cost"]["tracks_decoded"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(tracks.len(), 3);
    assert!(tracks[0] > tracks[1] && tracks[1] > tracks[2], "{tracks:?}");
    let retained: Vec<u64> = js["lods"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["joints_retained"].as_u64().unwrap())
        .collect();
    assert_eq!(retained, [160, 65, 23]);
}

/// The runtime checks the JSET section at load (behind a valid checksum):
/// a weight out of [0, 1], a sample set that is not ancestor-closed, a
/// truncated section are refused with a typed error, never a panic.
#[test]
fn the_jset_section_is_checked_at_load() {
    use ludus_anim_format::package::{reseal_checksum, SECTION_JOINT_SETS};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    split_project(dir);
    let o = ludus_anim(&["cook", ".", "--out", "out"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&dir.join("out"));
    let bytes = std::fs::read(package_path(&dir.join("out"), &r, 0)).unwrap();
    let u32_at = |b: &[u8], at: usize| u32::from_le_bytes(b[at..at + 4].try_into().unwrap());
    let u64_at = |b: &[u8], at: usize| u64::from_le_bytes(b[at..at + 8].try_into().unwrap());
    let count = u32_at(&bytes, 24) as usize;
    let entry = (0..count)
        .map(|i| 64 + 24 * i)
        .find(|&e| u32_at(&bytes, e) == SECTION_JOINT_SETS)
        .expect("a JSET section");
    let (off, size) = (
        u64_at(&bytes, entry + 8) as usize,
        u64_at(&bytes, entry + 16),
    );
    let joints = u32_at(&bytes, off) as usize;
    let corrupt = |edit: &dyn Fn(&mut Vec<u8>)| {
        let mut b = bytes.clone();
        edit(&mut b);
        reseal_checksum(&mut b);
        Package::load(&b).map(|_| ()).unwrap_err().to_string()
    };
    // Mask 0's first weight (after the 16-byte header, name and range count).
    let w0 = off + 16 + 8;
    let e = corrupt(&|b| b[w0..w0 + 4].copy_from_slice(&1.5f32.to_le_bytes()));
    assert!(e.contains("mask 'upper_body'"), "{e}");
    // Mask 0's sample set without the root (bit 0): not ancestor-closed.
    let sample = w0 + 4 * joints + 8 * joints.div_ceil(64);
    let e = corrupt(&|b| b[sample] &= !1);
    assert!(e.contains("mask 'upper_body'"), "{e}");
    // A section one word shorter than its sets.
    let e = corrupt(&|b| {
        let s = (size - 8).to_le_bytes();
        b[entry + 16..entry + 24].copy_from_slice(&s);
    });
    assert!(e.contains("JSET") || e.contains("truncated"), "{e}");
    assert!(Package::load(&bytes).is_ok());
}
