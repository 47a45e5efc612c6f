//! The compiled program: resolved parameters, clip bindings, masks,
//! blendspaces, player slots, state machines and the linear plan (one list
//! of guarded pose operations over numbered pose buffers), its capacities
//! and its debug map. [`Program::validate`] checks every index and value
//! an evaluator relies on, so any program that passes it (compiled or
//! loaded from bytes) can be executed without a bounds failure.

/// The compiled program format version (the binary encoding's too).
pub const PROGRAM_VERSION: u32 = 1;
/// Joints are padded to a multiple of this in the capacity figures (a
/// SIMD-width evaluator pads its lanes with identity; the scalar one
/// does not need to).
pub const JOINT_PADDING: u32 = 4;
/// Bytes of one local joint value (rotation, translation, scale: 10 f32).
pub const LOCAL_STRIDE: u32 = 40;
/// Bytes of one component joint value (an `Affine3A`).
pub const COMPONENT_STRIDE: u32 = 64;
/// Deepest predicate stack.
pub const MAX_PREDICATE_STACK: usize = 16;
/// Most joints a program may bind.
pub const MAX_JOINTS: u32 = 4096;
/// Pose buffers each machine keeps across ticks: its last output (the
/// history an interrupted fade or an inertialization starts from), the
/// output before it (the source velocity of an inertialization), the
/// inertialization offset and its rates (6 f32 per joint, within one
/// pose-sized slot).
pub const PERSISTENT_PER_MACHINE: u32 = 4;
/// No parent (a root joint).
pub const NO_PARENT: u32 = u32::MAX;

#[derive(Clone, Debug, PartialEq)]
pub struct Program {
    pub name: String,
    pub source_file: String,
    pub skeleton_identity: [u8; 16],
    pub joint_names: Vec<String>,
    pub parents: Vec<u32>,
    pub params: Vec<Param>,
    pub bindings: Vec<Binding>,
    pub sync_groups: Vec<SyncGroup>,
    pub masks: Vec<Mask>,
    pub blendspaces: Vec<Blendspace>,
    pub players: Vec<PlayerSlot>,
    pub machines: Vec<Machine>,
    pub layers: Vec<String>,
    pub ops: Vec<Instr>,
    /// The buffer holding the final local pose after the last op.
    pub output: u16,
    pub capacities: Capacities,
    /// One entry per op: the authored node it came from.
    pub debug: Vec<DebugEntry>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
}

#[derive(Clone, Debug, PartialEq)]
pub enum ParamKind {
    Float { min: f32, max: f32, default: f32 },
    Bool { default: bool },
    Enum { values: Vec<String>, default: u32 },
}

impl ParamKind {
    /// The value a parameter holds before any input, as the evaluator
    /// stores it (bool 0/1, enum index).
    pub fn default_value(&self) -> f32 {
        match self {
            ParamKind::Float { default, .. } => *default,
            ParamKind::Bool { default } => f32::from(u8::from(*default)),
            ParamKind::Enum { default, .. } => *default as f32,
        }
    }
    /// `v` brought into the parameter's domain (NaN to the default).
    pub fn clamp(&self, v: f32) -> f32 {
        if v.is_nan() {
            return self.default_value();
        }
        match self {
            ParamKind::Float { min, max, .. } => v.clamp(*min, *max),
            ParamKind::Bool { .. } => f32::from(u8::from(v >= 0.5)),
            ParamKind::Enum { values, .. } => {
                v.round().clamp(0.0, values.len().saturating_sub(1) as f32)
            }
        }
    }
}

