//! The clip's stick-figure player: the sidecar's sampled poses (decoded
//! from the package by the cook) as embedded JSON beside empty canvases,
//! which `assets/app.js` (`ludusPlayers`) decodes and draws: side and top
//! views, the root trajectory under the top view, events, markers and
//! contacts on a timeline; play/pause, scrub and speed. A retargeted
//! clip's source skeleton is drawn beside the result, on the same clock.

use crate::html::svg::esc;
use ludus_anim_report::sidecar::{ClipSidecar, Poses};
use serde_json::{json, Value};
use std::fmt::Write;

/// A pose sequence as the player reads it (also the programs section's).
pub fn poses(p: &Poses) -> Value {
    json!({
        "rate": p.rate_hz,
        "frames": p.frames,
        "origin": p.origin_m,
        "step": p.step_m,
        "q": serde_json::to_value(&p.q).unwrap_or(Value::Null),
    })
}

/// The player's data: every array as the sidecar packs it (base64).
/// A retargeted clip's figures carry their rig's up and forward axes
/// (`["+z", "-y"]`), which the player turns to +y up, +z forward; a
/// figure without them is drawn as stored (+y up, the conventions).
fn data(sc: &ClipSidecar, p: &Poses) -> Value {
    let axes = sc.retarget.as_ref().and_then(|r| r.axes.as_ref());
    let mut figures = vec![json!({
        "label": if sc.source_poses.is_some() { "result" } else { "" },
        "parents": sc.parents,
        "poses": poses(p),
        "axes": axes.map(|a| [&a.target_up, &a.target_forward]),
    })];
    if let Some(src) = &sc.source_poses {
        figures.push(json!({
            "label": "source",
            "parents": src.parents,
            "poses": poses(&src.poses),
            "axes": axes.map(|a| [&a.source_up, &a.source_forward]),
        }));
    }
    let contacts: Vec<Value> = sc
        .retarget
        .iter()
        .flat_map(|r| &r.feet)
        .map(|f| {
            json!({
                "joint": f.joint,
                "spans": f.contacts.iter().map(|c| [c.start_s, c.end_s]).collect::<Vec<_>>(),
            })
        })
        .collect();
    let trajectory = sc.root_motion.as_ref().map(|t| {
        json!({
            "rate": t.rate_hz,
            "x": serde_json::to_value(&t.x_m).unwrap_or(Value::Null),
            "z": serde_json::to_value(&t.z_m).unwrap_or(Value::Null),
            "yaw": serde_json::to_value(&t.yaw_rad).unwrap_or(Value::Null),
        })
    });
    json!({
        "duration": sc.duration_s,
        "figures": figures,
        "trajectory": trajectory,
        "events": sc.events.iter().map(|e| json!([e.time_s, e.name, e.kind])).collect::<Vec<_>>(),
        "contacts": contacts,
    })
}

/// The player, or a line saying why there is none.
pub fn render(s: &mut String, sc: &ClipSidecar) {
    let Some(p) = &sc.poses else {
        if sc.poses_left_out {
            s.push_str(
                "<p class=\"muted\">Motion: the cook left the sampled poses out \
                 (the sidecar would have passed <code>sidecar_max_mb</code>).</p>",
            );
        }
        return;
    };
    let what = match &sc.source_poses {
        Some(src) => format!(
            "source ({} joints) and result ({} joints) side by side",
            src.joints.len(),
            sc.joint_count()
        ),
        None => format!("{} joints", sc.joint_count()),
    };
    shell(
        s,
        &format!(
            "Motion decoded from the package: {what}, {} frames at {:.1} Hz (side view, top view{}; events, markers and contacts on the timeline)",
            p.frames,
            p.rate_hz,
            if sc.root_motion.is_some() { " with the root trajectory" } else { "" }
        ),
        &data(sc, p),
    );
}

/// The player's markup: caption, empty views, the timeline, controls and
/// its data as embedded JSON (`assets/player.js` draws it). Also the
/// programs section's evaluated sequence.
pub fn shell(s: &mut String, caption: &str, data: &Value) {
    // `</` cannot appear in the JSON (base64, numbers, escaped names), so
    // the script element ends where it should.
    let json = serde_json::to_string(data)
        .unwrap_or_else(|_| "{}".into())
        .replace('<', "\\u003c");
    let _ = write!(
        s,
        "<figure class=\"plot-fig player\" data-player><figcaption>{}</figcaption>\
         <div class=\"player-views\"></div>\
         <canvas class=\"player-timeline\" width=\"720\" height=\"46\" aria-label=\"timeline: events, markers and contacts\"></canvas>\
         <div class=\"player-ctl\"><button type=\"button\" class=\"pl-play\">Play</button> \
         <input type=\"range\" class=\"pl-scrub\" min=\"0\" max=\"1000\" value=\"0\" aria-label=\"time\"> \
         <select class=\"pl-speed\" aria-label=\"speed\"><option value=\"0.25\">0.25×</option>\
         <option value=\"0.5\">0.5×</option><option value=\"1\" selected>1×</option><option value=\"2\">2×</option></select> \
         <span class=\"pl-time\"></span></div>\
         <script type=\"application/json\" class=\"player-data\">{json}</script></figure>",
        esc(caption)
    );
}
