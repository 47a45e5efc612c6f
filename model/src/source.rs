//! Source assets as importers produce them: authored keys, not samples.
//!
//! Importers convert axes to the project convention (+Y up, right-handed)
//! but keep lengths in source units and declare `unit_scale_m`; the
//! normalize stage applies units (or the user's `--units` override), orders
//! the skeleton depth-first, adds a synthetic root where needed, and makes
//! quaternions hemisphere-continuous.

use crate::curve::Curve;
use crate::diagnostics::{Decision, Diagnostic, Diagnostics};
use crate::format::SourceFormat;
use ludus_anim_format::events::MarkerKind;
use ludus_anim_format::math::MIN_SCALE;
use ludus_anim_format::math::{Quat, Transform, Vec3};
use serde::{Deserialize, Serialize};

/// One joint. `parent` indexes into the same skeleton's joint list; order
/// is arbitrary here (the normalize stage sorts it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceJoint {
    /// Unique within the skeleton (importers rename duplicates and record a
    /// [`Decision`]).
    pub name: String,
    pub parent: Option<usize>,
    /// Rest local transform (in source units).
    pub rest: Transform,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct SourceSkeleton {
    pub joints: Vec<SourceJoint>,
}

impl SourceSkeleton {
    pub fn find(&self, name: &str) -> Option<usize> {
        self.joints.iter().position(|j| j.name == name)
    }

    /// Names from the root down to `joint`, joined by '/': the input of the
    /// stable joint ID. Returns `None` on a cycle or a bad parent index.
    pub fn path(&self, joint: usize) -> Option<String> {
        let mut names = Vec::new();
        let mut j = Some(joint);
        let mut steps = 0;
        while let Some(i) = j {
            let node = self.joints.get(i)?;
            names.push(node.name.as_str());
            j = node.parent;
            steps += 1;
            if steps > self.joints.len() {
                return None;
            }
        }
        names.reverse();
        Some(names.join("/"))
    }

    /// For every joint, whether its parent chain reaches a root through
    /// valid indices (false on a parent cycle, below one, or below a bad
    /// parent index): `path(j).is_some()` for all joints in one linear
    /// pass, where calling `path` per joint is quadratic in the depth.
    pub fn reaches_root(&self) -> Vec<bool> {
        #[derive(Clone, Copy, PartialEq)]
        enum State {
            Unknown,
            OnPath,
            Root,
            Broken,
        }
        let mut state = vec![State::Unknown; self.joints.len()];
        let mut path = Vec::new();
        for start in 0..self.joints.len() {
            path.clear();
            let mut at = start;
            let end = loop {
                match state.get(at).copied() {
                    Some(State::Unknown) => {
                        state[at] = State::OnPath;
                        path.push(at);
                        match self.joints[at].parent {
                            Some(p) => at = p,
                            None => break State::Root,
                        }
                    }
                    Some(State::OnPath) | None => break State::Broken,
                    Some(known) => break known,
                }
            };
            for &j in &path {
                state[j] = end;
            }
        }
        state.into_iter().map(|s| s == State::Root).collect()
    }
}

/// Declared tracks of one joint in one clip. A missing track means the
/// joint keeps its rest value for that channel.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct JointTracks {
    pub joint: usize,
    pub translation: Option<Curve<Vec3>>,
    pub rotation: Option<Curve<Quat>>,
    pub scale: Option<Curve<Vec3>>,
}

impl JointTracks {
    pub fn new(joint: usize) -> Self {
        JointTracks {
            joint,
            translation: None,
            rotation: None,
            scale: None,
        }
    }
}

/// A named scalar channel (morph weight, contact weight, custom property).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ScalarCurve {
    /// Unique within the clip, e.g. `Cube/weights/Smile`.
    pub name: String,
    pub curve: Curve<f32>,
    /// Value when the channel is not animated.
    pub default: f32,
}

/// A named point in time on a clip's timeline, as authored in the source
/// (glTF `animation.extras.markers`). Times are clip-relative seconds,
/// shifted like the clip's keys.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceMarker {
    pub name: String,
    pub time_s: f32,
    /// A sync marker (a phase point for blending, e.g. a foot plant) or
    /// an event (a gameplay or presentation notification).
    pub kind: MarkerKind,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceClip {
    pub name: String,
    /// Clip length in seconds; keys span `[0, duration_s]` (importers shift
    /// the first key to zero and record the shift as a decision).
    pub duration_s: f32,
    pub tracks: Vec<JointTracks>,
    pub curves: Vec<ScalarCurve>,
    /// Frame rate the file declares (FBX, BVH, SJSON). glTF has none.
    pub frame_rate_hz: Option<f32>,
    /// Sorted distinct key times of all tracks, for rate decisions and
    /// exact-at-key verification.
    pub key_times: Vec<f32>,
    /// Timeline markers the source file carries, sorted by time. Not part
    /// of `key_times`. Defaults to empty when reading older serialized clips.
    #[serde(default)]
    pub markers: Vec<SourceMarker>,
}