/// One clip the program plays, as the cook output recorded it.
#[derive(Clone, Debug, PartialEq)]
pub struct Binding {
    /// The program-local clip name.
    pub name: String,
    pub asset: String,
    pub clip: String,
    /// The content-named package file (`packages/<asset>-<hash>.ludanim`):
    /// the generation the program was compiled against.
    pub package: String,
    pub skeleton_identity: [u8; 16],
    pub duration_s: f32,
    pub looping: bool,
    pub additive: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct SyncGroup {
    pub name: String,
    pub markers: Vec<String>,
}

/// Per-joint weights in [0, 1] and the nonzero set as request bits.
#[derive(Clone, Debug, PartialEq)]
pub struct Mask {
    pub name: String,
    pub weights: Vec<f32>,
    pub words: Vec<u64>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Blendspace {
    pub name: String,
    /// One (1D) or two (2D) float parameters.
    pub params: Vec<u16>,
    /// Sample positions (1D: `[x, 0]`, ascending).
    pub points: Vec<[f32; 2]>,
    /// 2D: the cooked triangulation (counter-clockwise).
    pub triangles: Vec<[u16; 3]>,
    pub sync: Option<u16>,
    /// The clip binding of each point.
    pub members: Vec<u16>,
}

/// Who owns a player: a leaf state (advances while its state is active
/// or a live transition source) or a layer (always advances).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Owner {
    Leaf { machine: u16, state: u16 },
    Layer(u16),
}

#[derive(Clone, Debug, PartialEq)]
pub struct PlayerSlot {
    pub binding: u16,
    pub rate: f32,
    /// Frozen at this clip time (a reference frame): never advances.
    pub fixed_time: Option<f32>,
    /// The sync group and blendspace member position this player follows.
    pub sync: Option<(u16, u16)>,
    pub owner: Owner,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum TransitionMode {
    Crossfade,
    Inertialize,
}

#[derive(Clone, Debug, PartialEq)]
pub struct State {
    pub name: String,
    /// Always a lower index (parent before child).
    pub parent: Option<u16>,
    /// The leaf entered when this state is a target (itself for a leaf).
    pub entry_leaf: u16,
    pub is_leaf: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Transition {
    pub id: u32,
    pub from: u16,
    pub to: u16,
    pub to_leaf: u16,
    pub priority: i32,
    pub mode: TransitionMode,
    pub duration_s: f32,
    pub predicate: Vec<PredOp>,
    pub text: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Machine {
    pub name: String,
    pub states: Vec<State>,
    /// In selection order: shallower `from` first, then higher priority,
    /// then lower ID.
    pub transitions: Vec<Transition>,
    pub initial_leaf: u16,
    /// The op after which the evaluator keeps the machine's output as its
    /// history (the pose an interrupted fade or an inertialization starts
    /// from).
    pub end_op: u32,
    /// The buffer the machine's pose is in after `end_op`.
    pub output: u16,
}

/// Typed predicate code, in reverse Polish order over a small stack.
/// Bools are 0/1, enums their value index.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum PredOp {
    Param(u16),
    Const(f32),
    /// Seconds the active leaf has been active, as of the prior tick.
    StateTime,
    /// 1 when every player of the active leaf completed (prior tick).
    Completed,
    Lt,
    Le,
    Gt,
    Ge,
    Eq,
    Ne,
    And,
    Or,
    Not,
}

impl PredOp {
    /// Stack effect: (pops, pushes).
    fn arity(self) -> (usize, usize) {
        match self {
            PredOp::Param(_) | PredOp::Const(_) | PredOp::StateTime | PredOp::Completed => (0, 1),
            PredOp::Not => (1, 1),
            _ => (2, 1),
        }
    }
}

/// Evaluate a validated predicate. `params` are the tick's input
/// snapshot; `state_time` and `completed` the prior tick's.
pub fn eval_predicate(code: &[PredOp], params: &[f32], state_time: f32, completed: bool) -> bool {
    let mut stack = [0f32; MAX_PREDICATE_STACK];
    let mut n = 0usize;
    for op in code {
        let (pops, _) = op.arity();
        if n < pops || (pops == 0 && n >= MAX_PREDICATE_STACK) {
            return false;
        }
        let b = if pops >= 1 { stack[n - 1] } else { 0.0 };
        let a = if pops == 2 { stack[n - 2] } else { 0.0 };
        n -= pops;
        let t = |c: bool| f32::from(u8::from(c));
        stack[n] = match *op {
            PredOp::Param(i) => params.get(usize::from(i)).copied().unwrap_or(0.0),
            PredOp::Const(c) => c,
            PredOp::StateTime => state_time,
            PredOp::Completed => t(completed),
            PredOp::Lt => t(a < b),
            PredOp::Le => t(a <= b),
            PredOp::Gt => t(a > b),
            PredOp::Ge => t(a >= b),
            PredOp::Eq => t(a == b),
            PredOp::Ne => t(a != b),
            PredOp::And => t(a != 0.0 && b != 0.0),
            PredOp::Or => t(a != 0.0 || b != 0.0),
            PredOp::Not => t(b == 0.0),
        };
        n += 1;
    }
    n == 1 && stack[0] != 0.0
}

/// When an op runs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Guard {
    Always,
    /// Machine `m`'s active leaf is `s`.
    Active(u16, u16),
    /// Machine `m` cross-fades from the live leaf `s`.
    Source(u16, u16),
    /// Machine `m` cross-fades from a live source (any leaf).
    FadeLive(u16),
    /// Machine `m` cross-fades from its captured pose (interrupted fade).
    FadeCaptured(u16),
    /// Machine `m` decays an inertialization offset.
    Inertial(u16),
}

/// A blend or layer weight.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weight {
    Const(f32),
    /// A float or bool parameter, clamped into [0, 1].
    Param(u16),
    /// Machine `m`'s transition progress (0 source .. 1 destination).
    Fade(u16),
}

/// A pose operand: a scratch buffer, or a machine's history slot.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Operand {
    Buf(u16),
    History(u16),
}

