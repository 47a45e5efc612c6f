//! Package v2 writer: the inverse of `ludus_anim_runtime::package`. Output
//! is a pure function of its inputs (deterministic string order, zeroed
//! padding), so identical cooks give identical bytes.
//!
//! A clip's prepared semantics (additive reference, root-motion
//! trajectory, markers/events, loop seam figure) are read from the prepare
//! stage's [`Prepared`] itself; a clip without one is a plain pose clip.

mod curves;
mod sync;

pub use curves::{CurveEntry, QuantizedCurve};

use crate::stages::prepare::{MarkerKind, Prepared, PreparedTrajectory};
use ludus_anim_format::codec::CodecId;
use ludus_anim_format::hash::fnv1a64;
use ludus_anim_format::package::*;
use ludus_anim_format::rigid::RigidTransform;
use ludus_anim_format::skin::ClipBounds;
use ludus_anim_format::timing::LoopMode;
use ludus_anim_model::skin::{affine, SourceSkin};
use ludus_anim_runtime::Skeleton;
use std::collections::BTreeMap;

/// One clip to write.
#[derive(Clone, Debug)]
pub struct PackageClip {
    pub name: String,
    pub duration_s: f32,
    pub sample_rate_hz: f32,
    pub num_samples: u32,
    pub loop_mode: LoopMode,
    pub codec: CodecId,
    pub codec_version: u16,
    pub profile: String,
    pub source_hash: [u8; 32],
    pub resample_error_m: f32,
    pub max_error_m: f32,
    pub blob: Vec<u8>,
    pub curves: Vec<CurveEntry>,
}

pub struct PackageContents<'a> {
    pub cooker_version: String,
    pub asset_name: String,
    pub source_path: String,
    pub source_hash: [u8; 32],
    pub skeleton: &'a Skeleton,
    pub clips: Vec<PackageClip>,
    /// Skin bindings on `skeleton` (the SKIN section, written only when
    /// there is one).
    pub skins: &'a [SourceSkin],
    /// Motion bounds per clip (the BNDS section, written only when not
    /// empty; then one entry per clip).
    pub bounds: &'a [Option<ClipBounds>],
    /// Sockets on `skeleton` (the SOCK section, written only when there
    /// is one).
    pub sockets: &'a [ludus_anim_format::sockets::Socket<'a>],
    /// Cooked masks and LOD levels (the JSET section, written when given).
    pub joint_sets: Option<&'a ludus_anim_format::joint_sets::JointSets<'a>>,
}

#[derive(Default)]
struct StringTable {
    index: BTreeMap<String, u32>,
    list: Vec<String>,
}

impl StringTable {
    /// The index of `s`, added if new.
    fn add(&mut self, s: &str) -> u32 {
        if let Some(&i) = self.index.get(s) {
            return i;
        }
        let i = self.list.len() as u32;
        self.index.insert(s.to_string(), i);
        self.list.push(s.to_string());
        i
    }
    fn bytes(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&(self.list.len() as u32).to_le_bytes());
        let mut off = 0u32;
        out.extend_from_slice(&off.to_le_bytes());
        for s in &self.list {
            off += s.len() as u32;
            out.extend_from_slice(&off.to_le_bytes());
        }
        for s in &self.list {
            out.extend_from_slice(s.as_bytes());
        }
        out
    }
}

fn pad_to(buf: &mut Vec<u8>, align: usize) {
    while !buf.len().is_multiple_of(align) {
        buf.push(0);
    }
}

fn put_u32(b: &mut Vec<u8>, v: u32) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_u64(b: &mut Vec<u8>, v: u64) {
    b.extend_from_slice(&v.to_le_bytes());
}
fn put_f32(b: &mut Vec<u8>, v: f32) {
    b.extend_from_slice(&v.to_le_bytes());
}

fn put_rigid(b: &mut Vec<u8>, r: &RigidTransform) {
    for v in [
        r.rotation.x,
        r.rotation.y,
        r.rotation.z,
        r.rotation.w,
        r.translation.x,
        r.translation.y,
        r.translation.z,
    ] {
        put_f32(b, v);
    }
}

