//! Clip codecs. A codec blob is validated once ([`ClipCodec::parse`]);
//! decoding then reads only through the validated view, writes into
//! caller-owned buffers and never allocates or panics.

pub(crate) mod reference;
#[cfg(test)]
mod subset_tests;
pub(crate) mod vbr;

use crate::math::Transform;
use crate::timing::SamplePosition;

pub(crate) use ludus_anim_format::codec::CodecId;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CodecError {
    #[error("codec blob truncated: {what}")]
    Truncated { what: &'static str },
    #[error("codec blob invalid: {what}")]
    Invalid { what: &'static str },
    #[error("codec {codec} version {found} is not supported (this runtime reads {expected})")]
    Version {
        codec: &'static str,
        found: u16,
        expected: u16,
    },
    #[error("unknown codec id {0}")]
    UnknownCodec(u16),
}

/// A validated codec blob of either kind.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ClipCodec<'a> {
    Reference(reference::ReferenceClip<'a>),
    Vbr(vbr::VbrClip<'a>),
}

impl<'a> ClipCodec<'a> {
    pub(crate) fn parse(
        codec: CodecId,
        version: u16,
        blob: &'a [u8],
        joint_count: usize,
        num_samples: u32,
    ) -> Result<ClipCodec<'a>, CodecError> {
        if version != codec.version() {
            return Err(CodecError::Version {
                codec: codec.name(),
                found: version,
                expected: codec.version(),
            });
        }
        Ok(match codec {
            CodecId::Reference => ClipCodec::Reference(reference::ReferenceClip::parse(
                blob,
                joint_count,
                num_samples,
            )?),
            CodecId::Vbr => ClipCodec::Vbr(vbr::VbrClip::parse(blob, joint_count, num_samples)?),
        })
    }

    /// Decode every joint at `pos`. `defaults` is the skeleton rest pose
    /// (the value of tracks a codec stored as default). `out.len()` must be
    /// the joint count; returns false and leaves `out` untouched otherwise.
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    #[inline]
    pub(crate) fn decode_pose(
        &self,
        pos: SamplePosition,
        defaults: &[Transform],
        out: &mut [Transform],
    ) -> bool {
        match self {
            ClipCodec::Reference(c) => c.decode_pose(pos, out),
            ClipCodec::Vbr(c) => c.decode_pose(pos, defaults, out),
        }
    }

    /// An empty [`vbr::TrackCache`] for this clip (no entries for the
    /// reference codec, which has no segments to cache).
    pub(crate) fn track_cache(&self) -> vbr::TrackCache<'a> {
        match self {
            ClipCodec::Reference(_) => vbr::TrackCache::default(),
            ClipCodec::Vbr(c) => vbr::TrackCache::new(c),
        }
    }

    /// A [`vbr::TrackCache`] for this clip over `entries`, memory the
    /// caller placed (see [`vbr::TrackCache::with_entries`]).
    pub(crate) fn track_cache_in<S: AsMut<[vbr::CachedTrack]>>(
        &self,
        entries: S,
    ) -> vbr::TrackCache<'a, S> {
        match self {
            ClipCodec::Reference(_) => vbr::TrackCache::unfit(entries),
            ClipCodec::Vbr(c) => vbr::TrackCache::with_entries(c, entries),
        }
    }

    /// How many entries a [`vbr::TrackCache`] of this clip uses (its
    /// animated tracks; none for the reference codec).
    pub(crate) fn track_cache_len(&self) -> usize {
        match self {
            ClipCodec::Reference(_) => 0,
            ClipCodec::Vbr(c) => c.animated_track_count(),
        }
    }

    /// The pose a playing clip decodes from (a [`crate::Player`] keeps
    /// it): every track that is not animated, as decoding outputs it. Compute once per clip
    /// and `defaults`. False if a length is wrong.
    #[must_use = "false means nothing was written: a length, a joint or the time was out of range"]
    #[inline]
    pub(crate) fn static_pose(&self, defaults: &[Transform], out: &mut [Transform]) -> bool {
        match self {
            ClipCodec::Reference(c) => {
                out.len() == defaults.len()
                    && c.decode_pose(
                        SamplePosition {
                            i0: 0,
                            i1: 0,
                            alpha: 0.0,
                        },
                        out,
                    )
            }
            ClipCodec::Vbr(c) => c.static_pose(defaults, out),
        }
    }
}
