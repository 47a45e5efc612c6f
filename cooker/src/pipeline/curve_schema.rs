//! Curve schemas applied to a clip's scalar channels: each channel's
//! interpolation, default, range, clamp and composition resolved from the
//! manifest's and the profile's `curve_schema` rules over what the importer
//! declared (`ludus_anim_project::curve_schema`), the package entries that
//! carry them, and the asset's schema warnings.

use crate::keys::{KeyInput, KeyWriter};
use crate::manifest::AssetEntry;
use crate::package_writer::CurveEntry;
use crate::profile::Profile;
use ludus_anim_format::package::CurveComposition;
use ludus_anim_model::{Diagnostic, Interpolation, ResampledClip, SourceClip};
use ludus_anim_project::curve_schema::{resolve, ChannelSchema, CurveCompose, CurveRule, Layer};

/// The rules that apply to one clip: its asset's, the project's and its
/// profile's (earlier layers win).
#[derive(Clone, Copy, Debug)]
pub struct CurveLayers<'a> {
    pub asset: &'a [CurveRule],
    pub project: &'a [CurveRule],
    pub profile: &'a [CurveRule],
}

impl<'a> CurveLayers<'a> {
    pub fn new(settings: &'a AssetEntry, profile: &'a Profile) -> CurveLayers<'a> {
        let (asset, project) = settings.curve_layers();
        CurveLayers {
            asset,
            project,
            profile: &profile.curve_schema,
        }
    }

    /// The schema of a channel the importer declared with `step` and
    /// `default`.
    pub fn schema(&self, channel: &str, step: bool, default: f32) -> ChannelSchema {
        let layers = [
            (Layer::Asset, self.asset),
            (Layer::Project, self.project),
            (Layer::Profile, self.profile),
        ];
        resolve(channel, step, default, &layers)
    }
}

impl KeyInput for CurveLayers<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let CurveLayers {
            asset,
            project,
            profile,
        } = self;
        k.put(*asset).put(*project).put(*profile);
    }
}

/// Whether the importer declared `channel` stepped (glTF STEP samplers).
fn source_step(source: &SourceClip, channel: &str) -> bool {
    source
        .curves
        .iter()
        .find(|c| c.name == channel)
        .is_some_and(|c| c.curve.interpolation == Interpolation::Step)
}

fn composition(c: CurveCompose) -> CurveComposition {
    match c {
        CurveCompose::Blend => CurveComposition::Blend,
        CurveCompose::Override => CurveComposition::Override,
        CurveCompose::Additive => CurveComposition::Additive,
        CurveCompose::Max => CurveComposition::Max,
    }
}

/// The package entries of `clip`'s channels (`source` is the imported
/// clip it was resampled from), quantized within `threshold`, each with
/// its resolved schema.
pub fn curve_entries(
    clip: &ResampledClip,
    source: &SourceClip,
    layers: &CurveLayers<'_>,
    threshold: f32,
) -> Vec<CurveEntry> {
    clip.curves
        .iter()
        .map(|k| {
            let s = layers.schema(&k.name, source_step(source, &k.name), k.default);
            let mut e = CurveEntry::quantized(
                k.id,
                k.name.clone(),
                s.default,
                s.step,
                &k.values,
                threshold,
            );
            e.composition = composition(s.composition);
            e.range = s.range;
            e.clamp = s.clamp;
            e
        })
        .collect()
}

/// Located warnings for an asset rule (`[[asset.curve_schema]]`) that
/// matches no channel of any of the asset's clips. Project and profile
/// rules apply to many assets and are not expected to match in each.
pub fn unmatched_rules(clips: &[SourceClip], settings: &AssetEntry, file: &str) -> Vec<Diagnostic> {
    let (asset, _) = settings.curve_layers();
    let channels = || clips.iter().flat_map(|c| c.curves.iter());
    let mut known: Vec<&str> = channels().map(|c| c.name.as_str()).collect();
    known.sort_unstable();
    known.dedup();
    let known = if known.is_empty() {
        "the asset has no curve channels".to_string()
    } else {
        format!("channels: {}", known.join(", "))
    };
    asset
        .iter()
        .filter(|r| !channels().any(|c| r.matches(&c.name)))
        .map(|r| {
            Diagnostic::warning(
                "curve_schema_unmatched",
                format!(
                    "{}: match \"{}\" names no curve channel of this asset ({known})",
                    if r.origin.is_empty() {
                        "asset curve_schema rule"
                    } else {
                        &r.origin
                    },
                    r.pattern
                ),
            )
            .file(file)
        })
        .collect()
}

