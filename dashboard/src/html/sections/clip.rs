//! Section 3: one detail per clip (anchor = the row's id): figures, the
//! stick-figure player (`player`), error over time of the worst joints with their thresholds, the joint × time
//! heat map, bit rates per track, the root trajectory, events and markers,
//! the retarget panel, the profiles of the same clip and the change since
//! the baseline.

use crate::fmt::{int, mm, pct};
use crate::html::plots::line::{Band, HLine, LinePlot, Series};
use crate::html::plots::{bars, heat, max_pool, timeline, traj};
use crate::html::svg::{esc, PALETTE};
use crate::model::{Dashboard, Row};
use ludus_anim_report::compare::{ClipDelta, ClipKey};
use ludus_anim_report::sidecar::{ClipSidecar, RetargetSidecar};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Joints drawn in the error-over-time plot.
pub const WORST_JOINTS: usize = 5;
/// Points per line after max-pooling.
const POINTS: usize = 240;

/// What a clip's detail looks up about other rows, indexed once.
pub struct Lookup<'a> {
    d: &'a Dashboard,
    /// Rows by `(source, clip)`: the same clip under other profiles.
    same: BTreeMap<(&'a str, &'a str), Vec<Row<'a>>>,
    deltas: BTreeMap<&'a ClipKey, &'a ClipDelta>,
}

impl<'a> Lookup<'a> {
    pub fn new(d: &'a Dashboard, rows: &[Row<'a>]) -> Lookup<'a> {
        let mut same: BTreeMap<_, Vec<Row<'a>>> = BTreeMap::new();
        for r in rows {
            same.entry((r.asset.source.as_str(), r.clip.name.as_str()))
                .or_default()
                .push(*r);
        }
        let deltas = d
            .comparison
            .iter()
            .flat_map(|c| &c.clips)
            .map(|x| (&x.key, x))
            .collect();
        Lookup { d, same, deltas }
    }
}

/// Every clip's detail inline (the one-file page).
pub fn render_all(s: &mut String, d: &Dashboard) {
    s.push_str("<section id=\"details\"><h2>Clip details</h2>");
    let rows = d.rows();
    let cx = Lookup::new(d, &rows);
    for r in &rows {
        render(s, &cx, r);
    }
    s.push_str("</section>");
}

fn figure(s: &mut String, caption: &str, svg: &str) {
    let _ = write!(
        s,
        "<figure class=\"plot-fig\"><figcaption>{}</figcaption>{svg}</figure>",
        esc(caption)
    );
}

/// One clip's detail: an `<article>` whose id is the row's.
pub fn render(s: &mut String, cx: &Lookup<'_>, r: &Row<'_>) {
    let c = r.clip;
    let _ = write!(
        s,
        "<article class=\"clip\" id=\"{}\"><h3>{} <span class=\"muted\">{} · {}</span></h3>",
        r.id,
        esc(&c.name),
        esc(&r.asset.source),
        esc(&c.profile)
    );
    figures(s, r);
    match r.sidecar {
        Some(sc) => plots(s, sc, r),
        None => s.push_str("<p class=\"muted\">No per-time data for this clip (the cook wrote no sidecar, or left it out).</p>"),
    }
    others(s, r, cx);
    change(s, cx, r);
    s.push_str("<p><a href=\"#clips\">↑ clip table</a></p></article>");
}

