//! `ludus-anim-compress`: the encoder of the variable-bit-rate clip codec
//! (decoder: `ludus_anim_runtime::codec::vbr`, format: `schemas/codec-vbr.md`).
//!
//! The codec follows the published design of the Animation Compression
//! Library (Nicholas Frechette, ACL, and his "Animation Compression" blog
//! series): uniform sampling, default/constant track stripping, uniform
//! segments, clip and segment range reduction, a variable bit rate per
//! track and segment chosen against an error measured on virtual vertices
//! at a shell distance in component space with decompressed parents. The
//! implementation and byte layout are ours; blobs are not ACL blobs.
//!
//! Pipeline ([`encode_vbr`]):
//! 1. [`prep`]: validate input, raw FK at every sample and midpoint, and a
//!    per-joint "dominant shell" (the descendant vertex most sensitive to
//!    this joint's error).
//! 2. [`classify`]: default / constant / animated per track, accepting a
//!    substitution only if every joint of the subtree stays within a fixed
//!    fraction of its threshold, with earlier substitutions applied.
//! 3. [`search`]: per segment, lowest bit rates keeping every joint within
//!    its threshold at every sample and midpoint (exact FK with lossy
//!    parents). Short clips: [`trials`] prices other segment counts from
//!    the steps that search kept and searches the cheapest one too.
//! 4. [`writer`]: serialize; [`verify`]: parse the blob with the runtime,
//!    decode every sample and midpoint and measure; bump rates if needed.
//!
//! Deterministic: single-threaded, no hash maps, fixed iteration orders.

#![forbid(unsafe_code)]

mod classify;
mod prep;
mod quantize;
mod search;
mod trials;
mod verify;
mod writer;

use ludus_anim_model::ResampledClip;
use ludus_anim_runtime::package::CodecError;
use ludus_anim_runtime::Skeleton;

pub use verify::{measure_errors, ErrorReport};

/// Clips with at most this many joint-samples try several segment lengths.
const TRIAL_SEGMENTING_LIMIT: usize = 5_000;

/// ... and at least this many: below it the second search costs as much
/// as the first and saved 142 B over the 22 ACL anchors this small (none
/// over 55 B), while the clips from 600 up saved 3,200 B.
const TRIAL_SEGMENTING_MIN: usize = 600;

/// ... and whose profile length makes at most this many segments: with
/// more, the profile's length was within 52 B of the best count on every
/// ACL anchor (Fox Survey; Knight Idle x3 and CMU walk 24 Hz 0 B), while
/// one to three segments is where the count swings the size most (Knight
/// Walking 3,605 B at 2 segments, 2,942 B at 8).
const TRIAL_MAX_SEGMENTS: usize = 3;

/// Candidate counts beyond the five around the profile's length are
/// priced only while samples x tracks x counts stays within this.
const PRICING_BUDGET: usize = 4_000_000;

/// Full searches besides the profile's length, of the cheapest priced
/// counts. Decision (41 ACL anchors): searching every candidate count
/// gave 405,064 B at about 12 searches per short clip; the profile's
/// length alone 409,256 B; it and the cheapest priced count 405,910 B;
/// the two cheapest 405,729 B for a third search.
const FULL_TRIALS: usize = 1;

/// Shortest segment the candidate counts go down to: below four samples
/// a segment's rate bytes and range entries outweigh what its tighter
/// ranges save (Fox Run: 7 segments 3,405 B, 9 3,482, 10 3,534).
const SHORTEST_TRIAL_LENGTH: u32 = 4;

/// What the encoder must preserve.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodeSettings {
    /// Per joint: max allowed virtual-vertex error (meters) in component space.
    pub joint_threshold_m: Vec<f32>,
    /// Per joint: shell distance (meters) of its virtual vertices.
    pub joint_shell_m: Vec<f32>,
    /// Samples per segment (ACL uses ~16). Long clips use it as the
    /// maximum; clips of at most 5,000 joint-samples also price 3/4 and
    /// 1/2 of it, 2 and 4 times it (fewer segment headers) and every
    /// segment count down to 4-sample segments from the steps its search
    /// kept, search the cheapest priced count too, and keep the smaller
    /// blob.
    pub max_segment_samples: u32,
}

