//! The package reader survives every truncation and every single-byte
//! corruption of a real package: a typed error or a valid view, never a
//! panic or an out-of-bounds read. Corrupted bytes would normally stop at
//! the checksum, so each mutant gets its checksum (and, for truncations,
//! its size field) patched first: that drives every mutant into the
//! structural validation and the codec validators behind it.

mod common;
use common::*;
use ludus_anim_cooker::events::Silent;
use ludus_anim_cooker::manifest::AssetJob;
use ludus_anim_cooker::pipeline::{cook_asset_job, CookOptions};
use ludus_anim_cooker::profile::CodecChoice;
use ludus_anim_cooker::stage_cache::StageCache;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_format::package::HEADER_SIZE;
use ludus_anim_runtime::{Package, Player, Request, Transform};

fn cooked(codec: CodecChoice) -> Vec<u8> {
    let mut options = CookOptions::for_files(vec![], std::env::temp_dir(), "standard");
    options.codec_override = Some(codec);
    let job = AssetJob {
        path: repo().join("fixtures/biped.glb"),
        settings: Default::default(),
    };
    let r = cook_asset_job(&job, &options, &StageCache::new(None), &Silent).unwrap();
    let report = r.report;
    r.package
        .unwrap_or_else(|| panic!("biped cooks: {:?}", report.diagnostics))
        .1
        .to_vec()
}

fn patch(bytes: &mut [u8]) {
    if bytes.len() >= HEADER_SIZE {
        let len = bytes.len() as u64;
        bytes[16..24].copy_from_slice(&len.to_le_bytes());
        let sum = fnv1a64(&bytes[HEADER_SIZE..]);
        bytes[32..40].copy_from_slice(&sum.to_le_bytes());
    }
}

/// Load, and if it loads, sample every clip at a few times (one-shot, and
/// a player's pose, joints and mask).
fn exercise(bytes: &[u8]) -> bool {
    match Package::load(bytes) {
        Err(_) => false,
        Ok(p) => {
            let rest = p.skeleton().rest_pose().to_vec();
            let mut out = vec![Transform::IDENTITY; rest.len()];
            let mut joints = vec![Transform::IDENTITY; 2];
            let mask = vec![u64::MAX >> 1; rest.len().div_ceil(64)];
            for c in p.clips() {
                // Corrupt packages must not panic; the results do not matter.
                let mut player = Player::new(c, &rest).ok();
                for t in [
                    0.0,
                    0.013,
                    c.duration_s() * 0.5,
                    c.duration_s(),
                    1e9,
                    f32::NAN,
                ] {
                    let _ = c.sample(t, &rest, &mut out);
                    if let Some(player) = player.as_mut() {
                        player.seek(t);
                        let _ = player.decode(Request::Pose, &mut out);
                        let _ = player.decode(Request::Joints(&[0, 7]), &mut joints);
                        let _ = player.decode(Request::Mask(&mask), &mut out);
                    }
                }
                for ch in p.clip_curves(c) {
                    ch.evaluate(c.position(0.3));
                }
            }
            true
        }
    }
}

fn survive(original: &[u8], stride: usize) {
    assert!(exercise(original), "the original package loads");
    // Unpatched corruption is caught by the checksum.
    let mut b = original.to_vec();
    b[original.len() / 2] ^= 0x40;
    assert!(Package::load(&b).is_err());
    for cut in 0..original.len() {
        let mut b = original[..cut].to_vec();
        assert!(
            Package::load(&b).is_err(),
            "truncation at {cut} must be an error"
        );
        patch(&mut b);
        exercise(&b);
    }
    let mut loaded = 0usize;
    for i in (0..original.len()).step_by(stride) {
        for v in [original[i] ^ 0x01, original[i] ^ 0x80, 0xff, 0x00] {
            if v == original[i] {
                continue;
            }
            let mut b = original.to_vec();
            b[i] = v;
            patch(&mut b);
            loaded += usize::from(exercise(&b));
        }
    }
    eprintln!(
        "{} bytes: {loaded} corrupted variants still formed valid views",
        original.len()
    );
}

#[test]
fn vbr_package_survives_every_truncation_and_byte_corruption() {
    survive(&cooked(CodecChoice::Vbr), 1);
}

#[test]
fn reference_package_survives_truncation_and_corruption() {
    // The reference package is large and uniform (raw floats); every 13th
    // byte still covers every header, table and record field several times.
    survive(&cooked(CodecChoice::Reference), 13);
}

#[test]
fn version_mismatch_is_a_clear_error() {
    let mut b = cooked(CodecChoice::Reference);
    let next = ludus_anim_format::package::FORMAT_VERSION + 1;
    b[8..12].copy_from_slice(&next.to_le_bytes());
    let e = Package::load(&b).unwrap_err().to_string();
    assert!(
        e.contains(&format!("version {next}")) && e.contains("re-cook"),
        "{e}"
    );
}
