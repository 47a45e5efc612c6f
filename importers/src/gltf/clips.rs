//! glTF animations to [`SourceClip`]s, keeping authored keys and their
//! interpolation exactly: LINEAR, STEP and CUBICSPLINE (with the stored
//! in/out tangents, which `Curve::evaluate` scales by the key interval as
//! the glTF spec's Appendix C does).

use super::accessor::{self, AccessorError, Expect};
use super::buffers::Buffers;
use super::markers;
use super::skeleton::Selection;
use super::{node_label, Report};
use crate::ImportError;
use ::gltf::json;
use json::animation::{Interpolation as GltfInterpolation, Property};
use json::validation::Checked;
use ludus_anim_format::math::{Quat, Vec3};
use ludus_anim_model::curve::CurveValue;
use ludus_anim_model::limits::{Limit, LimitExceeded};
use ludus_anim_model::{
    Curve, Diagnostic, Interpolation, JointTracks, Key, ScalarCurve, SourceClip,
};
use std::collections::{BTreeMap, HashMap, HashSet};

pub(super) fn build(
    root: &json::Root,
    buffers: &Buffers,
    selection: &Selection,
    report: &mut Report,
) -> Result<Vec<SourceClip>, ImportError> {
    let mut names_used = Names::default();
    let mut clips = Vec::with_capacity(root.animations.len());
    for (index, anim) in root.animations.iter().enumerate() {
        let name = clip_name(anim, index, &mut names_used, report);
        let mut builder = ClipBuilder {
            root,
            buffers,
            selection,
            clip: name,
            tracks: BTreeMap::new(),
            curves: Vec::new(),
            curve_names: Names::default(),
            weights_seen: HashSet::new(),
        };
        let authored_markers = markers::read(anim, &builder.clip, report)?;
        for (ci, channel) in anim.channels.iter().enumerate() {
            builder.add_channel(anim, ci, channel, report)?;
        }
        let (start, _) = builder.time_range();
        let mut clip = builder.finish(report);
        clip.markers =
            markers::place(authored_markers, start, clip.duration_s, &clip.name, report)?;
        clips.push(clip);
    }
    let counts: Vec<String> = clips
        .iter()
        .filter(|c| !c.markers.is_empty())
        .map(|c| format!("'{}': {}", c.name, c.markers.len()))
        .collect();
    if !counts.is_empty() {
        let total: usize = clips.iter().map(|c| c.markers.len()).sum();
        report.decide(
            "imported_markers",
            format!(
                "markers imported from glTF extras: {total} ({}); times shifted with each clip's keys",
                counts.join(", ")
            ),
        );
    }
    Ok(clips)
}

/// The animation's name, `anim<index>` if it has none, made unique with a
/// `.k` suffix because clips are addressed by name downstream.
fn clip_name(
    anim: &json::Animation,
    index: usize,
    used: &mut Names,
    report: &mut Report,
) -> String {
    let base = match anim.name.as_deref() {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => {
            let n = format!("anim{index}");
            report.decide(
                "unnamed_clip",
                format!("animation {index} has no name; clip named '{n}'"),
            );
            n
        }
    };
    let renamed = used.unique(&base);
    if renamed != base {
        report.decide(
            "renamed_duplicate_clip",
            format!("animation {index} '{base}' renamed '{renamed}': another animation already has that name"),
        );
    }
    renamed
}

/// Names taken so far, and the next `.k` suffix to try per name, so that
/// many duplicates of one name cost linear time (trying `.1`, `.2`, ...
/// from the start for each is quadratic: 20,000 same-named animations
/// took minutes).
#[derive(Default)]
struct Names {
    used: HashSet<String>,
    next: HashMap<String, usize>,
}

impl Names {
    /// `name`, or `name.k` for the first free `k`, now taken.
    fn unique(&mut self, name: &str) -> String {
        if self.used.insert(name.to_string()) {
            return name.to_string();
        }
        let k = self.next.entry(name.to_string()).or_insert(1);
        loop {
            let candidate = format!("{name}.{k}");
            *k += 1;
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
        }
    }
}

