//! Section 4: size against error across profiles (standard / hero /
//! crowd), per clip and summed, with decode time and the error at the
//! profiles' selected joints: the trade-off profiles exist to show.
//!
//! Several profiles come from several cooks (`report OUT_STANDARD OUT_HERO
//! OUT_CROWD`) or from one cook whose clips name different profiles; rows
//! of one `(source, clip)` under two or more profiles form a group.

use super::{clip_link, more, num, thead, LIST_MAX};
use crate::fmt::{int, mm};
use crate::html::plots::scatter::{self, Point};
use crate::html::svg::esc;
use crate::model::{Dashboard, Row};
use std::collections::BTreeSet;
use std::fmt::Write;

/// Clips drawn in the per-clip scatter (each costs a few hundred bytes).
const SCATTER_MAX: usize = 1000;

fn point(r: &Row<'_>) -> Point {
    Point {
        bytes: r.clip.compressed_bytes as f32,
        error_m: r.clip.max_error_m,
        profile: r.clip.profile.clone(),
        title: format!(
            "{} ({}): {} B, {}",
            r.clip.name,
            r.clip.profile,
            r.clip.compressed_bytes,
            mm(r.clip.max_error_m)
        ),
    }
}

fn profiles_of(groups: &[Vec<Row<'_>>]) -> Vec<String> {
    let p: BTreeSet<String> = groups
        .iter()
        .flatten()
        .map(|r| r.clip.profile.clone())
        .collect();
    p.into_iter().collect()
}

pub fn render(s: &mut String, d: &Dashboard) {
    s.push_str("<section id=\"profiles\"><h2>Profiles: size against error</h2>");
    let groups = d.tradeoff_groups();
    if groups.is_empty() {
        s.push_str(
            "<p class=\"muted\">Every clip here was cooked with one profile. Pass cooks of several \
             profiles (<code>ludus-anim report OUT_STANDARD OUT_HERO OUT_CROWD</code>) to see the trade-off.</p></section>",
        );
        return;
    }
    let profiles = profiles_of(&groups);
    let per_clip: Vec<Vec<Point>> = groups
        .iter()
        .take(SCATTER_MAX)
        .map(|g| g.iter().map(point).collect())
        .collect();
    let drawn = if groups.len() > SCATTER_MAX {
        format!("the first {SCATTER_MAX} of {} clips", groups.len())
    } else {
        format!("{} clips", groups.len())
    };
    let _ = write!(
        s,
        "<div class=\"cols\"><figure class=\"plot-fig\"><figcaption>Per clip ({drawn} under {} profiles): \
         each clip's profiles joined</figcaption>{}</figure>",
        profiles.len(),
        scatter::render(&per_clip, "compressed bytes against max error per clip and profile", true)
    );
    let sums = summed(&groups, &profiles);
    let sum_points: Vec<Vec<Point>> = vec![sums
        .iter()
        .map(|t| Point {
            bytes: t.1 as f32,
            error_m: t.2,
            profile: t.0.clone(),
            title: format!("{}: {} B in total, max error {}", t.0, t.1, mm(t.2)),
        })
        .collect()];
    let _ = write!(
        s,
        "<figure class=\"plot-fig\"><figcaption>Summed over the {} clips cooked with every profile</figcaption>{}</figure></div>",
        groups.len(),
        scatter::render(&sum_points, "total compressed bytes against max error per profile", false)
    );
    table(s, &groups, &profiles);
    let figures: Vec<super::pareto::Figures> =
        sums.into_iter().map(|(p, b, e, d)| (p, b, d, e)).collect();
    super::pareto::render(s, &figures);
    s.push_str("</section>");
}

/// (profile, total bytes, max error, mean decode ns) over the groups.
fn summed(groups: &[Vec<Row<'_>>], profiles: &[String]) -> Vec<(String, u64, f32, f64)> {
    profiles
        .iter()
        .map(|p| {
            let rows: Vec<&Row<'_>> = groups
                .iter()
                .flatten()
                .filter(|r| &r.clip.profile == p)
                .collect();
            let bytes = rows.iter().map(|r| r.clip.compressed_bytes).sum();
            let err = rows.iter().map(|r| r.clip.max_error_m).fold(0.0, f32::max);
            // Clips served from the cache were not timed (0): left out.
            let timed: Vec<f64> = rows
                .iter()
                .map(|r| r.clip.decode_ns_per_pose)
                .filter(|&d| d > 0.0)
                .collect();
            let dec = timed.iter().sum::<f64>() / timed.len().max(1) as f64;
            (p.clone(), bytes, err, dec)
        })
        .collect()
}

fn selected(r: &Row<'_>) -> String {
    r.clip
        .selected_joints
        .iter()
        .map(|j| format!("{} {}", j.joint, mm(j.max_error_m)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn table(s: &mut String, groups: &[Vec<Row<'_>>], profiles: &[String]) {
    s.push_str("<div class=\"scroll\"><table class=\"sortable\" id=\"profile-tradeoff\">");
    let labels: Vec<String> = profiles
        .iter()
        .flat_map(|p| {
            [
                format!("{p} bytes"),
                format!("{p} max error"),
                format!("{p} decode ns"),
            ]
        })
        .collect();
    let mut cols: Vec<(&str, bool)> = vec![("clip", false)];
    cols.extend(labels.iter().map(|l| (l.as_str(), true)));
    cols.push(("selected joints (per profile)", false));
    thead(s, &cols);
    s.push_str("<tbody>");
    for g in groups.iter().take(LIST_MAX) {
        s.push_str("<tr>");
        if let Some(first) = g.first() {
            clip_link(s, first);
        }
        for p in profiles {
            match g.iter().find(|r| &r.clip.profile == p) {
                Some(r) => {
                    num(
                        s,
                        r.clip.compressed_bytes as f64,
                        &int(r.clip.compressed_bytes),
                    );
                    num(s, r.clip.max_error_m as f64, &mm(r.clip.max_error_m));
                    num(
                        s,
                        r.clip.decode_ns_per_pose,
                        &format!("{:.0}", r.clip.decode_ns_per_pose),
                    );
                }
                None => s.push_str("<td></td><td></td><td></td>"),
            }
        }
        let sel: Vec<String> = g
            .iter()
            .map(|r| format!("{}: {}", r.clip.profile, selected(r)))
            .collect();
        let _ = write!(s, "<td class=\"small\">{}</td></tr>", esc(&sel.join("; ")));
    }
    s.push_str("</tbody></table></div>");
    more(s, groups.len(), "the clip table, filtered by profile");
}
