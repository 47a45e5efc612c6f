//! Two-bone IK and pelvis correction for planted contacts.
//!
//! The knee (elbow) goes where the two bone lengths meet, in the plane of
//! the hip-to-target line and the pole: the source knee's offset from its
//! hip-to-ankle line, mapped into the target frame (the target's own knee
//! direction when the source leg is straight). The thigh turns by the arc
//! from the old to the new knee direction, the shin by the arc onto the
//! target; the foot keeps its component rotation.

use crate::rig::PoseFk;
use ludus_anim_format::math::{Quat, Vec3};
use ludus_anim_runtime::Skeleton;

pub(crate) struct TwoBone {
    pub upper: usize,
    pub mid: usize,
    pub end: usize,
}

/// Knee position for a hip `h`, target `t` (already within reach), bone
/// lengths `a`, `b` and a bend direction `pole`.
fn knee_position(h: Vec3, t: Vec3, a: f32, b: f32, pole: Vec3) -> Option<Vec3> {
    let d = t - h;
    let c = d.length();
    if c < 1e-9 {
        return None;
    }
    let dir = d / c;
    let x = (a * a - b * b + c * c) / (2.0 * c);
    let hgt = (a * a - x * x).max(0.0).sqrt();
    let perp = (pole - dir * pole.dot(dir)).try_normalize()?;
    Some(h + dir * x + perp * hgt)
}

/// Move `ik.end` to `target` (clamped to the chain's reach). `pole` is a
/// component-space bend direction; `None` uses the current knee.
/// `place` re-places joints that follow the mid joint (IK controls).
pub(crate) fn solve(
    skel: &Skeleton,
    pose: &mut PoseFk,
    ik: &TwoBone,
    target: Vec3,
    pole: Option<Vec3>,
) {
    let (h, k, e) = (
        pose.position(ik.upper),
        pose.position(ik.mid),
        pose.position(ik.end),
    );
    let (a, b) = ((k - h).length(), (e - k).length());
    let reach = (target - h).length();
    let lo = (a - b).abs() * 1.001 + 1e-7;
    let hi = (a + b) * 0.9999;
    let t = h + (target - h).normalize_or_zero() * reach.clamp(lo, hi);
    let own = k - h - (e - h).normalize_or_zero() * (k - h).dot((e - h).normalize_or_zero());
    let pole = pole.filter(|p| p.length() > 1e-4 * (a + b)).unwrap_or(own);
    let Some(k_new) = knee_position(h, t, a, b, pole) else {
        return;
    };
    let end_rot = pose.rot[ik.end];
    // The end rides rigidly on the mid joint (a descendant, or an IK
    // control that follows it).
    let end_in_mid = pose.affine[ik.mid].inverse().transform_point3(e);
    let r1 = Quat::from_rotation_arc((k - h).normalize_or_zero(), (k_new - h).normalize_or_zero());
    let g_upper = (r1 * pose.rot[ik.upper]).normalize();
    pose.set_global_rotation(skel, ik.upper, g_upper);
    pose.fk_subtree(skel, ik.upper);
    let k1 = pose.position(ik.mid);
    let e1 = pose.affine[ik.mid].transform_point3(end_in_mid);
    let r2 = Quat::from_rotation_arc((e1 - k1).normalize_or_zero(), (t - k1).normalize_or_zero());
    let g_mid = (r2 * pose.rot[ik.mid]).normalize();
    pose.set_global_rotation(skel, ik.mid, g_mid);
    pose.fk_subtree(skel, ik.mid);
    if crate::rig::is_ancestor_or_self(skel, ik.mid, ik.end) {
        pose.set_global_rotation(skel, ik.end, end_rot);
        pose.fk_subtree(skel, ik.end);
    }
}

/// How far the hip must move down along `up` so that `target` comes within
/// `reach` of it (0 when it already is).
pub(crate) fn required_drop(hip: Vec3, target: Vec3, reach: f32, up: Vec3) -> f32 {
    let d = target - hip;
    if d.length() <= reach {
        return 0.0;
    }
    let du = d.dot(up);
    let disc = du * du - d.length_squared() + reach * reach;
    let drop = if disc >= 0.0 { -du - disc.sqrt() } else { -du };
    drop.max(0.0)
}

/// Max filter then box average, both over `radius` frames: the result is
/// never below the input, and eases in and out. `wrap` treats the signal
/// as periodic (a loop without its duplicated end frame).
pub(crate) fn smooth_drop(x: &[f32], radius: usize, wrap: bool) -> Vec<f32> {
    let n = x.len();
    if n == 0 || radius == 0 {
        return x.to_vec();
    }
    let at = |v: &[f32], i: isize| -> f32 {
        if wrap {
            v[i.rem_euclid(n as isize) as usize]
        } else {
            v[i.clamp(0, n as isize - 1) as usize]
        }
    };
    let r = radius as isize;
    let maxed: Vec<f32> = (0..n as isize)
        .map(|i| (-r..=r).map(|k| at(x, i + k)).fold(0.0, f32::max))
        .collect();
    (0..n as isize)
        .map(|i| (-r..=r).map(|k| at(&maxed, i + k)).sum::<f32>() / (2 * r + 1) as f32)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use ludus_anim_format::math::Transform;
    use ludus_anim_runtime::skeleton::{JointId, NO_PARENT};

    fn leg() -> (Skeleton, PoseFk) {
        let t = |y: f32| Transform::new(Vec3::new(0.0, y, 0.0), Quat::IDENTITY, Vec3::ONE);
        let rest = vec![t(1.0), t(-0.45), t(-0.45)];
        let names: Vec<String> = ["hip", "knee", "ankle"].map(String::from).to_vec();
        let ids = names.iter().map(|n| JointId::from_path(n)).collect();
        let s = Skeleton::new(vec![NO_PARENT, 0, 1], ids, rest.clone(), names).unwrap();
        let p = PoseFk::new(&s, rest);
        (s, p)
    }

    #[test]
    fn reaches_target_keeps_lengths_and_bends_toward_pole() {
        let (s, mut p) = leg();
        let target = Vec3::new(0.1, 0.3, 0.2);
        solve(
            &s,
            &mut p,
            &TwoBone {
                upper: 0,
                mid: 1,
                end: 2,
            },
            target,
            Some(Vec3::Z),
        );
        assert!(
            (p.position(2) - target).length() < 1e-4,
            "{:?}",
            p.position(2)
        );
        assert!(((p.position(1) - p.position(0)).length() - 0.45).abs() < 1e-5);
        assert!(p.position(1).z > 0.2, "knee forward: {:?}", p.position(1));
        assert!(
            p.rot[2].angle_between(Quat::IDENTITY) < 1e-4,
            "foot keeps rotation"
        );
    }

    #[test]
    fn drop_brings_target_into_reach_and_smoothing_never_undershoots() {
        let d = required_drop(
            Vec3::new(0.0, 1.0, 0.0),
            Vec3::new(0.3, 0.0, 0.0),
            0.9,
            Vec3::Y,
        );
        let hip = Vec3::new(0.0, 1.0 - d, 0.0);
        assert!(((Vec3::new(0.3, 0.0, 0.0) - hip).length() - 0.9).abs() < 1e-5);
        let x = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.5];
        for wrap in [false, true] {
            let y = smooth_drop(&x, 2, wrap);
            assert!(x.iter().zip(&y).all(|(a, b)| b + 1e-6 >= *a), "{y:?}");
        }
    }
}
