//! The plan as a short readable list: one line per op with its guard,
//! operands and the authored node it came from, then the capacities.

use crate::plan::*;
use std::fmt::Write;

fn weight(p: &Program, w: &Weight) -> String {
    match w {
        Weight::Const(c) => format!("{c}"),
        Weight::Param(i) => format!("${}", p.params[usize::from(*i)].name),
        Weight::Fade(m) => format!("fade({})", p.machines[usize::from(*m)].name),
    }
}

fn operand(p: &Program, o: &Operand) -> String {
    match o {
        Operand::Buf(b) => format!("b{b}"),
        Operand::History(m) => format!("history({})", p.machines[usize::from(*m)].name),
    }
}

fn mask(p: &Program, m: &Option<u16>) -> String {
    m.map_or("all".into(), |m| {
        format!("mask '{}'", p.masks[usize::from(m)].name)
    })
}

/// A guard as text; with several machines each names its machine
/// (`[arms.Wave]`, `[arms fading]`).
fn guard(p: &Program, g: &Guard) -> String {
    let named = p.machines.len() > 1;
    let mname = |m: &u16| {
        if named {
            p.machines
                .get(usize::from(*m))
                .map_or(String::new(), |x| x.name.clone())
        } else {
            String::new()
        }
    };
    let st = |m: &u16, s: &u16| {
        let name = p.machines[usize::from(*m)].states[usize::from(*s)]
            .name
            .clone();
        if named {
            format!("{}.{name}", mname(m))
        } else {
            name
        }
    };
    let pre = |m: &u16| {
        if named {
            format!("{} ", mname(m))
        } else {
            String::new()
        }
    };
    match g {
        Guard::Always => String::new(),
        Guard::Active(m, s) => format!("[{}]", st(m, s)),
        Guard::Source(m, s) => format!("[from {}]", st(m, s)),
        Guard::FadeLive(m) => format!("[{}fading]", pre(m)),
        Guard::FadeCaptured(m) => format!("[{}fading, captured]", pre(m)),
        Guard::Inertial(m) => format!("[{}inertial]", pre(m)),
    }
}

/// One op as text.
pub fn op_text(p: &Program, op: &Op) -> String {
    match op {
        Op::Rest { out } => format!("b{out} = Rest"),
        Op::Sample {
            out,
            player,
            mask: m,
        } => {
            let s = &p.players[usize::from(*player)];
            let b = &p.bindings[usize::from(s.binding)];
            let mut t = format!("b{out} = Sample p{player} '{}'", b.name);
            if let Some(ft) = s.fixed_time {
                let _ = write!(t, " @{ft}s");
            }
            if m.is_some() {
                let _ = write!(t, " joints of {}", mask(p, m));
            }
            t
        }
        Op::BlendPair {
            out,
            a,
            b,
            weight: w,
        } => {
            format!(
                "b{out} = BlendPair {} {} w={}",
                operand(p, a),
                operand(p, b),
                weight(p, w)
            )
        }
        Op::BlendSpace { out, space, inputs } => {
            let s = &p.blendspaces[usize::from(*space)];
            let axes: Vec<String> = s
                .params
                .iter()
                .map(|i| format!("${}", p.params[usize::from(*i)].name))
                .collect();
            let ins: Vec<String> = inputs.iter().map(|b| format!("b{b}")).collect();
            format!(
                "b{out} = BlendSpace '{}' ({}) by {}",
                s.name,
                ins.join(" "),
                axes.join(",")
            )
        }
        Op::OverrideMask {
            out,
            base,
            src,
            mask: m,
            weight: w,
        } => {
            format!(
                "b{out} = OverrideMask b{base} <- b{src} {} w={}",
                mask(p, m),
                weight(p, w)
            )
        }
        Op::AddLocal {
            out,
            base,
            src,
            reference,
            mask: m,
            weight: w,
        } => {
            let r = reference.map_or("(cooked delta)".into(), |r| format!("- b{r}"));
            format!(
                "b{out} = AddLocal b{base} + (b{src} {r}) {} w={}",
                mask(p, m),
                weight(p, w)
            )
        }
        Op::Inertialize { out, machine } => {
            format!(
                "b{out} = Inertialize b{out} offset({})",
                p.machines[usize::from(*machine)].name
            )
        }
        Op::LocalToComponent { src } => format!("component = LocalToComponent b{src}"),
        Op::GameModifier {
            out,
            slot,
            mask: m,
            weight: w,
        } => format!(
            "b{out} = GameModifier b{out} hook '{}' {} w={}",
            p.layers.get(usize::from(*slot)).map_or("?", String::as_str),
            mask(p, &Some(*m)),
            weight(p, w)
        ),
        Op::SolveConstraint {
            out,
            chain,
            target,
            weight: w,
        } => {
            let j = |i: &u16| {
                p.joint_names
                    .get(usize::from(*i))
                    .map_or("?", String::as_str)
            };
            let q = |i: &u16| {
                p.params
                    .get(usize::from(*i))
                    .map_or("?", |x| x.name.as_str())
            };
            format!(
                "b{out} = SolveConstraint b{out} two-bone {}>{}>{} to (${}, ${}, ${}) w={}",
                j(&chain[0]),
                j(&chain[1]),
                j(&chain[2]),
                q(&target[0]),
                q(&target[1]),
                q(&target[2]),
                weight(p, w)
            )
        }
    }
}

