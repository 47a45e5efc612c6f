//! A validated clip and its prepared semantics.

use super::format::*;
use super::{invalid, PackageError};
#[cfg(doc)]
use crate::additive::ADDITIVE_IDENTITY;
use crate::codec::vbr::{CachedTrack, StaticTracks, TrackCache, VbrIndex};
use crate::codec::CodecError;
use crate::codec::{ClipCodec, CodecId};
use crate::events::{Event, EventTrack};
use crate::math::Transform;
use crate::root_motion::{RigidTransform, Trajectory};
use crate::timing::{sample_position, LoopMode, SamplePosition};
use crate::DecodeError;

/// How a clip's motion root was extracted into its trajectory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum RootMotionPolicy {
    /// Ground-plane translation (x, z) and heading (yaw about +Y).
    Planar,
    /// The whole rigid transform of the motion joint (scale removed).
    Full,
}

impl RootMotionPolicy {
    pub fn as_u8(self) -> u8 {
        match self {
            RootMotionPolicy::Planar => ROOT_MOTION_PLANAR,
            RootMotionPolicy::Full => ROOT_MOTION_FULL,
        }
    }
    pub fn from_u8(v: u8) -> Option<RootMotionPolicy> {
        match v {
            ROOT_MOTION_PLANAR => Some(RootMotionPolicy::Planar),
            ROOT_MOTION_FULL => Some(RootMotionPolicy::Full),
            _ => None,
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            RootMotionPolicy::Planar => "planar",
            RootMotionPolicy::Full => "full",
        }
    }
}

/// What an authored marker is for. Both kinds are delivered as
/// [`Event`]s; the kind tells a sync group which markers are gait contacts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum MarkerKind {
    /// A named contact marker for locomotion synchronization.
    SyncMarker,
    /// A notify (sound, VFX, presentation), delivered once per crossing.
    Event,
}

impl MarkerKind {
    pub fn as_str(self) -> &'static str {
        match self {
            MarkerKind::SyncMarker => "sync-marker",
            MarkerKind::Event => "event",
        }
    }
}

/// A clip's root-motion description, a copy of validated values (fields
/// are public: editing a copy changes nothing in the package; the keys are behind
/// [`Clip::trajectory`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMotion<'a> {
    /// Debug name of the designated motion joint (a skeleton joint).
    pub joint: &'a str,
    pub policy: RootMotionPolicy,
    /// The trajectory's original first key: `R_char(t) = offset * R(t)`
    /// places the character in the authored frame.
    pub reference_offset: RigidTransform,
    /// Cook-time figure: position error of per-tick (30 Hz) delta
    /// composition over 100 loops against `C^100` (looping clips only).
    pub drift_100_loops_m: Option<f32>,
}

/// One marker with its debug name and kind.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Marker<'a> {
    pub event: Event,
    pub name: &'a str,
    pub kind: MarkerKind,
}

/// A validated clip. Its fields are private so that what load validated
/// cannot be edited afterwards (the decoders and the event and trajectory
/// views rely on it); read them through the accessors.
#[derive(Clone, Debug)]
#[repr(C, align(64))]
pub struct Clip<'a> {
    // What every decode reads comes first, in as few cache lines as the
    // struct allows (64-byte aligned, `repr(C)` so the order holds): under
    // many clip instances a clip's view is as cold as its data, and each
    // line it spans is one more miss per decode.
    pub(crate) codec: ClipCodec<'a>,
    pub(super) duration_s: f32,
    pub(super) sample_rate_hz: f32,
    pub(super) num_samples: u32,
    pub(super) loop_mode: LoopMode,
    /// Built at load for VBR clips: direct access to any joint's data.
    pub(crate) index: Option<VbrIndex>,
    pub(crate) joint_count: usize,
    pub(super) name: &'a str,
    pub(super) codec_id: CodecId,
    pub(super) codec_version: u16,
    pub(super) profile: &'a str,
    pub(super) source_hash: [u8; 32],
    pub(super) resample_error_m: f32,
    pub(super) max_error_m: f32,
    pub(super) blob_size: usize,
    pub(super) loop_seam_error_m: Option<f32>,
    pub(super) root_motion: Option<RootMotion<'a>>,
    pub(super) curves: std::ops::Range<usize>,
    pub(super) additive_reference: Option<&'a str>,
    /// Decoded at load (package bytes need not be aligned for
    /// `RigidTransform`); validated through `Trajectory::new`.
    pub(super) trajectory_keys: Vec<RigidTransform>,
    pub(super) trajectory_rate_hz: f32,
    /// Validated through `EventTrack::new`; `markers[i]` names `events[i]`.
    pub(super) events: Vec<Event>,
    pub(super) marker_info: Vec<(&'a str, MarkerKind)>,
}

