//! A 160-joint humanoid for masks and LOD plans (#46): a spine and neck,
//! two arms with upper-arm and forearm twist joints and five four-joint
//! fingers, two legs with thigh and calf twist joints, and a face rig
//! (jaw, lips, tongue, brows, eyelids, cheeks, nose, ears, forehead). As
//! BVH (centimeters, +Y up, facing +Z) with one procedural clip where
//! every joint rotates, a masks and LOD file, and a manifest: the project
//! `fixtures/rig160/`.
//!
//! Twist joints are leaves under their limb joint (the way game rigs carry
//! them), so dropping them never drops a limb.

use crate::math::sin;
use std::fmt::Write;

/// Joints of the rig.
pub const RIG160_JOINTS: usize = 160;
/// Directory (inside the fixtures directory) of the project.
pub const RIG160_DIR: &str = "rig160";

struct J {
    name: String,
    parent: Option<usize>,
    offset: [f64; 3],
    /// Swing amplitude (degrees) of the clip.
    swing: f64,
}

fn add(js: &mut Vec<J>, name: &str, parent: Option<usize>, offset: [f64; 3], swing: f64) -> usize {
    js.push(J {
        name: name.to_string(),
        parent,
        offset,
        swing,
    });
    js.len() - 1
}

/// The joints, parent before child, in BVH (depth-first) order.
fn joints() -> Vec<J> {
    let mut js = Vec::new();
    let root = add(&mut js, "Root", None, [0.0, 0.0, 0.0], 0.0);
    let hips = add(&mut js, "Hips", Some(root), [0.0, 95.0, 0.0], 4.0);
    let mut p = hips;
    for s in ["Spine", "Spine1", "Spine2", "Chest"] {
        p = add(&mut js, s, Some(p), [0.0, 12.0, 0.0], 5.0);
    }
    let chest = p;
    let neck = add(&mut js, "Neck", Some(chest), [0.0, 14.0, 0.0], 6.0);
    let neck1 = add(&mut js, "Neck1", Some(neck), [0.0, 5.0, 0.0], 6.0);
    let head = add(&mut js, "Head", Some(neck1), [0.0, 6.0, 2.0], 8.0);
    face(&mut js, head);
    for (side, x) in [("Left", 1.0), ("Right", -1.0)] {
        let sh = add(
            &mut js,
            &format!("{side}Shoulder"),
            Some(chest),
            [x * 6.0, 10.0, 0.0],
            5.0,
        );
        let arm = add(
            &mut js,
            &format!("{side}Arm"),
            Some(sh),
            [x * 12.0, 0.0, 0.0],
            25.0,
        );
        for t in 1..=2 {
            add(
                &mut js,
                &format!("{side}ArmTwist{t}"),
                Some(arm),
                [x * 9.0 * t as f64, 0.0, 0.0],
                10.0,
            );
        }
        let fore = add(
            &mut js,
            &format!("{side}ForeArm"),
            Some(arm),
            [x * 28.0, 0.0, 0.0],
            30.0,
        );
        for t in 1..=2 {
            add(
                &mut js,
                &format!("{side}ForeArmTwist{t}"),
                Some(fore),
                [x * 8.0 * t as f64, 0.0, 0.0],
                15.0,
            );
        }
        let hand = add(
            &mut js,
            &format!("{side}Hand"),
            Some(fore),
            [x * 25.0, 0.0, 0.0],
            20.0,
        );
        for (f, z) in [
            ("Thumb", 3.0),
            ("Index", 2.0),
            ("Middle", 0.0),
            ("Ring", -1.5),
            ("Pinky", -3.0),
        ] {
            let mut q = add(
                &mut js,
                &format!("{side}Hand{f}0"),
                Some(hand),
                [x * 3.0, 0.0, z],
                5.0,
            );
            for k in 1..=3 {
                q = add(
                    &mut js,
                    &format!("{side}Hand{f}{k}"),
                    Some(q),
                    [x * (5.0 - k as f64), 0.0, 0.0],
                    35.0,
                );
            }
        }
    }
    for (side, x) in [("Left", 1.0), ("Right", -1.0)] {
        let up = add(
            &mut js,
            &format!("{side}UpLeg"),
            Some(hips),
            [x * 9.0, -6.0, 0.0],
            30.0,
        );
        for t in 1..=2 {
            add(
                &mut js,
                &format!("{side}UpLegTwist{t}"),
                Some(up),
                [0.0, -14.0 * t as f64, 0.0],
                10.0,
            );
        }
        let leg = add(
            &mut js,
            &format!("{side}Leg"),
            Some(up),
            [0.0, -42.0, 0.0],
            35.0,
        );
        add(
            &mut js,
            &format!("{side}LegTwist1"),
            Some(leg),
            [0.0, -20.0, 0.0],
            10.0,
        );
        let foot = add(
            &mut js,
            &format!("{side}Foot"),
            Some(leg),
            [0.0, -40.0, 0.0],
            20.0,
        );
        add(
            &mut js,
            &format!("{side}ToeBase"),
            Some(foot),
            [0.0, -6.0, 12.0],
            15.0,
        );
    }
    js
}

