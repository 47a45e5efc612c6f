//! Quality profiles: the author-facing fidelity settings (seed: "Use a few
//! author-facing profiles such as Hero, Standard, and Crowd, with optional
//! important-joint overrides"). The bundled profiles are compiled in so the
//! binary works from any directory; a path to a `.toml` file works too.

use crate::keys::{KeyInput, KeyWriter};
use serde::{Deserialize, Serialize};
use std::path::Path;

pub const BUNDLED: [(&str, &str); 3] = [
    ("standard", include_str!("../../profiles/standard.toml")),
    ("hero", include_str!("../../profiles/hero.toml")),
    ("crowd", include_str!("../../profiles/crowd.toml")),
];

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CodecChoice {
    Vbr,
    Reference,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RatePolicy {
    Source,
    Fixed,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SampleRate {
    pub policy: RatePolicy,
    pub rate_hz: f32,
    pub min_hz: f32,
    pub max_hz: f32,
    pub max_resample_error_m: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointOverride {
    /// Joint name patterns; `*` matches any run of characters; matching is
    /// case-insensitive.
    pub joints: Vec<String>,
    pub error_threshold_m: Option<f32>,
    pub shell_distance_m: Option<f32>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    pub name: String,
    #[serde(default)]
    pub description: String,
    pub codec: CodecChoice,
    pub error_threshold_m: f32,
    pub shell_distance_m: f32,
    pub max_segment_samples: u32,
    #[serde(default)]
    pub report_joints: Vec<String>,
    pub sample_rate: SampleRate,
    #[serde(default)]
    pub joint_overrides: Vec<JointOverride>,
    /// Largest allowed decoded-vs-resampled error of a scalar curve channel
    /// (morph weight, custom property), in the channel's own units; picks
    /// each channel's quantized sample width. Default 0.001 (0.1% of a
    /// unit weight).
    #[serde(default = "default_curve_error_threshold")]
    pub curve_error_threshold: f32,
    /// Curve schemas (`[[curve_schema]]`), below the manifest's
    /// (`crate::curve_schema`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub curve_schema: Vec<crate::curve_schema::CurveRule>,
    /// When set, verification also measures each joint's velocity error
    /// (decoded against the authored motion, joint origins in component
    /// space, over each sample interval; `ludus_anim_verify::velocity`)
    /// and warns where it exceeds this many meters per second. Unset: not
    /// measured.
    #[serde(default)]
    pub velocity_threshold_mps: Option<f32>,
    /// Largest allowed bind-pose residual of a skin (millimetres): when
    /// set, skinning the source mesh with the cooked bind pose must
    /// reproduce the undeformed mesh within it, or the asset fails. Unset:
    /// every skin is still measured and reported, and a residual above
    /// [`DEFAULT_BIND_POSE_THRESHOLD_MM`] is a located warning.
    #[serde(default)]
    pub bind_pose_threshold_mm: Option<f32>,
}

/// The bind-pose residual above which a skin is warned about when the
/// profile sets no [`Profile::bind_pose_threshold_mm`].
pub const DEFAULT_BIND_POSE_THRESHOLD_MM: f32 = 0.01;

/// [`Profile::curve_error_threshold`] when a profile does not set it.
pub const DEFAULT_CURVE_ERROR_THRESHOLD: f32 = 0.001;

fn default_curve_error_threshold() -> f32 {
    DEFAULT_CURVE_ERROR_THRESHOLD
}

#[derive(Debug, thiserror::Error)]
pub enum ProfileError {
    #[error(
        "unknown profile '{0}' (bundled: standard, hero, crowd; or give a path to a .toml file)"
    )]
    Unknown(String),
    #[error("profile {path}: cannot read: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("profile {path}: {message}")]
    Parse { path: String, message: String },
    #[error("profile {path}: {field} = {value} is invalid: {why}")]
    Invalid {
        path: String,
        field: String,
        value: String,
        why: &'static str,
    },
}

impl Profile {
    /// A bundled profile by name, or a TOML file by path (read from the
    /// file system, at most the default `max_file_bytes`).
    pub fn load(name_or_path: &str) -> Result<Profile, ProfileError> {
        let max = ludus_anim_model::Limits::default().max_file_bytes;
        Profile::load_from(name_or_path, &crate::source::FileSystem, max)
    }

    /// A bundled profile by name, or a TOML file by path read through
    /// `reader` (a regular file of at most `max_bytes`, as sources are).
    pub fn load_from(
        name_or_path: &str,
        reader: &dyn crate::source::SourceReader,
        max_bytes: u64,
    ) -> Result<Profile, ProfileError> {
        if let Some((_, text)) = BUNDLED.iter().find(|(n, _)| *n == name_or_path) {
            return Profile::parse(text, &format!("profiles/{name_or_path}.toml"));
        }
        let path = Path::new(name_or_path);
        if path.extension().is_some_and(|e| e == "toml") || reader.exists(path) {
            let io = |source| ProfileError::Io {
                path: name_or_path.to_string(),
                source,
            };
            let bytes = reader.read_bounded(path, max_bytes).map_err(io)?;
            let text = String::from_utf8(bytes).map_err(|_| {
                io(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    "not UTF-8 text",
                ))
            })?;
            return Profile::parse(&text, name_or_path);
        }
        Err(ProfileError::Unknown(name_or_path.to_string()))
    }

    pub fn parse(text: &str, path: &str) -> Result<Profile, ProfileError> {
        let p: Profile = toml::from_str(text).map_err(|e| ProfileError::Parse {
            path: path.to_string(),
            message: ludus_anim_model::suggest::with_suggestion(&e.to_string()),
        })?;
        p.validate(path)?;
        Ok(p)
    }

    fn validate(&self, path: &str) -> Result<(), ProfileError> {
        let bad = |field: &str, value: f32, why: &'static str| ProfileError::Invalid {
            path: path.to_string(),
            field: field.to_string(),
            value: value.to_string(),
            why,
        };
        let positive = |field: &str, v: f32| {
            if v.is_finite() && v > 0.0 {
                Ok(())
            } else {
                Err(bad(field, v, "must be a finite number above zero"))
            }
        };
        positive("error_threshold_m", self.error_threshold_m)?;
        positive("shell_distance_m", self.shell_distance_m)?;
        positive("curve_error_threshold", self.curve_error_threshold)?;
        if let Some(v) = self.bind_pose_threshold_mm {
            positive("bind_pose_threshold_mm", v)?;
        }
        if let Some(v) = self.velocity_threshold_mps {
            positive("velocity_threshold_mps", v)?;
        }
        positive("sample_rate.rate_hz", self.sample_rate.rate_hz)?;
        positive("sample_rate.min_hz", self.sample_rate.min_hz)?;
        positive("sample_rate.max_hz", self.sample_rate.max_hz)?;
        positive(
            "sample_rate.max_resample_error_m",
            self.sample_rate.max_resample_error_m,
        )?;
        if self.sample_rate.min_hz > self.sample_rate.max_hz {
            return Err(bad(
                "sample_rate.min_hz",
                self.sample_rate.min_hz,
                "must not exceed max_hz",
            ));
        }
        if self.sample_rate.max_hz > 10_000.0 {
            return Err(bad(
                "sample_rate.max_hz",
                self.sample_rate.max_hz,
                "must be at most 10000",
            ));
        }
        if !(2..=256).contains(&self.max_segment_samples) {
            return Err(bad(
                "max_segment_samples",
                self.max_segment_samples as f32,
                "must be between 2 and 256",
            ));
        }
        for (i, o) in self.joint_overrides.iter().enumerate() {
            if o.joints.is_empty() {
                return Err(ProfileError::Invalid {
                    path: path.to_string(),
                    field: format!("joint_overrides[{i}].joints"),
                    value: "[]".into(),
                    why: "must name at least one joint pattern",
                });
            }
            if let Some(v) = o.error_threshold_m {
                positive(&format!("joint_overrides[{i}].error_threshold_m"), v)?;
            }
            if let Some(v) = o.shell_distance_m {
                positive(&format!("joint_overrides[{i}].shell_distance_m"), v)?;
            }
        }
        for (i, r) in self.curve_schema.iter().enumerate() {
            if let Some((field, value, why)) = r.invalid() {
                return Err(ProfileError::Invalid {
                    path: path.to_string(),
                    field: format!("curve_schema[{i}].{field}"),
                    value,
                    why,
                });
            }
        }
        Ok(())
    }

    /// Per-joint (threshold, shell) for a skeleton's joint names. Later
    /// overrides win; `file_shells` (e.g. ACL SJSON `vertex_distance`, in
    /// meters) replace the profile's shell distance where given.
    pub fn joint_settings(
        &self,
        names: &[String],
        file_shells: Option<&[f32]>,
    ) -> (Vec<f32>, Vec<f32>) {
        let mut thresholds = vec![self.error_threshold_m; names.len()];
        let mut shells = vec![self.shell_distance_m; names.len()];
        if let Some(fs) = file_shells {
            for (s, &f) in shells.iter_mut().zip(fs) {
                if f.is_finite() && f > 0.0 {
                    *s = f;
                }
            }
        }
        for o in &self.joint_overrides {
            for (j, name) in names.iter().enumerate() {
                if o.joints.iter().any(|p| glob_match(p, name)) {
                    if let Some(t) = o.error_threshold_m {
                        thresholds[j] = t;
                    }
                    if let Some(s) = o.shell_distance_m {
                        shells[j] = s;
                    }
                }
            }
        }
        (thresholds, shells)
    }

    /// Joints the report lists individually (the seed's "error at selected
    /// joints").
    pub fn report_joint_indices(&self, names: &[String]) -> Vec<usize> {
        (0..names.len())
            .filter(|&j| self.report_joints.iter().any(|p| glob_match(p, &names[j])))
            .collect()
    }
}

