//! Animation stacks to clips, by sampling ufbx's evaluation.
//!
//! FBX curves come with many interpretation rules (cubic tangents with
//! weights, Euler rotation orders, pre/post rotation, pivots, layers and
//! their blend modes); rather than re-implement them, each joint's local
//! transform is evaluated by ufbx (`evaluate_transform`, which applies all
//! of them) at twice the file's frame rate over the stack's time span, so
//! that between-frame curve shape is kept, and stored as Linear keys
//! (slerp for rotations, quaternions made hemisphere-continuous).
//!
//! A channel that does not move in a stack and equals the rest value is
//! omitted (the joint keeps its rest). A channel that does not move but
//! differs from the rest (e.g. the rest comes from a bind pose the clip
//! does not use) is kept as a constant track so the clip's pose is exact.
//! Nodes with no animated transform property in the stack (nor their
//! parent, which can influence scale inheritance) are evaluated once.

use super::custom;
use super::skeleton::{Candidate, TRANSFORM_PROPS};
use ludus_anim_model::limits::{Limit, LimitExceeded, Limits};
use ludus_anim_model::{
    Curve, Decision, Diagnostic, Diagnostics, Interpolation, JointTracks, Quat, ScalarCurve,
    SourceClip, Vec3,
};
use std::collections::{BTreeSet, HashMap, HashSet};

/// Samples per file frame.
pub(super) const OVERSAMPLING: f64 = 2.0;

/// Upper bound on transform evaluations per clip, so a corrupt time span
/// (e.g. 1e12 seconds) yields a diagnostic instead of exhausting memory.
const MAX_EVALUATIONS_PER_CLIP: usize = 50_000_000;

/// Relative tolerance under which a vector channel counts as constant.
/// Exported keys carry float noise (~1e-6 relative in mocap files); a
/// joint whose keys only jitter at that level does not animate.
const VEC_EPS: f64 = 1e-5;
/// `1 - |dot|` under which two rotations count as equal (~3e-5 rad).
const ROT_EPS: f64 = 1e-10;

pub(super) struct Sampled {
    pub clips: Vec<SourceClip>,
    /// Per candidate: has a track in at least one clip.
    pub animated: Vec<bool>,
}

/// How many sample times [`sample_times`] returns, without allocating
/// them (so a corrupt span is refused before anything is allocated).
fn sample_count(duration: f64, rate: f64) -> f64 {
    if duration <= 0.0 {
        return 1.0;
    }
    // A remainder under 1% of a step is treated as on the grid.
    (duration * rate - 0.01).ceil().max(1.0) + 1.0
}

/// Sample times relative to the stack start: every `1 / rate` seconds, plus
/// the exact end unless it is (nearly) on the grid. `duration` and `rate`
/// are checked by the caller ([`check_span`]).
fn sample_times(duration: f64, rate: f64) -> Vec<f64> {
    if duration <= 0.0 {
        return vec![0.0];
    }
    let step = 1.0 / rate;
    let n = sample_count(duration, rate) as usize - 1;
    let mut t: Vec<f64> = (0..n).map(|i| i as f64 * step).collect();
    t.push(duration);
    t
}

/// A stack's span and sample count against `limits`, before ufbx is asked
/// to evaluate anything (ufbx is C: a crash there cannot be contained).
/// `channels` is the number of values evaluated per sample time.
fn check_span(
    duration: f64,
    rate: f64,
    channels: usize,
    limits: &Limits,
) -> Result<(), LimitExceeded> {
    limits.check_duration(duration)?;
    let n = sample_count(duration, rate);
    limits.check_samples(n as u64)?;
    let key = std::mem::size_of::<ludus_anim_model::Key<Quat>>()
        + 2 * std::mem::size_of::<ludus_anim_model::Key<Vec3>>();
    let bytes = (n as u64)
        .saturating_mul(channels as u64)
        .saturating_mul(key as u64);
    Limits::check(
        Limit::AssetMemory,
        "estimated memory (bytes) for the sampled stack",
        bytes,
        limits.max_asset_memory_bytes,
    )
}

/// `base`, or `base.1`, `base.2`, ... if taken; the next suffix per base
/// is remembered so many duplicates cost linear time.
fn unique_name(
    base: &str,
    used: &mut HashSet<String>,
    next: &mut HashMap<String, usize>,
) -> String {
    if used.insert(base.to_string()) {
        return base.to_string();
    }
    let k = next.entry(base.to_string()).or_insert(1);
    loop {
        let candidate = format!("{base}.{k}");
        *k += 1;
        if used.insert(candidate.clone()) {
            return candidate;
        }
    }
}

