//! Encode: a resampled clip → a codec blob, by the profile's codec.

use crate::profile::{CodecChoice, Profile};
use ludus_anim_compress::{encode_vbr, EncodeError, EncodeSettings};
use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::codec::{reference, CodecId};
use ludus_anim_runtime::Skeleton;
use std::time::Instant;

pub struct Encoded {
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
