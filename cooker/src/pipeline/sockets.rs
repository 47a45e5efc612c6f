//! Sockets of an asset's package (#45 item 5): the frames its importer
//! read (non-bone child nodes, see the importers' `sockets`) and those its
//! manifest declares (`sockets` of its `[[asset]]` or `[[skeleton]]`),
//! resolved on the skeleton the package carries, and the error each clip
//! has at them.
//!
//! - A manifest socket names its joint in the cooked skeleton; one the
//!   skeleton lacks is a located error with the closest name. On a
//!   retargeted asset a joint of the *source* skeleton is mapped through
//!   the retarget profile's chain maps (a chain's start and end to the
//!   target chain's, a joint between them to the target chain joint at
//!   the same fraction of the chain, the pelvis and motion root to
//!   theirs); a source joint in no mapped chain is a located error. The
//!   target rig's imported sockets stay on its joints.
//! - A manifest socket replaces an imported one of the same name.
//! - Sockets are rigid frames: an imported offset's scale is dropped
//!   (recorded when it is not one), rotations are normalized.
//! - The error at a socket is the distance between its position decoded
//!   from the package (clip decoded as a game would, forward kinematics,
//!   the socket's offset) and the same from the source poses the encoder
//!   was given, over every sample of a pose clip.

use crate::manifest::AssetEntry;
use crate::report::{self, AssetReport, SocketError};
use crate::stages::normalize::Normalized;
use ludus_anim_format::math::{Affine3A, Quat, Transform, Vec3};
use ludus_anim_format::sockets::Socket;
use ludus_anim_model::suggest::closest;
use ludus_anim_model::{Decision, Diagnostic, ResampledClip};
use ludus_anim_project::sockets::SocketSpec;
use ludus_anim_retarget::profile::Profile;
use ludus_anim_runtime::package::Package;
use ludus_anim_runtime::Skeleton;

/// A socket resolved on the package's skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct CookedSocket {
    pub name: String,
    pub joint: usize,
    /// Meters, in the joint's space.
    pub translation: Vec3,
    pub rotation: Quat,
}

impl CookedSocket {
    /// The record the package stores.
    pub fn record(&self) -> Socket<'_> {
        Socket {
            name: &self.name,
            joint: self.joint as u32,
            translation: self.translation.to_array(),
            rotation: self.rotation.to_array(),
        }
    }

    fn affine(&self) -> Affine3A {
        Affine3A::from_rotation_translation(self.rotation, self.translation)
    }
}

/// Where a manifest socket's joint may come from besides the package's
/// skeleton: a retargeted asset's source skeleton and profile.
pub struct SourceRig<'a> {
    pub skeleton: &'a Skeleton,
    pub profile: &'a Profile,
}

/// The sockets of `norm` (imported) and `settings` (manifest) on
/// `norm.skeleton`, with the decisions taken; a manifest socket whose
/// joint cannot be resolved is an error naming the file, socket and joint.
pub fn resolve(
    norm: &Normalized,
    settings: &AssetEntry,
    source: Option<SourceRig<'_>>,
    file: &str,
) -> Result<(Vec<CookedSocket>, Vec<Decision>), Diagnostic> {
    let sk = &norm.skeleton;
    let mut decisions = Vec::new();
    let mut out: Vec<CookedSocket> = Vec::new();
    for s in &norm.sockets {
        if s.joint >= sk.joint_count() || !s.offset.is_finite() {
            return Err(Diagnostic::error(
                "bad_socket",
                format!("socket '{}': its joint or offset is invalid", s.name),
            )
            .file(file));
        }
        if (s.offset.scale - Vec3::ONE).abs().max_element() > 1e-4 {
            decisions.push(Decision::new(
                "socket_scale_dropped",
                format!(
                    "socket '{}': offset scale {:?} dropped (a socket is a rigid frame)",
                    s.name,
                    s.offset.scale.to_array()
                ),
            ));
        }
        out.push(CookedSocket {
            name: s.name.clone(),
            joint: s.joint,
            translation: s.offset.translation,
            rotation: s.offset.rotation.normalize(),
        });
    }
    for spec in &settings.sockets {
        let joint = joint_of(spec, sk, source.as_ref(), file, &mut decisions)?;
        let [x, y, z, w] = spec.rotation.unwrap_or([0.0, 0.0, 0.0, 1.0]);
        let socket = CookedSocket {
            name: spec.name.clone(),
            joint,
            translation: Vec3::from_array(spec.translation.unwrap_or_default()),
            rotation: Quat::from_xyzw(x, y, z, w).normalize(),
        };
        match out.iter_mut().find(|o| o.name == spec.name) {
            Some(o) => {
                decisions.push(Decision::new(
                    "socket_replaced",
                    format!("socket '{}': the manifest's replaces the file's", spec.name),
                ));
                *o = socket;
            }
            None => out.push(socket),
        }
    }
    Ok((out, decisions))
}

