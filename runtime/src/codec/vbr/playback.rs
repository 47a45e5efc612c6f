//! [`TrackCache`]: what a playing instance keeps of the segment it plays,
//! so that the next whole pose in that segment reads only the two sample
//! rows (and the type bytes and the base pose) instead of re-deriving each
//! animated track's reconstruction from its rate byte, clip range and
//! segment range entry.
//!
//! Per animated track it holds 32 bytes: the segment's bias and scale
//! (`bias = cmin + cext * lo * k`, `scale = cext * hi / 255`), the field
//! reciprocal, the field width, the stored components and the track's bit
//! offset inside a sample row. They are computed by the very functions the
//! uncached decode calls, and a cached decode applies them with the same
//! operations, so both give the same bits. The cache is filled when a
//! whole pose lands in another segment (a clip of 15-sample segments
//! played forward refills it once every 15 samples); a blend across a
//! segment boundary decodes uncached and leaves it as it is.
//!
//! Adapted idea: Guillaume Blanc, ozz-animation, `SamplingJob::Context`
//! (a per-instance cache of what the previous sampling decoded, so that
//! playback does not decode it again), and the "playback without
//! re-deriving segment state" #17 asks for. What is cached and how is
//! ours; no code taken.

use super::VbrClip;
use crate::math::Vec3A;
use glam::Vec4;
use std::cell::Cell;

/// Bits of [`CachedTrack`]'s meta word holding the row offset: a cache
/// is only filled for clips whose sample rows are shorter than 2^23 bits
/// (1 MiB; an anchor clip's rows are at most a few hundred bytes).
const OFF_BITS: u32 = 23;
const OFF_MASK: u32 = (1 << OFF_BITS) - 1;
const FIELD_SHIFT: u32 = OFF_BITS;
const RAW_BIT: u32 = 1 << 28;
const STORED_SHIFT: u32 = 29;

/// `v` with lane w set to `w`, the lanes moved as they are (glam's
/// `extend` rebuilds the vector lane by lane).
#[inline(always)]
fn with_w(v: Vec3A, w: f32) -> Vec4 {
    #[cfg(target_arch = "x86_64")]
    let mut r = Vec4::from(core::arch::x86_64::__m128::from(v));
    #[cfg(not(target_arch = "x86_64"))]
    let mut r = Vec4::new(v.x, v.y, v.z, 0.0);
    r.w = w;
    r
}

/// Whether every track's offset in a row of `row_bits` bits fits an entry.
#[inline(always)]
pub(super) fn row_fits(row_bits: usize) -> bool {
    row_bits <= OFF_MASK as usize
}

/// One entry of a [`TrackCache`]: an animated track's reconstruction in
/// the cached segment, two 16-byte rows loaded as they are. Opaque; make
/// room for them with [`CachedTrack::EMPTY`] (`[CachedTrack::EMPTY; N]`).
#[derive(Clone, Copy, Debug, Default)]
#[repr(C, align(16))]
pub(crate) struct CachedTrack {
    /// Bias x, y, z; w: `1 / (2^field - 1)`.
    lo: Vec4,
    /// Scale x, y, z; w: the bits of the meta word (row offset, field
    /// width, raw flag, stored components).
    hi: Vec4,
}

impl CachedTrack {
    /// An entry that holds nothing yet.
    pub(crate) const EMPTY: CachedTrack = CachedTrack {
        lo: Vec4::ZERO,
        hi: Vec4::ZERO,
    };

    /// The entry of a track with parameters `p` at bit `off` of a row
    /// (which [`row_fits`] the meta word, so `off` does too).
    #[inline(always)]
    pub(super) fn new(p: &TrackParams, off: usize) -> CachedTrack {
        let raw = if p.bits == 32 { RAW_BIT } else { 0 };
        let meta =
            (off as u32 & OFF_MASK) | (p.field << FIELD_SHIFT) | raw | (p.stored << STORED_SHIFT);
        CachedTrack {
            lo: with_w(p.bias, p.inv),
            hi: with_w(p.scale, f32::from_bits(meta)),
        }
    }

