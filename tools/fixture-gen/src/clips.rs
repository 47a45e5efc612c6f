//! Procedural animation clips: an idle, a walk cycle and a run cycle.
//!
//! Each clip is a pure function from a [`Sample`] (cycle phase plus absolute
//! time) to a full-body [`Pose`], plus a list of [`ChannelSpec`]s saying which
//! joint properties are exported, at what key rate and with which glTF
//! interpolation. Motion is written as sums of sines/cosines of the cycle
//! angle, so every clip is exactly periodic: sampling uses `phase = (i mod n)
//! / n`, which makes the last key of a loop bit-identical to the first.
//!
//! Conventions (see `skeleton`): +Y up, +Z forward, left = +X, rest pose is a
//! T-pose with identity local rotations. Limb motion is authored for the left
//! side and mirrored onto the right with half a cycle of phase offset in the
//! locomotion clips. The angle signs below follow from that frame:
//! * `rx(-a)` swings a hanging limb forward (thigh flexion, arm swing);
//! * `rx(+a)` bends a knee (shin goes back) and tips the toes down;
//! * `rz(-a)` lowers the left arm from the T-pose and curls left fingers;
//! * `ry(-a)` bends the left elbow forward once the arm hangs down.

use crate::math::{cos, mirror_rotation, pulse, rx, ry, rz, sin};
use crate::skeleton::{Joint, Side, JOINT_COUNT};
use glam::{DQuat, DVec3};
use std::f64::consts::{PI, TAU};

/// One joint's local transform.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Trs {
    pub translation: DVec3,
    pub rotation: DQuat,
    pub scale: DVec3,
}

/// A full-body pose: every joint's local transform plus the morph weight.
#[derive(Clone, Debug, PartialEq)]
pub struct Pose {
    pub joints: [Trs; JOINT_COUNT],
    /// Weight of the "Breathe" morph target.
    pub breathe: f64,
}

impl Pose {
    /// The rest (bind) pose.
    pub fn rest() -> Self {
        let mut joints = [Trs {
            translation: DVec3::ZERO,
            rotation: DQuat::IDENTITY,
            scale: DVec3::ONE,
        }; JOINT_COUNT];
        for j in Joint::ALL {
            joints[j.index()].translation = j.rest_offset();
        }
        Pose {
            joints,
            breathe: 0.0,
        }
    }

    fn set_rotation(&mut self, joint: Joint, rotation: DQuat) {
        self.joints[joint.index()].rotation = rotation;
    }

    /// Sets a left-side rotation on `left` and its mirror image on the
    /// matching right-side joint.
    fn set_mirrored(&mut self, left: Joint, left_rot: DQuat, right_rot_unmirrored: DQuat) {
        debug_assert_eq!(left.side(), Side::Left);
        self.set_rotation(left, left_rot);
        self.set_rotation(
            left.right_counterpart(),
            mirror_rotation(right_rot_unmirrored),
        );
    }
}

/// Where in the clip a pose is evaluated.
#[derive(Clone, Copy, Debug)]
pub struct Sample {
    /// Cycle phase in `[0, 1)`.
    pub phase: f64,
    /// Absolute clip time in seconds (not wrapped), for root motion.
    pub time: f64,
}

/// glTF animation sampler interpolation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    Linear,
    Step,
    CubicSpline,
}

impl Interpolation {
    /// The glTF spelling.
    pub fn gltf_name(self) -> &'static str {
        match self {
            Interpolation::Linear => "LINEAR",
            Interpolation::Step => "STEP",
            Interpolation::CubicSpline => "CUBICSPLINE",
        }
    }
}

/// Animated property of a joint.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Property {
    Translation,
    Rotation,
    Scale,
}

/// What a channel animates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    Joint(Joint, Property),
    /// The mesh node's morph target weights (one target: "Breathe").
    MorphWeights,
}

/// One exported channel of a clip.
#[derive(Clone, Copy, Debug)]
pub struct ChannelSpec {
    pub target: Target,
    pub interpolation: Interpolation,
    /// Keys per cycle; the channel gets `keys_per_cycle + 1` keys, the last
    /// one closing the loop at `t = duration`.
    pub keys_per_cycle: u32,
}

/// A clip: name, cycle length, exported channels and the pose function.
pub struct ClipSpec {
    pub name: &'static str,
    /// Cycle (and clip) duration in seconds.
    pub duration: f64,
    pub channels: Vec<ChannelSpec>,
    pub pose: fn(Sample) -> Pose,
}

