//! FBX importer (binary and ASCII), built on the ufbx loader.
//!
//! ufbx does the parsing and applies every FBX transform rule (pre/post
//! rotation, rotation order, pivots and offsets, inherit types). This module
//! decides what becomes a joint, where the rest pose comes from and how
//! clips are sampled, and turns the result into a [`SourceAsset`]. No ufbx
//! type leaves this module.
//!
//! # Axes and units
//! The scene is converted to +Y up, right-handed (+X right, +Z front) by
//! ufbx's `AdjustTransforms` space conversion: the conversion rotation is
//! folded into the local transform of the top-level nodes only, so every
//! joint below keeps its authored local transform (a mode that rotated
//! geometry, or the synthetic scene root, would either leave the skeleton
//! roots unconverted or be invisible to us since the scene root is not a
//! joint). A left-handed file is additionally mirrored along Z. Lengths are
//! not converted: `unit_scale_m` is the file's `UnitScaleFactor` / 100
//! (FBX declares centimeters per unit); a later stage applies it.
//!
//! # Joints
//! See [`skeleton`] for the exact selection rule and the rest-pose rule.
//!
//! # Clips
//! One clip per animation stack, sampled with ufbx at twice the file's frame
//! rate; see [`clips`]. Custom animated properties become scalar curves
//! when [`ImportOptions::custom_curves`] asks for them; see [`custom`].
//!
//! # Markers
//! ufbx exposes no timeline markers: its `Marker` elements are MotionBuilder
//! FK/IK effector nodes, not timeline notes. The FBX SDK keeps timeline
//! markers as sub-properties of the `TimeMarker` compound in
//! `GlobalSettings`, which ufbx passes through untyped; with no fixture
//! carrying one, their layout is unverified, so FBX clips carry no
//! [`ludus_anim_model::source::SourceMarker`]s (markers for FBX assets come
//! from the project manifest) and a file that declares any gets a
//! `fbx_markers_not_imported` warning instead of losing them silently.

mod clips;
mod custom;
mod skeleton;
mod skin;
mod sockets;

use crate::{CompanionReader, FormatImporter, ImportError, ImportOptions};
use ludus_anim_model::limits::Limits;
use ludus_anim_model::SourceFormat;
use ludus_anim_model::{
    AxisSystem, Decision, Diagnostic, Diagnostics, SourceAsset, SourceSkeleton,
};
use std::path::Path;

/// Frame rate assumed when the file declares none that is usable (FBX's
/// own default time mode is 30 fps).
const FALLBACK_FRAME_RATE_HZ: f64 = 30.0;

/// Meters per unit assumed when the file's unit is unusable (FBX's default
/// unit is the centimeter).
const FALLBACK_UNIT_M: f64 = 0.01;

/// The FBX (`.fbx`, through ufbx) importer.
pub const FBX: FormatImporter = FormatImporter {
    formats: &[SourceFormat::Fbx],
    import: import_limited,
};

/// Import one FBX file already read into memory. ufbx's allocations are
/// capped at the asset memory limit; joints and every stack's span and
/// sample count are checked before ufbx evaluates anything.
// `ImportError` carries a full `Diagnostic`; its size is the crate's shared
// importer interface, not something this module can change.
fn import_limited(
    path: &Path,
    bytes: &[u8],
    options: &ImportOptions,
    _companions: &dyn CompanionReader,
    limits: &Limits,
) -> Result<SourceAsset, ImportError> {
    let file = path.display().to_string();
    let scene = load(path, bytes, limits)?;

    let mut decisions = Vec::new();
    let mut diagnostics = Diagnostics::default();
    // ufbx reports some warnings once per element; one line per kind is enough.
    let mut warnings: Vec<(String, usize)> = Vec::new();
    for w in scene.metadata.warnings.iter() {
        let text = w.description.as_ref();
        match warnings.iter_mut().find(|(d, _)| d == text) {
            Some((_, n)) => *n += w.count.max(1),
            None => warnings.push((text.to_string(), w.count.max(1))),
        }
    }
    for (text, count) in warnings {
        let times = if count > 1 {
            format!(" ({count} times)")
        } else {
            String::new()
        };
        diagnostics.push(
            Diagnostic::warning("fbx_loader_warning", format!("ufbx: {text}{times}")).file(&file),
        );
    }

    let source_axes = axes_description(&scene.settings.axes);
    let unit_scale_m = unit_scale(&scene, &mut decisions);
    decisions.push(axes_decision(&scene, &source_axes));
    let frame_rate = frame_rate(&scene, &mut decisions);
    warn_timeline_markers(&scene, &file, &mut diagnostics);

    let candidates = skeleton::select(&scene, &mut decisions);
    limits
        .check_joints(candidates.len())
        .map_err(|e| ImportError::limit(path, e))?;
    skeleton::rest_decision(&scene, &mut decisions);
    let sampled = clips::sample_stacks(
        &scene,
        &candidates,
        frame_rate,
        &options.custom_curves,
        &file,
        limits,
        &mut decisions,
        &mut diagnostics,
    )
    .map_err(|e| ImportError::limit(path, e))?;
    let (joints, remap) = skeleton::finish(&candidates, &sampled.animated, options, &mut decisions);

    let skins = skin::skins(&scene, &candidates, &remap, &mut decisions);
    let sockets = sockets::sockets(&scene, &candidates, &remap, &joints, &mut decisions);
    let mut clips = sampled.clips;
    for clip in &mut clips {
        clip.tracks
            .retain_mut(|tr| match remap.get(tr.joint).copied().flatten() {
                Some(j) => {
                    tr.joint = j;
                    true
                }
                None => false,
            });
        clip.collect_key_times();
    }

    Ok(SourceAsset {
        path: file,
        format: SourceFormat::Fbx,
        skeleton: SourceSkeleton { joints },
        clips,
        unit_scale_m: unit_scale_m as f32,
        source_axes: AxisSystem {
            description: source_axes,
        },
        joint_shell_distance: None,
        diagnostics,
        decisions,
        companions: Vec::new(),
        skins,
        sockets,
    })
}