/// The profile settings that pick per-joint shell distances (what the
/// resample and prepare stages read of a profile besides its rate).
pub struct ShellSettings<'a>(pub &'a Profile);

/// The profile settings that pick per-joint error thresholds (what the
/// encoder aims at).
pub struct ThresholdSettings<'a>(pub &'a Profile);

impl KeyInput for ShellSettings<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        k.put(&self.0.shell_distance_m);
        let shells: Vec<(&[String], Option<f32>)> = self
            .0
            .joint_overrides
            .iter()
            .map(|o| (o.joints.as_slice(), o.shell_distance_m))
            .collect();
        k.put(&(shells.len() as u64));
        for (joints, shell) in shells {
            k.put(joints).put(&shell);
        }
    }
}

impl KeyInput for ThresholdSettings<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        k.put(&self.0.error_threshold_m);
        k.put(&(self.0.joint_overrides.len() as u64));
        for o in &self.0.joint_overrides {
            k.put(&o.joints).put(&o.error_threshold_m);
        }
    }
}

impl KeyInput for CodecChoice {
    fn feed(&self, k: &mut KeyWriter) {
        k.tag(match self {
            CodecChoice::Vbr => "vbr",
            CodecChoice::Reference => "reference",
        });
    }
}

impl KeyInput for SampleRate {
    fn feed(&self, k: &mut KeyWriter) {
        let SampleRate {
            policy,
            rate_hz,
            min_hz,
            max_hz,
            max_resample_error_m,
        } = self;
        k.tag(match policy {
            RatePolicy::Source => "source",
            RatePolicy::Fixed => "fixed",
        })
        .put(rate_hz)
        .put(min_hz)
        .put(max_hz)
        .put(max_resample_error_m);
    }
}

