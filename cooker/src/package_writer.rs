//! Package v1 writer: the inverse of `ludus_anim_runtime::package`. Output
//! is a pure function of its inputs (deterministic string order, zeroed
//! padding), so identical cooks give identical bytes.

use ludus_anim_runtime::codec::CodecId;
use ludus_anim_runtime::hash::fnv1a64;
use ludus_anim_runtime::package::format::*;
use ludus_anim_runtime::timing::LoopMode;
use ludus_anim_runtime::Skeleton;
use std::collections::BTreeMap;

/// One clip to write.
pub struct ClipEntry {
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

/// One scalar channel, sampled on its clip's grid.
pub struct CurveEntry {
    pub id: u64,
    pub name: String,
    pub default: f32,
    pub step: bool,
    pub values: Vec<f32>,
}

pub struct PackageContents<'a> {
    pub cooker_version: String,
    pub asset_name: String,
    pub source_path: String,
    pub source_hash: [u8; 32],
    pub skeleton: &'a Skeleton,
    pub clips: Vec<ClipEntry>,
}

#[derive(Default)]
struct StringTable {
    index: BTreeMap<String, u32>,
    list: Vec<String>,
}

impl StringTable {
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
    while buf.len() % align != 0 {
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

/// Serialize a package. Layout: header, section table, then sections
/// STRS, META, SKEL, CLIP, CURV, DATA, each 16-byte aligned.
pub fn write_package(p: &PackageContents<'_>) -> Vec<u8> {
    let mut strings = StringTable::default();
    let cooker = strings.add(&p.cooker_version);
    let asset = strings.add(&p.asset_name);
    let path = strings.add(&p.source_path);

    // META
    let mut meta = Vec::new();
    put_u32(&mut meta, cooker);
    put_u32(&mut meta, asset);
    put_u32(&mut meta, path);
    put_u32(&mut meta, 0);
    meta.extend_from_slice(&p.source_hash);

    // SKEL
    let sk = p.skeleton;
    let mut skel = Vec::new();
    put_u32(&mut skel, sk.joint_count() as u32);
    put_u32(&mut skel, 0);
    skel.extend_from_slice(&sk.identity().0);
    for j in 0..sk.joint_count() {
        put_u32(&mut skel, sk.parents()[j]);
        put_u32(&mut skel, sk.subtree_ends()[j]);
        put_u64(&mut skel, sk.ids()[j].0);
        let t = sk.rest_pose()[j];
        for v in [
            t.rotation.x,
            t.rotation.y,
            t.rotation.z,
            t.rotation.w,
            t.translation.x,
            t.translation.y,
            t.translation.z,
            t.scale.x,
            t.scale.y,
            t.scale.z,
        ] {
            put_f32(&mut skel, v);
        }
        let name = strings.add(sk.name(j));
        put_u32(&mut skel, name);
    }

    // DATA, CLIP, CURV
    let mut data: Vec<u8> = Vec::new();
    let mut clips = Vec::new();
    let mut curves = Vec::new();
    put_u32(&mut clips, p.clips.len() as u32);
    pad_to(&mut clips, 16);
    let total_curves: usize = p.clips.iter().map(|c| c.curves.len()).sum();
    put_u32(&mut curves, total_curves as u32);
    pad_to(&mut curves, 16);
    let mut curve_index = 0u32;
    for c in &p.clips {
        pad_to(&mut data, ALIGN);
        let blob_off = data.len() as u64;
        data.extend_from_slice(&c.blob);
        let first_curve = curve_index;
        for ch in &c.curves {
            pad_to(&mut data, 4);
            let off = data.len() as u64;
            for &v in &ch.values {
                put_f32(&mut data, v);
            }
            put_u64(&mut curves, ch.id);
            let name = strings.add(&ch.name);
            put_u32(&mut curves, name);
            put_u32(
                &mut curves,
                if ch.step {
                    CURVE_INTERP_STEP
                } else {
                    CURVE_INTERP_LINEAR
                },
            );
            put_f32(&mut curves, ch.default);
            put_u32(&mut curves, ch.values.len() as u32);
            put_u64(&mut curves, off);
            curve_index += 1;
        }
        let name = strings.add(&c.name);
        let profile = strings.add(&c.profile);
        let rec_start = clips.len();
        put_u32(&mut clips, name);
        put_u32(&mut clips, 0);
        put_f32(&mut clips, c.duration_s);
        put_f32(&mut clips, c.sample_rate_hz);
        put_u32(&mut clips, c.num_samples);
        clips.push(c.loop_mode as u8);
        clips.push(0);
        clips.extend_from_slice(&(c.codec as u16).to_le_bytes());
        clips.extend_from_slice(&c.codec_version.to_le_bytes());
        clips.extend_from_slice(&0u16.to_le_bytes());
        put_u32(&mut clips, profile);
        put_u64(&mut clips, blob_off);
        put_u64(&mut clips, c.blob.len() as u64);
        put_u32(&mut clips, first_curve);
        put_u32(&mut clips, c.curves.len() as u32);
        put_f32(&mut clips, c.resample_error_m);
        put_f32(&mut clips, c.max_error_m);
        clips.extend_from_slice(&c.source_hash);
        debug_assert_eq!(clips.len() - rec_start, CLIP_RECORD_SIZE);
    }
    pad_to(&mut data, ALIGN);

    let strs = strings.bytes();
    let sections: [(u32, &[u8]); 6] = [
        (SECTION_STRINGS, &strs),
        (SECTION_META, &meta),
        (SECTION_SKELETON, &skel),
        (SECTION_CLIPS, &clips),
        (SECTION_CURVES, &curves),
        (SECTION_DATA, &data),
    ];

    let mut out = vec![0u8; HEADER_SIZE + sections.len() * SECTION_ENTRY_SIZE];
    pad_to(&mut out, ALIGN);
    let mut table = Vec::new();
    for (kind, bytes) in sections {
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
