//! The CLIP section: each 176-byte record (fields named in
//! `format::clip_record`) validated into a [`Clip`], with its codec blob,
//! curve range, additive reference, loop seam figure, root motion and
//! events.

use super::bytes::{Bytes, Record, Strings};
use super::clip::{check_timing, Clip};
use super::curve::CurveChannel;
use super::format::clip_record as f;
use super::format::*;
use super::records::EventRecord;
use super::{invalid, PackageError};
use crate::codec::vbr::VbrIndex;
use crate::codec::{ClipCodec, CodecError, CodecId};
use crate::events::EventTrack;
use crate::math::{Quat, Vec3};
use crate::skeleton::Skeleton;
use crate::timing::LoopMode;
use ludus_anim_format::events::{Event, Marker};
use ludus_anim_format::package::{CookInfo, RootMotion, RootMotionPolicy};
use ludus_anim_format::rigid::RigidTransform;
use ludus_anim_format::trajectory::{trajectory_key_count, Trajectory};

/// What a clip record refers to outside itself.
pub(super) struct ClipContext<'s, 'a> {
    pub(super) data: &'s Bytes<'a>,
    pub(super) strings: &'s Strings<'a>,
    pub(super) skeleton: &'s Skeleton,
    pub(super) curves: &'s [CurveChannel<'a>],
    pub(super) events: &'s [EventRecord<'a>],
}

/// Every record of the CLIP section.
pub(super) fn parse_clips<'a>(
    sec: &Bytes<'a>,
    cx: &ClipContext<'_, 'a>,
) -> Result<Vec<Clip<'a>>, PackageError> {
    let count = sec.u32(0)? as u64;
    if count > sec.b.len() as u64 / CLIP_RECORD_SIZE as u64 {
        return Err(invalid("clip count exceeds section size"));
    }
    let mut clips = Vec::with_capacity(count as usize);
    for i in 0..count {
        let r = Record {
            sec,
            at: 16 + i * CLIP_RECORD_SIZE as u64,
        };
        clips.push(parse_clip(r, cx)?);
    }
    Ok(clips)
}

/// One clip record, every field checked in record order.
fn parse_clip<'a>(r: Record<'_, 'a>, cx: &ClipContext<'_, 'a>) -> Result<Clip<'a>, PackageError> {
    let name = r.str(f::NAME, cx.strings, "clip name")?;
    let flags = r.u32(f::FLAGS)?;
    let duration_s = r.f32(f::DURATION_S)?;
    let sample_rate_hz = r.f32(f::SAMPLE_RATE_HZ)?;
    let num_samples = r.u32(f::NUM_SAMPLES)?;
    let loop_mode = LoopMode::from_u8(r.u8(f::LOOP_MODE)?)
        .ok_or_else(|| invalid(format!("clip '{name}' has an unknown loop mode")))?;
    let codec_raw = r.u16(f::CODEC)?;
    let codec_version = r.u16(f::CODEC_VERSION)?;
    let profile = r.str(f::PROFILE, cx.strings, "clip profile")?;
    let blob_off = r.u64(f::BLOB_OFFSET)?;
    let blob_size = r.u64(f::BLOB_SIZE)?;
    let curve_first = r.u32(f::CURVE_FIRST)? as usize;
    let curve_n = r.u32(f::CURVE_COUNT)? as usize;
    let resample_error_m = r.f32(f::RESAMPLE_ERROR_M)?;
    let max_error_m = r.f32(f::MAX_ERROR_M)?;
    let source_hash = r.hash32(f::SOURCE_HASH)?;
    if flags & !CLIP_FLAGS_KNOWN != 0 {
        return Err(invalid(format!(
            "clip '{name}' has unknown flags {flags:#x}"
        )));
    }
    let reserved_tail = r.bytes(f::RESERVED_TAIL, f::RESERVED_TAIL_BYTES)?;
    if r.u16(f::RESERVED_16)? != 0 || reserved_tail.iter().any(|&b| b != 0) {
        return Err(invalid(format!(
            "clip '{name}' has non-zero reserved bytes"
        )));
    }
    check_timing(name, duration_s, sample_rate_hz, num_samples, loop_mode)?;
    if blob_off % ALIGN as u64 != 0 {
        return Err(invalid(format!(
            "clip '{name}' blob is not {ALIGN}-byte aligned"
        )));
    }
    let codec_error = |source| PackageError::Codec {
        clip: name.to_string(),
        source,
    };
    let codec_id = CodecId::from_u16(codec_raw)
        .ok_or_else(|| codec_error(CodecError::UnknownCodec(codec_raw)))?;
    let blob = cx.data.range(blob_off, blob_size)?;
    let joint_count = cx.skeleton.joint_count();
    let codec = ClipCodec::parse(codec_id, codec_version, blob, joint_count, num_samples)
        .map_err(codec_error)?;
    let index = match &codec {
        ClipCodec::Vbr(v) => Some(VbrIndex::build(v).map_err(codec_error)?),
        ClipCodec::Reference(_) => None,
    };
    let curves = curve_range(name, curve_first, curve_n, num_samples, cx.curves)?;
    let additive_reference = additive_reference(r, name, flags, cx.strings)?;
    let loop_seam_error_m = loop_seam(r, name, flags)?;
    let (root_motion, trajectory_keys, trajectory_rate_hz) =
        parse_root_motion(r, name, flags, duration_s, cx)?;
    let clip_events = event_range(r, name, cx.events)?;
    let events: Vec<Event> = clip_events.iter().map(|m| m.event).collect();
    ludus_anim_format::events::check_events(&events, duration_s, loop_mode.is_looping())
        .map_err(|e| invalid(format!("clip '{name}' events: {e}")))?;
    debug_assert!(EventTrack::new(&events, duration_s, loop_mode.is_looping()).is_some());
    let markers = clip_events
        .iter()
        .map(|m| Marker {
            event: m.event,
            name: m.name,
            kind: m.kind,
        })
        .collect();
    Ok(Clip {
        name,
        duration_s,
        sample_rate_hz,
        num_samples,
        loop_mode,
        cook: CookInfo {
            codec: codec_id,
            codec_version,
            blob_size: blob_size as usize,
            profile,
            source_hash,
            resample_error_m,
            max_error_m,
            loop_seam_error_m,
            additive_reference,
        },
        codec,
        index,
        root_motion,
        curves,
        joint_count,
        trajectory_keys,
        trajectory_rate_hz,
        events,
        markers,
        static_base: None,
    })
}