fn vec_close(a: &ufbx::Vec3, b: &ufbx::Vec3) -> bool {
    let scale = 1.0 + a.x.abs().max(a.y.abs()).max(a.z.abs());
    let eps = VEC_EPS * scale;
    (a.x - b.x).abs() <= eps && (a.y - b.y).abs() <= eps && (a.z - b.z).abs() <= eps
}

fn quat_dot(a: &ufbx::Quat, b: &ufbx::Quat) -> f64 {
    a.x * b.x + a.y * b.y + a.z * b.z + a.w * b.w
}

fn quat_close(a: &ufbx::Quat, b: &ufbx::Quat) -> bool {
    let la = quat_dot(a, a).sqrt();
    let lb = quat_dot(b, b).sqrt();
    if !(la > 0.0 && lb > 0.0) {
        return la == lb;
    }
    1.0 - (quat_dot(a, b) / (la * lb)).abs() <= ROT_EPS
}

fn v3(v: &ufbx::Vec3) -> Vec3 {
    Vec3::new(v.x as f32, v.y as f32, v.z as f32)
}

fn q4(q: &ufbx::Quat) -> Quat {
    let l = quat_dot(q, q).sqrt();
    if l > 1e-12 && l.is_finite() {
        Quat::from_xyzw(
            (q.x / l) as f32,
            (q.y / l) as f32,
            (q.z / l) as f32,
            (q.w / l) as f32,
        )
    } else {
        Quat::from_xyzw(q.x as f32, q.y as f32, q.z as f32, q.w as f32)
    }
}

/// A curve holding one value over the whole clip.
fn constant<T: ludus_anim_model::curve::CurveValue>(value: T, duration: f32) -> Curve<T> {
    if duration > 0.0 {
        Curve::from_values(Interpolation::Linear, &[0.0, duration], &[value, value])
    } else {
        Curve::from_values(Interpolation::Linear, &[0.0], &[value])
    }
}

/// One vector channel: `None` if it never leaves `rest`.
fn vec_channel(
    samples: &[ufbx::Vec3],
    rest: &ufbx::Vec3,
    times: &[f32],
    duration: f32,
) -> Option<Curve<Vec3>> {
    let first = samples.first()?;
    if samples.iter().all(|s| vec_close(first, s)) {
        if vec_close(rest, first) {
            return None;
        }
        return Some(constant(v3(first), duration));
    }
    let values: Vec<Vec3> = samples.iter().map(v3).collect();
    Some(Curve::from_values(Interpolation::Linear, times, &values))
}

/// The rotation channel, made hemisphere-continuous; `None` if it never
/// leaves `rest`.
fn rot_channel(
    samples: &[ufbx::Quat],
    rest: &ufbx::Quat,
    times: &[f32],
    duration: f32,
) -> Option<Curve<Quat>> {
    let first = samples.first()?;
    if samples.iter().all(|s| quat_close(first, s)) {
        if quat_close(rest, first) {
            return None;
        }
        return Some(constant(q4(first), duration));
    }
    let mut values: Vec<Quat> = Vec::with_capacity(samples.len());
    for s in samples {
        let mut q = q4(s);
        if let Some(prev) = values.last() {
            if prev.dot(q) < 0.0 {
                q = -q;
            }
        }
        values.push(q);
    }
    Some(Curve::from_values(Interpolation::Linear, times, &values))
}

/// Element ids of nodes with an animated transform property in `stack`.
fn moving_nodes(stack: &ufbx::AnimStack) -> HashSet<u32> {
    let mut out = HashSet::new();
    for layer in stack.layers.iter() {
        for ap in layer.anim_props.iter() {
            if ap.element.type_ == ufbx::ElementType::Node
                && TRANSFORM_PROPS.contains(&ap.prop_name.as_ref())
            {
                out.insert(ap.element.element_id);
            }
        }
    }
    out
}

