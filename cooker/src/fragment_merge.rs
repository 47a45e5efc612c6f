//! Merging per-asset action outputs (`ludus-anim merge` over directories
//! written by `ludus-anim cook-asset`, `crate::hermetic`) into the
//! `manifest.json`, `report.json` and `report-sidecar.json` an unsharded
//! cook of the same assets writes, with the packages under their real
//! names in `OUT/packages/`.
//!
//! Rules (those of the shard merge, `crate::merge`, for one asset per
//! part):
//! - assets are in the project's job order when an order is given (the
//!   `assets` of `ludus-anim query`'s JSON, which lists them in job order;
//!   then every listed asset must have exactly one fragment and no other
//!   fragment is accepted), else in the order the directories are given;
//! - every fragment comes from the same cooker version, package format and
//!   default profile; one source in two fragments is refused, naming both;
//! - every package is checked (blake3 against its manifest fragment) before
//!   it is published;
//! - report: stage and remote counters add up, cache notices are
//!   concatenated in asset order, totals are recomputed from the assets;
//!   `cook_ms` is the longest action's and `peak_rss_mb` the largest (as for
//!   shards cooked in parallel); `build` is the first fragment's; sync
//!   groups are measured again over every asset;
//! - the sidecar parts become the `report-sidecar.json` an unsharded cook
//!   writes, byte for byte (none when a fragment has none).

use crate::hermetic::{
    MANIFEST_FRAGMENT, PACKAGE_FILE, REPORT_FRAGMENT, SIDECAR_FRAGMENT, SIDECAR_MAGIC,
};
use crate::pipeline::sidecar_doc;
use crate::publish::Staging;
use crate::report::{PackageManifest, Report};
use crate::sink::Sink;
use ludus_anim_report::sidecar_parts::SidecarPart;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Why fragments were not merged.
#[derive(Debug, thiserror::Error)]
pub enum FragmentError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not an asset fragment of this cooker: {message}")]
    Parse { path: String, message: String },
    #[error("no fragment directories given")]
    Empty,
    #[error("{a} and {b} differ in {what} ({x} vs {y})")]
    Mismatch {
        a: String,
        b: String,
        what: &'static str,
        x: String,
        y: String,
    },
    #[error("'{source_path}' has two fragments: {a} and {b}")]
    Duplicate {
        source_path: String,
        a: String,
        b: String,
    },
    #[error("'{source_path}' ({dir}) is not an asset of the order file")]
    Unlisted { source_path: String, dir: String },
    #[error("no fragment for '{0}', which the order file lists")]
    Missing(String),
    #[error("package {package} ({dir}): {problem}")]
    Package {
        package: String,
        dir: String,
        problem: String,
    },
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error(transparent)]
    Publish(#[from] crate::sink::PublishError),
}

/// One asset action's outputs as read back.
struct Fragment {
    dir: PathBuf,
    name: String,
    source: String,
    manifest: PackageManifest,
    report: Report,
}

/// What a merge wrote.
#[derive(Debug)]
pub struct MergedFragments {
    pub fragments: usize,
    pub manifest: PackageManifest,
    pub report: Report,
    /// Cook-wide findings only the whole cook can make (sync groups).
    pub notices: Vec<String>,
}

/// The asset order of a `ludus-anim query` JSON document: its assets'
/// `source` fields, in job order.
pub fn order_from_query(path: &Path) -> Result<Vec<String>, FragmentError> {
    let v: serde_json::Value = read_json(path)?;
    let bad = |m: &str| FragmentError::Parse {
        path: path.display().to_string(),
        message: m.to_string(),
    };
    v["assets"]
        .as_array()
        .ok_or_else(|| bad("no `assets` array (expected `ludus-anim query` output)"))?
        .iter()
        .map(|a| {
            a["source"]
                .as_str()
                .map(str::to_string)
                .ok_or_else(|| bad("an asset has no `source`"))
        })
        .collect()
}

