//! Two-bone IK (`kernels::two_bone_ik`) on random chains: with the
//! returned rotations applied (root about the root joint, bend about the
//! middle joint before it), the bone lengths are kept, a reachable target
//! is met, and an unreachable one gets the chain straight towards it.

use ludus_anim_format::math::Vec3;
use ludus_anim_program_eval::kernels::two_bone_ik;
use proptest::prelude::*;

fn v3() -> impl Strategy<Value = Vec3> {
    prop::array::uniform3(-1.0f32..1.0).prop_map(Vec3::from)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]

    #[test]
    fn the_tip_reaches_or_points_at_the_target(a in v3(), ab in v3(), bc in v3(), dir in v3(), frac in 0.0f32..2.0) {
        prop_assume!(ab.length() > 0.1 && bc.length() > 0.1 && dir.length() > 0.1);
        // Not folded flat onto itself (the bend axis is then arbitrary).
        prop_assume!(ab.normalize().dot(bc.normalize()) > -0.95);
        let (b, c) = (a + ab, a + ab + bc);
        let (lab, lcb) = (ab.length(), bc.length());
        let lo = (lab - lcb).abs();
        let reach = lo + (lab + lcb - lo) * frac.min(1.0) + if frac > 1.0 { frac } else { 0.0 };
        prop_assume!(reach > lo + 0.01);
        let t = a + dir.normalize() * reach;
        let (ra, rb) = two_bone_ik(a, b, c, t);
        let b2 = a + ra * ab;
        let c2 = b2 + ra * (rb * bc);
        prop_assert!((b2.distance(a) - lab).abs() < 1e-4 && (c2.distance(b2) - lcb).abs() < 1e-4);
        if reach < lab + lcb - 1e-3 {
            prop_assert!(c2.distance(t) < 2e-3 * (1.0 + reach), "missed by {}", c2.distance(t));
        } else {
            let d = (c2 - a).normalize().dot((t - a).normalize());
            prop_assert!(d > 0.9999, "points {d} away");
        }
    }
}