impl<'a> Clip<'a> {
    /// A clip over a bare codec blob of the current layout version,
    /// outside any package, with no name, curves, events or root motion.
    /// Cook side: the encoder measures its blob through exactly the
    /// decoder a game runs ([`Clip::sample`]). The timing fields are
    /// validated as a package's are.
    pub fn from_blob(
        codec_id: CodecId,
        blob: &'a [u8],
        joint_count: usize,
        timing: (f32, f32, u32, LoopMode),
    ) -> Result<Clip<'a>, CodecError> {
        let (duration_s, sample_rate_hz, num_samples, loop_mode) = timing;
        check_timing("", duration_s, sample_rate_hz, num_samples, loop_mode).map_err(|_| {
            CodecError::Invalid {
                what: "clip timing",
            }
        })?;
        let codec_version = codec_id.version();
        let codec = ClipCodec::parse(codec_id, codec_version, blob, joint_count, num_samples)?;
        Ok(Clip {
            codec,
            duration_s,
            sample_rate_hz,
            num_samples,
            loop_mode,
            index: None,
            joint_count,
            name: "",
            codec_id,
            codec_version,
            profile: "",
            source_hash: [0; 32],
            resample_error_m: 0.0,
            max_error_m: 0.0,
            blob_size: blob.len(),
            loop_seam_error_m: None,
            root_motion: None,
            curves: 0..0,
            additive_reference: None,
            trajectory_keys: Vec::new(),
            trajectory_rate_hz: 0.0,
            events: Vec::new(),
            marker_info: Vec::new(),
        })
    }

    /// The clip's name (unique in its package).
    pub fn name(&self) -> &'a str {
        self.name
    }
    /// Authored duration in seconds.
    pub fn duration_s(&self) -> f32 {
        self.duration_s
    }
    /// Sample rate of the pose grid in Hz.
    pub fn sample_rate_hz(&self) -> f32 {
        self.sample_rate_hz
    }
    /// Samples on the pose grid (at least 1).
    pub fn num_samples(&self) -> u32 {
        self.num_samples
    }
    pub fn loop_mode(&self) -> LoopMode {
        self.loop_mode
    }
    pub fn codec_id(&self) -> CodecId {
        self.codec_id
    }
    pub fn codec_version(&self) -> u16 {
        self.codec_version
    }
    /// The validated codec view (decoding goes through [`Clip::sample`]
    /// and friends, which also map time to samples).
    #[allow(dead_code)]
    pub(crate) fn codec(&self) -> &ClipCodec<'a> {
        &self.codec
    }
    /// The joint index built at load (VBR clips): what makes a single
    /// joint or a subset cost the same whatever the joints' indices.
    #[allow(dead_code)]
    pub(crate) fn index(&self) -> Option<&VbrIndex> {
        self.index.as_ref()
    }
    /// Bytes of the codec blob.
    pub fn blob_size(&self) -> usize {
        self.blob_size
    }
    /// Name of the quality profile the clip was cooked with.
    pub fn profile(&self) -> &'a str {
        self.profile
    }
    /// blake3 of the source file bytes (and companions).
    pub fn source_hash(&self) -> &[u8; 32] {
        &self.source_hash
    }
    /// Cook-time figure (informational): resampling error in meters.
    pub fn resample_error_m(&self) -> f32 {
        self.resample_error_m
    }
    /// Cook-time figure (informational): verified codec error in meters.
    pub fn max_error_m(&self) -> f32 {
        self.max_error_m
    }
    /// Cook-time figure for looping clips: how far the last authored pose
    /// was from the first (component space, virtual vertices, meters).
    pub fn loop_seam_error_m(&self) -> Option<f32> {
        self.loop_seam_error_m
    }
    /// Root motion, if the cooker extracted it (keys: [`Clip::trajectory`]).
    pub fn root_motion(&self) -> Option<RootMotion<'a>> {
        self.root_motion
    }

    /// Bracketing samples for clip-local time `t`, with the clip's duration
    /// and loop semantics.
    #[inline]
    pub fn position(&self, t: f32) -> SamplePosition {
        self.timing().position(t)
    }

    /// The fields that map a time to samples, by value (a decode context
    /// keeps them, so that `seek` does not read the clip).
    #[inline]
    pub(crate) fn timing(&self) -> Timing {
        Timing {
            duration_s: self.duration_s,
            sample_rate_hz: self.sample_rate_hz,
            num_samples: self.num_samples,
            loop_mode: self.loop_mode,
        }
    }

    /// Sample only `joints` (skeleton indices, any order) at time `t`:
    /// `out[k]` is joint `joints[k]`'s local transform, bit for bit as
    /// [`Clip::sample`] gives it. Each joint is reached directly through
    /// the clip's index, so the cost scales with `joints.len()`, not with
    /// the indices. No allocation; false if a length or index is wrong.
    #[allow(dead_code)]
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn sample_joints(
        &self,
        t: f32,
        defaults: &[Transform],
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        if defaults.len() != self.joint_count {
            return false;
        }
        let pos = self.position(t);
        match (&self.codec, &self.index) {
            (ClipCodec::Vbr(c), Some(i)) => c.decode_joints_indexed(i, pos, defaults, joints, out),
            (codec, _) => codec.decode_joints(pos, defaults, joints, out),
        }
    }

    /// [`Clip::sample_joints`] from the clip's [`Clip::static_pose`]: only
    /// the joints' animated tracks are decoded. Same bits.
    #[allow(dead_code)]
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn sample_joints_static(
        &self,
        t: f32,
        static_pose: &[Transform],
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        if static_pose.len() != self.joint_count {
            return false;
        }
        let pos = self.position(t);
        match (&self.codec, &self.index) {
            (ClipCodec::Vbr(c), Some(i)) => {
                c.decode_joints_static(i, pos, static_pose, joints, out)
            }
            // The static pose holds every stored default and constant, so
            // decoding over it as defaults gives the same values.
            (codec, _) => codec.decode_joints(pos, static_pose, joints, out),
        }
    }

    /// One-shot decode for tools: the local pose at time `t` into `out`
    /// (length = joint count), from `defaults`
    /// ([`super::Package::sample_defaults`]). No allocation. A playing
    /// instance uses a [`crate::Player`] (same bits, faster).
    pub fn sample(
        &self,
        t: f32,
        defaults: &[Transform],
        out: &mut [Transform],
    ) -> Result<(), DecodeError> {
        let n = self.joint_count;
        for (what, len) in [("defaults", defaults.len()), ("out", out.len())] {
            if len != n {
                return Err(DecodeError::Length {
                    what,
                    expected: n,
                    found: len,
                });
            }
        }
        if self.codec.decode_pose(self.position(t), defaults, out) {
            Ok(())
        } else {
            Err(DecodeError::Time)
        }
    }

    /// The clip's static pose for [`Clip::sample_static`]: the value of
    /// every track that is not animated. Compute it once per clip and
    /// `defaults` (when the clip is bound to a skeleton) into caller-owned
    /// memory. False if a length is wrong.
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn static_pose(&self, defaults: &[Transform], out: &mut [Transform]) -> bool {
        defaults.len() == self.joint_count && self.codec.static_pose(defaults, out)
    }

    /// [`Clip::sample`] that starts from the clip's [`Clip::static_pose`]
    /// and decodes only the animated tracks: the same pose, faster when
    /// many tracks are default or constant (most rigs). No allocation.
    /// False if a length is wrong.
    #[allow(dead_code)]
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    #[inline]
    pub(crate) fn sample_static(
        &self,
        t: f32,
        static_pose: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        self.codec
            .decode_pose_static(self.position(t), static_pose, out)
    }

    /// The clip's packed static tracks for [`Clip::sample_packed`]: the
    /// value of every track that is not animated and not the identity's,
    /// packed. Compute it once per clip and `defaults` (when the clip is
    /// bound to a skeleton); it allocates. It borrows the package's bytes:
    /// a VBR clip accepts only its own (another's `sample_packed` returns
    /// false, even over a copy of the same bytes). None if a length is
    /// wrong.
    #[allow(dead_code)]
    pub(crate) fn static_tracks(&self, defaults: &[Transform]) -> Option<StaticTracks<'a>> {
        if defaults.len() != self.joint_count {
            return None;
        }
        self.codec.static_tracks(defaults)
    }

    /// A playback instance's cache for this clip's segment state, for the
    /// cached whole-pose requests of a [`crate::DecodeContext`]
    /// (`sample_static_cached` and the like). Make one per playing
    /// instance, beside its context; it allocates 32 bytes per animated
    /// track, and borrows the package's bytes.
    pub(crate) fn track_cache(&self) -> TrackCache<'a> {
        self.codec.track_cache()
    }

    /// [`Clip::track_cache`] over entries the caller placed, so that an
    /// instance keeps its whole decode state in its own memory: for
    /// example `[CachedTrack::EMPTY; 32]` inside the instance's struct,
    /// beside its [`crate::DecodeContext`], or a slice of an arena of
    /// instances. It needs [`Clip::track_cache_len`] entries; with fewer,
    /// poses decoded through it run uncached (the same bits).
    #[allow(dead_code)]
    pub(crate) fn track_cache_in<S: AsMut<[CachedTrack]>>(&self, entries: S) -> TrackCache<'a, S> {
        self.codec.track_cache_in(entries)
    }

    /// The entries a [`Clip::track_cache_in`] cache uses: one per
    /// animated track.
    pub(crate) fn track_cache_len(&self) -> usize {
        self.codec.track_cache_len()
    }

    /// [`Clip::sample_static`] from [`Clip::static_tracks`]: the same
    /// pose bit for bit, reading only the animated data and the packed
    /// values (a cold decode waits on fewer cache lines than with a
    /// 40-byte static pose entry per joint). No allocation. False if a
    /// length is wrong or `statics` is another clip's.
    #[allow(dead_code)]
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    #[inline]
    pub(crate) fn sample_packed(
        &self,
        t: f32,
        statics: &StaticTracks<'_>,
        out: &mut [Transform],
    ) -> bool {
        self.codec
            .decode_pose_packed(self.position(t), statics, out)
    }

    /// Index range of this clip's curves in [`super::Package::curves`].
    pub(crate) fn curve_range(&self) -> std::ops::Range<usize> {
        self.curves.clone()
    }

    /// Whether the clip holds additive deltas (Ludus convention, see
    /// [`crate::additive`]) rather than a pose. Decode it with
    /// [`super::Package::sample_defaults`] so untracked joints read as
    /// [`ADDITIVE_IDENTITY`].
    pub fn is_additive(&self) -> bool {
        self.additive_reference.is_some()
    }

    /// The named, revisioned reference the deltas were made against
    /// (e.g. `rest rev 0123…`); "" for a non-additive clip.
    pub fn additive_reference(&self) -> &'a str {
        self.additive_reference.unwrap_or("")
    }

    /// The root trajectory, if the clip has one. Borrows the keys decoded
    /// at load; re-runs the (allocation-free, `O(keys)`) validation load
    /// already passed, so hold the result for a whole update.
    pub fn trajectory(&self) -> Option<Trajectory<'_>> {
        self.root_motion?;
        Trajectory::new(
            &self.trajectory_keys,
            self.trajectory_rate_hz,
            self.duration_s,
        )
        .ok()
    }

    /// The clip's markers and events as a track for
    /// [`crate::events::crossed_events`] (looping per the loop mode).
    /// Validated at load; re-validation here is allocation-free `O(events)`.
    pub fn event_track(&self) -> EventTrack<'_> {
        const NO_EVENTS: &[Event] = &[];
        EventTrack::new(&self.events, self.duration_s, self.loop_mode.is_looping())
            // Unreachable (load validated these private fields through the
            // same constructor); an empty track is the safe answer.
            .or_else(|_| EventTrack::new(NO_EVENTS, 0.0, false))
            .expect("an empty event track on a zero duration is always valid")
    }

    /// The debug name of the marker with author id `id`.
    pub fn event_name(&self, id: u64) -> Option<&'a str> {
        self.events
            .iter()
            .zip(&self.marker_info)
            .find(|(e, _)| e.id == id)
            .map(|(_, &(name, _))| name)
    }

    /// Every marker in track order with its name and kind.
    pub fn markers(&self) -> impl Iterator<Item = Marker<'a>> + '_ {
        self.events
            .iter()
            .zip(&self.marker_info)
            .map(|(&event, &(name, kind))| Marker { event, name, kind })
    }
}