/// Merges the fragments in `dirs` into `out`, in `order` (recorded source
/// paths) when given.
pub fn merge_fragments(
    dirs: &[PathBuf],
    order: Option<&[String]>,
    out: &Path,
) -> Result<MergedFragments, FragmentError> {
    let mut frags: Vec<Fragment> = dirs.iter().map(|d| read(d)).collect::<Result<_, _>>()?;
    let Some(first) = frags.first() else {
        return Err(FragmentError::Empty);
    };
    for f in &frags {
        same_cook(first, f)?;
    }
    let mut seen: BTreeMap<&str, &str> = BTreeMap::new();
    for f in &frags {
        if let Some(prev) = seen.insert(&f.source, &f.name) {
            return Err(FragmentError::Duplicate {
                source_path: f.source.clone(),
                a: prev.to_string(),
                b: f.name.clone(),
            });
        }
    }
    if let Some(order) = order {
        sort_by_order(&mut frags, order)?;
    }
    let manifest = PackageManifest {
        cooker_version: frags[0].manifest.cooker_version.clone(),
        package_format_version: frags[0].manifest.package_format_version,
        assets: frags
            .iter()
            .flat_map(|f| f.manifest.assets.iter().cloned())
            .collect(),
        shard: None,
    };
    let (report, notices) = merge_reports(&frags);
    let sink = Staging::begin(out).map_err(|source| FragmentError::Write {
        path: out.display().to_string(),
        source,
    })?;
    for f in &frags {
        put_package(f, &sink)?;
    }
    let (report_json, manifest_json) = (json(&report)?, json(&manifest)?);
    let sidecar = merge_sidecars(&frags)?;
    let sidecar_name = ludus_anim_report::sidecar::SIDECAR_FILE;
    let mut files: Vec<(&str, &[u8])> = vec![
        ("report.json", &report_json),
        ("manifest.json", &manifest_json),
    ];
    if let Some(bytes) = &sidecar {
        files.push((sidecar_name, bytes));
    }
    sink.publish(&files)?;
    Ok(MergedFragments {
        fragments: frags.len(),
        manifest,
        report,
        notices,
    })
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, FragmentError> {
    let bytes = std::fs::read(path).map_err(|source| FragmentError::Io {
        path: path.display().to_string(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| FragmentError::Parse {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

fn read(dir: &Path) -> Result<Fragment, FragmentError> {
    let rpath = dir.join(REPORT_FRAGMENT);
    let report: Report = read_json(&rpath)?;
    let manifest: PackageManifest = read_json(&dir.join(MANIFEST_FRAGMENT))?;
    let [asset] = report.assets.as_slice() else {
        return Err(FragmentError::Parse {
            path: rpath.display().to_string(),
            message: format!("{} assets (a fragment has one)", report.assets.len()),
        });
    };
    if manifest.shard.is_some() || report.shard.is_some() {
        return Err(FragmentError::Parse {
            path: rpath.display().to_string(),
            message: "a shard's file (merge shards from their own directories)".to_string(),
        });
    }
    if manifest.assets.iter().any(|m| m.source != asset.source) {
        return Err(FragmentError::Parse {
            path: dir.join(MANIFEST_FRAGMENT).display().to_string(),
            message: format!(
                "it names another asset than its report ('{}')",
                asset.source
            ),
        });
    }
    Ok(Fragment {
        dir: dir.to_path_buf(),
        name: dir.display().to_string(),
        source: asset.source.clone(),
        manifest,
        report,
    })
}

/// Two fragments of one cook: same cooker, format and default profile.
fn same_cook(a: &Fragment, b: &Fragment) -> Result<(), FragmentError> {
    let checks = [
        (
            "cooker version",
            &a.manifest.cooker_version,
            &b.manifest.cooker_version,
        ),
        (
            "cooker version (report)",
            &a.report.cooker_version,
            &b.report.cooker_version,
        ),
        ("default profile", &a.report.profile, &b.report.profile),
    ];
    for (what, x, y) in checks {
        if x != y {
            return Err(mismatch(a, b, what, x.clone(), y.clone()));
        }
    }
    let (x, y) = (
        a.manifest.package_format_version,
        b.manifest.package_format_version,
    );
    if x != y {
        return Err(mismatch(
            a,
            b,
            "package format version",
            x.to_string(),
            y.to_string(),
        ));
    }
    Ok(())
}

fn mismatch(a: &Fragment, b: &Fragment, what: &'static str, x: String, y: String) -> FragmentError {
    FragmentError::Mismatch {
        a: a.name.clone(),
        b: b.name.clone(),
        what,
        x,
        y,
    }
}

fn sort_by_order(frags: &mut [Fragment], order: &[String]) -> Result<(), FragmentError> {
    let index: BTreeMap<&str, usize> = order
        .iter()
        .enumerate()
        .rev()
        .map(|(i, s)| (s.as_str(), i))
        .collect();
    for f in frags.iter() {
        if !index.contains_key(f.source.as_str()) {
            return Err(FragmentError::Unlisted {
                source_path: f.source.clone(),
                dir: f.name.clone(),
            });
        }
    }
    if let Some(missing) = order
        .iter()
        .find(|s| !frags.iter().any(|f| &f.source == *s))
    {
        return Err(FragmentError::Missing(missing.clone()));
    }
    frags.sort_by_key(|f| index.get(f.source.as_str()).copied());
    Ok(())
}

fn merge_reports(frags: &[Fragment]) -> (Report, Vec<String>) {
    let first = &frags[0].report;
    let mut report = Report {
        cooker_version: first.cooker_version.clone(),
        build: first.build.clone(),
        profile: first.profile.clone(),
        assets: frags
            .iter()
            .flat_map(|f| f.report.assets.iter().cloned())
            .collect(),
        totals: Default::default(),
        stages: BTreeMap::new(),
        cache_notices: Vec::new(),
        remote: None,
        shard: None,
        sync_groups: Vec::new(),
    };
    let (mut cook_ms, mut rss) = (0.0f64, 0.0f64);
    for f in frags {
        let r = &f.report;
        for (name, st) in &r.stages {
            report.stages.entry(name.clone()).or_default().add(st);
        }
        report.cache_notices.extend(r.cache_notices.iter().cloned());
        if let Some(remote) = &r.remote {
            match &mut report.remote {
                Some(m) => m.add(remote),
                None => report.remote = Some(remote.clone()),
            }
        }
        cook_ms = cook_ms.max(r.totals.cook_ms);
        rss = rss.max(r.totals.peak_rss_mb);
    }
    let notices = crate::sync_groups::remeasure_merged(
        frags.iter().flat_map(|f| &f.report.sync_groups),
        &mut report,
    );
    report.compute_totals(cook_ms, rss);
    (report, notices)
}

/// The fragment's package, checked against its manifest fragment, staged
/// under its real name.
fn put_package(f: &Fragment, sink: &Staging) -> Result<(), FragmentError> {
    for a in &f.manifest.assets {
        let bad = |problem: String| FragmentError::Package {
            package: a.package.clone(),
            dir: f.name.clone(),
            problem,
        };
        let path = f.dir.join(PACKAGE_FILE);
        let bytes = std::fs::read(&path)
            .map_err(|e| bad(format!("cannot read {}: {e}", path.display())))?;
        if blake3::hash(&bytes).to_hex().as_str() != a.package_hash {
            return Err(bad(format!(
                "{}'s bytes do not match the manifest fragment's hash",
                path.display()
            )));
        }
        sink.write(&a.package, &bytes)
            .map_err(|e| bad(format!("cannot write {}: {e}", sink.describe(&a.package))))?;
    }
    Ok(())
}

/// The fragments' sidecar parts as one document, parts in asset order,
/// written as an unsharded cook writes it (its `content` digest over the
/// parts and the size limit, which applies to the whole); `None` when a
/// fragment has none (cooked with the sidecar off).
fn merge_sidecars(frags: &[Fragment]) -> Result<Option<Vec<u8>>, FragmentError> {
    let mut parts: Vec<Arc<SidecarPart>> = Vec::new();
    let mut limit: Option<(Option<f64>, &str)> = None;
    for f in frags {
        let path = f.dir.join(SIDECAR_FRAGMENT);
        let Ok(bytes) = std::fs::read(&path) else {
            return Ok(None);
        };
        let bad = |m: &str| FragmentError::Parse {
            path: path.display().to_string(),
            message: m.to_string(),
        };
        let (max_mb, found) = read_part(&bytes).ok_or_else(|| bad("not a sidecar part"))?;
        match limit {
            Some((l, _)) if l.map(f64::to_bits) != max_mb.map(f64::to_bits) => {
                return Err(FragmentError::Mismatch {
                    a: limit.map(|(_, n)| n.to_string()).unwrap_or_default(),
                    b: f.name.clone(),
                    what: "sidecar size limit",
                    x: format!("{l:?}"),
                    y: format!("{max_mb:?}"),
                })
            }
            _ => limit = Some((max_mb, &f.name)),
        }
        parts.extend(found.map(Arc::new));
    }
    let max_mb = limit.and_then(|(l, _)| l);
    let digests: Vec<[u8; 32]> = parts.iter().map(|p| sidecar_doc::digest_of(p)).collect();
    let content = sidecar_doc::content_digest(digests.iter(), max_mb);
    sidecar_doc::document(&parts, max_mb, &content)
        .map(Some)
        .map_err(|source| FragmentError::Write {
            path: ludus_anim_report::sidecar::SIDECAR_FILE.to_string(),
            source,
        })
}

/// A sidecar fragment's size limit and part (`None`: the asset has none).
fn read_part(bytes: &[u8]) -> Option<(Option<f64>, Option<SidecarPart>)> {
    let mut rest = bytes;
    let mut line = || {
        let end = rest.iter().position(|&b| b == b'\n')?;
        let l = std::str::from_utf8(&rest[..end]).ok()?;
        rest = &rest[end + 1..];
        Some(l)
    };
    if line()? != SIDECAR_MAGIC {
        return None;
    }
    let max_mb = match line()?.strip_prefix("max_mb ")? {
        "none" => None,
        hex => Some(f64::from_bits(u64::from_str_radix(hex, 16).ok()?)),
    };
    let count: usize = line()?.strip_prefix("parts ")?.parse().ok()?;
    let part = match count {
        0 => None,
        1 => Some(SidecarPart::from_bytes(rest)?),
        _ => return None,
    };
    Some((max_mb, part))
}

fn json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, FragmentError> {
    serde_json::to_vec_pretty(v).map_err(|e| FragmentError::Write {
        path: "JSON output".to_string(),
        source: std::io::Error::other(e),
    })
}
