//! The compiler: a parsed [`ProgramAsset`] and what the cook output says
//! of the clips it names ([`AssetFacts`]) → a validated [`Program`].
//!
//! Validation (every error located): names resolve (with "did you mean"),
//! every clip binds the same skeleton, masks resolve against it,
//! blendspace cells are not degenerate, sync-group members carry the
//! group's markers in cycle order, every state is reachable, a state's
//! transitions have distinct priorities and IDs, no cycle of zero-time
//! transitions, additive layers get deltas or a compatible reference, the
//! players active in any tick (a cross-fade's source included) stay within
//! `limits.max_players`, the live pose buffers within
//! `limits.max_pose_buffers`.
//!
//! Emission: one linear list of guarded ops. A machine contributes, per
//! leaf, its producer guarded by `Active(m, leaf)` into the machine's
//! output, per possible cross-fade source the same producer (same
//! players) guarded by `Source(m, leaf)` into a source buffer, then the
//! fade and inertialization ops; layers follow in order; the list ends in
//! `LocalToComponent`. Buffers are virtual until a linear scan over
//! [first write, last read] intervals assigns the fewest physical ones
//! (lowest free index first, so the result is deterministic).

use crate::asset::{LayerSpec, ProgramAsset, ASSET_VERSION};
use crate::blendspace::{triangulate, TriangulationError};
use crate::located::{did_you_mean, Diagnostic, ProgramErrors, SourceMap};
use crate::plan::*;
use crate::predicate;
use std::collections::{BTreeMap, BTreeSet};

/// One cooked asset as the cook output records it.
#[derive(Clone, Debug, PartialEq)]
pub struct AssetFacts {
    pub asset: String,
    /// The content-named package file, relative to the cook output.
    pub package: String,
    pub skeleton_identity: [u8; 16],
    pub joint_names: Vec<String>,
    pub parents: Vec<u32>,
    pub clips: Vec<ClipFacts>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ClipFacts {
    pub name: String,
    pub duration_s: f32,
    pub looping: bool,
    pub additive: bool,
    /// Sync markers (name, time) in time order.
    pub sync_markers: Vec<(String, f32)>,
    /// Every marker of the clip (sync markers and events): what one cycle
    /// of playback can cross.
    pub marker_count: usize,
}

struct Ctx<'a> {
    map: SourceMap,
    diags: Vec<Diagnostic>,
    asset: &'a ProgramAsset,
}

impl Ctx<'_> {
    fn err(&mut self, offset: usize, node: impl Into<String>, msg: impl Into<String>) {
        self.diags.push(self.map.diag(offset, node, msg));
    }
    fn unresolved<'k>(
        &mut self,
        offset: usize,
        node: impl Into<String>,
        what: &str,
        name: &str,
        known: impl IntoIterator<Item = &'k str>,
    ) {
        let mut d = self
            .map
            .diag(offset, node, format!("no {what} named '{name}'"));
        d.suggestion = did_you_mean(name, known);
        self.diags.push(d);
    }
    fn check(&mut self) -> Result<(), ProgramErrors> {
        if self.diags.is_empty() {
            Ok(())
        } else {
            self.diags.sort_by_key(|d| (d.line, d.column));
            Err(ProgramErrors(std::mem::take(&mut self.diags)))
        }
    }
}

fn find<T>(items: &[toml::Spanned<T>], name: &str, key: impl Fn(&T) -> &str) -> Option<usize> {
    items.iter().position(|i| key(i.get_ref()) == name)
}

fn u16_of(i: usize) -> u16 {
    u16::try_from(i).unwrap_or(u16::MAX)
}

/// What one authored node became.
#[derive(Clone, Copy, Debug)]
enum NodeKind {
    Clip {
        binding: u16,
        rate: f32,
        fixed: Option<f32>,
    },
    Space {
        space: u16,
        rate: f32,
    },
}

/// Compile `asset` (parsed from `file`, whose text is `text`) against the
/// cooked assets it names.
pub fn compile(
    asset: &ProgramAsset,
    text: &str,
    file: &str,
    facts: &[AssetFacts],
) -> Result<Program, ProgramErrors> {
    let mut cx = Ctx {
        map: SourceMap::new(file, text),
        diags: Vec::new(),
        asset,
    };
    if *asset.version.get_ref() != ASSET_VERSION {
        cx.err(
            asset.version.span().start,
            "",
            format!(
                "format version {} (this cooker reads {ASSET_VERSION})",
                asset.version.get_ref()
            ),
        );
        return Err(ProgramErrors(cx.diags));
    }
    let limits = &asset.limits;
    if !(limits.max_tick_s.is_finite() && limits.max_tick_s > 0.0 && limits.max_tick_s <= 1.0) {
        cx.err(
            0,
            "limits",
            format!("max_tick_s {} is outside (0, 1]", limits.max_tick_s),
        );
    }
    let params = params(&mut cx);
    let (bindings, skeleton) = bindings(&mut cx, facts);
    cx.check()?;
    let Some(skel) = skeleton else {
        cx.err(0, "", "the program binds no clip");
        return Err(ProgramErrors(cx.diags));
    };
    let sync_groups = sync_groups(&mut cx, &bindings, facts);
    let masks = masks(&mut cx, skel);
    let (kinds, blendspaces) = nodes(&mut cx, &params, &bindings, &sync_groups, facts);
    cx.check()?;
    let machines = machines(&mut cx, &params);
    cx.check()?;
    let mut e = Emitter {
        spaces: blendspaces.clone(),
        ..Emitter::default()
    };
    let layer_names: Vec<String> = asset
        .layers
        .iter()
        .map(|l| l.get_ref().name.clone())
        .collect();
    let mut out_machines = Vec::new();
    let output = layers(
        &mut cx,
        &mut e,
        &kinds,
        &bindings,
        &masks,
        &params,
        machines,
        &mut out_machines,
        skel,
    );
    cx.check()?;
    let Some(output) = output else {
        return Err(ProgramErrors(cx.diags));
    };
    e.push(
        Guard::Always,
        Op::LocalToComponent { src: output },
        "fk".into(),
        0,
        &cx.map,
    );
    let (scratch, output) = allocate(&mut e, output, &mut out_machines);
    if scratch > limits.max_pose_buffers {
        cx.err(
            0,
            "limits",
            format!(
                "the plan needs {scratch} live pose buffers, over max_pose_buffers {}",
                limits.max_pose_buffers
            ),
        );
    }
    let joints = u32::try_from(skel.parents.len()).unwrap_or(u32::MAX);
    let padded = joints.div_ceil(JOINT_PADDING) * JOINT_PADDING;
    let persistent = PERSISTENT_PER_MACHINE * u32::try_from(out_machines.len()).unwrap_or(0);
    let mut program = Program {
        name: asset.name.clone(),
        source_file: file.to_string(),
        skeleton_identity: skel.skeleton_identity,
        joint_names: skel.joint_names.clone(),
        parents: skel.parents.clone(),
        params,
        bindings,
        sync_groups,
        masks,
        blendspaces,
        players: e.players,
        machines: out_machines,
        layers: layer_names,
        ops: e.ops,
        output,
        capacities: Capacities {
            scratch_buffers: scratch,
            persistent_buffers: persistent,
            joints,
            padded_joints: padded,
            pose_bytes: u64::from(scratch + persistent)
                * u64::from(padded)
                * u64::from(LOCAL_STRIDE),
            component_bytes: u64::from(padded) * u64::from(COMPONENT_STRIDE),
            max_tick_s: limits.max_tick_s as f32,
            ..Capacities::default()
        },
        debug: e.debug,
    };
    player_capacities(&mut cx, &mut program, facts);
    cx.check()?;
    program.validate().map_err(|e| {
        ProgramErrors(vec![cx.map.diag(
            0,
            "",
            format!("internal: the compiled plan is {e}"),
        )])
    })?;
    Ok(program)
}

