//! Custom animated properties as scalar curves, on request.
//!
//! FBX files carry user-defined animated properties on nodes (Maya extra
//! attributes, MotionBuilder custom properties: the ozz robot's
//! `thumb2.grasp` and `target.lock_orientation`). They are imported only
//! when [`crate::ImportOptions::custom_curves`] names them, as a property
//! name (every node animating it) or `Node.Property` (one node); the match
//! is exact and case-sensitive. A match must be a scalar property (number,
//! integer, boolean or distance). Each match becomes a
//! `ScalarCurve` named `<node>/<property>` in every clip, sampled by ufbx
//! on the same grid as the transforms (constant in a stack that does not
//! animate it), with the property's static value as its default. A
//! boolean or integer property, or one whose keys are all constant
//! (`ConstantPrev`/`ConstantNext`), is discrete: its curve is STEP, so
//! the cook stores it stepped and never interpolates it.

use ludus_anim_model::{Diagnostic, Diagnostics};
use std::collections::HashSet;

/// Property names the transform sampling already handles; never custom.
const NOT_CUSTOM: [&str; 3] = ["Lcl Translation", "Lcl Rotation", "Lcl Scaling"];

/// One requested property, found animated on a node somewhere in the file.
pub(super) struct Found<'a> {
    pub element: &'a ufbx::Element,
    pub prop: String,
    /// `<node>/<property>` (made unique per clip by the caller).
    pub curve_name: String,
    /// The property's static (un-animated) value.
    pub default: f32,
    /// The request that matched first, for the decision.
    pub requested_as: String,
    /// Discrete: sample-and-hold, never interpolated.
    pub step: bool,
}

impl Found<'_> {
    /// Whether this is the animated property `prop` of element `element_id`.
    pub fn is(&self, element_id: u32, prop: &str) -> bool {
        self.element.element_id == element_id && self.prop == prop
    }
}

fn is_scalar(t: ufbx::PropType) -> bool {
    matches!(
        t,
        ufbx::PropType::Number
            | ufbx::PropType::Integer
            | ufbx::PropType::Boolean
            | ufbx::PropType::Distance
    )
}

fn request_matches(request: &str, node: &str, prop: &str) -> bool {
    request == prop
        || request
            .strip_prefix(node)
            .and_then(|rest| rest.strip_prefix('.'))
            .is_some_and(|p| p == prop)
}

/// Resolve `requests` against the node properties animated in any stack.
/// Unmatched requests and non-scalar matches become warnings naming the
/// file and the property. Order: first animated occurrence in the file.
pub(super) fn resolve<'a>(
    scene: &'a ufbx::Scene,
    requests: &[String],
    file: &str,
    diagnostics: &mut Diagnostics,
) -> Vec<Found<'a>> {
    let mut found: Vec<Found<'a>> = Vec::new();
    if requests.is_empty() {
        return found;
    }
    let mut matched = vec![false; requests.len()];
    let mut not_scalar: HashSet<(u32, String)> = HashSet::new();
    for stack in scene.anim_stacks.iter() {
        for layer in stack.layers.iter() {
            for ap in layer.anim_props.iter() {
                let element: &'a ufbx::Element = &ap.element;
                let prop = ap.prop_name.as_ref();
                if element.type_ != ufbx::ElementType::Node || NOT_CUSTOM.contains(&prop) {
                    continue;
                }
                let node = element.name.as_ref();
                let Some(request) = requests.iter().find(|r| request_matches(r, node, prop)) else {
                    continue;
                };
                for (m, r) in matched.iter_mut().zip(requests) {
                    *m |= request_matches(r, node, prop);
                }
                if found.iter().any(|f| f.is(element.element_id, prop)) {
                    continue;
                }
                let Some(p) = element.props.find_prop(prop) else {
                    continue;
                };
                if !is_scalar(p.type_) {
                    if not_scalar.insert((element.element_id, prop.to_string())) {
                        diagnostics.push(
                            Diagnostic::warning(
                                "custom_curve_not_scalar",
                                format!(
                                    "requested custom curve '{}' matches '{node}.{prop}', \
                                     which is a {:?} property, not a scalar: skipped",
                                    request, p.type_
                                ),
                            )
                            .file(file)
                            .joint(node),
                        );
                    }
                    continue;
                }
                found.push(Found {
                    element,
                    prop: prop.to_string(),
                    curve_name: format!("{node}/{prop}"),
                    default: p.value_vec4.x as f32,
                    requested_as: request.clone(),
                    step: is_discrete(p.type_) || constant_keys(&ap.anim_value),
                });
            }
        }
    }
    for (r, m) in requests.iter().zip(&matched) {
        if !m {
            diagnostics.push(
                Diagnostic::warning(
                    "custom_curve_not_found",
                    format!(
                        "requested custom curve '{r}' matches no animated node property in the file"
                    ),
                )
                .file(file),
            );
        }
    }
    found
}

fn is_discrete(t: ufbx::PropType) -> bool {
    matches!(t, ufbx::PropType::Integer | ufbx::PropType::Boolean)
}

/// Whether every interval of every curve of `value` holds a constant
/// (the last key's interpolation has no interval); false without keys.
fn constant_keys(value: &ufbx::AnimValue) -> bool {
    let mut intervals = value
        .curves
        .iter()
        .flatten()
        .flat_map(|c| {
            let n = c.keyframes.len().saturating_sub(1);
            c.keyframes.iter().take(n)
        })
        .peekable();
    intervals.peek().is_some()
        && intervals.all(|k| {
            matches!(
                k.interpolation,
                ufbx::Interpolation::ConstantPrev | ufbx::Interpolation::ConstantNext
            )
        })
}

/// `found` evaluated by ufbx at `t0 + t` for each grid time `t`.
pub(super) fn sample(anim: &ufbx::Anim, found: &Found<'_>, t0: f64, times: &[f64]) -> Vec<f32> {
    times
        .iter()
        .map(|&t| {
            ufbx::evaluate_prop(anim, found.element, &found.prop, t0 + t)
                .value_vec4
                .x as f32
        })
        .collect()
}