#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// `out` = the skeleton's rest pose.
    Rest { out: u16 },
    /// `out` = player's clip at its time; `mask`: only the mask's nonzero
    /// joints are requested (the only reader applies that mask).
    Sample {
        out: u16,
        player: u16,
        mask: Option<u16>,
    },
    /// `out = blend(a, b, w)`: lerp / hemisphere nlerp; w 0 is `a`, 1 is `b` exactly.
    BlendPair {
        out: u16,
        a: Operand,
        b: Operand,
        weight: Weight,
    },
    /// `out` = normalized N-way blend of `inputs` by the blendspace's weights.
    BlendSpace {
        out: u16,
        space: u16,
        inputs: Vec<u16>,
    },
    /// `out[j] = blend(base[j], src[j], weight * mask[j])`.
    OverrideMask {
        out: u16,
        base: u16,
        src: u16,
        mask: Option<u16>,
        weight: Weight,
    },
    /// `out[j]` = `base[j]` plus the additive delta of `src[j]` (against
    /// `reference[j]` when given, else `src` is already a delta) at
    /// `weight * mask[j]`.
    AddLocal {
        out: u16,
        base: u16,
        src: u16,
        reference: Option<u16>,
        mask: Option<u16>,
        weight: Weight,
    },
    /// `out` += machine's decaying inertialization offset.
    Inertialize { out: u16, machine: u16 },
    /// Component transforms of `src` (FK) into the component buffer.
    LocalToComponent { src: u16 },
    /// The game's hook for layer `slot` (a `modifier` layer, named by
    /// `layers[slot]`) edits a copy of `out`; only the mask's joints are
    /// taken back, each blended by `weight * mask[j]`, and a non-finite or
    /// degenerate joint the hook wrote is ignored. No hook: `out` unchanged.
    GameModifier {
        out: u16,
        slot: u16,
        mask: u16,
        weight: Weight,
    },
    /// Two-bone IK on `out`, in place: the chain's root and middle joints
    /// (`chain` = root, middle, tip; each a descendant of the one before)
    /// turn so the tip reaches the component-space point of the float
    /// parameters `target` (clamped to the chain's reach), in the plane
    /// the chain bends in; the new rotations blend in at `weight`.
    SolveConstraint {
        out: u16,
        chain: [u16; 3],
        target: [u16; 3],
        weight: Weight,
    },
}

