//! Test helpers: cook fixtures through the cooker library and read the
//! sidecar the cook writes next to its report.

#![allow(dead_code)]

pub mod browser;
pub mod fixtures;

use ludus_anim_cooker::events::Silent;
use ludus_anim_cooker::manifest::{AssetEntry, AssetJob};
use ludus_anim_cooker::pipeline::{cook, CookOptions};
use ludus_anim_cooker::profile::CodecChoice;
use ludus_anim_cooker::stage_cache::StageCache;
use ludus_anim_report::sidecar::{Sidecar, SIDECAR_FILE};
use ludus_anim_report::Report;
use std::path::{Path, PathBuf};

#[path = "../common/mod.rs"]
mod shared;
#[allow(unused_imports)] // each test binary uses some of them
pub use shared::{ludus_anim, program, repo, retarget, shared_fixtures, text};

/// Every importable file under the shared fixtures' gltf, fbx and bvh
/// folders, sorted.
pub fn fixture_files(root: &Path) -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, out);
            } else if matches!(
                p.extension().and_then(|x| x.to_str()),
                Some("gltf" | "glb" | "fbx" | "bvh")
            ) {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    for sub in ["gltf", "fbx", "bvh"] {
        walk(&root.join(sub), &mut out);
    }
    out.sort();
    out
}

/// Per-asset settings from a TOML fragment (an `[[asset]]` body).
pub fn settings(toml_text: &str) -> AssetEntry {
    toml::from_str(toml_text).expect("test asset settings parse")
}

/// One cook: `jobs` into `out` with `profile`, sources recorded relative
/// to `root`, optionally with the reference codec.
pub fn cook_jobs(
    jobs: Vec<AssetJob>,
    root: &Path,
    out: &Path,
    profile: &str,
    reference: bool,
) -> Report {
    let mut o = CookOptions::for_files(Vec::new(), out.to_path_buf(), profile);
    o.jobs = jobs;
    o.project_root = Some(root.to_path_buf());
    o.threads = 2;
    if reference {
        o.codec_override = Some(CodecChoice::Reference);
    }
    cook(&o, &StageCache::local(None), &Silent).expect("cook runs")
}

pub fn jobs(files: &[PathBuf], extra: &[(&str, AssetEntry)]) -> Vec<AssetJob> {
    files
        .iter()
        .map(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let settings = extra
                .iter()
                .find(|(n, _)| *n == name)
                .map(|(_, s)| s.clone())
                .unwrap_or_default();
            AssetJob {
                path: p.clone(),
                settings,
            }
        })
        .collect()
}

/// The sidecar the cook in `out` wrote next to its report.
pub fn cook_sidecar(out: &Path) -> Sidecar {
    let bytes = std::fs::read(out.join(SIDECAR_FILE)).expect("the cook writes its sidecar");
    Sidecar::from_json(&bytes).expect("the cook's sidecar parses")
}

/// A report with every timing zeroed, for golden text.
pub fn without_timings(mut r: Report) -> Report {
    r.totals.cook_ms = 0.0;
    r.totals.peak_rss_mb = 0.0;
    for s in r.stages.values_mut() {
        s.ms = 0.0;
    }
    for a in &mut r.assets {
        for c in &mut a.clips {
            c.compress_ms = 0.0;
            c.decode_ns_per_pose = 0.0;
        }
    }
    r
}

/// Everything in `html` that could make a browser fetch: `src`/`href`
/// values other than `#fragment` and `data:`, any `http:`/`https:`,
/// protocol-relative `//` references, CSS `url(` and `@import`.
pub fn external_refs(html: &str) -> Vec<String> {
    let mut out = Vec::new();
    for attr in [
        "src=\"",
        "href=\"",
        "src='",
        "href='",
        "srcset=\"",
        "action=\"",
    ] {
        let mut rest = html;
        while let Some(i) = rest.find(attr) {
            let v = &rest[i + attr.len()..];
            let end = v.find(['"', '\'']).unwrap_or(v.len());
            let value = &v[..end];
            if !(value.starts_with('#') || value.starts_with("data:")) {
                out.push(format!("{attr}{}", &value[..value.len().min(80)]));
            }
            rest = &v[end..];
        }
    }
    for needle in ["http:", "https:", "url(", "@import", "ftp:", "ws:", "wss:"] {
        if html.contains(needle) {
            out.push(format!("contains {needle}"));
        }
    }
    out
}
