//! `inspect`'s skin section: each skin binding of a package (the SKIN
//! section) with its palette: joint, and the bind-time position of the
//! joint.

use ludus_anim_runtime::package::Package;
use serde_json::{json, Value};
use std::fmt::Write;

/// The skins and clip bounds as text (nothing when the package has none).
pub fn describe(s: &mut String, p: &Package<'_>) {
    for (c, b) in p.clips().iter().zip(&p.bindings().clip_bounds) {
        if let Some(b) = b {
            let _ = writeln!(
                s,
                "bounds {}: min {:?} max {:?} radius {:.4}",
                c.name(),
                b.min,
                b.max,
                b.radius
            );
        }
    }
    let skins = &p.bindings().skins;
    if skins.is_empty() {
        return;
    }
    let sk = p.skeleton();
    let _ = writeln!(s, "skins:          {}", skins.len());
    for skin in skins {
        let _ = writeln!(s, "  {}: {} palette joints", skin.name, skin.joints.len());
        for (i, (&j, b)) in skin.joints.iter().zip(&skin.bind_world).enumerate() {
            let _ = writeln!(
                s,
                "    [{i}] {} bind at ({:.4}, {:.4}, {:.4})",
                sk.name(j as usize),
                b[9],
                b[10],
                b[11]
            );
        }
    }
}

/// The skins for `inspect --json`: name, palette joints by name, and the
/// inverse bind and bind matrices (column-major 3x4).
pub fn describe_json(p: &Package<'_>) -> Value {
    let sk = p.skeleton();
    p.bindings()
        .skins
        .iter()
        .map(|skin| {
            json!({
                "name": skin.name,
                "joints": skin.joints.iter().map(|&j| sk.name(j as usize)).collect::<Vec<_>>(),
                "inverse_bind": skin.inverse_bind,
                "bind_world": skin.bind_world,
            })
        })
        .collect()
}