/// The face: 81 joints under the head.
fn face(js: &mut Vec<J>, head: usize) {
    let jaw = add(js, "FaceJaw", Some(head), [0.0, -3.0, 4.0], 10.0);
    for k in 0..8 {
        add(
            js,
            &format!("FaceLipLower{k}"),
            Some(jaw),
            [k as f64 - 3.5, -2.0, 5.0],
            6.0,
        );
    }
    let mut t = jaw;
    for k in 0..4 {
        t = add(js, &format!("FaceTongue{k}"), Some(t), [0.0, 0.0, 1.5], 8.0);
    }
    add(js, "FaceTeethLower", Some(jaw), [0.0, -1.0, 4.0], 2.0);
    add(js, "FaceChin", Some(jaw), [0.0, -4.0, 5.0], 4.0);
    add(js, "FaceTeethUpper", Some(head), [0.0, -2.0, 8.0], 2.0);
    for k in 0..8 {
        add(
            js,
            &format!("FaceLipUpper{k}"),
            Some(head),
            [k as f64 - 3.5, -3.0, 9.0],
            6.0,
        );
    }
    for k in 0..5 {
        add(
            js,
            &format!("FaceNose{k}"),
            Some(head),
            [0.0, 1.0 - k as f64, 10.0],
            3.0,
        );
    }
    for k in 0..6 {
        add(
            js,
            &format!("FaceForehead{k}"),
            Some(head),
            [k as f64 - 2.5, 8.0, 8.0],
            3.0,
        );
    }
    for (side, x) in [("Left", 1.0), ("Right", -1.0)] {
        for k in 0..5 {
            add(
                js,
                &format!("Face{side}Brow{k}"),
                Some(head),
                [x * (1.0 + k as f64), 5.0, 9.0],
                6.0,
            );
        }
        let eye = add(
            js,
            &format!("Face{side}Eye"),
            Some(head),
            [x * 3.0, 3.0, 8.0],
            12.0,
        );
        for lid in ["LidUpperIn", "LidUpperOut", "LidLowerIn", "LidLowerOut"] {
            add(
                js,
                &format!("Face{side}{lid}"),
                Some(eye),
                [0.0, 0.5, 1.0],
                10.0,
            );
        }
        for k in 0..4 {
            add(
                js,
                &format!("Face{side}Cheek{k}"),
                Some(head),
                [x * (3.0 + k as f64), -1.0, 7.0],
                5.0,
            );
        }
        for k in 0..3 {
            add(
                js,
                &format!("Face{side}Ear{k}"),
                Some(head),
                [x * 8.0, 2.0 - k as f64, 0.0],
                4.0,
            );
        }
        for k in 0..3 {
            add(
                js,
                &format!("Face{side}Nasolabial{k}"),
                Some(head),
                [x * 2.0, -1.0 - k as f64, 9.0],
                5.0,
            );
        }
        for k in 0..2 {
            add(
                js,
                &format!("Face{side}MouthCorner{k}"),
                Some(head),
                [x * 3.5, -3.0, 8.0 - k as f64],
                6.0,
            );
        }
        add(
            js,
            &format!("Face{side}Squint"),
            Some(head),
            [x * 3.0, 2.0, 8.5],
            5.0,
        );
    }
}

