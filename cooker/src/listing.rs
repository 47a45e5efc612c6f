//! `ludus-anim list`: what a source file will give the cook — format,
//! units and axes, the skeleton's joints as a tree, clips with their rates
//! and keys — read with
//! the same importer the cook uses, before anything is cooked.

use crate::source::{FileSystem, Snapshot};
use crate::stages::import::import;
use crate::stages::resample::key_spacing_rate;
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::{
    Decision, Diagnostic, SourceAsset, SourceClip, SourceFormat, SourceSkeleton,
};
use serde::Serialize;
use std::fmt::Write;
use std::path::Path;

/// One source file as the importer reads it.
#[derive(Clone, Debug, Serialize)]
pub struct SourceListing {
    pub file: String,
    pub format: String,
    /// Meters per source length unit, as declared or assumed (see
    /// `decisions`).
    pub unit_scale_m: f32,
    pub source_axes: String,
    pub joints: usize,
    /// Joints with no parent.
    pub roots: Vec<String>,
    /// Every joint, depth first from each root (what a retarget profile's
    /// chains and a mask's subtrees are written from).
    pub hierarchy: Vec<JointListing>,
    pub clips: Vec<ClipListing>,
    pub decisions: Vec<Decision>,
    pub diagnostics: Vec<Diagnostic>,
}

#[derive(Clone, Debug, Serialize)]
pub struct JointListing {
    pub name: String,
    pub parent: Option<String>,
    /// 0 for a root.
    pub depth: usize,
}

#[derive(Clone, Debug, Serialize)]
pub struct ClipListing {
    pub name: String,
    pub duration_s: f32,
    /// Frame rate the file declares (FBX, BVH, SJSON).
    pub frame_rate_hz: Option<f32>,
    /// Rate implied by the spacing of one curve's keys.
    pub key_rate_hz: Option<f32>,
    pub key_times: usize,
    pub animated_joints: usize,
    pub curves: usize,
    pub markers: usize,
}

/// Read `path` with its importer. An unknown extension or an unreadable
/// or malformed file is a diagnostic naming the file.
pub fn list_source(path: &Path, options: &ImportOptions) -> Result<SourceListing, Box<Diagnostic>> {
    let file = path.display().to_string();
    let format = SourceFormat::of_path(path).ok_or_else(|| {
        Box::new(
            Diagnostic::error(
                "unknown_format",
                "unknown file type (expected .gltf, .glb, .fbx, .bvh or .sjson)",
            )
            .file(&file),
        )
    })?;
    // Companions as the cook confines them: inside the file's directory.
    let policy = crate::source::ReadPolicy {
        companion_root: Some(path.parent().map(Path::to_path_buf).unwrap_or_default()),
        ..Default::default()
    };
    let snapshot = Snapshot::with_policy(&FileSystem, None, policy);
    let bytes = snapshot
        .file(path)
        .map_err(|e| Box::new(Diagnostic::error("io", format!("cannot read: {e}")).file(&file)))?;
    let limits = ludus_anim_model::Limits::default();
    let imported = import(path, format, &bytes.bytes, options, &snapshot, &limits)?;
    let mut diagnostics = imported.asset.diagnostics.0.clone();
    diagnostics.extend(imported.validation.0.iter().cloned());
    Ok(listing(&file, &imported.asset, diagnostics))
}

fn listing(file: &str, a: &SourceAsset, diagnostics: Vec<Diagnostic>) -> SourceListing {
    SourceListing {
        file: file.to_string(),
        format: a.format.name().to_string(),
        unit_scale_m: a.unit_scale_m,
        source_axes: a.source_axes.description.clone(),
        joints: a.skeleton.joints.len(),
        roots: a
            .skeleton
            .joints
            .iter()
            .filter(|j| j.parent.is_none())
            .map(|j| j.name.clone())
            .collect(),
        hierarchy: hierarchy(&a.skeleton),
        clips: a.clips.iter().map(clip_listing).collect(),
        decisions: a.decisions.clone(),
        diagnostics,
    }
}

/// The joints depth first from each root, children in file order. A joint
/// on a cycle or under a bad parent index (which validation reports) is
/// left out rather than looped over.
fn hierarchy(sk: &SourceSkeleton) -> Vec<JointListing> {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); sk.joints.len()];
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for (i, j) in sk.joints.iter().enumerate() {
        match j.parent {
            Some(p) if p < sk.joints.len() && p != i => children[p].push(i),
            Some(_) => {}
            None => stack.push((i, 0)),
        }
    }
    stack.reverse();
    let mut seen = vec![false; sk.joints.len()];
    let mut out = Vec::new();
    while let Some((i, depth)) = stack.pop() {
        if std::mem::replace(&mut seen[i], true) {
            continue;
        }
        let j = &sk.joints[i];
        out.push(JointListing {
            name: j.name.clone(),
            parent: j
                .parent
                .and_then(|p| sk.joints.get(p))
                .map(|p| p.name.clone()),
            depth,
        });
        stack.extend(children[i].iter().rev().map(|&c| (c, depth + 1)));
    }
    out
}

fn clip_listing(c: &SourceClip) -> ClipListing {
    ClipListing {
        name: c.name.clone(),
        duration_s: c.duration_s,
        frame_rate_hz: c.frame_rate_hz,
        key_rate_hz: key_spacing_rate(c),
        key_times: c.key_times.len(),
        animated_joints: c
            .tracks
            .iter()
            .filter(|t| t.translation.is_some() || t.rotation.is_some() || t.scale.is_some())
            .count(),
        curves: c.curves.len(),
        markers: c.markers.len(),
    }
}

/// The listing as text, for a person.
pub fn render(l: &SourceListing) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} ({})", l.file, l.format);
    let _ = writeln!(
        s,
        "  units: {} m per unit; axes: {}",
        l.unit_scale_m, l.source_axes
    );
    let _ = writeln!(
        s,
        "  skeleton: {} joints, root {}",
        l.joints,
        if l.roots.is_empty() {
            "-".to_string()
        } else {
            l.roots.join(", ")
        }
    );
    for j in &l.hierarchy {
        let _ = writeln!(s, "    {}{}", "  ".repeat(j.depth), j.name);
    }
    for c in &l.clips {
        let rate = |r: Option<f32>| r.map_or("-".to_string(), |r| format!("{r} Hz"));
        let _ = writeln!(
            s,
            "  clip '{}': {:.3} s, declared rate {}, key rate {}, {} key times, {} animated joints, {} curves, {} markers",
            c.name,
            c.duration_s,
            rate(c.frame_rate_hz),
            rate(c.key_rate_hz),
            c.key_times,
            c.animated_joints,
            c.curves,
            c.markers
        );
    }
    for d in &l.decisions {
        let _ = writeln!(s, "  decision[{}]: {}", d.kind, d.detail);
    }
    for d in &l.diagnostics {
        let _ = writeln!(s, "  {d}");
    }
    s
}
