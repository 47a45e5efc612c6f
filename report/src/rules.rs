//! The `[report]` table of the project manifest: sidecar settings and the
//! regression rules `ludus-anim report --fail-on-regression` applies.
//!
//! ```toml
//! [report]
//! sidecar = true            # write OUT/report-sidecar.json
//! sidecar_max_mb = 64       # above this, per-time errors are left out
//!
//! [report.regressions]
//! bytes_pct = 2.0           # compressed bytes grew by more than 2 %
//! over_threshold = true    # any joint over its threshold, baseline or not
//! end_to_end_over_threshold = true  # decoded vs authored over the threshold
//! max_error_over_budget = true
//! max_error_pct = 10.0      # or `false` to switch a percentage rule off
//! p99_error_pct = false
//! decode_pct = 10.0         # only where both cooks measured decode time
//! decode_min_ns = 20.0
//! new_warnings = true
//! clip_missing = true
//! clip_added = false
//! asset_failed = true
//! ```

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::fmt;

/// The manifest's `[report]` table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ReportConfig {
    /// Write `OUT/report-sidecar.json` (default true).
    pub sidecar: bool,
    /// Largest sidecar (MiB) written with per-time errors; a larger one
    /// keeps every other block and leaves `error_q` empty. `false`: no limit.
    #[serde(with = "number_or_false")]
    pub sidecar_max_mb: Option<f64>,
    pub regressions: RegressionRules,
}

impl Default for ReportConfig {
    fn default() -> Self {
        ReportConfig {
            sidecar: true,
            sidecar_max_mb: Some(64.0),
            regressions: RegressionRules::default(),
        }
    }
}

/// When a clip counts as regressed against the baseline. Percentages are
/// of the baseline value; a rule set to `false` (`None`) never fires.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RegressionRules {
    /// Compressed bytes grew by more than this (default 2 %).
    #[serde(with = "number_or_false")]
    pub bytes_pct: Option<f64>,
    /// Any clip of the current cook with a joint's codec error over that
    /// joint's threshold (per joint from the sidecar, else the report's
    /// selected and worst joints), with or without a baseline (default on).
    pub over_threshold: bool,
    /// Any clip of the current cook whose end-to-end error (decoded
    /// against the authored curves) is outside its bound, for a cause
    /// other than STEP keys between samples (default on).
    pub end_to_end_over_threshold: bool,
    /// Max error exceeds the budget: the baseline clip's threshold, or the
    /// current one where it is tighter (default on).
    pub max_error_over_budget: bool,
    /// Max error grew by more than this (default 10 %).
    #[serde(with = "number_or_false")]
    pub max_error_pct: Option<f64>,
    /// p99 error grew by more than this (default off).
    #[serde(with = "number_or_false")]
    pub p99_error_pct: Option<f64>,
    /// Decode time per pose grew by more than this, where both cooks
    /// measured it (non-zero) (default 10 %).
    #[serde(with = "number_or_false")]
    pub decode_pct: Option<f64>,
    /// Decode-time increases smaller than this many nanoseconds never
    /// count (timer noise on tiny clips; default 20).
    pub decode_min_ns: f64,
    /// A warning the baseline clip (or asset) did not have (default on).
    pub new_warnings: bool,
    /// A baseline clip absent from the current cook (default on).
    pub clip_missing: bool,
    /// A clip the baseline did not have (default off).
    pub clip_added: bool,
    /// An asset that cooked in the baseline and failed now (default on).
    pub asset_failed: bool,
}

impl Default for RegressionRules {
    fn default() -> Self {
        RegressionRules {
            bytes_pct: Some(2.0),
            over_threshold: true,
            end_to_end_over_threshold: true,
            max_error_over_budget: true,
            max_error_pct: Some(10.0),
            p99_error_pct: None,
            decode_pct: Some(10.0),
            decode_min_ns: 20.0,
            new_warnings: true,
            clip_missing: true,
            clip_added: false,
            asset_failed: true,
        }
    }
}

/// `Option<f64>` written as a number, or `false` for `None` (TOML has no
/// null).
mod number_or_false {
    use super::*;

    pub fn serialize<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(x) => s.serialize_f64(*x),
            None => s.serialize_bool(false),
        }
    }

    struct V;
    impl Visitor<'_> for V {
        type Value = Option<f64>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a non-negative number, or false to switch the rule off")
        }
        fn visit_bool<E: de::Error>(self, b: bool) -> Result<Self::Value, E> {
            if b {
                Err(E::custom("`true` is not a limit: give a number, or false"))
            } else {
                Ok(None)
            }
        }
        fn visit_f64<E: de::Error>(self, x: f64) -> Result<Self::Value, E> {
            if x.is_finite() && x >= 0.0 {
                Ok(Some(x))
            } else {
                Err(E::custom(format!("{x} is not a non-negative number")))
            }
        }
        fn visit_i64<E: de::Error>(self, x: i64) -> Result<Self::Value, E> {
            self.visit_f64(x as f64)
        }
        fn visit_u64<E: de::Error>(self, x: u64) -> Result<Self::Value, E> {
            self.visit_f64(x as f64)
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
        d.deserialize_any(V)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_overrides_from_json() {
        let c: ReportConfig = serde_json::from_str("{}").unwrap();
        assert_eq!(c, ReportConfig::default());
        let c: ReportConfig = serde_json::from_str(
            r#"{"sidecar": false, "regressions": {"bytes_pct": 5, "max_error_pct": false}}"#,
        )
        .unwrap();
        assert!(!c.sidecar);
        assert_eq!(c.regressions.bytes_pct, Some(5.0));
        assert_eq!(c.regressions.max_error_pct, None);
        assert_eq!(c.regressions.decode_pct, Some(10.0));
        let back: ReportConfig = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
    }

    #[test]
    fn bad_values_are_refused_with_the_reason() {
        for (text, want) in [
            (r#"{"regressions": {"bytes_pct": true}}"#, "not a limit"),
            (r#"{"regressions": {"bytes_pct": -1}}"#, "non-negative"),
            (r#"{"regressions": {"byte_pct": 1}}"#, "unknown field"),
        ] {
            let e = serde_json::from_str::<ReportConfig>(text).unwrap_err();
            assert!(e.to_string().contains(want), "{text}: {e}");
        }
    }
}
