//! `cook --limit NAME=VALUE`: resource limits on the command line, over
//! the manifest's (`docs/limits.md`). Byte limits take sizes as
//! `cache gc --max-size` does (`64M`, `2GiB`, `1048576`).

use super::cache::parse_size;
use ludus_anim_model::limits::{CompanionRoot, LimitOverrides};

/// Every name `--limit` accepts (the fields of `Limits`).
pub const NAMES: [&str; 9] = [
    "max_file_bytes",
    "max_clip_duration_s",
    "max_samples_per_clip",
    "max_keys_per_channel",
    "max_joints",
    "max_hierarchy_depth",
    "max_asset_memory_bytes",
    "max_encode_work",
    "companion_root",
];

/// The overrides `--limit` flags set, later flags winning; an error
/// message naming the flag otherwise.
pub fn parse_limits(flags: &[String]) -> Result<LimitOverrides, String> {
    let mut o = LimitOverrides::default();
    for f in flags {
        set(&mut o, f).map_err(|why| format!("--limit {f}: {why}"))?;
    }
    match o.invalid_field() {
        Some(field) => Err(format!("--limit {field} must be a number above zero")),
        None => Ok(o),
    }
}

fn set(o: &mut LimitOverrides, flag: &str) -> Result<(), String> {
    let (name, value) = flag
        .split_once('=')
        .ok_or("expected NAME=VALUE, e.g. max_file_bytes=64M")?;
    let (name, value) = (name.trim(), value.trim());
    let count = || {
        value
            .replace('_', "")
            .parse::<u64>()
            .map_err(|_| format!("'{value}' is not a whole number"))
    };
    let size = || parse_size(value).ok_or(format!("'{value}' is not a size (e.g. 64M, 2GiB)"));
    match name {
        "max_file_bytes" => o.max_file_bytes = Some(size()?),
        "max_asset_memory_bytes" => o.max_asset_memory_bytes = Some(size()?),
        "max_clip_duration_s" => {
            let s: f64 = value
                .parse()
                .map_err(|_| format!("'{value}' is not a number of seconds"))?;
            o.max_clip_duration_s = Some(s);
        }
        "max_samples_per_clip" => o.max_samples_per_clip = Some(count()?),
        "max_keys_per_channel" => o.max_keys_per_channel = Some(count()?),
        "max_encode_work" => o.max_encode_work = Some(count()?),
        "max_joints" => o.max_joints = Some(count()? as usize),
        "max_hierarchy_depth" => o.max_hierarchy_depth = Some(count()? as usize),
        "companion_root" => {
            o.companion_root = Some(match value {
                "asset_dir" => CompanionRoot::AssetDir,
                "project" => CompanionRoot::Project,
                _ => return Err(format!("'{value}' is not asset_dir or project")),
            })
        }
        _ => {
            let hint = ludus_anim_model::suggest::closest(name, NAMES)
                .map(|c| format!(" (did you mean `{c}`?)"))
                .unwrap_or_default();
            return Err(format!(
                "unknown limit `{name}`{hint}; limits: {}",
                NAMES.join(", ")
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flags(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn limits_parse_with_sizes_counts_and_seconds() {
        let o = parse_limits(&flags(&[
            "max_file_bytes=64M",
            "max_clip_duration_s=7.5",
            "max_joints=2_000",
            "companion_root=project",
            "max_joints=3000",
        ]))
        .unwrap();
        assert_eq!(o.max_file_bytes, Some(64 << 20));
        assert_eq!(o.max_clip_duration_s, Some(7.5));
        assert_eq!(o.max_joints, Some(3000));
        assert_eq!(o.companion_root, Some(CompanionRoot::Project));
    }

    #[test]
    fn bad_limits_name_the_flag() {
        let e = parse_limits(&flags(&["max_jionts=3"])).unwrap_err();
        assert!(e.contains("did you mean `max_joints`"), "{e}");
        let e = parse_limits(&flags(&["max_file_bytes"])).unwrap_err();
        assert!(e.contains("NAME=VALUE"), "{e}");
        let e = parse_limits(&flags(&["max_clip_duration_s=-1"])).unwrap_err();
        assert!(e.contains("max_clip_duration_s must be"), "{e}");
        let e = parse_limits(&flags(&["max_joints=0"])).unwrap_err();
        assert!(e.contains("max_joints must be"), "{e}");
        assert!(parse_limits(&flags(&["max_file_bytes=lots"])).is_err());
    }
}
