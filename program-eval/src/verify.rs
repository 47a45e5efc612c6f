//! The checks the cooker runs on every compiled program: a scripted
//! input sequence (every parameter swept, bools toggled, enums cycled,
//! some ticks at the program's longest tick) evaluated twice; the
//! capacities are never exceeded, every output is finite with unit
//! rotations, and both runs select the same transitions at the same ticks
//! and produce the same pose bits.

use crate::eval::{BindError, EvalError, Evaluator};
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_program::plan::{ParamKind, Program};
use ludus_anim_runtime::package::Package;

/// One tick of a script: its duration and one input per parameter.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    pub dt: f32,
    pub inputs: Vec<f32>,
}

/// The built-in sequence: `seconds` of ticks at `dt`, every seventh at
/// the program's `max_tick_s`. Float parameter `i` sweeps its range with
/// a period of `4 + 1.7 i` s, bool `i` toggles every `2.5 + 0.9 i` s,
/// enum `i` steps through its values every `3 + i` s.
pub fn default_script(p: &Program, seconds: f32, dt: f32) -> Vec<Step> {
    let mut out = Vec::new();
    let mut t = 0.0f32;
    let mut k = 0u32;
    while t < seconds {
        let dt = if k % 7 == 6 {
            p.capacities.max_tick_s
        } else {
            dt
        };
        let inputs = p
            .params
            .iter()
            .enumerate()
            .map(|(i, q)| {
                let i = i as f32;
                match &q.kind {
                    ParamKind::Float { min, max, .. } => {
                        let period = 4.0 + 1.7 * i;
                        min + (max - min) * (0.5 - 0.5 * (std::f32::consts::TAU * t / period).cos())
                    }
                    ParamKind::Bool { .. } => ((t / (2.5 + 0.9 * i)).floor() as u32 % 2) as f32,
                    ParamKind::Enum { values, .. } => {
                        ((t / (3.0 + i)).floor() as usize % values.len()) as f32
                    }
                }
            })
            .collect();
        out.push(Step { dt, inputs });
        t += dt;
        k += 1;
    }
    out
}

#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum VerifyError {
    #[error(transparent)]
    Bind(#[from] BindError),
    #[error("tick {tick}: {error}")]
    Eval { tick: usize, error: EvalError },
    #[error("tick {tick}: joint '{joint}' is not finite")]
    NotFinite { tick: usize, joint: String },
    #[error("tick {tick}: joint '{joint}' rotation has length {length}")]
    NotNormalized {
        tick: usize,
        joint: String,
        length: f32,
    },
    #[error("two runs of the same script differ: {0}")]
    Nondeterministic(String),
}

/// What a verification measured.
#[derive(Clone, Debug, PartialEq)]
pub struct Verification {
    pub ticks: usize,
    pub seconds: f64,
    /// (tick, transition ID) of machine 0, in order.
    pub transitions: Vec<(usize, u32)>,
    pub max_players: u32,
    pub capacity_players: u32,
    pub max_events: u32,
    pub capacity_events: u32,
    /// Largest | |q| - 1 | over every output rotation.
    pub max_rotation_norm_error: f32,
    pub blend_fallbacks: u64,
    /// FNV-1a 64 of every tick's output pose bits.
    pub pose_hash: u64,
}

fn run(
    p: &Program,
    packages: &[(String, Package<'_>)],
    script: &[Step],
) -> Result<Verification, VerifyError> {
    let mut ev = Evaluator::new(p, packages)?;
    let mut transitions = Vec::new();
    let mut hash_input = Vec::with_capacity(p.joint_count() * 40);
    let mut hashes = Vec::with_capacity(script.len() * 8);
    let mut worst = 0f32;
    let mut seconds = 0f64;
    for (tick, s) in script.iter().enumerate() {
        let r = ev
            .tick(&s.inputs, s.dt)
            .map_err(|error| VerifyError::Eval { tick, error })?;
        ev.evaluate()
            .map_err(|error| VerifyError::Eval { tick, error })?;
        if let Some(id) = r.transition {
            transitions.push((tick, id));
        }
        seconds += f64::from(s.dt);
        hash_input.clear();
        for (j, t) in ev.local_pose().iter().enumerate() {
            if !t.is_finite() {
                return Err(VerifyError::NotFinite {
                    tick,
                    joint: p.joint_names[j].clone(),
                });
            }
            let len = t.rotation.length();
            if (len - 1.0).abs() > 1e-3 {
                return Err(VerifyError::NotNormalized {
                    tick,
                    joint: p.joint_names[j].clone(),
                    length: len,
                });
            }
            worst = worst.max((len - 1.0).abs());
            for v in t.to_array() {
                hash_input.extend_from_slice(&v.to_bits().to_le_bytes());
            }
        }
        hashes.extend_from_slice(&fnv1a64(&hash_input).to_le_bytes());
    }
    let st = ev.stats();
    Ok(Verification {
        ticks: script.len(),
        seconds,
        transitions,
        max_players: st.max_players,
        capacity_players: p.capacities.max_active_players,
        max_events: st.max_events,
        capacity_events: p.capacities.max_events_per_tick,
        max_rotation_norm_error: worst,
        blend_fallbacks: st.blend_fallbacks,
        pose_hash: fnv1a64(&hashes),
    })
}

/// Run `script` twice on fresh instances and check the properties above.
pub fn verify(
    p: &Program,
    packages: &[(String, Package<'_>)],
    script: &[Step],
) -> Result<Verification, VerifyError> {
    let a = run(p, packages, script)?;
    let b = run(p, packages, script)?;
    if a.transitions != b.transitions {
        return Err(VerifyError::Nondeterministic(format!(
            "transitions {:?} then {:?}",
            a.transitions, b.transitions
        )));
    }
    if a.pose_hash != b.pose_hash {
        return Err(VerifyError::Nondeterministic(
            "the output poses differ".into(),
        ));
    }
    Ok(a)
}
