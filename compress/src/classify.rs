//! Track classification: default (the skeleton rest value, free), constant
//! (one full-precision value) or animated.
//!
//! A substitution is accepted only if, with every substitution accepted so
//! far applied (parents first, then rotation, translation, scale), every
//! joint of the subtree stays within [`CONSTANT_BUDGET`] of its limit at
//! every sample. The rest of the budget is left to quantization, and the
//! bit-rate search measures the substitutions together with it.
//!
//! Adapted idea: Nicholas Frechette, "Animation Compression: Constant
//! Tracks" and ACL's default/constant sub-track stripping; the acceptance
//! test through the hierarchy is ours.

use crate::prep::Prep;
use ludus_anim_format::math::{virtual_vertex_error, Affine3A, Quat, Transform, Vec3};
use ludus_anim_format::vbr::{
    component_stored, finish_rotation, rotation_clip_range, rotation_from_xyz, ROTATION_RANGE_STEP,
    ROTATION_RANGE_ZERO,
};

/// Fraction of each joint's limit that default/constant substitutions may
/// use (measured over the subtree, all substitutions together).
pub const CONSTANT_BUDGET: f32 = 0.5;

#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Track {
    Default,
    /// Stored x, y, z (rotations: w >= 0 rebuilt by the decoder).
    Constant([f32; 3]),
    /// Rotation stored with all four components.
    ConstantFull([f32; 4]),
    /// Index into [`Plan::anim`].
    Animated(usize),
}

pub(crate) struct AnimTrack {
    pub joint: usize,
    /// 0 rotation, 1 translation, 2 scale.
    pub kind: usize,
    /// Per sample: rotation x, y, z, w with w >= 0; vectors x, y, z, 0.
    pub values: Vec<[f32; 4]>,
    /// Clip range as the decoder reconstructs it.
    pub clip_min: [f32; 3],
    pub clip_ext: [f32; 3],
    /// Rotations: the stored 16-bit codes (min x, y, z, extent x, y, z).
    pub rot_codes: [u16; 6],
}

impl AnimTrack {
    pub fn is_rotation(&self) -> bool {
        self.kind == 0
    }
    /// Whether component `c` stores sample bits at the quantized rates
    /// (its clip extent is not zero, `component_stored`).
    pub fn stores(&self, c: usize) -> bool {
        self.clip_ext.get(c).is_some_and(|&e| component_stored(e))
    }
    /// Components with sample bits at the quantized rates (0..=3).
    pub fn stored(&self) -> u32 {
        (0..3).map(|c| u32::from(self.stores(c))).sum()
    }
}

pub(crate) struct Plan {
    pub tracks: Vec<[Track; 3]>,
    /// Per joint, the decoded value of every non-animated track (animated
    /// slots hold the rest value and are overwritten by the search).
    pub fixed: Vec<Transform>,
    pub anim: Vec<AnimTrack>,
}

impl Plan {
    pub fn count(&self, f: impl Fn(&Track) -> bool) -> usize {
        self.tracks
            .iter()
            .flat_map(|t| t.iter())
            .filter(|t| f(t))
            .count()
    }
}

/// Replace track `kind` of `t` by `v` (rotation in `v` as xyzw).
fn with_track(mut t: Transform, kind: usize, v: [f32; 4]) -> Transform {
    match kind {
        0 => t.rotation = Quat::from_xyzw(v[0], v[1], v[2], v[3]),
        1 => t.translation = Vec3::new(v[0], v[1], v[2]),
        _ => t.scale = Vec3::new(v[0], v[1], v[2]),
    }
    t
}

fn track_value(t: &Transform, kind: usize) -> [f32; 4] {
    match kind {
        0 => t.rotation.to_array(),
        1 => t.translation.extend(0.0).to_array(),
        _ => t.scale.extend(0.0).to_array(),
    }
}

/// Same affine result: equal bits, or (rotations) equal bits up to sign.
fn same_value(a: [f32; 4], b: [f32; 4], kind: usize) -> bool {
    let eq = |x: f32, y: f32| x.to_bits() == y.to_bits();
    let n = if kind == 0 { 4 } else { 3 };
    (0..n).all(|c| eq(a[c], b[c])) || (kind == 0 && (0..4).all(|c| eq(a[c], -b[c])))
}

/// Rotation flipped so that w >= 0.
pub(crate) fn positive_w(q: [f32; 4]) -> [f32; 4] {
    if q[3] < 0.0 {
        [-q[0], -q[1], -q[2], -q[3]]
    } else {
        q
    }
}

