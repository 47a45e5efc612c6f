//! Segment-count selection for short clips.
//!
//! A full search per segment count is the encoder's dominant cost, and the
//! blob size is far from monotonic in the count. So one full search at the
//! profile's segment length tells, per track and sample, the quantization
//! step the error bound allowed there; every other count is then *priced*
//! without any FK: per track and candidate segment, the segment's 8-bit
//! range (as the writer stores it) and the finest step any of its samples
//! needed give the lowest rate id whose step is at least that fine, and the
//! writer's size formula turns those rates into bytes. Only the cheapest
//! priced counts get a full search; the smallest real blob wins.

use crate::classify::{AnimTrack, Plan};
use crate::search::{self, Segment};
use ludus_anim_format::vbr::{rate_id, RATE_BITS, RATE_CONSTANT, RATE_RAW, RATE_UNRANGED};

/// Per animated track and sample: the quantization step (meters or
/// quaternion units, the track's own) the searched rates kept there.
/// `0.0` means raw; infinity a segment-constant track (no step bound).
pub(crate) struct Steps {
    steps: Vec<Vec<f32>>,
}

/// Largest decoded extent of `track` over samples `start..end`, with the
/// writer's conservative 8-bit segment bounds (see `quantize::seg_range`).
fn segment_extent(track: &AnimTrack, start: usize, end: usize) -> f32 {
    let mut widest = 0.0f32;
    for c in 0..3 {
        let ext = track.clip_ext[c];
        if !track.stores(c) || ext <= 0.0 {
            continue;
        }
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for v in &track.values[start..end] {
            lo = lo.min(v[c]);
            hi = hi.max(v[c]);
        }
        let norm = |x: f32| ((x as f64 - track.clip_min[c] as f64) / ext as f64).clamp(0.0, 1.0);
        let qlo = (norm(lo) * 255.0).floor();
        let qhi = (norm(hi) * 255.0).ceil().max(qlo);
        widest = widest.max((qhi - qlo) as f32 / 255.0 * ext);
    }
    widest
}

/// Quantization step of rate byte `rate` over a segment of extent `ext`.
fn step_of(track: &AnimTrack, rate: u8, ext: f32) -> f32 {
    let id = rate_id(rate);
    if id == RATE_RAW {
        return 0.0;
    }
    if id == RATE_CONSTANT {
        return f32::INFINITY;
    }
    let ext = if rate & RATE_UNRANGED != 0 {
        (0..3)
            .filter(|&c| track.stores(c))
            .map(|c| track.clip_ext[c])
            .fold(0.0f32, f32::max)
    } else {
        ext
    };
    ext / ((1u64 << RATE_BITS[id as usize]) - 1) as f32
}

impl Steps {
    /// The steps the searched `rates` over `segments` kept.
    pub(crate) fn new(plan: &Plan, segments: &[Segment], rates: &[Vec<u8>]) -> Steps {
        let n = segments.last().map_or(0, |s| s.end);
        let steps = plan
            .anim
            .iter()
            .enumerate()
            .map(|(a, track)| {
                let mut per_sample = vec![0.0f32; n];
                for (seg, seg_rates) in segments.iter().zip(rates) {
                    let rate = seg_rates.get(a).copied().unwrap_or(RATE_RAW);
                    let ext = segment_extent(track, seg.start, seg.end);
                    per_sample[seg.start..seg.end].fill(step_of(track, rate, ext));
                }
                per_sample
            })
            .collect();
        Steps { steps }
    }

    /// Priced rates of every track over `segments`.
    pub(crate) fn rates(&self, plan: &Plan, segments: &[Segment]) -> Vec<Vec<u8>> {
        segments
            .iter()
            .map(|seg| {
                plan.anim
                    .iter()
                    .zip(&self.steps)
                    .map(|(track, steps)| priced_rate(track, steps, seg))
                    .collect()
            })
            .collect()
    }
}

