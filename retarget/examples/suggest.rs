//! `cargo run -p ludus-anim-retarget --example suggest -- SOURCE[@UNITS] TARGET[@UNITS]`:
//! print a suggested profile (what `ludus-anim retarget suggest` will
//! write once the cooker wires it).
use ludus_anim_importers::{import_file, ImportOptions};
use ludus_anim_normalize::normalize;

fn load(arg: &str) -> Result<ludus_anim_normalize::Normalized, String> {
    let (path, units) = match arg.split_once('@') {
        Some((p, u)) => (
            p,
            Some(u.parse::<f32>().map_err(|e| format!("{arg}: {e}"))?),
        ),
        None => (arg, None),
    };
    let a = import_file(std::path::Path::new(path), &ImportOptions::default())
        .map_err(|e| e.to_string())?;
    normalize(&a, units).map_err(|e| e.to_string())
}

fn main() -> Result<(), String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [s, t] = args.as_slice() else {
        return Err("usage: suggest SOURCE[@UNITS] TARGET[@UNITS]".into());
    };
    let (src, tgt) = (load(s)?, load(t)?);
    let strip = |a: &str| a.split('@').next().unwrap_or(a).to_string();
    let p = ludus_anim_retarget::suggest(&src.skeleton, &strip(s), &tgt.skeleton, &strip(t));
    println!("{}", p.to_toml().map_err(|e| e.to_string())?);
    Ok(())
}
