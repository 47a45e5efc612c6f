//! BVH (Biovision Hierarchy) importer.
//!
//! A BVH file is a joint tree (`HIERARCHY`: ROOT/JOINT with an OFFSET and a
//! CHANNELS list each, End Sites as tip markers) followed by `MOTION`: one
//! line per frame holding every joint's channel values in file order.
//!
//! Mapping to the source model, and why:
//! - joints are the ROOT and JOINTs in file order; the rest local transform
//!   is the OFFSET with no rotation (BVH's zero pose);
//! - End Sites are not joints: they neither deform nor animate, they only
//!   mark where the last bone ends. With `keep_unused_leaves` they become
//!   joints named `<parent>_end`; either way the choice is recorded;
//! - one clip named after the file, frame `i` at `i * frame_time`;
//! - rotation channels are Euler angles in degrees composed in the order
//!   listed (`Zrotation Xrotation Yrotation` is `Rz * Rx * Ry`, column
//!   vectors), converted per frame to quaternions and made
//!   hemisphere-continuous, as Linear (slerp) curves keyed at every frame;
//! - position channels, where a joint has them, replace the OFFSET in
//!   animation (standard BVH: they are the joint's local translation); axes
//!   without a position channel keep the OFFSET value. One recorded
//!   exception: channels that stay near zero (under 1% of the OFFSET
//!   length) in every frame are offsets from it (see
//!   `positions_are_offsets`);
//! - units and axes are not in the file: centimetres and +Y up,
//!   right-handed are assumed and recorded (override units with `--units`).
//!
//! Broken files are rejected with a diagnostic naming the line and joint
//! (see [`code`] for the codes); the importer never panics on input.

mod parse;

pub use parse::code;

use crate::{CompanionReader, FormatImporter, ImportError, ImportOptions};
use ludus_anim_model::limits::Limits;
use ludus_anim_model::SourceFormat;
use ludus_anim_model::{
    AxisSystem, Curve, Decision, Diagnostic, Diagnostics, Interpolation, JointTracks, Quat,
    SourceAsset, SourceClip, SourceJoint, SourceSkeleton, Transform, Vec3,
};
use parse::{Axis, BvhError, BvhFile, Channel, Node};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;

/// Meters per unit assumed for BVH files (centimetres).
pub const ASSUMED_UNIT_SCALE_M: f32 = 0.01;

/// The BVH motion capture (`.bvh`) importer.
pub const BVH: FormatImporter = FormatImporter {
    formats: &[SourceFormat::Bvh],
    import: import_limited,
};

/// Import a BVH file; joints, depth, frames and the clip's duration are
/// checked against `limits` while parsing, before the motion is read.
// The signature is the one every importer shares (see lib.rs); the size of
// `ImportError` is lib.rs's choice.
fn import_limited(
    path: &Path,
    bytes: &[u8],
    options: &ImportOptions,
    _companions: &dyn CompanionReader,
    limits: &Limits,
) -> Result<SourceAsset, ImportError> {
    let fail = |e: BvhError| {
        if let Some(limit) = e.limit {
            return ImportError::limit(path, *limit);
        }
        let mut d = Diagnostic::error(e.code, e.to_string()).file(path.display().to_string());
        if let Some(j) = &e.joint {
            d = d.joint(j.clone());
        }
        ImportError::Malformed(Box::new(d))
    };
    let text = std::str::from_utf8(bytes).map_err(|e| {
        let ok = bytes.get(..e.valid_up_to()).unwrap_or_default();
        let line = ok.iter().filter(|&&b| b == b'\n').count() + 1;
        fail(BvhError {
            code: code::SYNTAX,
            line: Some(line),
            joint: None,
            message: "invalid UTF-8: not a BVH text file".into(),
            limit: None,
        })
    })?;
    let file = parse::parse_limited(text, limits).map_err(fail)?;
    Ok(convert(path, &file, options))
}

