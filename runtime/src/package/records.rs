//! The EVNT records, a clip record's root-motion fields and the SKEL
//! section.

use super::bytes::{Bytes, Strings};
use super::format::*;
use super::{invalid, PackageError};
use crate::hash::fnv1a64;
use crate::math::{Quat, Transform, Vec3};
use crate::skeleton::{JointId, Skeleton, SkeletonError, SkeletonIdentity};
use ludus_anim_format::events::{Event, MarkerKind};

/// One EVNT record, validated on its own (the per-clip track checks run
/// once the owning clip is known).
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
        let kind = MarkerKind::from_flags(flags);
        let Some(kind) = kind.filter(|_| flags & !EVENT_FLAGS_KNOWN == 0) else {
            return Err(invalid(format!(
                "event {i} has unknown or conflicting flags {flags:#x}"
            )));
        };
        if sec.u32(at + 20)? != 0 {
            return Err(invalid(format!("event {i} has reserved bits set")));
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
            kind,
        });
    }
    Ok(out)
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
