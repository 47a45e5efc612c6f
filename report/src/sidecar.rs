//! `OUT/report-sidecar.json`: the per-time data a dashboard plots, written
//! by the cook next to `report.json` from its verification data (never
//! recomputed by the report command). Schema:
//! `schemas/report-sidecar.schema.json`; layout and sizes:
//! `schemas/dashboard.md`.
//!
//! Per clip: the checked times; per joint (hierarchy order, with parents
//! and names) the error at each checked time as a fraction of the joint's
//! threshold in `u16` fixed point; bit rates per track and segment; the
//! root trajectory; events and markers; and, for retargeted clips, foot
//! height and speed with contact bands and skate flags; the clip's poses
//! decoded from the package and sampled for the dashboard's stick-figure
//! player (and a retargeted clip's source poses). Numeric arrays are
//! [`Packed`](crate::packed::Packed) base64 strings.

use crate::packed::{F32s, U16s, U8s};
use serde::{Deserialize, Serialize};
use std::fmt;

/// File name of the sidecar in a cook's output directory.
pub const SIDECAR_FILE: &str = "report-sidecar.json";
/// Layout version this crate writes and reads.
pub const SIDECAR_VERSION: u32 = 1;
/// `error_q` units: `q = round(error / threshold * ERROR_Q_ONE)`, so 10000
/// is exactly the joint's threshold.
pub const ERROR_Q_ONE: f32 = 10_000.0;
/// `error_q` value for "at least 6.5535 × threshold" (and failed decodes).
pub const ERROR_Q_SATURATED: u16 = u16::MAX;
/// Bit-rate code: the track is the rest value, stored nowhere.
pub const BITS_DEFAULT: u8 = 255;
/// Bit-rate code: one value for the whole clip.
pub const BITS_CONSTANT: u8 = 254;
/// Bit-rate code: raw f32 components.
pub const BITS_RAW: u8 = 32;
/// Rate the player's poses are sampled at, unless the budget lowers it.
pub const POSE_RATE_HZ: f32 = 30.0;
/// Most joint positions (`frames × joints`) one clip's poses hold: about
/// 128 KB of base64 (6 bytes each); a longer clip is sampled more sparsely.
pub const POSE_BUDGET: usize = 16_384;
/// Quantization levels per axis (`u16`): `q = 0..=POSE_Q_MAX`.
pub const POSE_Q_MAX: f32 = 65_535.0;

/// The sidecar of one cook.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sidecar {
    /// [`SIDECAR_VERSION`] of the layout.
    pub version: u32,
    pub cooker_version: String,
    /// What the document was assembled from, as one hex digest (the
    /// writer's choice: the cooker hashes the clip records and the size
    /// limit), so a cook whose records did not change keeps the published
    /// file instead of rebuilding it. Empty when not recorded.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub content: String,
    pub clips: Vec<ClipSidecar>,
}

/// Per-time data of one cooked clip; `(source, clip, profile)` names the
/// `report.json` clip it belongs to.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ClipSidecar {
    pub source: String,
    pub clip: String,
    pub profile: String,
    pub duration_s: f32,
    /// Joint names in hierarchy order (depth-first, parents first).
    pub joints: Vec<String>,
    /// Parent index per joint, -1 for a root.
    pub parents: Vec<i32>,
    /// Error threshold per joint (meters).
    pub thresholds_m: F32s,
    /// Every time verification checked, ascending (seconds).
    pub times_s: F32s,
    /// Joint-major `joints × times`: error at `times_s[t]` of joint `j` at
    /// index `j * times + t`, in units of [`ERROR_Q_ONE`] per threshold.
    /// Empty when the cook left the per-time errors out (size limit).
    pub error_q: U16s,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bit_rates: Option<BitRates>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub root_motion: Option<TrajectorySidecar>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub events: Vec<EventMark>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retarget: Option<RetargetSidecar>,
    /// The clip decoded from its package, sampled for the player
    /// (absent for additive clips, and when left out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poses: Option<Poses>,
    /// Retargeted clips: the source clip's own skeleton and poses over
    /// the same span, for the player's source/result view.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_poses: Option<SourcePoses>,
    /// The cook left `poses` and `source_poses` out: the sidecar would
    /// have passed `sidecar_max_mb`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub poses_left_out: bool,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// Component-space joint positions at a uniform rate, quantized to `u16`
