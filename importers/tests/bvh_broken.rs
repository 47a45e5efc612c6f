//! Broken BVH input is rejected with a documented code and a message that
//! names the line (and the joint where there is one). Never a panic.

use ludus_anim_importers::bvh::{self, code};
use ludus_anim_importers::{ImportError, ImportOptions, Importer};
use ludus_anim_model::Diagnostic;
use std::path::{Path, PathBuf};

/// Two joints, 6 + 3 channels, 3 frames. Line numbers matter below.
const GOOD: &str = "HIERARCHY
ROOT Hips
{
\tOFFSET 0 0 0
\tCHANNELS 6 Xposition Yposition Zposition Zrotation Yrotation Xrotation
\tJOINT Spine
\t{
\t\tOFFSET 0 10 0
\t\tCHANNELS 3 Zrotation Yrotation Xrotation
\t\tEnd Site
\t\t{
\t\t\tOFFSET 0 5 0
\t\t}
\t}
}
MOTION
Frames: 3
Frame Time: 0.0333333
0 90 0 0 0 0 1 2 3
0 91 0 0 5 0 1 2 3
0 92 0 0 10 0 1 2 3
";

fn error(text: &str) -> Diagnostic {
    error_bytes(text.as_bytes())
}

fn error_bytes(bytes: &[u8]) -> Diagnostic {
    match bvh::BVH.import(
        Path::new("broken.bvh"),
        bytes,
        &ImportOptions::default(),
        &ludus_anim_importers::FileSystem,
    ) {
        Err(ImportError::Malformed(d)) => *d,
        Err(e) => panic!("unexpected error kind: {e}"),
        Ok(_) => panic!("accepted broken input"),
    }
}

fn assert_error(d: &Diagnostic, code: &str, line: usize, words: &[&str]) {
    assert_eq!(d.code, code, "{d}");
    assert!(
        d.message.starts_with(&format!("line {line}: ")),
        "expected line {line}: {d}"
    );
    for w in words {
        assert!(d.message.contains(w), "expected '{w}' in: {d}");
    }
    assert_eq!(d.file.as_deref(), Some("broken.bvh"));
}

