//! Encode: a resampled clip → a codec blob, by the profile's codec.

use super::prepare::{additive_skeleton, Prepared};
use super::verify::ClipVerification;
use crate::keys::{KeyInput, KeyWriter};
use crate::profile::{CodecChoice, Profile, ShellSettings, ThresholdSettings};
use crate::stage::{CookStage, Stage};
use ludus_anim_cache::Key;
use ludus_anim_compress::{encode_vbr, EncodeError, EncodeSettings};
use ludus_anim_format::codec::CodecId;
use ludus_anim_format::package::FORMAT_VERSION;
use ludus_anim_format::reference;
use ludus_anim_model::Diagnostic;
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::Skeleton;
use ludus_anim_verify::f32_floor;
use std::time::Instant;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Encoded {
    #[serde(with = "codec_id_serde")]
    pub codec: CodecId,
    pub codec_version: u16,
    pub blob: Vec<u8>,
    /// How long the encode took in this cook. Not stored, so an entry is
    /// the same bytes on every machine: 0 when served from the cache.
    #[serde(skip)]
    pub ms: f64,
    /// Segments the encoder's search ran out of budget on (a hostile or
    /// extreme hierarchy): the package holds, but is larger than it needs
    /// to be, and the clip gets a warning.
    #[serde(default)]
    pub budget_exhausted_segments: usize,
    /// The clip's f32 floor (`ludus_anim_verify::f32_floor`), measured
    /// once here and read by verification.
    pub floor_m: f32,
}

/// The encode stage.
pub struct Encode;

/// What encoding's key covers: the prepared clip, the codec and both codec
/// versions, the profile's segment length, thresholds and shells, the
/// encoder slack, whether the clip is additive, and the verify and
/// package stage versions and the package format (every encode is
/// checked through a written package and the verifier,
/// [`encode_prepared`]).
pub struct EncodeSpec<'a> {
    pub prepare: &'a Key,
    pub profile: &'a Profile,
    pub slack: f32,
    pub additive: bool,
}

impl KeyInput for EncodeSpec<'_> {
    fn feed(&self, k: &mut KeyWriter) {
        let EncodeSpec {
            prepare,
            profile,
            slack,
            additive,
        } = self;
        k.put(*prepare)
            .put(&profile.codec)
            .put(&u32::from(CodecId::Vbr.version()))
            .put(&u32::from(CodecId::Reference.version()))
            .put(&profile.max_segment_samples)
            .put(slack)
            .put(&ThresholdSettings(profile))
            .put(&ShellSettings(profile))
            .put(additive)
            .put(&Stage::Verify.version())
            .put(&Stage::Package.version())
            .put(&FORMAT_VERSION);
    }
}

/// The prepared clip, its skeleton, per-joint thresholds and shells, and
/// how to fail and to check an additive encode.
pub struct EncodeInput<'a> {
    pub skeleton: &'a Skeleton,
    pub prepared: &'a Prepared,
    pub thresholds: &'a [f32],
    /// Each joint's resampling error (`ResampleReport::per_joint_m`).
    pub resample_per_joint: &'a [f32],
    pub shells: &'a [f32],
    pub fail: &'a dyn Fn(String) -> Diagnostic,
    pub check: &'a dyn Fn(&Encoded) -> Result<ClipVerification, Diagnostic>,
}

impl CookStage for Encode {
    const STAGE: Stage = Stage::Encode;
    type Spec<'a> = EncodeSpec<'a>;
    type Input<'a> = EncodeInput<'a>;
    type Output = Encoded;

    fn run(spec: &EncodeSpec<'_>, i: EncodeInput<'_>) -> Result<Encoded, Diagnostic> {
        let (t, s) = (i.thresholds, i.shells);
        encode_prepared(
            i.skeleton,
            i.prepared,
            spec.profile,
            t,
            i.resample_per_joint,
            s,
            spec.slack,
            i.fail,
            i.check,
        )
    }
}