fn params(cx: &mut Ctx) -> Vec<Param> {
    let mut out = Vec::new();
    let mut seen = BTreeSet::new();
    for p in &cx.asset.parameters {
        let at = p.span().start;
        let p = p.get_ref();
        let node = format!("parameter '{}'", p.name);
        if !seen.insert(p.name.clone()) {
            cx.err(at, &node, "declared twice");
        }
        if matches!(
            p.name.as_str(),
            "state_time" | "completed" | "true" | "false"
        ) {
            cx.err(at, &node, "the name is reserved in predicates");
        }
        let default = p.default.as_ref().map(|d| d.get_ref().clone());
        let kind = match p.kind.get_ref().as_str() {
            "float" => {
                let (min, max) = (p.min.unwrap_or(0.0), p.max.unwrap_or(1.0));
                let d = match &default {
                    None => Some(min),
                    Some(toml::Value::Float(f)) => Some(*f),
                    Some(toml::Value::Integer(i)) => Some(*i as f64),
                    _ => None,
                };
                match d {
                    Some(d)
                        if min.is_finite()
                            && max.is_finite()
                            && min < max
                            && (min..=max).contains(&d) =>
                    {
                        ParamKind::Float {
                            min: min as f32,
                            max: max as f32,
                            default: d as f32,
                        }
                    }
                    _ => {
                        cx.err(at, &node, format!("a float needs finite min < max and a default number in [min, max] (min {min}, max {max})"));
                        continue;
                    }
                }
            }
            "bool" => match default {
                None => ParamKind::Bool { default: false },
                Some(toml::Value::Boolean(b)) => ParamKind::Bool { default: b },
                Some(_) => {
                    cx.err(at, &node, "a bool's default is true or false");
                    continue;
                }
            },
            "enum" => {
                let values = p.values.clone().unwrap_or_default();
                if values.is_empty() || values.iter().collect::<BTreeSet<_>>().len() != values.len()
                {
                    cx.err(at, &node, "an enum needs distinct `values`");
                    continue;
                }
                let d = match default {
                    None => Some(0),
                    Some(toml::Value::String(s)) => values.iter().position(|v| *v == s),
                    Some(_) => None,
                };
                match d {
                    Some(d) => ParamKind::Enum {
                        values,
                        default: d as u32,
                    },
                    None => {
                        cx.err(at, &node, "the default is not one of the enum's values");
                        continue;
                    }
                }
            }
            other => {
                let mut d = cx.map.diag(
                    p.kind.span().start,
                    &node,
                    format!("unknown type '{other}' (float, bool, enum)"),
                );
                d.suggestion = did_you_mean(other, ["float", "bool", "enum"]);
                cx.diags.push(d);
                continue;
            }
        };
        out.push(Param {
            name: p.name.clone(),
            kind,
        });
    }
    out
}

fn bindings<'f>(cx: &mut Ctx, facts: &'f [AssetFacts]) -> (Vec<Binding>, Option<&'f AssetFacts>) {
    let mut out = Vec::new();
    let mut skeleton: Option<&AssetFacts> = None;
    let mut seen = BTreeSet::new();
    for c in &cx.asset.clips {
        let at = c.span().start;
        let c = c.get_ref();
        let node = format!("clip '{}'", c.name);
        if !seen.insert(c.name.clone()) {
            cx.err(at, &node, "declared twice");
        }
        let Some(a) = facts.iter().find(|a| a.asset == *c.asset.get_ref()) else {
            cx.unresolved(
                c.asset.span().start,
                &node,
                "cooked asset",
                c.asset.get_ref(),
                facts.iter().map(|a| a.asset.as_str()),
            );
            continue;
        };
        let Some(f) = a.clips.iter().find(|f| f.name == *c.clip.get_ref()) else {
            cx.unresolved(
                c.clip.span().start,
                &node,
                &format!("clip in asset '{}'", a.asset),
                c.clip.get_ref(),
                a.clips.iter().map(|f| f.name.as_str()),
            );
            continue;
        };
        match skeleton {
            None => skeleton = Some(a),
            Some(s) if s.skeleton_identity != a.skeleton_identity => {
                cx.err(
                    at,
                    &node,
                    format!(
                        "asset '{}' has another skeleton than asset '{}' (identities differ)",
                        a.asset, s.asset
                    ),
                );
                continue;
            }
            Some(_) => {}
        }
        out.push(Binding {
            name: c.name.clone(),
            asset: a.asset.clone(),
            clip: f.name.clone(),
            package: a.package.clone(),
            skeleton_identity: a.skeleton_identity,
            duration_s: f.duration_s,
            looping: f.looping,
            additive: f.additive,
        });
    }
    (out, skeleton)
}

fn clip_facts<'f>(facts: &'f [AssetFacts], b: &Binding) -> Option<&'f ClipFacts> {
    facts
        .iter()
        .find(|a| a.asset == b.asset)
        .and_then(|a| a.clips.iter().find(|c| c.name == b.clip))
}

fn sync_groups(cx: &mut Ctx, _b: &[Binding], _f: &[AssetFacts]) -> Vec<SyncGroup> {
    let mut out = Vec::new();
    for g in &cx.asset.sync_groups {
        let at = g.span().start;
        let g = g.get_ref();
        if g.markers.is_empty()
            || g.markers.iter().collect::<BTreeSet<_>>().len() != g.markers.len()
        {
            cx.err(
                at,
                format!("sync_group '{}'", g.name),
                "needs one or more distinct markers",
            );
        }
        out.push(SyncGroup {
            name: g.name.clone(),
            markers: g.markers.clone(),
        });
    }
    out
}

fn masks(cx: &mut Ctx, skel: &AssetFacts) -> Vec<Mask> {
    let n = skel.parents.len();
    let names: Vec<&str> = skel.joint_names.iter().map(String::as_str).collect();
    let mut out = Vec::new();
    for m in &cx.asset.masks {
        let m = m.get_ref();
        let node = format!("mask '{}'", m.name);
        let mut weights = vec![0f32; n];
        for s in &m.subtrees {
            let at = s.span().start;
            let s = s.get_ref();
            let Some(root) = names.iter().position(|j| *j == s.root) else {
                cx.unresolved(at, &node, "joint", &s.root, names.iter().copied());
                continue;
            };
            if !(0.0..=1.0).contains(&s.weight) {
                cx.err(
                    at,
                    &node,
                    format!("subtree weight {} is outside [0, 1]", s.weight),
                );
            }
            // Joints of the subtree (depth-first: a contiguous range).
            let mut depth = vec![0u32; n];
            for j in root..n {
                if j > root {
                    let p = skel.parents[j];
                    if p == NO_PARENT || (p as usize) < root {
                        break;
                    }
                    depth[j] = depth[p as usize] + 1;
                }
                let ramp = if s.feather == 0 {
                    1.0
                } else {
                    ((depth[j] + 1) as f64 / (s.feather + 1) as f64).min(1.0)
                };
                weights[j] = weights[j].max((s.weight * ramp) as f32);
            }
        }
        for jw in &m.joints {
            let at = jw.span().start;
            let jw = jw.get_ref();
            match names.iter().position(|j| *j == jw.name) {
                Some(j) if (0.0..=1.0).contains(&jw.weight) => weights[j] = jw.weight as f32,
                Some(_) => cx.err(
                    at,
                    &node,
                    format!("joint '{}' weight {} is outside [0, 1]", jw.name, jw.weight),
                ),
                None => cx.unresolved(at, &node, "joint", &jw.name, names.iter().copied()),
            }
        }
        let mut words = vec![0u64; n.div_ceil(64)];
        for (j, w) in weights.iter().enumerate() {
            if *w > 0.0 {
                words[j / 64] |= 1 << (j % 64);
            }
        }
        out.push(Mask {
            name: m.name.clone(),
            weights,
            words,
        });
    }
    out
}