/// per axis within the clip's bounding box: position of joint `j` in frame
/// `f` is `origin_m + q * step_m` per axis, with `q` at index
/// `(f * joints + j) * 3 + axis`. Frame `f` is at `min(f / rate_hz,
/// duration)`; the error of a stored position is at most half a step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Poses {
    pub rate_hz: f32,
    pub frames: u32,
    /// Corner of the bounding box (meters, x y z).
    pub origin_m: [f32; 3],
    /// Box extent over [`POSE_Q_MAX`] per axis (meters; 0 on a flat axis).
    pub step_m: [f32; 3],
    pub q: U16s,
}

/// A retargeted clip's source: its skeleton (hierarchy order) and poses.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourcePoses {
    pub joints: Vec<String>,
    /// Parent index per joint, -1 for a root.
    pub parents: Vec<i32>,
    pub poses: Poses,
}

impl Poses {
    /// The player's sampling of a clip of `duration_s` on `joints` joints:
    /// the frame count and rate ([`POSE_RATE_HZ`], lowered so that
    /// `frames × joints` stays within [`POSE_BUDGET`]; at least 2 frames).
    pub fn sampling(duration_s: f32, joints: usize) -> (u32, f32) {
        let cap = (POSE_BUDGET / joints.max(1)).max(2);
        if !(duration_s.is_finite() && duration_s > 0.0) {
            return (1, POSE_RATE_HZ);
        }
        let want = (duration_s * POSE_RATE_HZ).ceil() as usize + 1;
        if want <= cap {
            return (want as u32, POSE_RATE_HZ);
        }
        (cap as u32, (cap - 1) as f32 / duration_s)
    }

    /// Frame `f`'s time.
    pub fn time(&self, f: u32, duration_s: f32) -> f32 {
        (f as f32 / self.rate_hz).min(duration_s)
    }

    /// Quantize `positions` (frame-major, `[x, y, z]` per joint) into
    /// their bounding box. Non-finite values are stored as the box's
    /// corner.
    pub fn quantize(rate_hz: f32, frames: u32, positions: &[[f32; 3]]) -> Poses {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for p in positions {
            for a in 0..3 {
                if p[a].is_finite() {
                    lo[a] = lo[a].min(p[a]);
                    hi[a] = hi[a].max(p[a]);
                }
            }
        }
        let mut origin = [0.0; 3];
        let mut step = [0.0; 3];
        for a in 0..3 {
            if lo[a] <= hi[a] {
                origin[a] = lo[a];
                step[a] = (hi[a] - lo[a]) / POSE_Q_MAX;
            }
        }
        let mut q = Vec::with_capacity(positions.len() * 3);
        for p in positions {
            for a in 0..3 {
                let v = if step[a] > 0.0 && p[a].is_finite() {
                    ((p[a] - origin[a]) / step[a])
                        .round()
                        .clamp(0.0, POSE_Q_MAX) as u16
                } else {
                    0
                };
                q.push(v);
            }
        }
        Poses {
            rate_hz,
            frames,
            origin_m: origin,
            step_m: step,
            q: U16s::from(q),
        }
    }

    /// Joints per frame (`q` holds `frames × joints × 3` values).
    pub fn joints(&self) -> usize {
        (self.q.len() / 3)
            .checked_div(self.frames as usize)
            .unwrap_or(0)
    }

    /// Joint `j`'s position in frame `f` (meters).
    pub fn position(&self, f: usize, j: usize) -> [f32; 3] {
        let at = (f * self.joints() + j) * 3;
        std::array::from_fn(|a| {
            self.origin_m[a] + f32::from(self.q.get(at + a).unwrap_or(0)) * self.step_m[a]
        })
    }

