//! The compiled animation programs of the cooks (`programs/*.view.json`,
//! written by `ludus-anim program compile`): per program its plan dump
//! (ops, guards, operands and the authored node of each), the capacity
//! figures, the verification line, and the program evaluated over its
//! input script, drawn twice: a static strip of stick figures (side view,
//! a few evenly spaced ticks labelled with time and active state; no
//! script needed) and the shared stick-figure player (`player::shell`)
//! with the active states as timeline rows and the transitions taken as
//! events. Nothing is written when no cook has a program.

use super::player::{poses, shell};
use super::{more, LIST_MAX};
use crate::fmt::int;
use crate::html::svg::esc;
use crate::model::Dashboard;
use ludus_anim_report::program_view::{ProgramView, Sequence};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Figures in the static strip.
pub const STRIP_FIGURES: usize = 8;

pub fn render(s: &mut String, d: &Dashboard) {
    let views: Vec<(&str, &ProgramView)> = d
        .cooks
        .iter()
        .flat_map(|c| c.programs.iter().map(move |p| (c.label.as_str(), p)))
        .collect();
    if views.is_empty() {
        return;
    }
    s.push_str(
        "<section id=\"programs\"><h2>Programs</h2><p class=\"muted\">Compiled animation programs \
         (<code>ludus-anim program compile</code>): the plan, its worst-case capacities, and the \
         program evaluated tick by tick by the reference evaluator.</p>",
    );
    for (i, (label, v)) in views.iter().take(LIST_MAX).enumerate() {
        program(s, i, label, v);
    }
    more(s, views.len(), "see the cooks' programs/ folders");
    s.push_str("</section>");
}

fn program(s: &mut String, i: usize, cook: &str, v: &ProgramView) {
    let _ = write!(
        s,
        "<article class=\"program\" id=\"program-{i}\" data-program=\"{}\"><h3>{}</h3>\
         <p class=\"muted\">{} → {} ({} bytes, {} ops) in {}; clips from {}</p><p class=\"verified\">{}</p>",
        esc(&v.name),
        esc(&v.name),
        esc(&v.source),
        esc(&v.file),
        int(v.file_bytes),
        v.ops,
        esc(cook),
        esc(&v.packages.join(", ")),
        esc(&v.verification)
    );
    capacities(s, v);
    let _ = write!(
        s,
        "<details open><summary>Plan ({} ops)</summary><div class=\"scroll\"><pre class=\"plan\" style=\"font-size:12px;margin:0;line-height:1.35\">{}</pre></div></details>",
        v.ops,
        esc(v.dump.trim_end())
    );
    strip(s, &v.sequence);
    let q = &v.sequence;
    shell(
        s,
        &format!(
            "Evaluated: {} ticks at {:.1} Hz over {} ({} joints; side and top views; active states and transitions on the timeline)",
            q.ticks,
            q.poses.rate_hz,
            q.script,
            q.joints.len()
        ),
        &player_data(q),
    );
    s.push_str("</article>");
}

fn capacities(s: &mut String, v: &ProgramView) {
    let c = &v.capacities;
    let rows: [(&str, String); 6] = [
        (
            "pose buffers",
            format!(
                "{} scratch + {} persistent × {} joints (padded {}) × {} B = {} B",
                c.scratch_buffers,
                c.persistent_buffers,
                c.joints,
                c.padded_joints,
                c.stride_bytes,
                int(c.pose_bytes)
            ),
        ),
        ("component pose", format!("{} B", int(c.component_bytes))),
        ("players", c.players.to_string()),
        ("active players at most", c.max_active_players.to_string()),
        (
            "events per tick at most",
            format!("{} (tick ≤ {} s)", c.max_events_per_tick, c.max_tick_s),
        ),
        (
            "working set",
            format!("{} B", int(c.pose_bytes + c.component_bytes)),
        ),
    ];
    s.push_str("<div class=\"scroll\"><table class=\"capacities\"><thead><tr><th>capacity</th><th>worst case</th></tr></thead><tbody>");
    for (k, val) in rows {
        let _ = write!(s, "<tr><td>{}</td><td>{}</td></tr>", esc(k), esc(&val));
    }
    s.push_str("</tbody></table></div>");
}

/// Joint positions of frame `f` (dequantized).
fn frame(q: &Sequence, f: usize) -> Vec<[f32; 3]> {
    let p = &q.poses;
    let n = q.joints.len();
    (0..n)
        .map(|j| {
            let mut out = [0f32; 3];
            for (a, o) in out.iter_mut().enumerate() {
                let v = p.q.get((f * n + j) * 3 + a).unwrap_or(0);
                *o = p.origin_m[a] + f32::from(v) * p.step_m[a];
            }
            out
        })
        .collect()
}

