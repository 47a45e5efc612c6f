//! `OUT/programs/<name>.view.json`: what the dashboard shows of a compiled
//! animation program, written by `ludus-anim program compile` beside the
//! `.ludprog` from the program it compiled and verified (never recomputed
//! by the report command): the plan dump, the capacity figures, the
//! verification summary and the program evaluated over an input script,
//! as component-space joint positions per tick with the active states and
//! the transitions taken. Layout: `schemas/program.md` ("Dashboard view").

use crate::sidecar::Poses;
use serde::{Deserialize, Serialize};

/// What a view file's name ends with.
pub const VIEW_SUFFIX: &str = ".view.json";
/// Layout version this crate writes and reads.
pub const VIEW_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ProgramView {
    /// [`VIEW_VERSION`] of the layout.
    pub version: u32,
    pub name: String,
    /// The program asset as the compiler was given it.
    pub source: String,
    /// The compiled program's file name (beside this file).
    pub file: String,
    pub file_bytes: u64,
    pub ops: u32,
    /// The package files the program's clips were bound to.
    pub packages: Vec<String>,
    /// `ludus-anim program dump`'s text.
    pub dump: String,
    pub capacities: ViewCapacities,
    /// The verification's one-line summary.
    pub verification: String,
    pub sequence: Sequence,
}

/// The compiled worst case (`Capacities` of the program crate).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ViewCapacities {
    pub scratch_buffers: u32,
    pub persistent_buffers: u32,
    pub joints: u32,
    pub padded_joints: u32,
    /// Bytes of one local joint value.
    pub stride_bytes: u32,
    pub pose_bytes: u64,
    pub component_bytes: u64,
    pub players: u32,
    pub max_active_players: u32,
    pub max_events_per_tick: u32,
    pub max_tick_s: f32,
}

/// The program evaluated tick by tick at a fixed step.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Sequence {
    /// Where the inputs came from (a script file, or the verification's
    /// built-in script).
    pub script: String,
    pub ticks: u32,
    pub dt_s: f32,
    pub joints: Vec<String>,
    /// Parent index per joint, -1 for a root.
    pub parents: Vec<i32>,
    /// Component-space positions after every tick (`rate_hz` = 1 / dt).
    pub poses: Poses,
    /// The active state path over time (every machine's leaf, joined by
    /// " / "), one span per change.
    pub states: Vec<StateSpan>,
    pub transitions: Vec<TransitionTaken>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StateSpan {
    pub state: String,
    pub start_s: f32,
    pub end_s: f32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TransitionTaken {
    pub time_s: f32,
    pub machine: String,
    pub id: u32,
    /// `Move -> Rest (crossfade 0.3 s)`.
    pub text: String,
}

impl ProgramView {
    pub fn from_json(bytes: &[u8]) -> Result<ProgramView, String> {
        let v: ProgramView = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
        if v.version != VIEW_VERSION {
            return Err(format!(
                "view layout version {} (this build reads {VIEW_VERSION})",
                v.version
            ));
        }
        let s = &v.sequence;
        let n = s.joints.len();
        if s.parents.len() != n
            || s.parents.iter().any(|&q| q < -1 || q >= n as i32)
            || s.poses.joints() != n
            || s.poses.q.len() != s.poses.frames as usize * n * 3
        {
            return Err("the sequence's joints, parents and poses disagree".into());
        }
        Ok(v)
    }
}