impl ClipSpec {
    /// Key time of key `i` of `n` keys per cycle. Computed as
    /// `duration * i / n` (not `i / rate`) so the final key lands exactly on
    /// the duration.
    pub fn key_time(&self, i: u32, keys_per_cycle: u32) -> f64 {
        self.duration * f64::from(i) / f64::from(keys_per_cycle)
    }

    /// The sample for key `i`: the phase wraps so the closing key repeats the
    /// first pose exactly, while the time keeps running for root motion.
    pub fn key_sample(&self, i: u32, keys_per_cycle: u32) -> Sample {
        Sample {
            phase: f64::from(i % keys_per_cycle) / f64::from(keys_per_cycle),
            time: self.key_time(i, keys_per_cycle),
        }
    }
}

/// All bundled clips, in export order.
pub fn all_clips() -> Vec<ClipSpec> {
    vec![idle(), walk(), run()]
}

fn rot(joint: Joint, interpolation: Interpolation, keys_per_cycle: u32) -> ChannelSpec {
    ChannelSpec {
        target: Target::Joint(joint, Property::Rotation),
        interpolation,
        keys_per_cycle,
    }
}

/// Linear rotation channels for a left joint and its right counterpart.
fn rot_pair(channels: &mut Vec<ChannelSpec>, left: Joint, keys_per_cycle: u32) {
    channels.push(rot(left, Interpolation::Linear, keys_per_cycle));
    channels.push(rot(
        left.right_counterpart(),
        Interpolation::Linear,
        keys_per_cycle,
    ));
}

// ---------------------------------------------------------------------------
// idle
// ---------------------------------------------------------------------------

/// Idle: 3 s loop, one breath per loop. Exercises every interpolation mode,
/// mixed key rates within a clip (30, 15, 10 and 4/3 keys per second), scale
/// keys and a morph weight curve.
fn idle() -> ClipSpec {
    use Interpolation::*;
    use Joint::*;
    const N: u32 = 90; // 30 keys per second over 3 s
    let mut channels = vec![
        ChannelSpec {
            // Slow weight shift: smooth, so a few cubic keys describe it well.
            target: Target::Joint(Hips, Property::Translation),
            interpolation: CubicSpline,
            keys_per_cycle: 30,
        },
        rot(Hips, Linear, N),
        rot(Spine, Linear, N),
        rot(Spine1, Linear, N),
        rot(Chest, Linear, N),
        ChannelSpec {
            target: Target::Joint(Chest, Property::Scale),
            interpolation: Linear,
            keys_per_cycle: N,
        },
        rot(Neck, Linear, N),
        // Cubic rotation keys: exercises quaternion tangents.
        rot(Head, CubicSpline, 45),
    ];
    for j in [LeftShoulder, LeftArm, LeftForeArm, LeftHand] {
        rot_pair(&mut channels, j, N);
    }
    channels.push(rot(LeftHandIndex1, Linear, N));
    // A discrete finger tap: four held poses per loop.
    channels.push(rot(RightHandIndex1, Step, 4));
    for j in [LeftUpLeg, LeftLeg, LeftFoot] {
        rot_pair(&mut channels, j, N);
    }
    channels.push(ChannelSpec {
        target: Target::MorphWeights,
        interpolation: Linear,
        keys_per_cycle: N,
    });
    ClipSpec {
        name: "idle",
        duration: 3.0,
        channels,
        pose: idle_pose,
    }
}

