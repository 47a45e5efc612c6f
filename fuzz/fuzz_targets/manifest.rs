//! Project manifests and quality profiles (TOML): parse and validate,
//! and expand a parsed manifest's limits.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ludus_anim_cooker::manifest::Manifest;
use ludus_anim_cooker::profile::Profile;
use ludus_anim_model::Limits;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(m) = Manifest::parse(text, "fuzz/ludus-anim.toml") {
        let project = m.project.limits.apply(&Limits::default());
        for a in &m.assets {
            let _ = m.project.limits.then(&a.limits).apply(&project);
        }
    }
    if let Ok(p) = Profile::parse(text, "fuzz/profile.toml") {
        let names = ["Hips".to_string(), "hand_l".to_string()];
        let _ = p.joint_settings(&names, None);
        let _ = p.report_joint_indices(&names);
    }
});
