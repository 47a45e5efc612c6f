//! FBX importer on hand-written and damaged input: axis/unit conversion on
//! a synthetic two-joint skeleton, and a broken corpus that must give
//! `ImportError::Malformed`, never a panic.

use ludus_anim_format::math::Affine3A;
use ludus_anim_importers::{fbx, ImportError, ImportOptions, Importer};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::{SourceAsset, Transform, Vec3};
use std::fmt::Write;
use std::path::{Path, PathBuf};

/// FBX time ticks per second.
const KTIME: i64 = 46_186_158_000;

/// Axis system of a synthetic file: `(axis, sign)` for up, front, coord.
struct Axes {
    up: (i32, i32),
    front: (i32, i32),
    coord: (i32, i32),
}

/// One animated property of one model: per-component key values (degrees
/// for rotation) at `KEY_TIMES`; `None` components are not animated.
struct Anim {
    model: i64,
    prop: &'static str,
    keys: [Option<[f64; 3]>; 3],
}

const KEY_TIMES: [f64; 3] = [0.0, 0.5, 1.0];

/// Minimal ASCII FBX 7.4: two LimbNode models `Root` (id 2001) and `Tip`
/// (id 2002, child of Root), one animation stack with linear curves.
fn synthetic_fbx(
    axes: &Axes,
    unit_cm: f64,
    root_t: [f64; 3],
    tip_t: [f64; 3],
    anims: &[Anim],
) -> String {
    let mut s = String::new();
    let end = (KEY_TIMES[2] * KTIME as f64) as i64;
    s.push_str("; FBX 7.4.0 project file\n");
    s.push_str("FBXHeaderExtension:  {\n\tFBXHeaderVersion: 1003\n\tFBXVersion: 7400\n\tCreator: \"ludus-anim test\"\n}\n");
    s.push_str("GlobalSettings:  {\n\tVersion: 1000\n\tProperties70:  {\n");
    for (name, v) in [
        ("UpAxis", axes.up.0),
        ("UpAxisSign", axes.up.1),
        ("FrontAxis", axes.front.0),
        ("FrontAxisSign", axes.front.1),
        ("CoordAxis", axes.coord.0),
        ("CoordAxisSign", axes.coord.1),
    ] {
        writeln!(s, "\t\tP: \"{name}\", \"int\", \"Integer\", \"\",{v}").unwrap();
    }
    writeln!(
        s,
        "\t\tP: \"UnitScaleFactor\", \"double\", \"Number\", \"\",{unit_cm}"
    )
    .unwrap();
    s.push_str("\t\tP: \"TimeMode\", \"enum\", \"\", \"\",6\n");
    writeln!(s, "\t\tP: \"TimeSpanStart\", \"KTime\", \"Time\", \"\",0").unwrap();
    writeln!(
        s,
        "\t\tP: \"TimeSpanStop\", \"KTime\", \"Time\", \"\",{end}"
    )
    .unwrap();
    s.push_str("\t}\n}\n");

    s.push_str("Objects:  {\n");
    for (id, name, t) in [(2001, "Root", root_t), (2002, "Tip", tip_t)] {
        writeln!(s, "\tNodeAttribute: {}, \"NodeAttribute::{name}\", \"LimbNode\" {{\n\t\tTypeFlags: \"Skeleton\"\n\t}}", id - 1000).unwrap();
        writeln!(s, "\tModel: {id}, \"Model::{name}\", \"LimbNode\" {{\n\t\tVersion: 232\n\t\tProperties70:  {{").unwrap();
        writeln!(
            s,
            "\t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\",{},{},{}",
            t[0], t[1], t[2]
        )
        .unwrap();
        s.push_str("\t\t}\n\t}\n");
    }
    writeln!(
        s,
        "\tAnimationStack: 3001, \"AnimStack::Take 001\", \"\" {{\n\t\tProperties70:  {{"
    )
    .unwrap();
    writeln!(s, "\t\t\tP: \"LocalStart\", \"KTime\", \"Time\", \"\",0\n\t\t\tP: \"LocalStop\", \"KTime\", \"Time\", \"\",{end}").unwrap();
    s.push_str("\t\t}\n\t}\n\tAnimationLayer: 3002, \"AnimLayer::BaseLayer\", \"\" {\n\t}\n");
    let mut conns = String::new();
    conns.push_str("\tC: \"OO\",2001,0\n\tC: \"OO\",2002,2001\n\tC: \"OO\",1001,2001\n\tC: \"OO\",1002,2002\n\tC: \"OO\",3002,3001\n");
    let times: Vec<String> = KEY_TIMES
        .iter()
        .map(|t| ((t * KTIME as f64) as i64).to_string())
        .collect();
    for (ai, a) in anims.iter().enumerate() {
        let node_id = 4001 + ai as i64 * 10;
        let short = if a.prop == "Lcl Translation" {
            "T"
        } else {
            "R"
        };
        writeln!(s, "\tAnimationCurveNode: {node_id}, \"AnimCurveNode::{short}\", \"\" {{\n\t\tProperties70:  {{").unwrap();
        for (c, axis) in ["X", "Y", "Z"].iter().enumerate() {
            let d = a.keys[c].map(|k| k[0]).unwrap_or(0.0);
            writeln!(s, "\t\t\tP: \"d|{axis}\", \"Number\", \"\", \"A\",{d}").unwrap();
        }
        s.push_str("\t\t}\n\t}\n");
        writeln!(
            conns,
            "\tC: \"OO\",{node_id},3002\n\tC: \"OP\",{node_id},{}, \"{}\"",
            a.model, a.prop
        )
        .unwrap();
        for (c, axis) in ["X", "Y", "Z"].iter().enumerate() {
            let Some(values) = a.keys[c] else { continue };
            let curve_id = node_id + 1 + c as i64;
            let vals: Vec<String> = values.iter().map(|v| v.to_string()).collect();
            writeln!(
                s,
                "\tAnimationCurve: {curve_id}, \"AnimCurve::\", \"\" {{\n\t\tDefault: {}\n\t\tKeyVer: 4008\n\
                 \t\tKeyTime: *3 {{\n\t\t\ta: {}\n\t\t}}\n\t\tKeyValueFloat: *3 {{\n\t\t\ta: {}\n\t\t}}\n\
                 \t\tKeyAttrFlags: *1 {{\n\t\t\ta: 4\n\t\t}}\n\t\tKeyAttrDataFloat: *4 {{\n\t\t\ta: 0,0,0,0\n\t\t}}\n\
                 \t\tKeyAttrRefCount: *1 {{\n\t\t\ta: 3\n\t\t}}\n\t}}",
                values[0],
                times.join(","),
                vals.join(",")
            )
            .unwrap();
            writeln!(conns, "\tC: \"OP\",{curve_id},{node_id}, \"d|{axis}\"").unwrap();
        }
    }
    s.push_str("}\nConnections:  {\n");
    s.push_str(&conns);
    s.push_str("}\n");
    s
}