fn convert(path: &Path, file: &BvhFile, options: &ImportOptions) -> SourceAsset {
    let path_str = path.display().to_string();
    let mut decisions = Vec::new();
    let mut diagnostics = Diagnostics::default();
    for t in &file.tolerated {
        diagnostics.push(
            Diagnostic::warning(t.code, format!("line {}: {}", t.line, t.message)).file(&path_str),
        );
    }

    // Which nodes become joints, and their names.
    let mut joint_of_node: Vec<Option<usize>> = vec![None; file.nodes.len()];
    let mut kept: Vec<usize> = Vec::new();
    for (i, n) in file.nodes.iter().enumerate() {
        if !n.is_end_site() {
            joint_of_node[i] = Some(kept.len());
            kept.push(i);
        }
    }
    let mut names: Vec<String> = kept
        .iter()
        .filter_map(|&i| file.nodes.get(i).and_then(|n| n.name.clone()))
        .collect();
    dedupe_names(&mut names, &[], "joint", &mut decisions);

    let end_sites: Vec<usize> = (0..file.nodes.len())
        .filter(|&i| file.nodes.get(i).is_some_and(Node::is_end_site))
        .collect();
    let end_parent_names: Vec<String> = end_sites
        .iter()
        .map(|&i| {
            file.nodes
                .get(i)
                .and_then(|n| n.parent)
                .and_then(|p| joint_of_node.get(p).copied().flatten())
                .and_then(|j| names.get(j).cloned())
                .unwrap_or_default()
        })
        .collect();
    if options.keep_unused_leaves {
        let mut end_names: Vec<String> = end_parent_names
            .iter()
            .map(|p| format!("{p}_end"))
            .collect();
        dedupe_names(&mut end_names, &names, "End Site joint", &mut decisions);
        for (&i, name) in end_sites.iter().zip(end_names) {
            joint_of_node[i] = Some(kept.len());
            kept.push(i);
            names.push(name);
        }
        if !end_sites.is_empty() {
            decisions.push(Decision::new(
                "kept_end_sites",
                format!(
                    "{} End Site(s) kept as joints named `<parent>_end` (keep_unused_leaves)",
                    end_sites.len()
                ),
            ));
        }
    } else if !end_sites.is_empty() {
        decisions.push(Decision::new(
            "dropped_end_sites",
            format!(
                "{} End Site(s) dropped: they neither deform nor animate (children of {}); keep them with keep_unused_leaves",
                end_sites.len(),
                list_names(&end_parent_names)
            ),
        ));
    }

    let joints: Vec<SourceJoint> = kept
        .iter()
        .zip(&names)
        .filter_map(|(&i, name)| {
            let n = file.nodes.get(i)?;
            Some(SourceJoint {
                name: name.clone(),
                parent: n
                    .parent
                    .and_then(|p| joint_of_node.get(p).copied().flatten()),
                rest: Transform::new(vec3(n.offset), Quat::IDENTITY, Vec3::ONE),
            })
        })
        .collect();

    let frame_time = frame_time(file, &mut decisions);
    let mut clips = Vec::new();
    if file.frames == 0 {
        diagnostics.push(
            Diagnostic::warning(
                "bvh_no_frames",
                "`Frames: 0`: the file has a skeleton but no animation",
            )
            .file(&path_str),
        );
    } else {
        let clip_name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "clip".into());
        let times: Vec<f32> = (0..file.frames)
            .map(|i| (i as f64 * frame_time) as f32)
            .collect();
        let tracks = kept
            .iter()
            .enumerate()
            .filter_map(|(j, &i)| {
                file.nodes
                    .get(i)
                    .and_then(|n| tracks_of(file, n, j, &times))
            })
            .collect();
        clips.push(SourceClip {
            name: clip_name,
            duration_s: ((file.frames - 1) as f64 * frame_time) as f32,
            tracks,
            curves: Vec::new(),
            frame_rate_hz: Some((1.0 / frame_time) as f32),
            key_times: times,
            markers: vec![],
        });
    }

    describe_channels(file, &names, &joint_of_node, &mut decisions);
    decisions.push(Decision::new(
        "assumed_units",
        "assumed centimetres: unit_scale_m = 0.01; BVH declares no unit (mocap exporters differ); override with --units",
    ));
    decisions.push(Decision::new(
        "assumed_axes",
        "+Y up, right-handed: the BVH convention, assumed (the file declares no axes); values used unchanged",
    ));

    SourceAsset {
        path: path_str,
        format: SourceFormat::Bvh,
        skeleton: SourceSkeleton { joints },
        clips,
        unit_scale_m: ASSUMED_UNIT_SCALE_M,
        source_axes: AxisSystem {
            description: "+Y up, right-handed (BVH convention, assumed)".into(),
        },
        joint_shell_distance: None,
        diagnostics,
        decisions,
        companions: Vec::new(),
        skins: Vec::new(),
        sockets: Vec::new(),
    }
}

