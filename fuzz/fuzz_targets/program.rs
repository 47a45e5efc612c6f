//! Animation programs: the compiled-program loader (`binary::load`, and
//! the body reader without the checksum, so mutations reach the reader
//! and `Program::validate`), and the asset parser and compiler (the
//! program validator) over a synthetic cook output. A program that
//! compiles must encode and load back equal.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ludus_anim_program::compile::{compile, AssetFacts, ClipFacts};
use ludus_anim_program::plan::NO_PARENT;
use ludus_anim_program::{asset, binary, dump};

fn facts() -> Vec<AssetFacts> {
    let names = ["Root", "Hips", "Spine", "Spine1", "Chest", "Head", "LeftArm", "RightArm", "LeftUpLeg", "RightUpLeg"];
    let clip = |name: &str, d: f32, additive: bool| ClipFacts {
        name: name.into(),
        duration_s: d,
        looping: true,
        additive,
        sync_markers: vec![("foot_l".into(), 0.0), ("foot_r".into(), d / 2.0)],
        marker_count: 2,
    };
    vec![AssetFacts {
        asset: "biped".into(),
        package: "packages/biped-0123456789abcdef.ludanim".into(),
        skeleton_identity: [7; 16],
        joint_names: names.iter().map(|s| s.to_string()).collect(),
        parents: vec![NO_PARENT, 0, 1, 2, 3, 4, 4, 4, 1, 1],
        clips: vec![clip("idle", 3.0, false), clip("walk", 1.2, false), clip("run", 0.7, false), clip("breathing", 3.0, true)],
    }]
}

fuzz_target!(|data: &[u8]| {
    if let Ok(p) = binary::load(data) {
        let _ = dump::dump(&p);
    }
    if let Ok(p) = binary::load_body(data) {
        let _ = dump::dump(&p);
        assert_eq!(binary::load(&binary::encode(&p)).as_ref(), Ok(&p));
    }
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(a) = asset::parse(text, "fuzz.program.toml") {
        if let Ok(p) = compile(&a, text, "fuzz.program.toml", &facts()) {
            let _ = dump::dump(&p);
            let bytes = binary::encode(&p);
            assert_eq!(binary::load(&bytes).as_ref(), Ok(&p));
        }
    }
});
