//! The pipeline's stages: one [`CookStage`] impl each (under `stages/`),
//! registered by one line in the list below. Names (in `report.json`, the
//! `--json` stage and plan events and `docs/stage-keys.md`), code versions
//! (in every key), what each stage reads (the graph's edges), counters and
//! the golden stage-output guard all come from this list; the runner
//! (`pipeline::Cook::stage`) owns the cache lookup, the key, counters,
//! fingerprints and events, so a stage's `run` is a plain function.

use crate::keys::{KeyInput, KeyWriter};
use ludus_anim_cache::Key;
use ludus_anim_model::Diagnostic;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The deterministic content of a stage output: what must not change
/// unless the stage's version does (timings are left out).
pub trait Fingerprint {
    fn fingerprint(&self) -> [u8; 32];
}

/// Fingerprint of a serializable value: blake3 of its cache encoding.
pub fn fingerprint_of<T: Serialize>(v: &T) -> [u8; 32] {
    match postcard::to_allocvec(v) {
        Ok(bytes) => *blake3::hash(&bytes).as_bytes(),
        Err(_) => [0; 32],
    }
}

/// One stage of the cook.
///
/// The key is a function of [`CookStage::Spec`] alone (the upstream
/// stages' keys and the settings the stage reads), so every key of an
/// asset is known before any stage runs; `run` reads the spec and the
/// upstream outputs in [`CookStage::Input`]. A spec's [`KeyInput`] impl
/// destructures it, so a field that is not hashed does not compile.
pub trait CookStage {
    /// The stage's line in the list.
    const STAGE: Stage;
    /// What the key covers besides the stage's name and version.
    type Spec<'a>: KeyInput;
    /// What `run` reads besides the spec: upstream outputs, and context
    /// that does not change the output (the file name for diagnostics).
    type Input<'a>;
    /// Cached under the key; fingerprinted for the golden guard.
    type Output: Serialize + DeserializeOwned + Fingerprint;

    /// Whether the runner stores the output. A stage whose output only
    /// the next stage reads, and only when that stage misses, is not
    /// stored (its downstream output carries what else is needed): the
    /// pipeline looks the downstream stage up first and runs this one
    /// only on a miss, so the cache holds what later stages read.
    const CACHED: bool = true;

    /// The output, or a located error (errors are never cached).
    fn run(spec: &Self::Spec<'_>, input: Self::Input<'_>) -> Result<Self::Output, Diagnostic>;

    /// The stage's cache key.
    fn key(spec: &Self::Spec<'_>) -> Key {
        let s = Self::STAGE;
        KeyWriter::stage(s.name(), s.version()).put(spec).finish()
    }
}

/// Whether a stage runs once per asset or once per clip.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    Asset,
    Clip,
}