fn vec3(v: [f64; 3]) -> Vec3 {
    Vec3::new(v[0] as f32, v[1] as f32, v[2] as f32)
}

/// At most a few names, for decision texts.
fn list_names(names: &[String]) -> String {
    const MAX: usize = 6;
    let mut unique: Vec<&str> = Vec::new();
    for n in names {
        if !unique.contains(&n.as_str()) {
            unique.push(n);
        }
    }
    let shown: Vec<String> = unique.iter().take(MAX).map(|n| format!("'{n}'")).collect();
    if unique.len() > MAX {
        format!("{}, ... ({} joints)", shown.join(", "), unique.len())
    } else {
        shown.join(", ")
    }
}

/// Make `names` unique (also against `taken`), renaming later duplicates to
/// `<name>_2`, `<name>_3`, ...: deterministic (file order), and a renamed
/// joint never takes a name that appears anywhere else in the file.
fn dedupe_names(names: &mut [String], taken: &[String], what: &str, decisions: &mut Vec<Decision>) {
    let mut used: HashSet<String> = names.iter().chain(taken).cloned().collect();
    let mut seen: HashSet<String> = taken.iter().cloned().collect();
    // Next suffix to try per name: each candidate is tried once, so many
    // duplicates of one name cost linear, not quadratic, time.
    let mut next: HashMap<String, usize> = HashMap::new();
    for name in names.iter_mut() {
        if seen.insert(name.clone()) {
            continue;
        }
        let k = next.entry(name.clone()).or_insert(2);
        let new = loop {
            let candidate = format!("{name}_{k}");
            *k += 1;
            if !used.contains(&candidate) {
                break candidate;
            }
        };
        decisions.push(Decision::new(
            "renamed_joint",
            format!(
                "duplicate {what} name '{name}' renamed to '{new}' (joint names must be unique)"
            ),
        ));
        used.insert(new.clone());
        seen.insert(new.clone());
        *name = new;
    }
}

/// The frame time to use. Exporters print `1/rate` rounded (`.0083333` for
/// 120 fps); read literally, key times drift from the rate's grid by up to
/// a tenth of a millisecond over a long take. When the printed value is
/// exactly `1/n` rounded to the digits shown, use `1/n`.
fn frame_time(file: &BvhFile, decisions: &mut Vec<Decision>) -> f64 {
    let ft = file.frame_time;
    let text = file.frame_time_text.as_str();
    let decimals = match text.split_once('.') {
        Some((_, frac)) if frac.bytes().all(|b| b.is_ascii_digit()) => frac.len() as i32,
        _ => return ft,
    };
    let n = (1.0 / ft).round();
    if !(1.0..=100_000.0).contains(&n) {
        return ft;
    }
    let exact = 1.0 / n;
    let half_ulp_printed = 0.5 * 10f64.powi(-decimals);
    if exact != ft && (exact - ft).abs() <= half_ulp_printed * (1.0 + 1e-9) {
        decisions.push(Decision::new(
            "frame_time",
            format!("Frame Time {text} read as 1/{n} s ({n} fps): the printed value is 1/{n} rounded to {decimals} decimals"),
        ));
        exact
    } else {
        ft
    }
}

