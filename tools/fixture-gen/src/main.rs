//! `fixture-gen [OUT_DIR]`: regenerates the bundled fixture content.
//!
//! Without an argument it writes into the workspace's `fixtures/` directory,
//! which is what `cargo run -p ludus-anim-fixture-gen` does.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    // `fixture-gen --variants N DIR`: N varied bipeds for benchmarks.
    let all: Vec<String> = std::env::args().skip(1).collect();
    if all.first().map(String::as_str) == Some("--variants") {
        let (Some(n), Some(dir)) = (all.get(1).and_then(|n| n.parse::<u32>().ok()), all.get(2))
        else {
            eprintln!("usage: fixture-gen --variants N OUT_DIR");
            return ExitCode::from(2);
        };
        return match ludus_anim_fixture_gen::write_variants(&PathBuf::from(dir), n) {
            Ok(paths) => {
                println!("wrote {} variants to {dir}", paths.len());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("fixture-gen: cannot write {dir}: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let mut args = std::env::args_os().skip(1);
    let dir = match (args.next(), args.next()) {
        (None, _) => ludus_anim_fixture_gen::default_fixtures_dir(),
        (Some(a), None) if a == "-h" || a == "--help" => {
            println!(
                "usage: fixture-gen [OUT_DIR]\n\nWrites {} (default OUT_DIR: the workspace fixtures/ directory).",
                ludus_anim_fixture_gen::BIPED_FILE
            );
            return ExitCode::SUCCESS;
        }
        (Some(a), None) => PathBuf::from(a),
        (Some(_), Some(_)) => {
            eprintln!("fixture-gen: expected at most one argument (output directory)");
            return ExitCode::from(2);
        }
    };
    let split = ludus_anim_fixture_gen::write_split_project(&dir).and_then(|mut s| {
        s.extend(ludus_anim_fixture_gen::write_rig160_project(&dir)?);
        Ok(s)
    });
    match ludus_anim_fixture_gen::write_fixtures(&dir).and_then(|p| Ok((p, split?))) {
        Ok((path, split)) => {
            let size = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
            println!("wrote {} ({size} bytes)", path.display());
            for p in split {
                println!("wrote {}", p.display());
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("fixture-gen: cannot write {}: {e}", dir.display());
            ExitCode::FAILURE
        }
    }
}