struct ClipBuilder<'a> {
    root: &'a json::Root,
    buffers: &'a Buffers<'a>,
    selection: &'a Selection,
    clip: String,
    /// Ordered by joint so track order does not depend on channel order.
    tracks: BTreeMap<usize, JointTracks>,
    curves: Vec<ScalarCurve>,
    curve_names: Names,
    /// Nodes whose weights this clip already animates.
    weights_seen: HashSet<usize>,
}

/// Where a channel's problems are reported.
struct ChannelAt<'c> {
    index: usize,
    joint: &'c str,
    property: &'static str,
}

impl ClipBuilder<'_> {
    fn add_channel(
        &mut self,
        anim: &json::Animation,
        ci: usize,
        channel: &json::animation::Channel,
        report: &mut Report,
    ) -> Result<(), ImportError> {
        let node = channel.target.node.value();
        let node_name = node_label(self.root, node);
        let Checked::Valid(property) = channel.target.path else {
            report.push(
                Diagnostic::warning(
                    "unsupported_channel",
                    format!("channel {ci} targets an unsupported property of node '{node_name}'; dropped"),
                )
                .clip(&self.clip),
            );
            return Ok(());
        };
        let joint = self.selection.joint_of_node.get(node).copied().flatten();
        // Morph weights are curves, not joint motion: they keep the node's
        // name whether or not the node is a joint.
        let label = match joint {
            Some(j) => self.selection.joint_name(j).to_string(),
            None if property == Property::MorphTargetWeights => node_name.clone(),
            None => {
                report.push(
                    Diagnostic::warning(
                        "channel_target_not_joint",
                        format!(
                            "channel {ci} targets node '{node_name}', which is not a joint; dropped"
                        ),
                    )
                    .clip(&self.clip),
                );
                return Ok(());
            }
        };
        let at = ChannelAt {
            index: ci,
            joint: &label,
            property: property_name(property),
        };
        let sampler = anim.samplers.get(channel.sampler.value()).ok_or_else(|| {
            self.malformed(
                report,
                &at,
                "bad_sampler",
                format!(
                    "uses sampler {}, which does not exist",
                    channel.sampler.value()
                ),
            )
        })?;
        let interpolation = match sampler.interpolation {
            Checked::Valid(GltfInterpolation::Linear) => Interpolation::Linear,
            Checked::Valid(GltfInterpolation::Step) => Interpolation::Step,
            Checked::Valid(GltfInterpolation::CubicSpline) => Interpolation::CubicSpline,
            Checked::Invalid => {
                return Err(self.malformed(
                    report,
                    &at,
                    "bad_sampler",
                    "has an unknown interpolation".to_string(),
                ))
            }
        };
        let max_keys = report.limits.max_keys_per_channel;
        let times = self
            .read(sampler.input.value(), Expect::Times, max_keys, &at, report)?
            .values;
        let output = sampler.output.value();
        // Elements an output may hold within the key limit (3 per key for
        // CUBICSPLINE, times the morph targets for weights): anything more
        // is refused before it is decoded. Whether it matches this input's
        // key count is checked after decoding, as a sampler error.
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let max_out = max_keys.saturating_mul(per_key);
        match property {
            Property::Translation | Property::Scale => {
                // Only weights channels reach here without a joint.
                let Some(joint) = joint else { return Ok(()) };
                let out = self.read(output, Expect::Vec3, max_out, &at, report)?;
                let values = out.elements::<3>().map(Vec3::from_array).collect();
                let curve = make_curve(&times, values, interpolation)
                    .map_err(|m| self.malformed(report, &at, "sampler_count_mismatch", m))?;
                let tracks = self
                    .tracks
                    .entry(joint)
                    .or_insert_with(|| JointTracks::new(joint));
                let slot = if property == Property::Translation {
                    &mut tracks.translation
                } else {
                    &mut tracks.scale
                };
                store(slot, curve, &self.clip, &at, report);
            }
            Property::Rotation => {
                let Some(joint) = joint else { return Ok(()) };
                let out = self.read(output, Expect::Rotation, max_out, &at, report)?;
                let values = out.elements::<4>().map(Quat::from_array).collect();
                let curve = make_curve(&times, values, interpolation)
                    .map_err(|m| self.malformed(report, &at, "sampler_count_mismatch", m))?;
                let tracks = self
                    .tracks
                    .entry(joint)
                    .or_insert_with(|| JointTracks::new(joint));
                store(&mut tracks.rotation, curve, &self.clip, &at, report);
            }
            Property::MorphTargetWeights => {
                if !self.weights_seen.insert(node) {
                    report.push(duplicate_channel(&self.clip, &at));
                    return Ok(());
                }
                let targets = morph_target_count(self.root, node).unwrap_or(1) as u64;
                let max = max_out.saturating_mul(targets.max(1));
                let out = self.read(output, Expect::Weights, max, &at, report)?;
                self.add_weights(node, &times, &out.values, interpolation, &at, report)?;
            }
        }
        Ok(())
    }

    /// One scalar curve per morph target. glTF stores all targets of a key
    /// together (for CUBICSPLINE: all in-tangents, all values, all
    /// out-tangents), so each target's keys are gathered with a stride.
    fn add_weights(
        &mut self,
        node: usize,
        times: &[f32],
        flat: &[f32],
        interpolation: Interpolation,
        at: &ChannelAt,
        report: &mut Report,
    ) -> Result<(), ImportError> {
        let targets = morph_target_count(self.root, node)
            .filter(|&n| n > 0)
            .ok_or_else(|| {
                self.malformed(
                    report,
                    at,
                    "bad_weights",
                    "animates morph weights of a node whose mesh has no morph targets".to_string(),
                )
            })?;
        let per_key = if interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        let expected = times.len().saturating_mul(per_key).saturating_mul(targets);
        if flat.len() != expected {
            return Err(self.malformed(
                report,
                at,
                "sampler_count_mismatch",
                format!(
                    "output has {} values, expected {expected} ({} keys x {targets} targets{})",
                    flat.len(),
                    times.len(),
                    if per_key == 3 {
                        " x 3 for CUBICSPLINE"
                    } else {
                        ""
                    }
                ),
            ));
        }
        let names = target_names(self.root, node, targets);
        for (t, target) in names.iter().enumerate() {
            let value = |slot: usize| flat.get(slot * targets + t).copied().unwrap_or(f32::NAN);
            let keys = times
                .iter()
                .enumerate()
                .map(|(k, &time)| match interpolation {
                    Interpolation::CubicSpline => Key {
                        time,
                        in_tangent: value(3 * k),
                        value: value(3 * k + 1),
                        out_tangent: value(3 * k + 2),
                    },
                    _ => Key {
                        time,
                        value: value(k),
                        in_tangent: 0.0,
                        out_tangent: 0.0,
                    },
                })
                .collect();
            let name = self.unique_curve_name(format!("{}/weights/{target}", at.joint), report);
            self.curves.push(ScalarCurve {
                name,
                curve: Curve::new(interpolation, keys),
                default: default_weight(self.root, node, t),
            });
        }
        Ok(())
    }

    fn unique_curve_name(&mut self, name: String, report: &mut Report) -> String {
        let renamed = self.curve_names.unique(&name);
        if renamed != name {
            report.decide(
                "renamed_duplicate_curve",
                format!(
                    "clip '{}': curve '{name}' renamed '{renamed}' (duplicate morph target name)",
                    self.clip
                ),
            );
        }
        renamed
    }

    /// Decode a sampler accessor holding at most `max` elements (the key
    /// limit, times the elements per key of an output).
    fn read(
        &self,
        accessor_index: usize,
        expect: Expect,
        max: u64,
        at: &ChannelAt,
        report: &Report,
    ) -> Result<accessor::Decoded, ImportError> {
        let role = if expect == Expect::Times {
            "input"
        } else {
            "output"
        };
        let allow = accessor::Allowance {
            max_count: max,
            budget: &report.budget,
        };
        accessor::read(self.root, self.buffers, accessor_index, expect, &allow).map_err(|e| match e
        {
            AccessorError::TooMany { count, max, .. } => {
                let e = LimitExceeded::new(
                    Limit::KeysPerChannel,
                    format!(
                        "elements of sampler {role} accessor of channel {} ({} of '{}')",
                        at.index, at.property, at.joint
                    ),
                    count,
                    max,
                );
                report.limit(e, Some(&self.clip), Some(at.joint))
            }
            AccessorError::Budget { error, .. } => {
                report.limit(*error, Some(&self.clip), Some(at.joint))
            }
            e => self.malformed(report, at, "bad_accessor", format!("sampler {role}: {e}")),
        })
    }

    fn malformed(
        &self,
        report: &Report,
        at: &ChannelAt,
        code: &str,
        message: String,
    ) -> ImportError {
        report.malformed_at(
            code,
            format!(
                "clip '{}', channel {} ({} of '{}'): {message}",
                self.clip, at.index, at.property, at.joint
            ),
            Some(&self.clip),
            Some(at.joint),
        )
    }

    /// Shift keys so the clip starts at 0 and fix its duration.
    fn finish(mut self, report: &mut Report) -> SourceClip {
        let (start, end) = self.time_range();
        if start != 0.0 {
            for tr in self.tracks.values_mut() {
                if let Some(c) = &mut tr.translation {
                    c.shift(start);
                }
                if let Some(c) = &mut tr.rotation {
                    c.shift(start);
                }
                if let Some(c) = &mut tr.scale {
                    c.shift(start);
                }
            }
            for c in &mut self.curves {
                c.curve.shift(start);
            }
            report.decide(
                "clip_time_shift",
                format!(
                    "clip '{}': earliest key is at {start} s; keys shifted by {} s so the clip starts at 0",
                    self.clip, -start
                ),
            );
        }
        let mut clip = SourceClip {
            name: self.clip,
            duration_s: (end - start).max(0.0),
            tracks: self.tracks.into_values().collect(),
            curves: self.curves,
            frame_rate_hz: None,
            key_times: Vec::new(),
            markers: Vec::new(),
        };
        clip.collect_key_times();
        clip
    }

    /// Earliest and latest finite key time of all tracks and curves.
    /// Non-finite times are left for `validate_asset` to report.
    fn time_range(&self) -> (f32, f32) {
        let mut lo = f32::INFINITY;
        let mut hi = f32::NEG_INFINITY;
        let mut see = |t: f32| {
            if t.is_finite() {
                lo = lo.min(t);
                hi = hi.max(t);
            }
        };
        for tr in self.tracks.values() {
            tr.translation
                .iter()
                .flat_map(|c| &c.keys)
                .for_each(|k| see(k.time));
            tr.rotation
                .iter()
                .flat_map(|c| &c.keys)
                .for_each(|k| see(k.time));
            tr.scale
                .iter()
                .flat_map(|c| &c.keys)
                .for_each(|k| see(k.time));
        }
        self.curves
            .iter()
            .flat_map(|c| &c.curve.keys)
            .for_each(|k| see(k.time));
        if lo.is_finite() {
            (lo, hi)
        } else {
            (0.0, 0.0)
        }
    }
}