/// The sections being built, in write order.
#[derive(Default)]
struct Sections {
    strings: StringTable,
    clips: Vec<u8>,
    curves: Vec<u8>,
    events: Vec<u8>,
    data: Vec<u8>,
    curve_index: u32,
    event_index: u32,
}

/// Serialize a package. `prepared[i]` holds clip `i`'s prepared semantics
/// (clips past the end of `prepared` are plain). Layout: header, section
/// table, then sections STRS, META, SKEL, CLIP, CURV, EVNT, SYNC, DATA,
/// each 16-byte aligned.
pub fn write_package(p: &PackageContents<'_>, prepared: &[&Prepared]) -> Vec<u8> {
    let mut s = Sections::default();
    let meta = meta_section(p, &mut s.strings);
    let skel = skeleton_section(p.skeleton, &mut s.strings);
    put_u32(&mut s.clips, p.clips.len() as u32);
    pad_to(&mut s.clips, 16);
    let total_curves: usize = p.clips.iter().map(|c| c.curves.len()).sum();
    put_u32(&mut s.curves, total_curves as u32);
    pad_to(&mut s.curves, 16);
    let total_events: usize = prepared
        .iter()
        .take(p.clips.len())
        .map(|e| e.events.len())
        .sum();
    put_u32(&mut s.events, total_events as u32);
    pad_to(&mut s.events, 16);
    for (ci, c) in p.clips.iter().enumerate() {
        write_clip(&mut s, c, prepared.get(ci).copied());
    }
    pad_to(&mut s.data, ALIGN);
    let groups = crate::sync_groups::summarize(&prepared[..prepared.len().min(p.clips.len())]);
    let sync = sync::sync_section(&groups, &mut s.strings);
    let skins = (!p.skins.is_empty()).then(|| skins_section(p.skins, &mut s.strings));
    let sockets = (!p.sockets.is_empty()).then(|| {
        let names: Vec<u32> = p.sockets.iter().map(|k| s.strings.add(k.name)).collect();
        ludus_anim_format::sockets::write_sockets(p.sockets, &names)
    });
    let joint_sets = p.joint_sets.map(|j| {
        ludus_anim_format::joint_sets::write_section(j, p.skeleton.joint_count(), |n| {
            s.strings.add(n)
        })
    });
    let strs = s.strings.bytes();
    let mut sections: Vec<(u32, &[u8])> = vec![
        (SECTION_STRINGS, &strs),
        (SECTION_META, &meta),
        (SECTION_SKELETON, &skel),
        (SECTION_CLIPS, &s.clips),
        (SECTION_CURVES, &s.curves),
        (SECTION_EVENTS, &s.events),
        (SECTION_SYNC, &sync),
    ];
    if let Some(skins) = &skins {
        sections.push((SECTION_SKINS, skins));
    }
    let bounds = (!p.bounds.is_empty()).then(|| bounds_section(p.bounds));
    if let Some(bounds) = &bounds {
        sections.push((SECTION_BOUNDS, bounds));
    }
    if let Some(sockets) = &sockets {
        sections.push((SECTION_SOCKETS, sockets));
    }
    if let Some(joint_sets) = &joint_sets {
        sections.push((SECTION_JOINT_SETS, joint_sets));
    }
    sections.push((SECTION_DATA, &s.data));
    assemble(&sections)
}

/// The BNDS section (`ludus_anim_format::skin::ClipBounds`).
fn bounds_section(bounds: &[Option<ClipBounds>]) -> Vec<u8> {
    let mut out = Vec::new();
    put_u32(&mut out, bounds.len() as u32);
    put_u32(&mut out, 0);
    for b in bounds {
        put_u32(&mut out, b.is_some() as u32);
        let b = b.unwrap_or(ClipBounds {
            min: [0.0; 3],
            max: [0.0; 3],
            center: [0.0; 3],
            radius: 0.0,
        });
        for v in b
            .min
            .iter()
            .chain(&b.max)
            .chain(&b.center)
            .chain([&b.radius])
        {
            put_f32(&mut out, *v);
        }
    }
    out
}

