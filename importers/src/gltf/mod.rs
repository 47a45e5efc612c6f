//! glTF 2.0 importer: `.gltf` (JSON with data-URI or external buffers) and
//! `.glb` (binary container with a BIN chunk).
//!
//! glTF already uses the project's conventions (right-handed, +Y up,
//! meters, column vectors, quaternions stored x, y, z, w), so values pass
//! through unconverted. What this module decides is which nodes become
//! joints, how authored keys map onto [`ludus_anim_model::Curve`]s, and how
//! a malformed file is reported.
//!
//! The pipeline is deliberately staged so each stage only sees data the
//! previous one has checked:
//!
//! 1. [`container`]: split a GLB, parse and validate the JSON, check the
//!    version and required extensions.
//! 2. [`skeleton::Hierarchy`]: parent links, rejecting cycles and nodes
//!    with two parents (the gltf crate does not check either).
//! 3. [`buffers`]: load only the buffers animation and skin data need;
//!    images are never touched, so a missing texture cannot stop a cook.
//! 4. [`skeleton::select`]: which nodes are joints, their names and rest
//!    transforms.
//! 5. [`clips`]: one [`ludus_anim_model::SourceClip`] per glTF animation,
//!    with its timeline markers from [`markers`].
//!
//! # Markers (`animation.extras.markers`)
//! glTF has no timeline markers; by this project's convention they live in
//! an animation's `extras`:
//!
//! ```json
//! "extras": { "markers": [
//!   { "name": "foot_l", "time": 0.25, "kind": "sync" },
//!   { "name": "step_sound", "time": 0.3 }
//! ] }
//! ```
//!
//! `name` is a non-empty string; `time` is seconds on the same timeline as
//! the animation's sampler inputs (shifted with the keys when the clip is
//! moved to start at zero, and required to lie within the keyed span);
//! `kind` is `"sync"` or `"event"`, default `"event"`. Other fields and
//! other extras are ignored. A marker that breaks this convention stops the
//! import with an error naming the file, clip and marker.
//!
//! Value-level problems (NaN keys, negative scale keys, zero quaternions)
//! are kept as authored and left to `validate_asset`, which names clip,
//! joint and time; structural problems are `ImportError::Malformed`.

// `ImportError` is the crate's shared error type and carries a full
// `Diagnostic` by value; every stage here returns it unchanged, so the
// size lint would only ask us to box a type this module does not own.

mod accessor;
mod buffers;
mod clips;
mod container;
mod markers;
mod skeleton;
mod skin;
mod sockets;

use crate::{CompanionReader, FormatImporter, ImportError, ImportOptions};
use ludus_anim_model::limits::{LimitExceeded, Limits, MemoryBudget};
use ludus_anim_model::{AxisSystem, Decision, Diagnostic, Diagnostics, SourceAsset, SourceFormat};
use std::path::Path;

/// The glTF 2.0 (`.gltf` and `.glb`) importer.
pub const GLTF: FormatImporter = FormatImporter {
    formats: &[SourceFormat::Gltf, SourceFormat::Glb],
    import: import_limited,
};

/// Import one glTF or GLB file. `bytes` are the file's contents; external
/// buffers are resolved relative to `path` (and confined to the asset's
/// directory or the reader's allowed root), read through `companions` and
/// listed in [`SourceAsset::companions`]. Every accessor count is checked
/// against `limits` before it is decoded.
fn import_limited(
    path: &Path,
    bytes: &[u8],
    options: &ImportOptions,
    companions: &dyn CompanionReader,
    limits: &Limits,
) -> Result<SourceAsset, ImportError> {
    let mut report = Report::new(path, limits);
    let parsed = container::parse(bytes, &mut report)?;
    let root = &parsed.root;
    let hierarchy = skeleton::Hierarchy::build(root, &report)?;
    let loaded = buffers::load(path, root, parsed.bin, companions, &mut report)?;
    let ibms = skeleton::check_skins(root, &loaded.buffers, &report)?;
    let selection = skeleton::select(root, &hierarchy, options, &mut report)?;
    let clips = clips::build(root, &loaded.buffers, &selection, &mut report)?;
    let skins = skin::skins(root, &loaded.buffers, &selection, ibms, &mut report)?;
    let sockets = sockets::sockets(root, &hierarchy, &selection, &mut report);
    report.decide(
        "units",
        "glTF 2.0 lengths are meters and axes are +Y up, right-handed: unit_scale_m = 1.0, no axis conversion",
    );
    Ok(SourceAsset {
        path: report.file.clone(),
        format: parsed.format,
        skeleton: selection.skeleton,
        clips,
        unit_scale_m: 1.0,
        source_axes: AxisSystem {
            description: "+Y up, +Z front, right-handed (glTF 2.0)".to_string(),
        },
        joint_shell_distance: None,
        diagnostics: report.diagnostics,
        decisions: report.decisions,
        companions: loaded.companions,
        skins,
        sockets,
    })
}

/// Diagnostics and decisions collected while importing, all tagged with
/// the file so a log line alone locates the problem.
pub(crate) struct Report {
    file: String,
    diagnostics: Diagnostics,
    decisions: Vec<Decision>,
    limits: Limits,
    /// What decoding accessors may still allocate.
    budget: MemoryBudget,
}

impl Report {
    fn new(path: &Path, limits: &Limits) -> Self {
        Report {
            file: path.display().to_string(),
            diagnostics: Diagnostics::default(),
            decisions: Vec::new(),
            limits: limits.clone(),
            budget: MemoryBudget::new(limits.max_asset_memory_bytes),
        }
    }

    /// A limit error naming this file (and the clip and joint, if given).
    fn limit(&self, e: LimitExceeded, clip: Option<&str>, joint: Option<&str>) -> ImportError {
        let mut e = e.file(self.file.clone());
        if let Some(c) = clip {
            e = e.clip(c);
        }
        if let Some(j) = joint {
            e = e.joint(j);
        }
        ImportError::Limit(Box::new(e))
    }

    /// Record a warning or error that does not stop the import.
    fn push(&mut self, diagnostic: Diagnostic) {
        self.diagnostics.push(diagnostic.file(self.file.clone()));
    }

    fn decide(&mut self, kind: &str, detail: impl Into<String>) {
        self.decisions.push(Decision::new(kind, detail));
    }

    /// A parse-level failure naming this file.
    fn malformed(&self, code: &str, message: impl Into<String>) -> ImportError {
        self.malformed_at(code, message, None, None)
    }

    /// A parse-level failure naming this file and, where known, the clip
    /// and joint (node) it concerns.
    fn malformed_at(
        &self,
        code: &str,
        message: impl Into<String>,
        clip: Option<&str>,
        joint: Option<&str>,
    ) -> ImportError {
        let mut d = Diagnostic::error(code, message).file(self.file.clone());
        if let Some(c) = clip {
            d = d.clip(c);
        }
        if let Some(j) = joint {
            d = d.joint(j);
        }
        ImportError::Malformed(Box::new(d))
    }
}

/// The display name of a node in messages: its own name, or `node<index>`
/// for unnamed nodes (the same fallback joints get).
fn node_label(root: &::gltf::json::Root, index: usize) -> String {
    match root.nodes.get(index).and_then(|n| n.name.as_deref()) {
        Some(name) if !name.is_empty() => name.to_string(),
        _ => format!("node{index}"),
    }
}