/// Load options shared by the importer and (duplicated on purpose) by the
/// tests that compare against ufbx's own node transforms.
/// ufbx's temporary and result allocations are each capped at the asset
/// memory limit (ufbx then fails the load cleanly).
fn load_options(limits: &Limits) -> ufbx::LoadOpts<'static> {
    let cap = usize::try_from(limits.max_asset_memory_bytes).unwrap_or(usize::MAX);
    let allocator = || ufbx::AllocatorOpts {
        memory_limit: cap,
        ..Default::default()
    };
    ufbx::LoadOpts {
        temp_allocator: allocator(),
        result_allocator: allocator(),
        // Vertex positions and skin weights are read for the bind-pose
        // check of each skin (the cook's oracle); embedded media never.
        ignore_geometry: false,
        ignore_embedded: true,
        load_external_files: false,
        target_axes: ufbx::CoordinateAxes {
            right: ufbx::CoordinateAxis::PositiveX,
            up: ufbx::CoordinateAxis::PositiveY,
            front: ufbx::CoordinateAxis::PositiveZ,
        },
        space_conversion: ufbx::SpaceConversion::AdjustTransforms,
        handedness_conversion_axis: ufbx::MirrorAxis::Z,
        // Our joints compose as plain parent * local matrices. Non-standard
        // inheritance (Maya segment scale compensate, MotionBuilder
        // component-wise scale) is compensated by ufbx where exact, and
        // otherwise expressed with extra "scale helper" nodes that then
        // become joints.
        inherit_mode_handling: ufbx::InheritModeHandling::Compensate,
        ..Default::default()
    }
}

fn load(path: &Path, bytes: &[u8], limits: &Limits) -> Result<ufbx::SceneRoot, ImportError> {
    if bytes.is_empty() {
        return Err(ImportError::malformed(
            path,
            "fbx_load_failed",
            "file is empty",
        ));
    }
    let scene = ufbx::load_memory(bytes, load_options(limits)).map_err(|e| {
        ImportError::malformed(
            path,
            "fbx_load_failed",
            format!("not a readable FBX file: {}", error_text(&e)),
        )
    })?;
    // ufbx recovers from much damage (e.g. garbled ASCII braces) by
    // dropping what it cannot parse; a scene left with no node and no
    // animation at all is a damaged or empty file, not an asset.
    let has_nodes = scene.nodes.iter().any(|n| !n.is_root);
    if !has_nodes && scene.anim_stacks.is_empty() {
        return Err(ImportError::malformed(
            path,
            "fbx_empty_scene",
            "FBX file contains no nodes and no animation (empty or damaged file)",
        ));
    }
    Ok(scene)
}

/// ufbx's error description plus its detail text, without the internal
/// call stack. Formatted through `ufbx::format_error` into our own buffer
/// (lossy UTF-8) so a strange message can never panic.
fn error_text(e: &ufbx::Error) -> String {
    let mut buf = [0u8; 1024];
    let n = ufbx::format_error(&mut buf, e).min(buf.len());
    let text = String::from_utf8_lossy(buf.get(..n).unwrap_or(&[])).into_owned();
    let first = text.lines().next().unwrap_or("").trim();
    // "ufbx vX.Y.Z error: Truncated file (detail)" -> "Truncated file (detail)"
    let msg = first
        .split_once("error: ")
        .map(|(_, m)| m)
        .unwrap_or(first)
        .trim();
    if msg.is_empty() {
        e.description.as_ref().to_string()
    } else {
        msg.to_string()
    }
}

fn axis_name(a: ufbx::CoordinateAxis) -> &'static str {
    match a {
        ufbx::CoordinateAxis::PositiveX => "+X",
        ufbx::CoordinateAxis::NegativeX => "-X",
        ufbx::CoordinateAxis::PositiveY => "+Y",
        ufbx::CoordinateAxis::NegativeY => "-Y",
        ufbx::CoordinateAxis::PositiveZ => "+Z",
        ufbx::CoordinateAxis::NegativeZ => "-Z",
        ufbx::CoordinateAxis::Unknown => "?",
    }
}