fn state_at(q: &Sequence, t: f32) -> &str {
    q.states
        .iter()
        .rev()
        .find(|s| s.start_s <= t)
        .map_or("", |s| s.state.as_str())
}

/// Side view (+Z right, +Y up, each figure following its first joint along
/// Z), evenly spaced ticks, one scale for all figures.
fn strip(s: &mut String, q: &Sequence) {
    let frames = q.poses.frames as usize;
    if frames == 0 || q.joints.is_empty() {
        return;
    }
    let k = STRIP_FIGURES.min(frames);
    let picks: Vec<usize> = (0..k)
        .map(|i| {
            if k == 1 {
                0
            } else {
                i * (frames - 1) / (k - 1)
            }
        })
        .collect();
    let poses: Vec<Vec<[f32; 3]>> = picks.iter().map(|&f| frame(q, f)).collect();
    let (mut h0, mut h1, mut v0, mut v1) = (f32::MAX, f32::MIN, f32::MAX, f32::MIN);
    for p in &poses {
        for j in p {
            let h = j[2] - p[0][2];
            h0 = h0.min(h);
            h1 = h1.max(h);
            v0 = v0.min(j[1]);
            v1 = v1.max(j[1]);
        }
    }
    let (cw, ch, pad, text) = (120.0f32, 200.0f32, 10.0f32, 28.0f32);
    let scale =
        ((cw - 2.0 * pad) / (h1 - h0).max(0.05)).min((ch - 2.0 * pad) / (v1 - v0).max(0.05));
    let width = cw * k as f32;
    let _ = write!(
        s,
        "<figure class=\"plot-fig program-strip\"><figcaption>{}</figcaption><div class=\"scroll\">\
         <svg class=\"strip\" width=\"{width}\" height=\"{}\" viewBox=\"0 0 {width} {}\" role=\"img\" aria-label=\"stick figures\">",
        esc(&format!(
            "{k} of {} evaluated ticks, side view",
            q.ticks
        )),
        ch + text,
        ch + text
    );
    let ground = ch - pad - (0.0 - v0) * scale;
    if ground.is_finite() && (0.0..=ch).contains(&ground) {
        let _ = write!(
            s,
            "<line x1=\"0\" y1=\"{ground:.1}\" x2=\"{width}\" y2=\"{ground:.1}\" stroke=\"#c8c8ce\"/>"
        );
    }
    for (i, (f, p)) in picks.iter().zip(&poses).enumerate() {
        let x0 = i as f32 * cw + cw / 2.0 - (h0 + h1) / 2.0 * scale;
        let at = |j: &[f32; 3]| {
            (
                x0 + (j[2] - p[0][2]) * scale,
                ch - pad - (j[1] - v0) * scale,
            )
        };
        s.push_str("<g class=\"strip-fig\" stroke=\"#0072b2\" stroke-width=\"2\">");
        for (j, &parent) in q.parents.iter().enumerate() {
            if let (Some(c), Some(pp)) = (
                p.get(j),
                usize::try_from(parent).ok().and_then(|x| p.get(x)),
            ) {
                let ((x1, y1), (x2, y2)) = (at(pp), at(c));
                let _ = write!(
                    s,
                    "<line x1=\"{x1:.1}\" y1=\"{y1:.1}\" x2=\"{x2:.1}\" y2=\"{y2:.1}\"/>"
                );
            }
        }
        let t = *f as f32 * q.dt_s;
        let _ = write!(
            s,
            "</g><text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"11\">{}</text>",
            i as f32 * cw + cw / 2.0,
            ch + 12.0,
            esc(&format!("{t:.2} s {}", state_at(q, t)))
        );
    }
    s.push_str("</svg></div></figure>");
}

/// The shared player's data: one figure, no trajectory, the transitions as
/// events and one timeline row per active state.
fn player_data(q: &Sequence) -> Value {
    let mut rows: BTreeMap<&str, Vec<[f32; 2]>> = BTreeMap::new();
    for sp in &q.states {
        rows.entry(sp.state.as_str())
            .or_default()
            .push([sp.start_s, sp.end_s + q.dt_s]);
    }
    let duration = q.poses.frames.saturating_sub(1) as f32 / q.poses.rate_hz.max(1e-6);
    json!({
        "duration": duration,
        "figures": [{
            "label": "",
            "parents": q.parents,
            "poses": poses(&q.poses),
            "axes": Value::Null,
        }],
        "trajectory": Value::Null,
        "events": q.transitions.iter().map(|t| json!([t.time_s, format!("#{} {}", t.id, t.text), "event"])).collect::<Vec<_>>(),
        "contacts": rows.iter().map(|(k, v)| json!({"joint": k, "spans": v})).collect::<Vec<_>>(),
    })
}
