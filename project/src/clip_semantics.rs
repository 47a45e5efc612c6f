//! Sync groups, event channels and contact windows (#44): the manifest's
//! `[[sync_group]]` and `[[event_channel]]` tables, a clip's `contacts`,
//! and what of them reaches one clip's prepare settings.
//!
//! Choices where the design is silent (`docs/sync-groups-and-events.md`):
//! a group names clips by clip name (in every asset that has one) and its
//! sync markers in cycle order; `max_rate` (default 2) bounds the playback
//! rate a follower may need. An event channel classifies authored events
//! (`kind = "event"` markers) by exact name or by prefix (an exact name
//! wins, then the longest prefix); unmatched events are visual.

use crate::keys::{KeyInput, KeyWriter};
use serde::{Deserialize, Serialize};

/// Default bound of a group's rate range: a follower plays between 0.5x
/// and 2x.
pub const DEFAULT_MAX_RATE: f32 = 2.0;

/// `[[sync_group]]`: clips synchronized by named contact markers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SyncGroupEntry {
    pub name: String,
    /// Member clips by name (every asset's clip of that name joins).
    pub clips: Vec<String>,
    /// The group's sync markers, in cycle order.
    pub markers: Vec<String>,
    /// The largest playback rate (and its inverse the smallest) a member
    /// may need to follow another; above it the cook warns.
    pub max_rate: Option<f32>,
}

/// What an event channel is for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ChannelKind {
    /// Authoritative: cooked into the control timeline and validated.
    Control,
    /// Advisory presentation (sound, VFX).
    Visual,
}

/// `[[event_channel]]`: events of a name, or of a name prefix, and their
/// channel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EventChannel {
    pub name: Option<String>,
    pub prefix: Option<String>,
    pub kind: ChannelKind,
}

/// A contact window (a foot plant) of a clip: cooked as a contact-start
/// marker `<name>.start` and a contact-end marker `<name>.end`. On a
/// looping clip `start_s > end_s` is a window across the loop seam.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ContactWindow {
    pub name: String,
    pub start_s: f32,
    pub end_s: f32,
}

/// A clip's membership of a sync group, as its prepare stage checks it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SyncMembership {
    pub group: String,
    pub markers: Vec<String>,
    pub max_rate: f32,
}

impl SyncGroupEntry {
    /// What is wrong with the entry, if anything.
    pub fn invalid(&self) -> Option<String> {
        let g = &self.name;
        if g.is_empty() {
            return Some("a sync group needs a name".into());
        }
        if self.clips.is_empty() || self.markers.is_empty() {
            return Some(format!("sync group '{g}' needs clips and markers"));
        }
        if let Some(m) = repeated(&self.markers) {
            return Some(format!("sync group '{g}' lists marker '{m}' twice"));
        }
        if let Some(c) = repeated(&self.clips) {
            return Some(format!("sync group '{g}' lists clip '{c}' twice"));
        }
        match self.max_rate {
            Some(r) if !(r.is_finite() && r >= 1.0) => Some(format!(
                "sync group '{g}': max_rate {r} must be a number of at least 1"
            )),
            _ => None,
        }
    }

    /// The membership of a member clip.
    pub fn membership(&self) -> SyncMembership {
        SyncMembership {
            group: self.name.clone(),
            markers: self.markers.clone(),
            max_rate: self.max_rate.unwrap_or(DEFAULT_MAX_RATE),
        }
    }
}

impl EventChannel {
    /// What is wrong with the entry, if anything.
    pub fn invalid(&self) -> Option<String> {
        match (&self.name, &self.prefix) {
            (Some(n), None) if !n.is_empty() => None,
            (None, Some(p)) if !p.is_empty() => None,
            _ => {
                Some("an event channel needs exactly one of a non-empty `name` or `prefix`".into())
            }
        }
    }
}

/// The channel of an event named `event`: an exact name wins, then the
/// longest matching prefix; `None` if no channel matches.
pub fn channel_of(channels: &[EventChannel], event: &str) -> Option<ChannelKind> {
    if let Some(c) = channels.iter().find(|c| c.name.as_deref() == Some(event)) {
        return Some(c.kind);
    }
    channels
        .iter()
        .filter_map(|c| Some((c.prefix.as_deref()?, c.kind)))
        .filter(|(p, _)| event.starts_with(p))
        .max_by_key(|(p, _)| p.len())
        .map(|(_, k)| k)
}

