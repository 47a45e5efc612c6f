//! The program file (`.ludprog`, `schemas/program-format.md`): a 24-byte
//! header (magic `LUDPROG\0`, format version u32, body length u32,
//! FNV-1a 64 of the body u64) and a body of little-endian fields in a
//! fixed order. [`load`] checks the header, reads every count against the
//! bytes left before allocating, and runs [`Program::validate`]: any byte
//! string gives a program an evaluator can run or an error, never a panic.

use crate::plan::*;
use ludus_anim_format::hash::fnv1a64;

pub const MAGIC: [u8; 8] = *b"LUDPROG\0";
pub const HEADER_SIZE: usize = 24;

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum LoadError {
    #[error("not a program file (bad magic)")]
    Magic,
    #[error("program format version {0} (this build reads {PROGRAM_VERSION})")]
    Version(u32),
    #[error("the file is truncated or its length field is wrong")]
    Length,
    #[error("checksum mismatch (the file is corrupt)")]
    Checksum,
    #[error("malformed body at byte {0}: {1}")]
    Body(usize, &'static str),
    #[error(transparent)]
    Invalid(#[from] InvalidProgram),
}

struct W(Vec<u8>);

impl W {
    fn u8(&mut self, v: u8) {
        self.0.push(v)
    }
    fn u16(&mut self, v: u16) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    fn u32(&mut self, v: u32) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    fn u64(&mut self, v: u64) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    fn i32(&mut self, v: i32) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    fn f32(&mut self, v: f32) {
        self.0.extend_from_slice(&v.to_le_bytes())
    }
    fn len(&mut self, n: usize) {
        self.u32(u32::try_from(n).unwrap_or(u32::MAX))
    }
    fn str(&mut self, s: &str) {
        self.len(s.len());
        self.0.extend_from_slice(s.as_bytes())
    }
    fn opt16(&mut self, v: Option<u16>) {
        self.u32(v.map_or(u32::MAX, u32::from))
    }
    fn weight(&mut self, w: &Weight) {
        match w {
            Weight::Const(c) => {
                self.u8(0);
                self.f32(*c)
            }
            Weight::Param(p) => {
                self.u8(1);
                self.u16(*p)
            }
            Weight::Fade(m) => {
                self.u8(2);
                self.u16(*m)
            }
        }
    }
    fn operand(&mut self, o: &Operand) {
        match o {
            Operand::Buf(b) => {
                self.u8(0);
                self.u16(*b)
            }
            Operand::History(m) => {
                self.u8(1);
                self.u16(*m)
            }
        }
    }
}

struct R<'b> {
    b: &'b [u8],
    at: usize,
}

type Res<T> = Result<T, LoadError>;

impl R<'_> {
    fn take(&mut self, n: usize) -> Res<&[u8]> {
        let end = self
            .at
            .checked_add(n)
            .filter(|e| *e <= self.b.len())
            .ok_or(LoadError::Body(self.at, "past the end"))?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }
    fn arr<const N: usize>(&mut self) -> Res<[u8; N]> {
        let s = self.take(N)?;
        let mut a = [0u8; N];
        a.copy_from_slice(s);
        Ok(a)
    }
    fn u8(&mut self) -> Res<u8> {
        Ok(self.arr::<1>()?[0])
    }
    fn u16(&mut self) -> Res<u16> {
        Ok(u16::from_le_bytes(self.arr()?))
    }
    fn u32(&mut self) -> Res<u32> {
        Ok(u32::from_le_bytes(self.arr()?))
    }
    fn u64(&mut self) -> Res<u64> {
        Ok(u64::from_le_bytes(self.arr()?))
    }
    fn i32(&mut self) -> Res<i32> {
        Ok(i32::from_le_bytes(self.arr()?))
    }
    fn f32(&mut self) -> Res<f32> {
        Ok(f32::from_le_bytes(self.arr()?))
    }
    /// A count of items of at least `min_bytes` each: never more than the
    /// bytes left can hold.
    fn len(&mut self, min_bytes: usize) -> Res<usize> {
        let n = self.u32()? as usize;
        if n.saturating_mul(min_bytes.max(1)) > self.b.len() - self.at {
            return Err(LoadError::Body(self.at, "a count exceeds the bytes left"));
        }
        Ok(n)
    }
    fn str(&mut self) -> Res<String> {
        let n = self.len(1)?;
        let at = self.at;
        String::from_utf8(self.take(n)?.to_vec())
            .map_err(|_| LoadError::Body(at, "a name is not UTF-8"))
    }
    fn bool(&mut self) -> Res<bool> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(LoadError::Body(self.at - 1, "a flag is not 0 or 1")),
        }
    }
    fn opt16(&mut self) -> Res<Option<u16>> {
        let v = self.u32()?;
        if v == u32::MAX {
            Ok(None)
        } else {
            u16::try_from(v)
                .map(Some)
                .map_err(|_| LoadError::Body(self.at - 4, "an index is out of range"))
        }
    }
    fn vec<T>(&mut self, min_bytes: usize, mut f: impl FnMut(&mut Self) -> Res<T>) -> Res<Vec<T>> {
        let n = self.len(min_bytes)?;
        let mut v = Vec::with_capacity(n);
        for _ in 0..n {
            v.push(f(self)?);
        }
        Ok(v)
    }
    fn weight(&mut self) -> Res<Weight> {
        match self.u8()? {
            0 => Ok(Weight::Const(self.f32()?)),
            1 => Ok(Weight::Param(self.u16()?)),
            2 => Ok(Weight::Fade(self.u16()?)),
            _ => Err(LoadError::Body(self.at - 1, "unknown weight kind")),
        }
    }
    fn operand(&mut self) -> Res<Operand> {
        match self.u8()? {
            0 => Ok(Operand::Buf(self.u16()?)),
            1 => Ok(Operand::History(self.u16()?)),
            _ => Err(LoadError::Body(self.at - 1, "unknown operand kind")),
        }
    }
}

