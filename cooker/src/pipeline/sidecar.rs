//! The cook's `OUT/report-sidecar.json` (layout: `schemas/dashboard.md`,
//! schema: `schemas/report-sidecar.schema.json`): per clip, verification's
//! error of every joint at every checked time (the codec figure, as
//! measured; `report.json`'s `max_error_m` adds the clip's f32 floor), the
//! encoder's bits per component per track and segment, the root-motion
//! trajectory, the events and the decoded clip's sampled poses. Built where
//! the data already is (the clip's verification, its blob, its prepared
//! trajectory), never recomputed.

use crate::package_writer::PackageClip;
use crate::stages::prepare::Prepared;
use crate::stages::verify::ClipVerification;
use ludus_anim_format::codec::CodecId;
use ludus_anim_format::math::{Quat, Vec3};
use ludus_anim_format::vbr_layout::Layout;
use ludus_anim_report::packed::Packed;
use ludus_anim_report::sidecar::{
    BitRates, ClipSidecar, EventMark, TrajectorySidecar, BITS_CONSTANT, BITS_DEFAULT, BITS_RAW,
};
use ludus_anim_runtime::Skeleton;

/// Whether and how large the cook writes the sidecar: the manifest's
/// `[report] sidecar` / `sidecar_max_mb`, and `cook --no-sidecar`.
#[derive(Clone, Debug, PartialEq)]
pub struct SidecarSettings {
    pub write: bool,
    /// Above this size (MiB) the per-time errors are left out (`error_q`
    /// empty) and the other blocks kept.
    pub max_mb: Option<f64>,
}

impl Default for SidecarSettings {
    fn default() -> Self {
        SidecarSettings {
            write: true,
            max_mb: Some(64.0),
        }
    }
}

/// The sidecar's file name: `report-sidecar.json`, or
/// `report-sidecar.shard-I-of-N.json` beside a shard's report (`ludus-anim
/// merge` merges them).
pub(crate) fn sidecar_file(shard: Option<&ludus_anim_report::farm::ShardInfo>) -> String {
    match shard {
        Some(s) => format!("report-sidecar.{}.json", s.label()),
        None => ludus_anim_report::sidecar::SIDECAR_FILE.to_string(),
    }
}

/// One clip's sidecar record (`source` as `report.json` records it).
/// One cooked clip: its package entry, verification and prepared data.
pub(crate) struct CookedParts<'a> {
    pub entry: &'a PackageClip,
    pub verification: &'a ClipVerification,
    pub prepared: &'a Prepared,
}

pub(crate) fn clip_sidecar(
    source: &str,
    c: &CookedParts<'_>,
    sk: &Skeleton,
    thresholds: &[f32],
) -> ClipSidecar {
    let e = c.entry;
    let mut s = ClipSidecar::new(source, &e.name, &e.profile, e.duration_s);
    let parents: Vec<Option<usize>> = (0..sk.joint_count()).map(|j| sk.parent(j)).collect();
    s.set_joints(sk.names(), &parents, thresholds);
    let v = c.verification;
    if s.set_error_q(&v.times_s, v.error_q.clone()).is_err() {
        // A shape mismatch would be a verification bug: leave the grid out
        // rather than write a wrong one.
        s.error_q = Packed(Vec::new());
        s.times_s = Packed(Vec::new());
    }
    s.bit_rates = bit_rates(e.codec, &e.blob, sk.joint_count(), e.num_samples);
    s.poses = v.poses.clone();
    s.root_motion = c.prepared.trajectory.as_ref().map(|t| {
        let yaw = |q: Quat| {
            let f = q * Vec3::Z;
            f.x.atan2(f.z)
        };
        TrajectorySidecar {
            joint: t.joint.clone(),
            policy: t.policy.as_str().to_string(),
            rate_hz: t.sample_rate_hz,
            x_m: Packed(t.keys.iter().map(|k| k.translation.x).collect()),
            z_m: Packed(t.keys.iter().map(|k| k.translation.z).collect()),
            yaw_rad: Packed(t.keys.iter().map(|k| yaw(k.rotation)).collect()),
            drift_100_loops_m: t.drift_100_loops_m,
        }
    });
    let names = &c.prepared.event_names;
    s.events = c
        .prepared
        .events
        .iter()
        .filter_map(|ev| {
            let (_, name, kind) = names.iter().find(|n| n.0 == ev.id)?;
            Some(EventMark {
                name: name.clone(),
                time_s: ev.time_s,
                kind: kind.as_str().to_string(),
            })
        })
        .collect();
    s
}

/// Bits per component per track and segment, read from the blob the
/// encoder chose (`None` if it does not parse, which verification would
/// already have failed).
fn bit_rates(codec: CodecId, blob: &[u8], joints: usize, samples: u32) -> Option<BitRates> {
    if codec == CodecId::Reference {
        return Some(BitRates {
            segment_starts: vec![0],
            samples,
            bits: Packed(vec![BITS_RAW; joints * 3]),
        });
    }
    let v = Layout::read(blob, joints)?;
    let segs = v.segments.max(1);
    let mut bits = vec![BITS_DEFAULT; joints * 3 * segs as usize];
    let mut animated = 0;
    for j in 0..joints {
        for k in 0..3 {
            let at = (j * 3 + k) * segs as usize;
            match v.track_kind(j, k)? {
                0 => {}
                2 => {
                    for s in 0..v.segments {
                        bits[at + s as usize] = v.animated_bits(s, animated)?;
                    }
                    animated += 1;
                }
                _ => bits[at..at + segs as usize].fill(BITS_CONSTANT),
            }
        }
    }
    Some(BitRates {
        segment_starts: (0..segs).map(|s| v.segment_start(s, samples)).collect(),
        samples,
        bits: Packed(bits),
    })
}