/// The joint of `spec` in `sk`, else mapped from the source rig.
fn joint_of(
    spec: &SocketSpec,
    sk: &Skeleton,
    source: Option<&SourceRig<'_>>,
    file: &str,
    decisions: &mut Vec<Decision>,
) -> Result<usize, Diagnostic> {
    if let Some(j) = sk.find_by_name(&spec.joint) {
        return Ok(j);
    }
    let unknown = |names: &[String]| {
        let hint = closest(&spec.joint, names.iter().map(String::as_str))
            .map(|c| format!(" (did you mean '{c}'?)"))
            .unwrap_or_default();
        Diagnostic::error(
            "unknown_socket_joint",
            format!(
                "socket '{}': joint '{}' is not a joint of the skeleton{hint}",
                spec.name, spec.joint
            ),
        )
        .file(file)
        .joint(&spec.joint)
    };
    let Some(rig) = source else {
        return Err(unknown(sk.names()));
    };
    if rig.skeleton.find_by_name(&spec.joint).is_none() {
        let mut names = sk.names().to_vec();
        names.extend(rig.skeleton.names().iter().cloned());
        return Err(unknown(&names));
    }
    let Some(target) = map_joint(&spec.joint, rig, sk) else {
        return Err(Diagnostic::error(
            "unmapped_socket_joint",
            format!(
                "socket '{}': joint '{}' of the source skeleton is in no chain the retarget profile maps (nor its pelvis or motion root)",
                spec.name, spec.joint
            ),
        )
        .file(file)
        .joint(&spec.joint));
    };
    decisions.push(Decision::new(
        "socket_retargeted",
        format!(
            "socket '{}': source joint '{}' maps to target joint '{}' through the profile; the offset is kept in the target joint's space",
            spec.name,
            spec.joint,
            sk.name(target)
        ),
    ));
    Ok(target)
}

/// The target joint a source joint maps to (see the module docs).
fn map_joint(joint: &str, rig: &SourceRig<'_>, target: &Skeleton) -> Option<usize> {
    let p = rig.profile;
    for pair in [&p.root.pelvis, &p.root.motion_root].into_iter().flatten() {
        if pair.source == joint {
            return target.find_by_name(&pair.target);
        }
    }
    for m in &p.maps {
        let sc = p.source.chains.iter().find(|c| c.name == m.source)?;
        let tc = p.target.chains.iter().find(|c| c.name == m.target)?;
        let sp = chain_path(rig.skeleton, &sc.start, &sc.end)?;
        let Some(k) = sp.iter().position(|&j| rig.skeleton.name(j) == joint) else {
            continue;
        };
        let tp = chain_path(target, &tc.start, &tc.end)?;
        let (n, m) = (sp.len(), tp.len());
        let at = if n <= 1 {
            0
        } else {
            ((k * (m - 1)) as f32 / (n - 1) as f32).round() as usize
        };
        return tp.get(at.min(m - 1)).copied();
    }
    None
}

/// The joints from `start` down to `end` (parent to child), if `end` is
/// `start` or below it.
fn chain_path(sk: &Skeleton, start: &str, end: &str) -> Option<Vec<usize>> {
    let (s, mut at) = (sk.find_by_name(start)?, sk.find_by_name(end)?);
    let mut path = vec![at];
    while at != s {
        at = sk.parent(at)?;
        path.push(at);
        if path.len() > sk.joint_count() {
            return None;
        }
    }
    path.reverse();
    Some(path)
}

/// Per clip of the written package `bytes` (pose clips, matched by name
/// to `sources`: the poses the encoder was given), the error at each
/// socket, into the report's clips.
pub fn record(
    bytes: &[u8],
    sources: &[(&str, &ResampledClip)],
    sockets: &[CookedSocket],
    r: &mut AssetReport,
) {
    if sockets.is_empty() {
        return;
    }
    let Ok(p) = Package::load(bytes) else { return };
    for clip in p.clips() {
        let Some((_, src)) = sources.iter().find(|(n, _)| *n == clip.name()) else {
            continue;
        };
        if clip.is_additive() {
            continue;
        }
        let errors = clip_errors(&p, clip, src, sockets);
        if let Some(c) = r.clips.iter_mut().find(|c| c.name == clip.name()) {
            c.sockets = errors;
        }
    }
}

fn clip_errors(
    p: &Package<'_>,
    clip: &ludus_anim_runtime::package::Clip<'_>,
    src: &ResampledClip,
    sockets: &[CookedSocket],
) -> Vec<SocketError> {
    let sk = p.skeleton();
    let n = sk.joint_count();
    let mut out: Vec<SocketError> = sockets
        .iter()
        .map(|s| SocketError {
            socket: s.name.clone(),
            joint: sk.name(s.joint).to_string(),
            max_error_m: 0.0,
            worst_time_s: 0.0,
        })
        .collect();
    let mut decoded = vec![Transform::IDENTITY; n];
    let (mut cd, mut cs) = (vec![Affine3A::IDENTITY; n], vec![Affine3A::IDENTITY; n]);
    let samples = (clip.num_samples() as usize).min(src.num_samples as usize);
    if src.joint_count != n {
        return out;
    }
    for s in 0..samples {
        let t = (s as f32 / clip.sample_rate_hz()).min(clip.duration_s());
        if clip
            .sample(t, p.sample_defaults(clip), &mut decoded)
            .is_err()
            || !sk.local_to_component(&decoded, &mut cd)
            || !sk.local_to_component(src.pose(s), &mut cs)
        {
            continue;
        }
        for (e, socket) in out.iter_mut().zip(sockets) {
            let (Some(d), Some(a)) = (cd.get(socket.joint), cs.get(socket.joint)) else {
                continue;
            };
            let off = socket.affine();
            let err = (*d * off).translation.distance((*a * off).translation);
            if err > e.max_error_m {
                e.max_error_m = err;
                e.worst_time_s = t;
            }
        }
    }
    out
}

/// The decisions into the report.
pub fn note(decisions: &[Decision], r: &mut AssetReport) {
    r.decisions.extend(decisions.iter().map(report::decision));
}
