//! `inspect`'s sync-group section: each group of a package with its
//! markers, the rate range, and each member clip's marker times.

use ludus_anim_format::events::MarkerKind;
use ludus_anim_format::sync::SyncGroup;
use ludus_anim_runtime::package::{Clip, Package};
use serde_json::{json, Value};
use std::fmt::Write;

/// The groups as text (nothing when the package has none).
pub fn describe(s: &mut String, p: &Package<'_>) {
    let groups = p.sync_groups();
    if groups.is_empty() {
        return;
    }
    let _ = writeln!(s, "sync groups:    {}", groups.len());
    for g in groups {
        let _ = writeln!(
            s,
            "  {}: markers {}, rate range {:.3}x-{:.3}x",
            g.name,
            g.markers.join(" → "),
            g.rate_range.0,
            g.rate_range.1
        );
        for c in members(p, g) {
            let _ = writeln!(s, "    {}: {}", c.name(), times(c, g).join(", "));
        }
    }
}

/// The groups as JSON.
pub fn describe_json(p: &Package<'_>) -> Value {
    p.sync_groups()
        .iter()
        .map(|g| {
            json!({
                "name": g.name,
                "markers": g.markers,
                "rate_range": [g.rate_range.0, g.rate_range.1],
                "clips": members(p, g).map(|c| c.name()).collect::<Vec<_>>(),
            })
        })
        .collect()
}

fn members<'p, 'a>(p: &'p Package<'a>, g: &'p SyncGroup<'a>) -> impl Iterator<Item = &'p Clip<'a>> {
    g.clips.iter().filter_map(|&i| p.clips().get(i as usize))
}

/// "name@time" of the clip's group markers, in time order.
fn times(c: &Clip<'_>, g: &SyncGroup<'_>) -> Vec<String> {
    c.markers()
        .iter()
        .filter(|m| m.kind == MarkerKind::SyncMarker && g.markers.contains(&m.name))
        .map(|m| format!("{}@{:.4}s", m.name, m.event.time_s))
        .collect()
}
