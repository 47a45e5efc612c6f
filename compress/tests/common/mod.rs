//! Synthetic clips for the codec tests: random depth-first hierarchies and
//! smooth motion, from a small deterministic generator.
#![allow(dead_code)]

use ludus_anim_format::codec::CodecId;
use ludus_anim_format::math::{interpolate, virtual_vertex_error, Affine3A, Quat, Transform, Vec3};
use ludus_anim_format::timing::{sample_position, LoopMode};
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::{Clip, JointId, Skeleton};

/// SplitMix64.
pub struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    pub fn f(&mut self) -> f32 {
        (self.next() >> 40) as f32 / (1u64 << 24) as f32
    }
    pub fn range(&mut self, lo: f32, hi: f32) -> f32 {
        lo + (hi - lo) * self.f()
    }
    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    pub fn unit(&mut self) -> Vec3 {
        loop {
            let v = Vec3::new(
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
                self.range(-1.0, 1.0),
            );
            let l = v.length();
            if l > 0.1 && l <= 1.0 {
                return v / l;
            }
        }
    }
}

/// A random depth-first skeleton: each joint's parent is the previous
/// joint or one of its ancestors.
pub fn random_skeleton(rng: &mut Rng, joints: usize, with_scale: bool) -> Skeleton {
    let mut parents = vec![u32::MAX];
    for j in 1..joints {
        let mut chain = vec![(j - 1) as u32];
        let mut a = parents[j - 1];
        while a != u32::MAX {
            chain.push(a);
            a = parents[a as usize];
        }
        parents.push(chain[rng.below(chain.len().min(3))]);
    }
    let rest: Vec<Transform> = (0..joints)
        .map(|_| {
            let scale = if with_scale && rng.f() < 0.2 {
                Vec3::new(
                    rng.range(0.8, 1.2),
                    rng.range(0.8, 1.2),
                    rng.range(0.8, 1.2),
                )
            } else {
                Vec3::ONE
            };
            Transform::new(
                rng.unit() * rng.range(0.02, 0.3),
                Quat::from_axis_angle(rng.unit(), rng.range(-1.0, 1.0)),
                scale,
            )
        })
        .collect();
    let names: Vec<String> = (0..joints).map(|j| format!("j{j}")).collect();
    Skeleton::new(
        parents,
        names.iter().map(|n| JointId::from_path(n)).collect(),
        rest,
        names,
    )
    .expect("valid skeleton")
}

/// Smooth random motion; per track: default, constant, or animated.
pub fn random_clip(
    rng: &mut Rng,
    skeleton: &Skeleton,
    samples: u32,
    rate: f32,
    with_scale: bool,
) -> ResampledClip {
    let j = skeleton.joint_count();
    let rest = skeleton.rest_pose();
    // Per joint per track: 0 default, 1 constant, 2 animated.
    let modes: Vec<[u8; 3]> = (0..j)
        .map(|_| {
            let m = |rng: &mut Rng, p_anim: f32| {
                let x = rng.f();
                if x < p_anim {
                    2
                } else if x < p_anim + 0.5 * (1.0 - p_anim) {
                    1
                } else {
                    0
                }
            };
            [
                m(rng, 0.8),
                m(rng, 0.3),
                if with_scale { m(rng, 0.3) } else { 0 },
            ]
        })
        .collect();
    let params: Vec<[f32; 12]> = (0..j).map(|_| std::array::from_fn(|_| rng.f())).collect();
    let axes: Vec<[Vec3; 3]> = (0..j)
        .map(|_| [rng.unit(), rng.unit(), rng.unit()])
        .collect();
    let mut out = Vec::with_capacity(samples as usize * j);
    for i in 0..samples {
        let t = i as f32 / rate;
        for k in 0..j {
            let p = &params[k];
            let r = rest[k];
            let w = |a: usize, b: usize| {
                (t * (0.5 + 3.0 * p[a]) * std::f32::consts::TAU + 6.0 * p[b]).sin()
            };
            let rotation = match modes[k][0] {
                0 => r.rotation,
                1 => r.rotation * Quat::from_axis_angle(axes[k][0], 0.3 + p[0]),
                _ => {
                    let q = r.rotation
                        * Quat::from_axis_angle(axes[k][0], 1.2 * p[1] * w(2, 3))
                        * Quat::from_axis_angle(axes[k][1], 0.5 * p[4] * w(5, 6));
                    // Random sign: the codec must not care.
                    if (i + k as u32).is_multiple_of(3) {
                        -q
                    } else {
                        q
                    }
                }
            };
            let translation = match modes[k][1] {
                0 => r.translation,
                1 => r.translation + axes[k][2] * 0.05,
                _ => r.translation + axes[k][2] * (0.1 * p[7] * w(8, 9)),
            };
            let scale = match modes[k][2] {
                0 => r.scale,
                1 => r.scale * Vec3::new(1.1, 0.9, 1.0),
                _ => r.scale * (Vec3::ONE + axes[k][1].abs() * (0.3 * p[10] * w(11, 3))),
            };
            out.push(Transform::new(translation, rotation, scale));
        }
    }
    ResampledClip {
        name: "synthetic".into(),
        sample_rate_hz: rate,
        num_samples: samples,
        duration_s: (samples.max(1) - 1) as f32 / rate,
        loop_mode: LoopMode::Once,
        joint_count: j,
        samples: out,
        curves: Vec::new(),
    }
}

