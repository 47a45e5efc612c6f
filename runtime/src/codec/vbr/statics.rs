//! [`StaticTracks`]: a clip's tracks that are not animated, packed once
//! when the clip is bound to its defaults, so that a whole-pose decode
//! reads only the values that are not the identity's instead of a 40-byte
//! static pose entry per joint.
//!
//! A cold whole-pose decode costs about one wait per cache line it reads
//! (measured with cachegrind over thousands of copies in rotation, ACL's
//! method: on the Knight's 31 joints the static pose copy was 27 of the
//! decode's 42 line misses). Most non-animated tracks hold the identity's
//! value (scale one, translation zero, rotation identity), and those need
//! no bytes at all: they are what an output slot starts from. The rest,
//! the constants and the defaults that are not the identity, are packed in
//! decode order, 12 bytes a vector and 16 a rotation (already normalized,
//! so a constant rotation costs no work either).
//!
//! The packed form reuses the blob's own layout for its type bytes and
//! constants (the kinds of animated tracks are unchanged, so the clip
//! ranges and segment data are read as usual); only the meaning of
//! "default" differs: the identity's value, not the defaults'.
//!
//! Adapted idea (Nicholas Frechette, Animation Compression Library): ACL
//! keeps constant tracks in the clip and writes default tracks without
//! reading anything, so a pose reads only what is not implied. Here that
//! is done at bind time over our own layout; no ACL code or layout.

use super::format::{KIND_ANIMATED, KIND_CONSTANT, KIND_CONSTANT_FULL, KIND_DEFAULT};
use super::VbrClip;
use crate::math::Transform;

/// Bytes after the packed values so that every 16-byte load at or after
/// the last value stays inside them (the decoder reads a joint's tracks
/// whether they are stored or not, and selects).
const VALUE_PADDING: usize = 16;

/// A clip's packed non-animated tracks (see the module documentation).
/// Built by [`VbrClip::static_tracks`] for one clip and one set of
/// defaults, and borrowing that clip's type bytes: a decode accepts it
/// only for the clip it was built from (`VbrClip::with_statics`), and
/// every packed value it yields is still bounds-checked when read.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct StaticTracks<'a> {
    shape: (usize, usize, u32, usize),
    /// The type bytes of the clip it was built from. Borrowed, so they
    /// cannot change while it lives: a decode checks that its clip's type
    /// bytes are these very bytes (the same address and length), which
    /// ties the animated kinds of `types` to the clip's without reading
    /// the clip's (comparing them byte by byte read a cold line before
    /// each pose, and cost a cold packed pose 19-25% on zombieWalk1 and
    /// CMU 01_01).
    origin: &'a [u8],
    /// Per joint, the blob's type byte with each non-animated kind
    /// rewritten: default (the identity's value), constant (a vector, 12
    /// bytes) or full constant (a rotation, 16 bytes). The animated kinds
    /// are `origin`'s; nothing changes these bytes after `static_tracks`.
    pub(super) types: Vec<u8>,
    /// The values, in joint and track order, then the padding.
    pub(super) values: Vec<u8>,
}

impl StaticTracks<'_> {
    /// Bytes it holds.
    pub(crate) fn heap_bytes(&self) -> usize {
        self.types.len() + self.values.len()
    }

    /// Whether it was built from this clip: the same shape, and the
    /// clip's type bytes are the very bytes it was built from.
    #[inline(always)]
    fn fits(&self, clip: &VbrClip<'_>) -> bool {
        self.shape == super::index::shape(clip) && std::ptr::eq(self.origin, clip.types)
    }
}

fn push_f32s(values: &mut Vec<u8>, v: &[f32]) {
    for x in v {
        values.extend_from_slice(&x.to_le_bytes());
    }
}

fn same_bits(a: &[f32], b: &[f32]) -> bool {
    a.iter().zip(b).all(|(x, y)| x.to_bits() == y.to_bits())
}

impl<'a> VbrClip<'a> {
    /// Pack the clip's non-animated tracks for `defaults` (the skeleton
    /// rest pose, as given to [`VbrClip::decode_pose`]). Allocates (once,
    /// when the clip is bound). None if `defaults` has the wrong length.
    pub(crate) fn static_tracks(&self, defaults: &[Transform]) -> Option<StaticTracks<'a>> {
        let mut pose = vec![Transform::IDENTITY; self.joint_count];
        if !self.static_pose(defaults, &mut pose) {
            return None;
        }
        let id = Transform::IDENTITY;
        let mut types = Vec::with_capacity(self.joint_count);
        let mut values = Vec::new();
        for (&t, p) in self.types.iter().zip(&pose) {
            let mut packed = 0u8;
            let tracks: [(&[f32], &[f32], u8); 3] = [
                (
                    &p.rotation.to_array(),
                    &id.rotation.to_array(),
                    KIND_CONSTANT_FULL,
                ),
                (
                    &p.translation.to_array(),
                    &id.translation.to_array(),
                    KIND_CONSTANT,
                ),
                (&p.scale.to_array(), &id.scale.to_array(), KIND_CONSTANT),
            ];
            for (k, (v, identity, kind)) in tracks.into_iter().enumerate() {
                let kind = if (t >> (2 * k)) & 3 == KIND_ANIMATED {
                    KIND_ANIMATED
                } else if same_bits(v, identity) {
                    KIND_DEFAULT
                } else {
                    push_f32s(&mut values, v);
                    kind
                };
                packed |= kind << (2 * k);
            }
            types.push(packed);
        }
        values.resize(values.len() + VALUE_PADDING, 0);
        Some(StaticTracks {
            shape: super::index::shape(self),
            origin: self.types,
            types,
            values,
        })
    }

    /// The view a packed decode walks: this clip with `st`'s type bytes
    /// and values in place of its own. None unless `st` was built from
    /// this clip (`StaticTracks::fits`): the animated kinds are then the
    /// clip's, so every other offset is unchanged, and the walk may load
    /// the clip's data unchecked as it does over the clip's own type
    /// bytes. This is the only way to make a packed view.
    #[inline(always)]
    pub(super) fn with_statics<'s>(&self, st: &'s StaticTracks<'_>) -> Option<VbrClip<'s>>
    where
        'a: 's,
    {
        st.fits(self).then_some(VbrClip {
            types: &st.types,
            constants: &st.values,
            ..*self
        })
    }
}