/// A clip's duration, rate, sample count and loop mode: all that maps a
/// clip-local time to its bracketing samples.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Timing {
    duration_s: f32,
    sample_rate_hz: f32,
    num_samples: u32,
    loop_mode: LoopMode,
}

impl Timing {
    #[inline(always)]
    pub(crate) fn position(&self, t: f32) -> SamplePosition {
        sample_position(
            t,
            self.duration_s,
            self.sample_rate_hz,
            self.num_samples,
            self.loop_mode,
        )
    }
}

/// Duration, rate and sample count are usable and the sample grid covers
/// the duration as the loop mode requires.
pub(super) fn check_timing(
    name: &str,
    duration_s: f32,
    sample_rate_hz: f32,
    num_samples: u32,
    loop_mode: LoopMode,
) -> Result<(), PackageError> {
    if !(duration_s.is_finite() && duration_s >= 0.0) {
        return Err(invalid(format!("clip '{name}' has duration {duration_s}")));
    }
    if !(sample_rate_hz.is_finite() && sample_rate_hz > 0.0) {
        return Err(invalid(format!(
            "clip '{name}' has sample rate {sample_rate_hz}"
        )));
    }
    if num_samples == 0 {
        return Err(invalid(format!("clip '{name}' has no samples")));
    }
    if loop_mode == LoopMode::LoopWrap {
        // No duplicated end sample: the grid's span plus the seam
        // interval is exactly the duration.
        let span = num_samples as f64 / sample_rate_hz as f64;
        if (span - duration_s as f64).abs() > 1e-3 / sample_rate_hz as f64 {
            return Err(invalid(format!(
                "clip '{name}': wrap loop with {num_samples} samples at {sample_rate_hz} Hz needs duration {span} s, not {duration_s} s"
            )));
        }
    } else {
        // The grid must cover the duration (with float slack).
        let covered = (num_samples - 1) as f32 / sample_rate_hz;
        if covered + 1e-3 / sample_rate_hz < duration_s {
            return Err(invalid(format!(
                "clip '{name}': {num_samples} samples at {sample_rate_hz} Hz do not cover {duration_s} s"
            )));
        }
    }
    Ok(())
}