fn nodes(
    cx: &mut Ctx,
    params: &[Param],
    bindings: &[Binding],
    groups: &[SyncGroup],
    facts: &[AssetFacts],
) -> (Vec<Option<NodeKind>>, Vec<Blendspace>) {
    let mut kinds = Vec::new();
    let mut spaces = Vec::new();
    let clip_names: Vec<&str> = bindings.iter().map(|b| b.name.as_str()).collect();
    for (ni, n) in cx.asset.nodes.iter().enumerate() {
        let at = n.span().start;
        let n = n.get_ref();
        let node = format!("node '{}'", n.name);
        if cx.asset.nodes[..ni]
            .iter()
            .any(|o| o.get_ref().name == n.name)
        {
            cx.err(at, &node, "declared twice");
        }
        if !(n.rate.is_finite() && n.rate > 0.0 && n.rate <= 16.0) {
            cx.err(at, &node, format!("rate {} is outside (0, 16]", n.rate));
        }
        let resolve_clip = |cx: &mut Ctx, name: &toml::Spanned<String>| -> Option<u16> {
            match bindings.iter().position(|b| b.name == *name.get_ref()) {
                Some(i) => Some(u16_of(i)),
                None => {
                    cx.unresolved(
                        name.span().start,
                        &node,
                        "clip",
                        name.get_ref(),
                        clip_names.iter().copied(),
                    );
                    None
                }
            }
        };
        let float_param = |cx: &mut Ctx, name: &toml::Spanned<String>| -> Option<u16> {
            match params.iter().position(|p| p.name == *name.get_ref()) {
                Some(i) if matches!(params[i].kind, ParamKind::Float { .. }) => Some(u16_of(i)),
                Some(_) => {
                    cx.err(
                        name.span().start,
                        &node,
                        format!("parameter '{}' is not a float", name.get_ref()),
                    );
                    None
                }
                None => {
                    cx.unresolved(
                        name.span().start,
                        &node,
                        "parameter",
                        name.get_ref(),
                        params.iter().map(|p| p.name.as_str()),
                    );
                    None
                }
            }
        };
        let kind = match n.kind.get_ref().as_str() {
            "clip" => {
                let Some(c) = &n.clip else {
                    cx.err(at, &node, "a clip node needs `clip`");
                    kinds.push(None);
                    continue;
                };
                let b = resolve_clip(cx, c);
                if let (Some(b), Some(t)) = (b, n.time_s) {
                    let d = bindings[usize::from(b)].duration_s;
                    if !(0.0..=f64::from(d)).contains(&t) {
                        cx.err(
                            at,
                            &node,
                            format!("time_s {t} is outside clip '{}' (0..{d} s)", c.get_ref()),
                        );
                    }
                }
                b.map(|binding| NodeKind::Clip {
                    binding,
                    rate: n.rate as f32,
                    fixed: n.time_s.map(|t| t as f32),
                })
            }
            k @ ("blendspace1d" | "blendspace2d") => {
                let two = k == "blendspace2d";
                let axes: Vec<Option<u16>> = if two {
                    match &n.parameters {
                        Some(ps) if ps.len() == 2 => {
                            ps.iter().map(|p| float_param(cx, p)).collect()
                        }
                        _ => {
                            cx.err(at, &node, "a 2D blendspace needs `parameters = [x, y]`");
                            vec![None]
                        }
                    }
                } else {
                    match &n.parameter {
                        Some(p) => vec![float_param(cx, p)],
                        None => {
                            cx.err(at, &node, "a 1D blendspace needs `parameter`");
                            vec![None]
                        }
                    }
                };
                let mut points = Vec::new();
                let mut members = Vec::new();
                for s in &n.samples {
                    let sat = s.span().start;
                    let s = s.get_ref();
                    let pos = match (&s.at, two) {
                        (toml::Value::Float(x), false) => Some([*x as f32, 0.0]),
                        (toml::Value::Integer(x), false) => Some([*x as f32, 0.0]),
                        (toml::Value::Array(a), true) if a.len() == 2 => {
                            let f =
                                |v: &toml::Value| v.as_float().or(v.as_integer().map(|i| i as f64));
                            match (f(&a[0]), f(&a[1])) {
                                (Some(x), Some(y)) => Some([x as f32, y as f32]),
                                _ => None,
                            }
                        }
                        _ => None,
                    };
                    match pos {
                        Some(p) if p.iter().all(|v| v.is_finite()) => points.push(p),
                        _ => cx.err(
                            sat,
                            &node,
                            if two {
                                "`at` must be [x, y]"
                            } else {
                                "`at` must be a number"
                            },
                        ),
                    }
                    members.push(resolve_clip(cx, &s.clip));
                }
                if points.len() < 2 || points.len() > 64 {
                    cx.err(
                        at,
                        &node,
                        format!("{} samples (a blendspace takes 2 to 64)", points.len()),
                    );
                    kinds.push(None);
                    continue;
                }
                let mut triangles = Vec::new();
                if two {
                    match triangulate(&points) {
                        Ok(t) => triangles = t,
                        Err(e) => {
                            let name = |i: usize| {
                                n.samples
                                    .get(i)
                                    .map_or(String::new(), |s| s.get_ref().clip.get_ref().clone())
                            };
                            let msg = match e {
                                TriangulationError::Duplicate(a, b) => format!("samples '{}' and '{}' are at the same position", name(a), name(b)),
                                TriangulationError::Collinear => "every sample is on one line: no cell has an area".into(),
                                TriangulationError::Degenerate(t) => format!(
                                    "degenerate cell of samples '{}', '{}', '{}' (nearly collinear)",
                                    name(t[0]),
                                    name(t[1]),
                                    name(t[2])
                                ),
                                TriangulationError::Incomplete => "the samples could not be triangulated".into(),
                            };
                            cx.err(at, &node, msg);
                        }
                    }
                } else {
                    let mut order: Vec<usize> = (0..points.len()).collect();
                    order.sort_by(|a, b| points[*a][0].total_cmp(&points[*b][0]));
                    if order.iter().enumerate().any(|(i, o)| i != *o) {
                        cx.err(at, &node, "1D samples must be listed in ascending `at`");
                    }
                    if points.windows(2).any(|w| w[0][0] == w[1][0]) {
                        cx.err(
                            at,
                            &node,
                            "two 1D samples at the same position make a degenerate cell",
                        );
                    }
                }
                let sync = match &n.sync {
                    None => None,
                    Some(g) => match groups.iter().position(|x| x.name == *g.get_ref()) {
                        Some(gi) => {
                            for (m, s) in members.iter().zip(&n.samples) {
                                let Some(m) = m else { continue };
                                let b = &bindings[usize::from(*m)];
                                if let Some(cf) = clip_facts(facts, b) {
                                    check_sync_markers(
                                        cx,
                                        s.span().start,
                                        &node,
                                        &groups[gi],
                                        b,
                                        cf,
                                    );
                                }
                            }
                            Some(u16_of(gi))
                        }
                        None => {
                            cx.unresolved(
                                g.span().start,
                                &node,
                                "sync group",
                                g.get_ref(),
                                groups.iter().map(|g| g.name.as_str()),
                            );
                            None
                        }
                    },
                };
                if axes.iter().any(Option::is_none) || members.iter().any(Option::is_none) {
                    None
                } else {
                    spaces.push(Blendspace {
                        name: n.name.clone(),
                        params: axes.into_iter().flatten().collect(),
                        points,
                        triangles,
                        sync,
                        members: members.into_iter().flatten().collect(),
                    });
                    Some(NodeKind::Space {
                        space: u16_of(spaces.len() - 1),
                        rate: n.rate as f32,
                    })
                }
            }
            other => {
                let mut d = cx.map.diag(
                    n.kind.span().start,
                    &node,
                    format!("unknown node type '{other}' (clip, blendspace1d, blendspace2d)"),
                );
                d.suggestion = did_you_mean(other, ["clip", "blendspace1d", "blendspace2d"]);
                cx.diags.push(d);
                None
            }
        };
        kinds.push(kind);
    }
    (kinds, spaces)
}

/// A member of a sync group carries each of the group's markers as a sync
/// marker, once, in the group's cyclic order.
fn check_sync_markers(
    cx: &mut Ctx,
    at: usize,
    node: &str,
    g: &SyncGroup,
    b: &Binding,
    f: &ClipFacts,
) {
    let mut positions = Vec::new();
    for m in &g.markers {
        match f.sync_markers.iter().filter(|(n, _)| n == m).count() {
            1 => positions.push(f.sync_markers.iter().position(|(n, _)| n == m).unwrap_or(0)),
            0 => {
                let mut d = cx.map.diag(
                    at,
                    node,
                    format!("clip '{}' (asset '{}', clip '{}') has no sync marker '{m}' of sync group '{}'", b.name, b.asset, b.clip, g.name),
                );
                d.suggestion = did_you_mean(m, f.sync_markers.iter().map(|(n, _)| n.as_str()));
                cx.diags.push(d);
                return;
            }
            k => {
                cx.err(
                    at,
                    node,
                    format!(
                        "clip '{}' has sync marker '{m}' {k} times (once per cycle expected)",
                        b.name
                    ),
                );
                return;
            }
        }
    }
    let start = positions.iter().copied().min().unwrap_or(0);
    let rot = positions.iter().position(|p| *p == start).unwrap_or(0);
    let cyclic: Vec<usize> = positions[rot..]
        .iter()
        .chain(&positions[..rot])
        .copied()
        .collect();
    if !cyclic.windows(2).all(|w| w[0] < w[1]) {
        cx.err(
            at,
            node,
            format!(
                "clip '{}' carries the markers of sync group '{}' in another cyclic order",
                b.name, g.name
            ),
        );
    }
    if !b.looping {
        cx.err(
            at,
            node,
            format!("clip '{}' does not loop; a sync group member must", b.name),
        );
    }
}