/// The memberships of the clip named `clip`, in manifest order.
pub fn memberships(groups: &[SyncGroupEntry], clip: &str) -> Vec<SyncMembership> {
    groups
        .iter()
        .filter(|g| g.clips.iter().any(|c| c == clip))
        .map(SyncGroupEntry::membership)
        .collect()
}

fn repeated(v: &[String]) -> Option<&str> {
    v.iter()
        .enumerate()
        .find(|(i, x)| v[..*i].contains(x))
        .map(|(_, x)| x.as_str())
}

impl KeyInput for SyncGroupEntry {
    fn feed(&self, k: &mut KeyWriter) {
        let SyncGroupEntry {
            name,
            clips,
            markers,
            max_rate,
        } = self;
        k.put(name).put(clips).put(markers).put(max_rate);
    }
}

impl KeyInput for EventChannel {
    fn feed(&self, k: &mut KeyWriter) {
        let EventChannel { name, prefix, kind } = self;
        k.put(name).put(prefix).tag(match kind {
            ChannelKind::Control => "control",
            ChannelKind::Visual => "visual",
        });
    }
}

impl KeyInput for ContactWindow {
    fn feed(&self, k: &mut KeyWriter) {
        let ContactWindow {
            name,
            start_s,
            end_s,
        } = self;
        k.put(name).put(start_s).put(end_s);
    }
}

impl KeyInput for SyncMembership {
    fn feed(&self, k: &mut KeyWriter) {
        let SyncMembership {
            group,
            markers,
            max_rate,
        } = self;
        k.put(group).put(markers).put(max_rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ch(name: Option<&str>, prefix: Option<&str>, kind: ChannelKind) -> EventChannel {
        EventChannel {
            name: name.map(Into::into),
            prefix: prefix.map(Into::into),
            kind,
        }
    }

    #[test]
    fn exact_name_wins_then_longest_prefix() {
        let chans = [
            ch(None, Some("fx_"), ChannelKind::Visual),
            ch(None, Some("fx_hit"), ChannelKind::Control),
            ch(Some("fx_hit_spark"), None, ChannelKind::Visual),
        ];
        assert_eq!(channel_of(&chans, "fx_dust"), Some(ChannelKind::Visual));
        assert_eq!(channel_of(&chans, "fx_hit_1"), Some(ChannelKind::Control));
        assert_eq!(
            channel_of(&chans, "fx_hit_spark"),
            Some(ChannelKind::Visual)
        );
        assert_eq!(channel_of(&chans, "step"), None);
    }

    #[test]
    fn invalid_entries_are_named() {
        assert!(ch(Some("a"), Some("b"), ChannelKind::Control)
            .invalid()
            .is_some());
        assert!(ch(None, None, ChannelKind::Control).invalid().is_some());
        let g = SyncGroupEntry {
            name: "loco".into(),
            clips: vec!["walk".into()],
            markers: vec!["l".into(), "l".into()],
            max_rate: None,
        };
        assert!(g.invalid().unwrap().contains("marker 'l' twice"));
        let g = SyncGroupEntry {
            max_rate: Some(0.5),
            markers: vec!["l".into()],
            ..g
        };
        assert!(g.invalid().unwrap().contains("max_rate"));
    }

    #[test]
    fn the_manifest_tables_parse_and_reach_every_job() {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../fuzz/seeds/manifest/example.toml"),
        )
        .unwrap();
        let text = text.replace(
            "[asset.clips.walk_start]",
            "contacts = [ { name = \"plant\", start_s = 0.1, end_s = 0.4 } ]\n\n[asset.clips.walk_start]",
        );
        let m = crate::manifest::Manifest::parse(&text, "x").unwrap();
        assert_eq!(m.sync_groups[0].max_rate, Some(2.0));
        assert_eq!(m.event_channels[0].kind, ChannelKind::Control);
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let jobs = m.jobs(&root).unwrap();
        assert_eq!(jobs[0].settings.sync_groups, m.sync_groups);
        assert_eq!(jobs[0].settings.event_channels, m.event_channels);
        assert_eq!(jobs[0].settings.clips["idle"].contacts[0].end_s, 0.4);
        assert_eq!(
            memberships(&m.sync_groups, "walk_start")[0].markers,
            ["foot_l"]
        );
        let e = crate::manifest::Manifest::parse(
            &text.replace("max_rate = 2.0", "max_rate = 0.5"),
            "x",
        )
        .unwrap_err()
        .to_string();
        assert!(
            e.contains("max_rate 0.5 must be a number of at least 1"),
            "{e}"
        );
    }
}
