//! Curve schemas: how a scalar curve channel (morph weight, custom
//! property) is stored and played — interpolation, default, range, clamp
//! and composition — declared by channel name or pattern in the manifest
//! (`[[project.curve_schema]]`, `[[asset.curve_schema]]`) and in profiles
//! (`[[curve_schema]]`). Spec: `schemas/manifest.md` ("Curve schemas").
//!
//! Each field of a channel's schema is resolved on its own: the first rule
//! that matches the channel and sets the field wins, rules ordered by layer
//! (asset, then project, then profile), then by specificity (an exact name
//! before any pattern, then more literal characters), then by declaration
//! (a later rule first). A field no rule sets keeps what the importer
//! declared (a glTF STEP sampler stays step) or the format's default.

use crate::keys::{KeyInput, KeyWriter};
use serde::{Deserialize, Serialize};

/// Interpolation between a channel's samples.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CurveInterp {
    Linear,
    /// Sample-and-hold: discrete tags, permissions, visibility.
    Step,
}

/// How a channel combines with the same channel from other sources (the
/// package's composition byte; `max` is the format's one explicit reducer).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CurveCompose {
    Blend,
    Override,
    Additive,
    Max,
}

/// One `[[curve_schema]]` rule. `match` is a channel name or a pattern
/// (`*` matches any run of characters, `/` included; case-insensitive, as
/// profile joint patterns are); every other field is optional.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveRule {
    #[serde(rename = "match")]
    pub pattern: String,
    pub interpolation: Option<CurveInterp>,
    pub default: Option<f32>,
    pub range: Option<[f32; 2]>,
    pub clamp: Option<bool>,
    pub composition: Option<CurveCompose>,
    /// Where the rule was declared (`ludus-anim.toml [[asset]] 2
    /// curve_schema[0]`), for warnings; set when the manifest is expanded
    /// into jobs, empty in profiles (the profile's name locates those).
    #[serde(skip)]
    pub origin: String,
}

/// Which declaration a rule comes from; earlier layers win.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Layer {
    Asset,
    Project,
    Profile,
}

/// A channel's resolved schema, in the package's terms.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChannelSchema {
    pub step: bool,
    pub default: f32,
    /// `(-inf, +inf)` when no rule declares one.
    pub range: (f32, f32),
    pub clamp: bool,
    pub composition: CurveCompose,
}

impl CurveRule {
    /// Whether the rule names a single channel (no `*`).
    pub fn is_exact(&self) -> bool {
        !self.pattern.contains('*')
    }

    /// `*` is the only wildcard (other glob syntax is literal), matching
    /// any run of characters, `/` included; case-insensitive.
    pub fn matches(&self, channel: &str) -> bool {
        let literal: Vec<String> = self.pattern.split('*').map(glob::Pattern::escape).collect();
        let options = glob::MatchOptions {
            case_sensitive: false,
            require_literal_separator: false,
            require_literal_leading_dot: false,
        };
        glob::Pattern::new(&literal.join("*")).is_ok_and(|p| p.matches_with(channel, options))
    }

    /// The first invalid field, as `(field, value, why)`: an empty
    /// pattern, a non-finite value, `range` min above max, or a default
    /// outside the rule's own range.
    pub fn invalid(&self) -> Option<(&'static str, String, &'static str)> {
        if self.pattern.trim().is_empty() {
            return Some(("match", "\"\"".into(), "must name a channel or pattern"));
        }
        if let Some(d) = self.default.filter(|d| !d.is_finite()) {
            return Some(("default", d.to_string(), "must be a finite number"));
        }
        if let Some([lo, hi]) = self.range {
            let shown = format!("[{lo}, {hi}]");
            if lo.is_nan() || hi.is_nan() {
                return Some(("range", shown, "must be numbers"));
            }
            if lo > hi {
                return Some(("range", shown, "must satisfy min <= max"));
            }
            if let Some(d) = self.default.filter(|d| *d < lo || *d > hi) {
                return Some(("default", d.to_string(), "must lie within range"));
            }
        }
        None
    }
}

/// A rule's validation failure, located by the caller (file and entry).
pub fn describe_invalid(at: &str, rule: &CurveRule) -> Option<String> {
    rule.invalid().map(|(field, value, why)| {
        format!("{at} (match \"{}\"): {field} = {value} {why}", rule.pattern)
    })
}

/// Specificity of a pattern: exact names first, then by literal length.
fn specificity(rule: &CurveRule) -> (bool, usize) {
    let literal = rule.pattern.chars().filter(|&c| c != '*').count();
    (rule.is_exact(), literal)
}

/// The rules matching `channel`, best first (layer, specificity, later
/// declaration).
fn ordered<'a>(channel: &str, layers: &[(Layer, &'a [CurveRule])]) -> Vec<&'a CurveRule> {
    let mut found: Vec<(Layer, (bool, usize), usize, &CurveRule)> = layers
        .iter()
        .flat_map(|(layer, rules)| {
            rules
                .iter()
                .enumerate()
                .filter(|(_, r)| r.matches(channel))
                .map(move |(i, r)| (*layer, specificity(r), i, r))
        })
        .collect();
    // Layer ascending; specificity and declaration index descending.
    found.sort_by(|a, b| a.0.cmp(&b.0).then(b.1.cmp(&a.1)).then(b.2.cmp(&a.2)));
    found.into_iter().map(|f| f.3).collect()
}

