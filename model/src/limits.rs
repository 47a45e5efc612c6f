//! Resource limits: how much one asset may make the cooker read, allocate
//! and compute, as policy with documented defaults (`docs/limits.md`).
//!
//! Every importer and stage checks the relevant limit *before* it
//! allocates, from counts the file declares (a header's sample count, an
//! accessor's `count`, a time span times a rate), so a few hostile bytes
//! cannot ask for gigabytes. Anything over a limit is a [`LimitExceeded`]
//! naming the file, clip or joint, the quantity and the limit, never an
//! abort. Limits decide only whether work runs, never what it produces, so
//! they are not part of any cache key.

use crate::curve::{Curve, Key};
use crate::diagnostics::Diagnostic;
use crate::source::{SourceAsset, SourceJoint, SourceSkeleton};
use serde::{Deserialize, Serialize};
use std::mem::size_of;
use std::sync::atomic::{AtomicU64, Ordering};

/// Where an asset's companion files (a `.gltf`'s buffers) may live.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompanionRoot {
    /// The asset's own directory and below (the default).
    #[default]
    AssetDir,
    /// Anywhere under the project root (the manifest's directory); an
    /// asset cooked without a project falls back to its own directory.
    Project,
}

/// The limits for one asset. See `docs/limits.md` for each default and
/// the reasoning behind it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Largest source file, and largest companion file or `data:` URI
    /// payload (decoded), in bytes.
    pub max_file_bytes: u64,
    /// Longest clip, in seconds (the span of its keys or frames).
    pub max_clip_duration_s: f64,
    /// Most samples per clip: frames a file declares (BVH, ACL SJSON), FBX
    /// evaluation times, and the resampled grid.
    pub max_samples_per_clip: u64,
    /// Most keys in one channel (a glTF sampler's input and output).
    pub max_keys_per_channel: u64,
    /// Most joints in one skeleton.
    pub max_joints: usize,
    /// Deepest joint hierarchy (a root has depth 1).
    pub max_hierarchy_depth: usize,
    /// Estimated working memory of one asset's stages, in bytes (see
    /// [`MemoryBudget`] and the per-format estimates in `docs/limits.md`).
    pub max_asset_memory_bytes: u64,
    /// Most encode work for one clip: samples times the sum of every
    /// joint's depth (the encoder's exact search re-evaluates a changed
    /// track's subtree, so its cost grows with both).
    pub max_encode_work: u64,
    /// Where companion files may be read from.
    pub companion_root: CompanionRoot,
}

/// One hour: longer than any cinematic take; a 10^9-second key span is a
/// corrupt or hostile file.
pub const DEFAULT_MAX_CLIP_DURATION_S: f64 = 3600.0;
/// A million samples: an hour at 240 Hz is 864,000.
pub const DEFAULT_MAX_SAMPLES_PER_CLIP: u64 = 1_000_000;
/// 7.5e7 sample-depths: a 1,000-joint chain (depth sum 500,500) at 150
/// samples (about 10 s of encoding), a 500-joint character (depth sum
/// ~7,500) at 10,000 samples, a 200-joint rig (~2,400) at 31,000.
pub const DEFAULT_MAX_ENCODE_WORK: u64 = 75_000_000;
/// Bytes one joint-sample costs across the stages, measured (peak RSS of a
/// 101-joint, 20,000-frame BVH cook: 886 MB, 440 B per joint-sample),
/// rounded up.
pub const BYTES_PER_JOINT_SAMPLE: u64 = 448;

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_file_bytes: 256 << 20,
            max_clip_duration_s: DEFAULT_MAX_CLIP_DURATION_S,
            max_samples_per_clip: DEFAULT_MAX_SAMPLES_PER_CLIP,
            max_keys_per_channel: DEFAULT_MAX_SAMPLES_PER_CLIP,
            max_joints: 10_000,
            max_hierarchy_depth: 1_024,
            max_asset_memory_bytes: 1 << 30,
            max_encode_work: DEFAULT_MAX_ENCODE_WORK,
            companion_root: CompanionRoot::AssetDir,
        }
    }
}