struct State<'p, 'a> {
    prep: &'p Prep<'a>,
    local: Vec<Transform>,
    comp: Vec<Affine3A>,
    /// The candidate's subtree transforms, sample-major (`s * width`),
    /// committed as they are if it is accepted.
    scratch: Vec<Affine3A>,
}

impl State<'_, '_> {
    /// Try substituting decoded value `v` for track `kind` of joint `jt` at
    /// every sample; keep it if the subtree stays within budget.
    fn try_substitute(&mut self, jt: usize, kind: usize, v: [f32; 4]) -> bool {
        let p = self.prep;
        let (j, n) = (p.j, p.n);
        if (0..n).all(|s| same_value(track_value(&self.local[s * j + jt], kind), v, kind)) {
            for s in 0..n {
                self.local[s * j + jt] = with_track(self.local[s * j + jt], kind, v);
            }
            return true;
        }
        let end = p.subtree_end[jt] as usize;
        let width = end - jt;
        let parent = p.parents[jt];
        self.scratch.resize(n * width, Affine3A::IDENTITY);
        for s in 0..n {
            let base = s * j;
            let sc = s * width;
            let m = with_track(self.local[base + jt], kind, v).to_affine();
            let c = if parent == u32::MAX {
                m
            } else {
                self.comp[base + parent as usize] * m
            };
            if virtual_vertex_error(&p.raw_comp[base + jt], &c, p.shell[jt])
                > CONSTANT_BUDGET * p.limit[jt]
            {
                return false;
            }
            self.scratch[sc] = c;
            for d in jt + 1..end {
                let pd = p.parents[d] as usize;
                let pc = if pd >= jt {
                    self.scratch[sc + pd - jt]
                } else {
                    self.comp[base + pd]
                };
                let c = pc * self.local[base + d].to_affine();
                if virtual_vertex_error(&p.raw_comp[base + d], &c, p.shell[d])
                    > CONSTANT_BUDGET * p.limit[d]
                {
                    return false;
                }
                self.scratch[sc + d - jt] = c;
            }
        }
        // Accept: apply, and the subtree's component transforms are the
        // ones just measured.
        for s in 0..n {
            let base = s * j;
            self.local[base + jt] = with_track(self.local[base + jt], kind, v);
            self.comp[base + jt..base + end]
                .copy_from_slice(&self.scratch[s * width..(s + 1) * width]);
        }
        true
    }
}

pub(crate) fn classify(prep: &Prep) -> Plan {
    let (j, n) = (prep.j, prep.n);
    let mut st = State {
        prep,
        local: prep.raw.to_vec(),
        comp: prep.raw_comp.clone(),
        scratch: vec![Affine3A::IDENTITY; j],
    };
    let mut tracks = vec![[Track::Default; 3]; j];
    let mut fixed = prep.rest.to_vec();
    let mut anim = Vec::new();
    for jt in 0..j {
        #[allow(clippy::needless_range_loop)] // `kind` is also the track id
        for kind in 0..3 {
            let samples: Vec<[f32; 4]> = (0..n)
                .map(|s| track_value(&prep.raw[s * j + jt], kind))
                .collect();
            let rest = track_value(&prep.rest[jt], kind);
            if st.try_substitute(jt, kind, rest) {
                tracks[jt][kind] = Track::Default;
                continue;
            }
            let chosen = if kind == 0 {
                let rep = representative_rotation(&samples);
                let stored = positive_w(rep);
                let dec =
                    finish_rotation(rotation_from_xyz(stored[0], stored[1], stored[2])).to_array();
                if st.try_substitute(jt, 0, dec) {
                    fixed[jt].rotation = Quat::from_array(dec);
                    Some(Track::Constant([stored[0], stored[1], stored[2]]))
                } else if st.try_substitute(jt, 0, rep) {
                    fixed[jt].rotation = Quat::from_array(rep);
                    Some(Track::ConstantFull(rep))
                } else {
                    None
                }
            } else {
                let mut v = [0.0f32; 4];
                for (c, o) in v.iter_mut().enumerate().take(3) {
                    let lo = samples.iter().map(|x| x[c]).fold(f32::INFINITY, f32::min);
                    let hi = samples
                        .iter()
                        .map(|x| x[c])
                        .fold(f32::NEG_INFINITY, f32::max);
                    *o = lo + (hi - lo) * 0.5;
                }
                if st.try_substitute(jt, kind, v) {
                    let val = Vec3::new(v[0], v[1], v[2]);
                    if kind == 1 {
                        fixed[jt].translation = val;
                    } else {
                        fixed[jt].scale = val;
                    }
                    Some(Track::Constant([v[0], v[1], v[2]]))
                } else {
                    None
                }
            };
            tracks[jt][kind] = match chosen {
                Some(t) => t,
                None => {
                    let values: Vec<[f32; 4]> = if kind == 0 {
                        samples.iter().map(|q| positive_w(*q)).collect()
                    } else {
                        samples
                    };
                    let (clip_min, clip_ext, rot_codes) = if kind == 0 {
                        rotation_range(&values)
                    } else {
                        let (m, e) = clip_range(&values);
                        (m, e, [0; 6])
                    };
                    anim.push(AnimTrack {
                        joint: jt,
                        kind,
                        values,
                        clip_min,
                        clip_ext,
                        rot_codes,
                    });
                    Track::Animated(anim.len() - 1)
                }
            };
        }
    }
    Plan {
        tracks,
        fixed,
        anim,
    }
}

