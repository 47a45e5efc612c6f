//! Masks and LOD plans (#46): a skeleton's joint sets file
//! (`schemas/joint-sets.md`) resolved against the package's skeleton and
//! skins, written into the package's JSET section, then checked on the
//! written package as a game would decode it.
//!
//! Resolution keeps the seed's three joint sets apart: a mask's weights
//! name the joints a layer writes; the sample set adds their ancestors
//! (FK needs them) at weight 0. An LOD level is an ancestor-closed set of
//! retained joints, never "the first N joints"; its skin remap points each
//! removed palette joint at its nearest retained ancestor with the removed
//! chain's rest-pose offset, so a removed joint follows its ancestor as it
//! would if its own tracks held their rest values.
//!
//! Verification (on the package bytes, through `Player::decode`): at every
//! sample of every clip, the masked and LOD decodes equal the whole-pose
//! decode bit for bit on the joints they cover, and FK of those joints
//! equals full FK on them; every skin's worst vertex displacement per LOD
//! level is measured at the bind pose and at every sample.

use crate::package_writer::PackageClip;
use crate::report::AssetReport;
use ludus_anim_format::codec::CodecId;
use ludus_anim_format::joint_sets::{
    contains, members, nonzero_ranges, words, JointSets as Sets, LodLevel, Mask, SkinRemap,
    AFFINE_IDENTITY,
};
use ludus_anim_format::math::{Affine3A, Transform, Vec3};
use ludus_anim_format::vbr::{
    KIND_ANIMATED, KIND_CONSTANT, KIND_DEFAULT, ROTATION_CLIP_RANGE_BYTES, SEGMENT_RANGE_BYTES,
    VECTOR_CLIP_RANGE_BYTES,
};
use ludus_anim_format::vbr_layout::Layout;
use ludus_anim_model::skin::affine;
use ludus_anim_model::{Diagnostic, SourceSkin};
use ludus_anim_project::joint_sets::{name_matches, JointSets};
use ludus_anim_report::joint_sets::{
    DecodeCost, JointSetsReport, LodReport, LodSkinReport, MaskReport,
};
use ludus_anim_runtime::package::Package;
use ludus_anim_runtime::{Player, Request, Skeleton};

/// The file's sets resolved on one skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub file: String,
    /// Per mask: name, weights, sample set words.
    pub masks: Vec<(String, Vec<f32>, Vec<u64>)>,
    /// Per level: the retained set's words and the pinned joints.
    pub lods: Vec<(Vec<u64>, Vec<usize>)>,
    /// Per level, per skin: (joint, offset) per palette entry.
    pub remaps: Vec<Vec<SkinRemap>>,
}

fn located(file: &str, code: &str, message: String) -> Diagnostic {
    Diagnostic::error(code, message).file(file)
}

/// Joint `name` of `sk`, or a located error with the closest name.
fn joint(sk: &Skeleton, file: &str, at: &str, name: &str) -> Result<usize, Box<Diagnostic>> {
    sk.find_by_name(name).ok_or_else(|| {
        let hint = ludus_anim_model::suggest::closest(name, sk.names().iter().map(String::as_str))
            .map_or(String::new(), |h| format!(" (did you mean '{h}'?)"));
        Box::new(
            located(
                file,
                "joint_sets_unknown_joint",
                format!(
                    "{at}: joint '{name}' is not in the skeleton ({} joints){hint}",
                    sk.joint_count()
                ),
            )
            .joint(name),
        )
    })
}

/// The joints of `root`'s subtree (a contiguous range: parents first).
fn subtree(sk: &Skeleton, root: usize) -> std::ops::Range<usize> {
    root..sk.subtree_ends()[root] as usize
}

/// The bit set holding `set`'s joints and all their ancestors.
fn ancestor_closure(sk: &Skeleton, set: impl IntoIterator<Item = usize>) -> Vec<u64> {
    let mut out = vec![0u64; words(sk.joint_count())];
    for j in set {
        let mut k = Some(j);
        while let Some(x) = k.filter(|&x| !contains(&out, x)) {
            out[x / 64] |= 1 << (x % 64);
            k = sk.parent(x);
        }
    }
    out
}