/// Largest error ratio (error / threshold) over every joint, at every
/// sample and at blends 0.25, 0.5 and 0.75 between samples, computed from
/// FK of the decoded pose against FK of the raw pose blended the same way.
/// The runtime's decoder over `blob`, an encoding of `clip`.
pub fn decoder<'b>(blob: &'b [u8], skeleton: &Skeleton, clip: &ResampledClip) -> Clip<'b> {
    let timing = (
        clip.duration_s,
        clip.sample_rate_hz,
        clip.num_samples,
        clip.loop_mode,
    );
    Clip::from_blob(CodecId::Vbr, blob, skeleton.joint_count(), timing).expect("parses")
}

/// Worst error ratio and largest error of `decode(t, out)` against `clip`
/// at every sample and its quarter points.
pub fn worst_ratio(
    decode: impl Fn(f32, &mut [Transform]) -> bool,
    skeleton: &Skeleton,
    clip: &ResampledClip,
    thresholds: &[f32],
    shells: &[f32],
) -> (f32, f32) {
    let j = skeleton.joint_count();
    let mut dec = vec![Transform::IDENTITY; j];
    let mut raw = vec![Transform::IDENTITY; j];
    let mut dc = vec![Affine3A::IDENTITY; j];
    let mut rc = vec![Affine3A::IDENTITY; j];
    let (mut worst, mut max_err) = (0.0f32, 0.0f32);
    for i in 0..clip.num_samples {
        for alpha in [0.0f32, 0.25, 0.5, 0.75] {
            let i1 = (i + 1).min(clip.num_samples - 1);
            if alpha > 0.0 && i1 == i {
                continue;
            }
            let t = (i as f32 + alpha) / clip.sample_rate_hz;
            let (n, rate) = (clip.num_samples, clip.sample_rate_hz);
            let pos = sample_position(t, clip.duration_s, rate, n, clip.loop_mode);
            assert!(decode(t, &mut dec));
            let (a, b) = (clip.pose(pos.i0 as usize), clip.pose(pos.i1 as usize));
            for ((r, x), y) in raw.iter_mut().zip(a).zip(b) {
                *r = interpolate(x, y, pos.alpha);
            }
            skeleton.local_to_component(&dec, &mut dc);
            skeleton.local_to_component(&raw, &mut rc);
            for k in 0..j {
                let e = virtual_vertex_error(&rc[k], &dc[k], shells[k]);
                max_err = max_err.max(e);
                worst = worst.max(e / thresholds[k]);
            }
        }
    }
    (worst, max_err)
}
