//! The SYNC section (`ludus_anim_format::sync`): a header, one record per
//! group, then the marker-name list and the member-clip list.

use super::{put_f32, put_u32, StringTable};
use crate::sync_groups::GroupSummary;
use ludus_anim_format::sync::SYNC_GROUP_RECORD_SIZE;

pub(super) fn sync_section(groups: &[GroupSummary], strings: &mut StringTable) -> Vec<u8> {
    let markers_total: usize = groups.iter().map(|g| g.markers.len()).sum();
    let clips_total: usize = groups.iter().map(|g| g.clips.len()).sum();
    let mut out = Vec::new();
    put_u32(&mut out, groups.len() as u32);
    put_u32(&mut out, markers_total as u32);
    put_u32(&mut out, clips_total as u32);
    put_u32(&mut out, 0);
    let (mut first_marker, mut first_clip) = (0u32, 0u32);
    for g in groups {
        let start = out.len();
        put_u32(&mut out, strings.add(&g.name));
        put_u32(&mut out, g.markers.len() as u32);
        put_u32(&mut out, first_marker);
        put_u32(&mut out, g.clips.len() as u32);
        put_u32(&mut out, first_clip);
        put_f32(&mut out, g.rate_range.0);
        put_f32(&mut out, g.rate_range.1);
        put_u32(&mut out, 0);
        debug_assert_eq!(out.len() - start, SYNC_GROUP_RECORD_SIZE);
        first_marker += g.markers.len() as u32;
        first_clip += g.clips.len() as u32;
    }
    for g in groups {
        for m in &g.markers {
            put_u32(&mut out, strings.add(m));
        }
    }
    for g in groups {
        for &c in &g.clips {
            put_u32(&mut out, c);
        }
    }
    out
}
