//! Mapping a clip-local time to the two samples that bracket it. Shared by
//! every codec, the runtime and the cook side (resampled curves, the
//! encoder's verification) so that all of them agree on duration and loop
//! semantics, bit for bit.
//!
//! A clip stores its authored duration explicitly, next to a uniform sample
//! grid at `sample_rate` (sample `i` at `i / sample_rate`). The grid covers
//! the duration; the duration is never derived from the sample count.

/// How playback treats times outside `[0, duration]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum LoopMode {
    /// Clamp to `[0, duration]`.
    Once = 0,
    /// Wrap with `t mod duration`; the grid holds a sample at the duration
    /// (authored loops repeat their first pose there).
    Loop = 1,
    /// Wrap with `t mod duration` on a grid *without* the duplicated end
    /// sample: `duration = num_samples / sample_rate` and the sample after
    /// the last one is sample 0, so the interval from the last sample to the
    /// duration blends last → first. The cooker uses it when a loop's last
    /// sample repeats its first (one pose fewer to store and decode); the
    /// clip's duration is unchanged. This is ACL's "wrap" loop policy.
    LoopWrap = 2,
}

impl LoopMode {
    /// The mode stored as byte `v` in a clip record.
    pub fn from_u8(v: u8) -> Option<LoopMode> {
        match v {
            0 => Some(LoopMode::Once),
            1 => Some(LoopMode::Loop),
            2 => Some(LoopMode::LoopWrap),
            _ => None,
        }
    }
    /// The mode's name in reports and manifests.
    pub fn as_str(&self) -> &'static str {
        match self {
            LoopMode::Once => "once",
            LoopMode::Loop => "loop",
            LoopMode::LoopWrap => "loop-wrap",
        }
    }
    /// Whether times wrap (both looping modes).
    pub fn is_looping(&self) -> bool {
        !matches!(self, LoopMode::Once)
    }
}

/// Two bracketing sample indices and the blend factor between them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SamplePosition {
    pub i0: u32,
    pub i1: u32,
    pub alpha: f32,
}

/// Where time `t` falls on the sample grid. Non-finite times map to 0.
/// `num_samples` must be at least 1 (validated at load).
///
/// [`LoopMode::LoopWrap`]: `i1 = (i0 + 1) % num_samples`, so a time past
/// the last sample blends towards sample 0 (`duration = num_samples /
/// sample_rate`, validated at load).
#[inline]
pub fn sample_position(
    t: f32,
    duration: f32,
    sample_rate: f32,
    num_samples: u32,
    mode: LoopMode,
) -> SamplePosition {
    let last = num_samples.saturating_sub(1);
    let mut t = if t.is_finite() { t } else { 0.0 };
    if duration > 0.0 {
        t = match mode {
            LoopMode::Once => t.clamp(0.0, duration),
            // A time inside the clip is its own remainder: no `fmodf` call
            // (the result is the same, exactly).
            LoopMode::Loop | LoopMode::LoopWrap if (0.0..duration).contains(&t) => t,
            LoopMode::Loop | LoopMode::LoopWrap => wrap(t, duration),
        };
    } else {
        t = 0.0;
    }
    let pos = t * sample_rate;
    // `floor` then a conversion, without the `floorf` call baseline x86_64
    // makes of `floor`: `pos as u32` truncates towards zero, which is the
    // floor for every `pos >= 0`, and saturates to 0 below (and for NaN)
    // and to u32::MAX above, as the floor then the clamp did.
    blend_position(pos, (pos as u32).min(last), last, mode)
}

/// `t` wrapped into `[0, duration)` (`duration > 0`).
#[inline]
fn wrap(t: f32, duration: f32) -> f32 {
    let w = t.rem_euclid(duration);
    // rem_euclid may round up to exactly `duration`.
    if w >= duration {
        0.0
    } else {
        w
    }
}

