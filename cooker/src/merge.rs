//! Merging shard outputs (`ludus-anim merge`): the per-shard manifests and
//! reports of `cook --shard I/N` (`manifest.shard-I-of-N.json`,
//! `report.shard-I-of-N.json`, in one output directory or several) become
//! one `manifest.json` and one `report.json`, identical to an unsharded
//! cook's but for timing fields.
//!
//! Rules:
//! - every shard `1..=N` exactly once, all with the same `N`, cooker
//!   version, package format version, default profile and job list (each
//!   shard records the whole cook's jobs in job order); otherwise the merge
//!   is refused, naming the shard files;
//! - assets are ordered by that job list (the unsharded cook's order);
//!   every job must be reported by a shard; one source in two shards must
//!   have the same package, else the merge is refused naming both;
//! - every package is checked (blake3 against the manifest) and copied into
//!   the output directory when it is not there yet;
//! - every shard's source hashes and stage versions agree (shards cooked
//!   from different checkouts or builds are refused, naming the source);
//! - the shards' `report-sidecar.*.json` become one `report-sidecar.json`
//!   (clips in job order; none when a shard wrote none);
//! - report: `stages` and `remote` counters add up (each asset was cooked by
//!   one shard), `cache_notices` are concatenated in shard order, totals
//!   are recomputed from the assets; `cook_ms` is the longest shard's (the
//!   wall time of shards cooked in parallel) and `peak_rss_mb` the largest;
//!   `build` is the first shard's.

