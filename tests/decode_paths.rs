//! Every decode path gives the bits of `Clip::sample`, on real cooked
//! packages: the bundled fixtures and, when `../shared/anchors` is present,
//! the ACL anchor clips the bench measures (cooked in centimetres as the
//! bench does). Paths: `sample_static`, `sample_packed`, `sample_joints`
//! (indexed), `sample_joints_static`, the walk without the index
//! (`ClipCodec::decode_joints`), and a `DecodeContext` per instruction-set
//! level the CPU runs (its whole poses with and without a `TrackCache`),
//! played forward, backward and seeking at random, for
//! poses, subsets and masks (sparse and dense). Times and subsets are
//! drawn by proptest, plus a grid that hits every sample, every segment
//! boundary and the blends between.

mod common;
use common::*;

use ludus_anim_runtime::codec::vbr::{CachedTrack, Isa};
use ludus_anim_runtime::{DecodeContext, Package, Transform};
use proptest::prelude::*;
use std::sync::OnceLock;

fn cook(cwd: &std::path::Path, args: &[&str]) -> Vec<(String, Vec<u8>)> {
    let o = ludus_anim(args, cwd);
    assert!(o.status.success(), "{}", text(&o));
    packages(&cwd.join("out"))
}

/// Cooked once per test binary.
fn cooked() -> &'static [(String, Vec<u8>)] {
    static PACKAGES: OnceLock<Vec<(String, Vec<u8>)>> = OnceLock::new();
    PACKAGES.get_or_init(|| {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let fixtures = repo().join("fixtures");
        let mut all = cook(
            dir,
            &["cook", "--no-cache", "-q", fixtures.to_str().unwrap()],
        );
        if let Some(anchors) = shared_anchors() {
            let clips = dir.join("acl");
            std::fs::create_dir_all(&clips).unwrap();
            for (name, _, _) in ludus_anim_cooker::bench::anchors::ANCHOR_CLIPS {
                let f = format!("{name}.acl.sjson");
                std::fs::copy(anchors.join("acl-clips").join(&f), clips.join(&f)).unwrap();
            }
            let _ = std::fs::remove_dir_all(dir.join("out"));
            all.extend(cook(
                dir,
                &[
                    "cook",
                    "--no-cache",
                    "-q",
                    "--units",
                    "cm",
                    clips.to_str().unwrap(),
                ],
            ));
        } else {
            eprintln!("skipped: the ACL anchor clips (../shared/anchors not found)");
        }
        assert!(!all.is_empty());
        all
    })
}

fn bits(p: &[Transform]) -> Vec<u32> {
    // +0.0 folds -0.0 into 0.0: both are the same pose (the static path
    // may give +0 where the lerp gave -0, see schemas/codec-vbr.md).
    p.iter()
        .flat_map(|x| x.to_array().map(|v| (v + 0.0).to_bits()))
        .collect()
}