fn idle_pose(s: Sample) -> Pose {
    use Joint::*;
    let th = TAU * s.phase;
    let breath = pulse(th);
    let mut p = Pose::rest();

    // Weight shift from side to side, sinking a little on the exhale.
    p.joints[Hips.index()].translation = Hips.rest_offset()
        + DVec3::new(
            0.012 * sin(th),
            -0.006 + 0.003 * breath,
            0.004 * sin(2.0 * th),
        );
    p.set_rotation(Hips, ry(0.02 * sin(th)) * rz(-0.015 * sin(th)));

    // The spine straightens on the inhale; the chest expands non-uniformly.
    p.set_rotation(Spine, rx(0.02 - 0.01 * breath));
    p.set_rotation(Spine1, rx(0.01 - 0.015 * breath) * rz(0.01 * sin(th)));
    p.set_rotation(Chest, rx(-0.02 * breath));
    p.joints[Chest.index()].scale = DVec3::new(
        1.0 + 0.012 * breath,
        1.0 + 0.006 * breath,
        1.0 + 0.03 * breath,
    );
    p.set_rotation(Neck, rx(0.02 * breath - 0.01));
    // A slow look around.
    p.set_rotation(Head, ry(0.15 * sin(th)) * rx(0.04 * sin(2.0 * th) + 0.02));
    p.breathe = breath;

    // Arms hang relaxed; shoulders rise slightly on the inhale.
    let shoulder = rz(0.03 * breath);
    p.set_mirrored(LeftShoulder, shoulder, shoulder);
    let sway = 0.02 * sin(th);
    p.set_mirrored(
        LeftArm,
        rx(-0.06 - sway) * rz(-1.25),
        rx(-0.06 + sway) * rz(-1.25),
    );
    let elbow = ry(-0.25 - 0.03 * breath);
    p.set_mirrored(LeftForeArm, elbow, elbow);
    let wrist = rz(-0.1) * ry(0.05);
    p.set_mirrored(LeftHand, wrist, wrist);
    p.set_rotation(LeftHandIndex1, rz(-0.25));
    // Finger tap: a square wave over four equal quarters of the loop.
    let tapped = (s.phase * 4.0).floor() as i64 % 2 == 1;
    p.set_rotation(
        RightHandIndex1,
        mirror_rotation(rz(if tapped { -0.7 } else { -0.2 })),
    );

    // Knees soften as the hips sink, keeping the feet near the ground.
    let knee = 0.05 - 0.02 * breath;
    p.set_mirrored(
        LeftUpLeg,
        rx(-0.5 * knee) * rz(0.01 * sin(th)),
        rx(-0.5 * knee) * rz(-0.01 * sin(th)),
    );
    p.set_mirrored(LeftLeg, rx(knee), rx(knee));
    p.set_mirrored(LeftFoot, rx(-0.5 * knee), rx(-0.5 * knee));
    p
}

// ---------------------------------------------------------------------------
// locomotion
// ---------------------------------------------------------------------------

/// Amplitudes that distinguish the walk from the run; the gait shape is shared.
struct Gait {
    /// Root speed along +Z in m/s.
    speed: f64,
    /// Pelvis drop below the rest height (m), and bob amplitude (m).
    pelvis_drop: f64,
    bob: f64,
    /// Phase of the lowest pelvis point, in cycle radians.
    bob_low: f64,
    sway: f64,
    pelvis_yaw: f64,
    pelvis_roll: f64,
    /// Forward trunk lean (rad) and shoulder counter-rotation (rad).
    lean: f64,
    counter_yaw: f64,
    /// Thigh flexion: mean, amplitude (rad) and the phase of peak flexion
    /// (slightly before heel strike, so the foot lands already moving back).
    hip_mean: f64,
    hip_amp: f64,
    hip_peak: f64,
    /// Knee flexion: stance bend and its phase, swing peak and its phase.
    knee_stance: f64,
    knee_stance_at: f64,
    knee_swing: f64,
    knee_peak: f64,
    /// World foot pitch (rad): toes up at heel strike, heel raised at
    /// push-off, and the push-off's phase.
    heel_strike: f64,
    push_off: f64,
    push_off_at: f64,
    /// Arm: hang angle from the T-pose, swing amplitude, elbow bend.
    arm_down: f64,
    arm_swing: f64,
    elbow: f64,
    /// Finger curl (rad): relaxed walk hand vs. loose running fist.
    finger_curl: f64,
}

const WALK: Gait = Gait {
    speed: 1.4,
    pelvis_drop: 0.03,
    bob: 0.02,
    bob_low: 0.0,
    sway: 0.025,
    pelvis_yaw: 0.10,
    pelvis_roll: 0.04,
    lean: 0.06,
    counter_yaw: 0.05,
    hip_mean: 0.12,
    hip_amp: 0.38,
    hip_peak: -0.15 * PI,
    knee_stance: 0.12,
    knee_stance_at: 0.15 * PI,
    knee_swing: 1.0,
    knee_peak: 1.3 * PI,
    heel_strike: 0.25,
    push_off: 0.5,
    push_off_at: 1.15 * PI,
    arm_down: 1.3,
    arm_swing: 0.25,
    elbow: 0.3,
    finger_curl: 0.3,
};

const RUN: Gait = Gait {
    speed: 3.5,
    pelvis_drop: 0.02,
    bob: 0.02,
    bob_low: 0.5 * PI,
    sway: 0.015,
    pelvis_yaw: 0.15,
    pelvis_roll: 0.05,
    lean: 0.15,
    counter_yaw: 0.12,
    hip_mean: 0.25,
    hip_amp: 0.45,
    hip_peak: -0.1 * PI,
    knee_stance: 0.4,
    knee_stance_at: 0.5 * PI,
    knee_swing: 1.7,
    knee_peak: 1.25 * PI,
    heel_strike: 0.1,
    push_off: 0.6,
    push_off_at: 0.9 * PI,
    arm_down: 1.35,
    arm_swing: 0.55,
    elbow: 1.4,
    finger_curl: 1.1,
};

