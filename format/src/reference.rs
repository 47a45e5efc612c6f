//! The reference codec's layout: one record of ten little-endian f32 per
//! joint and sample (rotation xyzw, translation xyz, scale xyz), and its
//! encoder.

use crate::math::Transform;

/// Layout version.
pub const VERSION: u16 = 1;
/// Bytes of one joint's record in one sample.
pub const RECORD_BYTES: usize = 40;

/// Serialize poses in the reference layout (the cooker's encoder for this
/// codec; it lives here so layout and reader cannot drift apart).
pub fn encode(samples: &[Transform]) -> Vec<u8> {
    let mut out = Vec::with_capacity(samples.len() * RECORD_BYTES);
    for t in samples {
        for v in t.to_array() {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
    out
}
