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
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static CALLS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static ARMED: Cell<bool> = const { Cell::new(false) };
}

fn note() {
    if ARMED.try_with(Cell::get).unwrap_or(false) {
        CALLS.fetch_add(1, Ordering::Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged; counting touches only an atomic and a const thread-local.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note();
        // SAFETY: forwarded as received.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note();
        // SAFETY: forwarded as received.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        note();
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

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
    let before = CALLS.load(Ordering::Relaxed);
    ARMED.with(|a| a.set(true));
    let mut transitions = 0;
    for s in &script {
        let r = ev.tick(&s.inputs, s.dt).unwrap();
        ev.evaluate().unwrap();
        transitions += usize::from(r.transition.is_some());
    }
    ARMED.with(|a| a.set(false));
    let calls = CALLS.load(Ordering::Relaxed) - before;
    assert!(transitions >= 2, "the script must exercise transitions");
    assert_eq!(
        calls,
        0,
        "{calls} allocator calls over {} ticks",
        script.len()
    );
}
