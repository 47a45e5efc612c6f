//! Which instruction set the whole-pose decode loop is compiled for,
//! chosen at run time. The loop's source is one; on x86-64 it is compiled
//! twice: for the SSE2 baseline every x86-64 CPU has, and for AVX2 with
//! BMI1/2 (x86-64-v3, what current consoles and nearly every gaming PC
//! run). The later set gives the compiler three-operand (VEX) forms,
//! one-instruction widenings and shifts by register: a pose decodes in
//! 7-13% fewer instructions (cachegrind, anchor clips; SSE4.1 alone, the
//! level ACL's anchor build used, saves 3-4%, too little for a third
//! copy of the loop), and takes 3-5% less time (cold). Joint requests keep the inlined baseline code: one joint
//! pays more for a call into another level's code than its instructions
//! save, and a 10-joint subset in AVX2 (7-10% fewer instructions) was no
//! faster while it doubled the decoder's code.
//!
//! Every level gives the same bits. No fused multiply-add is enabled
//! (Rust never contracts `a * b + c`, and `fma` is not among the
//! features), and the loop uses no approximate instruction (`rcpps`,
//! `rsqrtps`) whose results differ between CPUs: only IEEE-exact
//! operations, which every encoding computes alike. Tests decode every
//! path at every level the machine has and compare the bits, and the
//! cooker's packages therefore do not depend on the machine that cooked
//! them.

use super::decode::OutputPolicy;
use super::playback::CacheView;
use super::tracks::SegmentCache;
use super::VbrClip;
use crate::math::Transform;
use crate::timing::SamplePosition;
use std::sync::atomic::{AtomicU8, Ordering};

/// The level [`SupportedIsa::best`] found: 0 before the first call, else
/// 1 + its index in [`Isa::ALL`].
static BEST: AtomicU8 = AtomicU8::new(0);

/// An instruction-set level of the decode loop.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Isa {
    /// The x86-64 baseline (and the only level on other targets).
    Sse2,
    /// AVX and AVX2 with BMI1, BMI2, LZCNT, POPCNT and SSE4.2.
    Avx2,
}

impl Isa {
    /// Every level, lowest first.
    pub(crate) const ALL: [Isa; 2] = [Isa::Sse2, Isa::Avx2];

    /// Whether this CPU runs the level.
    #[cfg(test)]
    pub(crate) fn supported(self) -> bool {
        SupportedIsa::new(self).is_some()
    }
}

/// An [`Isa`] this CPU is known to run: the only form the decoder
/// dispatches on, so that a level's code is never entered on a CPU
/// without its instructions (what makes the calls below sound).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SupportedIsa(Isa);

impl SupportedIsa {
    /// `isa` if this CPU runs it (the tests decode at every level; the
    /// decoder itself asks for [`SupportedIsa::best`]).
    #[cfg(test)]
    pub(crate) fn new(isa: Isa) -> Option<SupportedIsa> {
        detect(isa).then_some(SupportedIsa(isa))
    }

    /// The highest level this CPU runs (detected once per process).
    #[inline]
    pub(crate) fn best() -> SupportedIsa {
        match Isa::ALL.get(usize::from(BEST.load(Ordering::Relaxed)).wrapping_sub(1)) {
            Some(&isa) => SupportedIsa(isa),
            None => SupportedIsa::detect_best(),
        }
    }

    /// [`SupportedIsa::best`]'s first call: out of line, so that the
    /// detection's code stays out of the decode functions that ask.
    #[cold]
    #[inline(never)]
    fn detect_best() -> SupportedIsa {
        let isa = Isa::ALL
            .into_iter()
            .rev()
            .find(|&i| detect(i))
            .unwrap_or(Isa::Sse2);
        let k = Isa::ALL.iter().position(|&i| i == isa).unwrap_or(0);
        BEST.store(k as u8 + 1, Ordering::Relaxed);
        SupportedIsa(isa)
    }

    /// The level.
    #[cfg(test)]
    pub(crate) fn isa(self) -> Isa {
        self.0
    }
}

#[cfg(target_arch = "x86_64")]
fn detect(isa: Isa) -> bool {
    match isa {
        Isa::Sse2 => true,
        Isa::Avx2 => {
            std::arch::is_x86_feature_detected!("sse3")
                && std::arch::is_x86_feature_detected!("ssse3")
                && std::arch::is_x86_feature_detected!("sse4.1")
                && std::arch::is_x86_feature_detected!("sse4.2")
                && std::arch::is_x86_feature_detected!("popcnt")
                && std::arch::is_x86_feature_detected!("avx")
                && std::arch::is_x86_feature_detected!("avx2")
                && std::arch::is_x86_feature_detected!("bmi1")
                && std::arch::is_x86_feature_detected!("bmi2")
                && std::arch::is_x86_feature_detected!("lzcnt")
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn detect(isa: Isa) -> bool {
    isa == Isa::Sse2
}

impl VbrClip<'_> {
    /// [`VbrClip::decode_body`] compiled for `isa`: the SSE2 body inlined
    /// here, the AVX2 one a function of its own (code for another level
    /// cannot be inlined into a caller compiled without it).
    #[inline(always)]
    // One parameter list through the inlining and `target_feature`
    // boundaries: a struct of them cost poses 2-3% (see `isa`).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn decode_on<P: OutputPolicy>(
        &self,
        isa: SupportedIsa,
        policy: &P,
        pos: SamplePosition,
        base: &[Transform],
        out: &mut [Transform],
        cache: Option<&mut SegmentCache>,
        tracks: Option<&mut CacheView<'_, '_>>,
    ) -> bool {
        #[cfg(target_arch = "x86_64")]
        match isa.0 {
            // SAFETY: a `SupportedIsa` is only made once the CPU has been
            // found to run its level (`SupportedIsa::new`, `best`), so the
            // instructions the function is compiled with are there.
            Isa::Avx2 => return unsafe { self.decode_avx2(policy, pos, base, out, cache, tracks) },
            Isa::Sse2 => {}
        }
        let _ = isa;
        self.decode_body(policy, pos, base, out, cache, tracks)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "sse3,ssse3,sse4.1,sse4.2,popcnt,avx,avx2,bmi1,bmi2,lzcnt")]
    #[inline(never)]
    fn decode_avx2<P: OutputPolicy>(
        &self,
        policy: &P,
        pos: SamplePosition,
        base: &[Transform],
        out: &mut [Transform],
        cache: Option<&mut SegmentCache>,
        tracks: Option<&mut CacheView<'_, '_>>,
    ) -> bool {
        self.decode_body(policy, pos, base, out, cache, tracks)
    }
}
