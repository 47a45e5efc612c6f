//! Sync groups over an asset's cooked clips: who is a member, and the
//! playback-rate range a member needs to follow another marker interval by
//! marker interval. The package stores the result (`SYNC`); a range past
//! the group's `max_rate` is a located warning.

use crate::stages::prepare::Prepared;
use ludus_anim_model::Diagnostic;

/// One group as the package stores it.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupSummary {
    pub name: String,
    pub markers: Vec<String>,
    /// Member clips (indices into the package's clips).
    pub clips: Vec<u32>,
    pub max_rate: f32,
    /// `(1/r, r)`, `r` the largest ratio of one interval's lengths.
    pub rate_range: (f32, f32),
    /// Where `r` comes from: interval `k`, the slowest and fastest member.
    pub widest: Option<Widest>,
}

/// The interval whose lengths differ most across the members.
#[derive(Clone, Debug, PartialEq)]
pub struct Widest {
    pub interval: usize,
    pub long: (u32, f32),
    pub short: (u32, f32),
}

/// Every group any clip is a member of, in order of first appearance.
pub fn summarize(prepared: &[&Prepared]) -> Vec<GroupSummary> {
    let mut groups: Vec<GroupSummary> = Vec::new();
    for (ci, p) in prepared.iter().enumerate() {
        for s in &p.sync {
            let at = match groups.iter().position(|g| g.name == s.group) {
                Some(i) => i,
                None => {
                    groups.push(GroupSummary {
                        name: s.group.clone(),
                        markers: s.markers.clone(),
                        clips: Vec::new(),
                        max_rate: s.max_rate,
                        rate_range: (1.0, 1.0),
                        widest: None,
                    });
                    groups.len() - 1
                }
            };
            groups[at].clips.push(ci as u32);
        }
    }
    for g in &mut groups {
        g.widest = widest(g, prepared);
        if let Some(w) = &g.widest {
            let r = w.long.1 / w.short.1;
            g.rate_range = (1.0 / r, r);
        }
    }
    groups
}

/// The interval with the largest ratio of member lengths.
fn widest(g: &GroupSummary, prepared: &[&Prepared]) -> Option<Widest> {
    let members: Vec<(u32, &[Option<f32>])> = g
        .clips
        .iter()
        .filter_map(|&c| {
            let s = prepared
                .get(c as usize)?
                .sync
                .iter()
                .find(|s| s.group == g.name)?;
            Some((c, s.intervals_s.as_slice()))
        })
        .collect();
    widest_of(&members, g.markers.len())
}

/// Over members `(label, intervals)`: the interval whose lengths differ
/// most, with its longest and shortest member.
fn widest_of(members: &[(u32, &[Option<f32>])], intervals: usize) -> Option<Widest> {
    let lengths = |k: usize| {
        members.iter().filter_map(move |(c, iv)| {
            let len = (*iv.get(k)?)?;
            (len > 0.0).then_some((*c, len))
        })
    };
    (0..intervals)
        .filter_map(|k| {
            let long = lengths(k).max_by(|a, b| a.1.total_cmp(&b.1))?;
            let short = lengths(k).min_by(|a, b| a.1.total_cmp(&b.1))?;
            Some(Widest {
                interval: k,
                long,
                short,
            })
        })
        .max_by(|a, b| (a.long.1 / a.short.1).total_cmp(&(b.long.1 / b.short.1)))
}

/// The cook's sync groups measured again over merged parts (shards or
/// asset actions): each part reports the groups its own clips belong to
/// (`parts`, markers and `max_rate` resolved); the rate range is measured
/// over every part's members, as an unsharded cook measures it.
pub fn remeasure_merged<'a>(
    parts: impl Iterator<Item = &'a ludus_anim_report::sync::SyncGroupReport>,
    report: &mut crate::report::Report,
) -> Vec<String> {
    let mut defs: Vec<crate::clip_semantics::SyncGroupEntry> = Vec::new();
    for g in parts {
        if !defs.iter().any(|d| d.name == g.name) {
            defs.push(crate::clip_semantics::SyncGroupEntry {
                name: g.name.clone(),
                clips: Vec::new(),
                markers: g.markers.clone(),
                max_rate: Some(g.max_rate),
            });
        }
    }
    defs.sort_by(|a, b| a.name.cmp(&b.name));
    let (groups, notices) = cook_groups(&defs, report);
    report.sync_groups = groups;
    notices
}