impl Op {
    /// Every buffer operand, `true` for the one written. Reads are visited
    /// before the write.
    pub fn for_each_buffer(&mut self, mut f: impl FnMut(&mut u16, bool)) {
        let w = |o: &mut Operand, f: &mut dyn FnMut(&mut u16, bool)| {
            if let Operand::Buf(b) = o {
                f(b, false)
            }
        };
        match self {
            Op::Rest { out } => f(out, true),
            Op::Sample { out, .. } => f(out, true),
            Op::BlendPair { out, a, b, .. } => {
                w(a, &mut f);
                w(b, &mut f);
                f(out, true)
            }
            Op::BlendSpace { out, inputs, .. } => {
                for i in inputs {
                    f(i, false)
                }
                f(out, true)
            }
            Op::OverrideMask { out, base, src, .. } => {
                f(base, false);
                f(src, false);
                f(out, true)
            }
            Op::AddLocal {
                out,
                base,
                src,
                reference,
                ..
            } => {
                f(base, false);
                f(src, false);
                if let Some(r) = reference {
                    f(r, false)
                }
                f(out, true)
            }
            Op::Inertialize { out, .. } => {
                f(out, false);
                f(out, true)
            }
            Op::LocalToComponent { src } => f(src, false),
            Op::GameModifier { out, .. } | Op::SolveConstraint { out, .. } => {
                f(out, false);
                f(out, true)
            }
        }
    }

    pub fn mnemonic(&self) -> &'static str {
        match self {
            Op::Rest { .. } => "Rest",
            Op::Sample { .. } => "Sample",
            Op::BlendPair { .. } => "BlendPair",
            Op::BlendSpace { .. } => "BlendSpace",
            Op::OverrideMask { .. } => "OverrideMask",
            Op::AddLocal { .. } => "AddLocal",
            Op::Inertialize { .. } => "Inertialize",
            Op::GameModifier { .. } => "GameModifier",
            Op::SolveConstraint { .. } => "SolveConstraint",
            Op::LocalToComponent { .. } => "LocalToComponent",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    pub guard: Guard,
    pub op: Op,
}

/// Worst-case memory and counts of one evaluating instance.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Capacities {
    /// Scratch pose buffers live at once (after buffer reuse).
    pub scratch_buffers: u32,
    /// Pose buffers kept across ticks: [`PERSISTENT_PER_MACHINE`] per machine.
    pub persistent_buffers: u32,
    pub joints: u32,
    pub padded_joints: u32,
    /// Bytes of all local pose buffers: (scratch + persistent) × padded × 40.
    pub pose_bytes: u64,
    /// Bytes of the component pose: padded × 64.
    pub component_bytes: u64,
    pub players: u32,
    /// Most players participating in one tick.
    pub max_active_players: u32,
    /// Most marker crossings one tick can report (every participating
    /// player at its fastest rate over `max_tick_s`).
    pub max_events_per_tick: u32,
    pub max_tick_s: f32,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DebugEntry {
    /// `layer 'base' / machine 'm' / state 's' / node 'n'`.
    pub node: String,
    pub line: u32,
    pub column: u32,
}

/// Why a compiled or loaded program cannot be executed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("invalid program: {0}")]
pub struct InvalidProgram(pub String);

fn bad<T>(msg: impl Into<String>) -> Result<T, InvalidProgram> {
    Err(InvalidProgram(msg.into()))
}

impl Program {
    pub fn joint_count(&self) -> usize {
        self.parents.len()
    }

