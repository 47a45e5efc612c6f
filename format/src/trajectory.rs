//! Root motion: a clip's motion root extracted into a separate, scale-free
//! rigid trajectory, and the displacement a playback update applies to the
//! character. Shared by the runtime (validated at load, queried through
//! `Clip::root_motion_delta`) and the cooker (extraction, normalization,
//! the drift figure), so both compute the same bits.
//!
//! Conventions (seed: "Root motion and locomotion quality"):
//!
//! * The trajectory `R(t)` is expressed in the declared character-local
//!   frame and normalized so that `R(0)` is the identity; the removed
//!   reference offset is stored explicitly by the cooker
//!   ([`normalize_trajectory`] returns it).
//! * A single clip interval moves the character by
//!   `delta = inverse(R(old)) * R(new)` (column vectors: apply `R(new)`,
//!   then undo `R(old)`), i.e. the motion expressed in the character's
//!   frame at `old`. The caller applies it as `world = world * delta`.
//! * Loop crossings are split at cycle boundaries and the per-segment
//!   deltas are composed in order; the full-cycle transform
//!   `C = R(duration)` is kept so any number of loops and reverse traversal
//!   are exact. Rotation and translation do not commute, so positions are
//!   never subtracted across a modulo wrap.
//! * The trajectory keeps its endpoint key at exactly `duration` even when
//!   a pose codec drops the duplicated loop sample: without it `C` would be
//!   unknown.
//!
//! Adapted idea: composing a "remaining part of this cycle, whole cycles,
//! start of the new cycle" product on wrap follows ACL's documentation on
//! looping clips and root motion extraction (the last sample of a loop is
//! the loop's full displacement); only that convention was adopted.

use crate::math::{nlerp_shortest, Quat, Vec3};
use crate::rigid::RigidTransform;

/// Fraction of a sample interval below which the duration is considered to
/// sit on the grid point (guards `duration * rate` rounding, e.g.
/// `0.7 * 30 = 21.000002` in f32).
const GRID_SNAP: f64 = 1e-3;

/// Number of keys a trajectory of `duration_s` sampled at `sample_rate`
/// holds: keys `i` at `i / rate` for every grid point strictly before the
/// duration (within 1e-3 of a sample interval), plus a last key at exactly
/// `duration_s`. A zero duration holds one key. `None` for a non-finite or
/// non-positive rate, a negative or non-finite duration, or more than
/// `u32::MAX` keys. The cooker must size trajectories with this function.
pub fn trajectory_key_count(duration_s: f32, sample_rate: f32) -> Option<usize> {
    if !duration_s.is_finite() || duration_s < 0.0 {
        return None;
    }
    if !sample_rate.is_finite() || sample_rate <= 0.0 {
        return None;
    }
    if duration_s == 0.0 {
        return Some(1);
    }
    let x = duration_s as f64 * sample_rate as f64;
    let segments = (x - GRID_SNAP).ceil().max(1.0);
    if segments >= u32::MAX as f64 {
        return None;
    }
    Some(segments as usize + 1)
}

/// Why a trajectory was refused.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TrajectoryError {
    BadTiming { duration_s: f32, sample_rate: f32 },
    KeyCount { found: usize, expected: usize },
    BadKey(usize),
    NotNormalized,
}

impl std::fmt::Display for TrajectoryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrajectoryError::BadTiming {
                duration_s,
                sample_rate,
            } => write!(f, "bad duration {duration_s} or sample rate {sample_rate}"),
            TrajectoryError::KeyCount { found, expected } => {
                write!(f, "trajectory has {found} keys, expected {expected}")
            }
            TrajectoryError::BadKey(i) => write!(
                f,
                "trajectory key {i} is not finite or its rotation is not unit length"
            ),
            TrajectoryError::NotNormalized => write!(
                f,
                "trajectory key 0 is not the identity (normalize it and store the offset)"
            ),
        }
    }
}

impl std::error::Error for TrajectoryError {}

/// A validated, uniformly sampled root trajectory (see module docs).
#[derive(Clone, Copy, Debug)]
pub struct Trajectory<'a> {
    keys: &'a [RigidTransform],
    sample_rate: f32,
    duration_s: f32,
}