/// The least share of a joint's threshold the encoder is given, however
/// much resampling took: below it the codec would spend bits chasing a
/// budget resampling already spent, and the clip is warned instead
/// (`resample_budget`).
pub const MIN_CODEC_SHARE: f32 = 0.25;

/// The encoder's per-joint targets: each joint's threshold less what
/// resampling already costs it against the authored curves, so that
/// codec error + resampling error stays within the threshold at every
/// time (the virtual-vertex distance obeys the triangle inequality:
/// |authored − decoded| ≤ |authored − grid| + |grid − decoded|). Never
/// below [`MIN_CODEC_SHARE`] of the threshold.
pub fn codec_thresholds(thresholds: &[f32], resample_per_joint: &[f32]) -> Vec<f32> {
    thresholds
        .iter()
        .enumerate()
        .map(|(j, &t)| {
            let r = resample_per_joint.get(j).copied().unwrap_or(0.0);
            let left = if r.is_finite() { t - r } else { 0.0 };
            left.max(t * MIN_CODEC_SHARE)
        })
        .collect()
}

/// `thresholds` and `shells` are per joint (meters). `slack` multiplies the
/// thresholds the encoder aims for (1.0 normally; tests raise it to prove
/// that verification catches an encoder that overshoots).
pub fn encode(
    skeleton: &Skeleton,
    clip: &ResampledClip,
    profile: &Profile,
    thresholds: &[f32],
    shells: &[f32],
    slack: f32,
) -> Result<Encoded, EncodeError> {
    let start = Instant::now();
    let (codec, blob, exhausted, floor_m) = match profile.codec {
        CodecChoice::Reference => {
            let floor = f32_floor(skeleton, &clip.samples, clip.num_samples, shells);
            (
                CodecId::Reference,
                reference::encode(&clip.samples),
                0,
                floor,
            )
        }
        CodecChoice::Vbr => {
            let settings = EncodeSettings {
                joint_threshold_m: thresholds.iter().map(|t| t * slack).collect(),
                joint_shell_m: shells.to_vec(),
                max_segment_samples: profile.max_segment_samples,
            };
            let e = encode_vbr(skeleton, clip, &settings)?;
            let stats = e.stats;
            (
                CodecId::Vbr,
                e.blob,
                stats.budget_exhausted_segments,
                stats.floor_m,
            )
        }
    };
    Ok(Encoded {
        codec,
        codec_version: codec.version(),
        blob,
        ms: start.elapsed().as_secs_f64() * 1000.0,
        budget_exhausted_segments: exhausted,
        floor_m,
    })
}

/// How many times a clip is encoded again with tightened targets before
/// it falls back to raw tracks.
const MAX_RETRIES: usize = 4;

