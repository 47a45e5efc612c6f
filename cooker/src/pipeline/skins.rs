//! The bind-pose oracle of each skin of an asset (`ludus_anim_normalize::
//! skin`), on the normalized skeleton: each skin's residual goes into the
//! report's skeleton entry; above the asset profile's
//! `bind_pose_threshold_mm` the asset fails with a located error (a
//! profile without one: a located warning above 0.01 mm).

use super::ingest::Stop;
use crate::report::{AssetReport, SkinReport};
use crate::stages::normalize::Normalized;
use ludus_anim_model::Diagnostic;
use ludus_anim_normalize::skin::check_bind_pose;

/// Check every skin of `norm`; record each in `r`.
pub fn check(
    norm: &Normalized,
    fail_above_mm: Option<f32>,
    file: &str,
    r: &mut AssetReport,
) -> Result<(), Stop> {
    let threshold_mm = fail_above_mm.unwrap_or(crate::profile::DEFAULT_BIND_POSE_THRESHOLD_MM);
    let mut reports = Vec::with_capacity(norm.skins.len());
    let mut failed = false;
    for skin in &norm.skins {
        let c = check_bind_pose(&norm.skeleton, skin);
        let residual_mm = c.max_residual_m.map(|m| m * 1000.0);
        if let Some(mm) = residual_mm.filter(|mm| mm.is_nan() || *mm > threshold_mm) {
            let vertex = c
                .worst_vertex
                .map_or(String::new(), |v| format!(" at vertex {v}"));
            let message = format!(
                "skin '{}': skinning its mesh with the bind pose leaves it {mm:.6} mm from the undeformed mesh{vertex}, over {threshold_mm} mm",
                c.skin
            );
            let d = if fail_above_mm.is_some() {
                failed = true;
                Diagnostic::error("bind_pose_residual", message)
            } else {
                Diagnostic::warning("bind_pose_residual", message)
            };
            r.diagnostics.push(crate::report::diagnostic(&d.file(file)));
        }
        if c.max_weight_sum_error > 1e-3 {
            r.diagnostics.push(crate::report::diagnostic(
                &Diagnostic::warning(
                    "skin_weights_unnormalized",
                    format!(
                        "skin '{}': a vertex's weights sum {:.4} away from 1; skinning normalizes them",
                        c.skin, c.max_weight_sum_error
                    ),
                )
                .file(file),
            ));
        }
        reports.push(SkinReport {
            name: c.skin,
            vertices: c.vertices,
            joints: c.joints,
            residual_mm,
            threshold_mm,
            max_weight_sum_error: c.max_weight_sum_error,
            unweighted_vertices: c.unweighted_vertices,
        });
    }
    if let Some(sk) = &mut r.skeleton {
        sk.skins = reports;
    }
    if failed {
        return Err(Stop::Recorded);
    }
    Ok(())
}