/// Walk: 1.2 s cycle (two steps, 1.68 m stride), 30 keys per second, all
/// LINEAR, with root motion at 1.4 m/s.
fn walk() -> ClipSpec {
    ClipSpec {
        name: "walk",
        duration: 1.2,
        channels: locomotion_channels(36),
        pose: |s| gait_pose(&WALK, s),
    }
}

/// Run: 0.7 s cycle (2.45 m stride), 60 keys per second, all LINEAR, with
/// root motion at 3.5 m/s.
fn run() -> ClipSpec {
    ClipSpec {
        name: "run",
        duration: 0.7,
        channels: locomotion_channels(42),
        pose: |s| gait_pose(&RUN, s),
    }
}

fn locomotion_channels(n: u32) -> Vec<ChannelSpec> {
    use Joint::*;
    let lin = |target| ChannelSpec {
        target,
        interpolation: Interpolation::Linear,
        keys_per_cycle: n,
    };
    let mut channels = vec![
        lin(Target::Joint(Root, Property::Translation)),
        lin(Target::Joint(Hips, Property::Translation)),
    ];
    for j in [Hips, Spine, Spine1, Chest, Neck, Head] {
        channels.push(rot(j, Interpolation::Linear, n));
    }
    for j in [
        LeftShoulder,
        LeftArm,
        LeftForeArm,
        LeftHand,
        LeftHandIndex1,
        LeftHandIndex2,
        LeftUpLeg,
        LeftLeg,
        LeftFoot,
        LeftToeBase,
    ] {
        rot_pair(&mut channels, j, n);
    }
    channels
}

/// `(0.5 + 0.5 cos(theta - center))^power`: a smooth periodic bump centred
/// on `center`, narrower for higher powers.
fn bump(theta: f64, center: f64, power: u32) -> f64 {
    // Repeated multiplication rather than `powi`, whose rounding is
    // documented as platform-dependent.
    let base = 0.5 + 0.5 * cos(theta - center);
    (0..power).fold(1.0, |acc, _| acc * base)
}

/// Left-leg rotations (thigh, shin, foot, toes) at cycle angle `th`, where
/// `th = 0` is the left heel strike.
///
/// The ankle is derived from a target *world* foot pitch rather than authored
/// directly: pitch ~= -hip + knee + ankle (pelvis and trunk do not pitch), so
/// solving for the ankle keeps the sole flat through stance, toes up at heel
/// strike and heel raised at push-off, with the toes bending to stay on the
/// ground. The thigh also cancels the pelvis yaw/roll and lateral sway so the
/// feet keep pointing forward and stay under the hips.
fn leg(g: &Gait, th: f64) -> [DQuat; 4] {
    let hip = g.hip_mean + g.hip_amp * cos(th - g.hip_peak);
    let knee =
        g.knee_stance * bump(th, g.knee_stance_at, 4) + g.knee_swing * bump(th, g.knee_peak, 3);
    let push_off = g.push_off * bump(th, g.push_off_at, 4);
    let foot_pitch = -g.heel_strike * bump(th, 0.0, 12) + push_off;
    let ankle = foot_pitch + hip - knee;
    let toe = 0.8 * push_off;
    const LEG_LENGTH: f64 = 0.85;
    let thigh = rz(-(g.pelvis_roll + g.sway / LEG_LENGTH) * sin(th))
        * ry(g.pelvis_yaw * cos(th))
        * rx(-hip);
    [thigh, rx(knee), rx(ankle), rx(-toe)]
}

/// Left-arm rotations (clavicle, upper arm, forearm, hand) at cycle angle `th`.
fn arm(g: &Gait, th: f64) -> [DQuat; 4] {
    // The left arm swings forward when the right leg does (th = pi).
    let swing = 0.03 - g.arm_swing * cos(th);
    let elbow = g.elbow + 0.15 * pulse(th);
    [
        rz(-0.03) * ry(-0.03 * cos(th)),
        rx(-swing) * rz(-g.arm_down),
        ry(-elbow),
        rz(-0.08) * ry(0.05),
    ]
}

