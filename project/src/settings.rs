//! Clip semantics a person chooses — loop policy, root motion, additive
//! reference, markers — defined once: the project manifest reads them from
//! TOML in these shapes, the prepare stage takes them as they are, and the
//! stage keys hash them field by field. (The package layer has its own
//! stored forms in the runtime: `LoopMode`, `RootMotionPolicy`,
//! `MarkerKind`.)

use crate::clip_semantics::{ContactWindow, SyncMembership};
use crate::keys::{KeyInput, KeyWriter};
use ludus_anim_format::events::MarkerKind;
use ludus_anim_format::package::RootMotionPolicy;
use serde::{Deserialize, Serialize};

/// Whether a clip loops.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LoopPolicy {
    /// Loop when the first and last poses match within every joint's
    /// threshold (component space, virtual vertices): authored loops
    /// repeat their first pose at the end.
    #[default]
    Auto,
    Once,
    Loop,
}

/// Which joint carries locomotion and how much of it becomes the
/// trajectory. Hierarchy does not select it (seed: the moving root can be
/// a child of the synthetic root).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RootMotionSettings {
    pub joint: String,
    #[serde(default = "planar", with = "root_policy_name")]
    pub policy: RootMotionPolicy,
}

fn planar() -> RootMotionPolicy {
    RootMotionPolicy::Planar
}

/// What additive deltas are made against.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, tag = "reference", rename_all = "lowercase")]
pub enum AdditiveReference {
    /// The skeleton's rest pose.
    #[serde(rename = "rest")]
    RestPose,
    /// One frame: of this clip (`clip: None`, after root removal) or of
    /// another clip, sampled with the runtime's interpolation.
    Frame { clip: Option<String>, time_s: f32 },
    /// The same time of a reference clip (framewise, baked; times past the
    /// reference's duration clamp to it).
    Clip {
        #[serde(rename = "clip")]
        name: String,
    },
}

impl AdditiveReference {
    /// The other clip this reference reads, if any.
    pub fn clip(&self) -> Option<&str> {
        match self {
            AdditiveReference::Clip { name } => Some(name),
            AdditiveReference::Frame { clip: Some(c), .. } => Some(c),
            _ => None,
        }
    }
}

/// One authored marker.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MarkerSpec {
    pub name: String,
    pub time_s: f32,
    #[serde(with = "marker_kind_name")]
    pub kind: MarkerKind,
    /// Whether reverse playback delivers it.
    #[serde(default)]
    pub reversible: bool,
}

/// `"planar"` / `"full"`, as the manifest writes them.
mod root_policy_name {
    use ludus_anim_format::package::RootMotionPolicy;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(p: &RootMotionPolicy, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::root_policy_str(*p))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<RootMotionPolicy, D::Error> {
        match String::deserialize(d)?.as_str() {
            "planar" => Ok(RootMotionPolicy::Planar),
            "full" => Ok(RootMotionPolicy::Full),
            other => Err(serde::de::Error::unknown_variant(
                other,
                &["planar", "full"],
            )),
        }
    }
}

/// `"sync"` / `"event"` / `"control"`, as the manifest writes them
/// (contact markers come from a clip's `contacts`).
mod marker_kind_name {
    use ludus_anim_format::events::MarkerKind;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(k: &MarkerKind, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(super::marker_kind_str(*k))
    }
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<MarkerKind, D::Error> {
        match String::deserialize(d)?.as_str() {
            "sync" => Ok(MarkerKind::SyncMarker),
            "event" => Ok(MarkerKind::Event),
            "control" => Ok(MarkerKind::Control),
            other => Err(serde::de::Error::unknown_variant(
                other,
                &["sync", "event", "control"],
            )),
        }
    }
}

fn root_policy_str(p: RootMotionPolicy) -> &'static str {
    match p {
        RootMotionPolicy::Planar => "planar",
        RootMotionPolicy::Full => "full",
    }
}

fn marker_kind_str(k: MarkerKind) -> &'static str {
    match k {
        MarkerKind::SyncMarker => "sync",
        MarkerKind::Event => "event",
        MarkerKind::Control => "control",
        MarkerKind::ContactStart => "contact-start",
        MarkerKind::ContactEnd => "contact-end",
    }
}

/// A clip's semantics as the prepare stage takes them: manifest settings
/// with defaults applied and the markers the source file carries merged in.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ClipPrepSettings {
    pub loop_policy: LoopPolicy,
    /// Store a looping clip without its duplicated end sample when that
    /// sample equals the first within the thresholds.
    pub drop_duplicate_end: bool,
    pub root_motion: Option<RootMotionSettings>,
    pub additive: Option<AdditiveReference>,
    pub markers: Vec<MarkerSpec>,
    /// Contact windows, cooked as contact-start/-end markers.
    #[serde(default)]
    pub contacts: Vec<ContactWindow>,
    /// The sync groups the clip is a member of.
    #[serde(default)]
    pub sync: Vec<SyncMembership>,
}

impl KeyInput for LoopPolicy {
    fn feed(&self, k: &mut KeyWriter) {
        k.tag(match self {
            LoopPolicy::Auto => "auto",
            LoopPolicy::Once => "once",
            LoopPolicy::Loop => "loop",
        });
    }
}

impl KeyInput for RootMotionSettings {
    fn feed(&self, k: &mut KeyWriter) {
        let RootMotionSettings { joint, policy } = self;
        k.put(joint).tag(root_policy_str(*policy));
    }
}

impl KeyInput for AdditiveReference {
    fn feed(&self, k: &mut KeyWriter) {
        match self {
            AdditiveReference::RestPose => k.tag("rest"),
            AdditiveReference::Frame { clip, time_s } => k.tag("frame").put(clip).put(time_s),
            AdditiveReference::Clip { name } => k.tag("clip").put(name),
        };
    }
}

impl KeyInput for MarkerSpec {
    fn feed(&self, k: &mut KeyWriter) {
        let MarkerSpec {
            name,
            time_s,
            kind,
            reversible,
        } = self;
        k.put(name)
            .put(time_s)
            .tag(marker_kind_str(*kind))
            .put(reversible);
    }
}

impl KeyInput for ClipPrepSettings {
    fn feed(&self, k: &mut KeyWriter) {
        let ClipPrepSettings {
            loop_policy,
            drop_duplicate_end,
            root_motion,
            additive,
            markers,
            contacts,
            sync,
        } = self;
        k.put(loop_policy)
            .put(drop_duplicate_end)
            .put(root_motion)
            .put(additive)
            .put(markers)
            .put(contacts)
            .put(sync);
    }
}

/// Give every authored event (`kind = "event"`) its channel's kind: a
/// control channel makes it a control event; others stay visual.
pub fn classify_events(
    channels: &[crate::clip_semantics::EventChannel],
    markers: &mut [MarkerSpec],
) {
    use crate::clip_semantics::{channel_of, ChannelKind};
    use ludus_anim_format::events::MarkerKind;
    for m in markers.iter_mut().filter(|m| m.kind == MarkerKind::Event) {
        if channel_of(channels, &m.name) == Some(ChannelKind::Control) {
            m.kind = MarkerKind::Control;
        }
    }
}
