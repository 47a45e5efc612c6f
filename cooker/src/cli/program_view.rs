//! The dashboard's view of a compiled program
//! (`OUT/programs/<name>.view.json`, `ludus_anim_report::program_view`):
//! the plan dump, the capacities, the verification line, and the program
//! evaluated tick by tick over an input script at a fixed step, its
//! component-space joint positions quantized like the sidecar's poses so
//! the dashboard's stick-figure player draws them. `program compile`
//! writes it beside the `.ludprog`.

use ludus_anim_program::plan::{Program, TransitionMode, LOCAL_STRIDE, NO_PARENT};
use ludus_anim_program_eval::verify::Step;
use ludus_anim_program_eval::Evaluator;
use ludus_anim_report::program_view::{
    ProgramView, Sequence, StateSpan, TransitionTaken, ViewCapacities, VIEW_VERSION,
};
use ludus_anim_report::sidecar::Poses;
use ludus_anim_runtime::package::Package;

/// Most ticks a view holds (the sequence is "short": 20 s at 30 Hz).
pub const MAX_VIEW_TICKS: usize = 600;

/// What the view is made of besides the program.
pub struct ViewInputs<'s> {
    pub file: String,
    pub file_bytes: u64,
    pub dump: String,
    pub verification: String,
    /// Where the script came from.
    pub script_name: String,
    /// Ticks at one fixed `dt` (the first `MAX_VIEW_TICKS` are used).
    pub script: &'s [Step],
}

/// Evaluate `p` over the script and assemble its view.
pub fn build_view(
    p: &Program,
    pk: &[(String, Package<'_>)],
    v: ViewInputs<'_>,
) -> Result<ProgramView, String> {
    let script = &v.script[..v.script.len().min(MAX_VIEW_TICKS)];
    let dt = script.first().map_or(1.0 / 30.0, |s| s.dt);
    if script.iter().any(|s| s.dt != dt) {
        return Err("the view's script must tick at one fixed dt".into());
    }
    let mut ev = Evaluator::new(p, pk).map_err(|e| e.to_string())?;
    let n = p.joint_names.len();
    let mut positions: Vec<[f32; 3]> = Vec::with_capacity(script.len() * n);
    let mut states: Vec<StateSpan> = Vec::new();
    let mut transitions = Vec::new();
    for (k, s) in script.iter().enumerate() {
        let r = ev
            .tick(&s.inputs, s.dt)
            .map_err(|e| format!("view tick {k}: {e}"))?;
        ev.evaluate().map_err(|e| format!("view tick {k}: {e}"))?;
        let t = k as f32 * dt;
        positions.extend(ev.component_pose().iter().map(|m| m.translation.to_array()));
        let path: Vec<&str> = p
            .machines
            .iter()
            .enumerate()
            .filter_map(|(m, mach)| {
                ev.active_leaf(m)
                    .and_then(|l| mach.states.get(usize::from(l)))
                    .map(|st| st.name.as_str())
            })
            .collect();
        let path = path.join(" / ");
        match states.last_mut() {
            Some(last) if last.state == path => last.end_s = t,
            _ => states.push(StateSpan {
                state: path,
                start_s: t,
                end_s: t,
            }),
        }
        if let (Some(id), Some(m)) = (r.transition, p.machines.first()) {
            if let Some(tr) = m.transitions.iter().find(|x| x.id == id) {
                let name = |i: u16| {
                    m.states
                        .get(usize::from(i))
                        .map_or("?", |s| s.name.as_str())
                };
                let mode = match tr.mode {
                    TransitionMode::Crossfade => "crossfade",
                    TransitionMode::Inertialize => "inertialize",
                };
                transitions.push(TransitionTaken {
                    time_s: t,
                    machine: m.name.clone(),
                    id,
                    text: format!(
                        "{} -> {} ({mode} {} s)",
                        name(tr.from),
                        name(tr.to),
                        tr.duration_s
                    ),
                });
            }
        }
    }
    let frames = script.len() as u32;
    let c = &p.capacities;
    Ok(ProgramView {
        version: VIEW_VERSION,
        name: p.name.clone(),
        source: p.source_file.clone(),
        file: v.file,
        file_bytes: v.file_bytes,
        ops: p.ops.len() as u32,
        packages: {
            let mut b: Vec<String> = p.bindings.iter().map(|b| b.package.clone()).collect();
            b.sort();
            b.dedup();
            b
        },
        dump: v.dump,
        capacities: ViewCapacities {
            scratch_buffers: c.scratch_buffers,
            persistent_buffers: c.persistent_buffers,
            joints: c.joints,
            padded_joints: c.padded_joints,
            stride_bytes: LOCAL_STRIDE,
            pose_bytes: c.pose_bytes,
            component_bytes: c.component_bytes,
            players: c.players,
            max_active_players: c.max_active_players,
            max_events_per_tick: c.max_events_per_tick,
            max_tick_s: c.max_tick_s,
        },
        verification: v.verification,
        sequence: Sequence {
            script: v.script_name,
            ticks: frames,
            dt_s: dt,
            joints: p.joint_names.clone(),
            parents: p
                .parents
                .iter()
                .map(|&q| if q == NO_PARENT { -1 } else { q as i32 })
                .collect(),
            poses: Poses::quantize(1.0 / dt, frames, &positions),
            states,
            transitions,
        },
    })
}