fn gait_pose(g: &Gait, s: Sample) -> Pose {
    use Joint::*;
    let th = TAU * s.phase;
    let mut p = Pose::rest();

    p.joints[Root.index()].translation = DVec3::new(0.0, 0.0, g.speed * s.time);
    p.joints[Hips.index()].translation = Hips.rest_offset()
        + DVec3::new(
            g.sway * sin(th),
            -g.pelvis_drop - g.bob * cos(2.0 * (th - g.bob_low)),
            0.0,
        );
    // The pelvis turns towards the forward leg and drops on the swing side;
    // the chest counter-rotates and the head stays level.
    p.set_rotation(
        Hips,
        ry(-g.pelvis_yaw * cos(th)) * rz(g.pelvis_roll * sin(th)),
    );
    p.set_rotation(Spine, rx(g.lean) * ry(0.3 * g.counter_yaw * cos(th)));
    p.set_rotation(Spine1, rx(0.3 * g.lean) * ry(0.4 * g.counter_yaw * cos(th)));
    p.set_rotation(
        Chest,
        ry(0.6 * g.counter_yaw * cos(th)) * rz(-0.5 * g.pelvis_roll * sin(th)),
    );
    p.set_rotation(Neck, rx(-0.6 * g.lean) * ry(-0.3 * g.counter_yaw * cos(th)));
    p.set_rotation(
        Head,
        rx(-0.4 * g.lean + 0.02 * cos(2.0 * th)) * ry(-0.2 * g.counter_yaw * cos(th)),
    );

    // Right limbs run half a cycle behind the left ones.
    let (ll, rl) = (leg(g, th), leg(g, th + PI));
    for (k, j) in [LeftUpLeg, LeftLeg, LeftFoot, LeftToeBase]
        .into_iter()
        .enumerate()
    {
        p.set_mirrored(j, ll[k], rl[k]);
    }
    let (la, ra) = (arm(g, th), arm(g, th + PI));
    for (k, j) in [LeftShoulder, LeftArm, LeftForeArm, LeftHand]
        .into_iter()
        .enumerate()
    {
        p.set_mirrored(j, la[k], ra[k]);
    }
    let curl1 = rz(-g.finger_curl);
    let curl2 = rz(-1.1 * g.finger_curl);
    p.set_mirrored(LeftHandIndex1, curl1, curl1);
    p.set_mirrored(LeftHandIndex2, curl2, curl2);
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closing_key_repeats_first_pose() {
        for clip in all_clips() {
            for ch in &clip.channels {
                let n = ch.keys_per_cycle;
                let first = (clip.pose)(clip.key_sample(0, n));
                let last = (clip.pose)(clip.key_sample(n, n));
                assert_eq!(first.breathe, last.breathe);
                for j in Joint::ALL {
                    if j == Joint::Root {
                        continue; // root motion advances by design
                    }
                    assert_eq!(first.joints[j.index()], last.joints[j.index()]);
                }
                assert_eq!(clip.key_time(n, n), clip.duration, "{}", clip.name);
            }
        }
    }

    #[test]
    fn root_motion_speeds() {
        for (clip, speed) in [(walk(), 1.4), (run(), 3.5)] {
            let end = (clip.pose)(clip.key_sample(1, 1));
            let z = end.joints[Joint::Root.index()].translation.z;
            assert!((z / clip.duration - speed).abs() < 1e-12, "{}", clip.name);
        }
    }

    #[test]
    fn chest_scale_strictly_positive() {
        let clip = idle();
        for i in 0..=90 {
            let s = (clip.pose)(clip.key_sample(i, 90)).joints[Joint::Chest.index()].scale;
            assert!(s.min_element() >= 1.0 && s.max_element() < 1.1);
        }
    }

    #[test]
    fn feet_stay_on_the_ground_in_locomotion() {
        // A coarse plausibility check of the gait: neither foot sinks into
        // the floor, and some foot is always close to it, except in the
        // run's flight phases.
        for (clip, n, max_lowest) in [(walk(), 36, 0.1), (run(), 42, 0.25)] {
            for i in 0..n {
                let pose = (clip.pose)(clip.key_sample(i, n));
                let world = |joint: Joint| {
                    let mut chain = vec![joint];
                    while let Some(p) = chain.last().and_then(|j| j.parent()) {
                        chain.push(p);
                    }
                    let mut pos = DVec3::ZERO;
                    let mut rot = DQuat::IDENTITY;
                    for j in chain.into_iter().rev() {
                        let t = pose.joints[j.index()];
                        pos += rot * t.translation;
                        rot *= t.rotation;
                    }
                    pos.y
                };
                let lowest = [
                    Joint::LeftFoot,
                    Joint::RightFoot,
                    Joint::LeftToeBase,
                    Joint::RightToeBase,
                ]
                .map(world)
                .into_iter()
                .fold(f64::INFINITY, f64::min);
                let name = clip.name;
                assert!(
                    lowest > -0.01,
                    "{name} key {i}: foot below floor ({lowest})"
                );
                assert!(
                    lowest < max_lowest,
                    "{name} key {i}: feet too high ({lowest})"
                );
            }
        }
    }
}
