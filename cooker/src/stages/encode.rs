//! Encode: a resampled clip → a codec blob, by the profile's codec.

use crate::profile::{CodecChoice, Profile};
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
            let _ = (skeleton, thresholds, shells, slack);
            return Err(EncodeError::Unavailable);
        }
    };
    Ok(Encoded {
        codec,
        codec_version: codec.version(),
        blob,
        ms: start.elapsed().as_secs_f64() * 1000.0,
    })
}

#[derive(Debug, thiserror::Error)]
pub enum EncodeError {
    #[error("vbr encoder unavailable")]
    Unavailable,
}
