//! Every glTF fixture in ../shared/fixtures cooks, loads and verifies; the
//! package reproduces the glTF curves and rest hierarchy, checked against
//! an evaluation written here from the glTF 2.0 specification.

mod common;
use base64::Engine;
use common::*;
use ludus_anim_format::math::{Quat, Vec3};
use ludus_anim_runtime::{Affine3A, Package, Transform};
use std::collections::HashMap;
use std::path::Path;

#[test]
fn every_gltf_fixture_cooks_loads_and_verifies() {
    let Some(fx) = shared_fixtures() else { return };
    let files = manifest_files(&fx, "gltf/");
    assert!(files.len() >= 8, "{files:?}");
    let tmp = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    for (i, f) in files.iter().enumerate() {
        let out = tmp.path().join(format!("o{i}"));
        let o = ludus_anim(
            &["cook", f.to_str().unwrap(), "--out", out.to_str().unwrap()],
            tmp.path(),
        );
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        if !o.status.success() {
            failures.push(format!("{name}: {}", text(&o)));
            continue;
        }
        let r = report(&out);
        let a = &r["assets"][0];
        for c in a["clips"].as_array().unwrap() {
            let err = c["max_error_m"].as_f64().unwrap();
            let thr = c["threshold_m"].as_f64().unwrap();
            if err > thr {
                failures.push(format!("{name} clip {}: error {err} > {thr}", c["name"]));
            }
        }
        let bytes = std::fs::read(package_path(&out, &r, 0)).unwrap();
        if let Err(e) = Package::load(&bytes) {
            failures.push(format!("{name}: package does not load: {e}"));
        }
        eprintln!(
            "ok: {name} ({} clips)",
            a["clips"].as_array().unwrap().len()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Buffers of a glTF document: GLB BIN chunk, data URIs or files.
fn buffers(doc: &gltf::Gltf, path: &Path) -> Vec<Vec<u8>> {
    doc.buffers()
        .map(|b| match b.source() {
            gltf::buffer::Source::Bin => doc.blob.clone().expect("glb blob"),
            gltf::buffer::Source::Uri(uri) => {
                if let Some(data) = uri.strip_prefix("data:") {
                    let b64 = data.split_once(";base64,").expect("base64 data uri").1;
                    base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .unwrap()
                } else {
                    std::fs::read(path.parent().unwrap().join(uri)).unwrap()
                }
            }
        })
        .collect()
}

fn hermite(p0: f32, m0: f32, p1: f32, m1: f32, t: f32) -> f32 {
    let (t2, t3) = (t * t, t * t * t);
    (2.0 * t3 - 3.0 * t2 + 1.0) * p0
        + (t3 - 2.0 * t2 + t) * m0
        + (-2.0 * t3 + 3.0 * t2) * p1
        + (t3 - t2) * m1
}

/// glTF sampler evaluation, per the specification (Appendix C): STEP
/// holds, LINEAR lerps (slerps rotations), CUBICSPLINE is Hermite with
/// tangents scaled by the key interval, rotations normalized.
fn eval(
    interp: gltf::animation::Interpolation,
    times: &[f32],
    out: &[Vec<f32>],
    rotation: bool,
    t: f32,
) -> Vec<f32> {
    use gltf::animation::Interpolation::*;
    let cubic = interp == CubicSpline;
    let value = |k: usize| {
        if cubic {
            out[3 * k + 1].clone()
        } else {
            out[k].clone()
        }
    };
    let n = times.len();
    if t <= times[0] {
        return value(0);
    }
    if t >= times[n - 1] {
        return value(n - 1);
    }
    let k = times.iter().rposition(|&x| x <= t).unwrap();
    let dt = times[k + 1] - times[k];
    let u = (t - times[k]) / dt;
    let mut v = match interp {
        Step => value(k),
        Linear if rotation => {
            let a = Quat::from_slice(&value(k));
            let b = Quat::from_slice(&value(k + 1));
            let b = if a.dot(b) < 0.0 { -b } else { b };
            a.slerp(b, u).to_array().to_vec()
        }
        Linear => value(k)
            .iter()
            .zip(value(k + 1))
            .map(|(a, b)| a + (b - a) * u)
            .collect(),
        CubicSpline => (0..out[0].len())
            .map(|c| {
                hermite(
                    out[3 * k + 1][c],
                    out[3 * k + 2][c] * dt,
                    out[3 * k + 4][c],
                    out[3 * k + 3][c] * dt,
                    u,
                )
            })
            .collect(),
    };
    if rotation {
        let l = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter_mut().for_each(|x| *x /= l);
    }
    v
}

fn node_local(n: &gltf::Node) -> Transform {
    let (t, r, s) = n.transform().decomposed();
    Transform::new(Vec3::from(t), Quat::from_array(r), Vec3::from(s))
}

/// Cook `file` with the uncompressed reference codec and compare the
/// package with the glTF document directly.
fn check_against_gltf(file: &Path, midpoints: bool) {
    let tmp = tempfile::tempdir().unwrap();
    let o = ludus_anim(
        &[
            "cook",
            file.to_str().unwrap(),
            "--codec",
            "reference",
            "--out",
            "o",
        ],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let out = tmp.path().join("o");
    let r = report(&out);
    let bytes = std::fs::read(package_path(&out, &r, 0)).unwrap();
    let p = Package::load(&bytes).unwrap();
    let sk = p.skeleton();
    let doc = gltf::Gltf::from_slice(&std::fs::read(file).unwrap()).unwrap();
    let bufs = buffers(&doc, file);

    // Unique node names only (duplicates are renamed by the importer;
    // unnamed nodes are called `node<index>`).
    let label = |n: &gltf::Node| {
        n.name()
            .map(str::to_string)
            .unwrap_or(format!("node{}", n.index()))
    };
    let mut count: HashMap<String, usize> = HashMap::new();
    for n in doc.nodes() {
        *count.entry(label(&n)).or_default() += 1;
    }
    let joint_of = |n: &gltf::Node| -> Option<usize> {
        let name = label(n);
        if count[&name] != 1 {
            return None;
        }
        sk.find_by_name(&name)
    };

    // Rest FK against node world transforms.
    let mut parent = vec![None; doc.nodes().len()];
    for n in doc.nodes() {
        for c in n.children() {
            parent[c.index()] = Some(n.index());
        }
    }
    let world = |i: usize| -> Affine3A {
        let nodes: Vec<_> = doc.nodes().collect();
        let mut m = node_local(&nodes[i]).to_affine();
        let mut a = parent[i];
        while let Some(pi) = a {
            m = node_local(&nodes[pi]).to_affine() * m;
            a = parent[pi];
        }
        m
    };
    let mut comp = vec![Affine3A::IDENTITY; sk.joint_count()];
    assert!(sk.local_to_component(sk.rest_pose(), &mut comp));
    let mut checked = 0;
    for n in doc.nodes() {
        if let Some(j) = joint_of(&n) {
            let w = world(n.index());
            let d = (Vec3::from(w.translation) - Vec3::from(comp[j].translation)).length()
                + (w.matrix3 - comp[j].matrix3)
                    .abs()
                    .to_cols_array()
                    .iter()
                    .sum::<f32>();
            assert!(
                d < 1e-3 * (1.0 + Vec3::from(w.translation).length()),
                "{}: rest FK of '{}' off by {d}",
                file.display(),
                sk.name(j)
            );
            checked += 1;
        }
    }
    assert!(checked > 0, "no joints matched nodes in {}", file.display());

    // Curves at key times (and midpoints for CUBICSPLINE / STEP).
    let mut pose = vec![Transform::IDENTITY; sk.joint_count()];
    for (ai, anim) in doc.animations().enumerate() {
        let name = anim
            .name()
            .map(str::to_string)
            .unwrap_or(format!("anim{ai}"));
        let clip = p
            .clip(&name)
            .unwrap_or_else(|| panic!("clip {name} missing"));
        let t0 = anim
            .channels()
            .filter_map(|c| {
                c.reader(|b| bufs.get(b.index()).map(|v| v.as_slice()))
                    .read_inputs()
                    .and_then(|mut i| i.next())
            })
            .fold(f32::INFINITY, f32::min);
        for ch in anim.channels() {
            let node = ch.target().node();
            let Some(j) = joint_of(&node) else { continue };
            let reader = ch.reader(|b| bufs.get(b.index()).map(|v| v.as_slice()));
            let times: Vec<f32> = reader.read_inputs().unwrap().map(|t| t - t0).collect();
            use gltf::animation::util::ReadOutputs::*;
            let (out, rotation, prop): (Vec<Vec<f32>>, bool, u8) =
                match reader.read_outputs().unwrap() {
                    Translations(v) => (v.map(|x| x.to_vec()).collect(), false, 0),
                    Rotations(v) => (v.into_f32().map(|x| x.to_vec()).collect(), true, 1),
                    Scales(v) => (v.map(|x| x.to_vec()).collect(), false, 2),
                    MorphTargetWeights(_) => continue,
                };
            let interp = ch.sampler().interpolation();
            let mut ts = times.clone();
            if midpoints {
                ts.extend(times.windows(2).map(|w| 0.5 * (w[0] + w[1])));
            }
            for &t in &ts {
                let want = eval(interp, &times, &out, rotation, t);
                assert!(clip.sample(t, sk.rest_pose(), &mut pose).is_ok());
                let got = &pose[j];
                // Keys on the clip's sample grid come back exactly; keys
                // between samples (irregular key spacing no small rate
                // multiple aligns) within the profile's resampling
                // tolerance, 0.1 mm at 3 cm (~0.0033 rad).
                let on_grid = {
                    let pos = t * clip.sample_rate_hz();
                    (pos - pos.round()).abs() < 1e-3
                };
                let on_key = on_grid && times.iter().any(|&k| (k - t).abs() < 1e-6);
                let (err, tol) = match prop {
                    0 => (
                        (Vec3::from_slice(&want) - got.translation).length(),
                        if on_key { 1e-4 } else { 2e-3 },
                    ),
                    1 => (
                        Quat::from_slice(&want).angle_between(got.rotation),
                        if on_key { 2e-3 } else { 2e-2 },
                    ),
                    _ => (
                        (Vec3::from_slice(&want) - got.scale).length(),
                        if on_key { 1e-4 } else { 2e-3 },
                    ),
                };
                assert!(
                    err <= tol,
                    "{} clip '{name}' joint '{}' prop {prop} {interp:?} t={t}: error {err} > {tol} (want {want:?}, got {got:?})",
                    file.display(),
                    sk.name(j)
                );
            }
        }
    }
}

#[test]
fn linear_fixtures_reproduce_keys_and_rest_hierarchy() {
    let Some(fx) = shared_fixtures() else { return };
    for f in [
        "gltf/khronos_Fox.glb",
        "gltf/khronos_RiggedSimple_embedded.gltf",
        "gltf/khronos_SimpleSkin.gltf",
        "gltf/quaternius_KnightCharacter.glb",
    ] {
        check_against_gltf(&fx.join(f), false);
    }
}

#[test]
fn cubicspline_and_step_match_an_independent_evaluation() {
    let Some(fx) = shared_fixtures() else { return };
    check_against_gltf(
        &fx.join("gltf/khronos_InterpolationTest/interpolation_test.gltf"),
        true,
    );
    check_against_gltf(
        &fx.join("gltf/blenderio_06_parent-inverse-anim/06_parent-inverse-anim.gltf"),
        true,
    );
}

#[test]
fn bundled_biped_matches_its_curves() {
    check_against_gltf(&repo().join("fixtures/biped.glb"), true);
}

/// Khronos' InterpolationTest at the standard profile: the STEP clips jump
/// between grid samples, so a sampled runtime is over the bound against the
/// authored curves there; every clip over it says by how much.
#[test]
fn a_clip_over_the_bound_is_warned_with_its_figure() {
    let Some(fx) = shared_fixtures() else { return };
    let tmp = tempfile::tempdir().unwrap();
    let file = fx.join("gltf/khronos_InterpolationTest/interpolation_test.gltf");
    let o = ludus_anim(
        &["cook", file.to_str().unwrap(), "--no-cache", "--out", "o"],
        tmp.path(),
    );
    assert!(o.status.success(), "{}", text(&o));
    let r = report(&tmp.path().join("o"));
    let mut over = 0;
    for c in r["assets"][0]["clips"].as_array().unwrap() {
        let e = &c["end_to_end"];
        if e["within"] == true {
            continue;
        }
        over += 1;
        let figure = format!(
            "is {:.4} mm from the authored curves",
            e["error_m"].as_f64().unwrap() as f32 * 1000.0
        );
        let warned = c["warnings"].as_array().unwrap().iter().any(|w| {
            let w = w.as_str().unwrap();
            w.contains(&figure) && w.contains(e["joint"].as_str().unwrap())
        });
        assert!(warned, "{} ({}): {}", c["name"], e["cause"], c["warnings"]);
    }
    // Step Scale, Step Rotation, Step Translation, CubicSpline Translation.
    assert!(over >= 3, "{over}");
}
