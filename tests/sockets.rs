//! Sockets from the command line (#45 item 5): a glTF's non-bone child
//! nodes become sockets on their joints, cooked into the package's SOCK
//! section at the very frame the node has (checked against a cook that
//! keeps those nodes as joints), and every pose clip reports its error at
//! each socket, which `inspect` shows; manifest sockets on a shared
//! skeleton land in the skeleton's package, its clip packages measure
//! them; an unknown joint is a located error with a suggestion; a
//! retargeted asset keeps the target rig's sockets and maps a manifest
//! socket on a source joint through the profile's chains (or fails
//! naming the socket and joint); the runtime refuses a SOCK section
//! naming a joint outside the skeleton.

mod common;
use common::retarget::{edit, project, PROFILE};
use common::*;
use ludus_anim_format::math::{Affine3A, Quat, Vec3};
use ludus_anim_runtime::package::Package;
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

/// Component-space rest transforms of a package's skeleton.
fn rest_component(p: &Package<'_>) -> Vec<Affine3A> {
    let sk = p.skeleton();
    let mut out = vec![Affine3A::IDENTITY; sk.joint_count()];
    assert!(sk.local_to_component(sk.rest_pose(), &mut out));
    out
}

#[test]
fn gltf_child_nodes_are_sockets_at_their_node_frames_with_their_error_reported() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    std::fs::copy(
        fx.join("gltf/quaternius_KnightCharacter.glb"),
        dir.join("knight.glb"),
    )
    .unwrap();
    let o = ludus_anim(&["cook", "knight.glb", "--out", "out"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let o = ludus_anim(
        &[
            "cook",
            "knight.glb",
            "--out",
            "kept",
            "--keep-unused-leaves",
        ],
        dir,
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&dir.join("out"));
    let bytes = std::fs::read(package_path(&dir.join("out"), &r, 0)).unwrap();
    let p = Package::load(&bytes).unwrap();
    let kept_r = report(&dir.join("kept"));
    let kept_bytes = std::fs::read(package_path(&dir.join("kept"), &kept_r, 0)).unwrap();
    let kept = Package::load(&kept_bytes).unwrap();
    assert!(
        kept.bindings().sockets.is_empty(),
        "kept as joints, no sockets"
    );

    let sockets = &p.bindings().sockets;
    assert_eq!(sockets.len(), 11, "{sockets:?}");
    let head = sockets.iter().find(|s| s.name == "Head_end").unwrap();
    assert_eq!(p.skeleton().name(head.joint as usize), "Head");
    // Each socket at rest is where the node is when kept as a joint.
    let (world, kept_world) = (rest_component(&p), rest_component(&kept));
    for s in sockets {
        let offset = Affine3A::from_rotation_translation(
            Quat::from_array(s.rotation),
            Vec3::from_array(s.translation),
        );
        let at = world[s.joint as usize] * offset;
        let j = kept.skeleton().find_by_name(s.name).expect("kept joint");
        let d = at.translation.distance(kept_world[j].translation);
        assert!(d < 1e-6, "socket {}: {d} m from its node", s.name);
    }

    // Every pose clip reports an error at every socket; the report's
    // figures are within the clip's error budget scale and not all zero.
    let clips = r["assets"][0]["clips"].as_array().unwrap();
    let mut largest = 0.0f64;
    for c in clips {
        let errors = c["sockets"].as_array().expect("socket errors");
        assert_eq!(errors.len(), 11, "{}", c["name"]);
        for e in errors {
            let m = e["max_error_m"].as_f64().unwrap();
            assert!(m.is_finite() && m < 0.001, "{c:#}");
            largest = largest.max(m);
        }
    }
    assert!(largest > 0.0, "a lossy codec leaves some error at sockets");

    let pkg = package_path(&dir.join("out"), &r, 0);
    let o = ludus_anim(&["inspect", pkg.to_str().unwrap()], dir);
    let t = text(&o);
    assert!(t.contains("sockets:        11"), "{t}");
    assert!(t.contains("Head_end on Head"), "{t}");
    assert!(t.contains("socket error (from the cook report):"), "{t}");
    let o = ludus_anim(&["inspect", "--json", pkg.to_str().unwrap()], dir);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["sockets"].as_array().unwrap().len(), 11);
    assert_eq!(
        v["socket_errors"].as_array().unwrap().len(),
        clips.len(),
        "{v:#}"
    );
}

