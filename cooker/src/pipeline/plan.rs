//! Which clips an asset cooks, with what settings: the imported clips and
//! the manifest's cuts, each with its settings after precedence (clip >
//! asset > command line) and the source's own markers merged in.

use crate::manifest::{AssetEntry, ClipEntry};
use crate::settings::{ClipPrepSettings, MarkerSpec};
use ludus_anim_model::{Diagnostic, SourceClip};

/// One clip to cook.
pub struct ClipPlan<'a> {
    pub name: String,
    /// The imported (normalized) clip it is cut from, and the cut.
    pub source: &'a SourceClip,
    pub range: Option<(f32, f32)>,
    pub profile_name: String,
    /// The prepare stage's settings, source markers included.
    pub prep: ClipPrepSettings,
    /// How many markers came from the source file.
    pub source_markers: usize,
}

/// Plans for every clip of `clips` the settings do not skip, then every
/// cut; warnings for settings that name no clip.
pub fn plan_clips<'a>(
    clips: &'a [SourceClip],
    settings: &AssetEntry,
    default_profile: &str,
    file: &str,
    warnings: &mut Vec<Diagnostic>,
) -> Result<Vec<ClipPlan<'a>>, Diagnostic> {
    let asset_profile = settings.profile.as_deref().unwrap_or(default_profile);
    let settings = &AssetDefaults {
        entry: settings,
        profile: asset_profile,
    };
    let mut plans = Vec::new();
    for c in clips {
        let s = settings
            .entry
            .clips
            .get(&c.name)
            .cloned()
            .unwrap_or_default();
        if !s.skip && s.from.is_none() {
            plans.push(plan(c.name.clone(), c, None, &s, settings));
        }
    }
    for (name, s) in &settings.entry.clips {
        match (&s.from, s.range) {
            (Some(from), Some([start, end])) => {
                let c = cut_source(clips, name, from, end, file)?;
                let range = Some((start, end.min(c.duration_s)));
                plans.push(plan(name.clone(), c, range, s, settings));
            }
            _ if !clips.iter().any(|c| &c.name == name) => warnings.push(
                Diagnostic::warning(
                    "unknown_clip",
                    "the manifest has settings for a clip the asset does not have",
                )
                .file(file)
                .clip(name),
            ),
            _ => {}
        }
    }
    Ok(plans)
}

/// The clip a cut named `name` reads, checked to contain the cut's end.
fn cut_source<'a>(
    clips: &'a [SourceClip],
    name: &str,
    from: &str,
    end: f32,
    file: &str,
) -> Result<&'a SourceClip, Diagnostic> {
    match clips.iter().find(|c| c.name == from) {
        Some(c) if end <= c.duration_s + 1e-4 => Ok(c),
        Some(c) => Err(Diagnostic::error(
            "bad_clip_range",
            format!(
                "range ends at {end} s, after the end of clip '{from}' ({} s)",
                c.duration_s
            ),
        )
        .file(file)
        .clip(name)),
        None => Err(Diagnostic::error(
            "unknown_clip",
            format!("the manifest cuts it from clip '{from}', which the asset does not have"),
        )
        .file(file)
        .clip(name)),
    }
}

/// The asset's settings and its profile after the command line.
struct AssetDefaults<'a> {
    entry: &'a AssetEntry,
    profile: &'a str,
}

fn plan<'a>(
    name: String,
    source: &'a SourceClip,
    range: Option<(f32, f32)>,
    s: &ClipEntry,
    asset: &AssetDefaults<'_>,
) -> ClipPlan<'a> {
    let mut prep = ClipPrepSettings {
        loop_policy: s.loop_mode.unwrap_or_default(),
        drop_duplicate_end: s.drop_duplicate_end.unwrap_or(false),
        root_motion: s.root_motion.clone(),
        additive: s.additive.clone(),
        markers: s.markers.clone(),
        contacts: s.contacts.clone(),
        sync: crate::clip_semantics::memberships(&asset.entry.sync_groups, &name),
    };
    let imported = source_markers(source, range);
    let source_markers = imported.len();
    for m in imported {
        if !prep
            .markers
            .iter()
            .any(|x| x.name == m.name && x.time_s == m.time_s)
        {
            prep.markers.push(m);
        }
    }
    crate::settings::classify_events(&asset.entry.event_channels, &mut prep.markers);
    ClipPlan {
        name,
        source,
        range,
        profile_name: s.profile.clone().unwrap_or(asset.profile.to_string()),
        prep,
        source_markers,
    }
}

/// Markers the importer found on the clip's source (glTF extras), cut and
/// shifted like the clip.
fn source_markers(source: &SourceClip, range: Option<(f32, f32)>) -> Vec<MarkerSpec> {
    let (start, end) = range.unwrap_or((0.0, source.duration_s));
    source
        .markers
        .iter()
        .filter(|m| m.time_s >= start - 1e-6 && m.time_s <= end + 1e-6)
        .map(|m| MarkerSpec {
            name: m.name.clone(),
            time_s: (m.time_s - start).clamp(0.0, end - start),
            kind: m.kind,
            reversible: false,
        })
        .collect()
}

impl ClipPlan<'_> {
    /// The authored clip this plan cooks: the source, cut and shifted to
    /// start at zero when the plan is a cut.
    pub fn authored(&self) -> std::borrow::Cow<'_, SourceClip> {
        match self.range {
            Some((s, e)) => std::borrow::Cow::Owned(cut_clip(self.source, &self.name, s, e)),
            None => std::borrow::Cow::Borrowed(self.source),
        }
    }
}

/// `clip` restricted to `[start, end]` and shifted to start at zero.
fn cut_clip(clip: &SourceClip, name: &str, start: f32, end: f32) -> SourceClip {
    let mut c = clip.clone();
    c.name = name.to_string();
    c.duration_s = (end - start).max(0.0);
    for tr in &mut c.tracks {
        if let Some(x) = &mut tr.translation {
            x.shift(start);
        }
        if let Some(x) = &mut tr.rotation {
            x.shift(start);
        }
        if let Some(x) = &mut tr.scale {
            x.shift(start);
        }
    }
    for k in &mut c.curves {
        k.curve.shift(start);
    }
    c.collect_key_times();
    let d = c.duration_s;
    c.key_times.retain(|&t| (0.0..=d).contains(&t));
    c
}
