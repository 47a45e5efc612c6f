//! Shared test helpers: import + normalize, joint-space comparisons.
#![allow(dead_code)]

use ludus_anim_format::math::{Affine3A, Quat, Transform};
use ludus_anim_importers::{import_bytes, import_file, ImportOptions};
use ludus_anim_model::{SourceAsset, SourceClip, SourceFormat};
use ludus_anim_normalize::{normalize, Normalized};
use ludus_anim_retarget::{retarget, Profile, RetargetPoses, Retargeted};
use ludus_anim_runtime::Skeleton;
use std::path::{Path, PathBuf};

pub fn shared_fixture(rel: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/fixtures")
        .join(rel);
    if p.exists() {
        Some(p)
    } else {
        println!("skipped: shared fixture {} is missing", p.display());
        None
    }
}

pub fn load(path: &Path, units_m: Option<f32>) -> Normalized {
    let asset = import_file(path, &ImportOptions::default()).expect("import");
    normalize(&asset, units_m).expect("normalize")
}

pub fn load_bytes(name: &str, format: SourceFormat, bytes: &[u8]) -> Normalized {
    let asset = import_bytes(
        Path::new(name),
        format,
        bytes,
        &ImportOptions::default(),
        &ludus_anim_importers::FileSystem,
    )
    .expect("import");
    normalize(&asset, None).expect("normalize")
}

pub fn norm(asset: &SourceAsset) -> Normalized {
    normalize(asset, None).expect("normalize")
}

pub fn biped() -> Normalized {
    let bytes = ludus_anim_fixture_gen::build_biped_glb().expect("biped");
    load_bytes("biped.glb", SourceFormat::Glb, &bytes)
}

pub fn run(src: &Normalized, tgt: &Normalized, profile: &Profile) -> Retargeted {
    let poses = RetargetPoses::resolve(
        profile,
        &src.skeleton,
        &src.clips,
        &tgt.skeleton,
        &tgt.clips,
    )
    .expect("poses");
    retarget(&src.skeleton, &src.clips, &tgt.skeleton, profile, &poses).expect("retarget")
}

/// Angle between two rotations, accurate near zero (f32 `acos` near 1 is
/// not: its floor is 7e-4 rad).
pub fn angle(a: Quat, b: Quat) -> f32 {
    let d = a.conjugate() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

/// Local pose of `clip` at `t` (rest for joints without tracks).
pub fn sample(skel: &Skeleton, clip: &SourceClip, t: f32) -> Vec<Transform> {
    let mut out = skel.rest_pose().to_vec();
    clip.sample_pose(skel.rest_pose(), t, &mut out);
    out
}

pub fn fk(skel: &Skeleton, local: &[Transform]) -> Vec<Affine3A> {
    let mut out = vec![Affine3A::IDENTITY; local.len()];
    skel.local_to_component(local, &mut out);
    out
}

/// Worst local rotation (rad) and translation (m) difference of two clips
/// on the same skeleton, over `a`'s key times.
pub fn clip_diff(skel: &Skeleton, a: &SourceClip, b: &SourceClip) -> (f32, f32, String) {
    let (mut r, mut t, mut at) = (0.0f32, 0.0f32, String::new());
    for &time in &a.key_times {
        let (pa, pb) = (sample(skel, a, time), sample(skel, b, time));
        for j in 0..pa.len() {
            let dr = angle(pa[j].rotation, pb[j].rotation);
            let dt = (pa[j].translation - pb[j].translation).length();
            if dt > t {
                at = format!("translation {} t={time}", skel.name(j));
            }
            r = r.max(dr);
            t = t.max(dt);
        }
    }
    (r, t, at)
}