fn with_skeleton_sockets(dir: &Path, sockets: &str) {
    let manifest = std::fs::read_to_string(dir.join("ludus-anim.toml")).unwrap();
    let manifest = manifest.replace(
        "source = \"rig/biped_rig.glb\"\n",
        &format!("source = \"rig/biped_rig.glb\"\nsockets = [{sockets}]\n"),
    );
    std::fs::write(dir.join("ludus-anim.toml"), manifest).unwrap();
}

#[test]
fn manifest_sockets_go_with_the_shared_skeleton_and_unknown_joints_are_located() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_dir(&repo().join("fixtures/biped-split"), dir);
    with_skeleton_sockets(
        dir,
        "{ name = \"grip_l\", joint = \"LeftHand\", translation = [0.0, 0.08, 0.02], rotation = [0.0, 0.0, 0.7071068, 0.7071068] }",
    );
    let o = ludus_anim(&["cook"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let out = dir.join("out");
    let r = report(&out);
    let mut skeletons = 0;
    let mut measured = 0;
    for a in r["assets"].as_array().unwrap() {
        let bytes = std::fs::read(out.join(a["package"].as_str().unwrap())).unwrap();
        let p = Package::load(&bytes).unwrap();
        let name = a["package"].as_str().unwrap();
        if name.contains("biped.skeleton-") {
            skeletons += 1;
            let s = &p.bindings().sockets;
            assert_eq!(s.len(), 1, "{s:?}");
            assert_eq!(s[0].name, "grip_l");
            assert_eq!(p.skeleton().name(s[0].joint as usize), "LeftHand");
            assert_eq!(s[0].translation, [0.0, 0.08, 0.02]);
            assert!((s[0].rotation[3] - std::f32::consts::FRAC_1_SQRT_2).abs() < 1e-6);
        } else {
            assert!(
                p.bindings().sockets.is_empty(),
                "{name}: a bound clip package leaves sockets to its skeleton's"
            );
            for c in a["clips"].as_array().unwrap() {
                let e = c["sockets"]
                    .as_array()
                    .expect("measured at the skeleton's sockets");
                assert_eq!(e[0]["socket"], "grip_l");
                assert_eq!(e[0]["joint"], "LeftHand");
                measured += 1;
            }
        }
    }
    assert_eq!(skeletons, 1);
    assert!(measured >= 1);

    // A joint the skeleton lacks: located error, closest name suggested.
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_dir(&repo().join("fixtures/biped-split"), dir);
    with_skeleton_sockets(dir, "{ name = \"grip_l\", joint = \"LeftHnd\" }");
    let o = ludus_anim(&["cook", "--color", "never"], dir);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("unknown_socket_joint"), "{t}");
    assert!(t.contains("socket 'grip_l': joint 'LeftHnd'"), "{t}");
    assert!(t.contains("did you mean 'LeftHand'?"), "{t}");
    assert!(t.contains("biped_rig.glb"), "{t}");

    // Sockets on a bound asset belong to its skeleton: a manifest error.
    let manifest = std::fs::read_to_string(dir.join("ludus-anim.toml")).unwrap();
    std::fs::write(
        dir.join("ludus-anim.toml"),
        manifest.replace(
            "skeleton = \"biped\"\n",
            "skeleton = \"biped\"\nsockets = [{ name = \"x\", joint = \"Head\" }]\n",
        ),
    )
    .unwrap();
    let o = ludus_anim(&["cook", "--color", "never"], dir);
    assert!(!o.status.success());
    assert!(text(&o).contains("go in that [[skeleton]]"), "{}", text(&o));
}

/// The `end` of the target chain named `name` in a retarget profile's
/// text (the second `[[...chain]]` of that name: source first).
fn target_chain_end(profile: &str, name: &str) -> String {
    let at = profile
        .match_indices(&format!("name = \"{name}\""))
        .nth(1)
        .expect("a target chain")
        .0;
    let rest = &profile[at..];
    let end = rest.find("end = \"").unwrap() + 7;
    rest[end..].split('"').next().unwrap().to_string()
}

