//! Stage code versions are honest: for a fixed input (the bundled biped,
//! standard profile), each stage's output fingerprint is recorded in
//! `tests/golden/stage-outputs.txt` with the stage's version. If a stage's
//! output changes while its version did not, this test fails: bump the
//! version in `cooker/src/stage_cache.rs` (stale cache entries would
//! otherwise be served) and refresh the file with
//! `LUDUS_UPDATE_GOLDEN=1 cargo test --test stage_versions`.

mod common;
use common::*;
use ludus_anim_cooker::cook::{cook_asset_job, CookOptions, Silent};
use ludus_anim_cooker::manifest::AssetJob;
use ludus_anim_cooker::stage_cache::StageCache;

#[test]
fn stage_outputs_change_only_with_their_version() {
    let options = CookOptions::for_files(vec![], std::env::temp_dir(), "standard");
    // Relative to the package directory (cargo's working directory for
    // tests): the recorded source path is the same in every checkout.
    let job = AssetJob {
        path: std::path::PathBuf::from("../fixtures/biped.glb"),
        settings: Default::default(),
    };
    let cache = StageCache::recording(None);
    let r = cook_asset_job(&job, &options, &cache, &Silent).unwrap();
    assert!(r.package.is_some(), "{:?}", r.report.diagnostics);
    let current: Vec<(String, u32, String)> = cache
        .stage_fingerprints()
        .into_iter()
        .map(|(s, h)| {
            (
                s.name().to_string(),
                s.version(),
                h.iter().map(|b| format!("{b:02x}")).collect(),
            )
        })
        .collect();
    let path = repo().join("tests/golden/stage-outputs.txt");
    let text: String = current
        .iter()
        .map(|(s, v, h)| format!("{s} {v} {h}\n"))
        .collect();
    if std::env::var_os("LUDUS_UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &text).unwrap();
        return;
    }
    let golden = std::fs::read_to_string(&path).unwrap_or_default();
    let mut problems = Vec::new();
    for (s, v, h) in &current {
        let g = golden
            .lines()
            .find(|l| l.split(' ').next() == Some(s.as_str()));
        match g.map(|l| l.split(' ').collect::<Vec<_>>()) {
            Some(parts) if parts.len() == 3 => {
                let (gv, gh) = (parts[1], parts[2]);
                if gv == v.to_string() && gh != h {
                    problems.push(format!(
                        "stage '{s}' output changed but its version is still {v}: bump it"
                    ));
                } else if gv != v.to_string() {
                    problems.push(format!(
                        "stage '{s}' is version {v}, golden has {gv}: refresh the golden file"
                    ));
                }
            }
            _ => problems.push(format!("stage '{s}' missing from {}", path.display())),
        }
    }
    assert!(
        problems.is_empty(),
        "{}\n(refresh with LUDUS_UPDATE_GOLDEN=1 cargo test -p ludus-anim-cooker --test stage_versions)",
        problems.join("\n")
    );
}
