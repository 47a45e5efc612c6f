//! Test helpers: cook fixtures through the cooker library, and build a
//! realistic sidecar from the cooked packages the way the cook will (until
//! the cook writes it itself): decode each clip through
//! `ludus-anim-runtime`, measure with `ludus-anim-verify` against the same
//! clip cooked with the reference codec (the resampled source, stored
//! uncompressed), at verification's own check times.

#![allow(dead_code)]

pub mod blob;
pub mod fixtures;

use ludus_anim_cooker::events::Silent;
use ludus_anim_cooker::manifest::{AssetEntry, AssetJob};
use ludus_anim_cooker::pipeline::{cook, CookOptions};
use ludus_anim_cooker::profile::{CodecChoice, Profile};
use ludus_anim_cooker::stage_cache::StageCache;
use ludus_anim_report::packed::Packed;
use ludus_anim_report::sidecar::{
    ClipSidecar, EventMark, Sidecar, TrajectorySidecar, SIDECAR_FILE,
};
use ludus_anim_report::Report;
use ludus_anim_runtime::math::Transform;
use ludus_anim_runtime::package::{Clip, Package};
use ludus_anim_verify::{check_times, pose_errors, Scratch};
use std::path::{Path, PathBuf};

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The shared fixtures, or `None` with a message (CI has them).
pub fn shared_fixtures() -> Option<PathBuf> {
    let p = std::env::var_os("LUDUS_SHARED_FIXTURES")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo().join("../shared/fixtures"));
    if p.join("MANIFEST.tsv").is_file() {
        Some(p)
    } else {
        eprintln!(
            "skipped: shared fixtures not found at {} (set LUDUS_SHARED_FIXTURES); CI has them",
            p.display()
        );
        None
    }
}

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

/// Build the sidecar of the cook in `out` (report `rep`) against the
/// reference-codec cook in `ref_out`, and write it to `out`.
pub fn write_sidecar(rep: &Report, out: &Path, ref_rep: &Report, ref_out: &Path) -> Sidecar {
    let mut side = Sidecar::new(&rep.cooker_version);
    for a in &rep.assets {
        let (Some(pkg), Some(ra)) = (
            &a.package,
            ref_rep.assets.iter().find(|r| r.source == a.source),
        ) else {
            continue;
        };
        let Some(rpkg) = &ra.package else { continue };
        let bytes = std::fs::read(out.join(pkg)).expect("package readable");
        let rbytes = std::fs::read(ref_out.join(rpkg)).expect("reference package readable");
        let (p, rp) = (
            Package::load(&bytes).expect("package loads"),
            Package::load(&rbytes).expect("reference loads"),
        );
        let rates = blob::clip_bit_rates(&bytes, p.skeleton().joint_count());
        for (i, c) in p.clips().iter().enumerate() {
            let Some(rc) = rp.clip(c.name()) else {
                continue;
            };
            let mut cs = clip_sidecar(&a.source, &p, c, &rp, rc);
            cs.bit_rates = rates.get(i).cloned().flatten();
            side.clips.push(cs);
        }
    }
    let json = serde_json::to_vec(&side).expect("sidecar serializes");
    std::fs::write(out.join(SIDECAR_FILE), json).expect("sidecar written");
    side
}

fn clip_sidecar(
    source: &str,
    p: &Package<'_>,
    c: &Clip<'_>,
    rp: &Package<'_>,
    rc: &Clip<'_>,
) -> ClipSidecar {
    let sk = p.skeleton();
    let n = sk.joint_count();
    let names: Vec<String> = sk.names().to_vec();
    let parents: Vec<Option<usize>> = (0..n).map(|j| sk.parent(j)).collect();
    let profile = Profile::load(c.profile()).expect("bundled profile");
    let (thresholds, shells) = profile.joint_settings(&names, None);
    let times = check_times(
        c.duration_s(),
        c.sample_rate_hz(),
        c.num_samples(),
        c.loop_mode().is_looping(),
    );
    let mut cs = ClipSidecar::new(source, c.name(), c.profile(), c.duration_s());
    cs.set_joints(&names, &parents, &thresholds);
    let (mut expected, mut actual) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    let (mut pos, mut rot) = (vec![0.0f32; n], vec![0.0f32; n]);
    let mut scratch = Scratch::new(n);
    let mut errors = Vec::with_capacity(times.len() * n);
    for &t in &times {
        let ok = rc.sample(t, rp.sample_defaults(rc), &mut expected)
            && c.sample(t, p.sample_defaults(c), &mut actual);
        pose_errors(
            sk,
            &expected,
            &actual,
            &shells,
            &mut scratch,
            &mut pos,
            &mut rot,
        );
        errors.extend(pos.iter().map(|&e| if ok { e } else { f32::INFINITY }));
    }
    cs.set_errors(&times, &errors).expect("error grid fits");
    cs.root_motion = trajectory(c);
    cs.events = c
        .markers()
        .map(|m| EventMark {
            name: m.name.to_string(),
            time_s: m.event.time_s,
            kind: m.kind.as_str().to_string(),
        })
        .collect();
    cs
}

fn trajectory(c: &Clip<'_>) -> Option<TrajectorySidecar> {
    let rm = c.root_motion()?;
    let t = c.trajectory()?;
    let keys = t.keys();
    let yaw = |q: glam::Quat| {
        let f = q * glam::Vec3::Z;
        f.x.atan2(f.z)
    };
    Some(TrajectorySidecar {
        joint: rm.joint.to_string(),
        policy: rm.policy.as_str().to_string(),
        rate_hz: t.sample_rate(),
        x_m: Packed(keys.iter().map(|k| k.translation.x).collect()),
        z_m: Packed(keys.iter().map(|k| k.translation.z).collect()),
        yaw_rad: Packed(keys.iter().map(|k| yaw(k.rotation)).collect()),
        drift_100_loops_m: rm.drift_100_loops_m,
    })
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
