//! One cook: inputs → packages under `OUT/packages/` and `OUT/report.json`.
//! Each asset cooks independently; an asset with errors gets no package
//! and a `failed` status, the others still cook.

use crate::fsutil::write_atomic;
use crate::package_writer::{write_package, ClipEntry, CurveEntry, PackageContents};
use crate::profile::Profile;
use crate::report::{AssetReport, AssetStatus, ClipReport, JointError, Report, SkeletonReport};
use crate::stages::encode::{encode, Encoded};
use crate::stages::normalize::{normalize, Normalized};
use crate::stages::resample::{resample, ResampleReport, SourceKind, SourcePose};
use crate::stages::verify::{verify, ClipVerification};
use ludus_anim_importers::{format_of, import_bytes, ImportError, ImportOptions};
use ludus_anim_model::source::validate_asset;
use ludus_anim_model::{Decision, Diagnostic, ResampledClip};
use ludus_anim_runtime::math::virtual_vertex_error;
use ludus_anim_runtime::timing::LoopMode;
use ludus_anim_runtime::{Affine3A, Package, Transform};
use std::path::{Path, PathBuf};
use std::time::Instant;

pub const COOKER_VERSION: &str = concat!("ludus-anim ", env!("CARGO_PKG_VERSION"));

/// File extension of packages.
pub const PACKAGE_EXT: &str = "ludanim";

#[derive(Clone, Debug)]
pub struct CookOptions {
    pub inputs: Vec<PathBuf>,
    pub out: PathBuf,
    pub profile: Profile,
    /// Meters per source unit, replacing the file's declaration.
    pub units_override_m: Option<f32>,
    pub import: ImportOptions,
    /// Multiplies the encoder's error thresholds (verification keeps the
    /// profile's): a test hook proving verification catches overshoot.
    pub encoder_slack: f32,
}

#[derive(Debug, thiserror::Error)]
pub enum CookError {
    #[error("cannot write {path}: {source}")]
    Write {
        path: String,
        #[source]
        source: std::io::Error,
    },
}

/// Cook every input; write packages and the report. Returns the report;
/// assets that failed are in it with `status: failed`.
pub fn cook(options: &CookOptions) -> Result<Report, CookError> {
    let start = Instant::now();
    let mut report = Report {
        cooker_version: COOKER_VERSION.to_string(),
        profile: options.profile.name.clone(),
        assets: Vec::new(),
        totals: Default::default(),
    };
    let pkg_dir = options.out.join("packages");
    for input in &options.inputs {
        let (asset_report, package) = cook_asset(input, options);
        let mut asset_report = asset_report;
        if let Some((name, bytes)) = package {
            let path = pkg_dir.join(&name);
            write_atomic(&path, &bytes).map_err(|source| CookError::Write {
                path: path.display().to_string(),
                source,
            })?;
            asset_report.package = Some(format!("packages/{name}"));
            asset_report.package_bytes = bytes.len() as u64;
        }
        report.assets.push(asset_report);
    }
    report.compute_totals(start.elapsed().as_secs_f64() * 1000.0);
    let json = serde_json::to_vec_pretty(&report).unwrap_or_default();
    let path = options.out.join("report.json");
    write_atomic(&path, &json).map_err(|source| CookError::Write {
        path: path.display().to_string(),
        source,
    })?;
    Ok(report)
}

fn failed(mut r: AssetReport, d: Diagnostic) -> (AssetReport, Option<(String, Vec<u8>)>) {
    r.status = AssetStatus::Failed;
    r.diagnostics.push(d);
    (r, None)
}