impl<'a> Trajectory<'a> {
    /// Validate: key count from [`trajectory_key_count`]; keys finite with
    /// unit rotations (squared length within 2e-3); key 0 the identity
    /// (translation and rotation vector part within 1e-5).
    pub fn new(
        keys: &'a [RigidTransform],
        sample_rate: f32,
        duration_s: f32,
    ) -> Result<Self, TrajectoryError> {
        let expected =
            trajectory_key_count(duration_s, sample_rate).ok_or(TrajectoryError::BadTiming {
                duration_s,
                sample_rate,
            })?;
        if keys.len() != expected {
            return Err(TrajectoryError::KeyCount {
                found: keys.len(),
                expected,
            });
        }
        for (i, k) in keys.iter().enumerate() {
            if !k.is_finite() || (k.rotation.length_squared() - 1.0).abs() > 2e-3 {
                return Err(TrajectoryError::BadKey(i));
            }
        }
        let k0 = keys.first().copied().unwrap_or_default();
        // The vector part is sin(angle / 2): well conditioned near zero.
        if k0.translation.length() > 1e-5 || k0.rotation.xyz().length() > 1e-5 {
            return Err(TrajectoryError::NotNormalized);
        }
        Ok(Trajectory {
            keys,
            sample_rate,
            duration_s,
        })
    }