/// Resolve `spec` on `sk` (with `skins` on it): every joint name exists,
/// every mask selects a joint, every level is ancestor-closed, keeps the
/// pinned joints and the roots, and keeps no joint the level before it
/// dropped.
pub fn resolve(
    spec: &JointSets,
    sk: &Skeleton,
    skins: &[SourceSkin],
) -> Result<Resolved, Box<Diagnostic>> {
    let file = spec.file.as_str();
    let n = sk.joint_count();
    let mut masks = Vec::with_capacity(spec.masks.len());
    for m in &spec.masks {
        let at = format!("mask '{}'", m.name);
        let mut w = vec![0.0f32; n];
        for r in &m.subtrees {
            let r = joint(sk, file, &format!("{at} subtrees"), r)?;
            w[subtree(sk, r)].fill(1.0);
        }
        for g in &m.groups {
            for name in spec.groups.get(g).into_iter().flatten() {
                w[joint(sk, file, &format!("{at} group '{g}'"), name)?] = 1.0;
            }
        }
        for f in &m.feather {
            let r = joint(sk, file, &format!("{at} feather"), &f.root)?;
            let mut depth = vec![0u32; n];
            for j in subtree(sk, r) {
                if j != r {
                    depth[j] = sk.parent(j).map_or(0, |p| depth[p] + 1);
                }
                w[j] = if depth[j] < f.joints {
                    (depth[j] + 1) as f32 / (f.joints + 1) as f32
                } else {
                    1.0
                };
            }
        }
        for e in &m.exclude {
            let e = joint(sk, file, &format!("{at} exclude"), e)?;
            w[subtree(sk, e)].fill(0.0);
        }
        for (name, &v) in &m.weights {
            w[joint(sk, file, &format!("{at} weights"), name)?] = v as f32;
        }
        if w.iter().all(|&v| v == 0.0) {
            return Err(Box::new(located(
                file,
                "joint_sets_empty_mask",
                format!("{at} gives no joint a nonzero weight"),
            )));
        }
        let sample = ancestor_closure(sk, (0..n).filter(|&j| w[j] > 0.0));
        masks.push((m.name.clone(), w, sample));
    }
    let mut lods: Vec<(Vec<u64>, Vec<usize>)> = Vec::new();
    if let Some(lod) = &spec.lod {
        let mut pinned: Vec<usize> = (0..n).filter(|&j| sk.parent(j).is_none()).collect();
        for p in &lod.pinned {
            pinned.push(joint(sk, file, "[lod] pinned", p)?);
        }
        pinned.sort_unstable();
        pinned.dedup();
        for (l, level) in lod.levels.iter().enumerate() {
            let at = format!("LOD level {l}");
            let kept: Vec<usize> = match &level.keep {
                Some(keep) => {
                    let mut set = vec![0u64; words(n)];
                    for name in keep {
                        let j = joint(sk, file, &format!("{at} keep"), name)?;
                        set[j / 64] |= 1 << (j % 64);
                    }
                    let missing =
                        members(&set).find(|&j| sk.parent(j).is_some_and(|p| !contains(&set, p)));
                    if let Some(j) = missing {
                        let p = sk.parent(j).map_or("", |p| sk.name(p));
                        return Err(Box::new(
                            located(
                                file,
                                "joint_sets_not_ancestor_closed",
                                format!("{at}: keeps '{}' but not its parent '{p}'; a level must keep every ancestor of a kept joint", sk.name(j)),
                            )
                            .joint(sk.name(j)),
                        ));
                    }
                    members(&set).collect()
                }
                None => {
                    let mut keep = vec![true; n];
                    for pattern in &level.drop {
                        let hits: Vec<usize> = (0..n)
                            .filter(|&j| name_matches(pattern, sk.name(j)))
                            .collect();
                        if hits.is_empty() {
                            return Err(Box::new(located(
                                file,
                                "joint_sets_pattern_unmatched",
                                format!("{at}: drop pattern '{pattern}' matches no joint"),
                            )));
                        }
                        for j in hits {
                            keep[subtree(sk, j)].fill(false);
                        }
                    }
                    (0..n).filter(|&j| keep[j]).collect()
                }
            };
            let retained = ancestor_closure(sk, kept.iter().copied().chain(pinned.iter().copied()));
            if let Some((prev, _)) = lods.last() {
                if let Some(j) = members(&retained).find(|&j| !contains(prev, j)) {
                    return Err(Box::new(
                        located(
                            file,
                            "joint_sets_lod_not_nested",
                            format!(
                                "{at}: retains '{}', which level {} drops; each level must retain a subset of the one before",
                                sk.name(j),
                                l - 1
                            ),
                        )
                        .joint(sk.name(j)),
                    ));
                }
            }
            lods.push((retained, pinned.clone()));
        }
    }
    let rest = rest_component(sk);
    let remaps = lods
        .iter()
        .map(|(retained, _)| {
            skins
                .iter()
                .map(|s| remap(sk, &rest, retained, &s.joints))
                .collect()
        })
        .collect();
    Ok(Resolved {
        file: file.to_string(),
        masks,
        lods,
        remaps,
    })
}