use crate::pipeline::sidecar::sidecar_file;
use crate::publish::Staging;
use crate::report::farm::{manifest_file, report_file};
use crate::report::{ManifestAsset, PackageManifest, Report, ShardInfo};
use crate::sink::Sink;
use ludus_anim_report::sidecar::Sidecar;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why shard outputs were not merged.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("{path}: not a shard file of this cooker: {message}")]
    Parse { path: String, message: String },
    #[error("no shard files (manifest.shard-I-of-N.json) in {0}")]
    NoShards(String),
    #[error("{manifest} has no matching {report} next to it")]
    Unpaired { manifest: String, report: String },
    #[error("{a} is shard {i}/{n} but {b} is shard {j}/{m}: the shards were not cut the same way")]
    Count {
        a: String,
        i: u32,
        n: u32,
        b: String,
        j: u32,
        m: u32,
    },
    #[error("shard {index}/{count} appears twice: {a} and {b}")]
    Duplicate {
        index: u32,
        count: u32,
        a: String,
        b: String,
    },
    #[error("shards {missing} of {count} are missing")]
    Missing { missing: String, count: u32 },
    #[error("{a} and {b} differ in {what} ({x} vs {y})")]
    Mismatch {
        a: String,
        b: String,
        what: &'static str,
        x: String,
        y: String,
    },
    #[error("'{source_path}' was cooked differently by {a} (package {pa}) and {b} (package {pb})")]
    Conflict {
        source_path: String,
        a: String,
        pa: String,
        b: String,
        pb: String,
    },
    #[error("'{source_path}' had different bytes in {a} ({ha}) and {b} ({hb}): the shards were cooked from different checkouts")]
    MixedSources {
        source_path: String,
        a: String,
        ha: String,
        b: String,
        hb: String,
    },
    #[error("'{source_path}' in {shard} is not among the shards' jobs")]
    UnknownSource { source_path: String, shard: String },
    #[error("'{0}' was cooked by no shard")]
    NotCooked(String),
    #[error("package {package} ({source_path}): {problem}")]
    Package {
        package: String,
        source_path: String,
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

/// One shard's outputs as read.
struct Shard {
    dir: PathBuf,
    /// Its manifest file, for messages.
    name: String,
    info: ShardInfo,
    manifest: PackageManifest,
    report: Report,
}

/// What a merge wrote.
#[derive(Debug)]
pub struct Merged {
    pub shards: usize,
    pub manifest: PackageManifest,
    pub report: Report,
    /// Packages copied into the output directory.
    pub copied: usize,
    /// Cook-wide findings only the merged cook can make (a sync group
    /// whose members, in different shards, play past its `max_rate`).
    pub notices: Vec<String>,
}

/// Merges the shard outputs found in `dirs` into `out` (which may be one
/// of them).
pub fn merge(dirs: &[PathBuf], out: &Path) -> Result<Merged, MergeError> {
    let mut shards = Vec::new();
    for d in dirs {
        shards.extend(read_dir(d)?);
    }
    if shards.is_empty() {
        return Err(MergeError::NoShards("(no directory given)".to_string()));
    }
    check_set(&mut shards)?;
    let order = job_order(&shards[0].info);
    let manifest = merge_manifests(&shards, &order)?;
    let mut report = merge_reports(&shards, &order)?;
    let notices = crate::sync_groups::remeasure_merged(
        shards.iter().flat_map(|s| &s.report.sync_groups),
        &mut report,
    );
    let sink = Staging::begin(out).map_err(|source| MergeError::Write {
        path: out.display().to_string(),
        source,
    })?;
    let copied = gather_packages(&shards, &manifest, &sink)?;
    let (report_json, manifest_json) = (json(&report)?, json(&manifest)?);
    let sidecar = merge_sidecars(&shards, &order)?;
    let names = (report_file(None), manifest_file(None), sidecar_file(None));
    let mut files: Vec<(&str, &[u8])> = vec![(&names.0, &report_json), (&names.1, &manifest_json)];
    if let Some(bytes) = &sidecar {
        files.push((&names.2, bytes));
    }
    sink.publish(&files)?;
    Ok(Merged {
        shards: shards.len(),
        manifest,
        report,
        copied,
        notices,
    })
}

/// The shards' sidecars as one (`report-sidecar.json`), clips in job
/// order; `None` when a shard wrote none (a cook with `--no-sidecar`).
fn merge_sidecars(
    shards: &[Shard],
    order: &BTreeMap<String, usize>,
) -> Result<Option<Vec<u8>>, MergeError> {
    let mut clips = Vec::new();
    for s in shards {
        let path = s.dir.join(sidecar_file(Some(&s.info)));
        let Ok(bytes) = std::fs::read(&path) else {
            return Ok(None);
        };
        let doc = Sidecar::from_json(&bytes).map_err(|e| MergeError::Parse {
            path: path.display().to_string(),
            message: e.to_string(),
        })?;
        clips.extend(doc.clips);
    }
    clips.sort_by_key(|c| order.get(&c.source).copied().unwrap_or(usize::MAX));
    let mut merged = Sidecar::new(&shards[0].report.cooker_version);
    merged.clips = clips;
    // Compact, as a cook writes it (the per-time grids dominate).
    serde_json::to_vec(&merged)
        .map(Some)
        .map_err(|e| MergeError::Write {
            path: "report-sidecar.json".to_string(),
            source: std::io::Error::other(e),
        })
}

/// Every shard in `dir` (`manifest.shard-*.json` with its report).
fn read_dir(dir: &Path) -> Result<Vec<Shard>, MergeError> {
    let io = |source| MergeError::Io {
        path: dir.display().to_string(),
        source,
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map_err(io)?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("manifest.shard-") && n.ends_with(".json"))
        .collect();
    names.sort();
    if names.is_empty() {
        return Err(MergeError::NoShards(dir.display().to_string()));
    }
    names.iter().map(|n| read_shard(dir, n)).collect()
}

fn read_json<T: serde::de::DeserializeOwned>(path: &Path) -> Result<T, MergeError> {
    let bytes = std::fs::read(path).map_err(|source| MergeError::Io {
        path: path.display().to_string(),
        source,
    })?;
    serde_json::from_slice(&bytes).map_err(|e| MergeError::Parse {
        path: path.display().to_string(),
        message: e.to_string(),
    })
}

fn read_shard(dir: &Path, manifest_name: &str) -> Result<Shard, MergeError> {
    let mpath = dir.join(manifest_name);
    let manifest: PackageManifest = read_json(&mpath)?;
    let not_shard = |message: &str| MergeError::Parse {
        path: mpath.display().to_string(),
        message: message.to_string(),
    };
    let info = manifest
        .shard
        .clone()
        .ok_or_else(|| not_shard("no `shard` field"))?;
    if manifest_file(Some(&info)) != manifest_name {
        return Err(not_shard(&format!(
            "its `shard` field says {}",
            info.label()
        )));
    }
    let rpath = dir.join(report_file(Some(&info)));
    if !rpath.is_file() {
        return Err(MergeError::Unpaired {
            manifest: mpath.display().to_string(),
            report: rpath.display().to_string(),
        });
    }
    let report: Report = read_json(&rpath)?;
    if report.shard.as_ref() != Some(&info) {
        return Err(MergeError::Parse {
            path: rpath.display().to_string(),
            message: format!("its `shard` field does not match {manifest_name}'s"),
        });
    }
    Ok(Shard {
        dir: dir.to_path_buf(),
        name: mpath.display().to_string(),
        info,
        manifest,
        report,
    })
}

/// One of each shard `1..=N`, from the same cook; sorted by shard number.
fn check_set(shards: &mut [Shard]) -> Result<(), MergeError> {
    shards.sort_by_key(|s| s.info.index);
    let first = &shards[0];
    for s in shards.iter() {
        if s.info.count != first.info.count {
            return Err(MergeError::Count {
                a: first.name.clone(),
                i: first.info.index,
                n: first.info.count,
                b: s.name.clone(),
                j: s.info.index,
                m: s.info.count,
            });
        }
    }
    for w in shards.windows(2) {
        if w[0].info.index == w[1].info.index {
            return Err(MergeError::Duplicate {
                index: w[0].info.index,
                count: w[0].info.count,
                a: w[0].name.clone(),
                b: w[1].name.clone(),
            });
        }
    }
    let count = first.info.count;
    let missing: Vec<String> = (1..=count)
        .filter(|i| !shards.iter().any(|s| s.info.index == *i))
        .map(|i| i.to_string())
        .collect();
    if !missing.is_empty() {
        return Err(MergeError::Missing {
            missing: missing.join(", "),
            count,
        });
    }
    shards.iter().try_for_each(|s| same_cook(first, s))
}

/// Two shards of one cook: same cooker, format, profile and jobs.
fn same_cook(a: &Shard, b: &Shard) -> Result<(), MergeError> {
    let differ = |what: &'static str, x: String, y: String| {
        if x == y {
            Ok(())
        } else {
            Err(MergeError::Mismatch {
                a: a.name.clone(),
                b: b.name.clone(),
                what,
                x,
                y,
            })
        }
    };
    differ(
        "cooker version",
        a.manifest.cooker_version.clone(),
        b.manifest.cooker_version.clone(),
    )?;
    differ(
        "cooker version (report)",
        a.report.cooker_version.clone(),
        b.report.cooker_version.clone(),
    )?;
    differ(
        "package format version",
        a.manifest.package_format_version.to_string(),
        b.manifest.package_format_version.to_string(),
    )?;
    differ(
        "default profile",
        a.report.profile.clone(),
        b.report.profile.clone(),
    )?;
    differ(
        "job list",
        format!("{} jobs", a.info.jobs.len()),
        format!("{} jobs", b.info.jobs.len()),
    )?;
    if let Some((x, y)) = a.info.jobs.iter().zip(&b.info.jobs).find(|(x, y)| x != y) {
        return differ("job list", x.clone(), y.clone());
    }
    differ(
        "stage versions",
        a.info.stage_versions.join(" "),
        b.info.stage_versions.join(" "),
    )?;
    same_sources(a, b)
}