fn axis_vector(a: ufbx::CoordinateAxis) -> Option<[f64; 3]> {
    Some(match a {
        ufbx::CoordinateAxis::PositiveX => [1.0, 0.0, 0.0],
        ufbx::CoordinateAxis::NegativeX => [-1.0, 0.0, 0.0],
        ufbx::CoordinateAxis::PositiveY => [0.0, 1.0, 0.0],
        ufbx::CoordinateAxis::NegativeY => [0.0, -1.0, 0.0],
        ufbx::CoordinateAxis::PositiveZ => [0.0, 0.0, 1.0],
        ufbx::CoordinateAxis::NegativeZ => [0.0, 0.0, -1.0],
        ufbx::CoordinateAxis::Unknown => return None,
    })
}

/// "+Z up, -Y front, +X right, right-handed" from the file's declared axes.
fn axes_description(axes: &ufbx::CoordinateAxes) -> String {
    let hand = match (
        axis_vector(axes.right),
        axis_vector(axes.up),
        axis_vector(axes.front),
    ) {
        (Some(r), Some(u), Some(f)) => {
            let cross = [
                r[1] * u[2] - r[2] * u[1],
                r[2] * u[0] - r[0] * u[2],
                r[0] * u[1] - r[1] * u[0],
            ];
            let det = cross[0] * f[0] + cross[1] * f[1] + cross[2] * f[2];
            if det > 0.0 {
                "right-handed"
            } else if det < 0.0 {
                "left-handed"
            } else {
                "degenerate axes"
            }
        }
        _ => "axes not declared",
    };
    format!(
        "{} up, {} front, {} right, {hand}",
        axis_name(axes.up),
        axis_name(axes.front),
        axis_name(axes.right)
    )
}

fn axes_decision(scene: &ufbx::Scene, description: &str) -> Decision {
    let meta = &scene.metadata;
    let rotated = {
        let q = &meta.root_rotation;
        (q.w.abs() - 1.0).abs() > 1e-9 || q.x != 0.0 || q.y != 0.0 || q.z != 0.0
    };
    let mirrored = meta.mirror_axis != ufbx::MirrorAxis::None;
    let mut detail = format!("source axes: {description}");
    let orig = scene.settings.original_axis_up;
    if orig != ufbx::CoordinateAxis::Unknown && orig != scene.settings.axes.up {
        detail.push_str(&format!(
            " (exporter notes the authoring up axis was {})",
            axis_name(orig)
        ));
    }
    if rotated || mirrored {
        detail.push_str(
            "; converted to +Y up, right-handed by adjusting the top-level node transforms",
        );
        if mirrored {
            detail.push_str(" and mirroring along Z");
        }
    } else {
        detail.push_str("; already +Y up, right-handed: no conversion");
    }
    Decision::new("axis_conversion", detail)
}

fn unit_scale(scene: &ufbx::Scene, decisions: &mut Vec<Decision>) -> f64 {
    let m = scene.settings.unit_meters;
    if m.is_finite() && m > 0.0 {
        decisions.push(Decision::new(
            "unit_scale",
            format!(
                "UnitScaleFactor {} cm per unit: unit_scale_m = {m}; lengths kept in source units",
                m * 100.0
            ),
        ));
        m
    } else {
        decisions.push(Decision::new(
            "unit_scale",
            format!("file declares no usable unit ({m}); assumed centimeters (unit_scale_m = {FALLBACK_UNIT_M})"),
        ));
        FALLBACK_UNIT_M
    }
}

/// Warn when `GlobalSettings` declares FBX SDK timeline markers
/// (`TimeMarker|<name>...` sub-properties): they are not imported.
fn warn_timeline_markers(scene: &ufbx::Scene, file: &str, diagnostics: &mut Diagnostics) {
    let mut names: Vec<&str> = scene
        .settings
        .props
        .props
        .iter()
        .filter_map(|p| p.name.as_ref().strip_prefix("TimeMarker|"))
        .map(|rest| rest.split('|').next().unwrap_or(rest))
        .collect();
    names.sort_unstable();
    names.dedup();
    if !names.is_empty() {
        diagnostics.push(
            Diagnostic::warning(
                "fbx_markers_not_imported",
                format!(
                    "file declares timeline markers ({}) that are not imported; \
                     declare them in the project manifest",
                    names.join(", ")
                ),
            )
            .file(file),
        );
    }
}

fn frame_rate(scene: &ufbx::Scene, decisions: &mut Vec<Decision>) -> f64 {
    let fps = scene.settings.frames_per_second;
    if fps.is_finite() && fps > 0.0 && fps <= 10_000.0 {
        fps
    } else {
        decisions.push(Decision::new(
            "frame_rate",
            format!(
                "file declares no usable frame rate ({fps}); assumed {FALLBACK_FRAME_RATE_HZ} fps"
            ),
        ));
        FALLBACK_FRAME_RATE_HZ
    }
}