/// The whole program: header, states and transitions, the plan, the
/// capacities.
pub fn dump(p: &Program) -> String {
    let mut s = String::new();
    let hex: String = p
        .skeleton_identity
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let _ = writeln!(
        s,
        "program '{}' ({}), skeleton {hex}, {} joints",
        p.name,
        p.source_file,
        p.joint_count()
    );
    for b in &p.bindings {
        let _ = writeln!(
            s,
            "  clip '{}' = {} / {} ({} s{}{})",
            b.name,
            b.package,
            b.clip,
            b.duration_s,
            if b.looping { ", loop" } else { "" },
            if b.additive { ", additive" } else { "" }
        );
    }
    for m in &p.masks {
        let n = m.weights.iter().filter(|w| **w > 0.0).count();
        let _ = writeln!(s, "  mask '{}': {n} joints", m.name);
    }
    for m in &p.machines {
        let _ = writeln!(
            s,
            "  machine '{}' (initial {})",
            m.name,
            m.states[usize::from(m.initial_leaf)].name
        );
        for t in &m.transitions {
            let mode = match t.mode {
                TransitionMode::Crossfade => "crossfade",
                TransitionMode::Inertialize => "inertialize",
            };
            let _ = writeln!(
                s,
                "    #{} {} -> {} when {} (priority {}, {mode} {} s)",
                t.id,
                m.states[usize::from(t.from)].name,
                m.states[usize::from(t.to)].name,
                t.text,
                t.priority,
                t.duration_s
            );
        }
    }
    let _ = writeln!(s, "plan:");
    let texts: Vec<(String, String)> = p
        .ops
        .iter()
        .map(|i| (guard(p, &i.guard), op_text(p, &i.op)))
        .collect();
    let gw = texts.iter().map(|t| t.0.len()).max().unwrap_or(0);
    let ow = texts.iter().map(|t| t.1.len()).max().unwrap_or(0);
    for (i, ((g, o), d)) in texts.iter().zip(&p.debug).enumerate() {
        let at = if d.line > 0 {
            format!(" (line {})", d.line)
        } else {
            String::new()
        };
        let _ = writeln!(s, "  {i:>2} {g:<gw$} {o:<ow$}  ; {}{at}", d.node);
    }
    let c = &p.capacities;
    let _ = writeln!(
        s,
        "capacities: {} scratch + {} persistent pose buffers x {} joints (padded {}) x {} B = {} B; component {} B; players {} ({} active at most); events <= {} per tick of {} s",
        c.scratch_buffers,
        c.persistent_buffers,
        c.joints,
        c.padded_joints,
        LOCAL_STRIDE,
        c.pose_bytes,
        c.component_bytes,
        c.players,
        c.max_active_players,
        c.max_events_per_tick,
        c.max_tick_s
    );
    s
}
