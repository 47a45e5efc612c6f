//! Random valid blobs (every rate id, unranged tracks, zero clip extents,
//! raw samples, constants with and without w, rotations among
//! translations and scales, one to five segments) decoded at every
//! instruction-set level by every whole-pose request, and joint subsets
//! through the walk and through the index: every path must give the
//! baseline whole pose's bits.

use super::decode::{FullPose, StaticFill};
use super::format::*;
use super::isa::{Isa, SupportedIsa};
use super::tracks::SegmentCache;
use super::{CacheView, CachedTrack, TrackCache, VbrClip, VbrIndex, VbrRequest};
use crate::math::Transform;
use crate::timing::SamplePosition;

/// xorshift64*: deterministic, no dependency.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn unit(&mut self) -> f32 {
        (self.below(2_000_001) as f32 - 1_000_000.0) / 1_000_000.0
    }
}

/// One animated track of the random clip: rotation or not, and its
/// stored components.
struct Track {
    rotation: bool,
    stored: u32,
}

/// A valid blob of `joints` joints and `samples` samples.
fn random_blob(rng: &mut Rng, joints: usize, samples: u32) -> Vec<u8> {
    let (types, constants, ranges, tracks) = random_tracks(rng, joints);
    let segments = if tracks.is_empty() {
        0
    } else {
        1 + rng.below(u64::from(samples.min(5))) as u32
    };
    let (mut blocks, mut table) = (Vec::new(), Vec::new());
    let (len, long) = (
        samples.checked_div(segments).unwrap_or(0),
        samples.checked_rem(segments).unwrap_or(0),
    );
    for s in 0..segments {
        let n = (len + u32::from(s < long)) as usize;
        table.extend((blocks.len() as u32).to_le_bytes());
        let row = random_segment(rng, &tracks, n, &mut blocks);
        table.extend(row.to_le_bytes());
    }
    let mut blob = varint(segments);
    if segments > 0 {
        blob.push(0x0f);
    }
    for part in [&types, &constants, &ranges, &table, &blocks] {
        blob.extend_from_slice(part);
    }
    if segments > 0 {
        blob.resize(blob.len() + SEGMENT_PADDING, 0);
    }
    blob
}

/// Random type bytes, and the constants, clip ranges and animated tracks
/// they imply (in track order).
fn random_tracks(rng: &mut Rng, joints: usize) -> (Vec<u8>, Vec<u8>, Vec<u8>, Vec<Track>) {
    let (mut types, mut constants, mut ranges, mut tracks) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for _ in 0..joints {
        let mut t = 0u8;
        for k in 0..3 {
            let kind = match rng.below(10) {
                0..=1 => KIND_DEFAULT,
                2 => KIND_CONSTANT,
                3 if k == 0 => KIND_CONSTANT_FULL,
                _ if k == 0 || rng.below(3) == 0 => KIND_ANIMATED,
                _ => KIND_DEFAULT,
            };
            t |= kind << (2 * k);
            match kind {
                KIND_CONSTANT => (0..3).for_each(|_| constants.extend(rng.unit().to_le_bytes())),
                KIND_CONSTANT_FULL => {
                    (0..4).for_each(|_| constants.extend(rng.unit().to_le_bytes()))
                }
                KIND_ANIMATED => tracks.push(random_clip_range(rng, k == 0, &mut ranges)),
                _ => {}
            }
        }
        types.push(t);
    }
    (types, constants, ranges, tracks)
}

/// A random clip range of an animated rotation (16-bit codes) or vector
/// (f32), one in five extents zero, appended to `ranges`.
fn random_clip_range(rng: &mut Rng, rotation: bool, ranges: &mut Vec<u8>) -> Track {
    let mut stored = 0;
    if rotation {
        for _ in 0..3 {
            ranges.extend((16_384 + rng.below(32_768) as u16).to_le_bytes());
        }
    } else {
        (0..3).for_each(|_| ranges.extend(rng.unit().to_le_bytes()));
    }
    for _ in 0..3 {
        let zero = rng.below(5) == 0;
        if rotation {
            let e = if zero { 0 } else { rng.below(65_536) as u16 };
            stored += u32::from(e != 0);
            ranges.extend(e.to_le_bytes());
        } else {
            let e = if zero { 0.0 } else { rng.unit().abs() };
            stored += u32::from(e != 0.0);
            ranges.extend(e.to_le_bytes());
        }
    }
    Track { rotation, stored }
}

