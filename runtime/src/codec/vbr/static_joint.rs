//! Static joints of a packed walk ([`super::StaticTracks`]): a joint
//! without animated tracks has one of the eight layouts `static_tracks`
//! writes (rotation stored or not, translation, scale), and each layout
//! is compiled on its own, so the joint costs one dispatch on its type
//! byte, its loads and its stores, instead of a select per track over
//! values read whether stored or not. Most joints of a large rig are
//! static and alike (zombieWalk1: 56 of 75 joints, nearly all a
//! translation alone). The values are those of [`VbrClip::packed_static`],
//! bit for bit (the same bytes; the identity's value where nothing is
//! stored).

use super::simd::{load_f32x3, read_u32};
use super::VbrClip;
use crate::math::{Quat, Transform, Vec3};

/// Packed kinds of a static joint's tracks: rotation full (bits 0-1 = 3),
/// translation and scale constant (bits 2-3, 4-5 = 1).
const ROTATION: u8 = 0b00_00_11;
const TRANSLATION: u8 = 0b00_01_00;
const SCALE: u8 = 0b01_00_00;

impl<'a> VbrClip<'a> {
    /// A static joint of packed type byte `t` (no animated kind), its
    /// values read at `at` (advanced): one of the eight layouts
    /// `static_tracks` writes, each compiled on its own.
    #[inline(always)]
    pub(super) fn packed_joint(&self, at: &mut usize, t: u8) -> Transform {
        const R: u8 = ROTATION;
        const T: u8 = TRANSLATION;
        const S: u8 = SCALE;
        match t {
            0 => Transform::IDENTITY,
            R => self.joint::<true, false, false>(at),
            T => self.joint::<false, true, false>(at),
            0b00_01_11 => self.joint::<true, true, false>(at),
            S => self.joint::<false, false, true>(at),
            0b01_00_11 => self.joint::<true, false, true>(at),
            0b01_01_00 => self.joint::<false, true, true>(at),
            0b01_01_11 => self.joint::<true, true, true>(at),
            // Not a type byte `static_tracks` writes for a static joint.
            _ => self.packed_static(at, t),
        }
    }

    /// A joint whose rotation (`R`), translation (`T`) and scale (`S`)
    /// are stored at `at` (advanced past them).
    #[inline(always)]
    fn joint<const R: bool, const T: bool, const S: bool>(&self, at: &mut usize) -> Transform {
        let v = self.constants;
        let id = Transform::IDENTITY;
        let mut a = *at;
        let rotation = if R {
            let xyz = load_f32x3(v, a);
            let w = f32::from_bits(read_u32(v, a + 12));
            a += 16;
            Quat::from_xyzw(xyz.x, xyz.y, xyz.z, w)
        } else {
            id.rotation
        };
        let translation = if T {
            let x = Vec3::from(load_f32x3(v, a));
            a += 12;
            x
        } else {
            id.translation
        };
        let scale = if S {
            let x = Vec3::from(load_f32x3(v, a));
            a += 12;
            x
        } else {
            id.scale
        };
        *at = a;
        Transform {
            rotation,
            translation,
            scale,
        }
    }
}