impl KeyInput for JointOverride {
    fn feed(&self, k: &mut KeyWriter) {
        let JointOverride {
            joints,
            error_threshold_m,
            shell_distance_m,
        } = self;
        k.put(joints).put(error_threshold_m).put(shell_distance_m);
    }
}

/// The whole profile (the package key covers every referenced profile).
impl KeyInput for Profile {
    fn feed(&self, k: &mut KeyWriter) {
        let Profile {
            name,
            description,
            codec,
            error_threshold_m,
            shell_distance_m,
            max_segment_samples,
            report_joints,
            sample_rate,
            joint_overrides,
            curve_error_threshold,
            curve_schema,
            // Verification's key holds it: it changes no encoding.
            velocity_threshold_mps: _,
            bind_pose_threshold_mm,
        } = self;
        k.put(name)
            .put(description)
            .put(codec)
            .put(error_threshold_m)
            .put(shell_distance_m)
            .put(max_segment_samples)
            .put(report_joints)
            .put(sample_rate)
            .put(joint_overrides)
            .put(curve_error_threshold)
            .put(curve_schema)
            .put(bind_pose_threshold_mm);
    }
}

/// Case-insensitive glob with `*` only.
pub fn glob_match(pattern: &str, text: &str) -> bool {
    let p: Vec<char> = pattern.to_lowercase().chars().collect();
    let t: Vec<char> = text.to_lowercase().chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && p[pi] != '*' && p[pi] == t[ti] {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(s) = star {
            pi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundled_profiles_load() {
        for (name, _) in BUNDLED {
            let p = Profile::load(name).unwrap();
            assert_eq!(p.name, name);
        }
        let s = Profile::load("standard").unwrap();
        assert_eq!(s.error_threshold_m, 0.0001);
        assert_eq!(s.shell_distance_m, 0.03);
    }

    #[test]
    fn unknown_key_and_bad_values_are_reported() {
        let text = BUNDLED[0]
            .1
            .replace("max_segment_samples", "max_segment_sample");
        let e = Profile::parse(&text, "p.toml").unwrap_err().to_string();
        assert!(e.contains("max_segment_sample"), "{e}");
        let text = BUNDLED[0]
            .1
            .replace("error_threshold_m = 0.0001", "error_threshold_m = -1.0");
        let e = Profile::parse(&text, "p.toml").unwrap_err().to_string();
        assert!(
            e.contains("error_threshold_m") && e.contains("above zero"),
            "{e}"
        );
    }

    #[test]
    fn overrides_apply_by_glob() {
        let p = Profile::load("hero").unwrap();
        let names: Vec<String> = ["Hips", "LeftHand", "head_end"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let (t, _) = p.joint_settings(&names, None);
        assert_eq!(t, vec![0.00005, 0.000025, 0.000025]);
        assert!(glob_match("*hand*", "RightHandIndex1"));
        assert!(!glob_match("hand", "LeftHand"));
    }
}