/// A machine resolved, before emission.
struct MachineDraft {
    name: String,
    span: usize,
    states: Vec<State>,
    state_nodes: Vec<Option<(u16, usize)>>,
    transitions: Vec<Transition>,
    initial_leaf: u16,
}

fn machines(cx: &mut Ctx, params: &[Param]) -> Vec<MachineDraft> {
    let mut out = Vec::new();
    for (mi, m) in cx.asset.machines.iter().enumerate() {
        let mat = m.span().start;
        let m = m.get_ref();
        let mnode = format!("machine '{}'", m.name);
        if cx.asset.machines[..mi]
            .iter()
            .any(|o| o.get_ref().name == m.name)
        {
            cx.err(mat, &mnode, "declared twice");
        }
        let names: Vec<&str> = m.states.iter().map(|s| s.get_ref().name.as_str()).collect();
        if names.is_empty() {
            cx.err(mat, &mnode, "has no states");
            continue;
        }
        if names.len() > 1024 {
            cx.err(mat, &mnode, "more than 1024 states");
            continue;
        }
        let mut bad = false;
        for (i, s) in m.states.iter().enumerate() {
            if names[..i].contains(&s.get_ref().name.as_str()) {
                cx.err(
                    s.span().start,
                    format!("{mnode} / state '{}'", s.get_ref().name),
                    "declared twice",
                );
                bad = true;
            }
        }
        // Parents: resolve, reject cycles, then order parent before child.
        let mut parent: Vec<Option<usize>> = vec![None; names.len()];
        for (i, s) in m.states.iter().enumerate() {
            if let Some(p) = &s.get_ref().parent {
                match names.iter().position(|n| *n == p.get_ref()) {
                    Some(pi) => parent[i] = Some(pi),
                    None => {
                        cx.unresolved(
                            p.span().start,
                            format!("{mnode} / state '{}'", names[i]),
                            "state",
                            p.get_ref(),
                            names.iter().copied(),
                        );
                        bad = true;
                    }
                }
            }
        }
        if bad {
            continue;
        }
        let mut depth = vec![0usize; names.len()];
        for i in 0..names.len() {
            let mut p = parent[i];
            let mut d = 0;
            while let Some(pi) = p {
                d += 1;
                if d > names.len() {
                    break;
                }
                p = parent[pi];
            }
            if d > names.len() {
                cx.err(
                    m.states[i].span().start,
                    format!("{mnode} / state '{}'", names[i]),
                    "its parents form a cycle",
                );
                bad = true;
            }
            depth[i] = d;
        }
        if bad {
            continue;
        }
        // Authored index → compiled index (parents first, stable).
        let mut order: Vec<usize> = (0..names.len()).collect();
        order.sort_by_key(|&i| depth[i]);
        let mut new_of = vec![0usize; names.len()];
        for (ni, &oi) in order.iter().enumerate() {
            new_of[oi] = ni;
        }
        let is_leaf: Vec<bool> = (0..names.len())
            .map(|i| !parent.contains(&Some(i)))
            .collect();
        let mut state_nodes = vec![None; names.len()];
        let mut entry = vec![usize::MAX; names.len()];
        for (i, s) in m.states.iter().enumerate() {
            let s = s.get_ref();
            let snode = format!("{mnode} / state '{}'", s.name);
            let at = m.states[i].span().start;
            if is_leaf[i] {
                match &s.node {
                    None => cx.err(at, &snode, "a leaf state needs a producer `node`"),
                    Some(n) => match find(&cx.asset.nodes, n.get_ref(), |x| &x.name) {
                        Some(ni) => state_nodes[new_of[i]] = Some((u16_of(ni), at)),
                        None => cx.unresolved(
                            n.span().start,
                            &snode,
                            "node",
                            n.get_ref(),
                            cx.asset.nodes.iter().map(|x| x.get_ref().name.as_str()),
                        ),
                    },
                }
                if s.initial.is_some() {
                    cx.err(at, &snode, "a leaf state has no `initial` child");
                }
            } else {
                if s.node.is_some() {
                    cx.err(at, &snode, "a parent state has no producer; its leaves do");
                }
                match &s.initial {
                    None => cx.err(
                        at,
                        &snode,
                        "a parent state needs `initial` (the child entered)",
                    ),
                    Some(c) => match names.iter().position(|n| *n == c.get_ref()) {
                        Some(ci) if parent[ci] == Some(i) => entry[i] = ci,
                        Some(_) => cx.err(
                            c.span().start,
                            &snode,
                            format!("'{}' is not a child of '{}'", c.get_ref(), s.name),
                        ),
                        None => cx.unresolved(
                            c.span().start,
                            &snode,
                            "state",
                            c.get_ref(),
                            names.iter().copied(),
                        ),
                    },
                }
            }
        }
        if !cx.diags.is_empty() {
            continue;
        }
        let entry_leaf = |i: usize| {
            let mut s = i;
            for _ in 0..names.len() {
                if is_leaf[s] {
                    break;
                }
                s = entry[s];
            }
            s
        };
        let states: Vec<State> = order
            .iter()
            .map(|&oi| State {
                name: names[oi].to_string(),
                parent: parent[oi].map(|p| u16_of(new_of[p])),
                entry_leaf: u16_of(new_of[entry_leaf(oi)]),
                is_leaf: is_leaf[oi],
            })
            .collect();
        let initial_leaf = match names.iter().position(|n| *n == m.initial.get_ref()) {
            Some(i) => u16_of(new_of[entry_leaf(i)]),
            None => {
                cx.unresolved(
                    m.initial.span().start,
                    &mnode,
                    "state",
                    m.initial.get_ref(),
                    names.iter().copied(),
                );
                continue;
            }
        };
        let mut transitions = Vec::new();
        let mut ids = BTreeSet::new();
        let mut prio: BTreeMap<(usize, i32), u32> = BTreeMap::new();
        for t in &m.transitions {
            let at = t.span().start;
            let t = t.get_ref();
            let tnode = format!("{mnode} / transition {}", t.id);
            if !ids.insert(t.id) {
                cx.err(at, &tnode, "transition ID used twice");
            }
            let res = |cx: &mut Ctx, s: &toml::Spanned<String>| match names
                .iter()
                .position(|n| *n == s.get_ref())
            {
                Some(i) => Some(i),
                None => {
                    cx.unresolved(
                        s.span().start,
                        &tnode,
                        "state",
                        s.get_ref(),
                        names.iter().copied(),
                    );
                    None
                }
            };
            let (from, to) = (res(cx, &t.from), res(cx, &t.to));
            let mode = match t.mode.get_ref().as_str() {
                "crossfade" => TransitionMode::Crossfade,
                "inertialize" => TransitionMode::Inertialize,
                other => {
                    let mut d = cx.map.diag(
                        t.mode.span().start,
                        &tnode,
                        format!("unknown mode '{other}' (crossfade, inertialize)"),
                    );
                    d.suggestion = did_you_mean(other, ["crossfade", "inertialize"]);
                    cx.diags.push(d);
                    continue;
                }
            };
            if !(t.duration_s.is_finite() && (0.0..=10.0).contains(&t.duration_s)) {
                cx.err(
                    at,
                    &tnode,
                    format!("duration_s {} is outside [0, 10]", t.duration_s),
                );
            }
            if mode == TransitionMode::Inertialize && t.duration_s <= 0.0 {
                cx.err(at, &tnode, "an inertialization needs a duration");
            }
            let code = match predicate::compile(t.when.get_ref(), params) {
                Ok(c) => c,
                Err(e) => {
                    // Point into the string (past its opening quote).
                    let mut d = cx.map.diag(
                        t.when.span().start + 1 + e.offset,
                        &tnode,
                        format!("in `when`: {}", e.message),
                    );
                    d.suggestion = e.suggestion;
                    cx.diags.push(d);
                    continue;
                }
            };
            let (Some(from), Some(to)) = (from, to) else {
                continue;
            };
            if let Some(other) = prio.insert((from, t.priority), t.id) {
                cx.err(at, &tnode, format!("same source state and priority {} as transition {other}: the order would rest on IDs alone", t.priority));
            }
            if entry_leaf(to) == from || (is_leaf[from] && entry_leaf(to) == from) {
                cx.err(
                    at,
                    &tnode,
                    "a transition into the state it leaves (no self transitions in this version)",
                );
            }
            transitions.push((
                depth[from],
                Transition {
                    id: t.id,
                    from: u16_of(new_of[from]),
                    to: u16_of(new_of[to]),
                    to_leaf: u16_of(new_of[entry_leaf(to)]),
                    priority: t.priority,
                    mode,
                    duration_s: t.duration_s as f32,
                    predicate: code,
                    text: t.when.get_ref().clone(),
                },
            ));
        }
        transitions.sort_by(|a, b| {
            a.0.cmp(&b.0)
                .then(b.1.priority.cmp(&a.1.priority))
                .then(a.1.id.cmp(&b.1.id))
        });
        let transitions: Vec<Transition> = transitions.into_iter().map(|t| t.1).collect();
        let draft = MachineDraft {
            name: m.name.clone(),
            span: mat,
            states,
            state_nodes,
            transitions,
            initial_leaf,
        };
        reachability(cx, &draft);
        out.push(draft);
    }
    out
}