    /// The track's parameters and its bit offset inside a row.
    #[inline(always)]
    pub(super) fn params(&self) -> (TrackParams, usize) {
        let meta = self.hi.w.to_bits();
        let field = (meta >> FIELD_SHIFT) & 31;
        let p = TrackParams {
            bits: if meta & RAW_BIT != 0 { 32 } else { field },
            field,
            stored: meta >> STORED_SHIFT,
            bias: Vec3A::from_vec4(self.lo),
            scale: Vec3A::from_vec4(self.hi),
            inv: self.lo.w,
        };
        (p, (meta & OFF_MASK) as usize)
    }
}

/// A playing instance's cache of one clip's segment state (see the module
/// documentation). Made once per instance for its clip; decodes never
/// allocate. Its entries (`S`, 32 bytes per animated track) lie where the
/// caller puts them: [`TrackCache::new`] allocates them, and
/// [`TrackCache::with_entries`] takes memory the caller placed, such as an
/// array inside the instance's own struct next to its
/// [`crate::DecodeContext`], so that one instance's decode state shares
/// its pages wherever the instance lives. A decode prefetches the entries
/// before it locates the segment, so they are fetched alongside the
/// clip's segment table rather than after it
/// (`docs/perf/vbr-decode-history.md` measures both layouts). It borrows
/// the clip's sections: a decode uses it only for the clip it was made
/// for (the same sections, by address),
/// and only for the segment it was filled for; otherwise the pose is
/// decoded without it.
#[derive(Clone, Debug)]
pub(crate) struct TrackCache<'a, S = Vec<CachedTrack>> {
    state: CacheState<'a>,
    entries: S,
}

/// What a [`TrackCache`] knows besides its entries.
#[derive(Clone, Copy, Debug)]
pub(super) struct CacheState<'a> {
    /// The view of the clip it was made for. Its sections are borrowed,
    /// so they cannot change while the cache lives; with the counts and
    /// the segment table's shape they fix every entry (the animated
    /// tracks' order and kinds, their stored components, rate bytes and
    /// range entries, and which block a segment index names).
    origin: Option<VbrClip<'a>>,
    /// The segment the tracks hold, or `u32::MAX` (none yet).
    segment: u32,
    /// The segment of the last pose decoded through it (`u32::MAX`: none).
    last: u32,
}

impl<'a> CacheState<'a> {
    fn new(origin: Option<VbrClip<'a>>) -> CacheState<'a> {
        CacheState {
            origin,
            segment: u32::MAX,
            last: u32::MAX,
        }
    }
}

impl<'a> TrackCache<'a> {
    /// An empty cache for `clip`, its entries allocated here.
    pub(crate) fn new(clip: &VbrClip<'a>) -> TrackCache<'a> {
        TrackCache::with_entries(clip, vec![CachedTrack::EMPTY; clip.animated as usize])
    }
}

impl<'a, S: AsMut<[CachedTrack]>> TrackCache<'a, S> {
    /// An empty cache for `clip` whose entries are `entries`, memory the
    /// caller placed (an array in the instance's struct, a slice of an
    /// arena). It needs [`VbrClip::animated_track_count`] entries and uses the
    /// first that many; with fewer, decodes through it run uncached.
    pub(crate) fn with_entries(clip: &VbrClip<'a>, entries: S) -> TrackCache<'a, S> {
        TrackCache {
            state: CacheState::new(Some(*clip)),
            entries,
        }
    }

    /// A cache over `entries` that fits no clip (decodes through it run
    /// uncached): for a clip whose codec has no segments to cache.
    pub(crate) fn unfit(entries: S) -> TrackCache<'a, S> {
        TrackCache {
            state: CacheState::new(None),
            entries,
        }
    }

    /// The cache as the decode takes it: its state and exactly as many
    /// entries as its clip has animated tracks (none if it has fewer).
    #[inline(always)]
    pub(crate) fn view(&mut self) -> CacheView<'_, 'a> {
        let n = self
            .state
            .origin
            .as_ref()
            .map_or(0, |o| o.animated as usize);
        CacheView {
            state: &mut self.state,
            tracks: self.entries.as_mut().get_mut(..n).unwrap_or_default(),
        }
    }