/// Imports keeping unused leaves: `Tip` neither deforms nor animates.
fn import_str(name: &str, text: &str) -> SourceAsset {
    let keep = ImportOptions {
        keep_unused_leaves: true,
        custom_curves: Vec::new(),
    };
    let a = fbx::FBX
        .import(
            Path::new(name),
            text.as_bytes(),
            &keep,
            &ludus_anim_importers::FileSystem,
        )
        .unwrap_or_else(|e| panic!("{name}: {e}\n{text}"));
    let d = validate_asset(&a);
    assert!(!d.has_errors(), "{name}: {:?}", d);
    a
}

/// Component-space joint positions in meters at time `t` of clip 0.
fn positions_m(a: &SourceAsset, t: f32) -> Vec<(String, Vec3)> {
    let mut locals: Vec<Transform> = a.skeleton.joints.iter().map(|j| j.rest).collect();
    for tr in &a.clips[0].tracks {
        let l = &mut locals[tr.joint];
        if let Some(c) = &tr.translation {
            l.translation = c.evaluate(t).unwrap();
        }
        if let Some(c) = &tr.rotation {
            l.rotation = c.evaluate(t).unwrap();
        }
        if let Some(c) = &tr.scale {
            l.scale = c.evaluate(t).unwrap();
        }
    }
    // Apply units the way the normalize stage does: scale translations.
    for l in &mut locals {
        l.translation *= a.unit_scale_m;
    }
    let n = locals.len();
    let mut world: Vec<Option<Affine3A>> = vec![None; n];
    for _ in 0..n {
        for (i, j) in a.skeleton.joints.iter().enumerate() {
            let local = locals[i].to_affine();
            world[i] = match (world[i], j.parent) {
                (Some(w), _) => Some(w),
                (None, None) => Some(local),
                (None, Some(p)) => world[p].map(|pw| pw * local),
            };
        }
    }
    a.skeleton
        .joints
        .iter()
        .zip(world)
        .map(|(j, w)| (j.name.clone(), w.expect("resolved").translation.into()))
        .collect()
}

