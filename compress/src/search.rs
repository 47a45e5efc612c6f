//! Per-segment bit-rate search.
//!
//! Segments are searched in order, independently except for the midpoint
//! between a segment's first sample and the previous segment's last one
//! (measured with the previous segment's final rates). Within a segment
//! the error of joint `j` at a point (every sample, and every midpoint the
//! runtime could blend) is the virtual-vertex error between the raw
//! component transform and the FK of the decoded locals, all ancestors
//! decoded at their current rates. Three phases:
//!
//! 1. **Isolation.** For each animated track, the lowest rate whose error
//!    alone (everything else raw) stays within a fraction
//!    ([`ISOLATION_BUDGET`]) of the joint's *dominant shell* limit: the
//!    most demanding of its own vertices and its descendants' vertices,
//!    which a rigid error at the joint moves by up to their distance. This
//!    is cheap (one joint, no subtree) and lands near the answer.
//! 2. **Repair.** Exact FK of the whole segment. While a joint violates its
//!    limit, raise by one step the track on its chain (itself or an
//!    ancestor) that lowers that worst error most per added bit, measured
//!    exactly at the worst point.
//! 3. **Descent.** Children first, lower each track one step at a time
//!    while every joint of its subtree stays within its limit at every
//!    point (exact, early exit). Repeated until nothing moves.
//! 4. **Unranged.** Children first, each quantized track tries dropping its
//!    segment range (six bytes) for a whole-clip-range quantization at the
//!    same or a higher id while that costs fewer sample bits than the range
//!    bytes saved ([`SegSearch::unrange`]).
//!
//! Adapted idea: Nicholas Frechette, ACL's variable-bit-rate search (per
//! joint lowest rates in isolation, then raising ancestors where a
//! descendant's error is too high) and its "rigid shell" per joint. The
//! budgeted isolation, exact repair choice and the descent are ours.

use crate::classify::{Plan, Track};
use crate::prep::Prep;
use crate::quantize::{decode_into, seg_range, SegRange};
use ludus_anim_format::math::{
    nlerp_shortest, virtual_vertex_error, Affine3A, Quat, Transform, Vec3,
};
use ludus_anim_format::vbr::{
    finish_rotation, rate_id, track_sample_bits, NUM_RATES, RATE_CONSTANT, RATE_RAW, RATE_UNRANGED,
    SEGMENT_RANGE_BYTES,
};

/// Fraction of the dominant-shell limit one track may use in isolation
/// (1.0 measured best on the ACL anchor clips: starting low and letting the
/// repair raise is cheaper than starting high; 0.3 costs 2% more bytes).
pub const ISOLATION_BUDGET: f32 = 1.0;

/// Deepest chain whose repair candidates are measured by multiplying down
/// the chain from the candidate (see [`SegSearch::chain_error`]); real
/// rigs are 10 to 40 joints deep.
pub const EXACT_CHAIN_DEPTH: usize = 64;

/// Search work per joint and point of a segment (see `SegSearch::work`)
/// before the refining phases stop (repair then raises a violating
/// chain to raw at once; descent and unranging stop, keeping rates that
/// hold): 2.7x what real rigs use (the 41 ACL anchor clips peak at 42,
/// the shared fixtures at 96 under every profile), so it changes nothing
/// for them, while the search of a hostile 1,000-deep chain whose every
/// joint needs raising stays linear in joints × samples (a 256 KB glTF
/// chain with shared samplers: 589 s before, 3 s with it).
pub const WORK_PER_JOINT_POINT: u64 = 256;