fn rest_component(sk: &Skeleton) -> Vec<Affine3A> {
    let mut c = vec![Affine3A::IDENTITY; sk.joint_count()];
    sk.local_to_component(sk.rest_pose(), &mut c);
    c
}

/// The nearest retained joint at or above `j`.
fn retained_ancestor(sk: &Skeleton, retained: &[u64], mut j: usize) -> usize {
    while !contains(retained, j) {
        match sk.parent(j) {
            Some(p) => j = p,
            None => return j,
        }
    }
    j
}

/// A palette's remap at one level: retained joints map to themselves;
/// a removed joint to its nearest retained ancestor `a`, with offset
/// `rest[a]^-1 * rest[j]`.
fn remap(sk: &Skeleton, rest: &[Affine3A], retained: &[u64], palette: &[usize]) -> SkinRemap {
    let mut out = SkinRemap {
        joints: Vec::with_capacity(palette.len()),
        offsets: Vec::with_capacity(palette.len()),
    };
    for &j in palette {
        let a = retained_ancestor(sk, retained, j);
        out.joints.push(a as u32);
        out.offsets.push(if a == j {
            AFFINE_IDENTITY
        } else {
            (rest[a].inverse() * rest[j]).to_cols_array()
        });
    }
    out
}

/// The package view of `r` (what `Package::bindings().joint_sets` reads).
pub fn view(r: &Resolved) -> Sets<'_> {
    let sk_words = |w: &[f32]| {
        let mut set = vec![0u64; words(w.len())];
        for (j, _) in w.iter().enumerate().filter(|(_, &v)| v > 0.0) {
            set[j / 64] |= 1 << (j % 64);
        }
        set
    };
    Sets {
        masks: r
            .masks
            .iter()
            .map(|(name, w, sample)| Mask {
                name,
                weights: w.clone(),
                write: sk_words(w),
                sample: sample.clone(),
                ranges: nonzero_ranges(w),
            })
            .collect(),
        lods: r
            .lods
            .iter()
            .zip(&r.remaps)
            .map(|((retained, _), skins)| LodLevel {
                retained: retained.clone(),
                skins: skins.clone(),
            })
            .collect(),
    }
}