/// Encode a prepared clip so that its error against the authored curves
/// stays within each joint's threshold. Each joint first aims at its
/// threshold less its resampling error ([`codec_thresholds`]); the encode
/// is then checked by `check` (a one-clip package decoded through the
/// runtime and measured, as verification does: against the prepared grid
/// and against the authored curves), and the chains of joints still over
/// their thresholds are tightened and encoded again, up to
/// [`MAX_RETRIES`] times; if the codec still cannot meet them, the clip
/// is stored as raw tracks (the reference codec), whose error is the f32
/// floor. Additive clips are encoded against the additive identity (the
/// value the runtime fills stripped tracks with) and checked the way they
/// are used, applied onto their base: an ancestor's delta error moves
/// whole bone lengths once applied. The encode key covers the verify and
/// package versions for this reason. Returns the encode and the check of
/// it, which verification reuses.
#[allow(clippy::too_many_arguments)]
pub fn encode_prepared(
    skeleton: &Skeleton,
    prepared: &Prepared,
    profile: &Profile,
    thresholds: &[f32],
    resample_per_joint: &[f32],
    shells: &[f32],
    slack: f32,
    fail: &dyn Fn(String) -> Diagnostic,
    check: &dyn Fn(&Encoded) -> Result<ClipVerification, Diagnostic>,
) -> Result<Encoded, Diagnostic> {
    let clip = &prepared.clip;
    let target = if prepared.additive.is_some() {
        additive_skeleton(skeleton).map_err(|e| fail(e.to_string()))?
    } else {
        skeleton.clone()
    };
    let mut aim = codec_thresholds(thresholds, resample_per_joint);
    for attempt in 0..=MAX_RETRIES {
        let e = match encode(&target, clip, profile, &aim, shells, slack) {
            Ok(e) => e,
            // A tightened target the codec cannot reach: raw tracks.
            Err(_) if attempt > 0 => break,
            Err(e) => return Err(fail(e.to_string())),
        };
        // A raised slack is a test's deliberately overshooting encoder.
        if slack != 1.0 || profile.codec == CodecChoice::Reference {
            return Ok(e);
        }
        let v = check(&e)?;
        let over = over_joints(&v, thresholds, resample_per_joint);
        if over.iter().all(|o| o.is_none()) {
            return Ok(e);
        }
        if attempt < MAX_RETRIES {
            tighten(skeleton, &mut aim, thresholds, &over);
        }
    }
    let raw = Profile {
        codec: CodecChoice::Reference,
        ..profile.clone()
    };
    encode(&target, clip, &raw, &aim, shells, slack).map_err(|e| fail(e.to_string()))
}

/// Each joint's error over its threshold that a tighter encode can still
/// bring within it: the larger of its codec error (decoded against the
/// prepared grid, at any time) and its error against the authored curves,
/// plus the clip's f32 floor (as the report states them), where that is
/// over the threshold and a perfect encode would not be (`None`
/// otherwise).
fn over_joints(v: &ClipVerification, thresholds: &[f32], resample: &[f32]) -> Vec<Option<f32>> {
    let floor = v.floor_m;
    thresholds
        .iter()
        .enumerate()
        .map(|(j, &t)| {
            let codec = v.codec.per_joint_max_m.get(j).copied().unwrap_or(0.0);
            let source = v.source_per_joint_m.get(j).copied().unwrap_or(0.0);
            let r = resample.get(j).copied().unwrap_or(0.0);
            // More than resampling and the codec can explain (the triangle
            // inequality, with 1% for the two measurements' differing
            // times): a STEP key between samples, which no encode fixes.
            let explained = source <= (r + codec) * 1.01 + floor;
            let e = if explained { codec.max(source) } else { codec } + floor;
            // The least a perfect encode could reach: resampling's error,
            // or what is left of the measured error without the codec's.
            let best = if explained {
                r.max(source - codec)
            } else {
                0.0
            } + floor;
            (e.is_nan() || (e > t && best < t)).then_some(e)
        })
        .collect()
}

/// Scale each overshooting joint's chain (the joint and its ancestors) by
/// how far it is over, with a margin, so one or two passes settle it.
fn tighten(skeleton: &Skeleton, aim: &mut [f32], thresholds: &[f32], over: &[Option<f32>]) {
    let mut factor = vec![1.0f32; aim.len()];
    for (j, err) in over.iter().enumerate() {
        if let Some(err) = *err {
            let f = if err.is_finite() {
                0.9 * thresholds[j] / err
            } else {
                0.5
            };
            let mut a = Some(j);
            while let Some(i) = a {
                factor[i] = factor[i].min(f);
                a = skeleton.parent(i);
            }
        }
    }
    for (a, f) in aim.iter_mut().zip(factor) {
        *a *= f;
    }
}

/// `CodecId` lives in the runtime, which has no serde by default.
mod codec_id_serde {
    use ludus_anim_format::codec::CodecId;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(c: &CodecId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u16(*c as u16)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CodecId, D::Error> {
        let v = u16::deserialize(d)?;
        CodecId::from_u16(v).ok_or_else(|| serde::de::Error::custom(format!("unknown codec {v}")))
    }
}