/// One segment block of `n` samples (random rates, sample bits and range
/// entries) appended to `blocks`; returns the bits of a sample row.
fn random_segment(rng: &mut Rng, tracks: &[Track], n: usize, blocks: &mut Vec<u8>) -> u32 {
    let rates: Vec<u8> = tracks
        .iter()
        .map(|_| {
            let id = rng.below(u64::from(NUM_RATES)) as u8;
            if id != RATE_CONSTANT && id != RATE_RAW && rng.below(3) == 0 {
                id | RATE_UNRANGED
            } else {
                id
            }
        })
        .collect();
    let row: u32 = tracks
        .iter()
        .zip(&rates)
        .map(|(t, &r)| track_sample_bits(r, t.rotation, t.stored))
        .sum();
    blocks.extend(&rates);
    let mut bits = vec![0u8; (n * row as usize).div_ceil(8)];
    let mut at = 0usize;
    for _ in 0..n {
        for (t, &r) in tracks.iter().zip(&rates) {
            if rate_id(r) == RATE_RAW {
                // Raw samples hold finite floats (rotations keep w).
                for _ in 0..if t.rotation { 4 } else { 3 } {
                    put_bits(&mut bits, at, u64::from(rng.unit().to_bits()), 32);
                    at += 32;
                }
            } else {
                for _ in 0..track_sample_bits(r, t.rotation, t.stored) {
                    put_bits(&mut bits, at, rng.below(2), 1);
                    at += 1;
                }
            }
        }
    }
    blocks.extend(bits);
    for &r in &rates {
        if has_segment_range(r) {
            (0..6).for_each(|_| blocks.push(rng.below(256) as u8));
        }
    }
    row
}

fn put_bits(b: &mut [u8], at: usize, v: u64, n: usize) {
    for k in 0..n {
        if (v >> k) & 1 != 0 {
            b[(at + k) / 8] |= 1 << ((at + k) % 8);
        }
    }
}

fn bits(p: &[Transform]) -> Vec<u32> {
    p.iter()
        .flat_map(|x| x.to_array().map(f32::to_bits))
        .collect()
}

#[test]
fn random_blobs_decode_alike_at_every_level() {
    let baseline = SupportedIsa::new(Isa::Sse2).expect("every CPU runs the baseline");
    let levels: Vec<SupportedIsa> = Isa::ALL.into_iter().filter_map(SupportedIsa::new).collect();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for case in 0..300 {
        let joints = 1 + rng.below(40) as usize;
        let samples = 1 + rng.below(12) as u32;
        let blob = random_blob(&mut rng, joints, samples);
        let clip = VbrClip::parse(&blob, joints, samples).expect("a valid random blob");
        let defaults: Vec<Transform> = (0..joints)
            .map(|_| {
                let mut t = Transform::IDENTITY;
                t.translation.x = rng.unit();
                t
            })
            .collect();
        let mut stat = vec![Transform::IDENTITY; joints];
        assert!(clip.static_pose(&defaults, &mut stat));
        let index = VbrIndex::build(&clip).expect("index of a valid blob");
        // One track cache per level, kept over the case's positions (which
        // fill it, hit it or pass it by) and shared by the three policies.
        let mut caches: Vec<TrackCache> = levels.iter().map(|_| TrackCache::new(&clip)).collect();
        for _ in 0..12 {
            let i0 = rng.below(u64::from(samples)) as u32;
            let i1 = (i0 + rng.below(3) as u32).min(samples - 1);
            let alpha = [0.0, 0.25, 0.5, 0.9][rng.below(4) as usize];
            let pos = SamplePosition { i0, i1, alpha };
            let mut want = vec![Transform::IDENTITY; joints];
            assert!(clip.decode_on(baseline, &FullPose, pos, &defaults, &mut want, None, None));
            for (&isa, tc) in levels.iter().zip(&mut caches) {
                let mut got = vec![Transform::IDENTITY; joints];
                let what = format!("case {case}, {:?} at {pos:?}", isa.isa());
                // Twice each: the second decode finds what the first filled.
                for _ in 0..2 {
                    let t = Some(&mut tc.view());
                    assert!(clip.decode_on(isa, &FullPose, pos, &defaults, &mut got, None, t));
                    assert_eq!(bits(&want), bits(&got), "cached pose, {what}");
                    let t = Some(&mut tc.view());
                    assert!(clip.decode_on(isa, &StaticFill, pos, &stat, &mut got, None, t));
                    assert_eq!(bits(&want), bits(&got), "cached static pose, {what}");
                }
                assert!(clip.decode_on(isa, &FullPose, pos, &defaults, &mut got, None, None));
                assert_eq!(bits(&want), bits(&got), "pose, {what}");
                assert!(clip.decode_on(isa, &StaticFill, pos, &stat, &mut got, None, None));
                assert_eq!(bits(&want), bits(&got), "static pose, {what}");
            }
            let joints: Vec<u32> = (0..1 + rng.below(6))
                .map(|_| rng.below(joints as u64) as u32)
                .collect();
            let picked: Vec<Transform> = joints.iter().map(|&j| want[j as usize]).collect();
            let mut sub = vec![Transform::IDENTITY; joints.len()];
            let what = format!("case {case}, joints {joints:?} at {pos:?}");
            assert!(clip.joints_for_test(None, pos, &defaults, &joints, &mut sub));
            assert_eq!(bits(&picked), bits(&sub), "walked subset, {what}");
            assert!(clip.joints_for_test(Some(&index), pos, &defaults, &joints, &mut sub));
            assert_eq!(bits(&picked), bits(&sub), "indexed subset, {what}");
            let r = VbrRequest::Joints(&joints);
            assert!(clip.static_for_test(Some(&index), r, pos, &stat, &mut sub));
            assert_eq!(bits(&picked), bits(&sub), "static subset, {what}");
            let mut in_pose = stat.clone();
            let r = VbrRequest::JointsInPose(&joints);
            assert!(clip.static_for_test(Some(&index), r, pos, &stat, &mut in_pose));
            for &j in &joints {
                let j = j as usize;
                assert_eq!(bits(&want[j..=j]), bits(&in_pose[j..=j]), "in pose, {what}");
            }
        }
    }
}

