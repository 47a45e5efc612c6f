//! Request inputs checked before any lookup. Names and hashes are only
//! ever looked up in published maps, never joined onto a path; these
//! checks turn malformed or hostile inputs into a clear 400 first.

/// A package hash: 64 lowercase hex digits (blake3).
pub fn is_hash(s: &str) -> bool {
    s.len() == 64 && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// Why an asset name is refused, if it is.
pub fn name_problem(s: &str) -> Option<&'static str> {
    if s.is_empty() || s.len() > 1024 {
        return Some("asset names are 1 to 1024 bytes");
    }
    if s.starts_with('/') || s.contains('\\') || s.contains('\0') {
        return Some("asset names are relative paths with '/' separators");
    }
    if s.split('/').any(|c| c == ".." || c == "." || c.is_empty()) {
        return Some("asset names have no '.', '..' or empty components");
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes() {
        assert!(is_hash(&"a".repeat(64)));
        assert!(!is_hash(&"A".repeat(64)));
        assert!(!is_hash(&"a".repeat(63)));
        assert!(!is_hash(&format!("{}/", "a".repeat(63))));
        assert!(!is_hash("../../etc/passwd"));
    }

    #[test]
    fn names() {
        assert_eq!(name_problem("anim/walk.fbx"), None);
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "a\\b",
            "./a",
            "a\0",
        ] {
            assert!(name_problem(bad).is_some(), "{bad:?}");
        }
    }
}