/// Whether `leaf`'s active path contains `state`.
fn on_path(states: &[State], leaf: u16, state: u16) -> bool {
    let mut s = Some(leaf);
    while let Some(i) = s {
        if i == state {
            return true;
        }
        s = states[usize::from(i)].parent;
    }
    false
}

fn reachability(cx: &mut Ctx, m: &MachineDraft) {
    let n = m.states.len();
    let mut reached = vec![false; n];
    let mut queue = vec![m.initial_leaf];
    reached[usize::from(m.initial_leaf)] = true;
    while let Some(leaf) = queue.pop() {
        for t in &m.transitions {
            if on_path(&m.states, leaf, t.from) && !reached[usize::from(t.to_leaf)] {
                reached[usize::from(t.to_leaf)] = true;
                queue.push(t.to_leaf);
            }
        }
    }
    for leaf in 0..n {
        if reached[leaf] {
            let mut s = m.states[leaf].parent;
            while let Some(p) = s {
                reached[usize::from(p)] = true;
                s = m.states[usize::from(p)].parent;
            }
        }
    }
    for (i, s) in m.states.iter().enumerate() {
        if !reached[i] {
            cx.err(
                m.span,
                format!("machine '{}' / state '{}'", m.name, s.name),
                "unreachable from the initial state",
            );
        }
    }
    // Zero-time cycles: transitions that take no time and wait on no
    // state time, between leaves.
    let zero: Vec<(u16, u16, u32)> = (0..n as u16)
        .filter(|l| m.states[usize::from(*l)].is_leaf)
        .flat_map(|l| {
            m.transitions
                .iter()
                .filter(move |t| t.duration_s == 0.0 && !predicate::reads_state_time(&t.predicate))
                .filter(move |t| on_path(&m.states, l, t.from))
                .map(move |t| (l, t.to_leaf, t.id))
        })
        .collect();
    // Colour DFS over the zero-time edge graph.
    let mut colour = vec![0u8; n];
    fn dfs(
        v: u16,
        zero: &[(u16, u16, u32)],
        colour: &mut [u8],
        path: &mut Vec<u32>,
    ) -> Option<Vec<u32>> {
        colour[usize::from(v)] = 1;
        for &(a, b, id) in zero.iter().filter(|e| e.0 == v) {
            let _ = a;
            path.push(id);
            match colour[usize::from(b)] {
                1 => return Some(path.clone()),
                0 => {
                    if let Some(c) = dfs(b, zero, colour, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
            path.pop();
        }
        colour[usize::from(v)] = 2;
        None
    }
    for v in 0..n as u16 {
        if colour[usize::from(v)] == 0 {
            if let Some(cycle) = dfs(v, &zero, &mut colour, &mut Vec::new()) {
                let ids: Vec<String> = cycle.iter().map(u32::to_string).collect();
                cx.err(
                    m.span,
                    format!("machine '{}'", m.name),
                    format!("zero-time cycle through transitions {} (give one a duration or a state_time condition)", ids.join(" → ")),
                );
                return;
            }
        }
    }
}

#[derive(Default)]
struct Emitter {
    ops: Vec<Instr>,
    debug: Vec<DebugEntry>,
    players: Vec<PlayerSlot>,
    spaces: Vec<Blendspace>,
    vregs: u32,
}

impl Emitter {
    fn vreg(&mut self) -> u16 {
        self.vregs += 1;
        u16_of(self.vregs as usize - 1)
    }
    fn push(&mut self, guard: Guard, op: Op, node: String, at: usize, map: &SourceMap) {
        let (line, column) = if at == 0 && node == "fk" {
            (0, 0)
        } else {
            map.locate(at)
        };
        self.ops.push(Instr { guard, op });
        self.debug.push(DebugEntry { node, line, column });
    }
}

/// A leaf's producer: its node kind, players, authored path and offset.
type LeafUse = (NodeKind, Vec<u16>, String, usize);

/// Create the players of one use of a node.
fn node_players(e: &mut Emitter, kind: NodeKind, owner: Owner) -> Vec<u16> {
    match kind {
        NodeKind::Clip {
            binding,
            rate,
            fixed,
        } => {
            e.players.push(PlayerSlot {
                binding,
                rate,
                fixed_time: fixed,
                sync: None,
                owner,
            });
            vec![u16_of(e.players.len() - 1)]
        }
        NodeKind::Space { space, rate } => e.spaces[usize::from(space)]
            .members
            .clone()
            .into_iter()
            .map(|binding| {
                e.players.push(PlayerSlot {
                    binding,
                    rate,
                    fixed_time: None,
                    sync: e.spaces[usize::from(space)].sync.map(|g| (g, space)),
                    owner,
                });
                u16_of(e.players.len() - 1)
            })
            .collect(),
    }
}

#[allow(clippy::too_many_arguments)]
fn emit_node(
    e: &mut Emitter,
    map: &SourceMap,
    kind: NodeKind,
    players: &[u16],
    guard: Guard,
    out: u16,
    mask: Option<u16>,
    node: &str,
    at: usize,
) {
    match kind {
        NodeKind::Clip { .. } => e.push(
            guard,
            Op::Sample {
                out,
                player: players[0],
                mask,
            },
            node.to_string(),
            at,
            map,
        ),
        NodeKind::Space { space, .. } => {
            let inputs: Vec<u16> = players
                .iter()
                .map(|&player| {
                    let t = e.vreg();
                    e.push(
                        guard,
                        Op::Sample {
                            out: t,
                            player,
                            mask: None,
                        },
                        node.to_string(),
                        at,
                        map,
                    );
                    t
                })
                .collect();
            e.push(
                guard,
                Op::BlendSpace { out, space, inputs },
                node.to_string(),
                at,
                map,
            );
        }
    }
}

#[allow(clippy::too_many_arguments)]
fn layers(
    cx: &mut Ctx,
    e: &mut Emitter,
    kinds: &[Option<NodeKind>],
    bindings: &[Binding],
    masks: &[Mask],
    params: &[Param],
    mut machines: Vec<MachineDraft>,
    out_machines: &mut Vec<Machine>,
    skel: &AssetFacts,
) -> Option<u16> {
    let asset = cx.asset;
    let mut current: Option<u16> = None;
    let mut used_machines = BTreeSet::new();
    if asset.layers.is_empty() {
        cx.err(0, "", "the program has no layers");
        return None;
    }
    for (li, l) in asset.layers.iter().enumerate() {
        let at = l.span().start;
        let l = l.get_ref();
        let lnode = format!("layer '{}'", l.name);
        let compose = l.compose.get_ref().as_str();
        const COMPOSE: [&str; 5] = ["base", "override", "additive", "modifier", "two_bone_ik"];
        if !COMPOSE.contains(&compose) {
            let mut d = cx.map.diag(
                l.compose.span().start,
                &lnode,
                format!("unknown composition '{compose}' ({})", COMPOSE.join(", ")),
            );
            d.suggestion = did_you_mean(compose, COMPOSE);
            cx.diags.push(d);
            continue;
        }
        if (li == 0) != (compose == "base") {
            cx.err(
                at,
                &lnode,
                "the first layer, and only it, is the `base` layer",
            );
            continue;
        }
        let owner = Owner::Layer(u16_of(li));
        let mask = match &l.mask {
            None => None,
            Some(m) if compose == "base" => {
                cx.err(
                    m.span().start,
                    &lnode,
                    "a base layer produces the complete pose: no mask",
                );
                None
            }
            Some(m) => match masks.iter().position(|x| x.name == *m.get_ref()) {
                Some(i) => Some(u16_of(i)),
                None => {
                    cx.unresolved(
                        m.span().start,
                        &lnode,
                        "mask",
                        m.get_ref(),
                        masks.iter().map(|x| x.name.as_str()),
                    );
                    continue;
                }
            },
        };
        let weight = match l.weight.as_ref().map(|w| (w.span().start, w.get_ref())) {
            None => Weight::Const(1.0),
            Some((_, toml::Value::Float(f))) if (0.0..=1.0).contains(f) => Weight::Const(*f as f32),
            Some((_, toml::Value::Integer(i))) if (0..=1).contains(i) => Weight::Const(*i as f32),
            Some((wat, toml::Value::String(p))) => match params.iter().position(|x| x.name == *p) {
                Some(i) if !matches!(params[i].kind, ParamKind::Enum { .. }) => {
                    Weight::Param(u16_of(i))
                }
                Some(_) => {
                    cx.err(
                        wat,
                        &lnode,
                        format!("parameter '{p}' is an enum; a weight is a float or bool"),
                    );
                    continue;
                }
                None => {
                    cx.unresolved(
                        wat,
                        &lnode,
                        "parameter",
                        p,
                        params.iter().map(|x| x.name.as_str()),
                    );
                    continue;
                }
            },
            Some((wat, v)) => {
                cx.err(
                    wat,
                    &lnode,
                    format!("weight {v} is not a number in [0, 1] or a parameter name"),
                );
                continue;
            }
        };
        if compose == "base" && weight != Weight::Const(1.0) {
            cx.err(
                at,
                &lnode,
                "the base layer has no weight (it is the complete pose)",
            );
        }
        if compose == "two_bone_ik" {
            if let Some(op) = two_bone(cx, l, &lnode, at, skel, params, weight, mask.is_some()) {
                let Some(out) = current else { continue };
                let Op::SolveConstraint { chain, target, .. } = op else {
                    continue;
                };
                e.push(
                    Guard::Always,
                    Op::SolveConstraint {
                        out,
                        chain,
                        target,
                        weight,
                    },
                    lnode.clone(),
                    at,
                    &cx.map,
                );
            }
            continue;
        }
        if compose == "modifier" {
            // A game hook slot: the game edits the pose so far; the mask
            // bounds which joints it may change.
            if l.node.is_some() || l.machine.is_some() || l.reference.is_some() {
                cx.err(
                    at,
                    &lnode,
                    "a modifier layer is a hook the game fills: no `node`, `machine` or `reference`",
                );
                continue;
            }
            let Some(mask) = mask else {
                cx.err(
                    at,
                    &lnode,
                    "a modifier layer needs a `mask` (the joints the game may change)",
                );
                continue;
            };
            let Some(out) = current else { continue };
            e.push(
                Guard::Always,
                Op::GameModifier {
                    out,
                    slot: u16_of(li),
                    mask,
                    weight,
                },
                lnode.clone(),
                at,
                &cx.map,
            );
            continue;
        }
        // The producer.
        let produced = match (&l.node, &l.machine) {
            (Some(n), None) => match find(&asset.nodes, n.get_ref(), |x| &x.name) {
                Some(ni) => kinds[ni].map(|k| (k, ni)),
                None => {
                    cx.unresolved(
                        n.span().start,
                        &lnode,
                        "node",
                        n.get_ref(),
                        asset.nodes.iter().map(|x| x.get_ref().name.as_str()),
                    );
                    continue;
                }
            },
            (None, Some(m)) => {
                if compose == "additive" {
                    cx.err(
                        m.span().start,
                        &lnode,
                        "a state machine produces a base or an override layer, not an additive one",
                    );
                    continue;
                }
                let Some(mi) = machines.iter().position(|x| x.name == *m.get_ref()) else {
                    cx.unresolved(
                        m.span().start,
                        &lnode,
                        "machine",
                        m.get_ref(),
                        asset.machines.iter().map(|x| x.get_ref().name.as_str()),
                    );
                    continue;
                };
                if !used_machines.insert(mi) {
                    cx.err(m.span().start, &lnode, "a machine drives one layer");
                    continue;
                }
                let draft = std::mem::replace(
                    &mut machines[mi],
                    MachineDraft {
                        name: String::new(),
                        span: 0,
                        states: vec![],
                        state_nodes: vec![],
                        transitions: vec![],
                        initial_leaf: 0,
                    },
                );
                if compose == "base" {
                    current = emit_machine(cx, e, kinds, draft, out_machines, &lnode);
                    continue;
                }
                // An override layer driven by its own machine: every leaf
                // produces a pose (no cooked delta), blended over the
                // layers below by the mask and weight.
                let mut deltas = false;
                for (si, sn) in draft.state_nodes.iter().enumerate() {
                    let Some((ni, nat)) = *sn else { continue };
                    let Some(kind) = kinds[usize::from(ni)] else {
                        continue;
                    };
                    let members: Vec<u16> = match kind {
                        NodeKind::Clip { binding, .. } => vec![binding],
                        NodeKind::Space { space, .. } => {
                            e.spaces[usize::from(space)].members.clone()
                        }
                    };
                    if members.iter().any(|b| bindings[usize::from(*b)].additive) {
                        cx.err(
                            nat,
                            format!(
                                "{lnode} / machine '{}' / state '{}' / node '{}'",
                                draft.name,
                                draft.states[si].name,
                                asset.nodes[usize::from(ni)].get_ref().name
                            ),
                            format!(
                                "{compose} layer over an additive clip (a delta is not a pose)"
                            ),
                        );
                        deltas = true;
                    }
                }
                if deltas {
                    continue;
                }
                let Some(src) = emit_machine(cx, e, kinds, draft, out_machines, &lnode) else {
                    continue;
                };
                let Some(base) = current else { continue };
                let out = e.vreg();
                e.push(
                    Guard::Always,
                    Op::OverrideMask {
                        out,
                        base,
                        src,
                        mask,
                        weight,
                    },
                    lnode.clone(),
                    at,
                    &cx.map,
                );
                current = Some(out);
                continue;
            }
            _ => {
                cx.err(
                    at,
                    &lnode,
                    "a layer names exactly one producer: `node` or `machine`",
                );
                continue;
            }
        };
        let Some((kind, ni)) = produced else { continue };
        let path = format!("{lnode} / node '{}'", asset.nodes[ni].get_ref().name);
        let nat = asset.nodes[ni].span().start;
        let members: Vec<u16> = match kind {
            NodeKind::Clip { binding, .. } => vec![binding],
            NodeKind::Space { space, .. } => e.spaces[usize::from(space)].members.clone(),
        };
        let additive_clips = members
            .iter()
            .filter(|b| bindings[usize::from(**b)].additive)
            .count();
        match compose {
            "additive" => {
                if additive_clips != 0 && additive_clips != members.len() {
                    cx.err(nat, &path, "mixes additive and pose clips");
                    continue;
                }
                if additive_clips > 0 && l.reference.is_some() {
                    cx.err(
                        at,
                        &lnode,
                        "its clips are cooked deltas already: no `reference`",
                    );
                    continue;
                }
                if additive_clips == 0 && l.reference.is_none() {
                    cx.err(at, &lnode, "its clips are poses: give the `reference` the delta is taken against (rest or a clip frame)");
                    continue;
                }
            }
            _ => {
                if additive_clips > 0 {
                    cx.err(
                        nat,
                        &path,
                        format!("{compose} layer over an additive clip (a delta is not a pose)"),
                    );
                    continue;
                }
                if l.reference.is_some() {
                    cx.err(at, &lnode, "only an additive layer has a `reference`");
                }
            }
        }
        let players = node_players(e, kind, owner);
        let src = e.vreg();
        // Only the mask's joints are read from a directly sampled clip.
        let hint = if matches!(kind, NodeKind::Clip { .. }) {
            mask
        } else {
            None
        };
        emit_node(
            e,
            &cx.map,
            kind,
            &players,
            Guard::Always,
            src,
            hint,
            &path,
            nat,
        );
        match compose {
            "base" => current = Some(src),
            _ => {
                let Some(base) = current else { continue };
                let out = e.vreg();
                let op = if compose == "override" {
                    Op::OverrideMask {
                        out,
                        base,
                        src,
                        mask,
                        weight,
                    }
                } else {
                    let reference = match l.reference.as_ref() {
                        None => None,
                        Some(r) => {
                            let rat = r.span().start;
                            let r = r.get_ref();
                            let rv = e.vreg();
                            match (r.kind.as_str(), &r.clip) {
                                ("rest", None) => e.push(
                                    Guard::Always,
                                    Op::Rest { out: rv },
                                    format!("{lnode} / reference rest"),
                                    rat,
                                    &cx.map,
                                ),
                                ("clip", Some(c)) => {
                                    let Some(b) =
                                        bindings.iter().position(|b| b.name == *c.get_ref())
                                    else {
                                        cx.unresolved(
                                            c.span().start,
                                            &lnode,
                                            "clip",
                                            c.get_ref(),
                                            bindings.iter().map(|b| b.name.as_str()),
                                        );
                                        continue;
                                    };
                                    let bd = &bindings[b];
                                    if bd.additive {
                                        cx.err(rat, &lnode, format!("reference clip '{}' is additive; a reference is a pose", bd.name));
                                        continue;
                                    }
                                    if !(r.time_s.is_finite()
                                        && (0.0..=f64::from(bd.duration_s)).contains(&r.time_s))
                                    {
                                        cx.err(
                                            rat,
                                            &lnode,
                                            format!(
                                                "reference time {} is outside clip '{}' (0..{} s)",
                                                r.time_s, bd.name, bd.duration_s
                                            ),
                                        );
                                        continue;
                                    }
                                    let p = node_players(
                                        e,
                                        NodeKind::Clip {
                                            binding: u16_of(b),
                                            rate: 1.0,
                                            fixed: Some(r.time_s as f32),
                                        },
                                        owner,
                                    );
                                    e.push(
                                        Guard::Always,
                                        Op::Sample {
                                            out: rv,
                                            player: p[0],
                                            mask,
                                        },
                                        format!("{lnode} / reference '{}'", bd.name),
                                        rat,
                                        &cx.map,
                                    );
                                }
                                _ => {
                                    cx.err(rat, &lnode, "reference is { kind = \"rest\" } or { kind = \"clip\", clip = NAME, time_s = T }");
                                    continue;
                                }
                            }
                            Some(rv)
                        }
                    };
                    Op::AddLocal {
                        out,
                        base,
                        src,
                        reference,
                        mask,
                        weight,
                    }
                };
                e.push(Guard::Always, op, lnode.clone(), at, &cx.map);
                current = Some(out);
            }
        }
    }
    for (mi, m) in machines.iter().enumerate() {
        if !used_machines.contains(&mi) && !m.name.is_empty() {
            cx.err(m.span, format!("machine '{}'", m.name), "no layer uses it");
        }
    }
    current
}

/// A `two_bone_ik` layer's chain and target resolved (the op's `out` is
/// filled by the caller), or `None` after reporting why not.
#[allow(clippy::too_many_arguments)]
fn two_bone(
    cx: &mut Ctx,
    l: &LayerSpec,
    lnode: &str,
    at: usize,
    skel: &AssetFacts,
    params: &[Param],
    weight: Weight,
    masked: bool,
) -> Option<Op> {
    if l.node.is_some() || l.machine.is_some() || l.reference.is_some() || masked {
        cx.err(
            at,
            lnode,
            "a two_bone_ik layer names a `chain` and a `target`: no `node`, `machine`, `reference` or `mask`",
        );
        return None;
    }
    let (Some(chain), Some(target)) = (&l.chain, &l.target) else {
        cx.err(
            at,
            lnode,
            "a two_bone_ik layer needs `chain` (root, middle, tip joints) and `target` (three float parameters)",
        );
        return None;
    };
    let (cat, tat) = (chain.span().start, target.span().start);
    if chain.get_ref().len() != 3 || target.get_ref().len() != 3 {
        cx.err(
            at,
            lnode,
            "`chain` is three joints (root, middle, tip) and `target` three parameters (x, y, z)",
        );
        return None;
    }
    let mut joints = [0u16; 3];
    for (k, name) in chain.get_ref().iter().enumerate() {
        let Some(j) = skel.joint_names.iter().position(|n| n == name) else {
            cx.unresolved(
                cat,
                lnode,
                "joint",
                name,
                skel.joint_names.iter().map(String::as_str),
            );
            return None;
        };
        joints[k] = u16_of(j);
    }
    let below = |d: u16, a: u16| {
        let mut j = skel.parents[usize::from(d)];
        while j != NO_PARENT {
            if j == u32::from(a) {
                return true;
            }
            j = skel.parents[j as usize];
        }
        false
    };
    if !(below(joints[1], joints[0]) && below(joints[2], joints[1])) {
        cx.err(
            cat,
            lnode,
            format!(
                "chain {}: each joint must be a descendant of the one before",
                chain.get_ref().join(" > ")
            ),
        );
        return None;
    }
    let mut target_params = [0u16; 3];
    for (k, name) in target.get_ref().iter().enumerate() {
        match params.iter().position(|p| p.name == *name) {
            Some(i) if matches!(params[i].kind, ParamKind::Float { .. }) => {
                target_params[k] = u16_of(i)
            }
            Some(_) => {
                cx.err(
                    tat,
                    lnode,
                    format!("target parameter '{name}' is not a float"),
                );
                return None;
            }
            None => {
                cx.unresolved(
                    tat,
                    lnode,
                    "parameter",
                    name,
                    params.iter().map(|p| p.name.as_str()),
                );
                return None;
            }
        }
    }
    Some(Op::SolveConstraint {
        out: 0,
        chain: joints,
        target: target_params,
        weight,
    })
}

fn emit_machine(
    cx: &mut Ctx,
    e: &mut Emitter,
    kinds: &[Option<NodeKind>],
    m: MachineDraft,
    out: &mut Vec<Machine>,
    lnode: &str,
) -> Option<u16> {
    let mid = u16_of(out.len());
    let output = e.vreg();
    let source = e.vreg();
    let mnode = format!("{lnode} / machine '{}'", m.name);
    // Players per leaf, created once; the source copy reuses them.
    let mut leaf_players: Vec<Option<LeafUse>> = vec![None; m.states.len()];
    for (si, s) in m.states.iter().enumerate() {
        let Some((ni, at)) = m.state_nodes[si] else {
            continue;
        };
        let kind = kinds[usize::from(ni)]?;
        let players = node_players(
            e,
            kind,
            Owner::Leaf {
                machine: mid,
                state: u16_of(si),
            },
        );
        let path = format!(
            "{mnode} / state '{}' / node '{}'",
            s.name,
            cx.asset.nodes[usize::from(ni)].get_ref().name
        );
        leaf_players[si] = Some((kind, players, path, at));
    }
    for (si, lp) in leaf_players.iter().enumerate() {
        if let Some((kind, players, path, at)) = lp {
            emit_node(
                e,
                &cx.map,
                *kind,
                players,
                Guard::Active(mid, u16_of(si)),
                output,
                None,
                path,
                *at,
            );
        }
    }
    // Possible live cross-fade sources: the leaves under a crossfade's `from`.
    let fades = m
        .transitions
        .iter()
        .any(|t| t.mode == TransitionMode::Crossfade && t.duration_s > 0.0);
    let inertial = m
        .transitions
        .iter()
        .any(|t| t.mode == TransitionMode::Inertialize);
    if fades {
        for (si, lp) in leaf_players.iter().enumerate() {
            let is_source = m.transitions.iter().any(|t| {
                t.mode == TransitionMode::Crossfade
                    && t.duration_s > 0.0
                    && on_path(&m.states, u16_of(si), t.from)
            });
            if let (true, Some((kind, players, path, at))) = (is_source, lp) {
                emit_node(
                    e,
                    &cx.map,
                    *kind,
                    players,
                    Guard::Source(mid, u16_of(si)),
                    source,
                    None,
                    &format!("{path} (fade source)"),
                    *at,
                );
            }
        }
        e.push(
            Guard::FadeLive(mid),
            Op::BlendPair {
                out: output,
                a: Operand::Buf(source),
                b: Operand::Buf(output),
                weight: Weight::Fade(mid),
            },
            format!("{mnode} / crossfade"),
            m.span,
            &cx.map,
        );
        e.push(
            Guard::FadeCaptured(mid),
            Op::BlendPair {
                out: output,
                a: Operand::History(mid),
                b: Operand::Buf(output),
                weight: Weight::Fade(mid),
            },
            format!("{mnode} / crossfade from captured pose"),
            m.span,
            &cx.map,
        );
    }
    if inertial {
        e.push(
            Guard::Inertial(mid),
            Op::Inertialize {
                out: output,
                machine: mid,
            },
            format!("{mnode} / inertialize"),
            m.span,
            &cx.map,
        );
    }
    out.push(Machine {
        name: m.name,
        states: m.states,
        transitions: m.transitions,
        initial_leaf: m.initial_leaf,
        end_op: u32::try_from(e.ops.len() - 1).unwrap_or(u32::MAX),
        output,
    });
    Some(output)
}

/// Linear-scan buffer assignment over [first write, last read]. Returns
/// the physical buffer count and the output's physical buffer; rewrites
/// the ops and the machines' outputs.
fn allocate(e: &mut Emitter, output: u16, machines: &mut [Machine]) -> (u32, u16) {
    let n = e.vregs as usize;
    let mut first = vec![usize::MAX; n];
    let mut last = vec![0usize; n];
    for (i, ins) in e.ops.iter_mut().enumerate() {
        ins.op.for_each_buffer(|b, _| {
            let v = usize::from(*b);
            first[v] = first[v].min(i);
            last[v] = last[v].max(i);
        });
    }
    // Machine outputs are read after their end op (the history copy) and
    // the program output after the last op.
    for m in machines.iter() {
        last[usize::from(m.output)] = last[usize::from(m.output)].max(m.end_op as usize + 1);
    }
    last[usize::from(output)] = usize::MAX;
    let mut phys = vec![u16::MAX; n];
    let mut busy: Vec<Option<usize>> = Vec::new(); // physical → vreg's last use
    for i in 0..e.ops.len() {
        // Free what died before this op; the op's own reads stay busy
        // until after it, except that a write may reuse a buffer whose
        // last read is this op (every op works joint by joint).
        let mut writes = Vec::new();
        let mut reads = Vec::new();
        e.ops[i]
            .op
            .for_each_buffer(|b, w| if w { writes.push(*b) } else { reads.push(*b) });
        for slot in busy.iter_mut() {
            if slot.is_some_and(|l| l < i) {
                *slot = None;
            }
        }
        for w in writes {
            let v = usize::from(w);
            if phys[v] != u16::MAX {
                continue;
            }
            let dying_read = reads
                .iter()
                .map(|r| usize::from(*r))
                .find(|&r| last[r] == i && phys[r] != u16::MAX && first[v] == i);
            let p = match dying_read {
                Some(r) => usize::from(phys[r]),
                None => match busy.iter().position(Option::is_none) {
                    Some(p) => p,
                    None => {
                        busy.push(None);
                        busy.len() - 1
                    }
                },
            };
            busy[p] = Some(last[v]);
            phys[v] = u16_of(p);
        }
    }
    for ins in &mut e.ops {
        ins.op.for_each_buffer(|b, _| *b = phys[usize::from(*b)]);
    }
    for m in machines.iter_mut() {
        m.output = phys[usize::from(m.output)];
    }
    (
        u32::try_from(busy.len()).unwrap_or(u32::MAX),
        phys[usize::from(output)],
    )
}

/// Players active at once and the events bound; checks `max_players`.
fn player_capacities(cx: &mut Ctx, p: &mut Program, facts: &[AssetFacts]) {
    let layer_players = p
        .players
        .iter()
        .filter(|s| matches!(s.owner, Owner::Layer(_)))
        .count();
    let leaf_count = |m: u16, s: u16| {
        p.players
            .iter()
            .filter(|x| {
                x.owner
                    == Owner::Leaf {
                        machine: m,
                        state: s,
                    }
            })
            .count()
    };
    let mut worst_machine = 0usize;
    for (mi, m) in p.machines.iter().enumerate() {
        let mi = u16_of(mi);
        let mut worst = (0..m.states.len())
            .map(|s| leaf_count(mi, u16_of(s)))
            .max()
            .unwrap_or(0);
        for t in &m.transitions {
            if t.mode == TransitionMode::Crossfade && t.duration_s > 0.0 {
                for (si, s) in m.states.iter().enumerate() {
                    if s.is_leaf && on_path(&m.states, u16_of(si), t.from) {
                        worst = worst.max(leaf_count(mi, u16_of(si)) + leaf_count(mi, t.to_leaf));
                    }
                }
            }
        }
        worst_machine += worst;
    }
    let active = layer_players + worst_machine;
    p.capacities.players = u32::try_from(p.players.len()).unwrap_or(u32::MAX);
    p.capacities.max_active_players = u32::try_from(active).unwrap_or(u32::MAX);
    if active > cx.asset.limits.max_players as usize {
        cx.err(
            0,
            "limits",
            format!(
                "up to {active} players are active in one tick, over max_players {}",
                cx.asset.limits.max_players
            ),
        );
    }
    // Events: each participating player crosses at most
    // markers × (floor(tick × rate × sync stretch / duration) + 1).
    let tick = f64::from(p.capacities.max_tick_s);
    let mut per_player: Vec<u32> = p
        .players
        .iter()
        .map(|s| {
            let b = &p.bindings[usize::from(s.binding)];
            let markers = facts
                .iter()
                .find(|a| a.asset == b.asset)
                .and_then(|a| a.clips.iter().find(|c| c.name == b.clip))
                .map_or(0, |c| c.sync_markers.len().max(event_count(c)));
            if s.fixed_time.is_some() || markers == 0 || b.duration_s <= 0.0 {
                return 0;
            }
            let stretch = if s.sync.is_some() {
                sync_stretch(p, s, facts)
            } else {
                1.0
            };
            let cycles =
                (tick * f64::from(s.rate) * stretch / f64::from(b.duration_s)).floor() + 1.0;
            (markers as f64 * cycles).min(f64::from(u32::MAX)) as u32
        })
        .collect();
    per_player.sort_unstable_by(|a, b| b.cmp(a));
    p.capacities.max_events_per_tick = per_player
        .iter()
        .take(active)
        .fold(0u32, |a, b| a.saturating_add(*b));
}

fn event_count(c: &ClipFacts) -> usize {
    c.marker_count.max(c.sync_markers.len())
}

/// How much faster than its own rate a synced follower may play: its
/// longest cycle over the shortest cycle of any member of its blendspace.
fn sync_stretch(p: &Program, s: &PlayerSlot, _facts: &[AssetFacts]) -> f64 {
    let Some((_, space)) = s.sync else { return 1.0 };
    let durations: Vec<f32> = p
        .players
        .iter()
        .filter(|x| x.sync == s.sync && x.owner == s.owner)
        .map(|x| p.bindings[usize::from(x.binding)].duration_s)
        .collect();
    let _ = space;
    let own = p.bindings[usize::from(s.binding)].duration_s;
    let shortest = durations.iter().copied().fold(f32::MAX, f32::min);
    if shortest > 0.0 && shortest.is_finite() {
        f64::from((own / shortest).max(1.0))
    } else {
        1.0
    }
}