impl EncodeSettings {
    /// The same threshold and shell for every joint, 16-sample segments.
    pub fn uniform(joint_count: usize, threshold_m: f32, shell_m: f32) -> EncodeSettings {
        EncodeSettings {
            joint_threshold_m: vec![threshold_m; joint_count],
            joint_shell_m: vec![shell_m; joint_count],
            max_segment_samples: 16,
        }
    }
}

/// Summary of one encode.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct EncodeStats {
    pub default_tracks: usize,
    pub constant_tracks: usize,
    pub animated_tracks: usize,
    pub segment_count: usize,
    /// Mean stored bits per component of animated tracks over all samples
    /// (segment-constant tracks count 0, raw 32).
    pub avg_bits_per_animated_component: f32,
    /// Largest error measured through the runtime decoder, at every sample
    /// and every midpoint between samples (meters).
    pub max_error_m: f32,
    /// Joint with the largest error relative to its threshold.
    pub worst_joint: usize,
    /// `error / threshold` of that joint (always <= 1).
    pub worst_error_ratio: f32,
    /// Bytes of the blob.
    pub blob_bytes: usize,
    /// Rate bumps the final verification needed (normally 0).
    pub verify_fixups: usize,
    /// Segments whose search ran out of budget and kept coarser (larger)
    /// rates than a full search finds (normally 0; see
    /// `search::WORK_PER_JOINT_POINT`).
    pub budget_exhausted_segments: usize,
    /// The clip's f32 floor (`ludus_anim_verify::f32_floor`) the encoder
    /// budgeted for, so verification need not measure it again.
    pub floor_m: f32,
}