/// Exact first sample if all samples agree (up to sign), else the
/// normalized sign-aligned mean.
fn representative_rotation(samples: &[[f32; 4]]) -> [f32; 4] {
    let first = samples[0];
    if samples.iter().all(|q| same_value(*q, first, 0)) {
        return first;
    }
    let f = Quat::from_array(first);
    let mut acc = [0.0f64; 4];
    for q in samples {
        let q = Quat::from_array(*q);
        let q = if q.dot(f) < 0.0 { -q } else { q };
        for (a, v) in acc.iter_mut().zip(q.to_array()) {
            *a += v as f64;
        }
    }
    let len = acc.iter().map(|a| a * a).sum::<f64>().sqrt();
    if len < 1e-12 {
        return first;
    }
    [
        (acc[0] / len) as f32,
        (acc[1] / len) as f32,
        (acc[2] / len) as f32,
        (acc[3] / len) as f32,
    ]
}

/// Per component min and extent (extent rounded up so `min + ext >= max`).
fn clip_range(values: &[[f32; 4]]) -> ([f32; 3], [f32; 3]) {
    let mut mn = [0.0f32; 3];
    let mut ex = [0.0f32; 3];
    for c in 0..3 {
        let lo = values.iter().map(|x| x[c]).fold(f32::INFINITY, f32::min);
        let hi = values
            .iter()
            .map(|x| x[c])
            .fold(f32::NEG_INFINITY, f32::max);
        let mut e = hi - lo;
        while lo + e < hi {
            e = f32::from_bits(e.to_bits() + 1);
        }
        mn[c] = lo;
        ex[c] = e;
    }
    (mn, ex)
}

/// Rotation clip range as 16-bit codes over [-1, 1] (see
/// `vbr::rotation_clip_range`): the min code rounded down and the extent
/// code rounded up against the decoder's own arithmetic, so the decoded
/// range covers every value (up to the [-1, 1] bounds). Returns the decoded
/// min and extent and the codes.
fn rotation_range(values: &[[f32; 4]]) -> ([f32; 3], [f32; 3], [u16; 6]) {
    let mut mn = [0.0f32; 3];
    let mut ex = [0.0f32; 3];
    let mut codes = [0u16; 6];
    for c in 0..3 {
        let lo = values.iter().map(|x| x[c]).fold(f32::INFINITY, f32::min);
        let hi = values
            .iter()
            .map(|x| x[c])
            .fold(f32::NEG_INFINITY, f32::max);
        let mut m = ((lo as f64 / ROTATION_RANGE_STEP as f64 + ROTATION_RANGE_ZERO as f64).floor())
            .clamp(0.0, 65535.0) as u16;
        while m > 0 && rotation_clip_range(m, 0).0 > lo {
            m -= 1;
        }
        let min = rotation_clip_range(m, 0).0;
        let mut e = (((hi as f64 - min as f64) / ROTATION_RANGE_STEP as f64).ceil())
            .clamp(0.0, 65535.0) as u16;
        while e < 65535 && {
            let (a, b) = rotation_clip_range(m, e);
            a + b < hi
        } {
            e += 1;
        }
        let (a, b) = rotation_clip_range(m, e);
        mn[c] = a;
        ex[c] = b;
        codes[c] = m;
        codes[3 + c] = e;
    }
    (mn, ex, codes)
}