    fn check(&self, joints: usize) -> Result<(), String> {
        if self.q.len() != self.frames as usize * joints * 3 {
            return Err(format!(
                "poses hold {} values for {} frames x {joints} joints x 3",
                self.q.len(),
                self.frames
            ));
        }
        if !(self.rate_hz.is_finite() && self.rate_hz > 0.0) {
            return Err(format!("poses rate {} Hz", self.rate_hz));
        }
        Ok(())
    }
}

/// Bits per component chosen for every track in every segment.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BitRates {
    /// First sample of each segment, ascending, starting at 0.
    pub segment_starts: Vec<u32>,
    /// Samples of the clip (the end of the last segment).
    pub samples: u32,
    /// Index `(j * 3 + k) * segments + s` for joint `j`, track `k`
    /// (0 rotation, 1 translation, 2 scale), segment `s`: bits per
    /// component (0 segment-constant, 3..=19, [`BITS_RAW`]), or
    /// [`BITS_DEFAULT`] / [`BITS_CONSTANT`] for tracks stored once.
    pub bits: U8s,
}

/// The extracted root trajectory in the ground plane.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TrajectorySidecar {
    pub joint: String,
    /// `planar` or `full`.
    pub policy: String,
    /// Key rate; key `i` at `i / rate_hz`, the last at the duration.
    pub rate_hz: f32,
    /// Key positions (meters, +Y up so the top view is x, z).
    pub x_m: F32s,
    pub z_m: F32s,
    /// Heading about +Y (radians).
    pub yaw_rad: F32s,
    /// Looping clips: drift of per-tick composition over 100 loops.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub drift_100_loops_m: Option<f32>,
}

/// An event or sync marker on the clip's timeline.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EventMark {
    pub name: String,
    pub time_s: f32,
    /// `event` or `sync-marker` (the runtime's `MarkerKind::as_str`).
    pub kind: String,
}

/// What retargeting did to the feet, sampled uniformly.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetargetSidecar {
    /// Retarget profile (name or path) the clip was cooked with.
    pub profile: String,
    /// Sample rate of the foot curves.
    pub rate_hz: f32,
    pub feet: Vec<FootTrack>,
    /// Each rig's up and forward axes in its component space, from the
    /// profile, so a player can stand both figures up (a MakeHuman BVH is
    /// +z up, -y forward).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub axes: Option<RetargetAxes>,
}

/// Up and forward axes (`+y`, `-z`, ...) of the source and target rigs.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RetargetAxes {
    pub source_up: String,
    pub source_forward: String,
    pub target_up: String,
    pub target_forward: String,
}

/// One foot of a retargeted clip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FootTrack {
    pub joint: String,
    /// Height above the ground plane (meters), one per sample.
    pub height_m: F32s,
    /// Ground-plane speed (meters per second), one per sample.
    pub speed_mps: F32s,
    /// Where the foot is planted.
    pub contacts: Vec<TimeSpan>,
    /// Planted spans where the foot slides more than the profile allows.
    pub skates: Vec<Skate>,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeSpan {
    pub start_s: f32,
    pub end_s: f32,
}

#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Skate {
    pub start_s: f32,
    pub end_s: f32,
    /// Ground-plane distance the foot slid over the span (meters).
    pub slide_m: f32,
}

/// Why a sidecar (or one of its clips) cannot be used.
#[derive(Debug)]
pub enum SidecarError {
    Json(serde_json::Error),
    Version { found: u32, expected: u32 },
    Shape { clip: String, what: String },
}

impl fmt::Display for SidecarError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SidecarError::Json(e) => write!(f, "sidecar is not valid JSON of its schema: {e}"),
            SidecarError::Version { found, expected } => write!(
                f,
                "sidecar version {found} is not supported (this build reads {expected})"
            ),
            SidecarError::Shape { clip, what } => write!(f, "sidecar clip '{clip}': {what}"),
        }
    }
}

impl std::error::Error for SidecarError {}

impl Sidecar {
    pub fn new(cooker_version: &str) -> Sidecar {
        Sidecar {
            version: SIDECAR_VERSION,
            cooker_version: cooker_version.to_string(),
            content: String::new(),
            clips: Vec::new(),
        }
    }

