//! The EVNT records, a clip record's root-motion fields and the SKEL
//! section.

use super::bytes::{Bytes, Strings};
use super::clip::{MarkerKind, RootMotion, RootMotionPolicy};
use super::format::*;
use super::{invalid, PackageError};
use crate::events::Event;
#[cfg(doc)]
use crate::events::EventTrack;
use crate::hash::fnv1a64;
use crate::math::{Quat, Transform, Vec3};
use crate::root_motion::{trajectory_key_count, RigidTransform, Trajectory};
use crate::skeleton::{JointId, Skeleton, SkeletonError, SkeletonIdentity};

/// One EVNT record, validated on its own (the per-clip track checks run
/// through [`EventTrack::new`] once the owning clip is known).
pub(super) struct EventRecord<'a> {
    pub(super) event: Event,
    pub(super) name: &'a str,
    pub(super) kind: MarkerKind,
}

pub(super) fn parse_events<'a>(
    sec: Bytes<'a>,
    strings: &Strings<'a>,
) -> Result<Vec<EventRecord<'a>>, PackageError> {
    let count = sec.u32(0)? as u64;
    if count > sec.b.len() as u64 / EVENT_RECORD_SIZE as u64 {
        return Err(invalid("event count exceeds section size"));
    }
    let mut out = Vec::with_capacity(count as usize);
    for i in 0..count {
        let at = 16 + i * EVENT_RECORD_SIZE as u64;
        let time_s = sec.f32(at)?;
        let flags = sec.u32(at + 4)?;
        let id = sec.u64(at + 8)?;
        let name_index = sec.u32(at + 16)?;
        if flags & !EVENT_FLAGS_KNOWN != 0 || sec.u32(at + 20)? != 0 {
            return Err(invalid(format!(
                "event {i} has unknown flags or reserved bits"
            )));
        }
        if name_index == NO_STRING {
            return Err(invalid(format!("event {i} has no name")));
        }
        strings.check(name_index, "event name")?;
        let name = strings.get(name_index);
        // The id is defined as the name's hash: a mismatch is corruption.
        if fnv1a64(name.as_bytes()) != id {
            return Err(invalid(format!(
                "event {i} id {id:016x} is not the FNV-1a 64 of its name '{name}'"
            )));
        }
        out.push(EventRecord {
            event: Event {
                time_s,
                id,
                reversible: flags & EVENT_FLAG_REVERSIBLE != 0,
            },
            name,
            kind: if flags & EVENT_FLAG_SYNC_MARKER != 0 {
                MarkerKind::SyncMarker
            } else {
                MarkerKind::Event
            },
        });
    }
    Ok(out)
}

/// The root-motion fields of clip record `at`: (description, decoded keys,
/// key rate). A clip without root motion must leave every field zero (and
/// the joint name "none").
#[allow(clippy::too_many_arguments)]
pub(super) fn parse_root_motion<'a>(
    c: &Bytes<'a>,
    at: u64,
    flags: u32,
    policy_raw: u8,
    name: &str,
    duration_s: f32,
    data: &Bytes<'a>,
    strings: &Strings<'a>,
    skeleton: &Skeleton,
) -> Result<(Option<RootMotion<'a>>, Vec<RigidTransform>, f32), PackageError> {
    let joint_index = c.u32(at + 100)?;
    let f = |k: u64| c.f32(at + 104 + k * 4);
    let offset = RigidTransform::new(
        Quat::from_xyzw(f(0)?, f(1)?, f(2)?, f(3)?),
        Vec3::new(f(4)?, f(5)?, f(6)?),
    );
    let key_count = c.u32(at + 132)?;
    let rate = c.f32(at + 136)?;
    let drift = c.f32(at + 140)?;
    let keys_off = c.u64(at + 144)?;
    if flags & CLIP_FLAG_ROOT_MOTION == 0 {
        let zero = policy_raw == ROOT_MOTION_NONE
            && joint_index == NO_STRING
            && key_count == 0
            && keys_off == 0
            && flags & CLIP_FLAG_DRIFT == 0
            && [rate, drift].iter().all(|v| v.to_bits() == 0)
            && c.range(at + 104, 28)?.iter().all(|&b| b == 0);
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
    strings.check(joint_index, "root-motion joint")?;
    let joint = strings.get(joint_index);
    if skeleton.find_by_name(joint).is_none() {
        return Err(invalid(format!(
            "clip '{name}' root-motion joint '{joint}' is not in the skeleton"
        )));
    }
    if !offset.is_finite() || (offset.rotation.length_squared() - 1.0).abs() > 2e-3 {
        return Err(invalid(format!(
            "clip '{name}' root-motion reference offset is not a finite rigid transform"
        )));
    }
    let drift_100_loops_m = if flags & CLIP_FLAG_DRIFT != 0 {
        if !(drift.is_finite() && drift >= 0.0) {
            return Err(invalid(format!("clip '{name}' has drift {drift}")));
        }
        Some(drift)
    } else {
        if drift.to_bits() != 0 {
            return Err(invalid(format!(
                "clip '{name}' stores a drift figure without its flag"
            )));
        }
        None
    };
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
    if keys_off % 4 != 0 {
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

pub(super) fn parse_skeleton(
    sec: Bytes<'_>,
    strings: &Strings<'_>,
) -> Result<Skeleton, PackageError> {
    let n = sec.u32(0)? as u64;
    if n == 0 {
        return Err(PackageError::Skeleton(SkeletonError::Empty));
    }
    if n > sec.b.len() as u64 / JOINT_RECORD_SIZE as u64 {
        return Err(invalid("joint count exceeds section size"));
    }
    let mut stored_identity = [0u8; 16];
    stored_identity.copy_from_slice(sec.range(8, 16)?);
    let mut parents = Vec::with_capacity(n as usize);
    let mut ends = Vec::with_capacity(n as usize);
    let mut ids = Vec::with_capacity(n as usize);
    let mut rest = Vec::with_capacity(n as usize);
    let mut names = Vec::with_capacity(n as usize);
    for j in 0..n {
        let at = SKELETON_HEADER_SIZE as u64 + j * JOINT_RECORD_SIZE as u64;
        parents.push(sec.u32(at)?);
        ends.push(sec.u32(at + 4)?);
        ids.push(JointId(sec.u64(at + 8)?));
        let f = |k: u64| sec.f32(at + 16 + k * 4);
        rest.push(Transform {
            rotation: Quat::from_xyzw(f(0)?, f(1)?, f(2)?, f(3)?),
            translation: Vec3::new(f(4)?, f(5)?, f(6)?),
            scale: Vec3::new(f(7)?, f(8)?, f(9)?),
        });
        let name = sec.u32(at + 56)?;
        strings.check(name, "joint name")?;
        names.push(strings.get(name).to_string());
    }
    let skeleton = Skeleton::new(parents, ids, rest, names)?;
    if skeleton.subtree_ends() != ends.as_slice() {
        return Err(invalid("stored subtree ends disagree with the hierarchy"));
    }
    if skeleton.identity() != SkeletonIdentity(stored_identity) {
        return Err(invalid(
            "stored skeleton identity disagrees with its contents",
        ));
    }
    Ok(skeleton)
}
