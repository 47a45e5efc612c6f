//! The optional SKIN section: mesh skin bindings, checked at load so a
//! renderer can index the skeleton and use the matrices as they are.

use super::bytes::{Bytes, Strings};
use super::{invalid, PackageError};
use ludus_anim_format::skin::{
    Affine34, ClipBounds, SkinBinding, BOUNDS_HEADER_SIZE, BOUNDS_RECORD_SIZE, SKIN_ENTRY_SIZE,
    SKIN_HEADER_SIZE, SKIN_RECORD_HEADER_SIZE,
};

/// Parse and validate every skin: names are strings, unique and not
/// empty; every palette entry's joint is a joint of the skeleton
/// (`joint_count`); every matrix is finite, and every inverse bind is
/// invertible (a zero determinant would collapse the mesh).
pub(super) fn parse_skins<'a>(
    sec: Bytes<'a>,
    strings: &Strings<'a>,
    joint_count: usize,
) -> Result<Vec<SkinBinding<'a>>, PackageError> {
    let count = sec.u32(0)?;
    if sec.u32(4)? != 0 {
        return Err(invalid("SKIN reserved field is not zero"));
    }
    let mut at = SKIN_HEADER_SIZE as u64;
    let mut out: Vec<SkinBinding<'a>> = Vec::new();
    for s in 0..count {
        let name = strings.read(&sec, at, "skin name")?;
        if name.is_empty() || out.iter().any(|o| o.name == name) {
            return Err(invalid(format!(
                "skin {s}: name '{name}' is empty or repeated"
            )));
        }
        let palette = sec.u32(at + 4)? as u64;
        at += SKIN_RECORD_HEADER_SIZE as u64;
        // The whole palette must fit before anything is allocated for it.
        sec.range(at, palette * SKIN_ENTRY_SIZE as u64)?;
        let mut skin = SkinBinding {
            name,
            joints: Vec::with_capacity(palette as usize),
            inverse_bind: Vec::with_capacity(palette as usize),
            bind_world: Vec::with_capacity(palette as usize),
        };
        for i in 0..palette {
            let joint = sec.u32(at)?;
            if joint as usize >= joint_count {
                return Err(invalid(format!(
                    "skin '{name}' palette entry {i}: joint {joint} is not one of the skeleton's {joint_count}"
                )));
            }
            let inverse_bind = matrix(&sec, at + 4, name, i, "inverse bind")?;
            if determinant(&inverse_bind).abs() < f32::MIN_POSITIVE {
                return Err(invalid(format!(
                    "skin '{name}' palette entry {i}: the inverse bind matrix is singular"
                )));
            }
            let bind_world = matrix(&sec, at + 52, name, i, "bind")?;
            skin.joints.push(joint);
            skin.inverse_bind.push(inverse_bind);
            skin.bind_world.push(bind_world);
            at += SKIN_ENTRY_SIZE as u64;
        }
        out.push(skin);
    }
    if at != sec.b.len() as u64 {
        return Err(invalid(format!(
            "SKIN section holds {} bytes, its skins {at}",
            sec.b.len()
        )));
    }
    Ok(out)
}

fn matrix(
    sec: &Bytes<'_>,
    at: u64,
    skin: &str,
    entry: u64,
    what: &str,
) -> Result<Affine34, PackageError> {
    let mut m = [0.0f32; 12];
    for (k, v) in m.iter_mut().enumerate() {
        *v = sec.f32(at + 4 * k as u64)?;
        if !v.is_finite() {
            return Err(invalid(format!(
                "skin '{skin}' palette entry {entry}: the {what} matrix is not finite"
            )));
        }
    }
    Ok(m)
}

/// Parse the BNDS section: one record per clip; a present record is
/// finite with `min <= max` and a radius >= 0.
pub(super) fn parse_bounds(
    sec: Bytes<'_>,
    clips: usize,
) -> Result<Vec<Option<ClipBounds>>, PackageError> {
    let count = sec.u32(0)? as usize;
    if count != clips || sec.u32(4)? != 0 {
        return Err(invalid(format!(
            "BNDS holds {count} clips (reserved field must be zero), the package {clips}"
        )));
    }
    if sec.b.len() != BOUNDS_HEADER_SIZE + count * BOUNDS_RECORD_SIZE {
        return Err(invalid("BNDS section size does not match its clip count"));
    }
    let mut out = Vec::with_capacity(count);
    for c in 0..count {
        let at = (BOUNDS_HEADER_SIZE + c * BOUNDS_RECORD_SIZE) as u64;
        match sec.u32(at)? {
            0 => out.push(None),
            1 => {
                let mut v = [0.0f32; 10];
                for (k, x) in v.iter_mut().enumerate() {
                    *x = sec.f32(at + 4 + 4 * k as u64)?;
                }
                let b = ClipBounds {
                    min: [v[0], v[1], v[2]],
                    max: [v[3], v[4], v[5]],
                    center: [v[6], v[7], v[8]],
                    radius: v[9],
                };
                let ordered = (0..3).all(|i| b.min[i] <= b.max[i]);
                if !v.iter().all(|x| x.is_finite()) || !ordered || b.radius < 0.0 {
                    return Err(invalid(format!(
                        "clip {c}: motion bounds are not finite or not ordered"
                    )));
                }
                out.push(Some(b));
            }
            _ => return Err(invalid(format!("clip {c}: bounds flag is not 0 or 1"))),
        }
    }
    Ok(out)
}

/// Determinant of the 3x3 linear part.
fn determinant(m: &Affine34) -> f32 {
    let [a, b, c, d, e, f, g, h, i, ..] = *m;
    a * (e * i - f * h) - d * (b * i - c * h) + g * (b * f - c * e)
}