    /// Parse and check a sidecar: version, then every clip's shape.
    pub fn from_json(bytes: &[u8]) -> Result<Sidecar, SidecarError> {
        let s: Sidecar = serde_json::from_slice(bytes).map_err(SidecarError::Json)?;
        if s.version != SIDECAR_VERSION {
            return Err(SidecarError::Version {
                found: s.version,
                expected: SIDECAR_VERSION,
            });
        }
        for c in &s.clips {
            c.check()?;
        }
        Ok(s)
    }

    /// The clip `report.json` names `(source, clip, profile)`.
    pub fn clip(&self, source: &str, clip: &str, profile: &str) -> Option<&ClipSidecar> {
        self.clips
            .iter()
            .find(|c| c.source == source && c.clip == clip && c.profile == profile)
    }
}

/// Errors in meters, time-major (`errors_m[t * joints + j]`, the order
/// verification measures in), as `error_q` values relative to each joint's
/// threshold, joint-major (`q[j * times + t]`, the order the sidecar
/// stores). A joint without a threshold counts as threshold 0.
pub fn quantize_errors(times: usize, errors_m: &[f32], thresholds_m: &[f32]) -> Vec<u16> {
    let n = errors_m.len().checked_div(times).unwrap_or(0);
    let mut q = vec![0u16; errors_m.len()];
    for (t, row) in errors_m.chunks_exact(n.max(1)).enumerate() {
        for (j, &e) in row.iter().enumerate() {
            let th = thresholds_m.get(j).copied().unwrap_or(0.0);
            q[j * times + t] = quantize_ratio(e, th);
        }
    }
    q
}

fn quantize_ratio(error_m: f32, threshold_m: f32) -> u16 {
    let r = error_m / threshold_m;
    if !r.is_finite() || r < 0.0 {
        return if error_m == 0.0 { 0 } else { ERROR_Q_SATURATED };
    }
    (r * ERROR_Q_ONE).round().min(ERROR_Q_SATURATED as f32) as u16
}

impl ClipSidecar {
    /// An empty record for one clip: fill it with [`ClipSidecar::set_joints`]
    /// and [`ClipSidecar::set_errors`], then the optional blocks.
    pub fn new(source: &str, clip: &str, profile: &str, duration_s: f32) -> ClipSidecar {
        ClipSidecar {
            source: source.to_string(),
            clip: clip.to_string(),
            profile: profile.to_string(),
            duration_s,
            joints: Vec::new(),
            parents: Vec::new(),
            thresholds_m: F32s::default(),
            times_s: F32s::default(),
            error_q: U16s::default(),
            bit_rates: None,
            root_motion: None,
            events: Vec::new(),
            retarget: None,
            poses: None,
            source_poses: None,
            poses_left_out: false,
        }
    }

    /// The skeleton in hierarchy order: names, parents (`None` for a root)
    /// and each joint's threshold.
    pub fn set_joints(
        &mut self,
        names: &[String],
        parents: &[Option<usize>],
        thresholds_m: &[f32],
    ) {
        self.joints = names.to_vec();
        self.parents = parents
            .iter()
            .map(|p| p.map_or(-1, |p| i32::try_from(p).unwrap_or(-1)))
            .collect();
        self.thresholds_m = F32s::from(thresholds_m.to_vec());
    }

    /// The checked times and verification's errors in meters, time-major
    /// (`errors_m[t * joints + j]`, the order verification measures in).
    /// Call after [`ClipSidecar::set_joints`].
    pub fn set_errors(&mut self, times_s: &[f32], errors_m: &[f32]) -> Result<(), SidecarError> {
        let n = self.joints.len();
        if errors_m.len() != n * times_s.len() {
            return Err(self.shape(format!(
                "{} errors for {} joints x {} times",
                errors_m.len(),
                n,
                times_s.len()
            )));
        }
        let q = quantize_errors(times_s.len(), errors_m, &self.thresholds_m.0);
        self.set_error_q(times_s, q)
    }