    /// Check every index, count and value an evaluator relies on.
    pub fn validate(&self) -> Result<(), InvalidProgram> {
        let joints = self.parents.len();
        if joints == 0 || joints > MAX_JOINTS as usize || self.joint_names.len() != joints {
            return bad(format!("{joints} joints (1..={MAX_JOINTS}, one name each)"));
        }
        for (j, &p) in self.parents.iter().enumerate() {
            if p != NO_PARENT && p as usize >= j {
                return bad(format!("joint {j}'s parent {p} does not come before it"));
            }
        }
        for (i, p) in self.params.iter().enumerate() {
            let ok = match &p.kind {
                ParamKind::Float { min, max, default } => {
                    min.is_finite()
                        && max.is_finite()
                        && min < max
                        && (*min..=*max).contains(default)
                }
                ParamKind::Bool { .. } => true,
                ParamKind::Enum { values, default } => {
                    !values.is_empty() && (*default as usize) < values.len()
                }
            };
            if !ok {
                return bad(format!("parameter {i} '{}' has an invalid domain", p.name));
            }
        }
        for b in &self.bindings {
            if !(b.duration_s.is_finite() && b.duration_s >= 0.0) {
                return bad(format!("clip '{}' has duration {}", b.name, b.duration_s));
            }
            if b.skeleton_identity != self.skeleton_identity {
                return bad(format!("clip '{}' is bound to another skeleton", b.name));
            }
        }
        let words = joints.div_ceil(64);
        for m in &self.masks {
            if m.weights.len() != joints || m.words.len() != words {
                return bad(format!(
                    "mask '{}' is not sized for {joints} joints",
                    m.name
                ));
            }
            for (j, w) in m.weights.iter().enumerate() {
                let bit = m.words[j / 64] >> (j % 64) & 1 == 1;
                if !(0.0..=1.0).contains(w) || bit != (*w > 0.0) {
                    return bad(format!(
                        "mask '{}' joint {j}: weight {w} and request bit disagree",
                        m.name
                    ));
                }
            }
            if !joints.is_multiple_of(64) && m.words[words - 1] >> (joints % 64) != 0 {
                return bad(format!("mask '{}' sets a bit past the last joint", m.name));
            }
        }
        for g in &self.sync_groups {
            if g.markers.is_empty() {
                return bad(format!("sync group '{}' has no markers", g.name));
            }
        }
        for s in &self.blendspaces {
            self.validate_blendspace(s)?;
        }
        let np = self.params.len();
        for (i, p) in self.players.iter().enumerate() {
            if usize::from(p.binding) >= self.bindings.len()
                || !(p.rate.is_finite() && p.rate > 0.0)
            {
                return bad(format!("player {i}: binding or rate out of range"));
            }
            if p.fixed_time.is_some_and(|t| !t.is_finite() || t < 0.0) {
                return bad(format!("player {i}: fixed time out of range"));
            }
            if let Some((g, space)) = p.sync {
                if usize::from(g) >= self.sync_groups.len()
                    || usize::from(space) >= self.blendspaces.len()
                {
                    return bad(format!("player {i}: sync group out of range"));
                }
            }
            match p.owner {
                Owner::Leaf { machine, state } => {
                    let leaf = self
                        .machines
                        .get(usize::from(machine))
                        .and_then(|m| m.states.get(usize::from(state)))
                        .is_some_and(|s| s.is_leaf);
                    if !leaf {
                        return bad(format!("player {i}: owner is not a leaf state"));
                    }
                }
                Owner::Layer(l) if usize::from(l) >= self.layers.len() => {
                    return bad(format!("player {i}: owner layer out of range"))
                }
                Owner::Layer(_) => {}
            }
        }
        for m in &self.machines {
            self.validate_machine(m, np)?;
        }
        if self.debug.len() != self.ops.len() {
            return bad("the debug map does not have one entry per op");
        }
        let nb = self.capacities.scratch_buffers as usize;
        if nb == 0 || nb > u16::MAX as usize || usize::from(self.output) >= nb {
            return bad("the output buffer is out of range");
        }
        let nm = self.machines.len();
        for (i, ins) in self.ops.iter().enumerate() {
            let machine_ok = |m: u16| usize::from(m) < nm;
            let gok = match ins.guard {
                Guard::Always => true,
                Guard::Active(m, s) | Guard::Source(m, s) => self
                    .machines
                    .get(usize::from(m))
                    .and_then(|mm| mm.states.get(usize::from(s)))
                    .is_some_and(|st| st.is_leaf),
                Guard::FadeLive(m) | Guard::FadeCaptured(m) | Guard::Inertial(m) => machine_ok(m),
            };
            if !gok {
                return bad(format!("op {i}: guard out of range"));
            }
            let mut op = ins.op.clone();
            let mut ok = true;
            op.for_each_buffer(|b, _| ok &= usize::from(*b) < nb);
            let weight_ok = |w: &Weight| match *w {
                Weight::Const(c) => (0.0..=1.0).contains(&c),
                Weight::Param(p) => self
                    .params
                    .get(usize::from(p))
                    .is_some_and(|p| !matches!(p.kind, ParamKind::Enum { .. })),
                Weight::Fade(m) => machine_ok(m),
            };
            let mask_ok = |m: &Option<u16>| m.is_none_or(|m| usize::from(m) < self.masks.len());
            ok &= match &ins.op {
                Op::Rest { .. } | Op::LocalToComponent { .. } => true,
                Op::Sample { player, mask, .. } => {
                    usize::from(*player) < self.players.len() && mask_ok(mask)
                }
                Op::BlendPair { a, b, weight, .. } => {
                    let hist = |o: &Operand| match o {
                        Operand::History(m) => machine_ok(*m),
                        Operand::Buf(_) => true,
                    };
                    hist(a) && hist(b) && weight_ok(weight)
                }
                Op::BlendSpace { space, inputs, .. } => self
                    .blendspaces
                    .get(usize::from(*space))
                    .is_some_and(|s| s.points.len() == inputs.len()),
                Op::OverrideMask { mask, weight, .. } | Op::AddLocal { mask, weight, .. } => {
                    mask_ok(mask) && weight_ok(weight)
                }
                Op::Inertialize { machine, .. } => machine_ok(*machine),
                Op::GameModifier {
                    slot, mask, weight, ..
                } => {
                    usize::from(*slot) < self.layers.len()
                        && usize::from(*mask) < self.masks.len()
                        && weight_ok(weight)
                }
                Op::SolveConstraint {
                    chain,
                    target,
                    weight,
                    ..
                } => {
                    let float = |p: &u16| {
                        self.params
                            .get(usize::from(*p))
                            .is_some_and(|p| matches!(p.kind, ParamKind::Float { .. }))
                    };
                    let below = |d: u16, a: u16| {
                        // `d` is a strict descendant of `a` (parents come first).
                        let mut j = self.parents.get(usize::from(d)).copied();
                        let mut steps = 0;
                        while let Some(q) = j {
                            if q == u32::from(a) {
                                return true;
                            }
                            if q == NO_PARENT || steps > self.parents.len() {
                                return false;
                            }
                            j = self.parents.get(q as usize).copied();
                            steps += 1;
                        }
                        false
                    };
                    target.iter().all(float)
                        && below(chain[1], chain[0])
                        && below(chain[2], chain[1])
                        && weight_ok(weight)
                }
            };
            if !ok {
                return bad(format!(
                    "op {i} ({}): operand out of range",
                    ins.op.mnemonic()
                ));
            }
        }
        Ok(())
    }