/// The schema of `channel` whose importer declared `step` and `default`,
/// under `layers` (see the module documentation for precedence).
pub fn resolve(
    channel: &str,
    step: bool,
    default: f32,
    layers: &[(Layer, &[CurveRule])],
) -> ChannelSchema {
    let rules = ordered(channel, layers);
    ChannelSchema {
        step: rules
            .iter()
            .find_map(|r| r.interpolation)
            .map_or(step, |i| i == CurveInterp::Step),
        default: rules.iter().find_map(|r| r.default).unwrap_or(default),
        range: rules
            .iter()
            .find_map(|r| r.range)
            .map_or((f32::NEG_INFINITY, f32::INFINITY), |[lo, hi]| (lo, hi)),
        clamp: rules.iter().find_map(|r| r.clamp).unwrap_or(false),
        composition: rules
            .iter()
            .find_map(|r| r.composition)
            .unwrap_or(CurveCompose::Blend),
    }
}

impl KeyInput for CurveInterp {
    fn feed(&self, k: &mut KeyWriter) {
        k.tag(match self {
            CurveInterp::Linear => "linear",
            CurveInterp::Step => "step",
        });
    }
}

impl KeyInput for CurveCompose {
    fn feed(&self, k: &mut KeyWriter) {
        k.tag(match self {
            CurveCompose::Blend => "blend",
            CurveCompose::Override => "override",
            CurveCompose::Additive => "additive",
            CurveCompose::Max => "max",
        });
    }
}

/// Every field, the origin included (it appears in warnings, which the
/// package record stores).
impl KeyInput for CurveRule {
    fn feed(&self, k: &mut KeyWriter) {
        let CurveRule {
            pattern,
            interpolation,
            default,
            range,
            clamp,
            composition,
            origin,
        } = self;
        k.put(pattern)
            .put(interpolation)
            .put(default)
            .put(range)
            .put(clamp)
            .put(composition)
            .put(origin);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(pattern: &str) -> CurveRule {
        CurveRule {
            pattern: pattern.into(),
            ..CurveRule::default()
        }
    }

    #[test]
    fn importer_step_survives_unless_a_rule_overrides_it() {
        let none: &[CurveRule] = &[];
        let s = resolve("Face/weights/blink", true, 0.0, &[(Layer::Asset, none)]);
        assert!(s.step && s.composition == CurveCompose::Blend && !s.clamp);
        assert_eq!(s.range, (f32::NEG_INFINITY, f32::INFINITY));
        let linear = [CurveRule {
            interpolation: Some(CurveInterp::Linear),
            ..rule("*blink")
        }];
        let s = resolve("Face/weights/blink", true, 0.0, &[(Layer::Asset, &linear)]);
        assert!(!s.step);
    }

    #[test]
    fn asset_over_project_over_profile_then_most_specific_field_by_field() {
        let profile = [CurveRule {
            range: Some([0.0, 1.0]),
            clamp: Some(true),
            composition: Some(CurveCompose::Max),
            ..rule("*")
        }];
        let project = [
            CurveRule {
                composition: Some(CurveCompose::Override),
                default: Some(0.5),
                ..rule("*blink*")
            },
            CurveRule {
                default: Some(0.25),
                ..rule("face/weights/blink_l")
            },
        ];
        let asset = [CurveRule {
            interpolation: Some(CurveInterp::Step),
            ..rule("*blink_L")
        }];
        let layers = [
            (Layer::Profile, &profile[..]),
            (Layer::Asset, &asset[..]),
            (Layer::Project, &project[..]),
        ];
        let s = resolve("Face/weights/blink_L", false, 0.0, &layers);
        assert!(s.step, "asset layer");
        assert_eq!(s.default, 0.25, "the exact name beats the pattern");
        assert_eq!(
            s.composition,
            CurveCompose::Override,
            "project over profile"
        );
        assert_eq!(
            (s.range, s.clamp),
            ((0.0, 1.0), true),
            "profile fills the rest"
        );
        let s = resolve("Face/weights/smile", false, 0.1, &layers);
        assert!(!s.step && s.default == 0.1 && s.composition == CurveCompose::Max);
    }

    #[test]
    fn ties_go_to_the_later_rule() {
        let rules = [
            CurveRule {
                default: Some(1.0),
                ..rule("a*")
            },
            CurveRule {
                default: Some(2.0),
                ..rule("*a")
            },
        ];
        let s = resolve("aa", false, 0.0, &[(Layer::Asset, &rules)]);
        assert_eq!(s.default, 2.0);
    }

    #[test]
    fn only_star_is_a_wildcard() {
        assert!(rule("*/weights/BLINK*").matches("Face/weights/blink_L"));
        assert!(rule("a[1]?").matches("A[1]?"));
        assert!(!rule("a[1]?").matches("a1x"));
        assert!(!rule("blink").matches("blink_L"));
    }

    #[test]
    fn invalid_fields_are_named() {
        let bad = |r: CurveRule| r.invalid().map(|(f, _, _)| f);
        let r = CurveRule {
            range: Some([1.0, 0.0]),
            ..rule("x")
        };
        assert_eq!(bad(r), Some("range"));
        let r = CurveRule {
            range: Some([0.0, 1.0]),
            default: Some(2.0),
            ..rule("x")
        };
        assert_eq!(bad(r), Some("default"));
        let r = CurveRule {
            default: Some(f32::INFINITY),
            ..rule("x")
        };
        assert_eq!(bad(r), Some("default"));
        assert_eq!(bad(rule(" ")), Some("match"));
        assert_eq!(bad(rule("x*")), None);
    }
}