/// The clip's curves: in bounds, each with the clip's sample count.
fn curve_range(
    name: &str,
    first: usize,
    n: usize,
    num_samples: u32,
    curves: &[CurveChannel<'_>],
) -> Result<std::ops::Range<usize>, PackageError> {
    let range = first
        .checked_add(n)
        .filter(|&e| e <= curves.len())
        .map(|end| first..end)
        .ok_or_else(|| invalid(format!("clip '{name}' curve range out of bounds")))?;
    for ch in curves.get(range.clone()).unwrap_or(&[]) {
        if ch.num_samples() != num_samples as usize {
            return Err(invalid(format!(
                "clip '{name}' curve '{}' has {} samples, clip has {num_samples}",
                ch.name(),
                ch.num_samples()
            )));
        }
    }
    Ok(range)
}

/// The additive reference: named exactly when the additive flag is set.
fn additive_reference<'a>(
    r: Record<'_, 'a>,
    name: &str,
    flags: u32,
    strings: &Strings<'a>,
) -> Result<Option<&'a str>, PackageError> {
    let index = r.u32(f::ADDITIVE_REFERENCE)?;
    if flags & CLIP_FLAG_ADDITIVE != 0 {
        if index == NO_STRING {
            return Err(invalid(format!(
                "additive clip '{name}' names no reference"
            )));
        }
        Ok(Some(r.str(
            f::ADDITIVE_REFERENCE,
            strings,
            "clip additive reference",
        )?))
    } else {
        if index != NO_STRING {
            return Err(invalid(format!(
                "clip '{name}' names an additive reference but is not additive"
            )));
        }
        Ok(None)
    }
}

/// The loop seam figure: finite and non-negative with its flag, else zero.
fn loop_seam(r: Record<'_, '_>, name: &str, flags: u32) -> Result<Option<f32>, PackageError> {
    let seam = r.f32(f::LOOP_SEAM_ERROR_M)?;
    if flags & CLIP_FLAG_LOOP_SEAM != 0 {
        if !(seam.is_finite() && seam >= 0.0) {
            return Err(invalid(format!("clip '{name}' has loop seam error {seam}")));
        }
        Ok(Some(seam))
    } else {
        if seam.to_bits() != 0 {
            return Err(invalid(format!(
                "clip '{name}' stores a seam error without its flag"
            )));
        }
        Ok(None)
    }
}

/// The clip's slice of the EVNT records.
fn event_range<'e, 'a>(
    r: Record<'_, 'a>,
    name: &str,
    events: &'e [EventRecord<'a>],
) -> Result<&'e [EventRecord<'a>], PackageError> {
    let first = r.u32(f::EVENT_FIRST)? as usize;
    let n = r.u32(f::EVENT_COUNT)? as usize;
    first
        .checked_add(n)
        .and_then(|e| events.get(first..e))
        .ok_or_else(|| invalid(format!("clip '{name}' event range out of bounds")))
}

/// What [`parse_root_motion`] gives: the description, the decoded keys
/// and their rate.
type RootMotionFields<'a> = (Option<RootMotion<'a>>, Vec<RigidTransform>, f32);

