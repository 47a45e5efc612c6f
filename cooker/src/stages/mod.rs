//! The pipeline's stages, each a plain function from validated inputs to
//! outputs, in data-flow order: import → normalize → resample → prepare →
//! encode → verify → package, with retarget after normalize for retargeted
//! assets (`crate::stage::Stage` lists them; `keys`
//! derives what each is cached under).

pub mod bind;
pub mod encode;
pub mod import;
pub mod normalize;
pub mod package;
pub mod prepare;
pub mod resample;
pub mod retarget;

pub mod verify;

use crate::stage::{fingerprint_of, Fingerprint};
use ludus_anim_model::ResampledClip;

// What each stage's output fingerprint covers (the golden stage-output
// guard compares them): the deterministic content, never timings.

impl Fingerprint for import::Imported {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for retarget::RetargetedAsset {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for normalize::Normalized {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for normalize::Ingested {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for (ResampledClip, resample::ResampleReport) {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for prepare::PreparedClip {
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(self)
    }
}
impl Fingerprint for encode::Encoded {
    /// The blob and its codec, not the time it took.
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(&(self.codec as u16, self.codec_version, &self.blob))
    }
}
impl Fingerprint for verify::ClipVerification {
    /// The measured errors, not the decode timing.
    fn fingerprint(&self) -> [u8; 32] {
        fingerprint_of(&(&self.codec, self.source_error_m))
    }
}
