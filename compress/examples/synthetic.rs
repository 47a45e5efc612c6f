//! Encode a few synthetic clips and print sizes, errors and timings.
//! `cargo run --release -p ludus-anim-compress --example synthetic`

#[path = "../tests/common/mod.rs"]
mod common;

use common::{decoder, random_clip, random_skeleton, worst_ratio, Rng};
use ludus_anim_compress::{encode_vbr, EncodeSettings};
use std::time::Instant;

fn main() {
    let mut rng = Rng(7);
    for (joints, samples) in [(31usize, 300u32), (60, 120), (8, 40)] {
        let sk = random_skeleton(&mut rng, joints, true);
        let clip = random_clip(&mut rng, &sk, samples, 30.0, true);
        let settings = EncodeSettings::uniform(joints, 1e-4, 0.03);
        let t = Instant::now();
        let enc = encode_vbr(&sk, &clip, &settings).expect("encode");
        let ms = t.elapsed().as_secs_f64() * 1e3;
        let vbr = decoder(&enc.blob, &sk, &clip);
        let (ratio, err) = worst_ratio(
            |t, o| vbr.sample(t, sk.rest_pose(), o).is_ok(),
            &sk,
            &clip,
            &settings.joint_threshold_m,
            &settings.joint_shell_m,
        );
        println!(
            "{joints} joints {samples} samples: {} B (raw {}), {:.1} ms, worst ratio {ratio:.4} max err {err:.3e} stats {:?}",
            enc.blob.len(),
            joints * samples as usize * 40,
            ms,
            enc.stats
        );
    }
}