impl SourceClip {
    /// The authored local pose at `t` (clamped to the clip's span), by the
    /// source format's curve semantics: `rest[j]` for a joint without a
    /// track, and each channel a track has over it; rotations normalized.
    /// The one way the cook, the retargeter and their tests sample a
    /// source clip.
    pub fn sample_pose(&self, rest: &[Transform], t: f32, out: &mut [Transform]) {
        let t = t.clamp(0.0, self.duration_s.max(0.0));
        out.copy_from_slice(rest);
        for tr in &self.tracks {
            let Some(o) = out.get_mut(tr.joint) else {
                continue;
            };
            if let Some(v) = tr.translation.as_ref().and_then(|c| c.evaluate(t)) {
                o.translation = v;
            }
            if let Some(v) = tr.rotation.as_ref().and_then(|c| c.evaluate(t)) {
                o.rotation = v.normalize();
            }
            if let Some(v) = tr.scale.as_ref().and_then(|c| c.evaluate(t)) {
                o.scale = v;
            }
        }
    }

    /// Recompute `key_times` from the tracks and curves.
    pub fn collect_key_times(&mut self) {
        let mut t: Vec<f32> = Vec::new();
        for tr in &self.tracks {
            if let Some(c) = &tr.translation {
                t.extend(c.keys.iter().map(|k| k.time));
            }
            if let Some(c) = &tr.rotation {
                t.extend(c.keys.iter().map(|k| k.time));
            }
            if let Some(c) = &tr.scale {
                t.extend(c.keys.iter().map(|k| k.time));
            }
        }
        for c in &self.curves {
            t.extend(c.curve.keys.iter().map(|k| k.time));
        }
        t.retain(|v| v.is_finite());
        t.sort_by(f32::total_cmp);
        t.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
        self.key_times = t;
    }
}

/// Axis convention of the source file, for the report (values in the model
/// are already converted to +Y up, right-handed).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AxisSystem {
    /// e.g. "+Y up, +Z front, right-handed".
    pub description: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SourceAsset {
    /// Path as given by the user (for diagnostics).
    pub path: String,
    /// The format the importer read (a `.gltf` holding GLB bytes is
    /// `Glb`).
    pub format: SourceFormat,
    pub skeleton: SourceSkeleton,
    pub clips: Vec<SourceClip>,
    /// Meters per source length unit, as declared by the file or assumed by
    /// the importer (see `decisions`).
    pub unit_scale_m: f32,
    pub source_axes: AxisSystem,
    /// Per-joint error shell distance in source units, where the file
    /// carries one (ACL SJSON `vertex_distance`).
    pub joint_shell_distance: Option<Vec<f32>>,
    pub diagnostics: Diagnostics,
    pub decisions: Vec<Decision>,
    /// Other files the importer read (a .gltf's .bin buffers): their bytes
    /// are part of the asset's content hash.
    pub companions: Vec<String>,
    /// Mesh skin bindings (glTF skins, FBX skin deformers); their bind
    /// pose is theirs, never the skeleton's rest.
    #[serde(default)]
    pub skins: Vec<crate::skin::SourceSkin>,
    /// Frames on joints read from the file (non-bone child nodes).
    #[serde(default)]
    pub sockets: Vec<crate::socket::SourceSocket>,
}

/// Scale components below this ratio of the largest one make a transform
/// near-singular.
pub const MAX_SCALE_ANISOTROPY: f32 = 1e6;

fn bad_scale(s: Vec3) -> bool {
    let min = s.min_element();
    min < MIN_SCALE || s.max_element() / min > MAX_SCALE_ANISOTROPY
}