/// Every job's source bytes agree between two shards (where both hashed
/// it; shards of older cookers record no hashes).
fn same_sources(a: &Shard, b: &Shard) -> Result<(), MergeError> {
    let pairs = a.info.source_hashes.iter().zip(&b.info.source_hashes);
    for (i, (ha, hb)) in pairs.enumerate() {
        if ha != hb {
            return Err(MergeError::MixedSources {
                source_path: a.info.jobs.get(i).cloned().unwrap_or_default(),
                a: a.name.clone(),
                ha: short(ha),
                b: b.name.clone(),
                hb: short(hb),
            });
        }
    }
    Ok(())
}

/// A hash as messages show it (`unreadable` for none).
fn short(hash: &str) -> String {
    match hash {
        "" => "unreadable".to_string(),
        h => h.chars().take(16).collect(),
    }
}

/// Recorded source path → position in the whole cook's job order.
fn job_order(info: &ShardInfo) -> BTreeMap<String, usize> {
    let mut order = BTreeMap::new();
    for (i, j) in info.jobs.iter().enumerate() {
        order.entry(j.clone()).or_insert(i);
    }
    order
}

/// Items of every shard by source, in job order; one source twice must be
/// the same item (`same`), else a conflict.
fn by_job<'a, T>(
    shards: &'a [Shard],
    order: &BTreeMap<String, usize>,
    items: impl Fn(&'a Shard) -> Vec<(&'a str, &'a T)>,
    package: impl Fn(&T) -> String,
) -> Result<Vec<(usize, &'a T)>, MergeError> {
    let mut out: BTreeMap<usize, (&str, &T)> = BTreeMap::new();
    for s in shards {
        for (source, item) in items(s) {
            let Some(&i) = order.get(source) else {
                return Err(MergeError::UnknownSource {
                    source_path: source.to_string(),
                    shard: s.name.clone(),
                });
            };
            match out.get(&i) {
                Some((name, prev)) if package(prev) != package(item) => {
                    return Err(MergeError::Conflict {
                        source_path: source.to_string(),
                        a: name.to_string(),
                        pa: package(prev),
                        b: s.name.clone(),
                        pb: package(item),
                    })
                }
                Some(_) => {}
                None => {
                    out.insert(i, (&s.name, item));
                }
            }
        }
    }
    Ok(out.into_iter().map(|(i, (_, t))| (i, t)).collect())
}