#[test]
fn y_up_cm_and_z_up_m_give_the_same_component_space_motion() {
    // The motion, in a +Y up world in centimeters: Root rises and moves
    // forward while turning 90 degrees about the up axis; Tip sits 50 cm
    // along Root's local +X.
    let y_up = Axes {
        up: (1, 1),
        front: (2, 1),
        coord: (0, 1),
    };
    let y_text = synthetic_fbx(
        &y_up,
        1.0,
        [0.0, 100.0, 0.0],
        [50.0, 0.0, 0.0],
        &[
            Anim {
                model: 2001,
                prop: "Lcl Translation",
                keys: [
                    Some([0.0, 10.0, 0.0]),
                    Some([100.0, 125.0, 150.0]),
                    Some([0.0, 20.0, 50.0]),
                ],
            },
            Anim {
                model: 2001,
                prop: "Lcl Rotation",
                keys: [None, Some([0.0, 30.0, 90.0]), None],
            },
        ],
    );
    // The same motion in a +Z up, -Y front world in meters: a point
    // (x, y, z) of the Y-up world is (x, -z, y) here, and a turn about +Y
    // becomes a turn about +Z.
    let z_up = Axes {
        up: (2, 1),
        front: (1, -1),
        coord: (0, 1),
    };
    let z_text = synthetic_fbx(
        &z_up,
        100.0,
        [0.0, 0.0, 1.0],
        [0.5, 0.0, 0.0],
        &[
            Anim {
                model: 2001,
                prop: "Lcl Translation",
                keys: [
                    Some([0.0, 0.1, 0.0]),
                    Some([0.0, -0.2, -0.5]),
                    Some([1.0, 1.25, 1.5]),
                ],
            },
            Anim {
                model: 2001,
                prop: "Lcl Rotation",
                keys: [None, None, Some([0.0, 30.0, 90.0])],
            },
        ],
    );
    // By default the static leaf `Tip` is dropped, and that is recorded.
    let dropped = fbx::FBX
        .import(
            Path::new("yup_cm.fbx"),
            y_text.as_bytes(),
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .unwrap();
    assert_eq!(dropped.skeleton.joints.len(), 1);
    assert!(dropped
        .decisions
        .iter()
        .any(|d| d.kind == "dropped_leaf" && d.detail.contains("'Tip'")));

    let y = import_str("yup_cm.fbx", &y_text);
    let z = import_str("zup_m.fbx", &z_text);
    assert!((y.unit_scale_m - 0.01).abs() < 1e-7, "{}", y.unit_scale_m);
    assert!((z.unit_scale_m - 1.0).abs() < 1e-7, "{}", z.unit_scale_m);
    assert!(
        y.source_axes.description.starts_with("+Y up"),
        "{}",
        y.source_axes.description
    );
    assert!(
        z.source_axes.description.starts_with("+Z up, -Y front"),
        "{}",
        z.source_axes.description
    );
    assert!(z
        .decisions
        .iter()
        .any(|d| d.kind == "axis_conversion" && d.detail.contains("converted")));
    assert_eq!(y.clips.len(), 1);
    assert_eq!(z.clips.len(), 1);
    assert!((y.clips[0].duration_s - 1.0).abs() < 1e-6);
    assert_eq!(y.clips[0].frame_rate_hz, Some(30.0));

    // Start pose as authored: Root at 1 m up, Tip 0.5 m along +X.
    let p0 = positions_m(&y, 0.0);
    assert!(
        (p0[0].1 - Vec3::new(0.0, 1.0, 0.0)).length() < 1e-5,
        "{p0:?}"
    );
    assert!(
        (p0[1].1 - Vec3::new(0.5, 1.0, 0.0)).length() < 1e-5,
        "{p0:?}"
    );
    for s in 0..=60 {
        let t = s as f32 / 60.0;
        let py = positions_m(&y, t);
        let pz = positions_m(&z, t);
        assert_eq!(py.len(), pz.len());
        for ((ny, a), (nz, b)) in py.iter().zip(&pz) {
            assert_eq!(ny, nz);
            assert!(
                (*a - *b).length() < 1e-4,
                "t={t} joint {ny}: Y-up/cm {a:?} vs Z-up/m {b:?}"
            );
        }
    }
    // End pose: Root at (0, 1.5, 0.5) m turned 90 degrees about +Y, so Tip's
    // local +X points along world -Z.
    let p1 = positions_m(&y, 1.0);
    assert!(
        (p1[1].1 - Vec3::new(0.0, 1.5, 0.0)).length() < 1e-4,
        "{p1:?}"
    );
}

fn fixtures_dir() -> Option<PathBuf> {
    let dir = match std::env::var_os("LUDUS_SHARED_FIXTURES") {
        Some(d) => PathBuf::from(d),
        None => Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures"),
    };
    dir.join("fbx").is_dir().then_some(dir)
}

fn expect_malformed(what: &str, bytes: &[u8]) {
    match fbx::FBX.import(
        Path::new("broken.fbx"),
        bytes,
        &ImportOptions::default(),
        &ludus_anim_importers::FileSystem,
    ) {
        Err(ImportError::Malformed(d)) => {
            assert_eq!(
                d.file.as_deref(),
                Some("broken.fbx"),
                "{what}: diagnostic names the file"
            );
            assert!(!d.message.is_empty());
        }
        Err(e) => panic!("{what}: expected Malformed, got {e}"),
        Ok(a) => panic!(
            "{what}: expected Malformed, imported {} joints",
            a.skeleton.joints.len()
        ),
    }
}

/// Deterministic pseudo-random bytes (xorshift), no extra dependency.
fn garbage(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

#[test]
fn broken_files_are_malformed_not_panics() {
    expect_malformed("empty", b"");
    for (i, len) in [1usize, 7, 64, 1000, 100_000].into_iter().enumerate() {
        expect_malformed(
            &format!("garbage {len} bytes"),
            &garbage(len, 0x9E37_79B9_7F4A_7C15 + i as u64),
        );
    }
    // Garbage behind a valid binary magic.
    let mut fake = b"Kaydara FBX Binary  \x00\x1a\x00".to_vec();
    fake.extend_from_slice(&7400u32.to_le_bytes());
    fake.extend_from_slice(&garbage(4096, 42));
    expect_malformed("binary magic + garbage", &fake);

    // Corrupted ASCII: unbalanced braces and an unterminated string.
    let good = "; FBX 7.4.0 project file\nFBXHeaderExtension:  {\n\tFBXVersion: 7400\n}\nObjects:  {\n\tModel: 1, \"Model::A\", \"LimbNode\" {\n\t}\n}\n";
    expect_malformed(
        "ascii: unterminated string",
        good.replace("\"LimbNode\"", "\"LimbNode").as_bytes(),
    );
    expect_malformed("ascii: garbled braces", good.replace('{', "}").as_bytes());

    let Some(dir) = fixtures_dir() else {
        println!("skipped (truncation part): shared fixtures not found");
        return;
    };
    let bin = std::fs::read(dir.join("fbx/ufbx_maya_game_sausage_7500_combined.fbx")).unwrap();
    for len in [
        10,
        27,
        100,
        1_000,
        10_000,
        bin.len() / 2,
        bin.len() * 9 / 10,
    ] {
        expect_malformed(&format!("binary truncated to {len} bytes"), &bin[..len]);
    }
    // A real ASCII file with its braces damaged part-way through.
    let asc =
        std::fs::read_to_string(dir.join("fbx/ufbx_maya_game_sausage_7500_combined_ASCII.fbx"))
            .unwrap();
    let cut = asc.len() / 3;
    let damaged = format!(
        "{}}}}}}}}}{}",
        &asc[..cut],
        &asc[cut..].replacen('{', "", 5)
    );
    expect_malformed("ascii fixture with damaged braces", damaged.as_bytes());
}

/// An unanimated null below a joint (an FBX empty: a weapon grip) is a
/// socket on that joint with the local transform as its offset, not a
/// joint; an animated null is neither. Without the null, `Tip` is an
/// unused leaf and dropped: the null keeps it (it has a child).
#[test]
fn an_unanimated_null_below_a_joint_is_a_socket() {
    let y_up = Axes {
        up: (1, 1),
        front: (2, 1),
        coord: (0, 1),
    };
    let text = synthetic_fbx(
        &y_up,
        1.0,
        [0.0, 100.0, 0.0],
        [50.0, 0.0, 0.0],
        &[Anim {
            model: 2001,
            prop: "Lcl Rotation",
            keys: [None, Some([0.0, 30.0, 90.0]), None],
        }],
    );
    let null = "\tNodeAttribute: 1003, \"NodeAttribute::Grip\", \"Null\" {\n\t\tTypeFlags: \"Null\"\n\t}\n\
        \tModel: 2003, \"Model::Grip\", \"Null\" {\n\t\tVersion: 232\n\t\tProperties70:  {\n\
        \t\t\tP: \"Lcl Translation\", \"Lcl Translation\", \"\", \"A\",0,12,3\n\
        \t\t\tP: \"Lcl Rotation\", \"Lcl Rotation\", \"\", \"A\",0,0,90\n\t\t}\n\t}\n";
    let text = text
        .replacen("Objects:  {\n", &format!("Objects:  {{\n{null}"), 1)
        .replacen(
            "Connections:  {\n",
            "Connections:  {\n\tC: \"OO\",2003,2002\n\tC: \"OO\",1003,2003\n",
            1,
        );
    let a = fbx::FBX
        .import(
            Path::new("grip.fbx"),
            text.as_bytes(),
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    let names: Vec<&str> = a.skeleton.joints.iter().map(|j| j.name.as_str()).collect();
    assert_eq!(names, ["Root", "Tip"], "the null is not a joint");
    assert_eq!(a.sockets.len(), 1, "{:?}", a.decisions);
    let s = &a.sockets[0];
    assert_eq!((s.name.as_str(), s.joint), ("Grip", 1));
    assert!(
        s.offset.translation.distance(Vec3::new(0.0, 12.0, 3.0)) < 1e-5,
        "{:?}",
        s.offset
    );
    let quarter = ludus_anim_model::Quat::from_rotation_z(std::f32::consts::FRAC_PI_2);
    assert!(
        s.offset.rotation.dot(quarter).abs() > 0.99999,
        "{:?}",
        s.offset
    );
    assert!(a.decisions.iter().any(|d| d.kind == "sockets"));

    // Animated, the null is no socket (it is skipped as before).
    let animated = text.replacen(
        "\tC: \"OO\",3002,3001\n",
        "\tC: \"OO\",3002,3001\n\tC: \"OO\",4901,3002\n\tC: \"OP\",4901,2003, \"Lcl Translation\"\n",
        1,
    );
    let animated = animated.replacen(
        "\tAnimationLayer: 3002",
        "\tAnimationCurveNode: 4901, \"AnimCurveNode::T\", \"\" {\n\t\tProperties70:  {\n\t\t\tP: \"d|X\", \"Number\", \"\", \"A\",0\n\t\t\tP: \"d|Y\", \"Number\", \"\", \"A\",12\n\t\t\tP: \"d|Z\", \"Number\", \"\", \"A\",3\n\t\t}\n\t}\n\tAnimationCurve: 4902, \"AnimCurve::\", \"\" {\n\t\tDefault: 0\n\t\tKeyVer: 4008\n\t\tKeyTime: *2 {\n\t\t\ta: 0,46186158000\n\t\t}\n\t\tKeyValueFloat: *2 {\n\t\t\ta: 0,5\n\t\t}\n\t\tKeyAttrFlags: *1 {\n\t\t\ta: 4\n\t\t}\n\t\tKeyAttrDataFloat: *4 {\n\t\t\ta: 0,0,0,0\n\t\t}\n\t\tKeyAttrRefCount: *1 {\n\t\t\ta: 2\n\t\t}\n\t}\n\tAnimationLayer: 3002",
        1,
    ).replacen(
        "\tC: \"OP\",4901,2003, \"Lcl Translation\"\n",
        "\tC: \"OP\",4901,2003, \"Lcl Translation\"\n\tC: \"OP\",4902,4901, \"d|X\"\n",
        1,
    );
    let b = fbx::FBX
        .import(
            Path::new("grip.fbx"),
            animated.as_bytes(),
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .unwrap_or_else(|e| panic!("{e}\n{animated}"));
    assert!(b.sockets.is_empty(), "an animated null: {:?}", b.sockets);
}