macro_rules! stage_list {
    ($( $(#[$doc:meta])* $variant:ident: $name:literal, version $version:literal, per $scope:ident, reads [$($reads:ident),*]; )*) => {
        /// Pipeline stages in data-flow order.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Stage {
            $( $(#[$doc])* $variant, )*
        }

        impl Stage {
            /// Every stage, in data-flow order.
            pub const ALL: &'static [Stage] = &[$(Stage::$variant,)*];

            /// The stage's name in reports, events and keys.
            pub fn name(self) -> &'static str {
                match self { $(Stage::$variant => $name,)* }
            }

            /// Code version of the stage: bump it in the commit that changes
            /// its output (`tests/stage_versions.rs` fails otherwise).
            pub fn version(self) -> u32 {
                match self { $(Stage::$variant => $version,)* }
            }

            pub fn scope(self) -> Scope {
                match self { $(Stage::$variant => Scope::$scope,)* }
            }

            /// The stages whose outputs (and keys) this one reads: the
            /// graph's edges.
            pub fn reads(self) -> &'static [Stage] {
                match self { $(Stage::$variant => &[$(Stage::$reads),*],)* }
            }
        }
    };
}

stage_list! {
    /// Source bytes (and companion files) → `SourceAsset` + validation.
    /// 7: sockets (non-bone child nodes below joints: glTF nodes that
    /// neither deform nor animate, FBX unanimated nulls).
    /// 6: an FBX's rest is its scene default local transforms, never its
    /// bind pose; skins (palette, inverse binds, bind pose, mesh vertices
    /// and influences) kept for glTF and FBX. 5: FBX boolean, integer and constant-keyed custom properties are
    /// STEP curves. 4: the importer sees the source's recorded path (relative to the
    /// project root, normalized), which its key now covers. (3: format and
    /// marker kind as enums; companions read through the cook's source
    /// snapshot. 2: markers from glTF extras, FBX custom-property curves.)
    Import: "import", version 7, per Asset, reads [];
    /// Units → meters, depth-first skeleton, synthetic root, hemisphere
    /// continuity. 10: carries import 7's sockets (skeleton order,
    /// meters). 9: carries import 6's rest and skins (in skeleton
    /// order, meters). 8: carries import 5's STEP custom-property curves.
    /// 7: a humanoid's units judged by its feet-to-head height, the likely
    /// unit named. 6: the record carries the import's notes (the import
    /// itself is no longer stored). 5: the recorded (root-relative) path in its located
    /// warnings. 4: the CMU unit as the retarget profiles write it
    /// (3: documented unit conventions (CMU cgspeed BVH, MakeHuman)
    /// applied, implausible units warned; 2: clips carry markers).
    Normalize: "normalize", version 10, per Asset, reads [Import];
    /// The normalized asset's clips on a project's shared skeleton (a
    /// manifest `[[skeleton]]`), by joint name (bound assets only).
    /// 2: carries the shared skeleton's sockets.
    Bind: "bind", version 2, per Asset, reads [Normalize];
    /// The normalized asset on a target skeleton through an explicit
    /// retarget profile (retargeted assets only). 2: carries per-frame
    /// foot tracks (height, speed, contact, skate) for the sidecar. 3:
    /// metrics carry facing agreement (a budget). 4: foot speed, toe
    /// slide, floor penetration, reference first frame; a rig onto
    /// itself reproduces its clips; a floating rest pose is not a ground.
    /// 5: contact joints without contacts in a clip kept above the ground.
    /// 6: contacts closer than `blend_s` are one plant; the foot goes from
    /// plant to plant over the gap and lands at rest (no pops); a planted
    /// foot's toes are kept above the floor.
    /// 7: carries the target's skins (with 6's contacts).
    /// 8: every target joint kept above the floor (beyond the source's
    /// own, scaled) by raising the body: knees, unplanted legs.
    /// 9: and the target's sockets.
    Retarget: "retarget", version 9, per Asset, reads [Normalize];
    /// Uniform grid at the profile's rate, checked against the authored
    /// curves. 4: the report carries each joint's resampling error (the
    /// encoder's budget is what is left of the threshold). 3: measured at eighths and the nlerp/slerp peaks of every
    /// interval plus a peak search, six-vertex metric, a last raise to the
    /// largest key-aligned rate within the maximum (2: warnings as located
    /// diagnostics).
    Resample: "resample", version 4, per Clip, reads [Normalize, Bind, Retarget];
    /// Loops, root motion, additive deltas, markers/events.
    /// 8: sync-group memberships checked and their marker intervals
    /// stored; contact windows as markers; control events (once per time,
    /// snapped to the loop start within 1 ms of a loop's end).
    /// 7: the resampling report it carries has per-joint errors. 6: the record carries the grid's resampling report (the grid
    /// itself is no longer stored). 5: loop seam error with the six-vertex metric (4: a warning when
    /// the root-motion joint's ancestor travels; 3: warnings as located
    /// diagnostics; 2: loops, root motion, additive and markers; was: loop
    /// only).
    Prepare: "prepare", version 8, per Clip, reads [Resample];
    /// Codec blob. 11: each joint aims at its threshold less its
    /// resampling error (`codec_thresholds`), so the error against the
    /// authored curves stays within the threshold. 10: the record holds no
    /// encode time (entries are the same bytes on every machine). 9: the
    /// record carries the clip's f32 floor, which
    /// verification reads instead of measuring it again. 8: short clips search the profile's segment length and
    /// the cheapest count priced from its steps, not every count (only
    /// from 600 joint-samples and up to 3 segments; faster;
    /// isolation rates searched from the previous segment's). 7: VBR codec
    /// v4 (8 zero bytes after the last segment).
    /// 6: the search's work budget (hostile deep chains keep
    /// more bits instead of taking minutes; real rigs unchanged), the
    /// `encode_budget` warning. 5: short clips also try every segment
    /// count down to 4-sample segments, within a search budget (4: VBR
    /// codec v3, a varint segment count instead of the 16-byte header,
    /// narrow segment table fields, no end padding, short clips also try 2
    /// and 4 times the segment length (3: six-vertex metric, aims twice the
    /// clip's f32 floor below each threshold, checks quarter points and
    /// random times (2: VBR codec v2, 16-bit rotation ranges, unranged
    /// segments))).
    Encode: "encode", version 11, per Clip, reads [Prepare];
    /// Decode through the runtime and measure. 10: each joint's velocity
    /// error against the authored motion, where the profile sets
    /// `velocity_threshold_mps` (the key covers it). 9: scalar curves measured
    /// as their schema says (stepped channels held, clamped ones clamped);
    /// the key covers the curve schema rules. 8: each joint's error
    /// against the authored curves is stored. 7: the record holds no
    /// decode timing. 6: the per-time grid is
    /// not stored (the clip's sidecar record keeps it). 5: VBR codec v3 blobs
    /// (4: samples, quarter points,
    /// seams, key times, random times and a peak search, counted; the f32
    /// floor; the per-time error grid for the sidecar (3: measures the
    /// static-pose decode and checks it equals the direct decode; 2:
    /// additive clips measured applied; scalar curve errors)).
    Verify: "verify", version 10, per Clip, reads [Encode];
    /// The package bytes, manifest entry and report of one asset.
    /// 18: the SOCK section (sockets: imported and manifest, on the
    /// package's skeleton) and the report's per-clip error at sockets.
    /// 17: 16 and 15 of the two lines of work below together.
    /// 16: motion bounds per pose clip, in the report (`bounds`) and the
    /// package (BNDS section). 15: the SKIN section (skin bindings) in the
    /// package of an asset with skins; separately, a retargeted clip's
    /// sidecar record carries the rigs' axes (record revision 3).
    /// 14: its clips' sidecar records carry the sampled poses (the
    /// records' keys it lists changed; an older record would bring back
    /// records without them). 13: the report's clips carry `velocity` (and the
    /// `velocity_error` warning) and their sync-group intervals; a clip
    /// over its bound by STEP keys between samples is warned with the
    /// figure (`end_to_end_error`). 12: package format 3 (SYNC section, control and contact event
    /// kinds); the `sync_rate_range` warning. 11: curve channels carry
    /// their resolved schema (manifest and profile `curve_schema`, the
    /// importer's STEP); located warnings for schema rules naming no
    /// channel and stepped changes between samples. 10: the report's clips carry `end_to_end` (error against the
    /// authored curves and its cause). 9: the record's report holds no timings. 8: the record carries the proof of its key (`RecordProof`) and
    /// its clips' sidecar record keys. 7: VBR codec v4 blobs (codec version 4 in the clip records).
    /// 6: VBR codec v3 blobs (codec version 3 in the clip records).
    /// 5: the report's time-check counts and f32 floor, the sidecar
    /// record, errors within the f32 floor a warning rather than a failure
    /// (4: the report's located quality warnings; 3: quantized scalar
    /// curves with a channel schema).
    Package: "package", version 18, per Asset, reads [Verify];
}

impl Stage {
    /// Position in [`Stage::ALL`] (counters are indexed by it).
    pub fn index(self) -> usize {
        self as usize
    }

    /// The stage named `name`, if any.
    pub fn from_name(name: &str) -> Option<Stage> {
        Stage::ALL.iter().copied().find(|s| s.name() == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_is_in_data_flow_order_with_unique_names() {
        for (i, s) in Stage::ALL.iter().enumerate() {
            assert_eq!(s.index(), i);
            assert_eq!(Stage::from_name(s.name()), Some(*s));
        }
        assert_eq!(Stage::ALL.first(), Some(&Stage::Import));
        assert_eq!(Stage::ALL.last(), Some(&Stage::Package));
    }

    #[test]
    fn every_stage_reads_only_earlier_stages() {
        for s in Stage::ALL {
            for r in s.reads() {
                assert!(r.index() < s.index(), "{} reads {}", s.name(), r.name());
            }
        }
        let roots: Vec<_> = Stage::ALL.iter().filter(|s| s.reads().is_empty()).collect();
        assert_eq!(roots, [&Stage::Import]);
    }
}