#[test]
fn good_file_imports() {
    let a = bvh::BVH
        .import(
            Path::new("good.bvh"),
            GOOD.as_bytes(),
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .unwrap();
    assert_eq!(a.skeleton.joints.len(), 2);
    assert_eq!(a.clips[0].key_times.len(), 3);
    assert_eq!(a.clips[0].frame_rate_hz, Some(30.0));
}

#[test]
fn missing_channels_on_a_motion_line() {
    let d = error(&GOOD.replace("0 91 0 0 5 0 1 2 3", "0 91 0 0 5 0 1"));
    assert_error(
        &d,
        code::CHANNEL_COUNT,
        20,
        &[
            "7 values, expected 9",
            "'Spine'",
            "first missing channel: Yrotation",
        ],
    );
    assert_eq!(d.joint.as_deref(), Some("Spine"));
    // Short inside the root's channels.
    let d = error(&GOOD.replace("0 91 0 0 5 0 1 2 3", "0 91"));
    assert_error(&d, code::CHANNEL_COUNT, 20, &["'Hips'", "Zposition"]);
    // Too many values.
    let d = error(&GOOD.replace("0 91 0 0 5 0 1 2 3", "0 91 0 0 5 0 1 2 3 4"));
    assert_error(&d, code::CHANNEL_COUNT, 20, &["10 values, expected 9"]);
}

#[test]
fn wrong_frame_count() {
    // Off by more than one: the header or the file is wrong.
    let d = error(&GOOD.replace("Frames: 3", "Frames: 5"));
    assert_error(
        &d,
        code::FRAME_COUNT,
        21,
        &["Frames: 5", "3 motion line(s)"],
    );
    let d = error(&GOOD.replace("Frames: 3", "Frames: 1"));
    assert_error(
        &d,
        code::FRAME_COUNT,
        20,
        &["Frames: 1", "3 motion line(s)"],
    );
}

#[test]
fn frame_count_off_by_one_is_a_warning_and_the_lines_present_are_used() {
    for declared in ["Frames: 2", "Frames: 4"] {
        let asset = bvh::BVH
            .import(
                Path::new("w.bvh"),
                GOOD.replace("Frames: 3", declared).as_bytes(),
                &ImportOptions::default(),
                &ludus_anim_importers::FileSystem,
            )
            .unwrap_or_else(|e| panic!("{declared}: {e}"));
        let w: Vec<_> = asset.diagnostics.warnings().collect();
        assert_eq!(w.len(), 1, "{declared}: {w:?}");
        assert_eq!(w[0].code, code::FRAME_COUNT);
        assert!(w[0].message.starts_with("line 17: "), "{}", w[0].message);
        assert!(w[0].message.contains("3 lines present are used"));
        assert_eq!(asset.clips[0].key_times.len(), 3);
    }
}

#[test]
fn nan_and_garbage_values() {
    let d = error(&GOOD.replace("0 92 0 0 10 0 1 2 3", "0 92 0 0 nan 0 1 2 3"));
    assert_error(
        &d,
        code::NON_FINITE,
        21,
        &["'Hips'", "Yrotation", "not finite"],
    );
    assert_eq!(d.joint.as_deref(), Some("Hips"));
    let d = error(&GOOD.replace("0 92 0 0 10 0 1 2 3", "0 92 0 0 10 0 1 inf 3"));
    assert_error(&d, code::NON_FINITE, 21, &["'Spine'", "Yrotation"]);
    let d = error(&GOOD.replace("0 92 0 0 10 0 1 2 3", "0 92 0 0 10 0 1 2 x3"));
    assert_error(
        &d,
        code::BAD_NUMBER,
        21,
        &["'Spine'", "Xrotation", "`x3` is not a number"],
    );
    let d = error(&GOOD.replace("OFFSET 0 10 0", "OFFSET 0 NaN 0"));
    assert_error(&d, code::BAD_NUMBER, 8, &["OFFSET"]);
    assert_eq!(d.joint.as_deref(), Some("Spine"));
}

#[test]
fn two_roots() {
    let second = "ROOT Other\n{\n\tOFFSET 0 0 0\n\tCHANNELS 0\n}\nMOTION";
    let d = error(&GOOD.replacen("MOTION", second, 1));
    assert_error(
        &d,
        code::MULTIPLE_ROOTS,
        16,
        &["'Other'", "'Hips'", "line 2"],
    );
}

#[test]
fn truncated_file() {
    // Cut inside the hierarchy.
    let d = error(&GOOD[..GOOD.find("End Site").unwrap()]);
    assert_error(
        &d,
        code::SYNTAX,
        10,
        &["joint 'Spine' opened at line 6", "truncated"],
    );
    // Cut before the motion header.
    let d = error(&GOOD[..GOOD.find("Frames").unwrap()]);
    assert_error(&d, code::SYNTAX, 16, &["Frames:", "truncated"]);
    // Cut in the middle of the last frame line.
    let d = error(&GOOD[..GOOD.len() - 4]);
    assert_error(&d, code::CHANNEL_COUNT, 21, &["expected 9"]);
    // Cut after a whole line, two lines short: too few frames. (One line
    // short reads as an off-by-one count, with a warning.)
    let d = error(&GOOD[..GOOD.rfind("0 91").unwrap()]);
    assert_error(
        &d,
        code::FRAME_COUNT,
        19,
        &["Frames: 3", "1 motion line(s)"],
    );
    // Every prefix is rejected or accepted without a panic.
    for end in 0..GOOD.len() {
        let _ = bvh::BVH.import(
            Path::new("p.bvh"),
            &GOOD.as_bytes()[..end],
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        );
    }
}

#[test]
fn garbage_bytes() {
    let d = error_bytes(&[0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a, 0xff, 0x00]);
    assert_error(&d, code::SYNTAX, 1, &["UTF-8"]);
    let d = error("{ \"asset\": 1 }");
    assert_error(&d, code::SYNTAX, 1, &["expected `HIERARCHY`"]);
    let d = error("");
    assert_error(&d, code::SYNTAX, 1, &["empty file"]);
    // Pseudo-random printable garbage: never a panic.
    let mut x = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..200 {
        let mut s = String::from("HIERARCHY\nROOT r\n{\n");
        for _ in 0..200 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let words = [
                "{",
                "}",
                "OFFSET",
                "CHANNELS",
                "3",
                "-1.5",
                "JOINT",
                "End",
                "Site",
                "MOTION",
                "\n",
                "Frames:",
                "Frame Time:",
                "Xrotation",
                "nan",
                "x",
            ];
            s.push_str(words[(x % words.len() as u64) as usize]);
            s.push(' ');
        }
        let _ = bvh::BVH.import(
            Path::new("g.bvh"),
            s.as_bytes(),
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        );
    }
}

#[test]
fn header_errors() {
    let d = error(&GOOD.replace("Frame Time: 0.0333333", "Frame Time: 0"));
    assert_error(&d, code::FRAME_TIME, 18, &["positive"]);
    let d = error(&GOOD.replace("Frame Time: 0.0333333", "Frame Time: -0.1"));
    assert_error(&d, code::FRAME_TIME, 18, &["positive"]);
    let d = error(&GOOD.replace("CHANNELS 3 Zrotation", "CHANNELS 3 Wrotation"));
    assert_error(&d, code::CHANNELS, 9, &["`Wrotation`"]);
    assert_eq!(d.joint.as_deref(), Some("Spine"));
    let d = error(&GOOD.replace("CHANNELS 3 Zrotation", "CHANNELS 7 Zrotation"));
    assert_error(&d, code::CHANNELS, 9, &["0 to 6"]);
    let d = error(&GOOD.replace(
        "Yrotation Xrotation\n\t\tEnd",
        "Yrotation Yrotation\n\t\tEnd",
    ));
    assert_error(&d, code::CHANNELS, 9, &["listed twice"]);
}

/// The shared fixtures, cut and damaged, never panic the importer.
#[test]
fn damaged_fixtures_never_panic() {
    let dir = match std::env::var_os("LUDUS_SHARED_FIXTURES") {
        Some(p) => PathBuf::from(p),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/fixtures"),
    };
    let path = dir.join("bvh/makehuman_zombieWalk1.bvh");
    let Ok(bytes) = std::fs::read(&path) else {
        println!("skipped: no fixtures at {}", dir.display());
        return;
    };
    for cut in (0..bytes.len()).step_by(997) {
        let r = bvh::BVH.import(
            &path,
            &bytes[..cut],
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        );
        assert!(r.is_err(), "a file cut at byte {cut} was accepted");
    }
    let mut damaged = bytes.clone();
    for i in (0..damaged.len()).step_by(4099) {
        damaged[i] = b"x{}9-."[i % 6];
        let _ = bvh::BVH.import(
            &path,
            &damaged,
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        );
    }
}