/// Pair sampler input times with output values. CUBICSPLINE outputs hold
/// (in-tangent, value, out-tangent) per key.
fn make_curve<T: CurveValue>(
    times: &[f32],
    values: Vec<T>,
    interpolation: Interpolation,
) -> Result<Curve<T>, String> {
    let n = times.len();
    let keys: Vec<Key<T>> = if interpolation == Interpolation::CubicSpline {
        if values.len() != n.saturating_mul(3) {
            return Err(format!(
                "output has {} elements, expected {} (3 per key for CUBICSPLINE, {n} keys)",
                values.len(),
                n.saturating_mul(3)
            ));
        }
        times
            .iter()
            .zip(values.chunks_exact(3))
            .map(|(&time, c)| match c {
                [in_tangent, value, out_tangent] => Key {
                    time,
                    value: *value,
                    in_tangent: *in_tangent,
                    out_tangent: *out_tangent,
                },
                _ => unreachable_triplet(time),
            })
            .collect()
    } else {
        if values.len() != n {
            return Err(format!(
                "output has {} elements, input has {n} keys",
                values.len()
            ));
        }
        return Ok(Curve::from_values(interpolation, times, &values));
    };
    Ok(Curve::new(interpolation, keys))
}

/// `chunks_exact(3)` only yields 3-element slices; this keeps the match
/// total without a panic path.
fn unreachable_triplet<T: CurveValue>(time: f32) -> Key<T> {
    Key {
        time,
        value: T::zero(),
        in_tangent: T::zero(),
        out_tangent: T::zero(),
    }
}