fn figures(s: &mut String, r: &Row<'_>) {
    let c = r.clip;
    let mut items = vec![
        (
            "budget",
            format!(
                "{} (max {} where the threshold is {})",
                pct(r.ratio()),
                mm(c.max_error_m),
                mm(r.worst_threshold())
            ),
        ),
        (
            "worst",
            format!("{} at {:.3} s", c.worst_joint, c.worst_time_s),
        ),
        (
            "p99 / source / resample",
            format!(
                "{} / {} / {}",
                mm(c.p99_error_m),
                mm(c.source_error_m),
                mm(c.resample_error_m)
            ),
        ),
        (
            "size",
            format!(
                "{} → {} B ({:.1}:1, {} v{})",
                int(c.raw_bytes),
                int(c.compressed_bytes),
                c.ratio,
                c.codec,
                c.codec_version
            ),
        ),
        (
            "grid",
            format!(
                "{} joints, {} samples at {} Hz, {:.3} s, {}",
                c.joints, c.samples, c.sample_rate_hz, c.duration_s, c.loop_mode
            ),
        ),
        (
            "timing",
            // Cache entries hold no timings: a clip served from the
            // cache was not timed in this cook.
            match (c.decode_ns_per_pose > 0.0, c.compress_ms > 0.0) {
                (false, false) => "served from the cache (not timed in this cook)".to_string(),
                _ => format!(
                    "decode {:.0} ns/pose, compress {:.1} ms",
                    c.decode_ns_per_pose, c.compress_ms
                ),
            },
        ),
        (
            "checked",
            format!(
                "{} times; {} events, {} markers",
                c.times_checked, c.events, c.markers
            ),
        ),
    ];
    if let Some(rm) = &c.root_motion {
        let drift = rm.drift_100_loops_m.map_or(String::new(), |x| {
            format!(", drift over 100 loops {}", mm(x))
        });
        items.push((
            "root motion",
            format!("{} on {}{drift}", rm.policy, rm.joint),
        ));
    }
    if !c.selected_joints.is_empty() {
        let mut sel: Vec<_> = c.selected_joints.iter().collect();
        sel.sort_by(|a, b| {
            (b.max_error_m / b.threshold_m).total_cmp(&(a.max_error_m / a.threshold_m))
        });
        let mut text: Vec<String> = sel
            .iter()
            .take(8)
            .map(|j| format!("{} {} of {}", j.joint, mm(j.max_error_m), mm(j.threshold_m)))
            .collect();
        if sel.len() > 8 {
            text.push(format!("and {} more", sel.len() - 8));
        }
        items.push(("selected joints", text.join(", ")));
    }
    s.push_str("<dl class=\"figures\">");
    for (k, v) in items {
        let _ = write!(s, "<dt>{k}</dt><dd>{}</dd>", esc(&v));
    }
    s.push_str("</dl>");
    if !c.warnings.is_empty() {
        s.push_str("<ul class=\"warnings\">");
        for w in &c.warnings {
            let _ = write!(s, "<li>{}</li>", esc(w));
        }
        s.push_str("</ul>");
    }
}

fn plots(s: &mut String, sc: &ClipSidecar, r: &Row<'_>) {
    super::player::render(s, sc);
    if sc.has_errors() && sc.time_count() > 0 {
        error_plot(s, sc);
        let cap = format!(
            "Error / threshold, joint × time ({} joints in hierarchy order, {} checked times)",
            sc.joint_count(),
            sc.time_count()
        );
        figure(
            s,
            &cap,
            &heat::render(sc, "heat map of error over threshold by joint and time"),
        );
    }
    if let Some(b) = &sc.bit_rates {
        let segs = b.segment_starts.len().max(1);
        figure(
            s,
            &format!("Bit rates per track: mean bits per component over {segs} segment(s) (a full bar is 20; grey ticks: stored once)"),
            &bars::render(sc, b, "bit rates per track"),
        );
    }
    if let Some(t) = &sc.root_motion {
        let (path, end) = traj::distances(t);
        let drift = t.drift_100_loops_m.map_or(String::new(), |x| {
            format!("; drift over 100 loops {}", mm(x))
        });
        let cap = format!(
            "Root motion ({} on {}): path {:.2} m, start to end {:.2} m{drift}",
            t.policy, t.joint, path, end
        );
        figure(
            s,
            &cap,
            &traj::render(t, "root-motion trajectory, top view"),
        );
    }
    if !sc.events.is_empty() {
        let cap = format!("Events and markers ({})", sc.events.len());
        figure(
            s,
            &cap,
            &timeline::render(
                &sc.events,
                sc.duration_s,
                "events and markers on the timeline",
            ),
        );
    }
    if let Some(rt) = &sc.retarget {
        retarget(s, rt, r.clip.duration_s);
    }
}

fn error_plot(s: &mut String, sc: &ClipSidecar) {
    let mut worst: Vec<(usize, f32)> = (0..sc.joint_count())
        .map(|j| (j, sc.joint_worst(j).0))
        .collect();
    worst.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    worst.truncate(WORST_JOINTS);
    let mut series = Vec::new();
    let mut hlines: Vec<HLine> = Vec::new();
    for (i, &(j, _)) in worst.iter().enumerate() {
        let pts: Vec<(f32, f32)> = (0..sc.time_count())
            .map(|t| (sc.times_s.0[t], sc.error_m(j, t)))
            .collect();
        let color = PALETTE[i % PALETTE.len()];
        let name = sc.joints.get(j).cloned().unwrap_or_default();
        series.push(Series {
            name: name.chars().take(20).collect(),
            color,
            points: max_pool(&pts, POINTS),
        });
        let th = sc.thresholds_m.get(j).unwrap_or(0.0);
        if !hlines.iter().any(|h| h.y == th) {
            hlines.push(HLine {
                y: th,
                label: format!("threshold {}", mm(th)),
                color: "#b00020",
            });
        }
    }
    let plot = LinePlot {
        label: "error over time of the worst joints",
        x_label: "time (s)",
        y_label: "error (mm)",
        x_range: (
            0.0,
            sc.duration_s
                .max(sc.times_s.0.last().copied().unwrap_or(0.0)),
        ),
        series,
        hlines,
        bands: Vec::new(),
        fy: &|v| format!("{:.3}", v * 1000.0),
    };
    let cap = format!(
        "Error over time, {} worst joints (max per {POINTS} time buckets)",
        worst.len()
    );
    figure(s, &cap, &plot.render(220.0));
}