/// A track cache is filled by a pose in its first segment, in one next
/// to the one it holds or in the segment of the pose before, read by the
/// poses that follow in that segment, left alone by a single jump (a
/// seek) and by a blend across a boundary, and
/// ignored for any clip but the one it was made for, even the same bytes
/// elsewhere. Every decode gives the uncached bits.
#[test]
fn track_cache_fills_near_and_fits_only_its_clip() {
    let best = SupportedIsa::best();
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    let mut checked = 0;
    for _ in 0..400 {
        let joints = 2 + rng.below(20) as usize;
        let samples = 12;
        let blob = random_blob(&mut rng, joints, samples);
        let clip = VbrClip::parse(&blob, joints, samples).expect("a valid random blob");
        if clip.segment_count() < 4 {
            continue;
        }
        checked += 1;
        let copy = blob.clone();
        let twin = VbrClip::parse(&copy, joints, samples).expect("the same blob");
        let defaults = vec![Transform::IDENTITY; joints];
        let mut stat = vec![Transform::IDENTITY; joints];
        assert!(clip.static_pose(&defaults, &mut stat));
        let (mut want, mut got) = (
            vec![Transform::IDENTITY; joints],
            vec![Transform::IDENTITY; joints],
        );
        // A segment cache belongs to one clip: one each.
        let mut segments = [SegmentCache::default(), SegmentCache::default()];
        let mut tc = TrackCache::new(&clip);
        let mut decode = |tc: &mut CacheView, clip: &VbrClip, i0: u32, i1: u32| {
            let pos = SamplePosition { i0, i1, alpha: 0.5 };
            assert!(clip.decode_pose(pos, &defaults, &mut want));
            let s = &mut segments[usize::from(std::ptr::eq(clip.data, twin.data))];
            let (r, t) = (VbrRequest::Pose, Some(tc));
            assert!(clip.decode_viewed(best, r, None, s, t, pos, &stat, &mut got));
            assert_eq!(bits(&want), bits(&got), "{i0}-{i1}");
        };
        let seg = |i: u32| clip.segment_of(i);
        // The first pose fills; the next in the segment reads.
        decode(&mut tc.view(), &clip, 0, 0);
        assert_eq!(tc.held(), Some(0));
        decode(&mut tc.view(), &clip, 0, 0);
        assert_eq!(tc.held(), Some(0));
        // A jump of more than one segment leaves it as it is.
        let far = (0..samples).find(|&i| seg(i) >= 2).expect("four segments");
        decode(&mut tc.view(), &clip, far, far);
        assert_eq!(tc.held(), Some(0));
        // A blend across a boundary too.
        let last0 = (0..samples)
            .filter(|&i| seg(i) == 0)
            .max()
            .expect("segment 0");
        decode(&mut tc.view(), &clip, last0, last0 + 1);
        assert_eq!(tc.held(), Some(0));
        // The next segment fills it again.
        decode(&mut tc.view(), &clip, last0 + 1, last0 + 1);
        assert_eq!(tc.held(), Some(1));
        // A jump (a loop's wrap, a seek) fills it at the second pose that
        // lands in the same segment.
        let third = (0..samples).find(|&i| seg(i) == 3).expect("four segments");
        decode(&mut tc.view(), &clip, third, third);
        assert_eq!(tc.held(), Some(1));
        decode(&mut tc.view(), &clip, third, third);
        assert_eq!(tc.held(), Some(3));
        // A twin's cache (the same bytes elsewhere) is never used or filled.
        let mut theirs = TrackCache::new(&twin);
        decode(&mut theirs.view(), &clip, 0, 0);
        assert_eq!(theirs.held(), None);
        decode(&mut theirs.view(), &twin, 0, 0);
        assert_eq!(theirs.held(), Some(0));
        let mut none = TrackCache::default();
        decode(&mut none.view(), &clip, 0, 0);
        assert_eq!(none.held(), None);
    }
    assert!(
        checked > 20,
        "only {checked} clips of four segments or more"
    );
}