/// Record the rotation orders and position channels the file uses.
fn describe_channels(
    file: &BvhFile,
    names: &[String],
    joint_of_node: &[Option<usize>],
    decisions: &mut Vec<Decision>,
) {
    let mut orders: BTreeMap<String, usize> = BTreeMap::new();
    let mut positioned: Vec<String> = Vec::new();
    let mut as_offsets: Vec<String> = Vec::new();
    for (i, n) in file.nodes.iter().enumerate() {
        let order: String = n
            .channels
            .iter()
            .filter_map(|c| match c {
                Channel::Rotation(a) => Some(axis_letter(*a)),
                Channel::Position(_) => None,
            })
            .collect();
        if !order.is_empty() {
            *orders.entry(order).or_default() += 1;
        }
        if n.channels.iter().any(|c| matches!(c, Channel::Position(_))) {
            if let Some(name) = joint_of_node
                .get(i)
                .copied()
                .flatten()
                .and_then(|j| names.get(j))
            {
                if positions_are_offsets(file, n) {
                    as_offsets.push(name.clone());
                } else {
                    positioned.push(name.clone());
                }
            }
        }
    }
    if !orders.is_empty() {
        let list: Vec<String> = orders
            .iter()
            .map(|(o, c)| format!("{o} ({c} joints)"))
            .collect();
        decisions.push(Decision::new(
            "euler_order",
            format!(
                "Euler rotation channels composed in listed order (R = R1 * R2 * R3, column vectors, degrees): {}",
                list.join(", ")
            ),
        ));
    }
    if !as_offsets.is_empty() {
        decisions.push(Decision::new(
            "position_channels_as_offsets",
            format!(
                "position channels of {} joint(s) stay within 1% of zero (relative to OFFSET) in every frame: read as offsets added to OFFSET, not as replacements (which would shrink these bones to almost nothing): {}",
                as_offsets.len(),
                list_names(&as_offsets)
            ),
        ));
    }
    if !positioned.is_empty() {
        decisions.push(Decision::new(
            "position_channels",
            format!(
                "position channels replace OFFSET as the animated translation of {} joint(s): {} (OFFSET stays the rest translation)",
                positioned.len(),
                list_names(&positioned)
            ),
        ));
    }
}

fn axis_letter(a: Axis) -> char {
    match a {
        Axis::X => 'X',
        Axis::Y => 'Y',
        Axis::Z => 'Z',
    }
}

/// Curves of one joint: rotation if it has rotation channels, translation
/// if it has position channels. `None` for a joint without channels.
fn tracks_of(file: &BvhFile, node: &Node, joint: usize, times: &[f32]) -> Option<JointTracks> {
    let relative = positions_are_offsets(file, node);
    let has_rot = node
        .channels
        .iter()
        .any(|c| matches!(c, Channel::Rotation(_)));
    let has_pos = node
        .channels
        .iter()
        .any(|c| matches!(c, Channel::Position(_)));
    if !has_rot && !has_pos {
        return None;
    }
    let mut rotations = Vec::with_capacity(if has_rot { file.frames } else { 0 });
    let mut translations = Vec::with_capacity(if has_pos { file.frames } else { 0 });
    let mut prev: Option<Quat> = None;
    for f in 0..file.frames {
        let values = file
            .frame(f)
            .get(node.first_channel..node.first_channel + node.channels.len())
            .unwrap_or(&[]);
        let mut q = DQuat::IDENTITY;
        let mut t = node.offset;
        for (ch, &v) in node.channels.iter().zip(values) {
            match *ch {
                Channel::Rotation(a) => q = q.mul(DQuat::about(a, v.to_radians())),
                Channel::Position(a) if relative => t[a as usize] += v,
                Channel::Position(a) => t[a as usize] = v,
            }
        }
        if has_rot {
            let mut q = q.to_quat();
            // q and -q are the same rotation; keep neighbours on one
            // hemisphere so interpolation takes the short way.
            if prev.is_some_and(|p| p.dot(q) < 0.0) {
                q = -q;
            }
            prev = Some(q);
            rotations.push(q);
        }
        if has_pos {
            translations.push(vec3(t));
        }
    }
    let mut tr = JointTracks::new(joint);
    if has_rot {
        tr.rotation = Some(Curve::from_values(Interpolation::Linear, times, &rotations));
    }
    if has_pos {
        tr.translation = Some(Curve::from_values(
            Interpolation::Linear,
            times,
            &translations,
        ));
    }
    Some(tr)
}