/// The retarget panel: per foot, height and speed over time with its
/// contacts and skates (also on the standalone preview pages).
pub fn retarget(s: &mut String, rt: &RetargetSidecar, duration: f32) {
    let _ = write!(
        s,
        "<div class=\"retarget\"><h4>Retarget ({})</h4>",
        esc(&rt.profile)
    );
    for f in &rt.feet {
        let time = |i: usize| i as f32 / rt.rate_hz.max(f32::MIN_POSITIVE);
        let mut bands: Vec<Band> = f
            .contacts
            .iter()
            .map(|c| Band {
                x0: c.start_s,
                x1: c.end_s,
                class: "contact",
                title: format!("contact {:.2}–{:.2} s", c.start_s, c.end_s),
            })
            .collect();
        bands.extend(f.skates.iter().map(|k| Band {
            x0: k.start_s,
            x1: k.end_s,
            class: "skate",
            title: format!(
                "skate {:.2}–{:.2} s, slid {}",
                k.start_s,
                k.end_s,
                mm(k.slide_m)
            ),
        }));
        let height = Series {
            name: "height".into(),
            color: PALETTE[0],
            points: f
                .height_m
                .0
                .iter()
                .enumerate()
                .map(|(i, &h)| (time(i), h))
                .collect(),
        };
        let speed = Series {
            name: "speed".into(),
            color: PALETTE[1],
            points: f
                .speed_mps
                .0
                .iter()
                .enumerate()
                .map(|(i, &v)| (time(i), v))
                .collect(),
        };
        for (series, unit, fy) in [
            (
                height,
                "height (cm)",
                &(|v: f32| format!("{:.1}", v * 100.0)) as &dyn Fn(f32) -> String,
            ),
            (speed, "speed (m/s)", &|v: f32| format!("{v:.2}")),
        ] {
            let what = series.name.clone();
            let plot = LinePlot {
                label: "foot curve with contact and skate bands",
                x_label: "time (s)",
                y_label: unit,
                x_range: (0.0, duration),
                series: vec![series],
                hlines: Vec::new(),
                bands: bands
                    .iter()
                    .map(|b| Band {
                        x0: b.x0,
                        x1: b.x1,
                        class: b.class,
                        title: b.title.clone(),
                    })
                    .collect(),
                fy,
            };
            let cap = format!(
                "{} {what}: {} contact(s), {} skate(s)",
                f.joint,
                f.contacts.len(),
                f.skates.len()
            );
            figure(s, &cap, &plot.render(150.0));
        }
    }
    s.push_str("</div>");
}

fn others(s: &mut String, r: &Row<'_>, cx: &Lookup<'_>) {
    let key = (r.asset.source.as_str(), r.clip.name.as_str());
    let same: Vec<&Row<'_>> = cx
        .same
        .get(&key)
        .into_iter()
        .flatten()
        .filter(|o| o.id != r.id)
        .collect();
    if same.is_empty() {
        return;
    }
    s.push_str("<p class=\"others\">Other profiles: ");
    for o in same {
        let _ = write!(
            s,
            "<a href=\"#{}\">{}</a> {} B, {}; ",
            o.id,
            esc(&o.clip.profile),
            int(o.clip.compressed_bytes),
            mm(o.clip.max_error_m)
        );
    }
    s.push_str("</p>");
}

fn change(s: &mut String, cx: &Lookup<'_>, r: &Row<'_>) {
    let Some(c) = &cx.d.comparison else { return };
    let key = r.key();
    let Some(delta) = cx.deltas.get(&key) else {
        return;
    };
    let _ = write!(
        s,
        "<p class=\"change {0:?}\">Since the baseline: {0:?}",
        delta.change
    );
    for reg in c.regressions_of(&key) {
        let _ = write!(s, "<br>{}", esc(&reg.message));
    }
    s.push_str("</p>");
}
