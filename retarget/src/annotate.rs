//! A suggested profile as TOML with comments for the person who checks it:
//! a header saying where it came from and what to check (chains left
//! unmapped, the detected rest kinds, the pose overrides), then a short
//! comment above each section. Pure text: the caller writes it.

use crate::profile::{Profile, SideSpec};
use crate::ProfileError;

/// The section comments, each written above the first line equal to its
/// header.
const SECTIONS: &[(&str, &str)] = &[
    (
        "[source]",
        "The source rig: the skeleton the clips are authored on.",
    ),
    (
        "[source.pose]",
        "Source retarget pose: the rest pose, turned by the overrides below onto the target's limb directions (check them: a wrong override bends every frame).",
    ),
    ("[target]", "The target rig: the skeleton the package holds."),
    ("[target.pose]", "Target retarget pose."),
    (
        "[[map]]",
        "Chain map: one_to_one where both chains have as many joints, interpolated (by normalized length) otherwise; limbs keep the target's bone lengths (translation = \"none\").",
    ),
    (
        "[root.pelvis]",
        "Pelvis (and motion root): scales default to the hip-height ratio.",
    ),
    (
        "[contacts]",
        "Foot contacts: detected on the source (thresholds in source heights), planted on the target with two-bone IK.",
    ),
    (
        "[pose_check]",
        "Refuse (error) or warn when the retarget poses disagree (arm-to-spine angle).",
    ),
    (
        "[budgets]",
        "Budgets: a breach fails the asset, like the codec threshold (defaults; tune per project); on_breach = \"warn\" makes breaches located warnings and writes the package, to look at the result.",
    ),
    ("[bake]", "Rate of the baked target keys (Hz)."),
];

fn comment(out: &mut String, text: &str) {
    for line in wrap(text, 76) {
        out.push_str("# ");
        out.push_str(&line);
        out.push('\n');
    }
}

fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let Some(cur) = lines.last_mut() else { break };
        if !cur.is_empty() && cur.len() + 1 + word.len() > width {
            lines.push(word.to_string());
        } else {
            if !cur.is_empty() {
                cur.push(' ');
            }
            cur.push_str(word);
        }
    }
    lines
}

/// Chains of `side` that no map entry names (`of` picks the entry's side).
fn unmapped<'a>(
    profile: &'a Profile,
    side: &'a SideSpec,
    of: fn(&crate::profile::ChainMap) -> &str,
) -> Vec<&'a str> {
    side.chains
        .iter()
        .filter(|c| !profile.maps.iter().any(|m| of(m) == c.name))
        .map(|c| c.name.as_str())
        .collect()
}

fn header(profile: &Profile, notes: &[String]) -> String {
    let mut out = String::new();
    comment(
        &mut out,
        &format!(
            "Proposed by `ludus-anim retarget suggest` for {} -> {}. A starting point for a person to check, never applied implicitly: cook with it through `ludus-anim cook --retarget PROFILE` or a manifest asset's `retarget = \"PROFILE\"`. Format: schemas/retarget.md.",
            profile.source.skeleton, profile.target.skeleton
        ),
    );
    out.push_str("#\n");
    let rest = |s: &SideSpec| s.rest_kind.clone().unwrap_or_else(|| "unknown".into());
    let mut check = vec![
        format!(
            "rest kinds: source {}, target {}; {} source pose override(s) align the limbs",
            rest(&profile.source),
            rest(&profile.target),
            profile.source.pose.overrides.len()
        ),
        format!(
            "{} chain(s) mapped; up/forward axes: source {} / {}, target {} / {}",
            profile.maps.len(),
            profile.source.up,
            profile.source.forward,
            profile.target.up,
            profile.target.forward
        ),
    ];
    let (us, ut) = (
        unmapped(profile, &profile.source, |m| &m.source),
        unmapped(profile, &profile.target, |m| &m.target),
    );
    if !us.is_empty() {
        check.push(format!("source chains left unmapped: {}", us.join(", ")));
    }
    if !ut.is_empty() {
        check.push(format!(
            "target chains left unmapped (they keep the retarget pose): {}",
            ut.join(", ")
        ));
    }
    if profile.contacts.joints.is_empty() {
        check.push("no foot contacts found: feet are not planted".into());
    }
    check.extend(notes.iter().cloned());
    out.push_str("# Check:\n");
    for c in check {
        comment(&mut out, &format!("- {c}"));
    }
    out.push('\n');
    out
}

/// `profile` as TOML with a header (what to check, plus `notes`) and a
/// comment above each section.
pub fn annotated_toml(profile: &Profile, notes: &[String]) -> Result<String, ProfileError> {
    let body = profile.to_toml()?;
    let mut out = header(profile, notes);
    let mut done = vec![false; SECTIONS.len()];
    for line in body.lines() {
        if let Some(i) = SECTIONS.iter().position(|(h, _)| *h == line.trim()) {
            if !done[i] {
                done[i] = true;
                comment(&mut out, SECTIONS[i].1);
            }
        }
        out.push_str(line);
        out.push('\n');
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn wraps_words() {
        let w = super::wrap("a bb ccc dddd", 6);
        assert_eq!(w, ["a bb", "ccc", "dddd"]);
    }
}
