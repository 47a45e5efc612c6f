//! Every request a `Player` decodes gives the bits of `Clip::sample`, on
//! real cooked packages: the bundled fixtures and, when `../shared/anchors`
//! is present, the ACL anchor clips the bench measures (cooked in
//! centimetres as the bench does). Players: one bound at creation, one
//! rebound from another clip (`Player::bind`), one moved by `advance`;
//! played forward, backward and seeking at random, for whole poses, joint
//! subsets and masks (sparse and dense). Times and subsets are drawn by
//! proptest, plus a grid that hits every sample, every segment boundary
//! and the blends between. (The decoders' internal paths, every
//! instruction-set level among them, are compared by the runtime's unit
//! tests.)

mod common;
use common::*;

use ludus_anim_runtime::{Clip, Package, Player, Request, Transform};
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
    let other = &p.clips()[(clip + 1) % p.clips().len()];
    let mut rebound = Player::new(other, p.sample_defaults(other)).unwrap();
    rebound.bind(c, defaults).unwrap();
    let mut players = [Player::new(c, defaults).unwrap(), rebound];
    let mut advanced = Player::new(c, defaults).unwrap();
    for &t in times {
        for player in &mut players {
            player.seek(t);
        }
        advanced.advance(t - advanced.time());
        let at = format!("{} at t = {t}", c.name());
        assert!(c.sample(t, defaults, &mut want).is_ok());
        let want_sub: Vec<Transform> = subset.iter().map(|&j| want[j as usize]).collect();
        for (k, player) in players.iter_mut().enumerate() {
            let at = format!("{at}, player {k}");
            assert!(player.decode(Request::Pose, &mut got).is_ok());
            assert_eq!(bits(&want), bits(&got), "pose, {at}");
            assert!(player.decode(Request::Joints(&subset), &mut sub).is_ok());
            assert_eq!(bits(&want_sub), bits(&sub), "joints, {at}");
            got.fill(Transform::IDENTITY);
            assert!(player.decode(Request::Mask(&mask), &mut got).is_ok());
            for j in 0..n {
                if mask[j / 64] >> (j % 64) & 1 == 1 {
                    assert_eq!(bits(&want[j..=j]), bits(&got[j..=j]), "mask j{j}, {at}");
                }
            }
        }
        check_advanced(c, defaults, &mut advanced, &mut got);
    }
}

/// A player moved by `advance` decodes at its own time as `Clip::sample`.
fn check_advanced(
    c: &Clip<'_>,
    defaults: &[Transform],
    player: &mut Player,
    got: &mut [Transform],
) {
    let mut want = vec![Transform::IDENTITY; got.len()];
    assert!(c.sample(player.time(), defaults, &mut want).is_ok());
    assert!(player.decode(Request::Pose, got).is_ok());
    assert_eq!(bits(&want), bits(got), "advanced to {}", player.time());
}

/// Every sample and the midpoints between, forward then backward, for
/// every clip: all segment boundaries, both directions of play.
#[test]
fn every_path_matches_sample_on_a_grid() {
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