    /// The checked times and their errors already quantized
    /// ([`quantize_errors`]: joint-major, `error_q` units). Call after
    /// [`ClipSidecar::set_joints`].
    pub fn set_error_q(&mut self, times_s: &[f32], error_q: Vec<u16>) -> Result<(), SidecarError> {
        let n = self.joints.len();
        if error_q.len() != n * times_s.len() {
            return Err(self.shape(format!(
                "{} quantized errors for {} joints x {} times",
                error_q.len(),
                n,
                times_s.len()
            )));
        }
        self.times_s = F32s::from(times_s.to_vec());
        self.error_q = U16s::from(error_q);
        Ok(())
    }

    fn shape(&self, what: String) -> SidecarError {
        SidecarError::Shape {
            clip: format!("{} / {} ({})", self.source, self.clip, self.profile),
            what,
        }
    }

    pub fn joint_count(&self) -> usize {
        self.joints.len()
    }
    pub fn time_count(&self) -> usize {
        self.times_s.len()
    }
    /// Whether per-time errors are present.
    pub fn has_errors(&self) -> bool {
        !self.error_q.is_empty()
    }

    /// Error of joint `j` at time index `t` over its threshold.
    pub fn ratio(&self, j: usize, t: usize) -> f32 {
        let q = self.error_q.get(j * self.time_count() + t).unwrap_or(0);
        f32::from(q) / ERROR_Q_ONE
    }

    /// Error of joint `j` at time index `t` in meters.
    pub fn error_m(&self, j: usize, t: usize) -> f32 {
        self.ratio(j, t) * self.thresholds_m.get(j).unwrap_or(0.0)
    }

    /// Joint `j`'s worst ratio and the first time index it occurs at.
    pub fn joint_worst(&self, j: usize) -> (f32, usize) {
        let mut best = (0.0f32, 0usize);
        for t in 0..self.time_count() {
            let r = self.ratio(j, t);
            if r > best.0 {
                best = (r, t);
            }
        }
        best
    }

    /// Every length and index agrees with the joint and time counts.
    pub fn check(&self) -> Result<(), SidecarError> {
        let (n, nt) = (self.joint_count(), self.time_count());
        if self.parents.len() != n || self.thresholds_m.len() != n {
            return Err(self.shape(format!(
                "{n} joints but {} parents and {} thresholds",
                self.parents.len(),
                self.thresholds_m.len()
            )));
        }
        for (j, &p) in self.parents.iter().enumerate() {
            if p >= j as i32 || p < -1 {
                return Err(self.shape(format!("joint {j} has parent {p} (parents come first)")));
            }
        }
        if self.has_errors() && self.error_q.len() != n * nt {
            return Err(self.shape(format!(
                "error_q holds {} values for {n} joints x {nt} times",
                self.error_q.len()
            )));
        }
        if let Some(b) = &self.bit_rates {
            self.check_bits(b)?;
        }
        if let Some(r) = &self.root_motion {
            let k = r.x_m.len();
            if r.z_m.len() != k || r.yaw_rad.len() != k {
                return Err(self.shape("trajectory x, z and yaw differ in length".into()));
            }
        }
        if let Some(p) = &self.poses {
            p.check(self.joint_count()).map_err(|e| self.shape(e))?;
        }
        if let Some(s) = &self.source_poses {
            if s.parents.len() != s.joints.len()
                || s.parents
                    .iter()
                    .enumerate()
                    .any(|(j, &p)| p >= j as i32 || p < -1)
            {
                return Err(self.shape("source skeleton parents do not fit its joints".into()));
            }
            s.poses
                .check(s.joints.len())
                .map_err(|e| self.shape(format!("source {e}")))?;
        }
        self.check_retarget()
    }

    fn check_bits(&self, b: &BitRates) -> Result<(), SidecarError> {
        let segs = b.segment_starts.len().max(1);
        if b.bits.len() != self.joint_count() * 3 * segs {
            return Err(self.shape(format!(
                "bit_rates holds {} codes for {} joints x 3 tracks x {segs} segments",
                b.bits.len(),
                self.joint_count()
            )));
        }
        if b.segment_starts.windows(2).any(|w| w[0] >= w[1])
            || b.segment_starts.first().is_some_and(|&s| s != 0)
        {
            return Err(self.shape("segment starts must ascend from 0".into()));
        }
        Ok(())
    }