/// Which limit was exceeded (the names match the fields of [`Limits`] and
/// the keys of the manifest's `limits` tables).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    FileBytes,
    ClipDuration,
    SamplesPerClip,
    KeysPerChannel,
    Joints,
    HierarchyDepth,
    AssetMemory,
    EncodeWork,
}

impl Limit {
    pub fn name(self) -> &'static str {
        match self {
            Limit::FileBytes => "max_file_bytes",
            Limit::ClipDuration => "max_clip_duration_s",
            Limit::SamplesPerClip => "max_samples_per_clip",
            Limit::KeysPerChannel => "max_keys_per_channel",
            Limit::Joints => "max_joints",
            Limit::HierarchyDepth => "max_hierarchy_depth",
            Limit::AssetMemory => "max_asset_memory_bytes",
            Limit::EncodeWork => "max_encode_work",
        }
    }
}

/// A quantity over its limit, with where it was found.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("{what} is {value}, over the limit {} = {max} (raise it in a `limits` table of the manifest or with `--limit {}=...`)", limit.name(), limit.name())]
pub struct LimitExceeded {
    pub limit: Limit,
    /// What was measured, e.g. "clip duration (s)".
    pub what: String,
    pub value: f64,
    pub max: f64,
    pub file: Option<String>,
    pub clip: Option<String>,
    pub joint: Option<String>,
}

/// The diagnostic code of every limit error.
pub const LIMIT_CODE: &str = "limit_exceeded";

impl LimitExceeded {
    /// Counts up to 2^53 and seconds are exact as f64.
    pub fn new(
        limit: Limit,
        what: impl Into<String>,
        value: impl Measure,
        max: impl Measure,
    ) -> Self {
        LimitExceeded {
            limit,
            what: what.into(),
            value: value.as_f64(),
            max: max.as_f64(),
            file: None,
            clip: None,
            joint: None,
        }
    }
    pub fn file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
    pub fn clip(mut self, clip: impl Into<String>) -> Self {
        self.clip = Some(clip.into());
        self
    }
    pub fn joint(mut self, joint: impl Into<String>) -> Self {
        self.joint = Some(joint.into());
        self
    }
    /// As a diagnostic (code [`LIMIT_CODE`]) naming file, clip and joint.
    pub fn diagnostic(&self) -> Diagnostic {
        let mut d = Diagnostic::error(LIMIT_CODE, self.to_string());
        d.file.clone_from(&self.file);
        d.clip.clone_from(&self.clip);
        d.joint.clone_from(&self.joint);
        d
    }
}

/// Numbers a limit compares, as the f64 its error reports.
pub trait Measure: Copy + PartialOrd {
    fn as_f64(self) -> f64;
}

impl Measure for u64 {
    fn as_f64(self) -> f64 {
        self as f64
    }
}
impl Measure for usize {
    fn as_f64(self) -> f64 {
        self as f64
    }
}
impl Measure for f64 {
    fn as_f64(self) -> f64 {
        self
    }
}

impl Limits {
    /// `value <= max`, else the error for `limit` describing `what`.
    pub fn check<T: Measure>(
        limit: Limit,
        what: &str,
        value: T,
        max: T,
    ) -> Result<(), LimitExceeded> {
        // `!(a <= b)` so that a NaN is over every limit.
        if value <= max {
            Ok(())
        } else {
            Err(LimitExceeded::new(limit, what, value, max))
        }
    }

    pub fn check_file_bytes(&self, what: &str, bytes: u64) -> Result<(), LimitExceeded> {
        Self::check(Limit::FileBytes, what, bytes, self.max_file_bytes)
    }

    pub fn check_duration(&self, seconds: f64) -> Result<(), LimitExceeded> {
        Self::check(
            Limit::ClipDuration,
            "clip duration (s)",
            seconds,
            self.max_clip_duration_s,
        )
    }

    pub fn check_samples(&self, samples: u64) -> Result<(), LimitExceeded> {
        Self::check(
            Limit::SamplesPerClip,
            "samples in the clip",
            samples,
            self.max_samples_per_clip,
        )
    }