/// The SKIN section (`ludus_anim_format::skin`): per skin its name and
/// palette count, then per palette entry the joint, the inverse bind and
/// the bind-time component transform, as column-major 3x4 matrices.
fn skins_section(skins: &[SourceSkin], strings: &mut StringTable) -> Vec<u8> {
    let mut out = Vec::new();
    put_u32(&mut out, skins.len() as u32);
    put_u32(&mut out, 0);
    for skin in skins {
        put_u32(&mut out, strings.add(&skin.name));
        put_u32(&mut out, skin.joints.len() as u32);
        for (i, &j) in skin.joints.iter().enumerate() {
            put_u32(&mut out, j as u32);
            for m in [skin.inverse_bind.get(i), skin.bind_world.get(i)] {
                let cols = m.map_or(ludus_anim_format::math::Affine3A::IDENTITY, affine);
                for v in cols.to_cols_array() {
                    put_f32(&mut out, v);
                }
            }
        }
    }
    out
}

fn meta_section(p: &PackageContents<'_>, strings: &mut StringTable) -> Vec<u8> {
    let cooker = strings.add(&p.cooker_version);
    let asset = strings.add(&p.asset_name);
    let path = strings.add(&p.source_path);
    let mut meta = Vec::new();
    put_u32(&mut meta, cooker);
    put_u32(&mut meta, asset);
    put_u32(&mut meta, path);
    put_u32(&mut meta, 0);
    meta.extend_from_slice(&p.source_hash);
    meta
}

fn skeleton_section(sk: &Skeleton, strings: &mut StringTable) -> Vec<u8> {
    let mut skel = Vec::new();
    put_u32(&mut skel, sk.joint_count() as u32);
    put_u32(&mut skel, 0);
    skel.extend_from_slice(&sk.identity().0);
    for j in 0..sk.joint_count() {
        put_u32(&mut skel, sk.parents()[j]);
        put_u32(&mut skel, sk.subtree_ends()[j]);
        put_u64(&mut skel, sk.ids()[j].0);
        for v in sk.rest_pose()[j].to_array() {
            put_f32(&mut skel, v);
        }
        let name = strings.add(sk.name(j));
        put_u32(&mut skel, name);
    }
    skel
}

/// One clip: its blob, curves and trajectory keys into DATA, its curve and
/// event records, then its CLIP record.
fn write_clip(s: &mut Sections, c: &PackageClip, prepared: Option<&Prepared>) {
    pad_to(&mut s.data, ALIGN);
    let blob_off = s.data.len() as u64;
    s.data.extend_from_slice(&c.blob);
    let first_curve = s.curve_index;
    for ch in &c.curves {
        write_curve(s, ch);
    }
    let trajectory = prepared.and_then(|p| p.trajectory.as_ref());
    // Trajectory keys: 16-aligned in DATA, 7 f32 each.
    let keys_off = match trajectory {
        Some(rm) => {
            pad_to(&mut s.data, ALIGN);
            let off = s.data.len() as u64;
            for k in &rm.keys {
                put_rigid(&mut s.data, k);
            }
            off
        }
        None => 0,
    };
    let first_event = s.event_index;
    let mut event_count = 0u32;
    if let Some(p) = prepared {
        for (e, name, kind) in p.named_events() {
            write_event(s, e.time_s, e.id, e.reversible, kind, name);
            event_count += 1;
        }
    }
    let record = ClipRecord {
        clip: c,
        prepared,
        trajectory,
        blob_off,
        keys_off,
        first_curve,
        first_event,
        event_count,
    };
    record.write(s);
}

