//! Sockets as a package stores them (the optional `SOCK` section): named
//! frames attached to skeleton joints (a weapon hand grip, a muzzle, a
//! camera mount), each a rigid offset in its joint's space. A game puts
//! an attachment at `component[joint] * offset`. They come from a source
//! file's non-bone child nodes and from the manifest, and are cooked with
//! the skeleton (the shared skeleton's package, or a standalone asset's).

/// Bytes of the SOCK section header: socket count u32, reserved u32.
pub const SOCKETS_HEADER_SIZE: usize = 8;
/// Bytes per socket: name u32 (string table offset), joint u32,
/// translation 3 x f32 (meters, joint space), rotation 4 x f32 (unit
/// quaternion x, y, z, w).
pub const SOCKET_RECORD_SIZE: usize = 4 + 4 + 12 + 16;
/// How far a stored rotation's length may be from one.
pub const SOCKET_ROTATION_TOLERANCE: f32 = 1e-3;

/// One socket of a loaded package.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Socket<'a> {
    /// Unique within the package.
    pub name: &'a str,
    /// Joint index in the package's skeleton.
    pub joint: u32,
    /// Offset from the joint, in the joint's space (meters).
    pub translation: [f32; 3],
    /// Offset rotation, a unit quaternion (x, y, z, w).
    pub rotation: [f32; 4],
}

/// The SOCK section's bytes for `sockets` (names already added to the
/// string table: `name_offsets[i]` is socket `i`'s).
pub fn write_sockets(sockets: &[Socket<'_>], name_offsets: &[u32]) -> Vec<u8> {
    let mut out = Vec::with_capacity(SOCKETS_HEADER_SIZE + sockets.len() * SOCKET_RECORD_SIZE);
    let put = |out: &mut Vec<u8>, v: u32| out.extend_from_slice(&v.to_le_bytes());
    put(&mut out, sockets.len() as u32);
    put(&mut out, 0);
    for (s, &name) in sockets.iter().zip(name_offsets) {
        put(&mut out, name);
        put(&mut out, s.joint);
        for v in s.translation.iter().chain(&s.rotation) {
            put(&mut out, v.to_bits());
        }
    }
    out
}
