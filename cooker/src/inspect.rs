//! `ludus-anim inspect`: a package, readable by a person (or as JSON).

use ludus_anim_format::package::{CurveRecord, RootMotion};
use ludus_anim_runtime::package::{Clip, Package};
use ludus_anim_runtime::Skeleton;
use serde_json::{json, Value};
use std::fmt::Write;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Human-readable description of a loaded package.
pub fn describe(p: &Package<'_>) -> String {
    let mut s = String::new();
    let sk = p.skeleton();
    let _ = writeln!(
        s,
        "format version: {}",
        ludus_anim_format::package::FORMAT_VERSION
    );
    let _ = writeln!(s, "cooker:         {}", p.meta().cooker_version);
    let _ = writeln!(s, "asset:          {}", p.meta().asset_name);
    let _ = writeln!(s, "source:         {}", p.meta().source_path);
    let _ = writeln!(s, "source hash:    {}", hex(&p.meta().source_hash));
    let _ = writeln!(
        s,
        "skeleton:       {} joints, identity {}",
        sk.joint_count(),
        sk.identity().to_hex()
    );
    describe_joints(&mut s, sk);
    let _ = writeln!(s, "clips:          {}", p.clips().len());
    for c in p.clips() {
        describe_clip(&mut s, p, c);
    }
    crate::inspect_sync::describe(&mut s, p);
    crate::inspect_skins::describe(&mut s, p);
    crate::inspect_sockets::describe(&mut s, p);
    crate::inspect_joint_sets::describe(&mut s, p);
    s
}

/// One line per joint, indented by depth.
fn describe_joints(s: &mut String, sk: &Skeleton) {
    // Parents come before children: one pass gives every depth.
    let mut depths = vec![0usize; sk.joint_count()];
    for j in 0..sk.joint_count() {
        let depth = sk.parent(j).map_or(0, |p| depths[p] + 1);
        depths[j] = depth;
        let t = sk.rest_pose()[j];
        let _ = writeln!(
            s,
            "  {j:>3} {:indent$}{}  id {:016x}  rest t=({:.4}, {:.4}, {:.4}) r=({:.4}, {:.4}, {:.4}, {:.4}) s=({:.3}, {:.3}, {:.3})",
            "",
            sk.name(j),
            sk.ids()[j].0,
            t.translation.x,
            t.translation.y,
            t.translation.z,
            t.rotation.x,
            t.rotation.y,
            t.rotation.z,
            t.rotation.w,
            t.scale.x,
            t.scale.y,
            t.scale.z,
            indent = depth * 2
        );
    }
}

/// A clip's line, then its loop, additive, root motion, markers, curves.
fn describe_clip(s: &mut String, p: &Package<'_>, c: &Clip<'_>) {
    let cook = c.cook_info();
    let _ = writeln!(
        s,
        "  {}: {:.4} s, {} samples at {} Hz, {}, codec {} v{}, {} bytes, profile {}, resample error {:.5} mm, max error {:.5} mm",
        c.name(),
        c.duration_s(),
        c.num_samples(),
        c.sample_rate_hz(),
        c.loop_mode().as_str(),
        cook.codec.name(),
        cook.codec_version,
        cook.blob_size,
        cook.profile,
        cook.resample_error_m * 1000.0,
        cook.max_error_m * 1000.0
    );
    if let Some(seam) = cook.loop_seam_error_m {
        let _ = writeln!(s, "    loop seam error {:.5} mm", seam * 1000.0);
    }
    if let Some(reference) = cook.additive_reference {
        let _ = writeln!(s, "    additive against {reference}");
    }
    if let Some(rm) = &c.root_motion() {
        describe_root_motion(s, c, rm);
    }
    let markers = c.markers();
    if !markers.is_empty() {
        let _ = writeln!(s, "    markers/events: {}", markers.len());
        for m in markers {
            let _ = writeln!(
                s,
                "      {:.4} s  {} '{}' (id {:016x}{})",
                m.event.time_s,
                m.kind.as_str(),
                m.name,
                m.event.id,
                if m.event.reversible {
                    ", reversible"
                } else {
                    ""
                }
            );
        }
    }
    for ch in p.clip_curves(c) {
        let r = ch.record();
        let _ = writeln!(
            s,
            "    curve {} (id {:016x}, default {}, {}, {}{})",
            ch.name(),
            ch.id(),
            r.default_value,
            if r.step { "step" } else { "linear" },
            r.composition.as_str(),
            curve_range(&r),
        );
    }
}

/// `, range [lo, hi]` (`, clamped` after it when the schema clamps) for a
/// declared range; nothing for an unbounded one.
fn curve_range(r: &CurveRecord) -> String {
    let (lo, hi) = r.range;
    if lo == f32::NEG_INFINITY && hi == f32::INFINITY {
        return String::new();
    }
    let clamp = if r.clamp { ", clamped" } else { "" };
    format!(", range [{lo}, {hi}]{clamp}")
}