    /// Its entries' memory, returned to the caller.
    pub(crate) fn into_entries(self) -> S {
        self.entries
    }
}

#[cfg(test)]
impl<S> TrackCache<'_, S> {
    /// The segment whose entries it holds, if any.
    pub(super) fn held(&self) -> Option<u32> {
        (self.state.segment != u32::MAX).then_some(self.state.segment)
    }
}

impl Default for TrackCache<'_> {
    /// A cache that fits no clip (decodes through it run uncached).
    fn default() -> Self {
        TrackCache::unfit(Vec::new())
    }
}

/// A [`TrackCache`] borrowed for one decode: its state and its entries,
/// whatever memory holds them.
pub(crate) struct CacheView<'r, 'a> {
    state: &'r mut CacheState<'a>,
    tracks: &'r mut [CachedTrack],
}

impl CacheView<'_, '_> {
    /// Whether it was made for `clip`: the same counts and segment table
    /// shape, and the very sections (by address and length) it was made
    /// from.
    pub(super) fn fits(&self, clip: &VbrClip<'_>) -> bool {
        let Some(o) = &self.state.origin else {
            return false;
        };
        // Every difference or-ed into one word, tested once (a chain of
        // `&&` compiled to a branch per field).
        let d =
            |a: &[u8], b: &[u8]| (a.as_ptr() as usize ^ b.as_ptr() as usize) | (a.len() ^ b.len());
        let sections = d(o.types, clip.types)
            | d(o.constants, clip.constants)
            | d(o.ranges, clip.ranges)
            | d(o.table, clip.table)
            | d(o.data, clip.data);
        let counts = (o.num_samples ^ clip.num_samples)
            | (o.animated ^ clip.animated)
            | (o.segments ^ clip.segments)
            | (o.seg_len ^ clip.seg_len)
            | (o.seg_long ^ clip.seg_long)
            | u32::from(o.off_w ^ clip.off_w)
            | u32::from(o.bits_w ^ clip.bits_w);
        let sizes =
            (o.joint_count ^ clip.joint_count) | (self.tracks.len() ^ clip.animated as usize);
        sections | sizes | counts as usize == 0
    }

    /// The segment whose entries it holds, if any.
    #[inline(always)]
    pub(crate) fn held(&self) -> Option<u32> {
        (self.state.segment != u32::MAX).then_some(self.state.segment)
    }

    /// Its entries' memory (to prefetch).
    #[inline(always)]
    pub(super) fn tracks(&self) -> &[CachedTrack] {
        self.tracks
    }

    /// Record that a pose in `segment` is decoded through it; returns the
    /// previous pose's segment.
    #[inline(always)]
    pub(super) fn note_segment(&mut self, segment: u32) -> u32 {
        std::mem::replace(&mut self.state.last, segment)
    }

    /// Record that a filling walk wrote every entry for `segment`.
    #[inline(always)]
    pub(super) fn set_held(&mut self, segment: u32) {
        self.state.segment = segment;
    }

    /// Its entries, for a cached walk to read or a filling one to write
    /// (which first forgets the segment held: see [`CacheView::set_held`]).
    #[inline(always)]
    pub(super) fn entries(&mut self, filling: bool) -> &[Cell<CachedTrack>] {
        if filling {
            self.state.segment = u32::MAX;
        }
        Cell::from_mut(&mut *self.tracks).as_slice_of_cells()
    }
}

/// Reconstruction parameters of one animated track in one segment.
#[derive(Clone, Copy, Debug)]
pub(super) struct TrackParams {
    /// 0 (segment constant: `bias`), 3..=19, or 32 (raw).
    pub(super) bits: u32,
    /// Quantized ids: the bits of one component's field (`bits`, at most
    /// 19), and which components store them (bit k set: component k; a
    /// zero clip extent stores none).
    pub(super) field: u32,
    pub(super) stored: u32,
    pub(super) bias: Vec3A,
    pub(super) scale: Vec3A,
    /// `1 / (2^bits - 1)`.
    pub(super) inv: f32,
}