/// The position of grid coordinate `pos` whose first sample is `i0` (of
/// samples `0..=last`): the next sample and the blend factor.
#[inline(always)]
fn blend_position(pos: f32, i0: u32, last: u32, mode: LoopMode) -> SamplePosition {
    let i1 = match mode {
        // The sample after the last is the first (the seam interval).
        LoopMode::LoopWrap => {
            if i0 >= last {
                0
            } else {
                i0 + 1
            }
        }
        _ => (i0 + 1).min(last),
    };
    let alpha = if i1 == i0 {
        0.0
    } else {
        (pos - i0 as f32).clamp(0.0, 1.0)
    };
    SamplePosition { i0, i1, alpha }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_clamps_and_loop_wraps() {
        let p = sample_position(5.0, 1.0, 10.0, 11, LoopMode::Once);
        assert_eq!((p.i0, p.i1, p.alpha), (10, 10, 0.0));
        let p = sample_position(-1.0, 1.0, 10.0, 11, LoopMode::Once);
        assert_eq!((p.i0, p.i1, p.alpha), (0, 1, 0.0));
        let p = sample_position(1.25, 1.0, 10.0, 11, LoopMode::Loop);
        assert_eq!((p.i0, p.i1), (2, 3));
        assert!((p.alpha - 0.5).abs() < 1e-4);
        let p = sample_position(-0.05, 1.0, 10.0, 11, LoopMode::Loop);
        assert_eq!((p.i0, p.i1), (9, 10));
    }

    #[test]
    fn single_sample_and_nan() {
        let p = sample_position(f32::NAN, 0.0, 30.0, 1, LoopMode::Loop);
        assert_eq!((p.i0, p.i1, p.alpha), (0, 0, 0.0));
    }

    #[test]
    fn loop_wrap_blends_last_to_first() {
        // 10 samples at 10 Hz, duration 1 s: sample 9 at 0.9 s, then the
        // seam back to sample 0 at 1.0 s.
        let p = sample_position(0.95, 1.0, 10.0, 10, LoopMode::LoopWrap);
        assert_eq!((p.i0, p.i1), (9, 0));
        assert!((p.alpha - 0.5).abs() < 1e-4);
        let p = sample_position(1.0, 1.0, 10.0, 10, LoopMode::LoopWrap);
        assert_eq!((p.i0, p.alpha), (0, 0.0));
        let p = sample_position(-0.02, 1.0, 10.0, 10, LoopMode::LoopWrap);
        assert_eq!((p.i0, p.i1), (9, 0));
        assert!((p.alpha - 0.8).abs() < 1e-3);
        let p = sample_position(0.45, 1.0, 10.0, 10, LoopMode::LoopWrap);
        assert_eq!((p.i0, p.i1), (4, 5));
        // A single-sample static loop never leaves sample 0.
        let p = sample_position(0.3, 0.5, 2.0, 1, LoopMode::LoopWrap);
        assert_eq!((p.i0, p.i1), (0, 0));
        assert_eq!(LoopMode::from_u8(2), Some(LoopMode::LoopWrap));
        assert_eq!(LoopMode::from_u8(3), None);
    }

    #[test]
    fn duration_not_on_grid() {
        // 1.158 s at 24 Hz: 29 samples cover it; t = duration lands between
        // samples 27 and 28.
        let p = sample_position(1.158, 1.158, 24.0, 29, LoopMode::Once);
        assert_eq!((p.i0, p.i1), (27, 28));
    }

    /// The formulation before the fast paths (`rem_euclid` always, then
    /// `floor`; the blend from the sample index on is shared): the
    /// position must be the same, bit for bit, everywhere.
    fn reference(t: f32, duration: f32, rate: f32, n: u32, mode: LoopMode) -> SamplePosition {
        let last = n.saturating_sub(1);
        let t = if t.is_finite() { t } else { 0.0 };
        let t = match mode {
            _ if duration.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) => 0.0,
            LoopMode::Once => t.clamp(0.0, duration),
            LoopMode::Loop | LoopMode::LoopWrap => wrap(t, duration),
        };
        let pos = t * rate;
        let f = pos.floor();
        let i0 = if f <= 0.0 { 0 } else { (f as u32).min(last) };
        blend_position(pos, i0, last, mode)
    }

    #[test]
    fn fast_paths_match_the_reference_everywhere() {
        let specials = [
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            f32::NAN,
            f32::INFINITY,
            -f32::INFINITY,
        ];
        let clips = [
            (1.0, 30.0, 31u32),
            (1.158, 24.0, 29),
            (0.0, 30.0, 1),
            (3.3, 120.0, 397),
        ];
        for (duration, rate, n) in clips {
            let times = (-4000..4000)
                .map(|k| k as f32 * duration / 997.0)
                .chain([duration, duration - f32::EPSILON, -duration, 2.0 * duration])
                .chain(specials);
            for t in times {
                for mode in [LoopMode::Once, LoopMode::Loop, LoopMode::LoopWrap] {
                    let (a, b) = (
                        sample_position(t, duration, rate, n, mode),
                        reference(t, duration, rate, n, mode),
                    );
                    assert_eq!(
                        (a.i0, a.i1, a.alpha.to_bits()),
                        (b.i0, b.i1, b.alpha.to_bits()),
                        "t {t} duration {duration} mode {mode:?}"
                    );
                }
            }
        }
    }
}
