//! "Did you mean" suggestions for unknown profile keys and joint names,
//! in the style of the cooker's manifest errors.

/// Levenshtein distance over chars.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut cur = vec![i + 1; b.len() + 1];
        for (j, &cb) in b.iter().enumerate() {
            cur[j + 1] = (prev[j] + usize::from(ca != cb))
                .min(prev[j + 1] + 1)
                .min(cur[j] + 1);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The candidate closest to `wanted`, if it is close enough to be a typo
/// (case-insensitive; at most about half the name's length away).
pub fn closest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let w = wanted.to_lowercase();
    let best = candidates
        .into_iter()
        .map(|c| (edit_distance(&w, &c.to_lowercase()), c))
        .min_by_key(|(d, _)| *d)?;
    (best.0 <= w.chars().count().max(3) / 2 + 1).then_some(best.1)
}

/// ` (did you mean 'X'?)` or an empty string.
pub fn hint<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(wanted, candidates)
        .map(|c| format!(" (did you mean '{c}'?)"))
        .unwrap_or_default()
}

/// serde's unknown-field and unknown-variant messages list what was
/// expected; append the closest expected name.
pub fn with_suggestion(message: &str) -> String {
    let msg = message.trim_end().replace('\n', " ");
    for marker in ["unknown field `", "unknown variant `"] {
        let Some(rest) = msg.split(marker).nth(1) else {
            continue;
        };
        let Some(unknown) = rest.split('`').next() else {
            continue;
        };
        let expected: Vec<&str> = rest
            .split("expected ")
            .nth(1)
            .map(|s| s.split('`').skip(1).step_by(2).collect())
            .unwrap_or_default();
        if let Some(best) = closest(unknown, expected) {
            return format!("{msg} (did you mean `{best}`?)");
        }
    }
    msg
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_names_only() {
        assert_eq!(closest("LeftArn", ["LeftArm", "Head"]), Some("LeftArm"));
        assert_eq!(closest("leftarm", ["LeftArm"]), Some("LeftArm"));
        assert_eq!(closest("Pelvis", ["LeftArm", "Head"]), None);
    }
}
