//! A validated clip and its prepared semantics.

use super::{invalid, PackageError};
use crate::codec::vbr::{CachedTrack, TrackCache, VbrIndex};
use crate::codec::CodecError;
use crate::codec::{ClipCodec, CodecId};
use crate::events::{crossed_events, Crossing, EventTrack, Overflow, PlaybackLatch};
use crate::math::Transform;
use crate::timing::{sample_position, LoopMode, SamplePosition};
use crate::DecodeError;
#[cfg(doc)]
use ludus_anim_format::additive::ADDITIVE_IDENTITY;
use ludus_anim_format::events::{Event, Marker};
use ludus_anim_format::package::{CookInfo, RootMotion};
use ludus_anim_format::rigid::RigidTransform;
use ludus_anim_format::trajectory::Trajectory;
use std::sync::Arc;

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
    pub(super) cook: CookInfo<'a>,
    pub(super) root_motion: Option<RootMotion<'a>>,
    pub(super) curves: std::ops::Range<usize>,
    /// Decoded at load (package bytes need not be aligned for
    /// `RigidTransform`); validated through `Trajectory::new`.
    pub(super) trajectory_keys: Vec<RigidTransform>,
    pub(super) trajectory_rate_hz: f32,
    /// Validated through `EventTrack::new`; `markers[i].event` is
    /// `events[i]`.
    pub(super) events: Vec<Event>,
    pub(super) markers: Vec<Marker<'a>>,
    /// Built at load for a VBR clip of a package (see [`StaticBase`]).
    pub(super) static_base: Option<StaticBase>,
}

