//! A clip on a uniform sample grid, ready for an encoder.

use ludus_anim_format::math::{interpolate, Transform};
use ludus_anim_format::timing::{sample_position, LoopMode, SamplePosition};
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResampledCurve {
    pub name: String,
    /// Stable channel ID: FNV-1a 64 of the name.
    pub id: u64,
    pub default: f32,
    /// One value per sample of the owning clip.
    pub values: Vec<f32>,
}

/// Uniformly sampled local poses: sample `i` is at time `i / sample_rate_hz`
/// and `samples[i * joint_count + j]` is joint `j`'s local transform there.
/// The grid covers `duration_s`; the duration is authored, not derived.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ResampledClip {
    pub name: String,
    pub sample_rate_hz: f32,
    pub num_samples: u32,
    pub duration_s: f32,
    #[serde(with = "loop_mode_serde")]
    pub loop_mode: LoopMode,
    pub joint_count: usize,
    pub samples: Vec<Transform>,
    pub curves: Vec<ResampledCurve>,
}

impl ResampledClip {
    pub fn pose(&self, sample: usize) -> &[Transform] {
        let j = self.joint_count;
        &self.samples[sample * j..(sample + 1) * j]
    }

    /// Where time `t` falls on this clip's grid when played with `mode`.
    pub fn position(&self, t: f32, mode: LoopMode) -> SamplePosition {
        sample_position(
            t,
            self.duration_s,
            self.sample_rate_hz,
            self.num_samples,
            mode,
        )
    }

    /// The runtime's interpolation of `grid` (poses laid out like this
    /// clip's samples) at position `p`: at an exact sample time the stored
    /// sample itself, as every runtime decoder returns it, otherwise the
    /// runtime's blend of the two neighbours. False if a length differs.
    /// The one place the cooker interpolates a sample grid.
    pub fn blend_grid(&self, grid: &[Transform], p: SamplePosition, out: &mut [Transform]) -> bool {
        let j = self.joint_count;
        if out.len() != j || grid.len() != self.num_samples as usize * j {
            return false;
        }
        let (i0, i1) = (p.i0 as usize * j, p.i1 as usize * j);
        for (k, o) in out.iter_mut().enumerate() {
            let a = &grid[i0 + k];
            *o = if p.alpha == 0.0 {
                *a
            } else {
                interpolate(a, &grid[i1 + k], p.alpha)
            };
        }
        true
    }

    /// The runtime's interpolation of this clip's own samples at `t`, with
    /// its own loop mode. False if `out` is not one pose long.
    pub fn sample(&self, t: f32, out: &mut [Transform]) -> bool {
        self.blend_grid(&self.samples, self.position(t, self.loop_mode), out)
    }

    /// Number of samples needed so that a grid at `rate` covers `duration`.
    pub fn samples_for(duration_s: f32, rate_hz: f32) -> u32 {
        let n = duration_s * rate_hz;
        // Tolerate float noise: 27.9999 intervals are 28.
        let intervals = if (n - n.round()).abs() < 1e-3 {
            n.round()
        } else {
            n.ceil()
        };
        // Saturating: a grid this size is refused by the resampler's
        // limit check before anything is allocated from it.
        (intervals.max(0.0) as u32).saturating_add(1)
    }
}

/// `LoopMode` lives in the runtime, which has no serde; it travels as its
/// stored byte.
mod loop_mode_serde {
    use ludus_anim_format::timing::LoopMode;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(m: &LoopMode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(*m as u8)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<LoopMode, D::Error> {
        let v = u8::deserialize(d)?;
        LoopMode::from_u8(v)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown loop mode {v}")))
    }
}
