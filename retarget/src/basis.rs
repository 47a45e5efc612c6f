//! Declared bases: each side names the component-space axes that point up
//! and forward. Motion is converted through the canonical frame of the
//! seed's conventions (+Y up, +Z forward, right-handed: +X is the
//! character's left), so a Z-up source (MakeHuman BVH) or a character
//! facing -Z retargets without editing either file.

use ludus_anim_format::math::{Mat3A, Quat, Vec3};

/// Parse `+x`, `-y`, `z` (sign optional) into a unit axis.
pub fn axis(name: &str) -> Result<Vec3, String> {
    let t = name.trim().to_ascii_lowercase();
    let (sign, letter) = match t.strip_prefix('-') {
        Some(r) => (-1.0, r),
        None => (1.0, t.strip_prefix('+').unwrap_or(&t)),
    };
    let v = match letter {
        "x" => Vec3::X,
        "y" => Vec3::Y,
        "z" => Vec3::Z,
        _ => return Err(format!("axis '{name}' is not one of +x -x +y -y +z -z")),
    };
    Ok(v * sign)
}

/// Rotation taking this side's component frame to the canonical frame:
/// `basis * up = +Y`, `basis * forward = +Z`.
pub fn basis(up: &str, forward: &str) -> Result<Quat, String> {
    let u = axis(up)?;
    let f = axis(forward)?;
    if u.dot(f).abs() > 0.5 {
        return Err(format!(
            "up '{up}' and forward '{forward}' must be perpendicular"
        ));
    }
    // Columns: where the canonical X, Y, Z axes point in side coordinates.
    let to_side = Mat3A::from_cols(u.cross(f).into(), u.into(), f.into());
    Ok(Quat::from_mat3a(&to_side).conjugate().normalize())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_is_identity_and_z_up_maps_to_y_up() {
        let b = basis("+y", "+z").unwrap();
        assert!(b.angle_between(Quat::IDENTITY) < 1e-6);
        let b = basis("+z", "-y").unwrap();
        assert!((b * Vec3::Z - Vec3::Y).length() < 1e-6);
        assert!((b * -Vec3::Y - Vec3::Z).length() < 1e-6);
        // Handedness kept: left (+X canonical) comes from up x forward.
        assert!((b * Vec3::Z.cross(-Vec3::Y) - Vec3::X).length() < 1e-6);
        assert!(basis("+y", "+y").is_err());
        assert!(basis("up", "+z").is_err());
    }
}
