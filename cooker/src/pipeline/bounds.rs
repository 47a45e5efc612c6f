//! Motion bounds of each pose clip (#45 item 4): a box and a sphere in
//! character space (the skeleton's component space, meters) holding every
//! skinned vertex of every skin (joint positions when the asset has no
//! mesh) at every checked time: each sample and each midpoint between two
//! samples, decoded from the written package as a game would. The sphere
//! is the box's circumsphere. A second pass re-skins every checked time
//! and counts points outside either, which must be none.
//! Stored in the package's BNDS section (`Package::bindings`).
//!
//! - Additive clips: applied on the skeleton's rest pose at weights 0,
//!   0.5 and 1 at every checked time (their sampled effect on the rest:
//!   a game layering one over another base pose needs that base's bounds
//!   grown by the same effect; the report says `applied_on`).
//! - Meshless assets: each joint is a sphere of the manifest's
//!   `joint_radius_m` (its six axis points go into the box, so the box
//!   holds every sphere); without it, joint positions.
//! - Root motion: the package's clips are decoded with the extracted
//!   root motion removed (it lives in the trajectory), so a walk's box is
//!   relative to the extracted root and does not hold the distance
//!   travelled; a consumer sweeps it along `Clip::root_motion_delta`.
//! - Not covered: the times between checked times.

use crate::report::BoundsReport;
use ludus_anim_format::math::{Affine3A, Transform, Vec3};
use ludus_anim_format::skin::ClipBounds;
use ludus_anim_model::skin::affine;
use ludus_anim_model::SourceSkin;
use ludus_anim_runtime::additive::apply_additive_pose;
use ludus_anim_runtime::package::{Clip, Package};

/// Blend weights an additive clip's bounds are measured at.
pub const ADDITIVE_WEIGHTS: [f32; 3] = [0.0, 0.5, 1.0];

/// The bounds of `clip` of `p`, and how many checked points lie outside
/// them (0 unless decoding differs between passes). `None` for a pose
/// that does not decode. `joint_radius_m`: the sphere around each joint
/// of a meshless asset.
pub fn clip_bounds(
    p: &Package<'_>,
    clip: &Clip<'_>,
    skins: &[SourceSkin],
    joint_radius_m: f32,
) -> Option<(BoundsReport, usize)> {
    let weights: &[f32] = if clip.is_additive() {
        &ADDITIVE_WEIGHTS
    } else {
        &[1.0]
    };
    let meshes: Vec<&SourceSkin> = skins.iter().filter(|s| s.mesh.is_some()).collect();
    let n = clip.num_samples().max(1);
    let rate = clip.sample_rate_hz();
    let times: Vec<f32> = (0..2 * n - 1)
        .map(|k| (k as f32 * 0.5 / rate).min(clip.duration_s()))
        .collect();
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    let mut per_time = 0;
    let radius_m = if meshes.is_empty() {
        joint_radius_m
    } else {
        0.0
    };
    let at = |t: f32, w: f32| Checked {
        t,
        weight: w,
        radius_m,
    };
    for &t in &times {
        per_time = 0;
        for &w in weights {
            for_each_point(p, clip, &meshes, at(t, w), |v| {
                lo = lo.min(v);
                hi = hi.max(v);
                per_time += 1;
            })?;
        }
    }
    if per_time == 0 || !lo.is_finite() || !hi.is_finite() {
        return None;
    }
    let center = (lo + hi) * 0.5;
    let radius = (hi - lo).length() * 0.5;
    let mut outside = 0;
    for &t in &times {
        for &w in weights {
            for_each_point(p, clip, &meshes, at(t, w), |v| {
                let in_box = v.cmpge(lo).all() && v.cmple(hi).all();
                if !in_box || v.distance(center) > radius * (1.0 + 1e-6) {
                    outside += 1;
                }
            })?;
        }
    }
    let report = BoundsReport {
        points: if meshes.is_empty() {
            "joints"
        } else {
            "skinned_vertices"
        }
        .to_string(),
        min: lo.to_array(),
        max: hi.to_array(),
        center: center.to_array(),
        radius,
        checked_times: times.len(),
        points_per_time: per_time,
        joint_radius_m: (radius_m > 0.0).then_some(radius_m),
        applied_on: clip
            .is_additive()
            .then(|| format!("rest pose, weights {ADDITIVE_WEIGHTS:?}")),
    };
    Some((report, outside))
}

