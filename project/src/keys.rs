//! The key writer: typed values into a stage's cache key
//! (`docs/stage-keys.md`). Each stage's spec says what its key covers
//! (`crate::stage::CookStage::Spec`); the chain is derived in
//! `pipeline::chain`. Every value is fed field by field through
//! [`KeyInput`] — never a `Debug` or a JSON rendering, which could change
//! with a dependency's formatting — and struct impls destructure their
//! value, so a new field that is not hashed is a compile error rather than
//! a stale cache hit.
//!
//! Adapted idea: bevy's asset processor (a meta hash over source and
//! settings per processed asset); departure: per-stage keys that also carry
//! the stage's code version and the package format version.

use ludus_anim_cache::{Key, KeyBuilder};
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::{SourceFormat, SourceKind};
use std::collections::BTreeMap;

/// How stage outputs are encoded in the cache (`stage_cache`: 1,
/// zstd-compressed postcard); in every key, so a cache written with
/// another encoding is never read.
pub const ENTRY_FORMAT: u32 = 1;

/// A key under construction: typed fields over the cache crate's
/// length-prefixed, tagged [`KeyBuilder`].
pub struct KeyWriter(KeyBuilder);

impl KeyWriter {
    /// A key seeded with a stage's name and code version and the cache's
    /// entry encoding ([`ENTRY_FORMAT`]).
    pub fn stage(name: &str, version: u32) -> KeyWriter {
        let mut b = KeyBuilder::new();
        b.str(name).u32(version).u32(ENTRY_FORMAT);
        KeyWriter(b)
    }

    /// Hash one value.
    pub fn put<T: KeyInput + ?Sized>(&mut self, v: &T) -> &mut Self {
        v.feed(self);
        self
    }

    /// Hash an enum variant or a field label by a stable spelling.
    pub fn tag(&mut self, s: &str) -> &mut Self {
        self.0.str(s);
        self
    }

    pub fn finish(&self) -> Key {
        self.0.finish()
    }
}

/// A value that goes into a key.
pub trait KeyInput {
    fn feed(&self, k: &mut KeyWriter);
}

impl KeyInput for str {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.str(self);
    }
}
impl KeyInput for String {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.str(self);
    }
}
impl KeyInput for bool {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.u32(u32::from(*self));
    }
}
impl KeyInput for u32 {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.u32(*self);
    }
}
impl KeyInput for u64 {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.u64(*self);
    }
}
impl KeyInput for f32 {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.f32(*self);
    }
}
impl KeyInput for [u8; 32] {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.bytes(self);
    }
}
impl KeyInput for Key {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.key(self);
    }
}
impl<T: KeyInput> KeyInput for Option<T> {
    fn feed(&self, k: &mut KeyWriter) {
        match self {
            None => k.0.u32(0),
            Some(_) => k.0.u32(1),
        };
        if let Some(v) = self {
            v.feed(k);
        }
    }
}
impl<T: KeyInput> KeyInput for [T] {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.u64(self.len() as u64);
        for v in self {
            v.feed(k);
        }
    }
}
impl<T: KeyInput> KeyInput for Vec<T> {
    fn feed(&self, k: &mut KeyWriter) {
        self.as_slice().feed(k);
    }
}
impl<T: KeyInput, const N: usize> KeyInput for [T; N] {
    fn feed(&self, k: &mut KeyWriter) {
        self.as_slice().feed(k);
    }
}
impl<A: KeyInput, B: KeyInput> KeyInput for (A, B) {
    fn feed(&self, k: &mut KeyWriter) {
        self.0.feed(k);
        self.1.feed(k);
    }
}
impl<K: KeyInput, V: KeyInput> KeyInput for BTreeMap<K, V> {
    fn feed(&self, k: &mut KeyWriter) {
        k.0.u64(self.len() as u64);
        for (a, b) in self {
            a.feed(k);
            b.feed(k);
        }
    }
}
impl KeyInput for SourceFormat {
    fn feed(&self, k: &mut KeyWriter) {
        k.tag(self.name());
    }
}
impl KeyInput for SourceKind {
    fn feed(&self, k: &mut KeyWriter) {
        k.tag(match self {
            SourceKind::Curves => "curves",
            SourceKind::Samples => "samples",
        });
    }
}
impl KeyInput for ImportOptions {
    fn feed(&self, k: &mut KeyWriter) {
        let ImportOptions {
            keep_unused_leaves,
            custom_curves,
        } = self;
        k.put(keep_unused_leaves).put(custom_curves);
    }
}

/// What an import reads: the source's recorded path (companions resolve
/// against it, diagnostics name it), its bytes, and the companion files (a
/// `.gltf`'s buffers) with their recorded paths and content hashes.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceDigest {
    /// Relative to the project root, normalized (`crate::paths`).
    pub path: String,
    pub format: SourceFormat,
    pub bytes: [u8; 32],
    pub companions: Vec<(String, [u8; 32])>,
}

/// What a retargeted asset's keys cover besides its own source.
#[derive(Clone, Debug, PartialEq)]
pub struct RetargetInputs {
    /// blake3 of the retarget profile's bytes.
    pub profile: [u8; 32],
    /// The normalize key of the target skeleton's file.
    pub target: Key,
}

impl KeyInput for RetargetInputs {
    fn feed(&self, k: &mut KeyWriter) {
        let RetargetInputs { profile, target } = self;
        k.put(profile).put(target);
    }
}