    fn validate_blendspace(&self, s: &Blendspace) -> Result<(), InvalidProgram> {
        let float = |p: &u16| {
            self.params
                .get(usize::from(*p))
                .is_some_and(|p| matches!(p.kind, ParamKind::Float { .. }))
        };
        let dims = s.params.len();
        if !(1..=2).contains(&dims) || !s.params.iter().all(float) {
            return bad(format!(
                "blendspace '{}': axes must be 1 or 2 float parameters",
                s.name
            ));
        }
        if s.points.len() < 2
            || s.points.len() > 64
            || s.points.iter().flatten().any(|v| !v.is_finite())
        {
            return bad(format!("blendspace '{}': 2..=64 finite points", s.name));
        }
        if s.members.len() != s.points.len()
            || s.members
                .iter()
                .any(|b| usize::from(*b) >= self.bindings.len())
        {
            return bad(format!(
                "blendspace '{}': one clip binding per point",
                s.name
            ));
        }
        if s.sync
            .is_some_and(|g| usize::from(g) >= self.sync_groups.len())
        {
            return bad(format!("blendspace '{}': sync group out of range", s.name));
        }
        if dims == 1 {
            if !s.points.windows(2).all(|w| w[0][0] < w[1][0]) || !s.triangles.is_empty() {
                return bad(format!("blendspace '{}': 1D points must ascend", s.name));
            }
        } else {
            if s.triangles.is_empty() {
                return bad(format!("blendspace '{}': no triangles", s.name));
            }
            for t in &s.triangles {
                if t.iter().any(|&i| usize::from(i) >= s.points.len()) {
                    return bad(format!(
                        "blendspace '{}': triangle index out of range",
                        s.name
                    ));
                }
                let [a, b, c] = t.map(|i| s.points[usize::from(i)]);
                if orient(a, b, c) <= 1e-9 {
                    return bad(format!(
                        "blendspace '{}': degenerate or clockwise cell",
                        s.name
                    ));
                }
            }
        }
        Ok(())
    }