    pub fn keys(&self) -> &'a [RigidTransform] {
        self.keys
    }
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }
    pub fn duration_s(&self) -> f32 {
        self.duration_s
    }

    /// `R(local_t)`: translation lerp, `nlerp_shortest` rotation between
    /// the bracketing keys, time clamped to `[0, duration]` (non-finite
    /// maps to 0). The last segment ends at exactly `duration`.
    pub fn sample(&self, local_t: f32) -> RigidTransform {
        let last = self.keys.len().saturating_sub(1);
        let t = if local_t.is_finite() { local_t } else { 0.0 };
        if t <= 0.0 || last == 0 {
            return self.keys.first().copied().unwrap_or_default();
        }
        if t >= self.duration_s {
            return self.cycle();
        }
        let pos = t * self.sample_rate;
        let i0 = (pos.floor().max(0.0) as usize).min(last - 1);
        let t0 = i0 as f32 / self.sample_rate;
        let t1 = if i0 + 1 == last {
            self.duration_s
        } else {
            (i0 + 1) as f32 / self.sample_rate
        };
        let (Some(a), Some(b)) = (self.keys.get(i0), self.keys.get(i0 + 1)) else {
            return self.cycle();
        };
        let span = t1 - t0;
        let alpha = if span > 0.0 {
            ((t - t0) / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        if alpha <= 0.0 {
            return *a;
        }
        if alpha >= 1.0 {
            return *b;
        }
        RigidTransform {
            rotation: nlerp_shortest(a.rotation, b.rotation, alpha),
            translation: a.translation.lerp(b.translation, alpha),
        }
    }

    /// The full-cycle transform `C = R(duration)`: what one whole loop
    /// moves the character by.
    pub fn cycle(&self) -> RigidTransform {
        self.keys.last().copied().unwrap_or_default()
    }

    /// The displacement of the playback update `old_abs -> new_abs` in
    /// absolute, unwrapped clip time: `inverse(U(old)) * U(new)` where the
    /// unwrapped trajectory is `U(k * duration + t) = C^k * R(t)` when
    /// looping and `R(clamp(t))` otherwise.
    ///
    /// Forward, looping, from cycle `ka` local `a` to cycle `kb` local `b`
    /// (`n = kb - ka`): the per-segment deltas are composed in order,
    /// `[inv(R(a)) * C] * C^(n-1) * [R(b)]` (rest of cycle `ka`, whole
    /// cycles, start of cycle `kb`; `R(0) = I`), which equals
    /// `inv(R(a)) * C^n * R(b)`. `C^(n-1)` uses exponentiation by squaring,
    /// so the cost is `O(log n)` for any `n`. Reverse (`new < old`) is the
    /// inverse of the forward delta `new -> old`. Identity for equal or
    /// non-finite times, a zero duration, or (looping) times more than
    /// 2^40 cycles from zero. Never allocates or panics.
    pub fn delta(&self, old_abs: f64, new_abs: f64, looping: bool) -> RigidTransform {
        if !old_abs.is_finite() || !new_abs.is_finite() || old_abs == new_abs {
            return RigidTransform::IDENTITY;
        }
        let d = self.duration_s as f64;
        if d <= 0.0 {
            return RigidTransform::IDENTITY;
        }
        if !looping {
            let a = old_abs.clamp(0.0, d) as f32;
            let b = new_abs.clamp(0.0, d) as f32;
            return self.sample(a).inverse().compose(&self.sample(b));
        }
        if new_abs < old_abs {
            return self.forward_loop_delta(new_abs, old_abs).inverse();
        }
        self.forward_loop_delta(old_abs, new_abs)
    }

    /// Looping delta for `old < new`.
    fn forward_loop_delta(&self, old_abs: f64, new_abs: f64) -> RigidTransform {
        const LIMIT: f64 = (1u64 << 40) as f64;
        let d = self.duration_s as f64;
        let ka = (old_abs / d).floor();
        let kb = (new_abs / d).floor();
        if ka.abs() > LIMIT || kb.abs() > LIMIT {
            return RigidTransform::IDENTITY;
        }
        // Local times; rounding may put them a hair outside [0, d].
        let a = (old_abs - ka * d).clamp(0.0, d) as f32;
        let b = (new_abs - kb * d).clamp(0.0, d) as f32;
        let n = (kb - ka).max(0.0) as u64;
        let ra_inv = self.sample(a).inverse();
        if n == 0 {
            return ra_inv.compose(&self.sample(b));
        }
        let c = self.cycle();
        let head = ra_inv.compose(&c); // a -> end of cycle ka
        let body = c.pow(n - 1); // whole cycles in between
        let tail = self.sample(b); // start of cycle kb -> b
        head.compose(&body).compose(&tail)
    }
}

// Cook side: extraction and normalization.

/// Normalize trajectory keys in place so key 0 becomes the
/// identity (`key_i := inverse(key_0) * key_i`) and return the removed
/// reference offset `key_0` for the package to store explicitly.
pub fn normalize_trajectory(keys: &mut [RigidTransform]) -> RigidTransform {
    let Some(first) = keys.first().copied() else {
        return RigidTransform::IDENTITY;
    };
    let inv = first.inverse();
    for k in keys.iter_mut() {
        *k = inv.compose(k);
    }
    if let Some(k0) = keys.first_mut() {
        *k0 = RigidTransform::IDENTITY;
    }
    first
}

/// Cook side, "planar" motion policy: keep the ground-plane translation
/// (x, z; y = 0) and the heading (rotation about +Y) of a motion root.
pub fn extract_planar(root_world: RigidTransform) -> RigidTransform {
    let t = root_world.translation;
    RigidTransform {
        rotation: yaw_twist(root_world.rotation),
        translation: Vec3::new(t.x, 0.0, t.z),
    }
}

/// The twist of `q` about +Y in a swing-twist decomposition
/// `q = swing * twist` (swing axis in the XZ plane, twist about Y).
///
/// Method: project the quaternion onto the Y rotation subspace, i.e. keep
/// `(0, q.y, 0, q.w)` and normalize. This is singular when
/// `q.y^2 + q.w^2 ~ 0`, i.e. the swing is a 180-degree turn about a
/// horizontal axis (the root is upside down) and the heading is
/// genuinely ambiguous. There `q ~ (x, 0, z, 0)`, which factors exactly as
/// `swing_X(180) * twist_Y(theta)` with `(x, z) = (cos theta/2,
/// sin theta/2)`; we pick that swing-about-+X convention, giving the twist
/// `(0, z, 0, x)` normalized. Sign is canonicalized to `w >= 0`.
/// Non-finite input gives the identity.
pub fn yaw_twist(q: Quat) -> Quat {
    if !q.is_finite() {
        return Quat::IDENTITY;
    }
    let yw = q.y * q.y + q.w * q.w;
    let twist = if yw > 1e-10 {
        Quat::from_xyzw(0.0, q.y, 0.0, q.w) * yw.sqrt().recip()
    } else {
        let xz = q.x * q.x + q.z * q.z;
        if xz > 1e-20 {
            Quat::from_xyzw(0.0, q.z, 0.0, q.x) * xz.sqrt().recip()
        } else {
            Quat::IDENTITY
        }
    };
    if twist.w < 0.0 {
        -twist
    } else {
        twist
    }
}
