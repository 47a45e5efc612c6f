//! Motion bounds of each pose clip (#45 item 4): a box and a sphere in
//! character space (the skeleton's component space, meters) holding every
//! skinned vertex of every skin (joint positions when the asset has no
//! mesh) at every checked time: each sample and each midpoint between two
//! samples, decoded from the written package as a game would. The sphere
//! is the box's circumsphere. A second pass re-skins every checked time
//! and counts points outside either, which must be none.
//! Stored in the package's BNDS section (`Package::bindings`). Not
//! covered yet: additive clips (no bounds), a declared radius around
//! joints, and the times between checked times.

use crate::report::BoundsReport;
use ludus_anim_format::math::{Affine3A, Transform, Vec3};
use ludus_anim_format::skin::ClipBounds;
use ludus_anim_model::skin::affine;
use ludus_anim_model::SourceSkin;
use ludus_anim_runtime::package::{Clip, Package};

/// The bounds of `clip` of `p`, and how many checked points lie outside
/// them (0 unless decoding differs between passes). `None` for an
/// additive clip or a pose that does not decode.
pub fn clip_bounds(
    p: &Package<'_>,
    clip: &Clip<'_>,
    skins: &[SourceSkin],
) -> Option<(BoundsReport, usize)> {
    if clip.is_additive() {
        return None;
    }
    let meshes: Vec<&SourceSkin> = skins.iter().filter(|s| s.mesh.is_some()).collect();
    let n = clip.num_samples().max(1);
    let rate = clip.sample_rate_hz();
    let times: Vec<f32> = (0..2 * n - 1)
        .map(|k| (k as f32 * 0.5 / rate).min(clip.duration_s()))
        .collect();
    let mut lo = Vec3::splat(f32::INFINITY);
    let mut hi = Vec3::splat(f32::NEG_INFINITY);
    let mut per_time = 0;
    for &t in &times {
        per_time = 0;
        for_each_point(p, clip, &meshes, t, |v| {
            lo = lo.min(v);
            hi = hi.max(v);
            per_time += 1;
        })?;
    }
    if per_time == 0 || !lo.is_finite() || !hi.is_finite() {
        return None;
    }
    let center = (lo + hi) * 0.5;
    let radius = (hi - lo).length() * 0.5;
    let mut outside = 0;
    for &t in &times {
        for_each_point(p, clip, &meshes, t, |v| {
            let in_box = v.cmpge(lo).all() && v.cmple(hi).all();
            if !in_box || v.distance(center) > radius * (1.0 + 1e-6) {
                outside += 1;
            }
        })?;
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
    };
    Some((report, outside))
}

/// Every point of the pose at `t`: each weighted vertex of each mesh
/// skinned with `component[joint] * inverse_bind` (weights normalized), or
/// each joint's position without a mesh.
fn for_each_point(
    p: &Package<'_>,
    clip: &Clip<'_>,
    meshes: &[&SourceSkin],
    t: f32,
    mut f: impl FnMut(Vec3),
) -> Option<()> {
    let sk = p.skeleton();
    let mut locals = vec![Transform::IDENTITY; sk.joint_count()];
    clip.sample(t, p.sample_defaults(clip), &mut locals).ok()?;
    let mut component = vec![Affine3A::IDENTITY; sk.joint_count()];
    if !sk.local_to_component(&locals, &mut component) {
        return None;
    }
    if meshes.is_empty() {
        component.iter().for_each(|c| f(c.translation.into()));
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
    file: &str,
    r: &mut crate::report::AssetReport,
) -> Vec<Option<ClipBounds>> {
    let Ok(p) = Package::load(bytes) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(p.clips().len());
    for clip in p.clips() {
        let Some((b, outside)) = clip_bounds(&p, clip, skins) else {
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