/// Check everything the seed requires at import: finite values,
/// normalizable rotations, strictly positive non-singular scale, sound key
/// order, a sound hierarchy. Returns diagnostics naming file, clip, joint
/// and time; errors mean the asset cannot be cooked.
pub fn validate_asset(asset: &SourceAsset) -> Diagnostics {
    let mut out = Diagnostics::default();
    let file = asset.path.as_str();
    let sk = &asset.skeleton;
    // A file that animates only scalar curves (morph weights) cooks onto a
    // synthetic root; a file with neither joints nor curves has nothing.
    let has_curves = asset.clips.iter().any(|c| !c.curves.is_empty());
    if sk.joints.is_empty() && !has_curves {
        out.push(
            Diagnostic::error(
                "empty_skeleton",
                "asset has no joints and no curves: nothing to cook",
            )
            .file(file),
        );
    }
    let reaches_root = sk.reaches_root();
    for (i, j) in sk.joints.iter().enumerate() {
        if let Some(p) = j.parent {
            if p >= sk.joints.len() || p == i {
                out.push(
                    Diagnostic::error("broken_hierarchy", format!("parent index {p} is invalid"))
                        .file(file)
                        .joint(&j.name),
                );
                continue;
            }
        }
        if !reaches_root[i] {
            out.push(
                Diagnostic::error("cyclic_hierarchy", "joint is part of a parent cycle")
                    .file(file)
                    .joint(&j.name),
            );
        }
        check_transform(&mut out, file, None, &j.name, None, &j.rest);
    }
    let mut names: Vec<(&str, usize)> =
        sk.joints.iter().map(|j| j.name.as_str()).zip(0..).collect();
    names.sort();
    for w in names.windows(2) {
        if w[0].0 == w[1].0 {
            out.push(
                Diagnostic::error(
                    "duplicate_joint",
                    "two joints share this name (and so its ID)",
                )
                .file(file)
                .joint(w[0].0),
            );
        }
    }
    for clip in &asset.clips {
        let cname = clip.name.as_str();
        if !clip.duration_s.is_finite() || clip.duration_s < 0.0 {
            out.push(
                Diagnostic::error(
                    "bad_duration",
                    format!("duration {} is invalid", clip.duration_s),
                )
                .file(file)
                .clip(cname),
            );
        }
        if clip.tracks.is_empty() && clip.curves.is_empty() {
            out.push(
                Diagnostic::warning("empty_clip", "clip animates nothing")
                    .file(file)
                    .clip(cname),
            );
        }
        for tr in &clip.tracks {
            let jname = sk
                .joints
                .get(tr.joint)
                .map(|j| j.name.as_str())
                .unwrap_or("?");
            if tr.joint >= sk.joints.len() {
                out.push(
                    Diagnostic::error(
                        "bad_track_target",
                        format!("track targets joint index {}", tr.joint),
                    )
                    .file(file)
                    .clip(cname),
                );
                continue;
            }
            let key_check = |out: &mut Diagnostics,
                             what: &str,
                             bad: Option<(usize, &'static str)>,
                             time: Option<f32>| {
                if let Some((_, msg)) = bad {
                    let mut d = Diagnostic::error("bad_key", format!("{what}: {msg}"))
                        .file(file)
                        .clip(cname)
                        .joint(jname);
                    if let Some(t) = time {
                        d = d.time(t);
                    }
                    out.push(d);
                }
            };
            if let Some(c) = &tr.translation {
                let b = c.first_bad_key();
                key_check(
                    &mut out,
                    "translation",
                    b,
                    b.and_then(|(i, _)| c.keys.get(i)).map(|k| k.time),
                );
            }
            if let Some(c) = &tr.scale {
                let b = c.first_bad_key();
                key_check(
                    &mut out,
                    "scale",
                    b,
                    b.and_then(|(i, _)| c.keys.get(i)).map(|k| k.time),
                );
                if b.is_none() {
                    if let Some(k) = c.keys.iter().find(|k| bad_scale(k.value)) {
                        out.push(
                            Diagnostic::error(
                                "bad_scale",
                                format!(
                                    "scale {:?} is zero, negative or near-singular",
                                    k.value.to_array()
                                ),
                            )
                            .file(file)
                            .clip(cname)
                            .joint(jname)
                            .time(k.time),
                        );
                    }
                }
            }
            if let Some(c) = &tr.rotation {
                let b = c.first_bad_key();
                key_check(
                    &mut out,
                    "rotation",
                    b,
                    b.and_then(|(i, _)| c.keys.get(i)).map(|k| k.time),
                );
                if b.is_none() {
                    if let Some(k) = c.keys.iter().find(|k| k.value.length_squared() < 1e-8) {
                        out.push(
                            Diagnostic::error(
                                "bad_rotation",
                                "rotation key cannot be normalized (zero length)",
                            )
                            .file(file)
                            .clip(cname)
                            .joint(jname)
                            .time(k.time),
                        );
                    }
                }
            }
        }
        for c in &clip.curves {
            if let Some((i, msg)) = c.curve.first_bad_key() {
                let mut d = Diagnostic::error("bad_key", format!("curve: {msg}"))
                    .file(file)
                    .clip(cname)
                    .joint(&c.name);
                if let Some(k) = c.curve.keys.get(i) {
                    d = d.time(k.time);
                }
                out.push(d);
            }
        }
    }
    out
}

fn check_transform(
    out: &mut Diagnostics,
    file: &str,
    clip: Option<&str>,
    joint: &str,
    time: Option<f32>,
    t: &Transform,
) {
    let mk = |code: &str, msg: String| {
        let mut d = Diagnostic::error(code, msg).file(file).joint(joint);
        if let Some(c) = clip {
            d = d.clip(c);
        }
        if let Some(t) = time {
            d = d.time(t);
        }
        d
    };
    if !t.is_finite() {
        out.push(mk(
            "non_finite_value",
            "rest transform is not finite".into(),
        ));
        return;
    }
    if t.rotation.length_squared() < 1e-8 {
        out.push(mk(
            "bad_rotation",
            "rest rotation cannot be normalized".into(),
        ));
    }
    if bad_scale(t.scale) {
        out.push(mk(
            "bad_scale",
            format!(
                "rest scale {:?} is zero, negative or near-singular",
                t.scale.to_array()
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::Interpolation;

    fn asset() -> SourceAsset {
        SourceAsset {
            path: "t.gltf".into(),
            format: SourceFormat::Gltf,
            skeleton: SourceSkeleton {
                joints: vec![
                    SourceJoint {
                        name: "root".into(),
                        parent: None,
                        rest: Transform::IDENTITY,
                    },
                    SourceJoint {
                        name: "arm".into(),
                        parent: Some(0),
                        rest: Transform::IDENTITY,
                    },
                ],
            },
            clips: vec![],
            unit_scale_m: 1.0,
            source_axes: AxisSystem {
                description: "+Y up".into(),
            },
            joint_shell_distance: None,
            diagnostics: Diagnostics::default(),
            decisions: vec![],
            companions: vec![],
            skins: Vec::new(),
            sockets: Vec::new(),
        }
    }

    #[test]
    fn negative_scale_key_names_clip_joint_time() {
        let mut a = asset();
        let mut tr = JointTracks::new(1);
        tr.scale = Some(Curve::from_values(
            Interpolation::Linear,
            &[0.0, 0.5],
            &[Vec3::ONE, Vec3::new(1.0, -1.0, 1.0)],
        ));
        a.clips.push(SourceClip {
            name: "wave".into(),
            duration_s: 0.5,
            tracks: vec![tr],
            curves: vec![],
            frame_rate_hz: None,
            key_times: vec![],
            markers: vec![],
        });
        let d = validate_asset(&a);
        let e = d.errors().next().unwrap();
        assert_eq!(e.code, "bad_scale");
        assert_eq!(e.clip.as_deref(), Some("wave"));
        assert_eq!(e.joint.as_deref(), Some("arm"));
        assert_eq!(e.time_s, Some(0.5));
    }

    #[test]
    fn reaches_root_matches_path() {
        let mut a = asset();
        let j = |name: &str, parent| SourceJoint {
            name: name.into(),
            parent,
            rest: Transform::IDENTITY,
        };
        // 2 -> 5 -> bad index; 3 -> 4 -> 4 (self-parent); 6 -> 7 -> bad.
        a.skeleton.joints.extend([
            j("to_bad", Some(5)),
            j("to_self", Some(4)),
            j("self", Some(4)),
            j("bad", Some(99)),
            j("to_bad2", Some(7)),
            j("bad2", Some(9)),
        ]);
        let sk = &a.skeleton;
        let fast = sk.reaches_root();
        let slow: Vec<bool> = (0..sk.joints.len()).map(|i| sk.path(i).is_some()).collect();
        assert_eq!(fast, slow);
        assert_eq!(fast, [true, true, false, false, false, false, false, false]);
    }

    #[test]
    fn cycle_is_reported() {
        let mut a = asset();
        a.skeleton.joints[0].parent = Some(1);
        let d = validate_asset(&a);
        assert!(d.errors().any(|e| e.code == "cyclic_hierarchy"));
    }
}