/// The root-motion fields of a clip record. A clip without root motion
/// must leave every field zero (and the joint name "none").
fn parse_root_motion<'a>(
    r: Record<'_, 'a>,
    name: &str,
    flags: u32,
    duration_s: f32,
    cx: &ClipContext<'_, 'a>,
) -> Result<RootMotionFields<'a>, PackageError> {
    let policy_raw = r.u8(f::ROOT_MOTION_POLICY)?;
    let joint_index = r.u32(f::ROOT_JOINT)?;
    let v = |k: usize| r.f32(f::ROOT_OFFSET + k * 4);
    let offset = RigidTransform::new(
        Quat::from_xyzw(v(0)?, v(1)?, v(2)?, v(3)?),
        Vec3::new(v(4)?, v(5)?, v(6)?),
    );
    let key_count = r.u32(f::TRAJECTORY_KEY_COUNT)?;
    let rate = r.f32(f::TRAJECTORY_RATE_HZ)?;
    let drift = r.f32(f::DRIFT_100_LOOPS_M)?;
    let keys_off = r.u64(f::TRAJECTORY_OFFSET)?;
    if flags & CLIP_FLAG_ROOT_MOTION == 0 {
        let zero = policy_raw == ROOT_MOTION_NONE
            && joint_index == NO_STRING
            && key_count == 0
            && keys_off == 0
            && flags & CLIP_FLAG_DRIFT == 0
            && [rate, drift].iter().all(|v| v.to_bits() == 0)
            && r.bytes(f::ROOT_OFFSET, f::ROOT_OFFSET_BYTES)?
                .iter()
                .all(|&b| b == 0);
        if !zero {
            return Err(invalid(format!(
                "clip '{name}' has root-motion fields but no root-motion flag"
            )));
        }
        return Ok((None, Vec::new(), 0.0));
    }
    let policy = RootMotionPolicy::from_u8(policy_raw).ok_or_else(|| {
        invalid(format!(
            "clip '{name}' has unknown root-motion policy {policy_raw}"
        ))
    })?;
    if joint_index == NO_STRING {
        return Err(invalid(format!("clip '{name}' root motion names no joint")));
    }
    let joint = r.str(f::ROOT_JOINT, cx.strings, "root-motion joint")?;
    if cx.skeleton.find_by_name(joint).is_none() {
        return Err(invalid(format!(
            "clip '{name}' root-motion joint '{joint}' is not in the skeleton"
        )));
    }
    if !offset.is_finite() || (offset.rotation.length_squared() - 1.0).abs() > 2e-3 {
        return Err(invalid(format!(
            "clip '{name}' root-motion reference offset is not a finite rigid transform"
        )));
    }
    let drift_100_loops_m = drift_figure(name, flags, drift)?;
    let keys = trajectory_keys(name, duration_s, rate, key_count, keys_off, cx.data)?;
    Ok((
        Some(RootMotion {
            joint,
            policy,
            reference_offset: offset,
            drift_100_loops_m,
        }),
        keys,
        rate,
    ))
}

/// The drift figure: finite and non-negative with its flag, else zero.
fn drift_figure(name: &str, flags: u32, drift: f32) -> Result<Option<f32>, PackageError> {
    if flags & CLIP_FLAG_DRIFT != 0 {
        if !(drift.is_finite() && drift >= 0.0) {
            return Err(invalid(format!("clip '{name}' has drift {drift}")));
        }
        Ok(Some(drift))
    } else {
        if drift.to_bits() != 0 {
            return Err(invalid(format!(
                "clip '{name}' stores a drift figure without its flag"
            )));
        }
        Ok(None)
    }
}

/// The trajectory keys in DATA, decoded (package bytes need not be
/// aligned for `RigidTransform`) and validated by [`Trajectory::new`].
fn trajectory_keys(
    name: &str,
    duration_s: f32,
    rate: f32,
    key_count: u32,
    keys_off: u64,
    data: &Bytes<'_>,
) -> Result<Vec<RigidTransform>, PackageError> {
    let expected = trajectory_key_count(duration_s, rate).ok_or_else(|| {
        invalid(format!(
            "clip '{name}' trajectory rate {rate} Hz is not usable"
        ))
    })?;
    if key_count as usize != expected {
        return Err(invalid(format!(
            "clip '{name}' trajectory has {key_count} keys, expected {expected}"
        )));
    }
    if !keys_off.is_multiple_of(4) {
        return Err(invalid(format!("clip '{name}' trajectory keys misaligned")));
    }
    let bytes = data.range(keys_off, key_count as u64 * TRAJECTORY_KEY_SIZE as u64)?;
    let mut keys = Vec::with_capacity(key_count as usize);
    for k in bytes.chunks_exact(TRAJECTORY_KEY_SIZE) {
        let v = |i: usize| {
            let mut a = [0u8; 4];
            a.copy_from_slice(&k[i * 4..i * 4 + 4]);
            f32::from_le_bytes(a)
        };
        keys.push(RigidTransform::new(
            Quat::from_xyzw(v(0), v(1), v(2), v(3)),
            Vec3::new(v(4), v(5), v(6)),
        ));
    }
    Trajectory::new(&keys, rate, duration_s)
        .map_err(|e| invalid(format!("clip '{name}' trajectory: {e}")))?;
    Ok(keys)
}