    fn check_retarget(&self) -> Result<(), SidecarError> {
        let Some(r) = &self.retarget else {
            return Ok(());
        };
        for f in &r.feet {
            if f.height_m.len() != f.speed_mps.len() {
                return Err(self.shape(format!(
                    "foot '{}': height and speed differ in length",
                    f.joint
                )));
            }
        }
        Ok(())
    }
}

/// Index of the bit-rate code of `(joint, track, segment)` in
/// [`BitRates::bits`].
pub fn bits_index(joint: usize, track: usize, segment: usize, segments: usize) -> usize {
    (joint * 3 + track) * segments + segment
}

#[cfg(test)]
mod tests {
    use super::*;

    fn clip() -> ClipSidecar {
        let mut c = ClipSidecar::new("a.glb", "walk", "standard", 1.0);
        let names = vec!["root".to_string(), "hand".to_string()];
        c.set_joints(&names, &[None, Some(0)], &[1e-4, 5e-5]);
        c
    }

    #[test]
    fn errors_are_stored_joint_major_as_threshold_fractions() {
        let mut c = clip();
        // Two times: root 0.5, 1.0 of 0.1 mm; hand 0.25, 2.0 of 0.05 mm.
        c.set_errors(&[0.0, 0.5], &[5e-5, 1.25e-5, 1e-4, 1e-4])
            .unwrap();
        assert_eq!(c.error_q.0, vec![5000, 10000, 2500, 20000]);
        assert_eq!(c.ratio(1, 1), 2.0);
        assert!((c.error_m(1, 1) - 1e-4).abs() < 1e-9);
        assert_eq!(c.joint_worst(1), (2.0, 1));
        c.check().unwrap();
    }

    #[test]
    fn poses_decode_within_half_a_step() {
        let mut c = clip();
        let pts: Vec<[f32; 3]> = (0..6)
            .map(|i| {
                let t = i as f32 * 0.37;
                [t.sin(), 1.0 + 0.1 * t, -t.cos() * 0.5]
            })
            .collect();
        let p = Poses::quantize(30.0, 3, &pts);
        assert_eq!(p.joints(), 2);
        for (i, want) in pts.iter().enumerate() {
            let got = p.position(i / 2, i % 2);
            for a in 0..3 {
                let tol = p.step_m[a] * 0.5 + 1e-6;
                assert!((got[a] - want[a]).abs() <= tol, "{i} {a}: {got:?} {want:?}");
            }
        }
        c.poses = Some(p);
        c.check().unwrap();
        c.poses.as_mut().unwrap().frames = 4;
        assert!(c.check().unwrap_err().to_string().contains("poses hold"));
    }

    #[test]
    fn pose_sampling_keeps_to_the_budget() {
        assert_eq!(Poses::sampling(1.0, 20), (31, POSE_RATE_HZ));
        let (frames, rate) = Poses::sampling(100.0, 64);
        assert_eq!(frames as usize, POSE_BUDGET / 64);
        assert!((rate * 100.0 - (frames - 1) as f32).abs() < 1e-3);
        assert_eq!(Poses::sampling(0.0, 20).0, 1);
    }

    #[test]
    fn huge_and_failed_errors_saturate() {
        let mut c = clip();
        c.set_errors(&[0.0], &[1.0, f32::INFINITY]).unwrap();
        assert_eq!(c.error_q.0, vec![ERROR_Q_SATURATED, ERROR_Q_SATURATED]);
    }

    #[test]
    fn shape_errors_name_the_clip() {
        let mut c = clip();
        let e = c.set_errors(&[0.0], &[1.0]).unwrap_err().to_string();
        assert!(e.contains("a.glb / walk (standard)"), "{e}");
        c.parents = vec![-1, 1];
        assert!(c.check().unwrap_err().to_string().contains("parent 1"));
    }
}
