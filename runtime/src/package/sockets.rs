//! The optional SOCK section: named frames on joints, checked at load so
//! a game can index the skeleton and use the offsets as they are.

use super::bytes::{Bytes, Strings};
use super::{invalid, PackageError};
use ludus_anim_format::sockets::{
    Socket, SOCKETS_HEADER_SIZE, SOCKET_RECORD_SIZE, SOCKET_ROTATION_TOLERANCE,
};

/// Parse and validate every socket: names are strings, unique and not
/// empty; each joint is a joint of the skeleton (`joint_count`); the
/// offset is finite and its rotation a unit quaternion.
pub(super) fn parse_sockets<'a>(
    sec: Bytes<'a>,
    strings: &Strings<'a>,
    joint_count: usize,
) -> Result<Vec<Socket<'a>>, PackageError> {
    let count = sec.u32(0)? as u64;
    if sec.u32(4)? != 0 {
        return Err(invalid("SOCK reserved field is not zero"));
    }
    let size = SOCKETS_HEADER_SIZE as u64 + count * SOCKET_RECORD_SIZE as u64;
    if sec.b.len() as u64 != size {
        return Err(invalid(format!(
            "SOCK section holds {} bytes, its {count} sockets {size}",
            sec.b.len()
        )));
    }
    let mut out: Vec<Socket<'a>> = Vec::with_capacity(count as usize);
    for s in 0..count {
        let at = SOCKETS_HEADER_SIZE as u64 + s * SOCKET_RECORD_SIZE as u64;
        let name = strings.read(&sec, at, "socket name")?;
        if name.is_empty() || out.iter().any(|o| o.name == name) {
            return Err(invalid(format!(
                "socket {s}: name '{name}' is empty or repeated"
            )));
        }
        let joint = sec.u32(at + 4)?;
        if joint as usize >= joint_count {
            return Err(invalid(format!(
                "socket '{name}': joint {joint} is not one of the skeleton's {joint_count}"
            )));
        }
        let mut v = [0.0f32; 7];
        for (k, x) in v.iter_mut().enumerate() {
            *x = sec.f32(at + 8 + 4 * k as u64)?;
        }
        let len2: f32 = v[3..].iter().map(|x| x * x).sum();
        if !v.iter().all(|x| x.is_finite()) || (len2.sqrt() - 1.0).abs() > SOCKET_ROTATION_TOLERANCE
        {
            return Err(invalid(format!(
                "socket '{name}': the offset is not finite or its rotation is not a unit quaternion"
            )));
        }
        out.push(Socket {
            name,
            joint,
            translation: [v[0], v[1], v[2]],
            rotation: [v[3], v[4], v[5], v[6]],
        });
    }
    Ok(out)
}