fn write_curve(s: &mut Sections, ch: &CurveEntry) {
    let q = &ch.samples;
    let off = if q.data().is_empty() {
        0
    } else {
        pad_to(&mut s.data, 4);
        let off = s.data.len() as u64;
        s.data.extend_from_slice(q.data());
        off
    };
    let curves = &mut s.curves;
    let rec_start = curves.len();
    put_u64(curves, ch.id);
    let name = s.strings.add(&ch.name);
    put_u32(curves, name);
    curves.push(if ch.step {
        CURVE_INTERP_STEP
    } else {
        CURVE_INTERP_LINEAR
    });
    curves.push(ch.composition.as_u8());
    curves.push(q.bits());
    curves.push(if ch.clamp { CURVE_FLAG_CLAMP } else { 0 });
    put_f32(curves, ch.default);
    put_f32(curves, ch.range.0);
    put_f32(curves, ch.range.1);
    put_u32(curves, q.len() as u32);
    put_f32(curves, q.min());
    put_f32(curves, q.extent());
    put_u64(curves, off);
    debug_assert_eq!(curves.len() - rec_start, CURVE_RECORD_SIZE);
    s.curve_index += 1;
}

fn write_event(
    s: &mut Sections,
    time_s: f32,
    id: u64,
    reversible: bool,
    kind: MarkerKind,
    name: &str,
) {
    put_f32(&mut s.events, time_s);
    let mut flags = kind.flags();
    if reversible {
        flags |= EVENT_FLAG_REVERSIBLE;
    }
    put_u32(&mut s.events, flags);
    put_u64(&mut s.events, id);
    let name = s.strings.add(name);
    put_u32(&mut s.events, name);
    put_u32(&mut s.events, 0);
    s.event_index += 1;
}

/// The 176-byte CLIP record of one clip.
struct ClipRecord<'a> {
    clip: &'a PackageClip,
    prepared: Option<&'a Prepared>,
    trajectory: Option<&'a PreparedTrajectory>,
    blob_off: u64,
    keys_off: u64,
    first_curve: u32,
    first_event: u32,
    event_count: u32,
}

impl ClipRecord<'_> {
    fn flags(&self) -> u32 {
        let p = self.prepared;
        let mut flags = 0u32;
        if p.is_some_and(|p| p.additive.is_some()) {
            flags |= CLIP_FLAG_ADDITIVE;
        }
        if self.trajectory.is_some() {
            flags |= CLIP_FLAG_ROOT_MOTION;
        }
        if p.is_some_and(|p| p.loop_seam_error_m.is_some()) {
            flags |= CLIP_FLAG_LOOP_SEAM;
        }
        if self
            .trajectory
            .is_some_and(|r| r.drift_100_loops_m.is_some())
        {
            flags |= CLIP_FLAG_DRIFT;
        }
        flags
    }

    /// Every field at its named offset (`package::format::clip_record`,
    /// the offsets the reader uses); unset bytes (reserved, and the root
    /// motion block of a clip without it) stay zero.
    fn write(&self, s: &mut Sections) {
        use clip_record as f;
        let c = self.clip;
        let name = s.strings.add(&c.name);
        let profile = s.strings.add(&c.profile);
        let mut r = [0u8; CLIP_RECORD_SIZE];
        set(&mut r, f::NAME, &name.to_le_bytes());
        set(&mut r, f::FLAGS, &self.flags().to_le_bytes());
        set(&mut r, f::DURATION_S, &c.duration_s.to_le_bytes());
        set(&mut r, f::SAMPLE_RATE_HZ, &c.sample_rate_hz.to_le_bytes());
        set(&mut r, f::NUM_SAMPLES, &c.num_samples.to_le_bytes());
        set(&mut r, f::LOOP_MODE, &[c.loop_mode as u8]);
        let policy = self
            .trajectory
            .map_or(ROOT_MOTION_NONE, |t| t.policy.as_u8());
        set(&mut r, f::ROOT_MOTION_POLICY, &[policy]);
        set(&mut r, f::CODEC, &(c.codec as u16).to_le_bytes());
        set(&mut r, f::CODEC_VERSION, &c.codec_version.to_le_bytes());
        set(&mut r, f::PROFILE, &profile.to_le_bytes());
        set(&mut r, f::BLOB_OFFSET, &self.blob_off.to_le_bytes());
        set(&mut r, f::BLOB_SIZE, &(c.blob.len() as u64).to_le_bytes());
        set(&mut r, f::CURVE_FIRST, &self.first_curve.to_le_bytes());
        set(
            &mut r,
            f::CURVE_COUNT,
            &(c.curves.len() as u32).to_le_bytes(),
        );
        set(
            &mut r,
            f::RESAMPLE_ERROR_M,
            &c.resample_error_m.to_le_bytes(),
        );
        set(&mut r, f::MAX_ERROR_M, &c.max_error_m.to_le_bytes());
        set(&mut r, f::SOURCE_HASH, &c.source_hash);
        self.write_v2_fields(&mut r, &mut s.strings);
        s.clips.extend_from_slice(&r);
    }

    /// Package v2: additive reference, trajectory, events, loop seam.
    fn write_v2_fields(&self, r: &mut [u8; CLIP_RECORD_SIZE], strings: &mut StringTable) {
        use clip_record as f;
        let additive = self
            .prepared
            .and_then(|p| p.additive.as_ref())
            .map_or(NO_STRING, |a| strings.add(&a.reference));
        set(r, f::ADDITIVE_REFERENCE, &additive.to_le_bytes());
        match self.trajectory {
            Some(rm) => {
                let joint = strings.add(&rm.joint);
                set(r, f::ROOT_JOINT, &joint.to_le_bytes());
                let mut offset = Vec::with_capacity(f::ROOT_OFFSET_BYTES);
                put_rigid(&mut offset, &rm.reference_offset);
                set(r, f::ROOT_OFFSET, &offset);
                set(
                    r,
                    f::TRAJECTORY_KEY_COUNT,
                    &(rm.keys.len() as u32).to_le_bytes(),
                );
                set(r, f::TRAJECTORY_RATE_HZ, &rm.sample_rate_hz.to_le_bytes());
                let drift = rm.drift_100_loops_m.unwrap_or(0.0);
                set(r, f::DRIFT_100_LOOPS_M, &drift.to_le_bytes());
                set(r, f::TRAJECTORY_OFFSET, &self.keys_off.to_le_bytes());
            }
            None => set(r, f::ROOT_JOINT, &NO_STRING.to_le_bytes()),
        }
        let seam = self.prepared.and_then(|p| p.loop_seam_error_m);
        set(r, f::EVENT_FIRST, &self.first_event.to_le_bytes());
        set(r, f::EVENT_COUNT, &self.event_count.to_le_bytes());
        set(r, f::LOOP_SEAM_ERROR_M, &seam.unwrap_or(0.0).to_le_bytes());
    }
}