/// Located warnings for a clip's channels whose resolved default lies
/// outside their resolved range (rules that set one and not the other, or
/// an importer's default under a narrower range).
pub fn default_warnings(
    source: &SourceClip,
    clip: &str,
    layers: &CurveLayers<'_>,
    file: &str,
) -> Vec<Diagnostic> {
    source
        .curves
        .iter()
        .filter_map(|c| {
            let s = layers.schema(&c.name, false, c.default);
            let (lo, hi) = s.range;
            (s.default < lo || s.default > hi).then(|| {
                Diagnostic::warning(
                    "curve_default_out_of_range",
                    format!(
                        "curve '{}': default {} lies outside its schema range [{lo}, {hi}]",
                        c.name, s.default
                    ),
                )
                .file(file)
                .clip(clip)
            })
        })
        .collect()
}

/// Located warnings for stepped channels of a STEP source whose value
/// changes at a key between two grid samples: sample-and-hold on the grid
/// takes the new value at the next sample, up to one interval late. One
/// warning per channel, at its first such key, with the count.
pub fn step_key_warnings(
    source: &SourceClip,
    rate_hz: f32,
    layers: &CurveLayers<'_>,
    file: &str,
) -> Vec<Diagnostic> {
    source
        .curves
        .iter()
        .filter(|c| c.curve.interpolation == Interpolation::Step)
        .filter(|c| layers.schema(&c.name, true, c.default).step)
        .filter_map(|c| {
            let late: Vec<f32> = c
                .curve
                .keys
                .windows(2)
                .filter(|w| w[1].value != w[0].value && !on_grid(w[1].time, rate_hz))
                .map(|w| w[1].time)
                .collect();
            let &first = late.first()?;
            let delay = (first * rate_hz).ceil() / rate_hz - first;
            Some(
                Diagnostic::warning(
                    "curve_step_between_samples",
                    format!(
                        "curve '{}': {} stepped change(s) fall between samples at {rate_hz} Hz and are held from the next sample (the first, at t={first:.4}s, {delay:.4} s late)",
                        c.name,
                        late.len()
                    ),
                )
                .file(file)
                .clip(&source.name)
                .time(first),
            )
        })
        .collect()
}

/// Whether time `t` is a sample of a grid at `rate_hz` (within the
/// resampler's key-snapping tolerance).
fn on_grid(t: f32, rate_hz: f32) -> bool {
    let p = t * rate_hz;
    (p - p.round()).abs() < 1e-3
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_model::{Curve, ScalarCurve};
    use ludus_anim_project::curve_schema::CurveInterp;

    fn clip() -> SourceClip {
        SourceClip {
            name: "blink".into(),
            duration_s: 1.0,
            tracks: vec![],
            curves: vec![ScalarCurve {
                name: "Face/weights/0".into(),
                curve: Curve::from_values(Interpolation::Step, &[0.0, 0.51, 1.0], &[0.0, 1.0, 0.0]),
                default: 0.0,
            }],
            frame_rate_hz: None,
            key_times: vec![0.0, 0.51, 1.0],
            markers: vec![],
        }
    }

    const NONE: CurveLayers<'static> = CurveLayers {
        asset: &[],
        project: &[],
        profile: &[],
    };

    #[test]
    fn a_stepped_change_between_samples_is_located() {
        let w = step_key_warnings(&clip(), 30.0, &NONE, "f.gltf");
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.contains("1 stepped change(s)"),
            "{}",
            w[0].message
        );
        assert_eq!(w[0].time_s, Some(0.51));
        assert!(step_key_warnings(&clip(), 100.0, &NONE, "f.gltf").is_empty());
        let linear = [CurveRule {
            pattern: "*".into(),
            interpolation: Some(CurveInterp::Linear),
            ..CurveRule::default()
        }];
        let layers = CurveLayers {
            profile: &linear,
            ..NONE
        };
        assert!(step_key_warnings(&clip(), 30.0, &layers, "f.gltf").is_empty());
    }

    #[test]
    fn a_default_outside_the_range_is_located() {
        let narrow = [CurveRule {
            pattern: "*/0".into(),
            range: Some([0.5, 1.0]),
            ..CurveRule::default()
        }];
        let layers = CurveLayers {
            project: &narrow,
            ..NONE
        };
        let w = default_warnings(&clip(), "blink", &layers, "f.gltf");
        assert_eq!(w.len(), 1);
        assert!(
            w[0].message.contains("default 0 lies outside"),
            "{}",
            w[0].message
        );
    }
}