/// Below this fraction of the OFFSET length, position channels are read as
/// offsets from OFFSET (see [`positions_are_offsets`]).
const NEAR_ZERO_POSITION: f64 = 0.01;

/// Whether this joint's position channels must be read as offsets added to
/// its OFFSET rather than as its translation. The rule is "replace"
/// (standard BVH), with one exception: channels that stay within 1% of zero,
/// relative to the OFFSET length, in every frame. Read as replacements they
/// would shrink the bone to almost nothing for the whole take, which no
/// exporter means; they come from exporters that write pose deltas
/// (MakeHuman writes position channels on every joint: zero plus float
/// noise in its T-pose).
fn positions_are_offsets(file: &BvhFile, node: &Node) -> bool {
    let has_pos = node
        .channels
        .iter()
        .any(|c| matches!(c, Channel::Position(_)));
    let offset_len = node.offset.iter().map(|o| o * o).sum::<f64>().sqrt();
    if file.frames == 0 || !has_pos || offset_len == 0.0 {
        return false;
    }
    let limit = NEAR_ZERO_POSITION * offset_len;
    (0..file.frames).all(|f| {
        let values = file.frame(f);
        let len2: f64 = node
            .channels
            .iter()
            .enumerate()
            .filter(|(_, c)| matches!(c, Channel::Position(_)))
            .map(|(k, _)| {
                values
                    .get(node.first_channel + k)
                    .map_or(f64::INFINITY, |v| v * v)
            })
            .sum();
        len2.sqrt() <= limit
    })
}

/// A double-precision quaternion (x, y, z, w), only for composing Euler
/// channels: three products of nearly-unit values lose a little in f32, and
/// mocap composes a fresh quaternion per joint per frame.
#[derive(Clone, Copy)]
struct DQuat([f64; 4]);

impl DQuat {
    const IDENTITY: DQuat = DQuat([0.0, 0.0, 0.0, 1.0]);

    /// Rotation by `angle` radians about a coordinate axis (right-handed).
    fn about(axis: Axis, angle: f64) -> DQuat {
        let (s, c) = (angle * 0.5).sin_cos();
        match axis {
            Axis::X => DQuat([s, 0.0, 0.0, c]),
            Axis::Y => DQuat([0.0, s, 0.0, c]),
            Axis::Z => DQuat([0.0, 0.0, s, c]),
        }
    }

    /// Hamilton product `self * r` (apply `r` first, column vectors).
    fn mul(self, r: DQuat) -> DQuat {
        let [ax, ay, az, aw] = self.0;
        let [bx, by, bz, bw] = r.0;
        DQuat([
            aw * bx + ax * bw + ay * bz - az * by,
            aw * by - ax * bz + ay * bw + az * bx,
            aw * bz + ax * by - ay * bx + az * bw,
            aw * bw - ax * bx - ay * by - az * bz,
        ])
    }

    fn to_quat(self) -> Quat {
        let [x, y, z, w] = self.0;
        let len = (x * x + y * y + z * z + w * w).sqrt();
        Quat::from_xyzw(
            (x / len) as f32,
            (y / len) as f32,
            (z / len) as f32,
            (w / len) as f32,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dquat_matches_glam() {
        let a = DQuat::about(Axis::Z, 0.3)
            .mul(DQuat::about(Axis::X, -1.1))
            .mul(DQuat::about(Axis::Y, 2.0));
        let b =
            Quat::from_rotation_z(0.3) * Quat::from_rotation_x(-1.1) * Quat::from_rotation_y(2.0);
        assert!(a.to_quat().dot(b).abs() > 1.0 - 1e-6);
    }

    #[test]
    fn duplicate_names_get_numbered() {
        let mut names: Vec<String> = ["a", "b", "a", "a_2", "a"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut d = Vec::new();
        dedupe_names(&mut names, &[], "joint", &mut d);
        assert_eq!(names, ["a", "b", "a_3", "a_2", "a_4"]);
        assert_eq!(d.len(), 2);
    }
}