fn store<T>(
    slot: &mut Option<Curve<T>>,
    curve: Curve<T>,
    clip: &str,
    at: &ChannelAt,
    report: &mut Report,
) {
    if slot.is_some() {
        report.push(duplicate_channel(clip, at));
    } else {
        *slot = Some(curve);
    }
}

/// The spec forbids two channels with the same target in one animation;
/// the first wins so the result does not depend on a tie-break rule.
fn duplicate_channel(clip: &str, at: &ChannelAt) -> Diagnostic {
    Diagnostic::warning(
        "duplicate_channel",
        format!(
            "channel {} animates {} of '{}' again; the first channel is kept",
            at.index, at.property, at.joint
        ),
    )
    .clip(clip)
    .joint(at.joint)
}

fn property_name(p: Property) -> &'static str {
    match p {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
        Property::MorphTargetWeights => "weights",
    }
}

fn node_mesh(root: &json::Root, node: usize) -> Option<&json::Mesh> {
    root.meshes.get(root.nodes.get(node)?.mesh?.value())
}

/// Morph target count: from the mesh's primitives (all must agree), else
/// from whichever default weights array is present.
fn morph_target_count(root: &json::Root, node: usize) -> Option<usize> {
    let mesh = node_mesh(root, node);
    mesh.and_then(|m| m.primitives.first())
        .and_then(|p| p.targets.as_ref().map(Vec::len))
        .or_else(|| mesh.and_then(|m| m.weights.as_ref().map(Vec::len)))
        .or_else(|| root.nodes.get(node)?.weights.as_ref().map(Vec::len))
}

