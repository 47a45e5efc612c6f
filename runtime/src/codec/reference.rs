//! The uncompressed reference codec: `num_samples * joint_count` records of
//! ten little-endian f32 (rotation x y z w, translation x y z, scale x y z),
//! sample-major. Kept for fixtures, diagnostics and as the baseline every
//! other codec is measured against.

use super::CodecError;
use crate::math::{interpolate, Quat, Transform, Vec3};
use crate::timing::SamplePosition;

use ludus_anim_format::reference::RECORD_BYTES;

#[derive(Clone, Copy, Debug)]
pub(crate) struct ReferenceClip<'a> {
    data: &'a [u8],
    joint_count: usize,
    num_samples: u32,
}

impl<'a> ReferenceClip<'a> {
    pub(crate) fn parse(
        blob: &'a [u8],
        joint_count: usize,
        num_samples: u32,
    ) -> Result<ReferenceClip<'a>, CodecError> {
        let need = (num_samples as usize)
            .checked_mul(joint_count)
            .and_then(|n| n.checked_mul(RECORD_BYTES))
            .ok_or(CodecError::Invalid {
                what: "sample count overflows",
            })?;
        if blob.len() < need {
            return Err(CodecError::Truncated {
                what: "reference samples",
            });
        }
        if blob.len() > need {
            return Err(CodecError::Invalid {
                what: "reference blob has trailing bytes",
            });
        }
        Ok(ReferenceClip {
            data: blob,
            joint_count,
            num_samples,
        })
    }

    /// The stored transform of `joint` at `sample` (both in range by the
    /// caller's contract; out-of-range indices return identity).
    #[inline]
    pub(crate) fn sample(&self, sample: u32, joint: usize) -> Transform {
        let at = (sample as usize * self.joint_count + joint) * RECORD_BYTES;
        let Some(rec) = self.data.get(at..at + RECORD_BYTES) else {
            return Transform::IDENTITY;
        };
        let f = |i: usize| {
            let mut b = [0u8; 4];
            b.copy_from_slice(&rec[i * 4..i * 4 + 4]);
            f32::from_le_bytes(b)
        };
        Transform {
            rotation: Quat::from_xyzw(f(0), f(1), f(2), f(3)),
            translation: Vec3::new(f(4), f(5), f(6)),
            scale: Vec3::new(f(7), f(8), f(9)),
        }
    }

    /// Decode only `joints` into `out` (same length).
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    pub(crate) fn decode_joints(
        &self,
        pos: SamplePosition,
        joints: &[u32],
        out: &mut [Transform],
    ) -> bool {
        if out.len() != joints.len()
            || joints.iter().any(|&j| j as usize >= self.joint_count)
            || pos.i0 >= self.num_samples
            || pos.i1 >= self.num_samples
        {
            return false;
        }
        for (o, &j) in out.iter_mut().zip(joints) {
            let a = self.sample(pos.i0, j as usize);
            *o = if pos.alpha == 0.0 {
                a
            } else {
                interpolate(&a, &self.sample(pos.i1, j as usize), pos.alpha)
            };
        }
        true
    }

    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    #[inline]
    pub(crate) fn decode_pose(&self, pos: SamplePosition, out: &mut [Transform]) -> bool {
        if out.len() != self.joint_count || pos.i0 >= self.num_samples || pos.i1 >= self.num_samples
        {
            return false;
        }
        for (j, o) in out.iter_mut().enumerate() {
            let a = self.sample(pos.i0, j);
            *o = if pos.alpha == 0.0 {
                a
            } else {
                interpolate(&a, &self.sample(pos.i1, j), pos.alpha)
            };
        }
        true
    }
}
