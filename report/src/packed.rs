//! Compact numeric arrays for the report sidecar: a JSON string holding
//! the array's little-endian bytes in standard base64 (RFC 4648, `=`
//! padding). One value costs 4/3 of its byte size in the file (a `u16` is
//! 2.67 characters, a JSON number 5 to 12), and a browser decodes it with
//! `atob` and a `DataView`.
//!
//! Encoded and decoded by the `base64` crate (the project's one base64).

use serde::de::{Deserializer, Error as _};
use serde::ser::Serializer;
use serde::{Deserialize, Serialize};

use base64::engine::general_purpose::STANDARD;
use base64::Engine;

/// Standard base64 with padding.
pub fn base64_encode(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// Decode standard padded base64; `None` for any other input.
pub fn base64_decode(text: &str) -> Option<Vec<u8>> {
    STANDARD.decode(text).ok()
}

/// An element type a packed array can hold.
pub trait Element: Copy {
    const SIZE: usize;
    const NAME: &'static str;
    fn put(self, out: &mut Vec<u8>);
    fn get(bytes: &[u8]) -> Self;
}

macro_rules! element {
    ($t:ty, $name:literal) => {
        impl Element for $t {
            const SIZE: usize = std::mem::size_of::<$t>();
            const NAME: &'static str = $name;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_le_bytes());
            }
            fn get(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
        }
    };
}
element!(u8, "u8");
element!(u16, "u16");
element!(f32, "f32");

/// A numeric array stored as base64 of its little-endian bytes.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Packed<T>(pub Vec<T>);

/// `f32` array (IEEE-754 binary32, little-endian), as base64.
pub type F32s = Packed<f32>;
/// `u16` array (little-endian), as base64.
pub type U16s = Packed<u16>;
/// `u8` array, as base64.
pub type U8s = Packed<u8>;

impl<T: Element> Packed<T> {
    pub fn len(&self) -> usize {
        self.0.len()
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
    pub fn get(&self, i: usize) -> Option<T> {
        self.0.get(i).copied()
    }
    fn to_bytes(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(self.0.len() * T::SIZE);
        for &v in &self.0 {
            v.put(&mut out);
        }
        out
    }
}

impl<T> From<Vec<T>> for Packed<T> {
    fn from(v: Vec<T>) -> Self {
        Packed(v)
    }
}

impl<T: Element> Serialize for Packed<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&base64_encode(&self.to_bytes()))
    }
}

impl<'de, T: Element> Deserialize<'de> for Packed<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        let bytes = base64_decode(&text)
            .ok_or_else(|| D::Error::custom("packed array: not standard padded base64"))?;
        if bytes.len() % T::SIZE != 0 {
            return Err(D::Error::custom(format!(
                "packed {} array: {} bytes is not a whole number of elements",
                T::NAME,
                bytes.len()
            )));
        }
        Ok(Packed(bytes.chunks_exact(T::SIZE).map(T::get).collect()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_rfc4648_vectors() {
        let cases = [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ];
        for (plain, coded) in cases {
            assert_eq!(base64_encode(plain.as_bytes()), coded);
            assert_eq!(base64_decode(coded).as_deref(), Some(plain.as_bytes()));
        }
    }

    #[test]
    fn base64_refuses_malformed_text() {
        for bad in ["Zg=", "Z===", "Zg==Zg==", "Zm9*", "Zm9vY"] {
            assert_eq!(base64_decode(bad), None, "{bad}");
        }
    }

    #[test]
    fn packed_arrays_round_trip_through_json() {
        let v = F32s::from(vec![0.0, -1.5, f32::MAX, 1e-9]);
        let json = serde_json::to_string(&v).unwrap();
        let back: F32s = serde_json::from_str(&json).unwrap();
        assert_eq!(back, v);
        let e = serde_json::from_str::<U16s>("\"Zm9v\"").unwrap_err();
        assert!(e.to_string().contains("whole number"), "{e}");
    }
}
