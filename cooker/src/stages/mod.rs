//! The pipeline's stages, each a plain function from validated inputs to
//! outputs, in data-flow order: import → normalize → resample → prepare →
//! encode → package → verify. These are the seams the stage cache keys on.

pub mod encode;
pub mod normalize;
pub mod prepare;
pub mod resample;
pub mod verify;