/// The file bytes of `p`.
pub fn encode(p: &Program) -> Vec<u8> {
    let mut w = W(Vec::new());
    w.str(&p.name);
    w.str(&p.source_file);
    w.0.extend_from_slice(&p.skeleton_identity);
    w.len(p.parents.len());
    for (n, &par) in p.joint_names.iter().zip(&p.parents) {
        w.str(n);
        w.u32(par);
    }
    w.len(p.params.len());
    for q in &p.params {
        w.str(&q.name);
        match &q.kind {
            ParamKind::Float { min, max, default } => {
                w.u8(0);
                w.f32(*min);
                w.f32(*max);
                w.f32(*default);
            }
            ParamKind::Bool { default } => {
                w.u8(1);
                w.u8(u8::from(*default));
            }
            ParamKind::Enum { values, default } => {
                w.u8(2);
                w.len(values.len());
                values.iter().for_each(|v| w.str(v));
                w.u32(*default);
            }
        }
    }
    w.len(p.bindings.len());
    for b in &p.bindings {
        for s in [&b.name, &b.asset, &b.clip, &b.package] {
            w.str(s);
        }
        w.0.extend_from_slice(&b.skeleton_identity);
        w.f32(b.duration_s);
        w.u8(u8::from(b.looping));
        w.u8(u8::from(b.additive));
    }
    w.len(p.sync_groups.len());
    for g in &p.sync_groups {
        w.str(&g.name);
        w.len(g.markers.len());
        g.markers.iter().for_each(|m| w.str(m));
    }
    w.len(p.masks.len());
    for m in &p.masks {
        w.str(&m.name);
        w.len(m.weights.len());
        m.weights.iter().for_each(|x| w.f32(*x));
        w.len(m.words.len());
        m.words.iter().for_each(|x| w.u64(*x));
    }
    w.len(p.blendspaces.len());
    for s in &p.blendspaces {
        w.str(&s.name);
        w.len(s.params.len());
        s.params.iter().for_each(|x| w.u16(*x));
        w.len(s.points.len());
        for pt in &s.points {
            w.f32(pt[0]);
            w.f32(pt[1]);
        }
        w.len(s.triangles.len());
        s.triangles.iter().flatten().for_each(|x| w.u16(*x));
        w.opt16(s.sync);
        w.len(s.members.len());
        s.members.iter().for_each(|x| w.u16(*x));
    }
    w.len(p.players.len());
    for s in &p.players {
        w.u16(s.binding);
        w.f32(s.rate);
        w.f32(s.fixed_time.unwrap_or(-1.0));
        match s.sync {
            Some((g, sp)) => {
                w.u8(1);
                w.u16(g);
                w.u16(sp);
            }
            None => w.u8(0),
        }
        match s.owner {
            Owner::Leaf { machine, state } => {
                w.u8(0);
                w.u16(machine);
                w.u16(state);
            }
            Owner::Layer(l) => {
                w.u8(1);
                w.u16(l);
                w.u16(0);
            }
        }
    }
    w.len(p.machines.len());
    for m in &p.machines {
        w.str(&m.name);
        w.len(m.states.len());
        for s in &m.states {
            w.str(&s.name);
            w.opt16(s.parent);
            w.u16(s.entry_leaf);
            w.u8(u8::from(s.is_leaf));
        }
        w.len(m.transitions.len());
        for t in &m.transitions {
            w.u32(t.id);
            w.u16(t.from);
            w.u16(t.to);
            w.u16(t.to_leaf);
            w.i32(t.priority);
            w.u8(match t.mode {
                TransitionMode::Crossfade => 0,
                TransitionMode::Inertialize => 1,
            });
            w.f32(t.duration_s);
            w.str(&t.text);
            w.len(t.predicate.len());
            for op in &t.predicate {
                let (tag, arg) = match *op {
                    PredOp::Param(i) => (0, u32::from(i)),
                    PredOp::Const(c) => (1, c.to_bits()),
                    PredOp::StateTime => (2, 0),
                    PredOp::Completed => (3, 0),
                    PredOp::Lt => (4, 0),
                    PredOp::Le => (5, 0),
                    PredOp::Gt => (6, 0),
                    PredOp::Ge => (7, 0),
                    PredOp::Eq => (8, 0),
                    PredOp::Ne => (9, 0),
                    PredOp::And => (10, 0),
                    PredOp::Or => (11, 0),
                    PredOp::Not => (12, 0),
                };
                w.u8(tag);
                w.u32(arg);
            }
        }
        w.u16(m.initial_leaf);
        w.u32(m.end_op);
        w.u16(m.output);
    }
    w.len(p.layers.len());
    p.layers.iter().for_each(|l| w.str(l));
    w.len(p.ops.len());
    for (ins, d) in p.ops.iter().zip(&p.debug) {
        let (g, a, b) = match ins.guard {
            Guard::Always => (0, 0, 0),
            Guard::Active(m, s) => (1, m, s),
            Guard::Source(m, s) => (2, m, s),
            Guard::FadeLive(m) => (3, m, 0),
            Guard::FadeCaptured(m) => (4, m, 0),
            Guard::Inertial(m) => (5, m, 0),
        };
        w.u8(g);
        w.u16(a);
        w.u16(b);
        match &ins.op {
            Op::Rest { out } => {
                w.u8(0);
                w.u16(*out);
            }
            Op::Sample { out, player, mask } => {
                w.u8(1);
                w.u16(*out);
                w.u16(*player);
                w.opt16(*mask);
            }
            Op::BlendPair { out, a, b, weight } => {
                w.u8(2);
                w.u16(*out);
                w.operand(a);
                w.operand(b);
                w.weight(weight);
            }
            Op::BlendSpace { out, space, inputs } => {
                w.u8(3);
                w.u16(*out);
                w.u16(*space);
                w.len(inputs.len());
                inputs.iter().for_each(|x| w.u16(*x));
            }
            Op::OverrideMask {
                out,
                base,
                src,
                mask,
                weight,
            } => {
                w.u8(4);
                w.u16(*out);
                w.u16(*base);
                w.u16(*src);
                w.opt16(*mask);
                w.weight(weight);
            }
            Op::AddLocal {
                out,
                base,
                src,
                reference,
                mask,
                weight,
            } => {
                w.u8(5);
                w.u16(*out);
                w.u16(*base);
                w.u16(*src);
                w.opt16(*reference);
                w.opt16(*mask);
                w.weight(weight);
            }
            Op::Inertialize { out, machine } => {
                w.u8(6);
                w.u16(*out);
                w.u16(*machine);
            }
            Op::LocalToComponent { src } => {
                w.u8(7);
                w.u16(*src);
            }
            Op::GameModifier {
                out,
                slot,
                mask,
                weight,
            } => {
                w.u8(8);
                w.u16(*out);
                w.u16(*slot);
                w.u16(*mask);
                w.weight(weight);
            }
            Op::SolveConstraint {
                out,
                chain,
                target,
                weight,
            } => {
                w.u8(9);
                w.u16(*out);
                chain.iter().chain(target).for_each(|x| w.u16(*x));
                w.weight(weight);
            }
        }
        w.str(&d.node);
        w.u32(d.line);
        w.u32(d.column);
    }
    w.u16(p.output);
    let c = &p.capacities;
    for v in [
        c.scratch_buffers,
        c.persistent_buffers,
        c.joints,
        c.padded_joints,
        c.players,
        c.max_active_players,
        c.max_events_per_tick,
    ] {
        w.u32(v);
    }
    w.u64(c.pose_bytes);
    w.u64(c.component_bytes);
    w.f32(c.max_tick_s);
    let body = w.0;
    let mut out = Vec::with_capacity(HEADER_SIZE + body.len());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&PROGRAM_VERSION.to_le_bytes());
    out.extend_from_slice(&u32::try_from(body.len()).unwrap_or(u32::MAX).to_le_bytes());
    out.extend_from_slice(&fnv1a64(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Read and validate a program file.
pub fn load(bytes: &[u8]) -> Result<Program, LoadError> {
    if bytes.len() < HEADER_SIZE || bytes[..8] != MAGIC {
        return Err(LoadError::Magic);
    }
    let word = |i: usize| u32::from_le_bytes([bytes[i], bytes[i + 1], bytes[i + 2], bytes[i + 3]]);
    let version = word(8);
    if version != PROGRAM_VERSION {
        return Err(LoadError::Version(version));
    }
    let body = &bytes[HEADER_SIZE..];
    if word(12) as usize != body.len() {
        return Err(LoadError::Length);
    }
    let mut sum = [0u8; 8];
    sum.copy_from_slice(&bytes[16..24]);
    if u64::from_le_bytes(sum) != fnv1a64(body) {
        return Err(LoadError::Checksum);
    }
    let p = read_body(&mut R { b: body, at: 0 })?;
    p.validate()?;
    Ok(p)
}

/// Read a body without the checksum (the fuzz target reaches the reader
/// and validator through this as well as through [`load`]).
pub fn load_body(body: &[u8]) -> Result<Program, LoadError> {
    let p = read_body(&mut R { b: body, at: 0 })?;
    p.validate()?;
    Ok(p)
}

fn read_body(r: &mut R) -> Res<Program> {
    let name = r.str()?;
    let source_file = r.str()?;
    let skeleton_identity = r.arr::<16>()?;
    let n = r.len(8)?;
    let (mut joint_names, mut parents) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        joint_names.push(r.str()?);
        parents.push(r.u32()?);
    }
    let params = r.vec(6, |r| {
        let name = r.str()?;
        let kind = match r.u8()? {
            0 => ParamKind::Float {
                min: r.f32()?,
                max: r.f32()?,
                default: r.f32()?,
            },
            1 => ParamKind::Bool { default: r.bool()? },
            2 => ParamKind::Enum {
                values: r.vec(4, R::str)?,
                default: r.u32()?,
            },
            _ => return Err(LoadError::Body(r.at - 1, "unknown parameter type")),
        };
        Ok(Param { name, kind })
    })?;
    let bindings = r.vec(38, |r| {
        Ok(Binding {
            name: r.str()?,
            asset: r.str()?,
            clip: r.str()?,
            package: r.str()?,
            skeleton_identity: r.arr()?,
            duration_s: r.f32()?,
            looping: r.bool()?,
            additive: r.bool()?,
        })
    })?;
    let sync_groups = r.vec(8, |r| {
        Ok(SyncGroup {
            name: r.str()?,
            markers: r.vec(4, R::str)?,
        })
    })?;
    let masks = r.vec(12, |r| {
        Ok(Mask {
            name: r.str()?,
            weights: r.vec(4, R::f32)?,
            words: r.vec(8, R::u64)?,
        })
    })?;
    let blendspaces = r.vec(24, |r| {
        Ok(Blendspace {
            name: r.str()?,
            params: r.vec(2, R::u16)?,
            points: r.vec(8, |r| Ok([r.f32()?, r.f32()?]))?,
            triangles: r.vec(6, |r| Ok([r.u16()?, r.u16()?, r.u16()?]))?,
            sync: r.opt16()?,
            members: r.vec(2, R::u16)?,
        })
    })?;
    let players = r.vec(16, |r| {
        let binding = r.u16()?;
        let rate = r.f32()?;
        let ft = r.f32()?;
        let sync = match r.u8()? {
            0 => None,
            1 => Some((r.u16()?, r.u16()?)),
            _ => return Err(LoadError::Body(r.at - 1, "bad sync flag")),
        };
        let owner = match r.u8()? {
            0 => Owner::Leaf {
                machine: r.u16()?,
                state: r.u16()?,
            },
            1 => {
                let l = r.u16()?;
                r.u16()?;
                Owner::Layer(l)
            }
            _ => return Err(LoadError::Body(r.at - 1, "bad owner kind")),
        };
        Ok(PlayerSlot {
            binding,
            rate,
            fixed_time: (ft != -1.0).then_some(ft),
            sync,
            owner,
        })
    })?;
    let machines = r.vec(20, |r| {
        let name = r.str()?;
        let states = r.vec(11, |r| {
            Ok(State {
                name: r.str()?,
                parent: r.opt16()?,
                entry_leaf: r.u16()?,
                is_leaf: r.bool()?,
            })
        })?;
        let transitions = r.vec(27, |r| {
            let (id, from, to, to_leaf, priority) =
                (r.u32()?, r.u16()?, r.u16()?, r.u16()?, r.i32()?);
            let mode = match r.u8()? {
                0 => TransitionMode::Crossfade,
                1 => TransitionMode::Inertialize,
                _ => return Err(LoadError::Body(r.at - 1, "unknown transition mode")),
            };
            let duration_s = r.f32()?;
            let text = r.str()?;
            let predicate =
                r.vec(5, |r| {
                    let (tag, arg) = (r.u8()?, r.u32()?);
                    Ok(match tag {
                        0 => PredOp::Param(u16::try_from(arg).map_err(|_| {
                            LoadError::Body(r.at - 4, "parameter index out of range")
                        })?),
                        1 => PredOp::Const(f32::from_bits(arg)),
                        2 => PredOp::StateTime,
                        3 => PredOp::Completed,
                        4 => PredOp::Lt,
                        5 => PredOp::Le,
                        6 => PredOp::Gt,
                        7 => PredOp::Ge,
                        8 => PredOp::Eq,
                        9 => PredOp::Ne,
                        10 => PredOp::And,
                        11 => PredOp::Or,
                        12 => PredOp::Not,
                        _ => return Err(LoadError::Body(r.at - 5, "unknown predicate op")),
                    })
                })?;
            Ok(Transition {
                id,
                from,
                to,
                to_leaf,
                priority,
                mode,
                duration_s,
                predicate,
                text,
            })
        })?;
        Ok(Machine {
            name,
            states,
            transitions,
            initial_leaf: r.u16()?,
            end_op: r.u32()?,
            output: r.u16()?,
        })
    })?;
    let layers = r.vec(4, R::str)?;
    let n = r.len(20)?;
    let (mut ops, mut debug) = (Vec::with_capacity(n), Vec::with_capacity(n));
    for _ in 0..n {
        let (g, a, b) = (r.u8()?, r.u16()?, r.u16()?);
        let guard = match g {
            0 => Guard::Always,
            1 => Guard::Active(a, b),
            2 => Guard::Source(a, b),
            3 => Guard::FadeLive(a),
            4 => Guard::FadeCaptured(a),
            5 => Guard::Inertial(a),
            _ => return Err(LoadError::Body(r.at - 5, "unknown guard")),
        };
        let op = match r.u8()? {
            0 => Op::Rest { out: r.u16()? },
            1 => Op::Sample {
                out: r.u16()?,
                player: r.u16()?,
                mask: r.opt16()?,
            },
            2 => Op::BlendPair {
                out: r.u16()?,
                a: r.operand()?,
                b: r.operand()?,
                weight: r.weight()?,
            },
            3 => Op::BlendSpace {
                out: r.u16()?,
                space: r.u16()?,
                inputs: r.vec(2, R::u16)?,
            },
            4 => Op::OverrideMask {
                out: r.u16()?,
                base: r.u16()?,
                src: r.u16()?,
                mask: r.opt16()?,
                weight: r.weight()?,
            },
            5 => Op::AddLocal {
                out: r.u16()?,
                base: r.u16()?,
                src: r.u16()?,
                reference: r.opt16()?,
                mask: r.opt16()?,
                weight: r.weight()?,
            },
            6 => Op::Inertialize {
                out: r.u16()?,
                machine: r.u16()?,
            },
            7 => Op::LocalToComponent { src: r.u16()? },
            9 => Op::SolveConstraint {
                out: r.u16()?,
                chain: [r.u16()?, r.u16()?, r.u16()?],
                target: [r.u16()?, r.u16()?, r.u16()?],
                weight: r.weight()?,
            },
            8 => Op::GameModifier {
                out: r.u16()?,
                slot: r.u16()?,
                mask: r.u16()?,
                weight: r.weight()?,
            },
            _ => return Err(LoadError::Body(r.at - 1, "unknown op")),
        };
        ops.push(Instr { guard, op });
        debug.push(DebugEntry {
            node: r.str()?,
            line: r.u32()?,
            column: r.u32()?,
        });
    }
    let output = r.u16()?;
    let mut c = [0u32; 7];
    for v in &mut c {
        *v = r.u32()?;
    }
    let capacities = Capacities {
        scratch_buffers: c[0],
        persistent_buffers: c[1],
        joints: c[2],
        padded_joints: c[3],
        players: c[4],
        max_active_players: c[5],
        max_events_per_tick: c[6],
        pose_bytes: r.u64()?,
        component_bytes: r.u64()?,
        max_tick_s: r.f32()?,
    };
    if r.at != r.b.len() {
        return Err(LoadError::Body(r.at, "bytes after the last field"));
    }
    Ok(Program {
        name,
        source_file,
        skeleton_identity,
        joint_names,
        parents,
        params,
        bindings,
        sync_groups,
        masks,
        blendspaces,
        players,
        machines,
        layers,
        ops,
        output,
        capacities,
        debug,
    })
}
