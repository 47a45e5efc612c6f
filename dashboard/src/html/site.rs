//! The dashboard as an index page plus detail fragments beside it, so the
//! page stays small at 10,000 clips: the index holds the gate, totals,
//! changes, worst offenders, the profile trade-off and the clip table's
//! data; each asset's clip details (plots, heat maps) are one fragment,
//! `DIR/<hash>.js`, loaded by the index when one of its clips is opened.
//!
//! A fragment is a script (`ludusDetails("<hash>", "<html>")`): a page
//! opened from a file may load scripts beside it but not fetch JSON. Its
//! name is a hash of its content, so an asset whose details did not
//! change keeps its file, and the writer skips it.

use super::{page, Details, HtmlOptions};
use crate::model::{Dashboard, Row};
use std::collections::BTreeMap;

/// The fragments' folder beside `report.html` (what `report` and the
/// asset server use).
pub const DETAILS_DIR: &str = "report-details";

/// One detail fragment: a file name inside the site's detail folder.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fragment {
    /// `<16 hex digits>.js`, the FNV-1a 64 hash of the detail HTML.
    pub name: String,
    pub bytes: Vec<u8>,
}

/// The index page and its fragments.
#[derive(Clone, Debug)]
pub struct Site {
    pub index: String,
    /// Folder of the fragments, relative to the index (`dir` as given).
    pub dir: String,
    pub fragments: Vec<Fragment>,
}

/// FNV-1a, 64 bits: a content name, not a security boundary.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The detail HTML of one asset's clips as a fragment script.
fn fragment(cx: &super::sections::clip::Lookup<'_>, rows: &[Row<'_>]) -> (String, Fragment) {
    let mut html = String::new();
    for r in rows {
        super::sections::clip::render(&mut html, cx, r);
    }
    let key = format!("{:016x}", fnv1a(html.as_bytes()));
    let literal = serde_json::to_string(&html).unwrap_or_else(|_| "\"\"".into());
    let script = format!("ludusDetails(\"{key}\", {literal});\n");
    let name = format!("{key}.js");
    (
        key,
        Fragment {
            name,
            bytes: script.into_bytes(),
        },
    )
}

/// The index and one fragment per asset with clips; `dir` is the
/// fragments' folder relative to the index (e.g. `report-details`).
pub fn render_site(d: &Dashboard, opts: &HtmlOptions, dir: &str) -> Site {
    let rows = d.rows();
    let cx = super::sections::clip::Lookup::new(d, &rows);
    let mut by_asset: BTreeMap<(usize, String), Vec<Row<'_>>> = BTreeMap::new();
    for r in &rows {
        by_asset
            .entry((d.cook_of(r), r.asset.source.clone()))
            .or_default()
            .push(*r);
    }
    let mut names = BTreeMap::new();
    let mut fragments: Vec<Fragment> = Vec::new();
    for (key, rows) in &by_asset {
        let (hash, f) = fragment(&cx, rows);
        names.insert(key.clone(), hash);
        if !fragments.iter().any(|x| x.name == f.name) {
            fragments.push(f);
        }
    }
    let index = page(d, opts, Details::Fragments { dir, names: &names });
    Site {
        index,
        dir: dir.to_string(),
        fragments,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn fnv1a_matches_the_published_vectors() {
        assert_eq!(super::fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(super::fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(super::fnv1a(b"foobar"), 0x8594_4171_f739_67e8);
    }
}
