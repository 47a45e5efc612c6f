//! "Did you mean": the one place names typed by a person (manifest keys,
//! profile fields, joint names, clip names) are matched against what
//! exists, so every diagnostic suggests the same way.

/// Case-insensitive Levenshtein distance (small strings: names and keys).
pub fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.to_lowercase().chars().collect();
    let b: Vec<char> = b.to_lowercase().chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let sub = prev[j] + usize::from(ca != cb);
            cur[j + 1] = sub.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// The candidate closest to `wanted`, if it is close enough to be what was
/// meant (about half the word may differ).
pub fn closest<'a>(wanted: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let best = candidates
        .into_iter()
        .min_by_key(|c| edit_distance(wanted, c))?;
    (edit_distance(wanted, best) <= wanted.chars().count().max(3) / 2 + 1).then_some(best)
}

/// Names resembling `wanted`: equal ignoring case, one containing the
/// other, or within two edits; closest first, at most five.
pub fn near_matches<'a>(wanted: &str, names: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let w = wanted.to_lowercase();
    let mut scored: Vec<(usize, &str)> = names
        .into_iter()
        .filter(|n| !n.is_empty())
        .filter_map(|n| {
            let l = n.to_lowercase();
            let d = edit_distance(n, wanted);
            if l == w {
                Some((0, n))
            } else if !w.is_empty() && (l.contains(&w) || w.contains(&l)) {
                Some((1, n))
            } else if d <= 2 {
                Some((1 + d, n))
            } else {
                None
            }
        })
        .collect();
    scored.sort();
    scored
        .into_iter()
        .take(5)
        .map(|(_, n)| n.to_string())
        .collect()
}

/// A serde error message ("unknown field `x`, expected one of `a`, `b`")
/// on one line, with the closest expected name appended.
pub fn with_suggestion(message: &str) -> String {
    let msg = message.trim_end().replace('\n', " ");
    let Some(rest) = msg.split("unknown field `").nth(1) else {
        return msg;
    };
    let Some(unknown) = rest.split('`').next() else {
        return msg;
    };
    let expected: Vec<&str> = rest
        .split("expected ")
        .nth(1)
        .map(|s| s.split('`').skip(1).step_by(2).collect())
        .unwrap_or_default();
    match closest(unknown, expected) {
        Some(best) => format!("{msg} (did you mean `{best}`?)"),
        None => msg,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_ignore_case() {
        assert_eq!(edit_distance("Spine", "spine"), 0);
        assert_eq!(edit_distance("spin", "spine"), 1);
        assert_eq!(edit_distance("", "abc"), 3);
    }

    #[test]
    fn suggestions_name_the_closest_expected_field() {
        let m = with_suggestion("unknown field `profle`, expected `profile` or `units`\n");
        assert!(m.ends_with("(did you mean `profile`?)"), "{m}");
        let m = with_suggestion("unknown field `zzzzzz`, expected `profile` or `units`");
        assert!(!m.contains("did you mean"), "{m}");
    }

    #[test]
    fn near_matches_list_similar_names() {
        let names = ["root", "pelvis", "spine", "hand_r"];
        assert_eq!(near_matches("Pelvis", names), vec!["pelvis".to_string()]);
        assert_eq!(near_matches("spin", names), vec!["spine".to_string()]);
        assert!(near_matches("foot_l", names).is_empty());
    }
}
