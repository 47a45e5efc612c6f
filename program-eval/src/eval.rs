//! [`Evaluator`]: one evaluating instance of a compiled program over
//! loaded packages. [`Evaluator::new`] binds and allocates everything;
//! [`Evaluator::tick`] (control: inputs snapshot, transition selection,
//! player advance with sync and events) and [`Evaluator::evaluate`] (the
//! plan's ops in order) never allocate.

use crate::kernels::*;
use ludus_anim_format::events::MarkerKind;
use ludus_anim_format::math::{Affine3A, Quat, Transform, Vec3};
use ludus_anim_program::blendspace::weights;
use ludus_anim_program::plan::*;
use ludus_anim_runtime::events::{Crossing, PlaybackLatch};
use ludus_anim_runtime::package::{Clip, Package};
use ludus_anim_runtime::skeleton::Skeleton;
use ludus_anim_runtime::{Player, Request};

/// Why a program cannot be bound to the given packages.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum BindError {
    #[error("clip '{clip}': package '{package}' was not given")]
    MissingPackage { clip: String, package: String },
    #[error("clip '{clip}': package '{package}' has no clip '{name}'")]
    MissingClip {
        clip: String,
        package: String,
        name: String,
    },
    #[error("clip '{clip}': package '{package}' has skeleton {found}, the program was compiled against {expected}")]
    Skeleton {
        clip: String,
        package: String,
        expected: String,
        found: String,
    },
    #[error("clip '{clip}': the package changed since the program was compiled ({what})")]
    Changed { clip: String, what: &'static str },
    #[error("clip '{clip}': no sync marker '{marker}'")]
    Marker { clip: String, marker: String },
    #[error("the program's skeleton ({0}) differs from the packages'")]
    Hierarchy(String),
    #[error("player {0}: {1}")]
    Player(usize, String),
}

/// Why a tick or an evaluation failed; the instance keeps its prior state.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum EvalError {
    #[error("{needed} marker crossings in one tick, over the program's capacity {capacity}")]
    Events { needed: usize, capacity: u32 },
    #[error("{found} players participate in one tick, over the program's capacity {capacity}")]
    Players { found: u32, capacity: u32 },
    #[error("expected {expected} inputs, got {found}")]
    Inputs { expected: usize, found: usize },
    #[error("dt {0} is not in [0, max_tick_s]")]
    Dt(f32),
    #[error("decode of player {player}: {message}")]
    Decode { player: usize, message: String },
}

#[derive(Clone, Copy, Debug, PartialEq)]
enum Source {
    Live(u16),
    Captured,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Fade {
    source: Source,
    elapsed: f32,
    duration: f32,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Inertial {
    /// Seconds since the source's last output (the offset's capture
    /// time): the time of the switch tick's evaluation, then every tick.
    elapsed: f32,
    duration: f32,
    pending: bool,
}

#[derive(Clone, Copy, Debug)]
struct MachineState {
    leaf: u16,
    state_time: f32,
    completed: bool,
    fade: Option<Fade>,
    inertial: Option<Inertial>,
    /// The history holds an evaluated pose.
    history_valid: bool,
    /// The previous history (one output earlier) holds one too.
    previous_valid: bool,
    /// Seconds between the previous history and the history.
    sample_dt: f32,
    /// Seconds of ticks since the history was written.
    since_history: f32,
}

#[derive(Clone, Copy, Debug)]
struct Slot {
    abs: f64,
    latch: PlaybackLatch,
}

/// Consecutive players of one blendspace use sharing a sync group.
#[derive(Clone, Copy, Debug)]
struct SyncSet {
    first: usize,
    len: usize,
    space: u16,
    leader: usize,
}

/// What one tick did (the control result a caller inspects).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TickReport {
    /// The transition taken in machine 0 this tick, if any (its ID).
    pub transition: Option<u32>,
    pub players: u32,
    pub events: u32,
}

/// Maxima seen since the instance was made (the verification's figures).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Stats {
    pub ticks: u64,
    pub max_players: u32,
    pub max_events: u32,
    pub transitions: u64,
    /// Joints whose N-way blend had no weight or cancelled out (rest used).
    pub blend_fallbacks: u64,
    /// Joints a game hook wrote non-finite or degenerate (ignored).
    pub hook_rejects: u64,
}