/// Check the written package `bytes` and report: its JSET section loads
/// as `r`; masked and LOD decodes equal the whole-pose decode; skin
/// displacement per level; decode cost from the clips' blobs. Mismatches
/// are located error diagnostics (the asset fails).
pub fn verify(
    bytes: &[u8],
    r: &Resolved,
    clips: &[PackageClip],
    skins: &[SourceSkin],
    report: &mut AssetReport,
) -> bool {
    let file = r.file.as_str();
    let mut fail = |message: String, clip: Option<&str>, t: Option<f32>| {
        let mut d = located(file, "joint_sets_verification_failed", message);
        if let Some(c) = clip {
            d = d.clip(c);
        }
        if let Some(t) = t {
            d = d.time(t);
        }
        report.diagnostics.push(crate::report::diagnostic(&d));
    };
    let p = match Package::load(bytes) {
        Ok(p) => p,
        Err(e) => {
            fail(format!("the package does not load: {e}"), None, None);
            return false;
        }
    };
    let sk = p.skeleton();
    let sets = &p.bindings().joint_sets;
    if *sets != view(r) {
        fail(
            "the package's JSET section does not read back as cooked".into(),
            None,
            None,
        );
        return false;
    }
    let n = sk.joint_count();
    let mut masks: Vec<MaskReport> = sets
        .masks
        .iter()
        .map(|m| MaskReport {
            name: m.name.to_string(),
            joints_weighted: members(&m.write).count(),
            joints_sampled: members(&m.sample).count(),
            ranges: m.ranges.clone(),
            cost: cost(clips, n, &m.sample),
            poses_verified: 0,
        })
        .collect();
    let mut lods: Vec<LodReport> = sets
        .lods
        .iter()
        .enumerate()
        .map(|(l, level)| LodReport {
            level: l,
            joints_retained: members(&level.retained).count(),
            pinned: r.lods[l]
                .1
                .iter()
                .map(|&j| sk.name(j).to_string())
                .collect(),
            cost: cost(clips, n, &level.retained),
            poses_verified: 0,
            skins: skins
                .iter()
                .zip(&level.skins)
                .map(|(s, remap)| LodSkinReport {
                    name: s.name.clone(),
                    remapped_entries: remap
                        .joints
                        .iter()
                        .zip(&s.joints)
                        .filter(|(a, j)| **a as usize != **j)
                        .count(),
                    bind_displacement_mm: bind_displacement(sk, s, remap).map(|m| m * 1000.0),
                    clip_displacement_mm: None,
                    worst_clip: None,
                    worst_time_s: None,
                })
                .collect(),
        })
        .collect();
    let mut ok = true;
    let mut full = vec![Transform::IDENTITY; n];
    let mut part = vec![Transform::IDENTITY; n];
    let (mut cf, mut cp) = (vec![Affine3A::IDENTITY; n], vec![Affine3A::IDENTITY; n]);
    for clip in p.clips() {
        let defaults = p.sample_defaults(clip);
        let (Ok(mut whole), Ok(mut sparse)) =
            (Player::new(clip, defaults), Player::new(clip, defaults))
        else {
            fail(
                "the clip does not bind to a player".into(),
                Some(clip.name()),
                None,
            );
            return false;
        };
        for s in 0..clip.num_samples() {
            let t = (s as f32 / clip.sample_rate_hz()).min(clip.duration_s());
            whole.seek(t);
            if whole.decode(Request::Pose, &mut full).is_err()
                || !sk.local_to_component(&full, &mut cf)
            {
                fail(
                    "the whole pose does not decode".into(),
                    Some(clip.name()),
                    Some(t),
                );
                return false;
            }
            let mut check = |set: &[u64], fk_on: &[u64]| -> bool {
                // Slots outside the set hold a pose the decode must not
                // need: FK of the set must not read them.
                part.fill(Transform {
                    rotation: ludus_anim_format::math::Quat::IDENTITY,
                    translation: Vec3::splat(1e3),
                    scale: Vec3::ONE,
                });
                sparse.seek(t);
                if sparse.decode(Request::Mask(set), &mut part).is_err()
                    || !sk.local_to_component(&part, &mut cp)
                {
                    return false;
                }
                let same = members(set).all(|j| bits(&part[j]) == bits(&full[j]));
                let fk = members(fk_on).all(|j| {
                    cp[j].to_cols_array().map(f32::to_bits)
                        == cf[j].to_cols_array().map(f32::to_bits)
                });
                same && fk
            };
            for (m, rep) in sets.masks.iter().zip(&mut masks) {
                if check(&m.sample, &m.write) {
                    rep.poses_verified += 1;
                } else {
                    ok = false;
                    fail(
                        format!(
                            "mask '{}': the masked decode differs from the whole pose",
                            m.name
                        ),
                        Some(clip.name()),
                        Some(t),
                    );
                }
            }
            for (l, (level, rep)) in sets.lods.iter().zip(&mut lods).enumerate() {
                if check(&level.retained, &level.retained) {
                    rep.poses_verified += 1;
                } else {
                    ok = false;
                    fail(
                        format!("LOD level {l}: the LOD decode differs from the whole pose"),
                        Some(clip.name()),
                        Some(t),
                    );
                }
                // The LOD pose's FK equals the whole pose's on retained
                // joints (just checked), and a remap names only those.
                for ((skin, remap), srep) in skins.iter().zip(&level.skins).zip(&mut rep.skins) {
                    let Some(d) = displacement(skin, remap, &cf, &cf) else {
                        continue;
                    };
                    let d = d * 1000.0;
                    if srep.clip_displacement_mm.is_none_or(|w| d > w) {
                        srep.clip_displacement_mm = Some(d);
                        srep.worst_clip = Some(clip.name().to_string());
                        srep.worst_time_s = Some(t);
                    }
                }
            }
        }
    }
    report.joint_sets = Some(JointSetsReport {
        file: r.file.clone(),
        joints: n,
        whole_pose: cost(clips, n, &vec![u64::MAX; words(n)]),
        masks,
        lods,
    });
    ok
}

fn bits(t: &Transform) -> [u32; 10] {
    let (q, p, s) = (t.rotation.to_array(), t.translation, t.scale);
    [q[0], q[1], q[2], q[3], p.x, p.y, p.z, s.x, s.y, s.z].map(f32::to_bits)
}

