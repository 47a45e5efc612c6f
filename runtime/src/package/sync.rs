//! The SYNC section (format version 3): sync groups over the package's
//! clips, checked against the clips' markers at load.

use super::bytes::{Bytes, Strings};
use super::clip::Clip;
use super::{invalid, PackageError};
use crate::hash::fnv1a64;
use ludus_anim_format::events::MarkerKind;
use ludus_anim_format::package::NO_STRING;
use ludus_anim_format::sync::{SyncGroup, SYNC_GROUP_RECORD_SIZE, SYNC_HEADER_SIZE};

/// Parse and validate every group: names are strings; marker and clip
/// ranges lie inside the section's lists; each group has at least one
/// marker and one clip, no repeated marker or clip; every member clip
/// carries every group marker as a sync marker; the rate range is finite
/// with `0 < min <= 1 <= max`.
pub(super) fn parse_sync<'a>(
    sec: Bytes<'a>,
    strings: &Strings<'a>,
    clips: &[Clip<'a>],
) -> Result<Vec<SyncGroup<'a>>, PackageError> {
    let groups = sec.u32(0)? as u64;
    let markers_total = sec.u32(4)? as u64;
    let clips_total = sec.u32(8)? as u64;
    if sec.u32(12)? != 0 {
        return Err(invalid("SYNC reserved field is not zero"));
    }
    let records_end = SYNC_HEADER_SIZE as u64 + groups * SYNC_GROUP_RECORD_SIZE as u64;
    let names_end = records_end + markers_total * 4;
    sec.range(0, names_end + clips_total * 4)?;
    let mut out = Vec::with_capacity(groups as usize);
    for g in 0..groups {
        let at = SYNC_HEADER_SIZE as u64 + g * SYNC_GROUP_RECORD_SIZE as u64;
        let name = strings.read(&sec, at, "sync group name")?;
        let markers = list(&sec, at + 4, markers_total, records_end, "marker")?
            .into_iter()
            .map(|i| {
                if i == NO_STRING {
                    return Err(invalid(format!(
                        "sync group '{name}' has an unnamed marker"
                    )));
                }
                strings.check(i, "sync marker")?;
                Ok(strings.get(i))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let members = list(&sec, at + 12, clips_total, names_end, "clip")?;
        let rate_range = (sec.f32(at + 20)?, sec.f32(at + 24)?);
        if sec.u32(at + 28)? != 0 {
            return Err(invalid(format!(
                "sync group '{name}' reserved field is not zero"
            )));
        }
        let group = SyncGroup {
            name,
            markers,
            clips: members,
            rate_range,
        };
        check_group(&group, clips)?;
        out.push(group);
    }
    Ok(out)
}

/// `count` u32 entries from `first` of the list at `list_start` holding
/// `total` entries (`count` and `first` read at `at` and `at + 4`).
fn list(
    sec: &Bytes<'_>,
    at: u64,
    total: u64,
    list_start: u64,
    what: &str,
) -> Result<Vec<u32>, PackageError> {
    let count = sec.u32(at)? as u64;
    let first = sec.u32(at + 4)? as u64;
    if count == 0 || first + count > total {
        return Err(invalid(format!(
            "sync group {what} range {first}+{count} is empty or outside the list of {total}"
        )));
    }
    (first..first + count)
        .map(|i| sec.u32(list_start + i * 4))
        .collect()
}

fn check_group(g: &SyncGroup<'_>, clips: &[Clip<'_>]) -> Result<(), PackageError> {
    let name = g.name;
    let (lo, hi) = g.rate_range;
    if !(lo.is_finite() && hi.is_finite() && lo > 0.0 && lo <= 1.0 && hi >= 1.0) {
        return Err(invalid(format!(
            "sync group '{name}' has an invalid rate range [{lo}, {hi}]"
        )));
    }
    if has_repeat(&g.markers) || has_repeat(&g.clips) {
        return Err(invalid(format!(
            "sync group '{name}' repeats a marker or a clip"
        )));
    }
    for &c in &g.clips {
        let clip = clips
            .get(c as usize)
            .ok_or_else(|| invalid(format!("sync group '{name}' names clip {c}, out of range")))?;
        for m in &g.markers {
            let id = fnv1a64(m.as_bytes());
            let found = clip
                .markers()
                .iter()
                .any(|x| x.event.id == id && x.kind == MarkerKind::SyncMarker);
            if !found {
                return Err(invalid(format!(
                    "sync group '{name}': clip '{}' has no sync marker '{m}'",
                    clip.name()
                )));
            }
        }
    }
    Ok(())
}

fn has_repeat<T: PartialEq>(v: &[T]) -> bool {
    v.iter().enumerate().any(|(i, x)| v[..i].contains(x))
}
