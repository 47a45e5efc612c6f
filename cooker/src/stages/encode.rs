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
/// encoder slack; for additive clips also the verify and package stage
/// versions and the package format (their encode is checked applied onto
/// its base through a written package and the verifier).
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
            .put(&ShellSettings(profile));
        if *additive {
            k.put(&Stage::Verify.version())
                .put(&Stage::Package.version())
                .put(&FORMAT_VERSION);
        }
    }
}

/// The prepared clip, its skeleton, per-joint thresholds and shells, and
/// how to fail and to check an additive encode.
pub struct EncodeInput<'a> {
    pub skeleton: &'a Skeleton,
    pub prepared: &'a Prepared,
    pub thresholds: &'a [f32],
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
            s,
            spec.slack,
            i.fail,
            i.check,
        )
    }
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

/// Encode a prepared clip. Additive clips are encoded against the additive
/// identity (the value the runtime fills stripped tracks with) and then
/// checked the way they are used, applied onto their base, by `check` (a
/// one-clip package decoded through the runtime and measured): the search
/// measures deltas as poses, and an ancestor's delta error moves whole bone
/// lengths once applied, so the chains that overshoot are tightened and
/// encoded again, up to six times. (The encode key covers the verify and
/// package versions for additive clips for this reason.)
#[allow(clippy::too_many_arguments)]
pub fn encode_prepared(
    skeleton: &Skeleton,
    prepared: &Prepared,
    profile: &Profile,
    thresholds: &[f32],
    shells: &[f32],
    slack: f32,
    fail: &dyn Fn(String) -> Diagnostic,
    check: &dyn Fn(&Encoded) -> Result<ClipVerification, Diagnostic>,
) -> Result<Encoded, Diagnostic> {
    let clip = &prepared.clip;
    if prepared.additive.is_none() {
        return encode(skeleton, clip, profile, thresholds, shells, slack)
            .map_err(|e| fail(e.to_string()));
    }
    let target = additive_skeleton(skeleton).map_err(|e| fail(e.to_string()))?;
    let mut aim = thresholds.to_vec();
    let mut attempt = 0;
    loop {
        let e =
            encode(&target, clip, profile, &aim, shells, slack).map_err(|e| fail(e.to_string()))?;
        if slack != 1.0 || attempt == 6 {
            return Ok(e);
        }
        let v = check(&e)?;
        if v.codec.violations.is_empty() {
            return Ok(e);
        }
        tighten(skeleton, &mut aim, thresholds, &v.codec.per_joint_max_m);
        attempt += 1;
    }
}

/// Scale each overshooting joint's chain (the joint and its ancestors) by
/// how far it is over, with a margin, so one or two passes settle it.
fn tighten(skeleton: &Skeleton, aim: &mut [f32], thresholds: &[f32], per_joint_max: &[f32]) {
    let mut factor = vec![1.0f32; aim.len()];
    for (j, &err) in per_joint_max.iter().enumerate() {
        if err > thresholds[j] {
            let f = 0.9 * thresholds[j] / err;
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