    pub fn check_keys(&self, keys: u64) -> Result<(), LimitExceeded> {
        Self::check(
            Limit::KeysPerChannel,
            "keys in one channel",
            keys,
            self.max_keys_per_channel,
        )
    }

    pub fn check_joints(&self, joints: usize) -> Result<(), LimitExceeded> {
        Self::check(
            Limit::Joints,
            "joints in the skeleton",
            joints,
            self.max_joints,
        )
    }

    pub fn check_depth(&self, depth: usize) -> Result<(), LimitExceeded> {
        Self::check(
            Limit::HierarchyDepth,
            "hierarchy depth",
            depth,
            self.max_hierarchy_depth,
        )
    }

    /// Joint count and hierarchy depth of a skeleton, in one linear pass
    /// (a parent cycle or a bad parent index is left to `validate_asset`;
    /// here it only stops the walk). The deepest joint is named.
    pub fn check_skeleton(&self, skeleton: &SourceSkeleton) -> Result<(), LimitExceeded> {
        self.check_joints(skeleton.joints.len())?;
        let depths = joint_depths(skeleton);
        let deepest = (0..depths.len()).max_by_key(|&j| depths[j]);
        match deepest {
            Some(j) => self.check_depth(depths[j]).map_err(|e| {
                let name = skeleton.joints.get(j).map(|x| x.name.as_str());
                e.joint(name.unwrap_or("?"))
            }),
            None => Ok(()),
        }
    }
}

/// Depth of every joint (a root is 1) in one linear pass: each joint
/// joins a walk up at most once, and a walk stops at the first joint whose
/// depth is known. Joints on a parent cycle or under a bad parent index get
/// the depth the walk reached (validation reports the hierarchy itself).
pub fn joint_depths(skeleton: &SourceSkeleton) -> Vec<usize> {
    const UNKNOWN: usize = 0;
    const ON_PATH: usize = usize::MAX;
    let joints = &skeleton.joints;
    let mut depth = vec![UNKNOWN; joints.len()];
    let mut path = Vec::new();
    for start in 0..joints.len() {
        path.clear();
        let mut at = Some(start);
        let mut base = 0;
        while let Some(i) = at {
            match depth.get(i).copied() {
                Some(UNKNOWN) => {
                    depth[i] = ON_PATH;
                    path.push(i);
                    at = joints[i].parent;
                }
                Some(ON_PATH) | None => break,
                Some(d) => {
                    base = d;
                    break;
                }
            }
        }
        for (k, &i) in path.iter().rev().enumerate() {
            depth[i] = base + k + 1;
        }
    }
    depth
}

/// Optional overrides of [`Limits`] (a manifest's `[project.limits]` or an
/// asset's `limits` table): unset fields keep the base value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LimitOverrides {
    pub max_file_bytes: Option<u64>,
    pub max_clip_duration_s: Option<f64>,
    pub max_samples_per_clip: Option<u64>,
    pub max_keys_per_channel: Option<u64>,
    pub max_joints: Option<usize>,
    pub max_hierarchy_depth: Option<usize>,
    pub max_asset_memory_bytes: Option<u64>,
    pub max_encode_work: Option<u64>,
    pub companion_root: Option<CompanionRoot>,
}

impl LimitOverrides {
    /// `base` with every set field replaced.
    pub fn apply(&self, base: &Limits) -> Limits {
        Limits {
            max_file_bytes: self.max_file_bytes.unwrap_or(base.max_file_bytes),
            max_clip_duration_s: self.max_clip_duration_s.unwrap_or(base.max_clip_duration_s),
            max_samples_per_clip: self
                .max_samples_per_clip
                .unwrap_or(base.max_samples_per_clip),
            max_keys_per_channel: self
                .max_keys_per_channel
                .unwrap_or(base.max_keys_per_channel),
            max_joints: self.max_joints.unwrap_or(base.max_joints),
            max_hierarchy_depth: self.max_hierarchy_depth.unwrap_or(base.max_hierarchy_depth),
            max_asset_memory_bytes: self
                .max_asset_memory_bytes
                .unwrap_or(base.max_asset_memory_bytes),
            max_encode_work: self.max_encode_work.unwrap_or(base.max_encode_work),
            companion_root: self.companion_root.unwrap_or(base.companion_root),
        }
    }