/// Target names from the de-facto `mesh.extras.targetNames` convention,
/// else the target index.
fn target_names(root: &json::Root, node: usize, count: usize) -> Vec<String> {
    let from_extras: Vec<Option<String>> = node_mesh(root, node)
        .and_then(|m| m.extras.as_ref())
        .and_then(|raw| serde_json::from_str::<serde_json::Value>(raw.get()).ok())
        .and_then(|v| v.get("targetNames").and_then(|n| n.as_array()).cloned())
        .map(|a| a.iter().map(|s| s.as_str().map(str::to_string)).collect())
        .unwrap_or_default();
    (0..count)
        .map(|t| {
            from_extras
                .get(t)
                .cloned()
                .flatten()
                .filter(|s| !s.is_empty())
                .unwrap_or_else(|| t.to_string())
        })
        .collect()
}

/// Weight when not animated: node weights override mesh weights (spec
/// 3.7.2.2); absent both, targets are off.
fn default_weight(root: &json::Root, node: usize, target: usize) -> f32 {
    let from_node = root
        .nodes
        .get(node)
        .and_then(|n| n.weights.as_ref()?.get(target).copied());
    let from_mesh = || node_mesh(root, node).and_then(|m| m.weights.as_ref()?.get(target).copied());
    from_node.or_else(from_mesh).unwrap_or(0.0)
}
