//! Variable-bit-rate codec decoder (being written; see compress/).

use super::CodecError;
use crate::math::Transform;
use crate::timing::SamplePosition;

pub const VERSION: u16 = 1;

#[derive(Clone, Copy, Debug)]
pub struct VbrClip<'a> {
    _blob: &'a [u8],
}

impl<'a> VbrClip<'a> {
    pub fn parse(
        _blob: &'a [u8],
        _joint_count: usize,
        _num_samples: u32,
    ) -> Result<VbrClip<'a>, CodecError> {
        Err(CodecError::Invalid {
            what: "vbr decoder not built yet",
        })
    }

    pub fn decode_pose(
        &self,
        _pos: SamplePosition,
        _defaults: &[Transform],
        _out: &mut [Transform],
    ) -> bool {
        false
    }
}