    /// These overrides, then `more` on top (its set fields win).
    pub fn then(&self, more: &LimitOverrides) -> LimitOverrides {
        LimitOverrides {
            max_file_bytes: more.max_file_bytes.or(self.max_file_bytes),
            max_clip_duration_s: more.max_clip_duration_s.or(self.max_clip_duration_s),
            max_samples_per_clip: more.max_samples_per_clip.or(self.max_samples_per_clip),
            max_keys_per_channel: more.max_keys_per_channel.or(self.max_keys_per_channel),
            max_joints: more.max_joints.or(self.max_joints),
            max_hierarchy_depth: more.max_hierarchy_depth.or(self.max_hierarchy_depth),
            max_asset_memory_bytes: more.max_asset_memory_bytes.or(self.max_asset_memory_bytes),
            max_encode_work: more.max_encode_work.or(self.max_encode_work),
            companion_root: more.companion_root.or(self.companion_root),
        }
    }

    /// A field that is not a usable limit (zero, negative or not finite),
    /// by name, for the manifest's validation.
    pub fn invalid_field(&self) -> Option<&'static str> {
        let zero = |v: Option<u64>| v == Some(0);
        let bad_f = |v: Option<f64>| v.is_some_and(|d| !(d.is_finite() && d > 0.0));
        [
            (zero(self.max_file_bytes), "max_file_bytes"),
            (bad_f(self.max_clip_duration_s), "max_clip_duration_s"),
            (zero(self.max_samples_per_clip), "max_samples_per_clip"),
            (zero(self.max_keys_per_channel), "max_keys_per_channel"),
            (self.max_joints == Some(0), "max_joints"),
            (self.max_hierarchy_depth == Some(0), "max_hierarchy_depth"),
            (zero(self.max_asset_memory_bytes), "max_asset_memory_bytes"),
            (zero(self.max_encode_work), "max_encode_work"),
        ]
        .into_iter()
        .find_map(|(bad, name)| bad.then_some(name))
    }
}

/// Estimated working memory one asset may still use: each stage charges
/// what it is about to allocate (from declared counts) before allocating,
/// and a charge over what is left is a [`LimitExceeded`]. Charges are never
/// returned: what an asset's stages hold (its source clips, resampled and
/// prepared grids) mostly lives until its package is written. Shared by
/// the asset's clips, which cook in parallel.
#[derive(Debug)]
pub struct MemoryBudget {
    limit: u64,
    used: AtomicU64,
}

impl MemoryBudget {
    pub fn new(limit: u64) -> Self {
        MemoryBudget {
            limit,
            used: AtomicU64::new(0),
        }
    }

    /// Reserve `bytes` for `what`, or fail naming the estimate and the
    /// limit (nothing is reserved then).
    pub fn charge(&self, what: &str, bytes: u64) -> Result<(), LimitExceeded> {
        let mut used = self.used.load(Ordering::Relaxed);
        loop {
            let total = used.saturating_add(bytes);
            if total > self.limit {
                return Err(LimitExceeded::new(
                    Limit::AssetMemory,
                    format!("estimated memory (bytes) for {what}, with {used} already in use,"),
                    total,
                    self.limit,
                ));
            }
            match self
                .used
                .compare_exchange_weak(used, total, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => return Ok(()),
                Err(now) => used = now,
            }
        }
    }

    /// Bytes reserved so far.
    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    /// Bytes still available.
    pub fn remaining(&self) -> u64 {
        self.limit.saturating_sub(self.used())
    }
}