/// A cache over entries the caller placed (an array inside its own
/// struct, a slice of an arena) fills and reads like an allocated one; one
/// with fewer entries than the clip's animated tracks is never used. Every
/// decode gives the uncached bits.
#[test]
fn track_cache_over_caller_entries() {
    let best = SupportedIsa::best();
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut checked = 0;
    for _ in 0..200 {
        let joints = 2 + rng.below(12) as usize;
        let samples = 12;
        let blob = random_blob(&mut rng, joints, samples);
        let clip = VbrClip::parse(&blob, joints, samples).expect("a valid random blob");
        let n = clip.animated_track_count();
        if n == 0 || n > 24 {
            continue;
        }
        checked += 1;
        let defaults = vec![Transform::IDENTITY; joints];
        let mut stat = vec![Transform::IDENTITY; joints];
        assert!(clip.static_pose(&defaults, &mut stat));
        let mut want = vec![Transform::IDENTITY; joints];
        let mut got = vec![Transform::IDENTITY; joints];
        let mut arena = vec![CachedTrack::EMPTY; 3 * n];
        let (_, rest) = arena.split_at_mut(n);
        let mut inline = TrackCache::with_entries(&clip, [CachedTrack::EMPTY; 24]);
        let mut sliced = TrackCache::with_entries(&clip, &mut rest[..n]);
        let mut short = TrackCache::with_entries(&clip, vec![CachedTrack::EMPTY; n - 1]);
        let mut segments = SegmentCache::default();
        let mut hits = 0;
        // Each sample twice: a jump fills at its second pose.
        for i in [0, 0, 1, 1, 5, 5, 11, 11] {
            let pos = SamplePosition {
                i0: i,
                i1: i,
                alpha: 0.0,
            };
            assert!(clip.decode_pose(pos, &defaults, &mut want));
            let views = [inline.view(), sliced.view(), short.view()];
            for (k, mut v) in views.into_iter().enumerate() {
                let (r, s) = (VbrRequest::Pose, &mut segments);
                let t = Some(&mut v);
                assert!(clip.decode_viewed(best, r, None, s, t, pos, &stat, &mut got));
                assert_eq!(bits(&want), bits(&got), "cache {k} at sample {i}");
            }
            let seg = Some(clip.segment_of(i));
            if inline.held() == seg {
                hits += 1;
            }
            assert_eq!(inline.held(), sliced.held(), "sample {i}");
            assert_eq!(short.held(), None, "too few entries");
        }
        // Held after the second pose of each pair at least.
        assert!(hits >= 4, "{hits} poses left their segment held");
    }
    assert!(
        checked > 20,
        "only {checked} clips with 1-24 animated tracks"
    );
}
