//! Retarget preview pages: one self-contained HTML page per retargeted
//! clip of a cook (what `ludus-anim retarget preview` writes), showing the
//! source clip and the result side by side as stick figures on one clock
//! (side and top views, the root trajectory, contacts on the timeline)
//! and the retarget panel (foot heights and speeds with contacts and
//! skates). The player is the dashboard's own (`sections::player`,
//! `assets/player.js`); like the dashboard, a page references no URL.

use crate::html::sections::{clip, player};
use crate::html::svg::esc;
use crate::model::file_name;
use ludus_anim_report::sidecar::{ClipSidecar, Sidecar};
use std::fmt::Write;

const STYLE: &str = include_str!("../../assets/style.css");
const PLAYER: &str = include_str!("../../assets/player.js");

/// The id of the element that holds a preview page's player.
pub const PREVIEW_ID: &str = "preview";

/// One page: its file name (unique within the cook) and its HTML.
#[derive(Clone, Debug)]
pub struct PreviewPage {
    pub name: String,
    pub source: String,
    pub clip: String,
    pub profile: String,
    pub html: String,
}

/// `Walk Cycle.bvh`, `walk 1`, `standard` → `walk-cycle-bvh-walk-1-standard`.
fn slug(parts: &[&str]) -> String {
    let mut s = String::new();
    for c in parts.join("-").chars().flat_map(char::to_lowercase) {
        if c.is_ascii_alphanumeric() {
            s.push(c);
        } else if !s.is_empty() && !s.ends_with('-') {
            s.push('-');
        }
    }
    s.trim_end_matches('-').to_string()
}

/// A page per retargeted clip with sampled poses (source and result), in
/// the sidecar's order; clips cooked without poses are left out (the
/// caller says how many).
pub fn render_previews(sidecar: &Sidecar) -> Vec<PreviewPage> {
    let mut taken = std::collections::BTreeSet::new();
    sidecar
        .clips
        .iter()
        .filter(|c| is_previewable(c))
        .map(|c| {
            let file = file_name(&c.source);
            let base = slug(&[&file, &c.clip, &c.profile]);
            // Two sources with one file name in different folders: number
            // the later ones, so no page overwrites another.
            let mut name = format!("{base}.html");
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}-{n}.html");
                n += 1;
            }
            PreviewPage {
                name,
                source: c.source.clone(),
                clip: c.clip.clone(),
                profile: c.profile.clone(),
                html: render_preview(c),
            }
        })
        .collect()
}

/// A retargeted clip whose sidecar holds both skeletons' poses.
pub fn is_previewable(c: &ClipSidecar) -> bool {
    c.retarget.is_some() && c.poses.is_some() && c.source_poses.is_some()
}

/// Retargeted clips the cook left without poses (`sidecar_max_mb`).
pub fn left_out(sidecar: &Sidecar) -> usize {
    sidecar
        .clips
        .iter()
        .filter(|c| c.retarget.is_some() && !is_previewable(c))
        .count()
}

/// One clip's page.
pub fn render_preview(c: &ClipSidecar) -> String {
    let profile = c.retarget.as_ref().map_or("", |r| r.profile.as_str());
    let title = format!("{} · {}: retarget preview", file_name(&c.source), c.clip);
    let mut s = String::with_capacity(64 * 1024);
    let _ = write!(
        s,
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{}</title><style>{STYLE}</style></head><body>\
         <header><h1>{}</h1><p class=\"sub\">{} · retarget profile {} · cook profile {} · {:.2} s</p></header>\
         <main><article id=\"{PREVIEW_ID}\" class=\"clip\">",
        esc(&title),
        esc(&title),
        esc(&c.source),
        esc(profile),
        esc(&c.profile),
        c.duration_s
    );
    player::render(&mut s, c);
    if let Some(rt) = &c.retarget {
        clip::retarget(&mut s, rt, c.duration_s);
    }
    let _ = writeln!(
        s,
        "</article></main><script>{PLAYER}window.ludusInitPlayers(document);</script></body></html>"
    );
    s
}

#[cfg(test)]
mod tests {
    use super::slug;

    #[test]
    fn slugs_are_file_name_safe() {
        assert_eq!(
            slug(&["Walk Cycle.bvh", "walk 1", "standard"]),
            "walk-cycle-bvh-walk-1-standard"
        );
        assert_eq!(slug(&["../a", "b"]), "a-b");
    }
}
