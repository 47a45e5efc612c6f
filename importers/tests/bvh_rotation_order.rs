//! Euler channels compose in the order the file lists them.

use ludus_anim_importers::{bvh, ImportOptions, Importer};
use ludus_anim_model::{Quat, SourceAsset, Vec3};
use std::path::Path;

/// A one-joint BVH whose root has position channels then the three
/// rotation channels in `order`, with one frame of `values`.
fn one_joint(order: &str, values: &str) -> String {
    format!(
        "HIERARCHY\nROOT Hips\n{{\n\tOFFSET 1 2 3\n\tCHANNELS 6 Xposition Yposition Zposition {order}\n\tEnd Site\n\t{{\n\t\tOFFSET 0 1 0\n\t}}\n}}\nMOTION\nFrames: 2\nFrame Time: 0.1\n{values}\n{values}\n"
    )
}

fn import(text: &str) -> SourceAsset {
    bvh::BVH
        .import(
            Path::new("order.bvh"),
            text.as_bytes(),
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .unwrap()
}

fn rotation(a: &SourceAsset) -> Quat {
    a.clips[0].tracks[0].rotation.as_ref().unwrap().keys[0].value
}

fn same_rotation(a: Quat, b: Quat) -> bool {
    a.dot(b).abs() > 1.0 - 1e-6
}

#[test]
fn xyz_and_zyx_orders_compose_left_to_right() {
    let (x, y, z) = (30.0f32, -50.0f32, 70.0f32);
    let (rx, ry, rz) = (
        Quat::from_rotation_x(x.to_radians()),
        Quat::from_rotation_y(y.to_radians()),
        Quat::from_rotation_z(z.to_radians()),
    );

    // Values are listed in channel order.
    let xyz = import(&one_joint(
        "Xrotation Yrotation Zrotation",
        &format!("0 0 0 {x} {y} {z}"),
    ));
    assert!(
        same_rotation(rotation(&xyz), rx * ry * rz),
        "{:?}",
        rotation(&xyz)
    );

    let zyx = import(&one_joint(
        "Zrotation Yrotation Xrotation",
        &format!("0 0 0 {z} {y} {x}"),
    ));
    assert!(
        same_rotation(rotation(&zyx), rz * ry * rx),
        "{:?}",
        rotation(&zyx)
    );

    // Same angles, different order: a different rotation.
    assert!(!same_rotation(rotation(&xyz), rotation(&zyx)));
}

#[test]
fn order_is_visible_on_a_vector() {
    // Column vectors: the rightmost factor applies first.
    // Rz(90) * Rx(90) on +Y: Rx sends Y to +Z, Rz leaves Z alone: +Z.
    // Rx(90) * Rz(90) on +Y: Rz sends Y to -X, Rx leaves X alone: -X.
    let zx = import(&one_joint("Zrotation Xrotation Yrotation", "0 0 0 90 90 0"));
    let xz = import(&one_joint("Xrotation Zrotation Yrotation", "0 0 0 90 90 0"));
    assert!((rotation(&zx) * Vec3::Y - Vec3::Z).length() < 1e-5);
    assert!((rotation(&xz) * Vec3::Y - Vec3::NEG_X).length() < 1e-5);
}

#[test]
fn position_channels_replace_offset_and_rest_is_offset() {
    let a = import(&one_joint(
        "Zrotation Xrotation Yrotation",
        "10 20 30 0 0 0",
    ));
    assert_eq!(a.skeleton.joints.len(), 1);
    assert_eq!(
        a.skeleton.joints[0].rest.translation,
        Vec3::new(1.0, 2.0, 3.0)
    );
    let t = a.clips[0].tracks[0].translation.as_ref().unwrap();
    assert_eq!(t.keys[0].value, Vec3::new(10.0, 20.0, 30.0));
    assert_eq!(a.clips[0].frame_rate_hz, Some(10.0));
    assert!((a.clips[0].duration_s - 0.1).abs() < 1e-7);
}

#[test]
fn rotations_are_hemisphere_continuous() {
    // 170 then 190 degrees about Y: the second quaternion, as computed, has
    // w < 0; it is flipped to stay next to the first.
    let text = "HIERARCHY\nROOT r\n{\n OFFSET 0 0 0\n CHANNELS 1 Yrotation\n}\nMOTION\nFrames: 2\nFrame Time: 0.5\n170\n190\n";
    let a = import(text);
    let keys = &a.clips[0].tracks[0].rotation.as_ref().unwrap().keys;
    assert!(keys[0].value.dot(keys[1].value) > 0.0);
    assert!(same_rotation(
        keys[1].value,
        Quat::from_rotation_y(190f32.to_radians())
    ));
}

#[test]
fn duplicate_names_are_renamed_with_a_decision() {
    let text = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 0\n JOINT b\n {\n  OFFSET 0 1 0\n  CHANNELS 1 Xrotation\n }\n JOINT b\n {\n  OFFSET 0 1 0\n  CHANNELS 1 Xrotation\n }\n}\nMOTION\nFrames: 1\nFrame Time: 0.04\n1 2\n";
    let a = import(text);
    let names: Vec<&str> = a.skeleton.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "b_2"]);
    assert!(a
        .decisions
        .iter()
        .any(|d| d.kind == "renamed_joint" && d.detail.contains("'b_2'")));
    // Joint a has no channels: no track.
    assert_eq!(a.clips[0].tracks.len(), 2);
    assert_eq!(a.clips[0].duration_s, 0.0);
}

#[test]
fn all_zero_position_channels_under_an_offset_are_offsets() {
    // Replacing OFFSET (1 2 3) by (0 0 0) in every frame would collapse the
    // bone; such channels are read as offsets from the rest translation.
    let a = import(&one_joint("Zrotation Xrotation Yrotation", "0 0 0 0 0 0"));
    let t = a.clips[0].tracks[0].translation.as_ref().unwrap();
    assert_eq!(t.keys[0].value, Vec3::new(1.0, 2.0, 3.0));
    assert!(a
        .decisions
        .iter()
        .any(|d| d.kind == "position_channels_as_offsets" && d.detail.contains("'Hips'")));
}

#[test]
fn larger_position_values_replace_the_offset() {
    // 0.05 is 1.3% of |OFFSET| = 3.74: above the 1% limit, so "replace".
    let a = import(&one_joint(
        "Zrotation Xrotation Yrotation",
        "0.05 0 0 0 0 0",
    ));
    let t = a.clips[0].tracks[0].translation.as_ref().unwrap();
    assert_eq!(t.keys[0].value, Vec3::new(0.05, 0.0, 0.0));
    // 0.03 is 0.8%: an offset from OFFSET.
    let a = import(&one_joint(
        "Zrotation Xrotation Yrotation",
        "0.03 0 0 0 0 0",
    ));
    let t = a.clips[0].tracks[0].translation.as_ref().unwrap();
    assert_eq!(t.keys[0].value, Vec3::new(1.03, 2.0, 3.0));
}
