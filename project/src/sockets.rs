//! Manifest sockets: `sockets = [{ name, joint, translation, rotation }]`
//! in a `[[skeleton]]` or an `[[asset]]`. Each names a frame on a joint
//! (by joint name in the cooked skeleton), with an offset in the joint's
//! space: translation in meters, rotation a quaternion (x, y, z, w),
//! normalized when cooked. The joint is resolved by the cooker, which
//! knows the skeleton (an unknown joint is a located error with a
//! suggestion).

use crate::keys::{KeyInput, KeyWriter};
use serde::Deserialize;

#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SocketSpec {
    pub name: String,
    pub joint: String,
    /// Meters, in the joint's space (default: none).
    pub translation: Option<[f32; 3]>,
    /// Quaternion x, y, z, w (default: identity).
    pub rotation: Option<[f32; 4]>,
}

impl SocketSpec {
    /// Why `sockets` cannot be cooked whatever the skeleton (`where_` says
    /// which table), if it cannot: an empty or repeated name, an empty
    /// joint, a non-finite value, a zero rotation.
    pub fn invalid(sockets: &[SocketSpec], where_: &str) -> Option<String> {
        for (i, s) in sockets.iter().enumerate() {
            let at = format!("{where_} sockets[{i}]");
            if s.name.is_empty() || s.joint.is_empty() {
                return Some(format!("{at}: `name` and `joint` must not be empty"));
            }
            if sockets[..i].iter().any(|o| o.name == s.name) {
                return Some(format!("{at}: socket '{}' is declared twice", s.name));
            }
            let t = s.translation.unwrap_or_default();
            let r = s.rotation.unwrap_or([0.0, 0.0, 0.0, 1.0]);
            let len2: f32 = r.iter().map(|x| x * x).sum();
            if !t.iter().chain(&r).all(|x| x.is_finite()) || len2 < 1e-12 {
                return Some(format!(
                    "{at}: socket '{}': translation and rotation must be finite, the rotation not zero",
                    s.name
                ));
            }
        }
        None
    }
}

impl KeyInput for SocketSpec {
    fn feed(&self, k: &mut KeyWriter) {
        let SocketSpec {
            name,
            joint,
            translation,
            rotation,
        } = self;
        k.put(name).put(joint).put(translation).put(rotation);
    }
}
