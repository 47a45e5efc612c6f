//! Where the bind-pose residual above 0.01 mm of two shared fixtures comes
//! from (#45, `docs/perf/bind-pose-residuals.md`): the same check in f64
//! on the same f32 data (each palette entry's bind transform times its
//! inverse bind, applied to the source vertices with normalized weights,
//! against the undeformed mesh) leaves under two f32 steps at the
//! mesh's largest coordinate (the rounding of the stored values), so the file's
//! matrices, its scale and its geometric transforms are consistent; what
//! the f32 check reports is f32 arithmetic (the bind pose decomposed into
//! local TRS, forward kinematics, skinning) at these meshes' sizes, a few
//! units in the last place of their largest coordinate. Prints the table
//! with `--nocapture`.

mod common;
use common::*;
use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_model::skin::Matrix;

/// Column-major 4x4 affine (f32 as stored) as f64 rows x columns.
type M = [[f64; 4]; 3];

fn m64(m: &Matrix) -> M {
    let mut out = [[0.0; 4]; 3];
    for (c, col) in [0usize, 4, 8, 12].iter().enumerate() {
        for r in 0..3 {
            out[r][c] = m[col + r] as f64;
        }
    }
    out
}

fn mul(a: &M, b: &M) -> M {
    let mut out = [[0.0; 4]; 3];
    for r in 0..3 {
        for c in 0..4 {
            let mut v = if c == 3 { a[r][3] } else { 0.0 };
            for k in 0..3 {
                v += a[r][k] * b[k][c];
            }
            out[r][c] = v;
        }
    }
    out
}

fn apply(m: &M, p: [f64; 3]) -> [f64; 3] {
    let mut out = [0.0; 3];
    for (r, o) in out.iter_mut().enumerate() {
        *o = m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3];
    }
    out
}

/// (f32 oracle residual, f64 residual, largest |coordinate|), meters.
fn measure(path: &std::path::Path) -> (f64, f64, f64) {
    let asset = import_file(path, &ImportOptions::default()).unwrap();
    let norm = ludus_anim_normalize::normalize(&asset, None).unwrap();
    let skin = &norm.skins[0];
    let mesh = skin.mesh.as_ref().unwrap();
    let f32_residual = ludus_anim_normalize::skin::check_bind_pose(&norm.skeleton, skin)
        .max_residual_m
        .unwrap() as f64;
    let palette: Vec<M> = skin
        .bind_world
        .iter()
        .zip(&skin.inverse_bind)
        .map(|(b, i)| mul(&m64(b), &m64(i)))
        .collect();
    let g = m64(&mesh.geometry_to_skeleton);
    let (mut worst, mut extent) = (0.0f64, 0.0f64);
    for (v, p) in mesh.positions.iter().enumerate() {
        let p = [p.x as f64, p.y as f64, p.z as f64];
        let inf = mesh.vertex(v);
        let sum: f64 = inf.iter().map(|(_, w)| *w as f64).sum();
        if sum == 0.0 {
            continue;
        }
        let mut s = [0.0; 3];
        for &(i, w) in inf {
            let q = apply(&palette[i as usize], p);
            for k in 0..3 {
                s[k] += w as f64 / sum * q[k];
            }
        }
        let u = apply(&g, p);
        let d = ((s[0] - u[0]).powi(2) + (s[1] - u[1]).powi(2) + (s[2] - u[2]).powi(2)).sqrt();
        worst = worst.max(d);
        extent = extent.max(u.iter().fold(0.0f64, |a, x| a.max(x.abs())));
    }
    (f32_residual, worst, extent)
}

#[test]
fn the_residuals_over_0_01_mm_are_f32_arithmetic_at_the_meshes_size() {
    let Some(fx) = shared_fixtures() else { return };
    println!("| file | f32 residual mm | f64 residual mm | largest coordinate m | f32 spacing there mm | residual / spacing |");
    println!("|---|---|---|---|---|---|");
    for f in [
        "fbx/assimp_animation_with_skeleton.fbx",
        "gltf/khronos_Fox.glb",
        "gltf/quaternius_KnightCharacter.glb",
        "fbx/ufbx_blender_279_sausage_7400.fbx",
    ] {
        let (r32, r64, extent) = measure(&fx.join(f));
        // Spacing of f32 values at the largest coordinate.
        let ulp = (extent as f32).next_up() as f64 - extent as f32 as f64;
        println!(
            "| {f} | {:.6} | {:.9} | {extent:.3} | {:.6} | {:.1} |",
            r32 * 1e3,
            r64 * 1e3,
            ulp * 1e3,
            r32 / ulp
        );
        // Printed for comparison: the sausage's 0.001 mm is in its data
        // (the f64 figure is the same), far under 0.01 mm.
        if !f.contains("assimp") && !f.contains("Fox") {
            continue;
        }
        // The data are consistent: in f64 the skin reproduces the mesh
        // within two f32 steps at its size (what rounding the file's values
        // to f32 leaves), well under the f32 residual...
        assert!(r64 < 2.0 * ulp && r64 <= r32, "{f}: f64 residual {r64} m");
        // ...and the f32 residual is a handful of f32 steps at the mesh's
        // size (not a scale or a transform left out, which would be
        // proportional to the size, not to its rounding).
        assert!(r32 / ulp < 16.0, "{f}: {r32} m is {} f32 steps", r32 / ulp);
    }
}
