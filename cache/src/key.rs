//! Cache keys and the builder that derives them.

use std::fmt;

/// A cache key: 32 bytes, normally the output of a [`KeyBuilder`].
///
/// Keys are content addresses: two computations with the same key are
/// assumed to produce interchangeable outputs. The store never interprets a
/// key beyond naming the entry file after its hex form.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub [u8; 32]);

impl Key {
    /// Lowercase hex (64 characters); this is also the entry's file name.
    pub fn to_hex(&self) -> String {
        const DIGITS: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(64);
        for &b in &self.0 {
            s.push(char::from(DIGITS[usize::from(b >> 4)]));
            s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
        }
        s
    }

    /// Parses the 64-character lowercase hex form produced by
    /// [`Key::to_hex`]. Uppercase is rejected so that exactly one file name
    /// maps to each key (the store uses this to recognise entry files).
    pub fn from_hex(hex: &str) -> Option<Key> {
        fn nibble(c: u8) -> Option<u8> {
            match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                _ => None,
            }
        }
        let bytes = hex.as_bytes();
        if bytes.len() != 64 {
            return None;
        }
        let mut out = [0u8; 32];
        for (i, pair) in bytes.chunks_exact(2).enumerate() {
            out[i] = (nibble(pair[0])? << 4) | nibble(pair[1])?;
        }
        Some(Key(out))
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", self.to_hex())
    }
}

/// Builds a [`Key`] from typed, length-prefixed fields.
///
/// Each field is hashed as a one-byte type tag, then (for variable-length
/// fields) its length as a little-endian `u64`, then its bytes. So field
/// boundaries and types are part of the key: `("ab", "c")` and
/// `("a", "bc")` differ, as do `str("1")` and `bytes(b"1")`, and
/// `u32(1)` and `u64(1)`. Field order matters.
///
/// The hasher is blake3 in key-derivation mode with a context string unique
/// to this crate and key format version, so a cache key can never collide
/// with a plain blake3 content hash of the same bytes, and changing the key
/// format (bumping the context) simply makes every old entry a miss.
///
/// ```
/// use ludus_anim_cache::KeyBuilder;
/// let key = KeyBuilder::new()
///     .str("resample")
///     .u32(3) // stage code version
///     .bytes(&[0u8; 32]) // input content hash
///     .f32(30.0) // a setting the stage reads
///     .finish();
/// assert_eq!(key.to_hex().len(), 64);
/// ```
#[derive(Clone)]
pub struct KeyBuilder {
    hasher: blake3::Hasher,
}

/// blake3 `derive_key` context: globally unique, hard-coded, versioned.
const KEY_CONTEXT: &str = "ludus-anim-cache 2025 stage output key v1";

const TAG_STR: u8 = b's';
const TAG_BYTES: u8 = b'b';
const TAG_U32: u8 = b'u';
const TAG_U64: u8 = b'U';
const TAG_F32: u8 = b'f';
const TAG_KEY: u8 = b'k';

impl KeyBuilder {
    /// An empty builder.
    pub fn new() -> KeyBuilder {
        KeyBuilder {
            hasher: blake3::Hasher::new_derive_key(KEY_CONTEXT),
        }
    }

    fn tagged(&mut self, tag: u8, data: &[u8]) -> &mut Self {
        self.hasher.update(&[tag]);
        self.hasher.update(&(data.len() as u64).to_le_bytes());
        self.hasher.update(data);
        self
    }

    /// A UTF-8 string field (stage names, setting names, enum spellings).
    pub fn str(&mut self, s: &str) -> &mut Self {
        self.tagged(TAG_STR, s.as_bytes())
    }

    /// A byte-string field (content hashes, serialized settings).
    pub fn bytes(&mut self, b: &[u8]) -> &mut Self {
        self.tagged(TAG_BYTES, b)
    }

    /// A `u32` field (versions, counts, enum discriminants).
    pub fn u32(&mut self, v: u32) -> &mut Self {
        self.hasher.update(&[TAG_U32]);
        self.hasher.update(&v.to_le_bytes());
        self
    }

    /// A `u64` field (sizes, seeds).
    pub fn u64(&mut self, v: u64) -> &mut Self {
        self.hasher.update(&[TAG_U64]);
        self.hasher.update(&v.to_le_bytes());
        self
    }

    /// An `f32` field, hashed by its exact bit pattern.
    ///
    /// Deliberately no canonicalisation: `0.0` and `-0.0`, or two NaN
    /// payloads, give different keys. A stage may behave differently on
    /// them, and the cost of treating equal-valued settings as different is
    /// only a cache miss, never a wrong hit.
    pub fn f32(&mut self, v: f32) -> &mut Self {
        self.hasher.update(&[TAG_F32]);
        self.hasher.update(&v.to_bits().to_le_bytes());
        self
    }

    /// Another key as a field, for chaining stages (a stage's key includes
    /// the key or content hash of its input).
    pub fn key(&mut self, k: &Key) -> &mut Self {
        self.hasher.update(&[TAG_KEY]);
        self.hasher.update(&k.0);
        self
    }

    /// The key of all fields added so far. The builder stays usable.
    pub fn finish(&self) -> Key {
        Key(*self.hasher.finalize().as_bytes())
    }
}

impl Default for KeyBuilder {
    fn default() -> Self {
        KeyBuilder::new()
    }
}