/// The lowest rate id whose step over `seg` is no coarser than the finest
/// step any sample of `seg` needed.
fn priced_rate(track: &AnimTrack, steps: &[f32], seg: &Segment) -> u8 {
    let need = steps[seg.start..seg.end]
        .iter()
        .fold(f32::INFINITY, |m, &s| m.min(s));
    if need <= 0.0 {
        return RATE_RAW;
    }
    let ext = segment_extent(track, seg.start, seg.end);
    if ext <= need || need == f32::INFINITY {
        return RATE_CONSTANT;
    }
    (1..RATE_RAW)
        .find(|&id| ext / ((1u64 << RATE_BITS[id as usize]) - 1) as f32 <= need)
        .unwrap_or(RATE_RAW)
}

/// Up to `keep` counts of `candidates` other than `searched` (the count
/// already searched), cheapest priced first, ties to the earlier
/// candidate. (The searched count is not a bar: its price reproduces its
/// own rates, the others' take the finest step of each segment, so the
/// price favours it; skipping the alternatives it out-prices costs 0.9%
/// on the ACL anchors.)
pub(crate) fn cheapest(
    candidates: &[usize],
    searched: usize,
    keep: usize,
    price: impl Fn(&[Segment]) -> usize,
    n: usize,
) -> Vec<usize> {
    let mut priced: Vec<(usize, usize, usize)> = candidates
        .iter()
        .enumerate()
        .filter(|(_, &c)| c != searched)
        .map(|(k, &c)| (price(&search::split_count(n, c)), k, c))
        .collect();
    priced.sort_unstable();
    priced.into_iter().take(keep).map(|(_, _, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A translation track moving along x only, 0 to `reach` meters.
    fn ramp(n: usize, reach: f32) -> AnimTrack {
        AnimTrack {
            joint: 0,
            kind: 1,
            values: (0..n)
                .map(|s| [reach * s as f32 / (n - 1) as f32, 0.0, 0.0, 0.0])
                .collect(),
            clip_min: [0.0; 3],
            clip_ext: [reach, 0.0, 0.0],
            rot_codes: [0; 6],
        }
    }

    #[test]
    fn a_raw_sample_prices_its_segment_raw_and_constants_stay_constant() {
        let t = ramp(8, 1.0);
        let seg = Segment { start: 0, end: 8 };
        let mut steps = vec![f32::INFINITY; 8];
        assert_eq!(priced_rate(&t, &steps, &seg), RATE_CONSTANT);
        steps[5] = 0.0;
        assert_eq!(priced_rate(&t, &steps, &seg), RATE_RAW);
    }

    #[test]
    fn a_finer_step_prices_more_bits_and_the_step_holds() {
        let t = ramp(16, 1.0);
        let seg = Segment { start: 0, end: 16 };
        let coarse = priced_rate(&t, &[1e-2; 16], &seg);
        let fine = priced_rate(&t, &[1e-4; 16], &seg);
        assert!(RATE_CONSTANT < coarse && coarse < fine && fine < RATE_RAW);
        let ext = segment_extent(&t, 0, 16);
        for (rate, need) in [(coarse, 1e-2f32), (fine, 1e-4)] {
            assert!(step_of(&t, rate, ext) <= need);
            assert!(step_of(&t, rate - 1, ext) > need);
        }
    }

    #[test]
    fn cheapest_skips_the_searched_count_and_breaks_ties_by_order() {
        // Price: 10 per segment except 3 segments, priced like 2.
        let price = |segs: &[Segment]| if segs.len() == 3 { 20 } else { 10 * segs.len() };
        assert_eq!(cheapest(&[2, 1, 3, 4], 1, 2, price, 16), vec![2, 3]);
        assert_eq!(cheapest(&[3, 2, 4], 2, 1, price, 16), vec![3]);
        assert!(cheapest(&[1], 1, 1, price, 16).is_empty());
    }
}
