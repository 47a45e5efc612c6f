//! Every stage's cache key, derived in one place from typed inputs
//! (`docs/stage-keys.md` documents this file).
//!
//! Keys chain: a stage's key includes the key of the stage it reads from,
//! which determines that stage's output (stages are deterministic functions
//! of their inputs and code version), so the chain is known before any
//! stage runs: [`AssetKeys`] from what the cook was asked to do and the
//! source's bytes, [`ClipKeys`] from those and each clip's settings. Every
//! value is fed field by field through [`KeyInput`] — never a `Debug` or a
//! JSON rendering, which could change with a dependency's formatting — and
//! struct impls destructure their value, so a new field that is not hashed
//! is a compile error rather than a stale cache hit.
//!
//! Adapted idea: bevy's asset processor (a meta hash over source and
//! settings per processed asset); departure: per-stage keys that also carry
//! the stage's code version and the package format version.

use crate::manifest::AssetEntry;
use crate::profile::{Profile, ShellSettings, ThresholdSettings};
use crate::settings::ClipPrepSettings;
use crate::stage::Stage;
use ludus_anim_cache::{Key, KeyBuilder};
use ludus_anim_format::codec::CodecId;
use ludus_anim_format::package::FORMAT_VERSION;
use ludus_anim_importers::ImportOptions;
use ludus_anim_model::{SourceFormat, SourceKind};
use std::collections::BTreeMap;

/// A key under construction: typed fields over the cache crate's
/// length-prefixed, tagged [`KeyBuilder`].
pub struct KeyWriter(KeyBuilder);

impl KeyWriter {
    /// A key seeded with `stage`'s name and code version.
    pub fn stage(stage: Stage) -> KeyWriter {
        let mut b = KeyBuilder::new();
        b.str(stage.name()).u32(stage.version());
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

/// The key under which an import's companion list is remembered: known
/// from the source's recorded path and bytes alone, before the companions
/// are read (the same bytes elsewhere name other companions).
pub fn companions_key(
    path: &str,
    format: SourceFormat,
    bytes: &[u8; 32],
    options: &ImportOptions,
) -> Key {
    KeyWriter::stage(Stage::Import)
        .tag("companions")
        .put(path)
        .put(bytes)
        .put(&format)
        .put(options)
        .finish()
}

/// Everything that reaches an asset's package besides its clips' keys.
pub struct PackageInputs<'a> {
    pub asset_name: &'a str,
    /// The source path as the package and report record it.
    pub recorded_path: &'a str,
    /// blake3 over the source bytes and every companion's bytes.
    pub source_hash: &'a [u8; 32],
    pub settings: &'a AssetEntry,
    pub units_m: Option<f32>,
    pub encoder_slack: f32,
    /// Every profile the cook references, by name, after overrides.
    pub profiles: &'a BTreeMap<String, Profile>,
    pub default_profile: &'a str,
    /// The retarget profile and target, for retargeted assets.
    pub retarget: Option<RetargetInputs>,
}

/// The asset-level keys.
#[derive(Clone, Debug, PartialEq)]
pub struct AssetKeys {
    pub import: Key,
    pub normalize: Key,
    /// Retargeted assets only.
    pub retarget: Option<Key>,
    /// The whole asset: package bytes, manifest entry and report.
    pub package: Key,
}

/// The import key of a source with these bytes, companions and options.
pub fn import_key(digest: &SourceDigest, import: &ImportOptions) -> Key {
    KeyWriter::stage(Stage::Import)
        .put(&digest.path)
        .put(&digest.bytes)
        .put(&digest.format)
        .put(import)
        .put(&digest.companions)
        .finish()
}

/// The normalize key of an import under a units override.
pub fn normalize_key(import: &Key, units_m: Option<f32>) -> Key {
    KeyWriter::stage(Stage::Normalize)
        .put(import)
        .put(&units_m)
        .finish()
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

/// The retarget stage's key: the source's normalize key, the profile's
/// content and the target skeleton's normalize key (which fixes its
/// skeleton identity and rest pose).
pub fn retarget_key(normalize: &Key, r: &RetargetInputs) -> Key {
    KeyWriter::stage(Stage::Retarget)
        .put(&ludus_anim_retarget::RETARGET_VERSION)
        .put(normalize)
        .put(r)
        .finish()
}

impl AssetKeys {
    /// The key the clips chain from: the retargeted asset's, or the
    /// normalized source's.
    pub fn upstream(&self) -> &Key {
        self.retarget.as_ref().unwrap_or(&self.normalize)
    }

    pub fn derive(
        digest: &SourceDigest,
        import: &ImportOptions,
        package: &PackageInputs<'_>,
    ) -> AssetKeys {
        let import_key = import_key(digest, import);
        let normalize = normalize_key(&import_key, package.units_m);
        AssetKeys {
            retarget: package
                .retarget
                .as_ref()
                .map(|r| retarget_key(&normalize, r)),
            package: package_key(&import_key, package),
            import: import_key,
            normalize,
        }
    }
}

fn package_key(import: &Key, p: &PackageInputs<'_>) -> Key {
    let mut k = KeyWriter::stage(Stage::Package);
    k.put(import)
        .tag(crate::COOKER_VERSION)
        .put(&FORMAT_VERSION)
        .put(p.asset_name)
        .put(p.recorded_path)
        .put(p.source_hash)
        .put(p.settings)
        .put(&p.units_m)
        .put(&p.encoder_slack);
    for s in Stage::ALL {
        k.put(&s.version());
    }
    k.put(p.profiles).put(p.default_profile).put(&p.retarget);
    k.finish()
}

/// One clip as the key chain sees it.
pub struct ClipSpec<'a> {
    /// The key of the asset the clip comes from (normalize, or the
    /// retarget stage once an asset is retargeted).
    pub upstream: &'a Key,
    /// The imported clip it is cut from, and the cut (seconds).
    pub source_clip: &'a str,
    pub range: Option<(f32, f32)>,
    pub kind: SourceKind,
    pub profile: &'a Profile,
    pub prep: &'a ClipPrepSettings,
    /// The resample key of the clip an additive reference reads.
    pub reference: Option<Key>,
    pub encoder_slack: f32,
}

/// The clip-level keys.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipKeys {
    pub resample: Key,
    pub prepare: Key,
    pub encode: Key,
    pub verify: Key,
}