/// Check every path at each of `times` for `subset`, with a context that
/// visits the times in the given order.
fn check(pkg: &[u8], clip: usize, times: &[f32], subset: &[u32], mask_seed: u64) {
    let p = Package::load(pkg).unwrap();
    let c = &p.clips()[clip];
    let n = p.skeleton().joint_count();
    let defaults = p.sample_defaults(c);
    let mut static_pose = vec![Transform::IDENTITY; n];
    assert!(c.static_pose(defaults, &mut static_pose));
    let statics = c.static_tracks(defaults).unwrap();
    let subset: Vec<u32> = subset.iter().map(|&j| j % n as u32).collect();
    let mut mask = vec![0u64; n.div_ceil(64)];
    let mut seed = mask_seed | 1;
    for j in 0..n {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        // Sparse for odd seeds' low bits, dense otherwise.
        let keep = if mask_seed & 2 == 0 {
            seed.is_multiple_of(8)
        } else {
            !seed.is_multiple_of(4)
        };
        if keep {
            mask[j / 64] |= 1 << (j % 64);
        }
    }
    let (mut want, mut got) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    let mut sub = vec![Transform::IDENTITY; subset.len()];
    // One context per instruction-set level this CPU runs: every level
    // must give the bits of `Clip::sample` (which runs at the best one).
    let mut contexts: Vec<DecodeContext> = Isa::ALL
        .into_iter()
        .filter(|i| i.supported())
        .map(|isa| {
            let mut ctx = DecodeContext::new(c);
            assert!(ctx.set_isa(isa));
            ctx
        })
        .collect();
    // One playback track cache per context, shared by its whole-pose
    // requests (their entries are the clip's, whatever the request).
    let mut caches: Vec<_> = contexts.iter().map(|_| c.track_cache()).collect();
    // And one over entries the caller placed (a slice of its arena).
    let mut arena = vec![CachedTrack::EMPTY; c.track_cache_len() + 3];
    let mut placed = c.track_cache_in(&mut arena[3..]);
    let mut placed_ctx = DecodeContext::new(c);
    for &t in times {
        let at = format!("{} at t = {t}", c.name());
        assert!(c.sample(t, defaults, &mut want));
        let want_sub: Vec<Transform> = subset.iter().map(|&j| want[j as usize]).collect();
        assert!(c.sample_static(t, &static_pose, &mut got));
        assert_eq!(bits(&want), bits(&got), "sample_static, {at}");
        assert!(c.sample_packed(t, &statics, &mut got));
        assert_eq!(bits(&want), bits(&got), "sample_packed, {at}");
        assert!(c.sample_joints(t, defaults, &subset, &mut sub));
        assert_eq!(bits(&want_sub), bits(&sub), "sample_joints, {at}");
        assert!(c.sample_joints_static(t, &static_pose, &subset, &mut sub));
        assert_eq!(bits(&want_sub), bits(&sub), "sample_joints_static, {at}");
        assert!(c
            .codec()
            .decode_joints(c.position(t), defaults, &subset, &mut sub));
        assert_eq!(bits(&want_sub), bits(&sub), "walk, {at}");
        placed_ctx.seek(t);
        assert!(placed_ctx.sample_static_cached(&mut placed, &static_pose, &mut got));
        assert_eq!(bits(&want), bits(&got), "placed track cache, {at}");
        for (ctx, tc) in contexts.iter_mut().zip(&mut caches) {
            let at = format!("{at}, {}", ctx.isa().name());
            ctx.seek(t);
            assert!(ctx.sample_static_cached(tc, &static_pose, &mut got));
            assert_eq!(
                bits(&want),
                bits(&got),
                "context sample_static_cached, {at}"
            );
            assert!(ctx.sample_cached(tc, defaults, &mut got));
            assert_eq!(bits(&want), bits(&got), "context sample_cached, {at}");
            assert!(ctx.sample_packed_cached(tc, &statics, &mut got));
            assert_eq!(
                bits(&want),
                bits(&got),
                "context sample_packed_cached, {at}"
            );
            assert!(ctx.sample(defaults, &mut got));
            assert_eq!(bits(&want), bits(&got), "context sample, {at}");
            assert!(ctx.sample_static(&static_pose, &mut got));
            assert_eq!(bits(&want), bits(&got), "context sample_static, {at}");
            assert!(ctx.sample_packed(&statics, &mut got));
            assert_eq!(bits(&want), bits(&got), "context sample_packed, {at}");
            assert!(ctx.sample_joints(defaults, &subset, &mut sub));
            assert_eq!(bits(&want_sub), bits(&sub), "context sample_joints, {at}");
            assert!(ctx.sample_joints_static(&static_pose, &subset, &mut sub));
            assert_eq!(bits(&want_sub), bits(&sub), "context joints static, {at}");
            got.fill(Transform::IDENTITY);
            assert!(ctx.sample_masked(&static_pose, &mask, &mut got));
            for j in 0..n {
                if mask[j / 64] >> (j % 64) & 1 == 1 {
                    assert_eq!(bits(&want[j..=j]), bits(&got[j..=j]), "mask j{j}, {at}");
                }
            }
        }
    }
}

/// Every sample and the midpoints between, forward then backward, for
/// every clip: all segment boundaries, both directions of play.
#[test]
fn every_path_matches_sample_on_a_grid() {
    for isa in Isa::ALL.into_iter().filter(|i| !i.supported()) {
        eprintln!(
            "skipped: instruction-set level {} (this CPU does not run it)",
            isa.name()
        );
    }
    for (name, bytes) in cooked() {
        let p = Package::load(bytes).unwrap();
        let n = p.skeleton().joint_count() as u32;
        let all: Vec<u32> = (0..n).collect();
        let rev: Vec<u32> = (0..n).rev().collect();
        for (i, c) in p.clips().iter().enumerate() {
            let steps = (2 * c.num_samples()).clamp(2, 600);
            let mut times: Vec<f32> = (0..=steps)
                .map(|k| k as f32 / steps as f32 * c.duration_s())
                .collect();
            let back: Vec<f32> = times.iter().rev().copied().collect();
            times.extend(back);
            check(bytes, i, &times, &all, 0);
            check(bytes, i, &times, &rev, 2);
        }
        eprintln!("checked {name}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    /// Random clips, times (also outside the clip: loop modes wrap or
    /// clamp), subsets (any order, repeats) and masks.
    #[test]
    fn every_path_matches_sample_at_random(
        pick in any::<prop::sample::Index>(),
        times in prop::collection::vec(-2.0f32..6.0, 1..24),
        subset in prop::collection::vec(any::<u32>(), 0..24),
        mask_seed in any::<u64>(),
    ) {
        let all = cooked();
        let clips: Vec<(usize, usize)> = all
            .iter()
            .enumerate()
            .flat_map(|(k, (_, b))| {
                let n = Package::load(b).map(|p| p.clips().len()).unwrap_or(0);
                (0..n).map(move |c| (k, c))
            })
            .collect();
        let (k, c) = clips[pick.index(clips.len())];
        check(&all[k].1, c, &times, &subset, mask_seed);
    }
}