/// Write `bytes` at `field` of a fixed-size record (the field offsets are
/// constants inside the record, so the range is always in bounds).
fn set(record: &mut [u8], field: usize, bytes: &[u8]) {
    debug_assert!(field + bytes.len() <= record.len());
    if let Some(dst) = record.get_mut(field..field + bytes.len()) {
        dst.copy_from_slice(bytes);
    }
}

/// Header, section table and the sections, with the length and checksum.
fn assemble(sections: &[(u32, &[u8])]) -> Vec<u8> {
    let mut out = vec![0u8; HEADER_SIZE + sections.len() * SECTION_ENTRY_SIZE];
    pad_to(&mut out, ALIGN);
    let mut table = Vec::new();
    for &(kind, bytes) in sections {
        pad_to(&mut out, ALIGN);
        put_u32(&mut table, kind);
        put_u32(&mut table, 0);
        put_u64(&mut table, out.len() as u64);
        put_u64(&mut table, bytes.len() as u64);
        out.extend_from_slice(bytes);
    }
    pad_to(&mut out, ALIGN);
    out[HEADER_SIZE..HEADER_SIZE + table.len()].copy_from_slice(&table);
    out[0..8].copy_from_slice(&MAGIC);
    out[8..12].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
    out[12..16].copy_from_slice(&(HEADER_SIZE as u32).to_le_bytes());
    let len = out.len() as u64;
    out[16..24].copy_from_slice(&len.to_le_bytes());
    out[24..28].copy_from_slice(&(sections.len() as u32).to_le_bytes());
    let checksum = fnv1a64(&out[HEADER_SIZE..]);
    out[32..40].copy_from_slice(&checksum.to_le_bytes());
    out
}
