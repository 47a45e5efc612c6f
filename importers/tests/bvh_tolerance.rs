//! Deviations real BVH files show that the importer reads anyway (issue
//! #11 item 9), each with the warning it gives, if any; the list is in
//! `docs/limits.md`. Hard errors stay for what cannot be read
//! (`bvh_broken.rs`).

use ludus_anim_importers::bvh::{self, code};
use ludus_anim_importers::ImportOptions;
use ludus_anim_importers::Importer;
use ludus_anim_model::SourceAsset;
use std::path::Path;

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

fn import(text: &str) -> SourceAsset {
    bvh::BVH
        .import(
            Path::new("t.bvh"),
            text.as_bytes(),
            &ImportOptions::default(),
            &ludus_anim_importers::FileSystem,
        )
        .unwrap_or_else(|e| panic!("rejected: {e}\n{text:?}"))
}

/// Imports with exactly the warnings `codes`, and `frames` key times.
fn tolerated(text: &str, codes: &[&str], frames: usize) -> SourceAsset {
    let asset = import(text);
    let got: Vec<&str> = asset
        .diagnostics
        .warnings()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(got, codes, "{:?}", asset.diagnostics);
    assert_eq!(asset.clips[0].key_times.len(), frames);
    asset
}

#[test]
fn the_reference_file_imports_cleanly() {
    tolerated(GOOD, &[], 3);
}

#[test]
fn missing_trailing_newline() {
    tolerated(GOOD.trim_end(), &[], 3);
}

#[test]
fn crlf_line_ends_and_a_byte_order_mark() {
    let crlf = format!("\u{feff}{}", GOOD.replace('\n', "\r\n"));
    let a = tolerated(&crlf, &[], 3);
    assert_eq!(a.skeleton.joints[1].name, "Spine");
}

#[test]
fn tabs_and_runs_of_spaces_anywhere() {
    let text = GOOD
        .replace("Frames: 3", "Frames:\t3")
        .replace("Frame Time: 0.0333333", "Frame\tTime:\t 0.0333333")
        .replace("0 91 0", "0\t91  \t0")
        .replace("OFFSET 0 10 0", "OFFSET\t0\t10\t0");
    tolerated(&text, &[], 3);
}

#[test]
fn trailing_empty_frames() {
    // Blank lines after the motion (with or without whitespace).
    tolerated(&format!("{GOOD}\n   \n\t\n"), &[], 3);
    // An empty line counted in `Frames:` (one more than the lines present).
    let counted = GOOD.replace("Frames: 3", "Frames: 4") + "\n";
    tolerated(&counted, &[code::FRAME_COUNT], 3);
}

#[test]
fn frame_count_off_by_one_either_way() {
    tolerated(
        &GOOD.replace("Frames: 3", "Frames: 2"),
        &[code::FRAME_COUNT],
        3,
    );
    tolerated(
        &GOOD.replace("Frames: 3", "Frames: 4"),
        &[code::FRAME_COUNT],
        3,
    );
}

#[test]
fn frame_time_with_many_digits() {
    let a = tolerated(
        &GOOD.replace("0.0333333", "0.033333333333333333333333333"),
        &[],
        3,
    );
    assert_eq!(a.clips[0].frame_rate_hz, Some(30.0));
    let a = tolerated(&GOOD.replace("0.0333333", "3.33333e-2"), &[], 3);
    assert!((a.clips[0].frame_rate_hz.unwrap() - 30.0).abs() < 1e-3);
}

#[test]
fn keyword_case_differs() {
    let text = GOOD
        .replace("Frames:", "FRAMES:")
        .replace("Frame Time:", "frame time:")
        .replace(
            "Zrotation Yrotation Xrotation\n\t\tEnd",
            "ZROTATION yrotation Xrotation\n\t\tEnd",
        );
    tolerated(&text, &[], 3);
}