/// Estimated bytes a source asset holds once imported: its keys, key
/// times and joints (what an asset's later stages keep alive besides their
/// grids).
pub fn source_bytes(asset: &SourceAsset) -> u64 {
    fn keys<T>(c: &Option<Curve<T>>) -> u64 {
        c.as_ref()
            .map_or(0, |c| (c.keys.len() * size_of::<Key<T>>()) as u64)
    }
    let mut total = (asset.skeleton.joints.len() * size_of::<SourceJoint>()) as u64;
    total += asset
        .skeleton
        .joints
        .iter()
        .map(|j| j.name.len() as u64)
        .sum::<u64>();
    for clip in &asset.clips {
        total += (clip.key_times.len() * 4) as u64;
        for t in &clip.tracks {
            total += keys(&t.translation) + keys(&t.rotation) + keys(&t.scale);
        }
        for c in &clip.curves {
            total += (c.curve.keys.len() * size_of::<Key<f32>>()) as u64;
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::SourceJoint;
    use ludus_anim_format::math::Transform;

    fn chain(n: usize) -> SourceSkeleton {
        SourceSkeleton {
            joints: (0..n)
                .map(|i| SourceJoint {
                    name: format!("j{i}"),
                    parent: i.checked_sub(1),
                    rest: Transform::IDENTITY,
                })
                .collect(),
        }
    }

    #[test]
    fn depth_is_linear_and_names_the_deepest_joint() {
        let mut s = chain(5);
        // A second root with one child, listed child first.
        s.joints.push(SourceJoint {
            name: "b".into(),
            parent: Some(6),
            rest: Transform::IDENTITY,
        });
        s.joints.push(SourceJoint {
            name: "a".into(),
            parent: None,
            rest: Transform::IDENTITY,
        });
        assert_eq!(joint_depths(&s), [1, 2, 3, 4, 5, 2, 1]);
        let tight = Limits {
            max_hierarchy_depth: 4,
            ..Limits::default()
        };
        let e = tight.check_skeleton(&s).unwrap_err();
        assert_eq!(e.limit, Limit::HierarchyDepth);
        assert_eq!(e.joint.as_deref(), Some("j4"));
        assert!(e.to_string().contains("max_hierarchy_depth = 4"), "{e}");
        // 100,000 deep: linear, no stack.
        assert_eq!(joint_depths(&chain(100_000))[99_999], 100_000);
    }

    #[test]
    fn cycles_and_bad_parents_terminate() {
        let mut s = chain(3);
        s.joints[0].parent = Some(2);
        let d = joint_depths(&s);
        assert!(d.iter().all(|&x| x <= 4), "{d:?}");
        s.joints[0].parent = Some(0);
        let _ = joint_depths(&s);
        s.joints[0].parent = Some(99);
        let _ = joint_depths(&s);
    }

    #[test]
    fn budget_charges_until_the_limit() {
        let b = MemoryBudget::new(100);
        assert!(b.charge("a", 60).is_ok());
        let e = b.charge("b", 50).unwrap_err();
        assert_eq!(e.limit, Limit::AssetMemory);
        assert_eq!(b.used(), 60);
        assert!(b.charge("c", 40).is_ok());
        assert!(b.charge("d", u64::MAX).is_err());
    }

    #[test]
    fn nan_is_over_every_limit() {
        assert!(Limits::default().check_duration(f64::NAN).is_err());
        assert!(Limits::default().check_duration(3600.0).is_ok());
    }

    #[test]
    fn overrides_layer() {
        let project = LimitOverrides {
            max_joints: Some(20),
            max_file_bytes: Some(5),
            ..Default::default()
        };
        let asset = LimitOverrides {
            max_joints: Some(30),
            ..Default::default()
        };
        let l = project.then(&asset).apply(&Limits::default());
        assert_eq!((l.max_joints, l.max_file_bytes), (30, 5));
        assert_eq!(l.max_samples_per_clip, DEFAULT_MAX_SAMPLES_PER_CLIP);
        assert_eq!(
            LimitOverrides {
                max_clip_duration_s: Some(-1.0),
                ..Default::default()
            }
            .invalid_field(),
            Some("max_clip_duration_s")
        );
    }
}
