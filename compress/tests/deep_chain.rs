//! A chain deeper than `EXACT_CHAIN_DEPTH` takes the repair's suffix-product
//! path: it must still meet every threshold, and its cost must grow no
//! faster than the chain's depth squared (it was cubic).

mod common;

use common::{random_clip, Rng};
use ludus_anim_compress::{encode_vbr, EncodeSettings};
use ludus_anim_format::math::{Quat, Transform, Vec3};
use ludus_anim_runtime::{JointId, Skeleton};
use std::time::{Duration, Instant};

fn chain(n: usize) -> Skeleton {
    let parents = (0..n)
        .map(|j| if j == 0 { u32::MAX } else { j as u32 - 1 })
        .collect();
    let names: Vec<String> = (0..n).map(|j| format!("c{j}")).collect();
    let rest = vec![Transform::new(Vec3::new(0.0, 0.01, 0.0), Quat::IDENTITY, Vec3::ONE); n];
    let ids = names.iter().map(|s| JointId::from_path(s)).collect();
    Skeleton::new(parents, ids, rest, names).expect("chain skeleton")
}

fn encode_and_check(n: usize) -> Duration {
    let sk = chain(n);
    let clip = random_clip(&mut Rng(7), &sk, 24, 30.0, false);
    let settings = EncodeSettings::uniform(n, 0.0001, 0.03);
    let start = Instant::now();
    let enc = encode_vbr(&sk, &clip, &settings).expect("encodes");
    let took = start.elapsed();
    // The encoder's own verification (decoded through the runtime at
    // every sample and midpoint, as the cooker's verify stage measures).
    let ratio = enc.stats.worst_error_ratio;
    assert!(ratio <= 1.0, "{n}-joint chain: error ratio {ratio}");
    let vbr = common::decoder(&enc.blob, &sk, &clip);
    let mut pose = vec![Transform::IDENTITY; n];
    assert!(vbr.sample(0.0, sk.rest_pose(), &mut pose).is_ok());
    took
}

#[test]
fn deep_chains_meet_thresholds_in_near_quadratic_time() {
    let short = encode_and_check(150);
    let long = encode_and_check(300);
    // Twice as deep: at most ~4x (quadratic) plus noise; cubic was 8x.
    let ratio = long.as_secs_f64() / short.as_secs_f64().max(1e-3);
    assert!(
        ratio < 6.5 || long < Duration::from_millis(300),
        "150 joints {short:?}, 300 joints {long:?}: {ratio:.1}x"
    );
}