/// The resample key of a (possibly cut) clip under `profile`.
pub fn resample_key(
    upstream: &Key,
    source_clip: &str,
    range: Option<(f32, f32)>,
    kind: SourceKind,
    profile: &Profile,
) -> Key {
    KeyWriter::stage(Stage::Resample)
        .put(upstream)
        .put(source_clip)
        .put(&range)
        .put(&kind)
        .put(&profile.sample_rate)
        .put(&ShellSettings(profile))
        .finish()
}

impl ClipKeys {
    pub fn derive(c: &ClipSpec<'_>) -> ClipKeys {
        let p = c.profile;
        let resample = resample_key(c.upstream, c.source_clip, c.range, c.kind, p);
        let prepare = KeyWriter::stage(Stage::Prepare)
            .put(&resample)
            .put(c.prep)
            .put(&p.sample_rate.max_resample_error_m)
            .put(&ShellSettings(p))
            .put(&c.reference)
            .finish();
        let mut k = KeyWriter::stage(Stage::Encode);
        k.put(&prepare)
            .put(&p.codec)
            .put(&u32::from(CodecId::Vbr.version()))
            .put(&u32::from(CodecId::Reference.version()))
            .put(&p.max_segment_samples)
            .put(&c.encoder_slack)
            .put(&ThresholdSettings(p))
            .put(&ShellSettings(p));
        if c.prep.additive.is_some() {
            // Additive encodes are checked applied onto their base through
            // a written package and the verifier (stages::encode).
            k.put(&Stage::Verify.version())
                .put(&Stage::Package.version())
                .put(&FORMAT_VERSION);
        }
        let encode = k.finish();
        let verify = KeyWriter::stage(Stage::Verify)
            .put(&encode)
            .put(&p.curve_error_threshold)
            .finish();
        ClipKeys {
            resample,
            prepare,
            encode,
            verify,
        }
    }
}