/// A clip's static pose over its package's defaults, built once at load,
/// so that a one-shot [`Clip::sample`] given those defaults decodes only
/// the animated tracks (as a [`crate::Player`] does) instead of every
/// constant track again.
///
/// `defaults` is the package's own allocation (what
/// [`super::Package::sample_defaults`] returns), held here so that it
/// outlives every clone of the clip and is never written: a caller's slice
/// with its address and length is that memory, so its values are the ones
/// the static pose was built from, and recognizing it costs no read.
#[derive(Clone, Debug)]
pub(crate) struct StaticBase {
    defaults: Arc<[Transform]>,
    pose: Arc<[Transform]>,
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
            cook: CookInfo {
                codec: codec_id,
                codec_version,
                blob_size: blob.len(),
                profile: "",
                source_hash: [0; 32],
                resample_error_m: 0.0,
                max_error_m: 0.0,
                loop_seam_error_m: None,
                additive_reference: None,
            },
            root_motion: None,
            curves: 0..0,
            trajectory_keys: Vec::new(),
            trajectory_rate_hz: 0.0,
            events: Vec::new(),
            markers: Vec::new(),
            static_base: None,
        })
    }

    /// Build the static base over `defaults` (the package's
    /// [`super::Package::sample_defaults`] for this clip). VBR clips only:
    /// the reference codec stores no static tracks.
    pub(super) fn build_static_base(&mut self, defaults: &Arc<[Transform]>) {
        if !matches!(self.codec, ClipCodec::Vbr(_)) {
            return;
        }
        let mut pose = vec![Transform::IDENTITY; self.joint_count];
        if self.static_pose(defaults, &mut pose) {
            self.static_base = Some(StaticBase {
                defaults: Arc::clone(defaults),
                pose: Arc::from(pose),
            });
        }
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
    /// How times outside `[0, duration]` map into the clip.
    pub fn loop_mode(&self) -> LoopMode {
        self.loop_mode
    }
    /// The clip record's cook-time figures and provenance (codec, profile,
    /// measured errors, source hash, additive reference): for tools.
    pub fn cook_info(&self) -> &CookInfo<'a> {
        &self.cook
    }
    /// Root motion, if the cooker extracted it (keys: [`Clip::trajectory`];
    /// the displacement of a playback update: [`Clip::root_motion_delta`]).
    pub fn root_motion(&self) -> Option<RootMotion<'a>> {
        self.root_motion
    }

    /// Bracketing samples for clip-local time `t`, with the clip's duration
    /// and loop semantics (what a [`super::CurveChannel`] evaluates at).
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

    /// One-shot decode for tools: the local pose at time `t` into `out`
    /// (length = joint count), from `defaults`
    /// ([`super::Package::sample_defaults`]: that very slice decodes from
    /// the static base the package built at load, only the animated
    /// tracks; other defaults decode every track, the same bits). No
    /// allocation. A playing instance uses a [`crate::Player`] (same bits,
    /// faster).
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
        let pos = self.position(t);
        let done = match (&self.static_base, &self.codec) {
            (Some(b), ClipCodec::Vbr(c)) if std::ptr::eq(defaults, &*b.defaults) => {
                c.decode_from_static(pos, &b.pose, out)
            }
            _ => self.codec.decode_pose(pos, defaults, out),
        };
        if done {
            Ok(())
        } else {
            Err(DecodeError::Time)
        }
    }

    /// The clip's static pose, what a [`crate::Player`] decodes from: the
    /// value of every track that is not animated. Compute it once per clip and
    /// `defaults` (when the clip is bound to a skeleton) into caller-owned
    /// memory. False if a length is wrong.
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn static_pose(&self, defaults: &[Transform], out: &mut [Transform]) -> bool {
        defaults.len() == self.joint_count && self.codec.static_pose(defaults, out)
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
    pub(crate) fn track_cache_in<S: AsMut<[CachedTrack]>>(&self, entries: S) -> TrackCache<'a, S> {
        self.codec.track_cache_in(entries)
    }

    /// The entries a [`Clip::track_cache_in`] cache uses: one per
    /// animated track.
    pub(crate) fn track_cache_len(&self) -> usize {
        self.codec.track_cache_len()
    }

    /// Index range of this clip's curves in [`super::Package::curves`].
    pub(crate) fn curve_range(&self) -> std::ops::Range<usize> {
        self.curves.clone()
    }

    /// Whether the clip holds additive deltas (the convention of
    /// `ludus_anim_format::additive`) rather than a pose. Decode it with
    /// [`super::Package::sample_defaults`] so untracked joints read as
    /// [`ADDITIVE_IDENTITY`], then apply it with
    /// [`crate::additive::apply_additive_pose`].
    pub fn is_additive(&self) -> bool {
        self.cook.additive_reference.is_some()
    }

    /// The root trajectory, if the clip has one (for tools: its keys and
    /// samples). Borrows the keys decoded at load; re-runs the
    /// (allocation-free, `O(keys)`) validation load already passed.
    pub fn trajectory(&self) -> Option<Trajectory<'_>> {
        self.root_motion?;
        Trajectory::new(
            &self.trajectory_keys,
            self.trajectory_rate_hz,
            self.duration_s,
        )
        .ok()
    }

    /// How far the playback update `old_abs -> new_abs` (absolute,
    /// unwrapped clip time in seconds, as for [`Clip::crossed_events`])
    /// moves the character: apply it as `world = world * delta`. Loops and
    /// reverse play are exact (`Trajectory::delta` in
    /// `ludus_anim_format::trajectory`); the identity for a clip without
    /// root motion. Never allocates.
    pub fn root_motion_delta(&self, old_abs: f64, new_abs: f64) -> RigidTransform {
        self.trajectory().map_or(RigidTransform::IDENTITY, |t| {
            t.delta(old_abs, new_abs, self.loop_mode.is_looping())
        })
    }

    /// Write the markers crossed by the playback update `old_abs ->
    /// new_abs` (absolute, unwrapped clip time in seconds, accumulated in
    /// `f64`) into `out` in playback order and return how many were
    /// written; see [`crate::events`] for the exact intervals. `latch` is
    /// the activation's state (nonlooping clips). On `Err(Overflow {
    /// needed })` nothing in `out` or `latch` changed and the caller must
    /// not advance its cursor. Never allocates or panics.
    pub fn crossed_events(
        &self,
        old_abs: f64,
        new_abs: f64,
        latch: &mut PlaybackLatch,
        out: &mut [Crossing],
    ) -> Result<usize, Overflow> {
        // Load validated the track through the same constructor; were it
        // refused here, there would be nothing to deliver.
        match EventTrack::new(&self.events, self.duration_s, self.loop_mode.is_looping()) {
            Some(track) => crossed_events(&track, old_abs, new_abs, latch, out),
            None => Ok(0),
        }
    }

    /// Every marker in track order with its name and kind (a
    /// [`Crossing`]'s `index` indexes this slice).
    pub fn markers(&self) -> &[Marker<'a>] {
        &self.markers
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