    fn validate_machine(&self, m: &Machine, np: usize) -> Result<(), InvalidProgram> {
        let ns = m.states.len();
        if ns == 0 || ns > u16::MAX as usize {
            return bad(format!("machine '{}' has {ns} states", m.name));
        }
        for (i, s) in m.states.iter().enumerate() {
            if s.parent.is_some_and(|p| usize::from(p) >= i) {
                return bad(format!(
                    "machine '{}' state '{}': parent after child",
                    m.name, s.name
                ));
            }
            let entry = m.states.get(usize::from(s.entry_leaf));
            if !entry.is_some_and(|e| e.is_leaf) || (s.is_leaf && usize::from(s.entry_leaf) != i) {
                return bad(format!(
                    "machine '{}' state '{}': entry is not a leaf",
                    m.name, s.name
                ));
            }
        }
        if !m
            .states
            .get(usize::from(m.initial_leaf))
            .is_some_and(|s| s.is_leaf)
        {
            return bad(format!("machine '{}': initial state is not a leaf", m.name));
        }
        if m.end_op as usize >= self.ops.len()
            || usize::from(m.output) >= self.capacities.scratch_buffers as usize
        {
            return bad(format!(
                "machine '{}': end op or output out of range",
                m.name
            ));
        }
        for t in &m.transitions {
            let ok = usize::from(t.from) < ns
                && usize::from(t.to) < ns
                && m.states
                    .get(usize::from(t.to_leaf))
                    .is_some_and(|s| s.is_leaf)
                && t.duration_s.is_finite()
                && t.duration_s >= 0.0
                && check_predicate(&t.predicate, np);
            if !ok {
                return bad(format!(
                    "machine '{}' transition {}: out of range",
                    m.name, t.id
                ));
            }
        }
        Ok(())
    }
}

/// Twice the signed area of (a, b, c): positive counter-clockwise.
pub fn orient(a: [f32; 2], b: [f32; 2], c: [f32; 2]) -> f64 {
    let (ax, ay, bx, by, cx, cy) = (
        f64::from(a[0]),
        f64::from(a[1]),
        f64::from(b[0]),
        f64::from(b[1]),
        f64::from(c[0]),
        f64::from(c[1]),
    );
    (bx - ax) * (cy - ay) - (by - ay) * (cx - ax)
}

/// A predicate is well formed: stack never under- or overflows, one value
/// left, parameters in range, constants finite.
pub fn check_predicate(code: &[PredOp], params: usize) -> bool {
    let mut n = 0usize;
    for op in code {
        match op {
            PredOp::Param(p) if usize::from(*p) >= params => return false,
            PredOp::Const(c) if !c.is_finite() => return false,
            _ => {}
        }
        let (pops, pushes) = op.arity();
        if n < pops {
            return false;
        }
        n = n - pops + pushes;
        if n > MAX_PREDICATE_STACK {
            return false;
        }
    }
    n == 1
}