/// The BVH file: hierarchy (depth-first) and a 2 s clip at 30 Hz.
pub fn build_rig160_bvh() -> String {
    let js = joints();
    assert_eq!(js.len(), RIG160_JOINTS, "the rig must have 160 joints");
    let mut s = String::from("HIERARCHY\n");
    fn write_joint(s: &mut String, js: &[J], j: usize, depth: usize) {
        let pad = "  ".repeat(depth);
        let kind = if depth == 0 { "ROOT" } else { "JOINT" };
        let [x, y, z] = js[j].offset;
        let _ = writeln!(s, "{pad}{kind} {}\n{pad}{{", js[j].name);
        let _ = writeln!(s, "{pad}  OFFSET {x:.4} {y:.4} {z:.4}");
        if depth == 0 {
            let _ = writeln!(
                s,
                "{pad}  CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation"
            );
        } else {
            let _ = writeln!(s, "{pad}  CHANNELS 3 Zrotation Xrotation Yrotation");
        }
        let children: Vec<usize> = (0..js.len()).filter(|&c| js[c].parent == Some(j)).collect();
        for &c in &children {
            write_joint(s, js, c, depth + 1);
        }
        if children.is_empty() {
            let _ = writeln!(
                s,
                "{pad}  End Site\n{pad}  {{\n{pad}    OFFSET 0.0000 1.0000 0.0000\n{pad}  }}"
            );
        }
        let _ = writeln!(s, "{pad}}}");
    }
    write_joint(&mut s, &js, 0, 0);
    // Joints in the order their channels appear (depth-first).
    let mut order = Vec::with_capacity(js.len());
    fn visit(js: &[J], j: usize, order: &mut Vec<usize>) {
        order.push(j);
        for c in (0..js.len()).filter(|&c| js[c].parent == Some(j)) {
            visit(js, c, order);
        }
    }
    visit(&js, 0, &mut order);
    let frames = 61;
    let _ = writeln!(s, "MOTION\nFrames: {frames}\nFrame Time: 0.0333333");
    for f in 0..frames {
        let phase = std::f64::consts::TAU * f as f64 / (frames - 1) as f64;
        let mut line = Vec::with_capacity(3 + 3 * js.len());
        for &j in &order {
            if j == 0 {
                line.push(format!("{:.4}", 0.0));
                line.push(format!("{:.4}", 0.0));
                line.push(format!("{:.4}", 120.0 * f as f64 / (frames - 1) as f64));
            }
            let a = js[j].swing;
            let k = j as f64 * 0.37;
            for (c, w) in [(0.0, 0.4), (1.3, 1.0), (2.1, 0.3)] {
                line.push(format!("{:.4}", a * w * sin(phase + k + c)));
            }
        }
        let _ = writeln!(s, "{}", line.join(" "));
    }
    s
}

/// The project's manifest.
pub const RIG160_MANIFEST: &str =
    "# Generated by tools/fixture-gen: a 160-joint rig with masks and LOD levels.
[[asset]]
sources = [\"rig160.bvh\"]
units = \"cm\"
joint_sets = \"rig160.joints.toml\"
";

/// Its masks and LOD plan.
pub const RIG160_JOINT_SETS: &str = "# Generated by tools/fixture-gen (schemas/joint-sets.md).
[groups]
hands = [\"LeftHand\", \"RightHand\"]

# Spine blended in over three joints; head and face excluded.
[[mask]]
name = \"upper_body\"
feather = [{ root = \"Spine\", joints = 3 }]
exclude = [\"Neck\"]

# Both hands and every finger joint.
[[mask]]
name = \"hands\"
subtrees = [\"LeftHand\", \"RightHand\"]

[[mask]]
name = \"face\"
subtrees = [\"Head\"]
weights = { Head = 0.0 }

[lod]
pinned = [\"LeftFoot\", \"RightFoot\", \"LeftHand\", \"RightHand\", \"Head\"]

[[lod.level]]
drop = []

# No twist joints, no face.
[[lod.level]]
drop = [\"*Twist*\", \"Face*\"]

# Also no fingers and no toes.
[[lod.level]]
drop = [\"*Twist*\", \"Face*\", \"*Hand*0\", \"*Toe*\"]
";

/// The project's files, as (path relative to [`RIG160_DIR`], bytes).
pub fn build_rig160_project() -> Vec<(String, Vec<u8>)> {
    vec![
        (
            "ludus-anim.toml".into(),
            RIG160_MANIFEST.as_bytes().to_vec(),
        ),
        ("rig160.bvh".into(), build_rig160_bvh().into_bytes()),
        (
            "rig160.joints.toml".into(),
            RIG160_JOINT_SETS.as_bytes().to_vec(),
        ),
    ]
}
