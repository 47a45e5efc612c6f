//! The times verification checks, by kind, and the peak search between
//! them.
//!
//! Every sample; interior points of every interval (quarter points for the
//! codec, whose error between two decoded samples follows the samples'
//! almost linearly; eighths and the nlerp/slerp peaks for the authored
//! curves); the clip end and both sides of a loop seam; source key times
//! and the instant before each (a STEP key jumps there); and a seeded set
//! of random times per clip. Finite checks are evidence, not a proof: the
//! verifier then searches for the peak around the worst checked times
//! ([`golden_max`]) and the report adds the clip's f32 floor
//! ([`crate::floor`]).

/// Quarter points: where the codec's error is checked inside an interval.
pub const CODEC_FRACTIONS: [f32; 3] = [0.25, 0.5, 0.75];

/// Where the authored curves are checked inside an interval: eighths, and
/// `0.5 ± 1/(2 sqrt 3)`, where nlerp departs most from slerp (for a small
/// angle the departure is proportional to `a (1 - a) (1 - 2a)`, which
/// peaks there; a quarter point sees 97.5 % of it).
pub const SOURCE_FRACTIONS: [f32; 9] = [
    0.125,
    0.211_324_87,
    0.25,
    0.375,
    0.5,
    0.625,
    0.75,
    0.788_675_1,
    0.875,
];

/// Seeded random times per clip (uniform over the clip, the seed derived
/// from its grid so they are the same on every cook).
pub const RANDOM_TIMES: usize = 64;

/// How many times of each kind were checked: the report's type, so
/// verification's counts reach `report.json` as they are.
pub use ludus_anim_report::TimeCounts;

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Sample,
    Interior,
    Seam,
    Key,
    Random,
}

/// A clip's checked times, ascending, and how many of each kind.
#[derive(Clone, Debug, Default)]
pub struct CheckTimes {
    pub times: Vec<f32>,
    pub counts: TimeCounts,
}

/// The grid a clip is checked on.
#[derive(Clone, Copy, Debug)]
pub struct Grid {
    pub duration_s: f32,
    pub sample_rate_hz: f32,
    pub num_samples: u32,
    pub looping: bool,
}

impl Grid {
    /// The last sample lies before the duration: a wrap loop, whose seam
    /// interval (last sample -> duration) blends towards sample 0.
    fn wraps(&self) -> bool {
        let dt = 1.0 / self.sample_rate_hz;
        let last = self.num_samples.saturating_sub(1) as f32 * dt;
        self.duration_s > 0.0 && last + 1e-3 * dt < self.duration_s
    }
}

/// Every time to check on `grid`: samples, `fractions` of every interval
/// (the seam interval of a wrap loop included), the end and, for loops,
/// both sides of the seam, the instant at and just before each of
/// `key_times`, and [`RANDOM_TIMES`] seeded random times.
pub fn check_plan(grid: Grid, fractions: &[f32], key_times: &[f32]) -> CheckTimes {
    let Grid {
        duration_s: dur,
        sample_rate_hz: rate,
        num_samples: n,
        looping,
    } = grid;
    let dt = 1.0 / rate;
    let mut t: Vec<(f32, Kind)> = Vec::with_capacity(n as usize * (1 + fractions.len()) + 80);
    for i in 0..n {
        t.push(((i as f32 * dt).min(dur), Kind::Sample));
        for &f in fractions {
            let m = (i as f32 + f) * dt;
            if m < dur {
                t.push((m, Kind::Interior));
            }
        }
    }
    t.push((dur, Kind::Seam));
    let wrap = grid.wraps();
    if wrap {
        let last = n.saturating_sub(1) as f32 * dt;
        for &f in fractions {
            t.push((last + f * (dur - last), Kind::Interior));
        }
    }
    if (looping || wrap) && dur > 0.0 {
        t.push(((dur - 0.25 * dt).max(0.0), Kind::Seam));
        t.push((dur + 0.25 * dt, Kind::Seam));
    }
    for &k in key_times.iter().filter(|&&k| (0.0..=dur).contains(&k)) {
        t.push((k, Kind::Key));
        // Just before: a STEP curve still holds the previous value.
        t.push(((k - 1e-4 * dt).max(0.0), Kind::Key));
    }
    let mut seed = seed_of(grid);
    for _ in 0..RANDOM_TIMES {
        seed = splitmix(seed);
        t.push((
            (seed >> 40) as f32 / (1u64 << 24) as f32 * dur,
            Kind::Random,
        ));
    }
    t.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    t.dedup_by(|b, a| a.0 == b.0);
    let mut counts = TimeCounts::default();
    for (_, k) in &t {
        match k {
            Kind::Sample => counts.samples += 1,
            Kind::Interior => counts.interior += 1,
            Kind::Seam => counts.seam += 1,
            Kind::Key => counts.keys += 1,
            Kind::Random => counts.random += 1,
        }
    }
    CheckTimes {
        times: t.into_iter().map(|x| x.0).collect(),
        counts,
    }
}

fn seed_of(g: Grid) -> u64 {
    (g.duration_s.to_bits() as u64) << 32
        ^ (g.sample_rate_hz.to_bits() as u64)
        ^ (g.num_samples as u64) << 7
}

fn splitmix(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Golden-section iterations of the peak search: the bracket shrinks to
/// 0.618^10 (0.8 %) of its width.
pub const GOLDEN_STEPS: usize = 10;

/// The largest value of `f` found by golden-section search over
/// `[t - h, t + h]` (`f` is called `GOLDEN_STEPS + 2` times): `(time,
/// value)` of the best evaluation. For a unimodal bracket this is its peak;
/// in any case it is a value `f` really takes.
pub fn golden_max(t: f32, h: f32, mut f: impl FnMut(f32) -> f32) -> (f32, f32) {
    const R: f32 = 0.618_034;
    let (mut a, mut b) = ((t - h).max(0.0), t + h);
    let mut x1 = b - R * (b - a);
    let mut x2 = a + R * (b - a);
    let (mut f1, mut f2) = (f(x1), f(x2));
    let mut best = if f1 >= f2 { (x1, f1) } else { (x2, f2) };
    for _ in 0..GOLDEN_STEPS {
        if f1 >= f2 {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - R * (b - a);
            f1 = f(x1);
            if f1 > best.1 {
                best = (x1, f1);
            }
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + R * (b - a);
            f2 = f(x2);
            if f2 > best.1 {
                best = (x2, f2);
            }
        }
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn golden_search_finds_an_interior_peak() {
        let (t, v) = golden_max(0.5, 0.25, |x| 1.0 - (x - 0.61) * (x - 0.61));
        assert!((t - 0.61).abs() < 0.01, "{t}");
        assert!(v > 0.9999);
    }

    #[test]
    fn counts_name_every_kind_once() {
        let g = Grid {
            duration_s: 1.0,
            sample_rate_hz: 4.0,
            num_samples: 5,
            looping: true,
        };
        let p = check_plan(g, &CODEC_FRACTIONS, &[0.3]);
        assert_eq!(p.counts.samples, 5);
        assert_eq!(p.counts.interior, 12);
        // The end is sample 4 and 0.25 dt before it a quarter point: only
        // the instant past the seam is a seam time of its own.
        assert_eq!(p.counts.seam, 1);
        assert_eq!(p.counts.keys, 2);
        assert_eq!(p.counts.random, RANDOM_TIMES);
        assert_eq!(p.counts.total(), p.times.len());
        assert!(p.times.windows(2).all(|w| w[0] < w[1]));
        // Deterministic.
        assert_eq!(check_plan(g, &CODEC_FRACTIONS, &[0.3]).times, p.times);
    }
}