/// Blend-shape channels with their scalar-curve names (`<node>/weights/<channel>`).
fn blend_channels(scene: &ufbx::Scene) -> Vec<(String, &ufbx::BlendChannel)> {
    let mut out = Vec::new();
    for mesh in scene.meshes.iter() {
        let owner = mesh
            .element
            .instances
            .iter()
            .next()
            .map(|n| n.element.name.as_ref().to_string())
            .unwrap_or_else(|| mesh.element.name.as_ref().to_string());
        for deformer in mesh.blend_deformers.iter() {
            for ch in deformer.channels.iter() {
                out.push((
                    format!("{owner}/weights/{}", ch.element.name.as_ref()),
                    &**ch,
                ));
            }
        }
    }
    out
}

/// Sample every animation stack into a clip: joint transforms, animated
/// blend-shape weights, and the custom properties named in `custom_curves`
/// (see [`custom`]).
#[allow(clippy::too_many_arguments)]
pub(super) fn sample_stacks(
    scene: &ufbx::Scene,
    cands: &[Candidate<'_>],
    frame_rate: f64,
    custom_curves: &[String],
    file: &str,
    limits: &Limits,
    decisions: &mut Vec<Decision>,
    diagnostics: &mut Diagnostics,
) -> Result<Sampled, LimitExceeded> {
    let rate = frame_rate * OVERSAMPLING;
    let mut animated = vec![false; cands.len()];
    let mut clips = Vec::new();
    let mut clip_names: HashSet<String> = HashSet::new();
    let mut clip_suffix: HashMap<String, usize> = HashMap::new();
    let mut skipped_props: BTreeSet<String> = BTreeSet::new();
    let channels = blend_channels(scene);
    let custom = custom::resolve(scene, custom_curves, file, diagnostics);

    for (si, stack) in scene.anim_stacks.iter().enumerate() {
        let mut name = stack.element.name.as_ref().to_string();
        if name.is_empty() {
            name = format!("Take {}", si + 1);
        }
        let unique = unique_name(&name, &mut clip_names, &mut clip_suffix);
        if unique != name {
            decisions.push(Decision::new(
                "renamed_clip",
                format!("duplicate stack name '{name}' -> '{unique}'"),
            ));
            name = unique;
        }

        let (t0, t1) = (stack.time_begin, stack.time_end);
        let duration = t1 - t0;
        if !(t0.is_finite() && t1.is_finite() && duration >= 0.0) {
            diagnostics.push(
                Diagnostic::error(
                    "bad_time_span",
                    format!("animation stack spans {t0}..{t1} s"),
                )
                .file(file)
                .clip(&name),
            );
            continue;
        }
        let channels_per_sample = (cands.len() + custom.len() + channels.len()).max(1);
        check_span(duration, rate, channels_per_sample, limits).map_err(|e| e.clip(&name))?;
        let times = sample_times(duration, rate);
        if times.len().saturating_mul(channels_per_sample) > MAX_EVALUATIONS_PER_CLIP {
            diagnostics.push(
                Diagnostic::error(
                    "clip_too_long",
                    format!(
                        "{duration} s at {rate} Hz for {} joints is too many samples",
                        cands.len()
                    ),
                )
                .file(file)
                .clip(&name),
            );
            continue;
        }
        if t0 != 0.0 {
            decisions.push(Decision::new(
                "clip_time_shift",
                format!("clip '{name}': stack starts at {t0} s; shifted to 0"),
            ));
        }
        let times_f32: Vec<f32> = times.iter().map(|&t| t as f32).collect();
        let dur_f32 = duration as f32;
        let anim: &ufbx::Anim = &stack.anim;
        let moving = moving_nodes(stack);

        let mut tracks = Vec::new();
        let mut tr_s = Vec::with_capacity(times.len());
        let mut rot_s = Vec::with_capacity(times.len());
        let mut scl_s = Vec::with_capacity(times.len());
        for (ji, c) in cands.iter().enumerate() {
            let node = c.node;
            let parent_moves = node
                .parent
                .as_ref()
                .is_some_and(|p| moving.contains(&p.element.element_id));
            let dynamic = moving.contains(&node.element.element_id) || parent_moves;
            let sample_at: &[f64] = if dynamic {
                &times
            } else {
                times.get(..1).unwrap_or(&[])
            };
            tr_s.clear();
            rot_s.clear();
            scl_s.clear();
            for &t in sample_at {
                let x = ufbx::evaluate_transform(anim, node, t0 + t);
                tr_s.push(x.translation);
                rot_s.push(x.rotation);
                scl_s.push(x.scale);
            }
            let mut tr = JointTracks::new(ji);
            tr.translation = vec_channel(&tr_s, &c.rest.translation, &times_f32, dur_f32);
            tr.rotation = rot_channel(&rot_s, &c.rest.rotation, &times_f32, dur_f32);
            tr.scale = vec_channel(&scl_s, &c.rest.scale, &times_f32, dur_f32);
            if tr.translation.is_some() || tr.rotation.is_some() || tr.scale.is_some() {
                if let Some(a) = animated.get_mut(ji) {
                    *a = true;
                }
                tracks.push(tr);
            }
        }

        // Blend-shape weights (DeformPercent / 100) where animated.
        let mut curves: Vec<ScalarCurve> = Vec::new();
        let mut curve_names: HashSet<String> = HashSet::new();
        let mut curve_suffix: HashMap<String, usize> = HashMap::new();
        for (cname, ch) in &channels {
            let keyed = stack
                .layers
                .iter()
                .any(|l| l.find_anim_prop(&ch.element, "DeformPercent").is_some());
            if !keyed {
                continue;
            }
            let values: Vec<f32> = times
                .iter()
                .map(|&t| ufbx::evaluate_blend_weight(anim, ch, t0 + t) as f32)
                .collect();
            let unique = unique_name(cname, &mut curve_names, &mut curve_suffix);
            curves.push(ScalarCurve {
                name: unique,
                curve: Curve::from_values(Interpolation::Linear, &times_f32, &values),
                default: ch.weight as f32,
            });
        }

        // Requested custom properties, in every clip (ufbx evaluates a
        // property a stack does not animate to its static value).
        for found in &custom {
            let values = custom::sample(anim, found, t0, &times);
            let curve = match values.first() {
                Some(&v) if values.iter().all(|&x| x == v) => constant(v, dur_f32),
                _ if found.step => Curve::from_values(Interpolation::Step, &times_f32, &values),
                _ => Curve::from_values(Interpolation::Linear, &times_f32, &values),
            };
            let unique = unique_name(&found.curve_name, &mut curve_names, &mut curve_suffix);
            curves.push(ScalarCurve {
                name: unique,
                curve,
                default: found.default,
            });
        }

        // Everything else that is animated is not imported; say so once.
        for layer in stack.layers.iter() {
            for ap in layer.anim_props.iter() {
                let prop = ap.prop_name.as_ref();
                let is_node = ap.element.type_ == ufbx::ElementType::Node;
                let handled = (is_node
                    && (TRANSFORM_PROPS.contains(&prop) || prop == "Visibility"))
                    || custom.iter().any(|f| f.is(ap.element.element_id, prop))
                    || (ap.element.type_ == ufbx::ElementType::BlendChannel
                        && prop == "DeformPercent");
                if !handled {
                    skipped_props.insert(format!("{}.{prop}", ap.element.name.as_ref()));
                }
            }
        }

        let mut clip = SourceClip {
            name,
            duration_s: dur_f32,
            tracks,
            curves,
            frame_rate_hz: Some(frame_rate as f32),
            key_times: Vec::new(),
            markers: Vec::new(),
        };
        clip.collect_key_times();
        clips.push(clip);
    }

    if !clips.is_empty() {
        decisions.push(Decision::new(
            "resampled",
            format!(
                "stacks evaluated by ufbx at {rate} Hz (file rate {frame_rate} fps x {OVERSAMPLING}) into linear \
                 keys; channels equal to the rest pose throughout a clip are omitted"
            ),
        ));
    }
    if !custom.is_empty() && !clips.is_empty() {
        let list: Vec<String> = custom
            .iter()
            .map(|f| {
                format!(
                    "{}.{} as '{}' (requested as '{}')",
                    f.element.name.as_ref(),
                    f.prop,
                    f.curve_name,
                    f.requested_as
                )
            })
            .collect();
        decisions.push(Decision::new(
            "imported_custom_curves",
            format!(
                "custom properties imported as scalar curves in every clip (evaluated by ufbx at {rate} Hz into \
                 linear keys; default = static value): {}",
                list.join(", ")
            ),
        ));
    }
    if !skipped_props.is_empty() {
        let list: Vec<String> = skipped_props.into_iter().collect();
        decisions.push(Decision::new(
            "skipped_property_animation",
            format!(
                "animated properties not imported (custom properties become curves only on request; \
                 visibility, camera and other non-transform properties are ignored): {}",
                list.join(", ")
            ),
        ));
    }
    Ok(Sampled { clips, animated })
}