/// An encoded clip: the blob the runtime parses with
/// `VbrClip::parse(blob, joint_count, num_samples)`.
#[derive(Clone, Debug, PartialEq)]
pub struct EncodedClip {
    pub blob: Vec<u8>,
    pub stats: EncodeStats,
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EncodeError {
    #[error("clip has {clip} joints but the skeleton has {skeleton}")]
    JointCountMismatch { skeleton: usize, clip: usize },
    #[error("clip declares {declared} samples but holds {held} transforms for {joints} joints")]
    SampleCountMismatch {
        declared: u32,
        held: usize,
        joints: usize,
    },
    #[error("clip has no samples")]
    EmptyClip,
    #[error("settings.{what} has {len} entries for {joints} joints")]
    SettingsLength {
        what: &'static str,
        len: usize,
        joints: usize,
    },
    #[error("joint {joint}: threshold must be finite and > 0 and shell finite and >= 0")]
    BadTolerance { joint: usize },
    #[error("max_segment_samples must be at least 1")]
    BadSegmentSize,
    #[error("joint {joint} has a non-finite transform at sample {sample}")]
    NonFinite { joint: usize, sample: usize },
    #[error("clip is too large for the format")]
    TooLarge,
    #[error("joint {joint}: threshold {threshold_m} m cannot be met (best error {error_m} m)")]
    ThresholdUnreachable {
        joint: usize,
        error_m: f32,
        threshold_m: f32,
    },
    #[error("internal error: the encoded blob does not parse: {0}")]
    Internal(CodecError),
}

/// Segment counts a short clip may use: the profile's length and 3/4,
/// 1/2, 2 and 4 times it, then every other count down to
/// [`SHORTEST_TRIAL_LENGTH`]-sample segments (the size is far from
/// monotonic in the count: Fox Run, 29 samples: 4 segments 3,501 B, 6
/// 3,478, 7 3,405, 8 3,446). Empty for long and for very short clips,
/// which use the profile's length.
fn candidate_counts(prep: &prep::Prep, max: u32) -> Vec<usize> {
    let n = prep.n;
    let work = n.saturating_mul(prep.j);
    if !(TRIAL_SEGMENTING_MIN..=TRIAL_SEGMENTING_LIMIT).contains(&work) {
        return Vec::new();
    }
    let mut counts: Vec<usize> = Vec::new();
    let mut push = |c: usize| {
        if !counts.contains(&c) {
            counts.push(c);
        }
    };
    for len in [
        max,
        (max * 3 / 4).max(1),
        (max / 2).max(1),
        max.saturating_mul(2),
        max.saturating_mul(4),
    ] {
        push(search::count_for_length(n, len));
    }
    let most = search::count_for_length(n, SHORTEST_TRIAL_LENGTH);
    let tracks = prep.j.saturating_mul(3);
    if n.saturating_mul(tracks).saturating_mul(most) <= PRICING_BUDGET {
        (1..=most).for_each(push);
    }
    counts
}

/// A searched segmentation: blob size, segments, rates, segments out of
/// search budget.
struct Trial {
    size: usize,
    segments: Vec<search::Segment>,
    rates: Vec<Vec<u8>>,
    exhausted: usize,
}

fn run_trial(prep: &prep::Prep, plan: &classify::Plan, count: usize) -> Trial {
    let segments = search::split_count(prep.n, count);
    let (rates, exhausted) = search::search_all(prep, plan, &segments);
    let size = writer::size(prep, plan, &segments, &rates);
    Trial {
        size,
        segments,
        rates,
        exhausted,
    }
}

/// The profile's segment length searched in full; for short clips (at
/// most [`TRIAL_MAX_SEGMENTS`] segments of it), the
/// other candidate counts priced from its steps ([`trials`]) and the
/// [`FULL_TRIALS`] cheapest searched too; the smallest blob, ties to the
/// earlier search.
fn choose_segments(prep: &prep::Prep, plan: &classify::Plan, max: u32) -> Trial {
    let first = search::count_for_length(prep.n, max);
    let mut best = run_trial(prep, plan, first);
    let candidates = candidate_counts(prep, max);
    if candidates.len() < 2 || plan.anim.is_empty() || first > TRIAL_MAX_SEGMENTS {
        return best;
    }
    let steps = trials::Steps::new(plan, &best.segments, &best.rates);
    let price = |segments: &[search::Segment]| {
        writer::size(prep, plan, segments, &steps.rates(plan, segments))
    };
    for count in trials::cheapest(&candidates, first, FULL_TRIALS, price, prep.n) {
        let trial = run_trial(prep, plan, count);
        if trial.size < best.size {
            best = trial;
        }
    }
    best
}

/// Every error within its threshold plus `slack`.
fn within(errors: &[f32], thresholds: &[f32], slack: f32) -> bool {
    errors.iter().zip(thresholds).all(|(e, t)| *e <= t + slack)
}

/// Encode `clip` (local poses on `skeleton`) so that every joint's error
/// stays within its aim (the threshold less the clip's f32 margin,
/// `prep::FLOOR_MARGIN`) at every time verification lists
/// (`ludus_anim_verify::check_times`).
pub fn encode_vbr(
    skeleton: &Skeleton,
    clip: &ResampledClip,
    settings: &EncodeSettings,
) -> Result<EncodedClip, EncodeError> {
    let prep = prep::Prep::new(skeleton, clip, settings)?;
    let plan = classify::classify(&prep);
    let Trial {
        segments,
        mut rates,
        exhausted,
        ..
    } = choose_segments(&prep, &plan, settings.max_segment_samples);

    let mut fixups = 0usize;
    loop {
        let blob = writer::write(&plan, &segments, &rates)?;
        debug_assert_eq!(blob.len(), writer::size(&prep, &plan, &segments, &rates));
        let report = verify::measure_errors(&blob, skeleton, clip, &prep.aim, &prep.shell)
            .map_err(EncodeError::Internal)?;
        let worst = report.worst_joint;
        if report.worst_ratio <= 1.0 {
            let mut stats = writer::stats(&prep, &plan, &segments, &rates, &blob, &report, fixups);
            stats.budget_exhausted_segments = exhausted;
            return Ok(EncodedClip { blob, stats });
        }
        // Safety net: the search measures exactly what the decoder does, so
        // this only runs if a blend between segments (or float noise at a
        // tolerance edge) slipped through. Raise the offending chain.
        fixups += 1;
        if fixups > 64
            || !search::bump_chain(
                &prep,
                &plan,
                &segments,
                &mut rates,
                report.worst_joint,
                report.worst_sample,
            )
        {
            // Out of reach by no more than the f32 floor (the rig is so far
            // from the origin that f32 arithmetic alone moves it that
            // much): keep the best blob; verification reports its honest
            // figure (the floor included) and warns where it is over.
            if within(&report.per_joint, &prep.threshold, prep.floor) {
                let mut stats =
                    writer::stats(&prep, &plan, &segments, &rates, &blob, &report, fixups);
                stats.budget_exhausted_segments = exhausted;
                return Ok(EncodedClip { blob, stats });
            }
            return Err(EncodeError::ThresholdUnreachable {
                joint: worst,
                error_m: report.per_joint[worst],
                threshold_m: prep.threshold[worst],
            });
        }
    }
}