fn merge_manifests(
    shards: &[Shard],
    order: &BTreeMap<String, usize>,
) -> Result<PackageManifest, MergeError> {
    let assets = by_job(
        shards,
        order,
        |s| {
            s.manifest
                .assets
                .iter()
                .map(|a| (a.source.as_str(), a))
                .collect()
        },
        |a: &ManifestAsset| a.package_hash.clone(),
    )?;
    Ok(PackageManifest {
        cooker_version: shards[0].manifest.cooker_version.clone(),
        package_format_version: shards[0].manifest.package_format_version,
        assets: assets.into_iter().map(|(_, a)| a.clone()).collect(),
        shard: None,
    })
}

fn merge_reports(shards: &[Shard], order: &BTreeMap<String, usize>) -> Result<Report, MergeError> {
    let assets = by_job(
        shards,
        order,
        |s| {
            s.report
                .assets
                .iter()
                .map(|a| (a.source.as_str(), a))
                .collect()
        },
        |a: &crate::report::AssetReport| format!("{:?}", a.package),
    )?;
    let reported: Vec<usize> = assets.iter().map(|(i, _)| *i).collect();
    if let Some(job) = shards[0]
        .info
        .jobs
        .iter()
        .find(|j| order.get(*j).is_some_and(|i| !reported.contains(i)))
    {
        return Err(MergeError::NotCooked(job.clone()));
    }
    let first = &shards[0].report;
    let mut report = Report {
        cooker_version: first.cooker_version.clone(),
        build: first.build.clone(),
        profile: first.profile.clone(),
        assets: assets.into_iter().map(|(_, a)| a.clone()).collect(),
        totals: Default::default(),
        stages: BTreeMap::new(),
        cache_notices: Vec::new(),
        remote: None,
        shard: None,
        sync_groups: Vec::new(),
    };
    let (mut cook_ms, mut rss) = (0.0f64, 0.0f64);
    for s in shards {
        add_counters(&mut report, &s.report);
        cook_ms = cook_ms.max(s.report.totals.cook_ms);
        rss = rss.max(s.report.totals.peak_rss_mb);
    }
    report.compute_totals(cook_ms, rss);
    Ok(report)
}

/// Adds one shard's stage and remote counters and notices.
fn add_counters(into: &mut Report, shard: &Report) {
    for (name, st) in &shard.stages {
        into.stages.entry(name.clone()).or_default().add(st);
    }
    into.cache_notices
        .extend(shard.cache_notices.iter().cloned());
    if let Some(r) = &shard.remote {
        match &mut into.remote {
            Some(m) => m.add(r),
            None => into.remote = Some(r.clone()),
        }
    }
}

/// Every package of the merged manifest, checked, in `sink`'s directory
/// (copied from its shard's directory when missing there).
fn gather_packages(
    shards: &[Shard],
    manifest: &PackageManifest,
    sink: &Staging,
) -> Result<usize, MergeError> {
    let mut copied = 0;
    for a in &manifest.assets {
        let bad = |problem: String| MergeError::Package {
            package: a.package.clone(),
            source_path: a.source.clone(),
            problem,
        };
        let intact = |p: &Path| {
            std::fs::read(p)
                .ok()
                .filter(|b| blake3::hash(b).to_hex().as_str() == a.package_hash)
        };
        // Staged even when in place (as a hard link), so the publication
        // holds it whatever a concurrent prune does.
        let target = sink.path(&a.package);
        let (found, in_place) = match intact(&target) {
            Some(b) => (b, true),
            None => shards
                .iter()
                .filter(|s| s.manifest.assets.iter().any(|m| m.source == a.source))
                .find_map(|s| intact(&s.dir.join(&a.package)))
                .map(|b| (b, false))
                .ok_or_else(|| {
                    bad("missing, or its bytes do not match the manifest's hash".to_string())
                })?,
        };
        sink.write(&a.package, &found)
            .map_err(|e| bad(format!("cannot write {}: {e}", target.display())))?;
        copied += usize::from(!in_place);
    }
    Ok(copied)
}

fn json<T: serde::Serialize>(v: &T) -> Result<Vec<u8>, MergeError> {
    serde_json::to_vec_pretty(v).map_err(|e| MergeError::Write {
        path: "JSON output".to_string(),
        source: std::io::Error::other(e),
    })
}
