//! ARCHITECTURE.md: the program evaluator allocates nothing after
//! preparation. A counting global allocator over the worked example
//! (`fixtures/locomotion/`) cooked and compiled: `Evaluator::new` is
//! outside the count; then 30 s of scripted ticks (transitions, fades,
//! inertialization, synced players, marker crossings, all layers) and
//! evaluations must make no allocator call.

mod common;
use common::*;
use ludus_anim_program::{asset, binary};
use ludus_anim_program_eval::verify::default_script;
use ludus_anim_program_eval::Evaluator;
use ludus_anim_runtime::Package;

#[global_allocator]
static GLOBAL: common::alloc::Counting = common::alloc::Counting;

#[test]
fn ticks_and_evaluations_do_not_allocate() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::copy(
        repo().join("fixtures/biped.glb"),
        tmp.path().join("biped.glb"),
    )
    .unwrap();
    let dir = tmp.path().join("locomotion");
    std::fs::create_dir(&dir).unwrap();
    for f in ["ludus-anim.toml", "locomotion.program.toml"] {
        std::fs::copy(repo().join("fixtures/locomotion").join(f), dir.join(f)).unwrap();
    }
    let o = ludus_anim(&["cook"], &dir);
    assert!(o.status.success(), "{}", text(&o));
    let o = ludus_anim(&["program", "compile", "locomotion.program.toml"], &dir);
    assert!(o.status.success(), "{}", text(&o));
    let p =
        binary::load(&std::fs::read(dir.join("out/programs/biped_locomotion.ludprog")).unwrap())
            .unwrap();
    let _ = asset::ASSET_VERSION;
    let raw: Vec<(String, Vec<u8>)> = packages(&dir.join("out"))
        .into_iter()
        .map(|(n, b)| (format!("packages/{n}"), b))
        .collect();
    let pk: Vec<(String, Package<'_>)> = raw
        .iter()
        .map(|(n, b)| (n.clone(), Package::load(b).unwrap()))
        .collect();
    let script = default_script(&p, 30.0, 1.0 / 30.0);
    let mut ev = Evaluator::new(&p, &pk).unwrap();
    let (calls, transitions) = common::alloc::count(|| {
        let mut transitions = 0;
        for s in &script {
            let r = ev.tick(&s.inputs, s.dt).unwrap();
            ev.evaluate().unwrap();
            transitions += usize::from(r.transition.is_some());
        }
        transitions
    });
    assert!(transitions >= 2, "the script must exercise transitions");
    assert_eq!(
        calls,
        0,
        "{calls} allocator calls over {} ticks",
        script.len()
    );
}
