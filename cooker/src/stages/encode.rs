//! Encode: a resampled clip → a codec blob, by the profile's codec.

use crate::profile::{CodecChoice, Profile};
use ludus_anim_compress::{encode_vbr, EncodeError, EncodeSettings};
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::codec::{reference, CodecId};
use ludus_anim_runtime::Skeleton;
use std::time::Instant;

#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Encoded {
    #[serde(with = "codec_id_serde")]
    pub codec: CodecId,
    pub codec_version: u16,
    pub blob: Vec<u8>,
    pub ms: f64,
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
    let (codec, blob) = match profile.codec {
        CodecChoice::Reference => (CodecId::Reference, reference::encode(&clip.samples)),
        CodecChoice::Vbr => {
            let settings = EncodeSettings {
                joint_threshold_m: thresholds.iter().map(|t| t * slack).collect(),
                joint_shell_m: shells.to_vec(),
                max_segment_samples: profile.max_segment_samples,
            };
            (CodecId::Vbr, encode_vbr(skeleton, clip, &settings)?.blob)
        }
    };
    Ok(Encoded {
        codec,
        codec_version: codec.version(),
        blob,
        ms: start.elapsed().as_secs_f64() * 1000.0,
    })
}

/// `CodecId` lives in the runtime, which has no serde by default.
mod codec_id_serde {
    use ludus_anim_runtime::codec::CodecId;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(c: &CodecId, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u16(*c as u16)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<CodecId, D::Error> {
        let v = u16::deserialize(d)?;
        CodecId::from_u16(v).ok_or_else(|| serde::de::Error::custom(format!("unknown codec {v}")))
    }
}