/// Passes of the two-bone solve per `SolveConstraint`.
const IK_PASSES: usize = 3;

pub struct Evaluator<'c, 'a> {
    program: &'c Program,
    skeleton: &'c Skeleton,
    players: Vec<Player<'c, 'a>>,
    clips: Vec<&'c Clip<'a>>,
    slots: Vec<Slot>,
    sync_sets: Vec<SyncSet>,
    /// Per player, its sync markers' times in group order (flat).
    marker_times: Vec<f32>,
    marker_first: Vec<usize>,
    participating: Vec<bool>,
    params: Vec<f32>,
    machines: Vec<MachineState>,
    buffers: Vec<Transform>,
    history: Vec<Transform>,
    /// Per machine, the output before the history (the source velocity
    /// an inertialization starts with).
    previous: Vec<Transform>,
    offsets: Vec<Transform>,
    rates: Vec<InertialRates>,
    /// The pose a game hook edits (one pose, reused).
    hook_pose: Vec<Transform>,
    component: Vec<Affine3A>,
    space_weights: Vec<f32>,
    crossings: Vec<Crossing>,
    joints: usize,
    stats: Stats,
}

impl<'c, 'a> Evaluator<'c, 'a> {
    /// Bind `program` to `packages` (each with the package file name the
    /// program recorded: `packages/<asset>-<hash>.ludanim`) and allocate
    /// every buffer. Checks skeleton identities, clip names and timing,
    /// and sync markers.
    pub fn new(
        program: &'c Program,
        packages: &'c [(String, Package<'a>)],
    ) -> Result<Self, BindError> {
        let mut clips = Vec::with_capacity(program.bindings.len());
        let mut defaults = Vec::with_capacity(program.bindings.len());
        let mut skeleton: Option<&'c Skeleton> = None;
        let hex = |b: &[u8; 16]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
        for b in &program.bindings {
            let Some((_, pkg)) = packages.iter().find(|(n, _)| *n == b.package) else {
                return Err(BindError::MissingPackage {
                    clip: b.name.clone(),
                    package: b.package.clone(),
                });
            };
            let id = pkg.skeleton().identity().0;
            if id != b.skeleton_identity {
                return Err(BindError::Skeleton {
                    clip: b.name.clone(),
                    package: b.package.clone(),
                    expected: hex(&b.skeleton_identity),
                    found: hex(&id),
                });
            }
            let Some(clip) = pkg.clip(&b.clip) else {
                return Err(BindError::MissingClip {
                    clip: b.name.clone(),
                    package: b.package.clone(),
                    name: b.clip.clone(),
                });
            };
            if clip.duration_s() != b.duration_s
                || clip.loop_mode().is_looping() != b.looping
                || clip.is_additive() != b.additive
            {
                return Err(BindError::Changed {
                    clip: b.name.clone(),
                    what: "duration, loop mode or additive flag",
                });
            }
            skeleton.get_or_insert(pkg.skeleton());
            clips.push(clip);
            defaults.push(pkg.sample_defaults(clip));
        }
        let Some(skeleton) = skeleton else {
            return Err(BindError::Hierarchy("no clip bound".into()));
        };
        if skeleton.parents() != program.parents.as_slice() {
            return Err(BindError::Hierarchy("joint count or parents".into()));
        }
        let joints = skeleton.joint_count();
        let mut players = Vec::with_capacity(program.players.len());
        for (i, s) in program.players.iter().enumerate() {
            let b = usize::from(s.binding);
            players.push(
                Player::new(clips[b], defaults[b])
                    .map_err(|e| BindError::Player(i, e.to_string()))?,
            );
        }
        // Sync sets and marker tables.
        let mut sync_sets = Vec::new();
        let (mut marker_times, mut marker_first) = (Vec::new(), Vec::new());
        let mut i = 0;
        while i < program.players.len() {
            let s = &program.players[i];
            marker_first.push(marker_times.len());
            let Some((g, space)) = s.sync else {
                i += 1;
                continue;
            };
            let mut len = 1;
            while program
                .players
                .get(i + len)
                .is_some_and(|o| o.sync == s.sync && o.owner == s.owner)
            {
                len += 1;
            }
            if len != program.blendspaces[usize::from(space)].points.len() {
                return Err(BindError::Player(
                    i,
                    "a synced blendspace's players are not contiguous".into(),
                ));
            }
            for k in i..i + len {
                if k > i {
                    marker_first.push(marker_times.len());
                }
                let clip = clips[usize::from(program.players[k].binding)];
                for m in &program.sync_groups[usize::from(g)].markers {
                    let t = clip
                        .markers()
                        .iter()
                        .find(|x| x.name == m && x.kind == MarkerKind::SyncMarker);
                    match t {
                        Some(x) => marker_times.push(x.event.time_s),
                        None => {
                            return Err(BindError::Marker {
                                clip: program.bindings[usize::from(program.players[k].binding)]
                                    .name
                                    .clone(),
                                marker: m.clone(),
                            })
                        }
                    }
                }
            }
            sync_sets.push(SyncSet {
                first: i,
                len,
                space,
                leader: i,
            });
            i += len;
        }
        marker_first.push(marker_times.len());
        let nb = program.capacities.scratch_buffers as usize;
        let nm = program.machines.len();
        let rest = skeleton.rest_pose();
        let mut buffers = Vec::with_capacity(nb * joints);
        for _ in 0..nb {
            buffers.extend_from_slice(rest);
        }
        let mut history = Vec::with_capacity(nm * joints);
        for _ in 0..nm {
            history.extend_from_slice(rest);
        }
        let max_points = program
            .blendspaces
            .iter()
            .map(|s| s.points.len())
            .max()
            .unwrap_or(0);
        let mut ev = Evaluator {
            program,
            skeleton,
            players,
            clips,
            slots: vec![
                Slot {
                    abs: 0.0,
                    latch: PlaybackLatch::default()
                };
                program.players.len()
            ],
            sync_sets,
            marker_times,
            marker_first,
            participating: vec![false; program.players.len()],
            params: program
                .params
                .iter()
                .map(|p| p.kind.default_value())
                .collect(),
            machines: program
                .machines
                .iter()
                .map(|m| MachineState {
                    leaf: m.initial_leaf,
                    state_time: 0.0,
                    completed: false,
                    fade: None,
                    inertial: None,
                    history_valid: false,
                    previous_valid: false,
                    sample_dt: 0.0,
                    since_history: 0.0,
                })
                .collect(),
            buffers,
            previous: history.clone(),
            history,
            offsets: vec![Transform::IDENTITY; nm * joints],
            rates: vec![InertialRates::default(); nm * joints],
            hook_pose: vec![Transform::IDENTITY; joints],
            component: vec![Affine3A::IDENTITY; joints],
            space_weights: vec![0.0; max_points],
            crossings: vec![Crossing::default(); program.capacities.max_events_per_tick as usize],
            joints,
            stats: Stats::default(),
        };
        for (i, s) in program.players.iter().enumerate() {
            if let Some(t) = s.fixed_time {
                ev.players[i].seek(t);
            }
        }
        for set in 0..ev.sync_sets.len() {
            ev.pick_leader(set, true);
        }
        Ok(ev)
    }

    pub fn stats(&self) -> Stats {
        self.stats
    }
    /// The final local pose (after [`Evaluator::evaluate`]).
    pub fn local_pose(&self) -> &[Transform] {
        let o = usize::from(self.program.output) * self.joints;
        &self.buffers[o..o + self.joints]
    }
    /// The component pose (after [`Evaluator::evaluate`]).
    pub fn component_pose(&self) -> &[Affine3A] {
        &self.component
    }
    /// Machine `m`'s active leaf state index.
    pub fn active_leaf(&self, m: usize) -> Option<u16> {
        self.machines.get(m).map(|s| s.leaf)
    }
    /// Machine `m`'s cross-fade progress (None when not fading).
    pub fn fade(&self, m: usize) -> Option<f32> {
        self.machines
            .get(m)
            .and_then(|s| s.fade)
            .map(|f| f.elapsed / f.duration)
    }

    fn on_path(&self, m: usize, leaf: u16, state: u16) -> bool {
        let states = &self.program.machines[m].states;
        let mut s = Some(leaf);
        for _ in 0..states.len() {
            match s {
                Some(i) if i == state => return true,
                Some(i) => s = states[usize::from(i)].parent,
                None => return false,
            }
        }
        false
    }

    fn pick_leader(&mut self, set: usize, reset: bool) {
        let ss = self.sync_sets[set];
        let space = &self.program.blendspaces[usize::from(ss.space)];
        let x = space
            .params
            .first()
            .map_or(0.0, |p| self.params[usize::from(*p)]);
        let y = space
            .params
            .get(1)
            .map_or(0.0, |p| self.params[usize::from(*p)]);
        let w = &mut self.space_weights[..ss.len];
        weights(space, x, y, w);
        let best = (0..ss.len).fold(0, |b, i| if w[i] > w[b] { i } else { b });
        let cur = ss.leader - ss.first;
        // Hysteresis: a new leader must lead by a margin.
        if reset || w[best] > w[cur.min(ss.len - 1)] + 0.05 {
            self.sync_sets[set].leader = ss.first + best;
        }
    }

    /// Control for one tick of `dt` seconds with `inputs` (one value per
    /// parameter: float, bool 0/1, enum index; clamped into range).
    pub fn tick(&mut self, inputs: &[f32], dt: f32) -> Result<TickReport, EvalError> {
        let p = self.program;
        if inputs.len() != p.params.len() {
            return Err(EvalError::Inputs {
                expected: p.params.len(),
                found: inputs.len(),
            });
        }
        if !(dt.is_finite() && dt >= 0.0 && dt <= p.capacities.max_tick_s * 1.0001) {
            return Err(EvalError::Dt(dt));
        }
        for (v, (i, q)) in self.params.iter_mut().zip(inputs.iter().zip(&p.params)) {
            *v = q.kind.clamp(*i);
        }
        let mut report = TickReport::default();
        for m in &mut self.machines {
            m.since_history += dt;
        }
        // Transition selection on the prior tick's state, then entry.
        for mi in 0..p.machines.len() {
            let m = &p.machines[mi];
            let st = self.machines[mi];
            let chosen = m.transitions.iter().find(|t| {
                t.to_leaf != st.leaf
                    && self.on_path(mi, st.leaf, t.from)
                    && eval_predicate(&t.predicate, &self.params, st.state_time, st.completed)
            });
            if let Some(t) = chosen {
                let busy = st.fade.is_some() || st.inertial.is_some();
                let s = &mut self.machines[mi];
                s.fade = None;
                s.inertial = None;
                match t.mode {
                    TransitionMode::Crossfade if t.duration_s > 0.0 => {
                        let source = if busy {
                            Source::Captured
                        } else {
                            Source::Live(st.leaf)
                        };
                        s.fade = Some(Fade {
                            source,
                            elapsed: 0.0,
                            duration: t.duration_s,
                        });
                    }
                    TransitionMode::Crossfade => {}
                    TransitionMode::Inertialize => {
                        if st.history_valid {
                            s.inertial = Some(Inertial {
                                elapsed: st.since_history,
                                duration: t.duration_s,
                                pending: true,
                            });
                        }
                    }
                }
                s.leaf = t.to_leaf;
                s.state_time = 0.0;
                s.completed = false;
                if mi == 0 {
                    report.transition = Some(t.id);
                }
                self.stats.transitions += 1;
                let leaf = t.to_leaf;
                for (i, slot) in p.players.iter().enumerate() {
                    if slot.owner
                        == (Owner::Leaf {
                            machine: mi as u16,
                            state: leaf,
                        })
                    {
                        self.slots[i] = Slot {
                            abs: 0.0,
                            latch: PlaybackLatch::default(),
                        };
                    }
                }
                for set in 0..self.sync_sets.len() {
                    let ss = self.sync_sets[set];
                    if p.players[ss.first].owner
                        == (Owner::Leaf {
                            machine: mi as u16,
                            state: leaf,
                        })
                    {
                        self.pick_leader(set, true);
                    }
                }
            }
        }
        // Who participates this tick.
        let mut count = 0u32;
        for (i, slot) in p.players.iter().enumerate() {
            let on = match slot.owner {
                Owner::Layer(_) => true,
                Owner::Leaf { machine, state } => {
                    let s = &self.machines[usize::from(machine)];
                    s.leaf == state || s.fade.is_some_and(|f| f.source == Source::Live(state))
                }
            };
            self.participating[i] = on;
            count += u32::from(on);
        }
        if count > p.capacities.max_active_players {
            return Err(EvalError::Players {
                found: count,
                capacity: p.capacities.max_active_players,
            });
        }
        // Advance: free players by their rate; synced sets by the leader's
        // marker phase.
        let mut events = 0usize;
        for i in 0..p.players.len() {
            if !self.participating[i]
                || p.players[i].fixed_time.is_some()
                || p.players[i].sync.is_some()
            {
                continue;
            }
            let new = self.slots[i].abs + f64::from(dt * p.players[i].rate);
            events += self.cross(i, new, events)?;
        }
        for set in 0..self.sync_sets.len() {
            let ss = self.sync_sets[set];
            if !self.participating[ss.first] {
                continue;
            }
            self.pick_leader(set, false);
            let leader = self.sync_sets[set].leader;
            let new = self.slots[leader].abs + f64::from(dt * p.players[leader].rate);
            events += self.cross(leader, new, events)?;
            let lt = self.local(leader);
            let (k, f, _) = self.phase(leader, lt);
            for i in ss.first..ss.first + ss.len {
                if i == leader {
                    continue;
                }
                let d = f64::from(self.duration(i));
                let target = self.at_phase(i, k, f);
                let old = self.local(i);
                let mut step = f64::from(target - old);
                if d > 0.0 {
                    step = step.rem_euclid(d);
                }
                let new = self.slots[i].abs + step;
                events += self.cross(i, new, events)?;
            }
        }
        for i in 0..p.players.len() {
            if self.participating[i] && p.players[i].fixed_time.is_none() {
                let t = self.local(i);
                self.players[i].seek(t);
            }
        }
        for mi in 0..p.machines.len() {
            let leaf = self.machines[mi].leaf;
            let mut all = true;
            let mut any = false;
            for (i, slot) in p.players.iter().enumerate() {
                if slot.owner
                    == (Owner::Leaf {
                        machine: mi as u16,
                        state: leaf,
                    })
                {
                    any = true;
                    all &= !self.clips[usize::from(slot.binding)]
                        .loop_mode()
                        .is_looping()
                        && self.slots[i].abs >= f64::from(self.duration(i));
                }
            }
            let s = &mut self.machines[mi];
            s.completed = any && all;
            s.state_time += dt;
            if let Some(f) = &mut s.fade {
                f.elapsed += dt;
                if f.elapsed >= f.duration {
                    s.fade = None;
                }
            }
            if let Some(x) = &mut s.inertial {
                if !x.pending {
                    x.elapsed += dt;
                    if x.elapsed >= x.duration {
                        s.inertial = None;
                    }
                }
            }
        }
        report.players = count;
        report.events = events as u32;
        self.stats.ticks += 1;
        self.stats.max_players = self.stats.max_players.max(count);
        self.stats.max_events = self.stats.max_events.max(report.events);
        Ok(report)
    }

    fn duration(&self, i: usize) -> f32 {
        self.clips[usize::from(self.program.players[i].binding)].duration_s()
    }

    /// Player `i`'s clip-local time.
    fn local(&self, i: usize) -> f32 {
        let d = f64::from(self.duration(i));
        let abs = self.slots[i].abs;
        if d <= 0.0 {
            0.0
        } else if self.clips[usize::from(self.program.players[i].binding)]
            .loop_mode()
            .is_looping()
        {
            abs.rem_euclid(d) as f32
        } else {
            abs.clamp(0.0, d) as f32
        }
    }

    /// Player `i`'s marker interval at local time `t`: (index k, fraction
    /// f, interval length).
    fn phase(&self, i: usize, t: f32) -> (usize, f32, f32) {
        let m = &self.marker_times[self.marker_first[i]..self.marker_first[i + 1]];
        let d = self.duration(i);
        if m.is_empty() || d <= 0.0 {
            return (0, 0.0, d);
        }
        let since = |x: f32| (t - x).rem_euclid(d);
        let k = (0..m.len()).fold(0, |b, k| if since(m[k]) < since(m[b]) { k } else { b });
        let len = if m.len() == 1 {
            d
        } else {
            (m[(k + 1) % m.len()] - m[k]).rem_euclid(d)
        };
        let len = if len > 0.0 { len } else { d };
        ((k), (since(m[k]) / len).clamp(0.0, 1.0), len)
    }

    fn at_phase(&self, i: usize, k: usize, f: f32) -> f32 {
        let m = &self.marker_times[self.marker_first[i]..self.marker_first[i + 1]];
        let d = self.duration(i);
        if m.is_empty() || d <= 0.0 {
            return 0.0;
        }
        let k = k % m.len();
        let len = if m.len() == 1 {
            d
        } else {
            (m[(k + 1) % m.len()] - m[k]).rem_euclid(d)
        };
        let len = if len > 0.0 { len } else { d };
        (m[k] + f * len).rem_euclid(d)
    }

    /// Move player `i` to `new_abs`, collecting its crossings after the
    /// `used` already collected this tick.
    fn cross(&mut self, i: usize, new_abs: f64, used: usize) -> Result<usize, EvalError> {
        let cap = self.crossings.len();
        let clip = self.clips[usize::from(self.program.players[i].binding)];
        let mut latch = self.slots[i].latch;
        let out = &mut self.crossings[used.min(cap)..];
        match clip.crossed_events(self.slots[i].abs, new_abs, &mut latch, out) {
            Ok(n) => {
                self.slots[i] = Slot {
                    abs: new_abs,
                    latch,
                };
                Ok(n)
            }
            Err(o) => Err(EvalError::Events {
                needed: used + o.needed,
                capacity: self.program.capacities.max_events_per_tick,
            }),
        }
    }

    fn weight(&self, w: &Weight) -> f32 {
        match *w {
            Weight::Const(c) => c,
            Weight::Param(p) => self.params[usize::from(p)].clamp(0.0, 1.0),
            Weight::Fade(m) => self.machines[usize::from(m)]
                .fade
                .map_or(1.0, |f| (f.elapsed / f.duration).clamp(0.0, 1.0)),
        }
    }

    fn guard(&self, g: &Guard) -> bool {
        let ms = |m: &u16| &self.machines[usize::from(*m)];
        match g {
            Guard::Always => true,
            Guard::Active(m, s) => ms(m).leaf == *s,
            Guard::Source(m, s) => ms(m).fade.is_some_and(|f| f.source == Source::Live(*s)),
            Guard::FadeLive(m) => ms(m)
                .fade
                .is_some_and(|f| matches!(f.source, Source::Live(_))),
            Guard::FadeCaptured(m) => ms(m).fade.is_some_and(|f| f.source == Source::Captured),
            Guard::Inertial(m) => ms(m).inertial.is_some(),
        }
    }

    fn joint(&self, o: &Operand, j: usize) -> Transform {
        match *o {
            Operand::Buf(b) => self.buffers[usize::from(b) * self.joints + j],
            Operand::History(m) => self.history[usize::from(m) * self.joints + j],
        }
    }

    /// Execute the plan for the current control state, with no game hook
    /// (every `GameModifier` leaves its pose unchanged).
    pub fn evaluate(&mut self) -> Result<(), EvalError> {
        self.evaluate_with(&mut |_, _| {})
    }

    /// Execute the plan, calling `hook(slot, pose)` at every
    /// `GameModifier`: `slot` is the modifier layer's index in
    /// `Program::layers`, `pose` a copy of the local pose so far (joints in
    /// skeleton order) the hook may edit; only the layer mask's joints
    /// are taken back. Nothing is allocated.
    pub fn evaluate_with(
        &mut self,
        hook: &mut dyn FnMut(u16, &mut [Transform]),
    ) -> Result<(), EvalError> {
        let p = self.program;
        let n = self.joints;
        for (i, ins) in p.ops.iter().enumerate() {
            if self.guard(&ins.guard) {
                self.exec(&ins.op, n, hook)?;
            }
            for (mi, m) in p.machines.iter().enumerate() {
                if m.end_op as usize == i {
                    let o = usize::from(m.output) * n;
                    let h = mi * n..(mi + 1) * n;
                    let st = &mut self.machines[mi];
                    if st.history_valid {
                        self.previous[h.clone()].copy_from_slice(&self.history[h.clone()]);
                        st.previous_valid = true;
                        st.sample_dt = st.since_history;
                    }
                    self.history[h].copy_from_slice(&self.buffers[o..o + n]);
                    st.history_valid = true;
                    st.since_history = 0.0;
                }
            }
        }
        Ok(())
    }

    fn exec(
        &mut self,
        op: &Op,
        n: usize,
        hook: &mut dyn FnMut(u16, &mut [Transform]),
    ) -> Result<(), EvalError> {
        let p = self.program;
        let rest = self.skeleton.rest_pose();
        let at = |b: u16| usize::from(b) * n;
        match op {
            Op::Rest { out } => self.buffers[at(*out)..at(*out) + n].copy_from_slice(rest),
            Op::Sample { out, player, mask } => {
                let req = match mask {
                    Some(m) => Request::Mask(&p.masks[usize::from(*m)].words),
                    None => Request::Pose,
                };
                let o = at(*out);
                self.players[usize::from(*player)]
                    .decode(req, &mut self.buffers[o..o + n])
                    .map_err(|e| EvalError::Decode {
                        player: usize::from(*player),
                        message: e.to_string(),
                    })?;
            }
            Op::BlendPair { out, a, b, weight } => {
                let w = self.weight(weight);
                for j in 0..n {
                    let v = blend_pair(&self.joint(a, j), &self.joint(b, j), w);
                    self.buffers[at(*out) + j] = v;
                }
            }
            Op::BlendSpace { out, space, inputs } => {
                let s = &p.blendspaces[usize::from(*space)];
                let x = s
                    .params
                    .first()
                    .map_or(0.0, |q| self.params[usize::from(*q)]);
                let y = s
                    .params
                    .get(1)
                    .map_or(0.0, |q| self.params[usize::from(*q)]);
                let k = inputs.len();
                weights(s, x, y, &mut self.space_weights[..k]);
                for j in 0..n {
                    let (buffers, sw) = (&self.buffers, &self.space_weights);
                    let it = inputs
                        .iter()
                        .zip(sw.iter())
                        .map(|(b, w)| (buffers[usize::from(*b) * n + j], *w));
                    let (v, ok) = blend_n(it, &rest[j]);
                    self.stats.blend_fallbacks += u64::from(!ok);
                    self.buffers[at(*out) + j] = v;
                }
            }
            Op::OverrideMask {
                out,
                base,
                src,
                mask,
                weight,
            } => {
                let w = self.weight(weight);
                for j in 0..n {
                    let mw = mask.map_or(1.0, |m| p.masks[usize::from(m)].weights[j]);
                    let v = override_joint(
                        &self.buffers[at(*base) + j],
                        &self.buffers[at(*src) + j],
                        w * mw,
                    );
                    self.buffers[at(*out) + j] = v;
                }
            }
            Op::AddLocal {
                out,
                base,
                src,
                reference,
                mask,
                weight,
            } => {
                let w = self.weight(weight);
                for j in 0..n {
                    let mw = mask.map_or(1.0, |m| p.masks[usize::from(m)].weights[j]);
                    let r = reference.map(|r| self.buffers[at(r) + j]);
                    let v = add_local_joint(
                        &self.buffers[at(*base) + j],
                        &self.buffers[at(*src) + j],
                        r.as_ref(),
                        w * mw,
                    );
                    self.buffers[at(*out) + j] = v;
                }
            }
            Op::Inertialize { out, machine } => {
                let m = usize::from(*machine);
                let Some(mut x) = self.machines[m].inertial else {
                    return Ok(());
                };
                if x.pending {
                    // The source's velocity from its two last outputs,
                    // when they are one ordinary tick apart; else the
                    // offset starts at rest.
                    let st = self.machines[m];
                    let dt = if st.previous_valid
                        && st.sample_dt > 0.0
                        && st.sample_dt <= p.capacities.max_tick_s * 1.0001
                    {
                        st.sample_dt
                    } else {
                        0.0
                    };
                    for j in 0..n {
                        let cur = self.buffers[at(*out) + j];
                        let off = inertial_offset(&self.history[m * n + j], &cur);
                        let older = inertial_offset(&self.previous[m * n + j], &cur);
                        self.offsets[m * n + j] = off;
                        self.rates[m * n + j] = inertial_rates(&off, &older, dt);
                    }
                    x.pending = false;
                    self.machines[m].inertial = Some(x);
                }
                for j in 0..n {
                    let v = apply_inertial(
                        &self.buffers[at(*out) + j],
                        &self.offsets[m * n + j],
                        &self.rates[m * n + j],
                        x.elapsed,
                        x.duration,
                    );
                    self.buffers[at(*out) + j] = v;
                }
            }
            Op::GameModifier {
                out,
                slot,
                mask,
                weight,
            } => {
                let o = at(*out);
                self.hook_pose.copy_from_slice(&self.buffers[o..o + n]);
                hook(*slot, &mut self.hook_pose);
                let w = self.weight(weight);
                let mw = &p.masks[usize::from(*mask)].weights;
                for (j, m) in mw.iter().enumerate().take(n) {
                    let a = w * m;
                    let v = self.hook_pose[j];
                    if a <= 0.0 || v == self.buffers[o + j] {
                        continue;
                    }
                    let len = v.rotation.length();
                    let sane = v.translation.is_finite()
                        && v.scale.is_finite()
                        && v.scale.min_element() > 0.0
                        && len.is_finite()
                        && len > 1e-6;
                    if !sane {
                        self.stats.hook_rejects += 1;
                        continue;
                    }
                    let v = Transform {
                        rotation: v.rotation / len,
                        ..v
                    };
                    self.buffers[o + j] = override_joint(&self.buffers[o + j], &v, a);
                }
            }
            Op::SolveConstraint {
                out,
                chain,
                target,
                weight,
            } => {
                let w = self.weight(weight);
                if w.is_nan() || w <= 0.0 {
                    return Ok(());
                }
                let o = at(*out);
                let [ja, jb, jc] = chain.map(usize::from);
                let rot = |c: &[Affine3A], j: usize| c[j].to_scale_rotation_translation().1;
                let parent_rot = |c: &[Affine3A], j: usize| match p.parents[j] {
                    NO_PARENT => Quat::IDENTITY,
                    q => rot(c, q as usize),
                };
                let t = Vec3::new(
                    self.params[usize::from(target[0])],
                    self.params[usize::from(target[1])],
                    self.params[usize::from(target[2])],
                );
                let (orig_a, orig_b) = (self.buffers[o + ja], self.buffers[o + jb]);
                // The analytic solve is exact for rigid chains; a scaled
                // ancestor (an additive breathing the chest) makes the
                // component frames affine, so the solve is repeated on the
                // result a fixed number of times (deterministic, no
                // allocation).
                for _ in 0..IK_PASSES {
                    self.skeleton
                        .local_to_component(&self.buffers[o..o + n], &mut self.component);
                    let c = &self.component;
                    let pos = |j: usize| Vec3::from(c[j].translation);
                    let (ra, rb) = two_bone_ik(pos(ja), pos(jb), pos(jc), t);
                    let (a_gr, b_gr) = (rot(c, ja), rot(c, jb));
                    let (pa, pb) = (parent_rot(c, ja), parent_rot(c, jb));
                    self.buffers[o + ja].rotation = (pa.inverse() * ra * a_gr).normalize();
                    self.buffers[o + jb].rotation = (pb.inverse() * rb * b_gr).normalize();
                }
                for (j, cur) in [(ja, orig_a), (jb, orig_b)] {
                    let want = self.buffers[o + j];
                    self.buffers[o + j] = blend_pair(&cur, &want, w);
                }
            }
            Op::LocalToComponent { src } => {
                let o = at(*src);
                self.skeleton
                    .local_to_component(&self.buffers[o..o + n], &mut self.component);
            }
        }
        Ok(())
    }
}