/// Cache slot of a rate byte: ids, then the unranged ids.
#[inline]
fn slot(rate: u8) -> usize {
    rate_id(rate) as usize
        + if rate & RATE_UNRANGED != 0 {
            NUM_RATES as usize
        } else {
            0
        }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Segment {
    pub start: usize,
    pub end: usize,
}

/// `n` samples in `count` segments (at least 1, at most `n`) whose lengths
/// differ by at most one, longer ones first (the decoder derives the same
/// split from the count).
pub(crate) fn split_count(n: usize, count: usize) -> Vec<Segment> {
    let count = count.clamp(1, n.max(1));
    let (len, long) = (n / count, n % count);
    (0..count)
        .map(|k| {
            let start = k * len + k.min(long);
            Segment {
                start,
                end: start + len + usize::from(k < long),
            }
        })
        .collect()
}

/// The segment count that keeps every segment at most `max` samples long.
pub(crate) fn count_for_length(n: usize, max: u32) -> usize {
    let max = (max.max(1) as usize).min(n.max(1));
    n.div_ceil(max).max(1)
}

#[derive(Clone, Copy, Debug)]
struct Point {
    s0: usize,
    s1: usize,
    mid: bool,
}

struct SegSearch<'p, 'a> {
    prep: &'p Prep<'a>,
    plan: &'p Plan,
    seg: Segment,
    points: Vec<Point>,
    ranges: Vec<SegRange>,
    /// Decoded values per track and rate slot ([`slot`]), filled on use.
    cache: Vec<Vec<Option<Vec<[f32; 4]>>>>,
    /// Decoded values of the previous segment's last sample, per track.
    prev: &'p [[f32; 4]],
    rates: Vec<u8>,
    local: Vec<Transform>,
    comp: Vec<Affine3A>,
    err: Vec<f32>,
    scratch_comp: Vec<Affine3A>,
    scratch_local: Vec<Transform>,
    /// `local[i].to_affine()`, cached: the subtree evaluations of the
    /// descent and unranged passes reuse every descendant's local matrix.
    local_aff: Vec<Affine3A>,
    scratch_local_aff: Vec<Affine3A>,
    /// Errors computed by [`Self::eval_subtree`], reused on commit.
    scratch_err: Vec<f32>,
    /// Joint-point evaluations so far (virtual-vertex errors and chain
    /// products): the deterministic measure the budget bounds.
    work: u64,
    /// Work the refining phases may use ([`WORK_PER_JOINT_POINT`] per
    /// joint and point); past it the search stops refining.
    budget: u64,
}

impl SegSearch<'_, '_> {
    fn ensure(&mut self, a: usize, r: u8) {
        if self.cache[a][slot(r)].is_none() {
            let mut out = Vec::with_capacity(self.seg.end - self.seg.start);
            decode_into(
                &self.plan.anim[a],
                &self.ranges[a],
                self.seg.start,
                self.seg.end,
                r,
                &mut out,
            );
            self.cache[a][slot(r)] = Some(out);
        }
    }

    #[inline]
    fn decoded(&self, a: usize, r: u8, s: usize) -> [f32; 4] {
        if s < self.seg.start {
            return self.prev[a];
        }
        match &self.cache[a][slot(r)] {
            Some(q) => q[s - self.seg.start],
            None => [0.0, 0.0, 0.0, 1.0],
        }
    }

    /// Set track `kind` of `t` to the decoded value of track `a` at rate
    /// `r` at point `p`, blended exactly as the runtime does.
    #[inline]
    fn apply(&self, t: &mut Transform, kind: usize, a: usize, r: u8, p: &Point) {
        let va = self.decoded(a, r, p.s0);
        if kind == 0 {
            let qa = Quat::from_array(va);
            t.rotation = if p.mid {
                nlerp_shortest(qa, Quat::from_array(self.decoded(a, r, p.s1)), 0.5)
            } else {
                finish_rotation(qa)
            };
        } else {
            let v = Vec3::new(va[0], va[1], va[2]);
            let v = if p.mid {
                let vb = self.decoded(a, r, p.s1);
                v.lerp(Vec3::new(vb[0], vb[1], vb[2]), 0.5)
            } else {
                v
            };
            if kind == 1 {
                t.translation = v;
            } else {
                t.scale = v;
            }
        }
    }

    fn joint_local(&self, jt: usize, p: &Point, over: Option<(usize, u8)>) -> Transform {
        let mut t = self.plan.fixed[jt];
        for (kind, tr) in self.plan.tracks[jt].iter().enumerate() {
            if let Track::Animated(a) = *tr {
                let r = match over {
                    Some((oa, or)) if oa == a => or,
                    _ => self.rates[a],
                };
                self.apply(&mut t, kind, a, r, p);
            }
        }
        t
    }

    #[inline]
    fn raw_ref(&self, p: &Point, jt: usize) -> &Affine3A {
        let j = self.prep.j;
        if p.mid {
            &self.prep.raw_mid_comp[p.s0 * j + jt]
        } else {
            &self.prep.raw_comp[p.s0 * j + jt]
        }
    }

    /// Track `a` alone at rate `r` (everything else raw) against the
    /// joint's dominant shell.
    fn isolated_ok(&self, a: usize, r: u8) -> bool {
        let prep = self.prep;
        let tr = &self.plan.anim[a];
        let jt = tr.joint;
        let j = prep.j;
        let parent = prep.parents[jt];
        let limit = ISOLATION_BUDGET * prep.dom_limit[jt];
        for p in &self.points {
            let mut t = if p.mid {
                prep.raw_mid[p.s0 * j + jt]
            } else {
                prep.raw[p.s0 * j + jt]
            };
            self.apply(&mut t, tr.kind, a, r, p);
            let m = t.to_affine();
            let c = if parent == u32::MAX {
                m
            } else {
                *self.raw_ref(p, parent as usize) * m
            };
            if virtual_vertex_error(self.raw_ref(p, jt), &c, prep.dom_shell[jt]) > limit {
                return false;
            }
        }
        true
    }

    /// Lowest passing id in isolation ([`Self::isolated_ok`]; error
    /// falls as bits rise), searched outwards from `hint` (the previous
    /// segment's answer: neighbouring segments mostly agree, so this takes
    /// about two probes where a bisection of the 18 ids takes five; 9%
    /// less work on a 2,752-sample clip), then the segment-constant id 0
    /// if 3 bits pass.
    fn isolated_rate(&mut self, a: usize, hint: u8) -> u8 {
        let probe = |ss: &mut Self, r: u8| {
            ss.ensure(a, r);
            ss.isolated_ok(a, r)
        };
        let mut r = hint.clamp(1, RATE_RAW);
        if probe(self, r) {
            while r > 1 && probe(self, r - 1) {
                r -= 1;
            }
        } else {
            while r < RATE_RAW {
                r += 1;
                if probe(self, r) {
                    break;
                }
            }
        }
        if r == 1 && probe(self, 0) {
            r = 0;
        }
        self.ensure(a, r);
        r
    }

    /// Isolation rates of every track; `hints` (the previous segment's
    /// isolation rates) in, this segment's out.
    fn initial_rates(&mut self, hints: &mut [u8]) {
        for (a, hint) in hints.iter_mut().enumerate().take(self.plan.anim.len()) {
            let r = self.isolated_rate(a, *hint);
            self.rates[a] = r;
            *hint = r;
        }
    }

    fn full_eval(&mut self) {
        let prep = self.prep;
        let j = prep.j;
        for pi in 0..self.points.len() {
            let p = self.points[pi];
            for jt in 0..j {
                let l = self.joint_local(jt, &p, None);
                let m = l.to_affine();
                let parent = prep.parents[jt];
                let c = if parent == u32::MAX {
                    m
                } else {
                    self.comp[pi * j + parent as usize] * m
                };
                self.local[pi * j + jt] = l;
                self.local_aff[pi * j + jt] = m;
                self.comp[pi * j + jt] = c;
                self.err[pi * j + jt] =
                    virtual_vertex_error(self.raw_ref(&p, jt), &c, prep.shell[jt]);
            }
        }
    }

    /// Evaluate joint `jt` with track override `over` over its subtree at
    /// every point into the scratch buffers; false at the first violation.
    fn eval_subtree(&mut self, jt: usize, over: Option<(usize, u8)>) -> bool {
        let prep = self.prep;
        let j = prep.j;
        let end = prep.subtree_end[jt] as usize;
        let width = end - jt;
        let parent = prep.parents[jt];
        for pi in 0..self.points.len() {
            let p = self.points[pi];
            let l = self.joint_local(jt, &p, over);
            let m = l.to_affine();
            let c = if parent == u32::MAX {
                m
            } else {
                self.comp[pi * j + parent as usize] * m
            };
            let e = virtual_vertex_error(self.raw_ref(&p, jt), &c, prep.shell[jt]);
            self.work += 1;
            if e > prep.limit[jt] {
                return false;
            }
            self.scratch_local[pi] = l;
            self.scratch_local_aff[pi] = m;
            self.scratch_comp[pi * width] = c;
            self.scratch_err[pi * width] = e;
            for d in jt + 1..end {
                let pd = prep.parents[d] as usize;
                let pc = if pd >= jt {
                    self.scratch_comp[pi * width + pd - jt]
                } else {
                    self.comp[pi * j + pd]
                };
                let c = pc * self.local_aff[pi * j + d];
                let e = virtual_vertex_error(self.raw_ref(&p, d), &c, prep.shell[d]);
                self.work += 1;
                if e > prep.limit[d] {
                    return false;
                }
                self.scratch_comp[pi * width + d - jt] = c;
                self.scratch_err[pi * width + d - jt] = e;
            }
        }
        true
    }

    /// Recompute joint `jt`'s locals and its subtree's transforms and
    /// errors at every point with the current rates.
    fn refresh_subtree(&mut self, jt: usize) {
        let prep = self.prep;
        let j = prep.j;
        let end = prep.subtree_end[jt] as usize;
        self.work += (self.points.len() * (end - jt)) as u64;
        for pi in 0..self.points.len() {
            let p = self.points[pi];
            let l = self.joint_local(jt, &p, None);
            self.local[pi * j + jt] = l;
            self.local_aff[pi * j + jt] = l.to_affine();
            for d in jt..end {
                let m = self.local_aff[pi * j + d];
                let parent = prep.parents[d];
                let c = if parent == u32::MAX {
                    m
                } else {
                    self.comp[pi * j + parent as usize] * m
                };
                self.comp[pi * j + d] = c;
                self.err[pi * j + d] = virtual_vertex_error(self.raw_ref(&p, d), &c, prep.shell[d]);
            }
        }
    }

    /// Commit the scratch results of a successful [`Self::eval_subtree`].
    fn commit_scratch(&mut self, jt: usize) {
        let prep = self.prep;
        let j = prep.j;
        let end = prep.subtree_end[jt] as usize;
        let width = end - jt;
        for pi in 0..self.points.len() {
            self.local[pi * j + jt] = self.scratch_local[pi];
            self.local_aff[pi * j + jt] = self.scratch_local_aff[pi];
            let (from, to) = (pi * width, pi * width + width);
            self.comp[pi * j + jt..pi * j + end].copy_from_slice(&self.scratch_comp[from..to]);
            self.err[pi * j + jt..pi * j + end].copy_from_slice(&self.scratch_err[from..to]);
        }
    }

    /// Error of joint `d` at point `pi` if track `a` (of ancestor-or-self
    /// joint `x`, at `chain[k]`) were at rate `r`, everything else
    /// current; and the error with the current rates evaluated the same
    /// way, so a raise that changes nothing scores exactly zero.
    ///
    /// Chains up to [`EXACT_CHAIN_DEPTH`] multiply down from `x` to `d`
    /// (O(depth) per candidate: the products every package so far was
    /// searched with, bit for bit). Deeper chains use `below[k]`, the
    /// product of the locals under `x` from [`Self::chain_suffixes`]: two
    /// products per candidate, so a step costs O(depth), not O(depth²)
    /// (a 1,000-joint chain was cubic in its depth over the repair loop).
    #[allow(clippy::too_many_arguments)]
    fn chain_error(
        &self,
        pi: usize,
        d: usize,
        k: usize,
        a: usize,
        r: u8,
        chain: &[usize],
        below: &[Affine3A],
    ) -> (f32, f32) {
        let prep = self.prep;
        let j = prep.j;
        let p = self.points[pi];
        let x = chain[k];
        let parent = prep.parents[x];
        let m = self.joint_local(x, &p, Some((a, r))).to_affine();
        let mut c = if parent == u32::MAX {
            m
        } else {
            self.comp[pi * j + parent as usize] * m
        };
        let raw = self.raw_ref(&p, d);
        if chain.len() <= EXACT_CHAIN_DEPTH {
            for &y in &chain[k + 1..] {
                c *= self.local_aff[pi * j + y];
            }
            let current = self.err[pi * j + d];
            return (virtual_vertex_error(raw, &c, prep.shell[d]), current);
        }
        let now = self.comp[pi * j + x] * below[k];
        (
            virtual_vertex_error(raw, &(c * below[k]), prep.shell[d]),
            virtual_vertex_error(raw, &now, prep.shell[d]),
        )
    }

    /// `below[k]`: the product of the locals of `chain[k+1..]` at point
    /// `pi`, built from the tip up in one pass (so choosing a track to
    /// raise costs O(depth), not O(depth²): a 1,000-joint chain is
    /// otherwise cubic in its depth over the repair loop).
    fn chain_suffixes(&self, pi: usize, chain: &[usize], below: &mut Vec<Affine3A>) {
        let j = self.prep.j;
        below.clear();
        if chain.len() <= EXACT_CHAIN_DEPTH {
            return;
        }
        below.resize(chain.len(), Affine3A::IDENTITY);
        for k in (0..chain.len().saturating_sub(1)).rev() {
            below[k] = self.local_aff[pi * j + chain[k + 1]] * below[k + 1];
        }
    }

    fn repair(&mut self) -> bool {
        let prep = self.prep;
        let j = prep.j;
        let mut chain = Vec::new();
        let mut below = Vec::new();
        let mut worst_of: Vec<(f32, usize)> = (0..j).map(|d| self.joint_worst(d)).collect();
        // Each step raises one track by one id: bounded by tracks * ids.
        for _ in 0..self.plan.anim.len() * NUM_RATES as usize + 1 {
            // (The work counts the whole scan this replaced, so the budget
            // stops where it did.)
            self.work += (self.points.len() * j) as u64;
            let Some((pi, d)) = worst_point(&worst_of) else {
                return true;
            };
            chain.clear();
            let mut y = d as u32;
            while y != u32::MAX {
                chain.push(y as usize);
                y = prep.parents[y as usize];
            }
            chain.reverse();
            if self.work > self.budget {
                // Out of budget (a hostile shape: a very deep chain whose
                // every joint needs many raises): raise the whole chain to
                // raw at once, so what is left costs O(chains).
                if !self.raise_chain_raw(&chain) {
                    return false;
                }
                worst_of = (0..j).map(|d| self.joint_worst(d)).collect();
                continue;
            }
            self.chain_suffixes(pi, &chain, &mut below);
            self.work += chain_cost(chain.len());
            let mut best: Option<(f32, usize)> = None;
            for (k, &x) in chain.iter().enumerate() {
                for tr in self.plan.tracks[x] {
                    let Track::Animated(a) = tr else { continue };
                    let r = self.rates[a];
                    if r >= RATE_RAW {
                        continue;
                    }
                    self.ensure(a, r + 1);
                    let (rot, st) = (self.plan.anim[a].is_rotation(), self.plan.anim[a].stored());
                    let cost = (track_sample_bits(r + 1, rot, st) - track_sample_bits(r, rot, st))
                        .max(1) as f32;
                    let (e, current) = self.chain_error(pi, d, k, a, r + 1, &chain, &below);
                    let score = (current - e) / cost;
                    if best.is_none_or(|(s, _)| score > s) {
                        best = Some((score, a));
                    }
                }
            }
            let Some((_, a)) = best else { return false };
            self.rates[a] += 1;
            let x = self.plan.anim[a].joint;
            self.refresh_subtree(x);
            for (d, w) in worst_of
                .iter_mut()
                .enumerate()
                .take(prep.subtree_end[x] as usize)
                .skip(x)
            {
                *w = self.joint_worst(d);
            }
        }
        false
    }

    /// Joint `d`'s largest `error / limit` over the points above 1 and the
    /// first point reaching it (`usize::MAX` if none is above 1).
    fn joint_worst(&self, d: usize) -> (f32, usize) {
        let j = self.prep.j;
        let limit = self.prep.limit[d];
        let mut worst = (1.0f32, usize::MAX);
        for pi in 0..self.points.len() {
            let ratio = self.err[pi * j + d] / limit;
            if ratio > worst.0 {
                worst = (ratio, pi);
            }
        }
        worst
    }

    /// Every animated track on `chain` at raw, the locals of the changed
    /// joints refreshed and the subtree under the topmost one recomputed
    /// once. False if nothing was left to raise.
    fn raise_chain_raw(&mut self, chain: &[usize]) -> bool {
        let mut changed = Vec::new();
        for &x in chain {
            for tr in self.plan.tracks[x] {
                let Track::Animated(a) = tr else { continue };
                if self.rates[a] != RATE_RAW {
                    self.ensure(a, RATE_RAW);
                    self.rates[a] = RATE_RAW;
                    if changed.last() != Some(&x) {
                        changed.push(x);
                    }
                }
            }
        }
        let Some(&top) = changed.first() else {
            return false;
        };
        let prep = self.prep;
        let j = prep.j;
        for pi in 0..self.points.len() {
            let p = self.points[pi];
            for &x in &changed {
                let l = self.joint_local(x, &p, None);
                self.local[pi * j + x] = l;
                self.local_aff[pi * j + x] = l.to_affine();
            }
        }
        let end = prep.subtree_end[top] as usize;
        self.work += (self.points.len() * (end - top + changed.len())) as u64;
        for pi in 0..self.points.len() {
            let p = self.points[pi];
            for d in top..end {
                let m = self.local_aff[pi * j + d];
                let c = match prep.parents[d] {
                    u32::MAX => m,
                    parent => self.comp[pi * j + parent as usize] * m,
                };
                self.comp[pi * j + d] = c;
                self.err[pi * j + d] = virtual_vertex_error(self.raw_ref(&p, d), &c, prep.shell[d]);
            }
        }
        true
    }

    /// Children first, lower each track while its subtree holds; repeat
    /// until nothing moves. A track whose last attempt failed is tried
    /// again only once a track on its chain or in its subtree moved since
    /// (nothing else enters its evaluation, so the attempt would fail the
    /// same way): the repeat passes were mostly such failures.
    fn descend(&mut self) {
        let n_tracks = self.plan.anim.len();
        let mut moved_at = vec![0u64; self.prep.j];
        let mut failed_at: Vec<Option<u64>> = vec![None; n_tracks];
        let mut clock = 0u64;
        loop {
            let mut changed = false;
            for a in (0..n_tracks).rev() {
                let jt = self.plan.anim[a].joint;
                if let Some(f) = failed_at[a] {
                    if !self.moved_since(jt, &moved_at, f) {
                        continue;
                    }
                }
                while self.rates[a] > 0 && self.work <= self.budget {
                    let lower = self.rates[a] - 1;
                    self.ensure(a, lower);
                    if !self.eval_subtree(jt, Some((a, lower))) {
                        failed_at[a] = Some(clock);
                        break;
                    }
                    self.rates[a] = lower;
                    self.commit_scratch(jt);
                    clock += 1;
                    moved_at[jt] = clock;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Whether a track of `jt`, one of its ancestors or one of its
    /// descendants moved after `since`.
    fn moved_since(&self, jt: usize, moved_at: &[u64], since: u64) -> bool {
        let prep = self.prep;
        let mut y = jt as u32;
        while y != u32::MAX {
            if moved_at[y as usize] > since {
                return true;
            }
            y = prep.parents[y as usize];
        }
        moved_at[jt + 1..prep.subtree_end[jt] as usize]
            .iter()
            .any(|&m| m > since)
    }

    /// Drop segment ranges that do not pay for their six bytes: children
    /// first, each quantized track tries the unranged variant at its id and
    /// at higher ids while the added sample bits cost less than the range
    /// bytes saved, keeping the first that holds its whole subtree within
    /// limits. (Range reduction, per ACL, is almost always worth it on
    /// long segments with a narrow range; on short segments or tracks that
    /// sweep their clip range the six bytes per track and segment are
    /// pure overhead: 2,539 of 8,243 track-segments of the ACL anchors had
    /// a segment extent of at least half the clip range.)
    fn unrange(&mut self) {
        let n = self.seg.end - self.seg.start;
        let saved = (SEGMENT_RANGE_BYTES * 8) as u32;
        for a in (0..self.plan.anim.len()).rev() {
            let r = self.rates[a];
            if r == RATE_CONSTANT || r >= RATE_RAW || self.work > self.budget {
                continue;
            }
            let (rot, st) = (self.plan.anim[a].is_rotation(), self.plan.anim[a].stored());
            let base = track_sample_bits(r, rot, st);
            let jt = self.plan.anim[a].joint;
            // Widest segment extent (units of 1/255 of the clip range):
            // unranged, the quantization step grows by `255 / widest`.
            let sr = &self.ranges[a].range;
            let widest = sr[3].max(sr[4]).max(sr[5]).max(1) as u32;
            for id in r..RATE_RAW {
                let added = (track_sample_bits(id, rot, st) - base) * n as u32;
                if added >= saved {
                    break;
                }
                // Skip hopeless trials (a step more than twice what the
                // extra bits buy back): saves most of the pass's time.
                if 255 > widest << (id - r + 1) {
                    continue;
                }
                let candidate = id | RATE_UNRANGED;
                self.ensure(a, candidate);
                if self.eval_subtree(jt, Some((a, candidate))) {
                    self.rates[a] = candidate;
                    self.commit_scratch(jt);
                    break;
                }
            }
        }
    }
}

/// The point and joint of the largest ratio over 1 in `worst_of` (per
/// joint, from [`SegSearch::joint_worst`]), ties to the earlier point then
/// the lower joint: what a scan of every point and joint finds, kept per
/// joint so a repair step rescans only the subtree it changed.
fn worst_point(worst_of: &[(f32, usize)]) -> Option<(usize, usize)> {
    let mut best: Option<(f32, usize, usize)> = None;
    for (d, &(ratio, pi)) in worst_of.iter().enumerate() {
        if pi == usize::MAX {
            continue;
        }
        let better = best.is_none_or(|(r, p, _)| ratio > r || (ratio == r && pi < p));
        if better {
            best = Some((ratio, pi, d));
        }
    }
    best.map(|(_, pi, d)| (pi, d))
}

/// Work of one repair step's candidate products on a chain of `len`
/// joints (see [`SegSearch::chain_error`]): from each joint down to the
/// tip when exact, two products each past [`EXACT_CHAIN_DEPTH`].
fn chain_cost(len: usize) -> u64 {
    if len <= EXACT_CHAIN_DEPTH {
        (len * (len + 1) / 2) as u64
    } else {
        3 * len as u64
    }
}

/// Rates for every segment (`[segment][animated track]`), and how many
/// segments ran out of search budget ([`WORK_PER_JOINT_POINT`]).
pub(crate) fn search_all(prep: &Prep, plan: &Plan, segments: &[Segment]) -> (Vec<Vec<u8>>, usize) {
    let n_tracks = plan.anim.len();
    let mut out = Vec::with_capacity(segments.len());
    if n_tracks == 0 {
        return (vec![Vec::new(); segments.len()], 0);
    }
    let mut exhausted = 0;
    let j = prep.j;
    let mut prev = vec![[0.0f32; 4]; n_tracks];
    // Isolation starts from the middle of the quantized ids.
    let mut hints = vec![RATE_RAW / 2; n_tracks];
    let mut pool = Pool::default();
    for &seg in segments {
        let mut points = Vec::with_capacity(2 * (seg.end - seg.start));
        for s in seg.start..seg.end {
            if s > 0 {
                points.push(Point {
                    s0: s - 1,
                    s1: s,
                    mid: true,
                });
            }
            points.push(Point {
                s0: s,
                s1: s,
                mid: false,
            });
        }
        let np = points.len();
        let mut ss = SegSearch {
            prep,
            plan,
            seg,
            points,
            ranges: plan
                .anim
                .iter()
                .map(|t| seg_range(t, seg.start, seg.end))
                .collect(),
            cache: (0..n_tracks)
                .map(|_| (0..2 * NUM_RATES).map(|_| None).collect())
                .collect(),
            prev: &prev,
            rates: vec![0; n_tracks],
            local: sized(pool.local, np * j, Transform::IDENTITY),
            comp: sized(pool.comp, np * j, Affine3A::IDENTITY),
            err: sized(pool.err, np * j, 0.0),
            scratch_comp: sized(pool.scratch_comp, np * j, Affine3A::IDENTITY),
            scratch_local: sized(pool.scratch_local, np, Transform::IDENTITY),
            local_aff: sized(pool.local_aff, np * j, Affine3A::IDENTITY),
            scratch_local_aff: sized(pool.scratch_local_aff, np, Affine3A::IDENTITY),
            scratch_err: sized(pool.scratch_err, np * j, 0.0),
            work: 0,
            budget: WORK_PER_JOINT_POINT.saturating_mul((np * j) as u64),
        };
        ss.initial_rates(&mut hints);
        ss.full_eval();
        ss.repair();
        ss.descend();
        ss.unrange();
        if ss.work > ss.budget {
            exhausted += 1;
        }
        let rates = ss.rates;
        let last = seg.end - 1 - seg.start;
        let next_prev: Vec<[f32; 4]> = (0..n_tracks)
            .map(|a| match &ss.cache[a][slot(rates[a])] {
                Some(q) => q[last],
                None => [0.0, 0.0, 0.0, 1.0],
            })
            .collect();
        out.push(rates);
        pool = Pool {
            local: ss.local,
            comp: ss.comp,
            err: ss.err,
            scratch_comp: ss.scratch_comp,
            scratch_local: ss.scratch_local,
            local_aff: ss.local_aff,
            scratch_local_aff: ss.scratch_local_aff,
            scratch_err: ss.scratch_err,
        };
        prev = next_prev;
    }
    (out, exhausted)
}

/// The per-point buffers of [`SegSearch`], handed from one segment to the
/// next (every entry is written before it is read, so the previous
/// segment's contents never leak).
#[derive(Default)]
struct Pool {
    local: Vec<Transform>,
    comp: Vec<Affine3A>,
    err: Vec<f32>,
    scratch_comp: Vec<Affine3A>,
    scratch_local: Vec<Transform>,
    local_aff: Vec<Affine3A>,
    scratch_local_aff: Vec<Affine3A>,
    scratch_err: Vec<f32>,
}

/// `v` at length `len` (new entries `fill`, old ones kept).
fn sized<T: Clone>(mut v: Vec<T>, len: usize, fill: T) -> Vec<T> {
    v.resize(len, fill);
    v
}

/// Safety net used by the final verification: raise by one step every
/// animated track on `joint`'s chain in the segments holding samples `i0`
/// and `i1`. False if nothing could be raised.
pub(crate) fn bump_chain(
    prep: &Prep,
    plan: &Plan,
    segments: &[Segment],
    rates: &mut [Vec<u8>],
    joint: usize,
    at: (u32, u32),
) -> bool {
    let mut any = false;
    for (k, seg) in segments.iter().enumerate() {
        let hit = |s: u32| (seg.start..seg.end).contains(&(s as usize));
        if !(hit(at.0) || hit(at.1)) {
            continue;
        }
        let mut y = joint as u32;
        while y != u32::MAX {
            for tr in plan.tracks[y as usize] {
                if let Track::Animated(a) = tr {
                    if let Some(r) = rates.get_mut(k).and_then(|v| v.get_mut(a)) {
                        if rate_id(*r) < RATE_RAW {
                            // Unranged tracks get their range back too.
                            *r = rate_id(*r) + 1;
                            any = true;
                        }
                    }
                }
            }
            y = prep.parents[y as usize];
        }
    }
    any
}
