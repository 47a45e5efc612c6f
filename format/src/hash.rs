//! Small, dependency-free hashes with documented definitions, so a second
//! reader can recompute joint IDs, skeleton identities and package checksums
//! from `schemas/package-format.md` alone. None of these are cryptographic;
//! the cooker's content hashes (blake3) live outside the runtime.

const FNV64_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV64_PRIME: u64 = 0x0000_0100_0000_01b3;
const FNV128_OFFSET: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
const FNV128_PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;

/// FNV-1a, 64-bit, over `bytes`.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    let mut h = FNV64_OFFSET;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(FNV64_PRIME);
    }
    h
}

/// Incremental FNV-1a, 128-bit: the skeleton identity hash.
#[derive(Clone, Copy, Debug)]
pub struct Fnv128(u128);

impl Default for Fnv128 {
    fn default() -> Self {
        Fnv128(FNV128_OFFSET)
    }
}

impl Fnv128 {
    pub fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= b as u128;
            self.0 = self.0.wrapping_mul(FNV128_PRIME);
        }
    }
    pub fn write_u32(&mut self, v: u32) {
        self.write(&v.to_le_bytes());
    }
    pub fn write_u64(&mut self, v: u64) {
        self.write(&v.to_le_bytes());
    }
    pub fn write_f32(&mut self, v: f32) {
        // Canonicalize -0.0 so that identical poses hash identically.
        let v = if v == 0.0 { 0.0 } else { v };
        self.write(&v.to_bits().to_le_bytes());
    }
    pub fn finish(&self) -> [u8; 16] {
        self.0.to_le_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv64_known_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf29ce484222325);
        assert_eq!(fnv1a64(b"a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn fnv128_known_vector() {
        let mut h = Fnv128::default();
        h.write(b"a");
        assert_eq!(
            u128::from_le_bytes(h.finish()),
            0xd228cb696f1a8caf78912b704e4a8964
        );
    }
}
