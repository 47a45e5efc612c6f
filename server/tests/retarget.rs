//! The asset server watches what a retargeted asset reads besides its
//! source: the retarget profile and the target skeleton's file. A change
//! to either re-cooks exactly the assets using that profile, from the
//! retarget stage on (the source's import and normalize are hits).

mod common;
use common::*;
use serde_json::Value;
use std::path::Path;

const WALK: &str = "mocap/cmu_walk.bvh";
const RIG: &str = "rig/makehuman.bvh";
const PROFILE: &str = "cmu_to_makehuman.toml";

/// The server's usual project plus the CMU walk retargeted onto a copy of
/// the MakeHuman rig with the shipped profile.
fn setup() -> Option<(tempfile::TempDir, Server)> {
    let fixtures = shared_fixtures()?;
    let tmp = tempfile::tempdir().unwrap();
    let d = tmp.path();
    project(&fixtures, d);
    for dir in ["mocap", "rig"] {
        std::fs::create_dir_all(d.join(dir)).unwrap();
    }
    std::fs::copy(fixtures.join("bvh/cmu_12_01_walk.bvh"), d.join(WALK)).unwrap();
    std::fs::copy(fixtures.join("bvh/makehuman_zombieWalk1.bvh"), d.join(RIG)).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../profiles/retarget")
        .join(PROFILE);
    let profile = std::fs::read_to_string(shipped)
        .unwrap()
        .replace("../../../shared/fixtures/bvh/cmu_12_01_walk.bvh", WALK)
        .replace(
            "../../../shared/fixtures/bvh/makehuman_zombieWalk1.bvh",
            RIG,
        );
    std::fs::write(d.join(PROFILE), profile).unwrap();
    let m = d.join("ludus-anim.toml");
    let mut text = std::fs::read_to_string(&m).unwrap();
    text.push_str(&format!(
        "\n[[asset]]\nsources = [\"mocap/*.bvh\"]\nretarget = \"{PROFILE}\"\n"
    ));
    std::fs::write(&m, text).unwrap();
    let s = Server::start(d, &[]);
    s.wait_idle(120);
    Some((tmp, s))
}

/// After `change`, wait for the walk's re-cook; the assets started and
/// the cache outcome of each stage event.
fn recook(s: &Server, change: impl FnOnce()) -> (Vec<String>, Vec<Value>) {
    let ev = Events::open(s);
    let from = ev.len();
    change();
    wait_for(60, "the walk re-cooked", || {
        ev.since(from)
            .into_iter()
            .find(|e| e["event"] == "asset_done" && e["source"] == WALK)
    });
    s.wait_idle(30);
    let events = ev.since(from);
    let started = events
        .iter()
        .filter(|e| e["event"] == "asset_start")
        .filter_map(|e| e["source"].as_str().map(String::from))
        .collect();
    let stages = events
        .into_iter()
        .filter(|e| e["event"] == "stage" && e["source"] == WALK)
        .collect();
    (started, stages)
}

fn outcomes(stages: &[Value], stage: &str) -> Vec<String> {
    stages
        .iter()
        .filter(|e| e["stage"] == stage)
        .filter_map(|e| e["cache"].as_str().map(String::from))
        .collect()
}

#[test]
fn a_profile_or_target_rig_change_recooks_exactly_the_assets_using_it() {
    let Some((tmp, s)) = setup() else { return };
    let d = tmp.path();
    let first = s.hash_of(WALK);
    assert!(first.is_some(), "the walk cooks: {}", s.status());
    let others: Vec<_> = s.hashes().into_iter().filter(|(n, _)| n != WALK).collect();

    // The profile: only the walk, from retarget on.
    let p = d.join(PROFILE);
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(text.contains("blend_s = 0.1"));
    let (started, stages) = recook(&s, || {
        std::fs::write(&p, text.replacen("blend_s = 0.1", "blend_s = 0.15", 1)).unwrap();
    });
    assert_eq!(started, [WALK], "only the asset on the profile re-cooks");
    assert_eq!(outcomes(&stages, "retarget"), ["miss"], "{stages:?}");
    // The source's normalize and the target's are hits; neither is
    // imported (normalize's record carries what the cook reads of it).
    let o = outcomes(&stages, "normalize");
    assert!(
        !o.is_empty() && o.iter().all(|c| c == "hit"),
        "normalize: {o:?}"
    );
    assert!(outcomes(&stages, "import").is_empty(), "{stages:?}");

    // The target rig's file: only the walk again.
    let rig = d.join(RIG);
    let original = std::fs::read(&rig).unwrap();
    let (started, stages) = recook(&s, || {
        std::fs::write(&rig, edited_bvh(&original, 1)).unwrap();
    });
    assert_eq!(started, [WALK], "only the asset retargeted onto the rig");
    assert_eq!(outcomes(&stages, "retarget"), ["miss"], "{stages:?}");
    let after: Vec<_> = s.hashes().into_iter().filter(|(n, _)| n != WALK).collect();
    assert_eq!(others, after, "the other assets keep their packages");
}