/// Per-clip intermediate results kept until the package is verified.
struct CookedClip {
    resampled: ResampledClip,
    report: ResampleReport,
    encoded: Encoded,
    thresholds: Vec<f32>,
    shells: Vec<f32>,
    decisions: Vec<Decision>,
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

/// Cook one asset into (report, Some((package file name, bytes))).
pub fn cook_asset(input: &Path, options: &CookOptions) -> (AssetReport, Option<(String, Vec<u8>)>) {
    let file = input.display().to_string();
    let mut r = AssetReport {
        source: file.clone(),
        source_hash: String::new(),
        format: format_of(input).unwrap_or("unknown").to_string(),
        status: AssetStatus::Ok,
        diagnostics: Vec::new(),
        decisions: Vec::new(),
        package: None,
        package_bytes: 0,
        skeleton: None,
        clips: Vec::new(),
    };

    // Import.
    let Some(format) = format_of(input) else {
        return failed(
            r,
            Diagnostic::error(
                "unknown_format",
                "unknown file type (expected .gltf, .glb, .fbx, .bvh or .sjson)",
            )
            .file(&file),
        );
    };
    let bytes = match std::fs::read(input) {
        Ok(b) => b,
        Err(e) => {
            return failed(
                r,
                Diagnostic::error("io", format!("cannot read: {e}")).file(&file),
            )
        }
    };
    let asset = match import_bytes(input, format, &bytes, &options.import) {
        Ok(a) => a,
        Err(ImportError::Malformed(d)) => return failed(r, d),
        Err(e) => {
            return failed(
                r,
                Diagnostic::error("import_failed", e.to_string()).file(&file),
            )
        }
    };
    let mut hasher = blake3::Hasher::new();
    hasher.update(&bytes);
    for c in &asset.companions {
        match std::fs::read(c) {
            Ok(b) => {
                hasher.update(&b);
            }
            Err(e) => {
                return failed(
                    r,
                    Diagnostic::error("io", format!("cannot read companion '{c}': {e}"))
                        .file(&file),
                )
            }
        }
    }
    let source_hash: [u8; 32] = *hasher.finalize().as_bytes();
    r.source_hash = hex(&source_hash);
    r.decisions.extend(asset.decisions.iter().cloned());
    r.diagnostics.extend(asset.diagnostics.0.iter().cloned());
    let validation = validate_asset(&asset);
    r.diagnostics.extend(validation.0.iter().cloned());
    if r.diagnostics
        .iter()
        .any(|d| d.severity == ludus_anim_model::Severity::Error)
    {
        r.status = AssetStatus::Failed;
        return (r, None);
    }

    // Normalize.
    let norm = match normalize(&asset, options.units_override_m) {
        Ok(n) => n,
        Err(e) => {
            return failed(
                r,
                Diagnostic::error("normalize_failed", e.to_string()).file(&file),
            )
        }
    };
    r.decisions.extend(norm.decisions.iter().cloned());
    let sk = &norm.skeleton;
    r.skeleton = Some(SkeletonReport {
        joints: sk.joint_count(),
        identity: sk.identity().to_hex(),
        unit_scale_m: norm.unit_scale_m,
        source_axes: asset.source_axes.description.clone(),
    });

    let (thresholds, shells) = options
        .profile
        .joint_settings(sk.names(), norm.file_shells_m.as_deref());
    let kind = match asset.format.as_str() {
        "bvh" | "acl-sjson" | "fbx" => SourceKind::Samples,
        _ => SourceKind::Curves,
    };

    // Resample and encode every clip.
    let mut cooked = Vec::with_capacity(norm.clips.len());
    for clip in &norm.clips {
        let (loop_mode, loop_decision) = detect_loop(&norm, clip, &thresholds, &shells);
        let (resampled, rep) = resample(
            clip,
            sk,
            &options.profile.sample_rate,
            &shells,
            kind,
            loop_mode,
        );
        let encoded = match encode(
            sk,
            &resampled,
            &options.profile,
            &thresholds,
            &shells,
            options.encoder_slack,
        ) {
            Ok(e) => e,
            Err(e) => {
                return failed(
                    r,
                    Diagnostic::error("encode_failed", e.to_string())
                        .file(&file)
                        .clip(&clip.name),
                )
            }
        };
        cooked.push(CookedClip {
            resampled,
            report: rep,
            encoded,
            thresholds: thresholds.clone(),
            shells: shells.clone(),
            decisions: loop_decision.into_iter().collect(),
        });
    }

    // Package, then verify through the runtime reading those exact bytes.
    let asset_name = input
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or("asset")
        .to_string();
    let build = |errors: &[(f32, f32)]| {
        let clips = cooked
            .iter()
            .zip(errors.iter().chain(std::iter::repeat(&(0.0, 0.0))))
            .map(|(c, &(resample_err, max_err))| ClipEntry {
                name: c.resampled.name.clone(),
                duration_s: c.resampled.duration_s,
                sample_rate_hz: c.resampled.sample_rate_hz,
                num_samples: c.resampled.num_samples,
                loop_mode: c.resampled.loop_mode,
                codec: c.encoded.codec,
                codec_version: c.encoded.codec_version,
                profile: options.profile.name.clone(),
                source_hash,
                resample_error_m: resample_err,
                max_error_m: max_err,
                blob: c.encoded.blob.clone(),
                curves: c
                    .resampled
                    .curves
                    .iter()
                    .map(|k| CurveEntry {
                        id: k.id,
                        name: k.name.clone(),
                        default: k.default,
                        step: false,
                        values: k.values.clone(),
                    })
                    .collect(),
            })
            .collect();
        write_package(&PackageContents {
            cooker_version: COOKER_VERSION.to_string(),
            asset_name: asset_name.clone(),
            source_path: file.clone(),
            source_hash,
            skeleton: sk,
            clips,
        })
    };
    let first = build(&[]);
    let package = match Package::load(&first) {
        Ok(p) => p,
        Err(e) => {
            return failed(
                r,
                Diagnostic::error(
                    "package_invalid",
                    format!("the written package does not load: {e}"),
                )
                .file(&file),
            )
        }
    };
    let mut verifications: Vec<ClipVerification> = Vec::with_capacity(cooked.len());
    for (c, src) in cooked.iter().zip(&norm.clips) {
        let Some(decoded) = package.clips().get(verifications.len()) else {
            return failed(
                r,
                Diagnostic::error("package_invalid", "clip missing from package").file(&file),
            );
        };
        verifications.push(verify(
            sk,
            decoded,
            &c.resampled,
            src,
            &c.thresholds,
            &c.shells,
        ));
    }

    let report_joints = options.profile.report_joint_indices(sk.names());
    for ((c, v), src) in cooked.iter().zip(&verifications).zip(&norm.clips) {
        let rs = &c.resampled;
        let worst = v.codec.worst_joint;
        let mut warnings = c.report.warnings.clone();
        if let Some(x) = v.codec.violations.first() {
            r.status = AssetStatus::Failed;
            r.diagnostics.push(
                Diagnostic::error(
                    "verification_failed",
                    format!(
                        "decoded error {:.5} mm exceeds the profile's {:.5} mm ({} joint-times over)",
                        x.error_m * 1000.0,
                        x.threshold_m * 1000.0,
                        v.codec.violations.len()
                    ),
                )
                .file(&file)
                .clip(&src.name)
                .joint(sk.name(x.joint))
                .time(x.time_s),
            );
        }
        if c.report.resample_error_m > options.profile.sample_rate.max_resample_error_m {
            warnings.push(format!(
                "resample error {:.4} mm above the profile's {:.4} mm",
                c.report.resample_error_m * 1000.0,
                options.profile.sample_rate.max_resample_error_m * 1000.0
            ));
        }
        r.decisions.extend(c.decisions.iter().cloned());
        r.decisions
            .extend(c.report.decisions.iter().map(|d| Decision {
                kind: d.kind.clone(),
                detail: format!("clip '{}': {}", src.name, d.detail),
            }));
        let raw = sk.joint_count() as u64 * rs.num_samples as u64 * 40;
        let compressed = c.encoded.blob.len() as u64;
        r.clips.push(ClipReport {
            name: src.name.clone(),
            joints: sk.joint_count(),
            samples: rs.num_samples,
            sample_rate_hz: rs.sample_rate_hz,
            duration_s: rs.duration_s,
            loop_mode: rs.loop_mode.as_str().to_string(),
            codec: c.encoded.codec.name().to_string(),
            codec_version: c.encoded.codec_version,
            raw_bytes: raw,
            compressed_bytes: compressed,
            ratio: if compressed > 0 {
                raw as f32 / compressed as f32
            } else {
                0.0
            },
            resample_error_m: c.report.resample_error_m,
            max_error_m: v.codec.max_error_m,
            p99_error_m: v.codec.p99_error_m,
            max_rotation_error_deg: v.codec.max_rotation_error_deg,
            source_error_m: v.source_error_m,
            threshold_m: c.thresholds.iter().copied().fold(f32::INFINITY, f32::min),
            worst_joint: sk.name(worst).to_string(),
            worst_time_s: v.codec.worst_time_s,
            times_checked: v.codec.times_checked,
            selected_joints: report_joints
                .iter()
                .map(|&j| JointError {
                    joint: sk.name(j).to_string(),
                    max_error_m: v.codec.per_joint_max_m.get(j).copied().unwrap_or(0.0),
                    threshold_m: c.thresholds[j],
                })
                .collect(),
            curves: rs.curves.len(),
            compress_ms: c.encoded.ms,
            decode_ns_per_pose: v.decode_ns_per_pose,
            warnings,
        });
    }
    drop(package);
    if r.status == AssetStatus::Failed {
        return (r, None);
    }

    // Final bytes carry the verified figures; check they still load.
    let errors: Vec<(f32, f32)> = cooked
        .iter()
        .zip(&verifications)
        .map(|(c, v)| (c.report.resample_error_m, v.codec.max_error_m))
        .collect();
    let bytes = build(&errors);
    if let Err(e) = Package::load(&bytes) {
        return failed(
            r,
            Diagnostic::error(
                "package_invalid",
                format!("final package does not load: {e}"),
            )
            .file(&file),
        );
    }
    let digest = blake3::hash(&bytes);
    let name = format!(
        "{asset_name}-{}.{PACKAGE_EXT}",
        &hex(digest.as_bytes())[..16]
    );
    (r, Some((name, bytes)))
}

/// A clip loops when its first and last poses match within every joint's
/// threshold in component space (authored loops repeat the first pose).
fn detect_loop(
    norm: &Normalized,
    clip: &ludus_anim_model::SourceClip,
    thresholds: &[f32],
    shells: &[f32],
) -> (LoopMode, Option<Decision>) {
    let sk = &norm.skeleton;
    if clip.duration_s <= 0.0 {
        return (LoopMode::Once, None);
    }
    let n = sk.joint_count();
    let src = SourcePose::new(clip, sk);
    let mut a = vec![Transform::IDENTITY; n];
    let mut b = vec![Transform::IDENTITY; n];
    src.evaluate(0.0, &mut a);
    src.evaluate(clip.duration_s, &mut b);
    let mut ca = vec![Affine3A::IDENTITY; n];
    let mut cb = vec![Affine3A::IDENTITY; n];
    sk.local_to_component(&a, &mut ca);
    sk.local_to_component(&b, &mut cb);
    let seam = (0..n)
        .map(|j| virtual_vertex_error(&ca[j], &cb[j], shells[j]) / thresholds[j])
        .fold(0.0f32, f32::max);
    if seam <= 1.0 {
        (
            LoopMode::Loop,
            Some(Decision::new(
                "loop_detected",
                format!("clip '{}': first and last poses match within the profile threshold; cooked as looping", clip.name),
            )),
        )
    } else {
        (LoopMode::Once, None)
    }
}

/// The content `ludus-anim cook` cooks when given no inputs: every glTF
/// file in the project's `fixtures/` directory.
pub fn bundled_inputs(fixtures: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures)
        .map(|rd| {
            rd.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| matches!(format_of(p), Some("glb" | "gltf")))
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}