fn describe_root_motion(s: &mut String, c: &Clip<'_>, rm: &RootMotion<'_>) {
    let o = rm.reference_offset;
    let keys = c.trajectory().map_or(0, |t| t.keys().len());
    let cycle = c.trajectory().map(|t| t.cycle()).unwrap_or_default();
    let _ = writeln!(
        s,
        "    root motion: joint {}, {}, {} keys, cycle t=({:.4}, {:.4}, {:.4}), reference offset t=({:.4}, {:.4}, {:.4}) r=({:.4}, {:.4}, {:.4}, {:.4}){}",
        rm.joint,
        rm.policy.as_str(),
        keys,
        cycle.translation.x,
        cycle.translation.y,
        cycle.translation.z,
        o.translation.x,
        o.translation.y,
        o.translation.z,
        o.rotation.x,
        o.rotation.y,
        o.rotation.z,
        o.rotation.w,
        rm.drift_100_loops_m
            .map(|d| format!(", drift over 100 loops {:.5} mm", d * 1000.0))
            .unwrap_or_default()
    );
}

/// The same as JSON.
pub fn describe_json(p: &Package<'_>) -> Value {
    let sk = p.skeleton();
    let joints: Vec<Value> = (0..sk.joint_count())
        .map(|j| {
            let t = sk.rest_pose()[j];
            json!({
                "index": j,
                "name": sk.name(j),
                "parent": sk.parent(j),
                "id": format!("{:016x}", sk.ids()[j].0),
                "rest": {
                    "translation": t.translation.to_array(),
                    "rotation": t.rotation.to_array(),
                    "scale": t.scale.to_array(),
                }
            })
        })
        .collect();
    let clips: Vec<Value> = p
        .clips()
        .iter()
        .map(|c| {
            let cook = c.cook_info();
            json!({
                "name": c.name(),
                "duration_s": c.duration_s(),
                "samples": c.num_samples(),
                "sample_rate_hz": c.sample_rate_hz(),
                "loop_mode": c.loop_mode().as_str(),
                "codec": cook.codec.name(),
                "codec_version": cook.codec_version,
                "compressed_bytes": cook.blob_size,
                "profile": cook.profile,
                "resample_error_m": cook.resample_error_m,
                "max_error_m": cook.max_error_m,
                "source_hash": hex(&cook.source_hash),
                "loop_seam_error_m": cook.loop_seam_error_m,
                "additive": c.is_additive(),
                "additive_reference": cook.additive_reference,
                "root_motion": c.root_motion().as_ref().map(|rm| {
                    let o = rm.reference_offset;
                    json!({
                        "joint": rm.joint,
                        "policy": rm.policy.as_str(),
                        "keys": c.trajectory().map_or(0, |t| t.keys().len()),
                        "cycle_translation": c.trajectory().map(|t| t.cycle().translation.to_array()),
                        "reference_offset": {
                            "rotation": o.rotation.to_array(),
                            "translation": o.translation.to_array(),
                        },
                        "drift_100_loops_m": rm.drift_100_loops_m,
                    })
                }),
                "events": c.markers().iter().map(|m| json!({
                    "name": m.name,
                    "id": format!("{:016x}", m.event.id),
                    "time_s": m.event.time_s,
                    "kind": m.kind.as_str(),
                    "reversible": m.event.reversible,
                })).collect::<Vec<_>>(),
                "curves": p.clip_curves(c).iter().map(|ch| json!({
                    "name": ch.name(),
                    "id": format!("{:016x}", ch.id()),
                    "default": ch.record().default_value,
                    "interpolation": if ch.record().step { "step" } else { "linear" },
                    "composition": ch.record().composition.as_str(),
                    "range": finite_range(ch.record().range),
                    "clamp": ch.record().clamp,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let mut out = json!({
        "format_version": ludus_anim_format::package::FORMAT_VERSION,
        "cooker_version": p.meta().cooker_version,
        "asset": p.meta().asset_name,
        "source": p.meta().source_path,
        "source_hash": hex(&p.meta().source_hash),
        "skeleton": {
            "joints": joints,
            "identity": sk.identity().to_hex(),
        },
        "clips": clips,
        "sync_groups": crate::inspect_sync::describe_json(p),
        "skins": crate::inspect_skins::describe_json(p),
        "sockets": crate::inspect_sockets::describe_json(p),
        "clip_bounds": p.bindings().clip_bounds.iter().map(|b| b.map(|b| json!({
            "min": b.min, "max": b.max, "center": b.center, "radius": b.radius,
        }))).collect::<Vec<_>>(),
    });
    // Only packages with masks or LOD levels carry the key.
    if let (Some(sets), Some(o)) = (
        crate::inspect_joint_sets::describe_json(p),
        out.as_object_mut(),
    ) {
        o.insert("joint_sets".into(), sets);
    }
    out
}

/// A curve range for JSON: `[lo, hi]`, an unbounded side `null`.
fn finite_range((lo, hi): (f32, f32)) -> [Option<f32>; 2] {
    [lo.is_finite().then_some(lo), hi.is_finite().then_some(hi)]
}