/// Worst distance (source units: meters after normalize) between each
/// weighted vertex skinned with the full palette (`full[joint]`) and with
/// the remap (`lod[remapped] * offset`). `None` without a mesh.
fn displacement(
    skin: &SourceSkin,
    remap: &SkinRemap,
    full: &[Affine3A],
    lod: &[Affine3A],
) -> Option<f32> {
    let mesh = skin.mesh.as_ref()?;
    let whole: Vec<Affine3A> = skin
        .joints
        .iter()
        .zip(&skin.inverse_bind)
        .map(|(&j, m)| full.get(j).copied().unwrap_or(Affine3A::IDENTITY) * affine(m))
        .collect();
    let reduced: Vec<Affine3A> = remap
        .joints
        .iter()
        .zip(&remap.offsets)
        .zip(&skin.inverse_bind)
        .map(|((&a, o), m)| {
            lod.get(a as usize).copied().unwrap_or(Affine3A::IDENTITY)
                * Affine3A::from_cols_array(o)
                * affine(m)
        })
        .collect();
    let mut worst = 0.0f32;
    for (v, &pos) in mesh.positions.iter().enumerate() {
        let influences = mesh.vertex(v);
        let sum: f32 = influences.iter().map(|(_, w)| w).sum();
        if sum == 0.0 {
            continue;
        }
        let (mut a, mut b) = (Vec3::ZERO, Vec3::ZERO);
        for &(i, w) in influences {
            let i = i as usize;
            let (Some(x), Some(y)) = (whole.get(i), reduced.get(i)) else {
                continue;
            };
            a += (w / sum) * x.transform_point3(pos);
            b += (w / sum) * y.transform_point3(pos);
        }
        worst = worst.max(a.distance(b));
    }
    Some(worst)
}

/// [`displacement`] at the skin's bind pose: palette joints at their bind
/// transforms, every other joint placed from its parent by its rest local
/// transform.
fn bind_displacement(sk: &Skeleton, skin: &SourceSkin, remap: &SkinRemap) -> Option<f32> {
    let n = sk.joint_count();
    let mut bind: Vec<Option<Affine3A>> = vec![None; n];
    for (&j, m) in skin.joints.iter().zip(&skin.bind_world) {
        if let Some(b) = bind.get_mut(j) {
            *b = Some(affine(m));
        }
    }
    let rest = sk.rest_pose();
    let mut c = vec![Affine3A::IDENTITY; n];
    for j in 0..n {
        let parent = sk.parent(j).map_or(Affine3A::IDENTITY, |p| c[p]);
        let r = &rest[j];
        c[j] = bind[j].unwrap_or_else(|| {
            parent * Affine3A::from_scale_rotation_translation(r.scale, r.rotation, r.translation)
        });
    }
    displacement(skin, remap, &c, &c)
}

/// The decode cost of the joints of `set` over `clips` (see
/// [`DecodeCost`]).
fn cost(clips: &[PackageClip], n: usize, set: &[u64]) -> DecodeCost {
    let mut out = DecodeCost {
        clips: clips.len(),
        tracks_decoded: 0,
        bytes_touched_per_pose: Some(0.0),
    };
    for c in clips {
        let layout = (c.codec == CodecId::Vbr)
            .then(|| Layout::read(&c.blob, n))
            .flatten();
        let mut bytes = 0.0f64;
        let mut animated = 0usize;
        for j in 0..n {
            for k in 0..3 {
                let kind = layout.as_ref().and_then(|l| l.track_kind(j, k));
                let selected = contains(set, j);
                match kind {
                    Some(KIND_DEFAULT) | None => {}
                    Some(KIND_ANIMATED) => {
                        if selected {
                            out.tracks_decoded += 1;
                            let l = layout.as_ref().map_or(0.0, |l| {
                                let segs = l.segments.max(1);
                                // Three stored components per sample
                                // (a rotation's w is reconstructed).
                                let comps = 3.0;
                                let mean_bits: f64 = (0..l.segments)
                                    .filter_map(|s| l.animated_bits(s, animated))
                                    .map(f64::from)
                                    .sum::<f64>()
                                    / f64::from(segs);
                                2.0 * comps * mean_bits / 8.0
                            });
                            let range = if k == 0 {
                                ROTATION_CLIP_RANGE_BYTES
                            } else {
                                VECTOR_CLIP_RANGE_BYTES
                            };
                            bytes += l + (range + SEGMENT_RANGE_BYTES) as f64;
                        }
                        animated += 1;
                    }
                    Some(KIND_CONSTANT) if selected => bytes += 12.0,
                    Some(_) if selected => bytes += 16.0,
                    Some(_) => {}
                }
            }
        }
        match (&layout, &mut out.bytes_touched_per_pose) {
            (Some(_), Some(b)) => *b += bytes / clips.len() as f64,
            _ => out.bytes_touched_per_pose = None,
        }
    }
    if clips.is_empty() {
        out.bytes_touched_per_pose = None;
    }
    out
}