/// Each manifest group over every clip of the cook's report (members in
/// any asset), by name, with a notice for a range past its `max_rate`.
pub fn cook_groups(
    groups: &[crate::clip_semantics::SyncGroupEntry],
    report: &crate::report::Report,
) -> (Vec<ludus_anim_report::sync::SyncGroupReport>, Vec<String>) {
    let (mut out, mut notices) = (Vec::new(), Vec::new());
    for g in groups {
        let mut labels = Vec::new();
        let mut members = Vec::new();
        for a in &report.assets {
            for c in &a.clips {
                if let Some(s) = c.sync.iter().find(|s| s.group == g.name) {
                    members.push((labels.len() as u32, s.intervals_s.as_slice()));
                    labels.push(format!("{}:{}", a.source, c.name));
                }
            }
        }
        if labels.is_empty() {
            continue;
        }
        let max_rate = g
            .max_rate
            .unwrap_or(crate::clip_semantics::DEFAULT_MAX_RATE);
        let w = widest_of(&members, g.markers.len());
        let r = w.as_ref().map_or(1.0, |w| w.long.1 / w.short.1);
        // One asset's members are warned about with its package.
        let assets = report
            .assets
            .iter()
            .filter(|a| {
                a.clips
                    .iter()
                    .any(|c| c.sync.iter().any(|s| s.group == g.name))
            })
            .count();
        if let Some(w) = w.as_ref().filter(|_| r > max_rate && assets > 1) {
            let k = w.interval;
            notices.push(format!(
                "sync group '{}': interval {} → {} lasts {:.4} s in {} and {:.4} s in {}: a follower plays at {:.3}x-{:.3}x, beyond the group's max_rate {max_rate}",
                g.name,
                g.markers[k],
                g.markers[(k + 1) % g.markers.len()],
                w.long.1,
                labels[w.long.0 as usize],
                w.short.1,
                labels[w.short.0 as usize],
                1.0 / r,
                r
            ));
        }
        out.push(ludus_anim_report::sync::SyncGroupReport {
            name: g.name.clone(),
            markers: g.markers.clone(),
            clips: labels,
            rate_min: 1.0 / r,
            rate_max: r,
            max_rate,
        });
    }
    // By name, so a merged cook (groups gathered from shards) lists them
    // as the unsharded cook does.
    out.sort_by(|a, b| a.name.cmp(&b.name));
    (out, notices)
}

/// A warning for each group whose rate range exceeds its `max_rate`.
pub fn rate_warnings(groups: &[GroupSummary], clip_names: &[&str], file: &str) -> Vec<Diagnostic> {
    let name = |c: u32| clip_names.get(c as usize).copied().unwrap_or("?");
    groups
        .iter()
        .filter(|g| g.rate_range.1 > g.max_rate)
        .filter_map(|g| {
            let w = g.widest.as_ref()?;
            let k = w.interval;
            let next = &g.markers[(k + 1) % g.markers.len()];
            Some(
                Diagnostic::warning(
                    "sync_rate_range",
                    format!(
                        "sync group '{}': interval {} → {next} lasts {:.4} s in clip '{}' and {:.4} s in clip '{}': a follower plays at {:.3}x-{:.3}x, beyond the group's max_rate {}",
                        g.name, g.markers[k], w.long.1, name(w.long.0), w.short.1, name(w.short.0),
                        g.rate_range.0, g.rate_range.1, g.max_rate
                    ),
                )
                .file(file)
                .clip(name(w.long.0)),
            )
        })
        .collect()
}

/// One notice per group clip that no cooked asset has (a typo, or a clip
/// skipped), with the closest clip name. Only meaningful for a whole cook:
/// a shard sees some of the assets.
pub fn unknown_members(
    groups: &[crate::clip_semantics::SyncGroupEntry],
    clip_names: &[&str],
    failed: &[&str],
) -> Vec<String> {
    // A failed asset reports no clips: the clip may be one of its own.
    let failed = match failed {
        [] => String::new(),
        [one] => format!(" (asset '{one}' failed: it may hold it)"),
        [first, rest @ ..] => format!(
            " ({} assets failed, '{first}' among them: one may hold it)",
            rest.len() + 1
        ),
    };
    let mut out = Vec::new();
    for g in groups {
        for c in g.clips.iter().filter(|c| !clip_names.contains(&c.as_str())) {
            let hint = ludus_anim_model::suggest::closest(c, clip_names.iter().copied())
                .map(|n| format!("; did you mean '{n}'?"))
                .unwrap_or_default();
            out.push(format!(
                "sync group '{}' names clip '{c}', which no asset of this cook produced{failed}{hint}",
                g.name
            ));
        }
    }
    out
}