/// A checked pose: time, additive weight (1 for a pose clip), and the
/// radius around joints.
#[derive(Clone, Copy)]
struct Checked {
    t: f32,
    weight: f32,
    radius_m: f32,
}

/// Every point of the pose at `at.t` (an additive clip applied on the
/// rest pose at `at.weight`): each weighted vertex of each mesh skinned
/// with `component[joint] * inverse_bind` (weights normalized), or
/// without a mesh each joint's position (its six axis points at
/// `at.radius_m` when positive).
fn for_each_point(
    p: &Package<'_>,
    clip: &Clip<'_>,
    meshes: &[&SourceSkin],
    at: Checked,
    mut f: impl FnMut(Vec3),
) -> Option<()> {
    let sk = p.skeleton();
    let mut locals = vec![Transform::IDENTITY; sk.joint_count()];
    clip.sample(at.t, p.sample_defaults(clip), &mut locals)
        .ok()?;
    if clip.is_additive() {
        let delta = locals.clone();
        if !apply_additive_pose(sk.rest_pose(), &delta, at.weight, &mut locals) {
            return None;
        }
    }
    let mut component = vec![Affine3A::IDENTITY; sk.joint_count()];
    if !sk.local_to_component(&locals, &mut component) {
        return None;
    }
    if meshes.is_empty() {
        for c in &component {
            let c: Vec3 = c.translation.into();
            if at.radius_m > 0.0 {
                for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
                    f(c + axis * at.radius_m);
                    f(c - axis * at.radius_m);
                }
            } else {
                f(c);
            }
        }
        return Some(());
    }
    for skin in meshes {
        let Some(mesh) = &skin.mesh else { continue };
        let palette: Vec<Affine3A> = skin
            .joints
            .iter()
            .zip(&skin.inverse_bind)
            .map(|(&j, m)| component.get(j).copied().unwrap_or(Affine3A::IDENTITY) * affine(m))
            .collect();
        for (v, &pos) in mesh.positions.iter().enumerate() {
            let influences = mesh.vertex(v);
            let sum: f32 = influences.iter().map(|(_, w)| w).sum();
            if sum == 0.0 {
                continue;
            }
            let mut out = Vec3::ZERO;
            for &(i, w) in influences {
                let m = palette
                    .get(i as usize)
                    .copied()
                    .unwrap_or(Affine3A::IDENTITY);
                out += (w / sum) * m.transform_point3(pos);
            }
            f(out);
        }
    }
    Some(())
}

/// Bounds for every clip of the written package `bytes` into the
/// report's clips (by name); a point outside its clip's bounds is a
/// located error diagnostic (it cannot happen unless decoding is not
/// deterministic).
pub fn record(
    bytes: &[u8],
    skins: &[SourceSkin],
    joint_radius_m: f32,
    file: &str,
    r: &mut crate::report::AssetReport,
) -> Vec<Option<ClipBounds>> {
    let Ok(p) = Package::load(bytes) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(p.clips().len());
    for clip in p.clips() {
        let Some((b, outside)) = clip_bounds(&p, clip, skins, joint_radius_m) else {
            out.push(None);
            continue;
        };
        out.push(Some(ClipBounds {
            min: b.min,
            max: b.max,
            center: b.center,
            radius: b.radius,
        }));
        if outside > 0 {
            let d = ludus_anim_model::Diagnostic::error(
                "bounds_not_conservative",
                format!("{outside} checked points lie outside the clip's motion bounds"),
            )
            .file(file)
            .clip(clip.name());
            r.diagnostics.push(crate::report::diagnostic(&d));
        }
        if let Some(c) = r.clips.iter_mut().find(|c| c.name == clip.name()) {
            c.bounds = Some(b);
        }
    }
    out
}