#[test]
fn a_retarget_keeps_the_targets_sockets_and_maps_manifest_ones_through_chains() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    // 'sword' names a source joint (the end of the source's arm_l chain),
    // 'belt' a target joint.
    project(
        &fx,
        dir,
        "sockets = [{ name = \"sword\", joint = \"LeftHand\", translation = [0.0, 0.1, 0.0] }, { name = \"belt\", joint = \"Torso\" }]\n",
    );
    let o = ludus_anim(&["cook", "--color", "never"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let out = dir.join("out");
    let r = report(&out);
    let bytes = std::fs::read(package_path(&out, &r, 0)).unwrap();
    let p = Package::load(&bytes).unwrap();
    let sk = p.skeleton();
    let sockets = &p.bindings().sockets;
    let on = |name: &str| {
        let s = sockets
            .iter()
            .find(|s| s.name == name)
            .unwrap_or_else(|| panic!("{name}: {sockets:?}"));
        sk.name(s.joint as usize).to_string()
    };
    // The Knight's own sockets stay on its joints.
    assert_eq!(on("Head_end"), "Head");
    assert_eq!(on("belt"), "Torso");
    let profile = std::fs::read_to_string(dir.join(PROFILE)).unwrap();
    assert_eq!(on("sword"), target_chain_end(&profile, "arm_l"));
    let decisions = r["assets"][0]["decisions"].to_string();
    assert!(decisions.contains("socket_retargeted"), "{decisions}");
    // Measured on the retargeted clip.
    let e = r["assets"][0]["clips"][0]["sockets"].as_array().unwrap();
    assert!(e.iter().any(|e| e["socket"] == "sword"));

    // A source joint in no mapped chain: located error.
    edit(
        dir,
        "ludus-anim.toml",
        "joint = \"LeftHand\"",
        "joint = \"LHipJoint\"",
    );
    let o = ludus_anim(&["cook", "--color", "never"], dir);
    assert!(!o.status.success());
    let t = text(&o);
    assert!(t.contains("unmapped_socket_joint"), "{t}");
    assert!(
        t.contains("socket 'sword': joint 'LHipJoint' of the source skeleton"),
        "{t}"
    );
    assert!(t.contains("cmu_walk.bvh"), "{t}");
}

/// The SOCK section's bytes in a package, as (offset, size).
fn sock_section(bytes: &[u8]) -> (usize, usize) {
    use ludus_anim_format::package::{HEADER_SIZE, SECTION_ENTRY_SIZE, SECTION_SOCKETS};
    let u32_at = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
    let u64_at = |at: usize| u64::from_le_bytes(bytes[at..at + 8].try_into().unwrap());
    let count = u32_at(24) as usize;
    (0..count)
        .map(|i| HEADER_SIZE + i * SECTION_ENTRY_SIZE)
        .find(|&at| u32_at(at) == SECTION_SOCKETS)
        .map(|at| (u64_at(at + 8) as usize, u64_at(at + 16) as usize))
        .expect("a SOCK section")
}

/// A SOCK section naming a joint outside the skeleton, holding a
/// non-unit rotation, or cut short is refused at load (typed error).
#[test]
fn the_runtime_refuses_a_bad_sock_section() {
    use ludus_anim_format::package::reseal_checksum;
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    copy_dir(&repo().join("fixtures/biped-split"), dir);
    with_skeleton_sockets(dir, "{ name = \"grip_l\", joint = \"LeftHand\" }");
    let o = ludus_anim(&["cook"], dir);
    assert!(o.status.success(), "{}", text(&o));
    let (_, good) = packages(&dir.join("out"))
        .into_iter()
        .find(|(n, _)| n.starts_with("biped.skeleton-"))
        .unwrap();
    assert!(Package::load(&good).is_ok());
    let (at, size) = sock_section(&good);
    let corrupt = |f: &dyn Fn(&mut [u8])| {
        let mut b = good.clone();
        f(&mut b);
        reseal_checksum(&mut b);
        Package::load(&b).err().map(|e| e.to_string())
    };
    // Record 0 starts after the 8-byte header: name, joint, t, r.
    let joint = corrupt(&|b| b[at + 12..at + 16].copy_from_slice(&999u32.to_le_bytes()));
    assert!(
        joint.as_deref().is_some_and(|e| e.contains("joint 999")),
        "{joint:?}"
    );
    let rot = corrupt(&|b| b[at + 36..at + 40].copy_from_slice(&2.0f32.to_le_bytes()));
    assert!(
        rot.as_deref()
            .is_some_and(|e| e.contains("unit quaternion")),
        "{rot:?}"
    );
    let count = corrupt(&|b| b[at..at + 4].copy_from_slice(&2u32.to_le_bytes()));
    assert!(count.is_some(), "a count beyond the section");
    assert_eq!(size, 8 + 36);
}
