//! `suggest`: a proposed profile for a person to check (chains and map from
//! hierarchy, names and synonyms; axes; retarget poses with the detected
//! rest kind). It is a starting point, never applied implicitly.

use crate::facing;
use crate::names::{is_generic, parse, parse_all, Name, Part, Side as NSide};
use crate::posecheck::pose_kind;
use crate::profile::*;
use crate::rig::{common_ancestor, is_ancestor_or_self, path_down, sample_clip, PoseFk};
use glam::EulerRot;
use ludus_anim_format::math::{Quat, Vec3};
use ludus_anim_model::SourceClip;
use ludus_anim_runtime::Skeleton;

/// What the suggester found on one skeleton.
struct Found<'a> {
    spec: SideSpec,
    pelvis: usize,
    motion_root: Option<usize>,
    /// (part, side) -> joint, for contacts and twist.
    parts: Vec<((Part, NSide), usize)>,
    /// Upper-arm abduction from the spine, degrees, per side (left, right).
    arm_deg: [Option<f32>; 2],
    skel_ref: &'a Skeleton,
    /// How the forward axis was chosen (cues and disagreements).
    facing_note: String,
}

/// Every joint's parsed name; when the names hold no pair of thighs, the
/// parts and sides come from the hierarchy and rest geometry instead
/// (`topology`), so unnamed (`node0`..) and foreign-language rigs map.
fn labels(skel: &Skeleton) -> Vec<Name> {
    let mut names = parse_all((0..skel.joint_count()).map(|j| skel.name(j)));
    knee_less_legs(skel, &mut names);
    let has = |side| {
        names
            .iter()
            .any(|n| n.part == Part::Thigh && n.side == side)
    };
    if has(NSide::Left) && has(NSide::Right) {
        return names;
    }
    if let Some(found) = crate::topology::labels(skel) {
        for n in &mut names {
            n.part = Part::Other;
        }
        for (j, part, side) in found {
            names[j].part = part;
            names[j].side = side;
        }
    }
    names
}

/// Legs without a knee, named or not as such:
/// - a side whose leg is named only by the lower-leg word (French
///   `jambe`, one bone from hip to ankle in the ufbx Blender barbarian)
///   and no thigh: its topmost such joints (not under another leg joint)
///   are the thigh, whatever the word says;
/// - a shin that is a leaf standing on the floor of the rest pose (within
///   5% of the rig's height of its lowest joint) under a thigh is where
///   the leg ends: a foot (the Quaternius Skeleton's `L.UpperLeg` runs
///   from hip to ankle and its `L.DownLeg` is the foot).
fn knee_less_legs(skel: &Skeleton, names: &mut [Name]) {
    for side in [NSide::Left, NSide::Right] {
        let is = |n: &Name, p: Part| n.part == p && n.side == side;
        if names.iter().any(|n| is(n, Part::Thigh)) {
            continue;
        }
        let tops: Vec<usize> = (0..names.len())
            .filter(|&j| {
                is(&names[j], Part::Calf)
                    && skel
                        .parent(j)
                        .is_none_or(|p| !matches!(names[p].part, Part::Calf | Part::Thigh))
            })
            .collect();
        for j in tops {
            names[j].part = Part::Thigh;
        }
    }
    let fk = PoseFk::new(skel, skel.rest_pose().to_vec());
    let ys: Vec<f32> = fk.affine.iter().map(|a| a.translation.y).collect();
    let lo = ys.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = ys.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let leaf = |j: usize| (0..skel.joint_count()).all(|k| skel.parent(k) != Some(j));
    for j in 0..names.len() {
        let under_thigh = skel.parent(j).is_some_and(|p| names[p].part == Part::Thigh);
        if names[j].part == Part::Calf && under_thigh && leaf(j) && ys[j] - lo <= 0.05 * (hi - lo) {
            names[j].part = Part::Foot;
        }
    }
}

fn find(skel: &Skeleton, part: Part, side: NSide) -> Option<usize> {
    let names = labels(skel);
    let hits: Vec<usize> = (0..skel.joint_count())
        .filter(|&j| names[j].part == part && names[j].side == side)
        .collect();
    hits.iter()
        .copied()
        .find(|&j| !skel.name(j).starts_with('_'))
        .or(hits.first().copied())
}

fn axis_name(v: Vec3) -> String {
    let a = v.abs();
    let (letter, c) = if a.x >= a.y && a.x >= a.z {
        ("x", v.x)
    } else if a.y >= a.z {
        ("y", v.y)
    } else {
        ("z", v.z)
    };
    format!("{}{letter}", if c < 0.0 { "-" } else { "+" })
}

fn snap(v: Vec3) -> Vec3 {
    crate::basis::axis(&axis_name(v)).unwrap_or(Vec3::Y)
}

/// Up from pelvis to head (or +Y).
fn up_axis(fk: &PoseFk, pelvis: usize, head: Option<usize>) -> Vec3 {
    head.map_or(Vec3::Y, |h| snap(fk.position(h) - fk.position(pelvis)))
}

/// The body the facing cues read, from the parts found by name.
fn body(skel: &Skeleton, fk: &PoseFk, f: &Found) -> facing::Body {
    let get = |p: Part, s: NSide| f.parts.iter().find(|(k, _)| *k == (p, s)).map(|(_, j)| *j);
    let mut b = facing::Body {
        pelvis: f.pelvis,
        head: find(skel, Part::Head, NSide::Center),
        ..facing::Body::default()
    };
    for side in [NSide::Left, NSide::Right] {
        b.hands.extend(get(Part::Hand, side));
        if let (Some(thigh), Some(foot)) = (get(Part::Thigh, side), get(Part::Foot, side)) {
            b.legs.push(facing::Leg {
                left: side == NSide::Left,
                thigh,
                // A knee between them only (the Quaternius Skeleton's
                // `L.DownLeg.001` is an arm joint named as a shin).
                knee: get(Part::Calf, side).filter(|&k| {
                    k != thigh
                        && is_ancestor_or_self(skel, thigh, k)
                        && is_ancestor_or_self(skel, k, foot)
                }),
                foot,
                toe: get(Part::Toe, side).or_else(|| facing::toe_of(skel, fk, foot)),
            });
        }
    }
    b
}

/// Forward: the declared override, else the vote of the rest-pose and clip
/// cues snapped to an axis perpendicular to up, else +Z (-Y when Z is up).
/// Returns the axis and a note saying which cues decided it and which
/// disagreed.
fn forward_axis(
    skel: &Skeleton,
    f: &Found,
    clips: &[SourceClip],
    up: Vec3,
    forced: Option<&str>,
) -> (String, String) {
    let fk = PoseFk::new(skel, skel.rest_pose().to_vec());
    let b = body(skel, &fk, f);
    let mut cues = facing::pose_cues(&fk, up, &b);
    if let Some(clip) = clips
        .iter()
        .max_by(|a, c| a.duration_s.total_cmp(&c.duration_s))
    {
        cues.extend(facing::clip_cues(&clip_frames(skel, clip), up, &b));
    }
    let fallback = if up.z.abs() > 0.5 { -Vec3::Y } else { Vec3::Z };
    let voted = facing::vote(&cues).map(|v| snap(v - up * v.dot(up)));
    let chosen = forced
        .and_then(|a| crate::basis::axis(a).ok())
        .or(voted)
        .filter(|v| v.dot(up).abs() < 0.5)
        .unwrap_or(fallback);
    let says: Vec<String> = cues
        .iter()
        .map(|c| {
            let agree = if c.dir.dot(chosen) > 0.0 {
                ""
            } else {
                " DISAGREES"
            };
            format!("{} {}{agree}", c.what, axis_name(c.dir))
        })
        .collect();
    let how = match (forced, voted) {
        (Some(a), _) => format!("forward {a} (given)"),
        (None, Some(_)) => format!("forward {} (inferred)", axis_name(chosen)),
        (None, None) => format!("forward {} (no cue: default)", axis_name(chosen)),
    };
    let note = if says.is_empty() {
        how
    } else {
        format!("{how}; cues: {}", says.join(", "))
    };
    (axis_name(chosen), note)
}

/// A clip's frames at its key rate (at most 240 frames, evenly spread).
fn clip_frames(skel: &Skeleton, clip: &SourceClip) -> Vec<PoseFk> {
    let n = 240usize;
    let mut buf = skel.rest_pose().to_vec();
    (0..=n)
        .map(|i| {
            let t = clip.duration_s * i as f32 / n as f32;
            sample_clip(skel, clip, t, &mut buf);
            PoseFk::new(skel, buf.clone())
        })
        .collect()
}

fn chain(name: &str, role: Role, skel: &Skeleton, start: usize, end: usize) -> ChainSpec {
    ChainSpec {
        name: name.into(),
        role,
        start: skel.name(start).into(),
        end: skel.name(end).into(),
        required: None,
        follow: None,
    }
}

fn limbs(skel: &Skeleton, sides: &mut Vec<ChainSpec>, parts: &mut Vec<((Part, NSide), usize)>) {
    for (side, sfx, arm, leg, clav, foot) in [
        (
            NSide::Left,
            "l",
            Role::ArmL,
            Role::LegL,
            Role::ClavicleL,
            Role::FootL,
        ),
        (
            NSide::Right,
            "r",
            Role::ArmR,
            Role::LegR,
            Role::ClavicleR,
            Role::FootR,
        ),
    ] {
        for p in [
            Part::Clavicle,
            Part::UpperArm,
            Part::ForeArm,
            Part::Hand,
            Part::Thigh,
            Part::Calf,
            Part::Foot,
            Part::Toe,
        ] {
            if let Some(j) = find(skel, p, side) {
                parts.push(((p, side), j));
            }
        }
        let get = |p: Part| parts.iter().find(|(k, _)| *k == (p, side)).map(|(_, j)| *j);
        if let (Some(u), Some(h)) = (get(Part::UpperArm), get(Part::Hand)) {
            if is_ancestor_or_self(skel, u, h) {
                sides.push(chain(&format!("arm_{sfx}"), arm, skel, u, h));
            }
            if let Some(c) =
                get(Part::Clavicle).filter(|&c| c != u && is_ancestor_or_self(skel, c, u))
            {
                sides.push(chain(
                    &format!("clavicle_{sfx}"),
                    clav,
                    skel,
                    c,
                    skel.parent(u).unwrap_or(c),
                ));
            }
        }
        // Legs end at the shin and the foot is its own chain on every rig,
        // so a plain leg (thigh, shin, foot) and an IK rig's (thigh, shin;
        // the foot a control outside the leg that follows the shin) map
        // bone for bone: the shin takes the shin's rotation, the foot the
        // foot's.
        let calf = get(Part::Calf).filter(|&c| {
            get(Part::Thigh).is_some_and(|t| t != c && is_ancestor_or_self(skel, t, c))
        });
        if let (Some(t), Some(c), Some(f)) = (get(Part::Thigh), calf, get(Part::Foot)) {
            if f != c {
                sides.push(chain(&format!("leg_{sfx}"), leg, skel, t, c));
                let mut fc = chain(&format!("foot_{sfx}"), foot, skel, f, f);
                if !is_ancestor_or_self(skel, c, f) {
                    fc.follow = Some(skel.name(c).into());
                }
                sides.push(fc);
            }
        } else if let (Some(t), Some(f)) = (get(Part::Thigh), get(Part::Foot)) {
            if skel.parent(f) == Some(t) {
                // A leg without a knee (thigh straight to the foot, the
                // barbarian's `jambe` -> `pied`): the one leg bone takes
                // the source leg by normalized length, the foot its foot.
                sides.push(chain(&format!("leg_{sfx}"), leg, skel, t, t));
                sides.push(chain(&format!("foot_{sfx}"), foot, skel, f, f));
            } else if is_ancestor_or_self(skel, t, f) {
                sides.push(chain(&format!("leg_{sfx}"), leg, skel, t, f));
            }
        } else if let (Some(t), Some(c)) = (get(Part::Thigh), calf) {
            // A leg without a foot joint (the Quaternius Skeleton's
            // `UpperLeg` -> `DownLeg`): thigh and shin move, nothing is
            // planted (no ankle to plant).
            sides.push(chain(&format!("leg_{sfx}"), leg, skel, t, c));
        }
        if let (Some(f), Some(t)) = (get(Part::Foot), get(Part::Toe)) {
            if f != t && is_ancestor_or_self(skel, f, t) {
                sides.push(chain(&format!("toe_{sfx}"), Role::Custom, skel, t, t));
            }
        }
    }
}

fn find_side<'a>(
    skel: &'a Skeleton,
    file: &str,
    clips: &[SourceClip],
    forced_forward: Option<&str>,
) -> Found<'a> {
    let fk = PoseFk::new(skel, skel.rest_pose().to_vec());
    let mut chains = Vec::new();
    let mut parts = Vec::new();
    limbs(skel, &mut chains, &mut parts);
    let head = find(skel, Part::Head, NSide::Center);
    let neck = find(skel, Part::Neck, NSide::Center);
    let get = |p: Part, s: NSide| parts.iter().find(|(k, _)| *k == (p, s)).map(|(_, j)| *j);
    let mut anchors: Vec<usize> = [
        get(Part::Thigh, NSide::Left),
        get(Part::Thigh, NSide::Right),
        neck.or(head),
    ]
    .into_iter()
    .flatten()
    .collect();
    if anchors.is_empty() {
        anchors.push(0);
    }
    let pelvis = named_pelvis_above(skel, common_ancestor(skel, &anchors));
    if let Some(top) = neck.or(head).filter(|&n| n != pelvis) {
        if let Some(path) = path_down(skel, pelvis, top) {
            if path.len() > 2 {
                chains.insert(
                    0,
                    chain("spine", Role::Spine, skel, path[1], path[path.len() - 2]),
                );
            }
        }
    }
    if let (Some(n), Some(h)) = (neck, head) {
        if n != h && is_ancestor_or_self(skel, n, h) {
            chains.push(chain(
                "neck",
                Role::Neck,
                skel,
                n,
                skel.parent(h).unwrap_or(n),
            ));
        }
    }
    if let Some(h) = head {
        chains.push(chain("head", Role::Head, skel, h, h));
    }
    let up = up_axis(&fk, pelvis, head);
    let spec = SideSpec {
        skeleton: file.to_string(),
        identity: Some(skel.identity().to_hex()),
        size_m: Some(crate::rig::rest_size_m(skel)),
        up: axis_name(up),
        forward: "+z".into(),
        floor: 0.0,
        rest_kind: None,
        pose: PoseSpec::default(),
        chains,
    };
    // A root joint above the pelvis carries root motion: `Root`, 3ds Max
    // Biped's `Bip01`, French `racine`.
    // Unnamed (`node0`): a root on the floor below the pelvis.
    let root_base = parse(skel.name(0)).base;
    let named_root = root_base.contains("root") || root_base == "bip01" || root_base == "racine";
    let on_floor = is_generic(&root_base) && root_on_floor(&fk);
    let motion_root = (pelvis != 0 && (named_root || on_floor)).then_some(0);
    let mut found = Found {
        spec,
        pelvis,
        motion_root,
        parts,
        arm_deg: [None, None],
        skel_ref: skel,
        facing_note: String::new(),
    };
    let (forward, note) = forward_axis(skel, &found, clips, up, forced_forward);
    found.spec.forward = forward;
    found.facing_note = note;
    found.arm_deg = arm_angles(skel, &found);
    found
}

/// The topmost ancestor named `Hips` or `Pelvis` above the joint the legs
/// and neck share, else that joint: MotionBuilder's PAB rigs hang the
/// legs off `Spine` under `Hips -> Pelvis`, and `Hips` carries the root
/// motion that a pelvis at `Spine` would leave behind.
fn named_pelvis_above(skel: &Skeleton, shared: usize) -> usize {
    let mut pelvis = shared;
    let mut at = skel.parent(shared);
    while let Some(p) = at {
        if matches!(parse(skel.name(p)).base.as_str(), "hips" | "pelvis") {
            pelvis = p;
        }
        at = skel.parent(p);
    }
    pelvis
}

/// Joint 0 stands at the lowest point of the rest pose (within 5% of the
/// rig's height).
fn root_on_floor(fk: &PoseFk) -> bool {
    let ys: Vec<f32> = fk.affine.iter().map(|a| a.translation.y).collect();
    let lo = ys.iter().copied().fold(f32::INFINITY, f32::min);
    let hi = ys.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    ys.first().is_some_and(|&y| y - lo <= 0.05 * (hi - lo))
}

fn arm_angles(skel: &Skeleton, f: &Found) -> [Option<f32>; 2] {
    let Ok(side) = crate::side::Side::new("suggest", skel, &f.spec, skel.rest_pose()) else {
        return [None, None];
    };
    let chains: Vec<crate::plan::Chain> = f
        .spec
        .chains
        .iter()
        .filter_map(|c| crate::plan::resolve_chain(&side, c).ok())
        .collect();
    let angle = |role: Role| {
        chains
            .iter()
            .find(|c| c.role == role)
            .and_then(|c| crate::posecheck::arm_angle(&side, &chains, c))
    };
    [angle(Role::ArmL), angle(Role::ArmR)]
}

/// The rest kind of a skeleton's arms ("T-pose", "A-pose", "arms down",
/// or "unknown" without recognizable arms).
pub fn rest_kind(skeleton: &Skeleton) -> &'static str {
    let f = find_side(skeleton, "", &[], None);
    f.arm_deg[0].or(f.arm_deg[1]).map_or("unknown", pose_kind)
}

/// Propose a profile retargeting clips of `source` onto `target`.
/// `source_file` / `target_file` are recorded as the skeleton files.
/// Facing is inferred from the rest poses only; see [`suggest_with`].
pub fn suggest(
    source: &Skeleton,
    source_file: &str,
    target: &Skeleton,
    target_file: &str,
) -> Profile {
    let side = |skeleton, file| RigInput {
        skeleton,
        file,
        clips: &[],
        forward: None,
    };
    suggest_with(&side(source, source_file), &side(target, target_file)).profile
}

/// One rig given to [`suggest_with`].
pub struct RigInput<'a> {
    pub skeleton: &'a Skeleton,
    /// Recorded as the side's skeleton file.
    pub file: &'a str,
    /// Its clips (normalized): knee bend and root travel vote on forward.
    pub clips: &'a [SourceClip],
    /// A forward axis given by a person (`+z`, `-x`, ...), overriding the
    /// inferred one.
    pub forward: Option<&'a str>,
}

/// A suggested profile and notes for the person checking it.
pub struct Suggested {
    pub profile: Profile,
    /// How each side's forward was chosen (cues, disagreements).
    pub notes: Vec<String>,
}

/// [`suggest`] with clips and forward overrides.
pub fn suggest_with(src: &RigInput, tgt: &RigInput) -> Suggested {
    let (source, source_file) = (src.skeleton, src.file);
    let (target, target_file) = (tgt.skeleton, tgt.file);
    let mut s = find_side(source, source_file, src.clips, src.forward);
    let mut t = find_side(target, target_file, tgt.clips, tgt.forward);
    let notes = vec![
        format!("source {}", s.facing_note),
        format!("target {}", t.facing_note),
    ];
    add_name_matches(source, &mut s, target, &mut t);
    // Both sides keep feet outside the legs (IK controls): transfer the
    // foot's own motion instead of attaching it to the shin.
    let is_foot = |c: &ChainSpec| c.role == Role::FootL || c.role == Role::FootR;
    let src_ik: Vec<String> = s
        .spec
        .chains
        .iter()
        .filter(|c| is_foot(c) && ik_foot(source, c))
        .map(|c| c.name.clone())
        .collect();
    for c in t
        .spec
        .chains
        .iter_mut()
        .filter(|c| src_ik.contains(&c.name))
    {
        c.follow = None;
    }
    let same_rig = source.identity() == target.identity();
    let maps = s
        .spec
        .chains
        .iter()
        .filter_map(|c| Some((c, t.spec.chains.iter().find(|tc| tc.name == c.name)?)))
        .map(|(c, tc)| ChainMap {
            source: c.name.clone(),
            target: c.name.clone(),
            // Bone for bone when the chains have as many joints (an
            // interpolated elbow at 48% of a Knight arm would take a tenth
            // of CMU's upper-arm delta: 0.1 arm lengths off at the hand);
            // by normalized length otherwise (spines of 3 and 5).
            rotation: if chain_len(source, c) == chain_len(target, tc) {
                RotationMode::OneToOne
            } else {
                RotationMode::Interpolated
            },
            // Limbs keep bone lengths (IK and skinning depend on them);
            // everything else carries any translation animation it has,
            // as does a foot that is an IK control on both sides.
            // A rig onto itself carries every channel as authored (PAB's
            // mocap animates thigh translations: bone lengths kept would
            // move its hips 6 cm).
            translation: if same_rig {
                TranslationMode::Absolute
            } else if c.role.is_arm()
                || c.role.is_leg()
                || (is_foot(c) && !src_ik.contains(&c.name))
            {
                TranslationMode::None
            } else {
                TranslationMode::GloballyScaled
            },
        })
        .collect();
    pose_overrides(source, &mut s, &t);
    for (f, skel) in [(&mut s, source), (&mut t, target)] {
        f.spec.rest_kind = Some(
            f.arm_deg[0]
                .or(f.arm_deg[1])
                .map_or("unknown", pose_kind)
                .to_string(),
        );
        let _ = skel;
    }
    let pair = |a: usize, b: usize| JointPair {
        source: source.name(a).into(),
        target: target.name(b).into(),
    };
    let contacts = contact_joints(source, &s, target, &t);
    let twists = twist_specs(source, &s, target, &t);
    let profile = Profile {
        name: format!("{} -> {}", stem(source_file), stem(target_file)),
        version: PROFILE_VERSION,
        maps,
        root: RootSpec {
            pelvis: Some(pair(s.pelvis, t.pelvis)),
            motion_root: s.motion_root.zip(t.motion_root).map(|(a, b)| pair(a, b)),
            ..RootSpec::default()
        },
        twists,
        contacts: ContactSpec {
            joints: contacts,
            ..ContactSpec::default()
        },
        pose_check: PoseCheck::default(),
        budgets: Budgets::default(),
        bake: BakeSpec::default(),
        source: s.spec,
        target: t.spec,
    };
    Suggested { profile, notes }
}

/// Joints in a chain (0 when it does not resolve).
fn chain_len(skel: &Skeleton, c: &ChainSpec) -> usize {
    skel.find_by_name(&c.start)
        .zip(skel.find_by_name(&c.end))
        .and_then(|(a, b)| path_down(skel, a, b))
        .map_or(0, |p| p.len())
}

/// A foot chain whose joint is not below the leg's shin: an IK control.
fn ik_foot(skel: &Skeleton, c: &ChainSpec) -> bool {
    let Some(f) = skel.find_by_name(&c.start) else {
        return false;
    };
    foot_side(c.role)
        .and_then(|side| find(skel, Part::Calf, side))
        .is_some_and(|k| !is_ancestor_or_self(skel, k, f))
}

fn foot_side(role: Role) -> Option<NSide> {
    match role {
        Role::FootL => Some(NSide::Left),
        Role::FootR => Some(NSide::Right),
        _ => None,
    }
}

fn stem(path: &str) -> &str {
    let f = path.rsplit(['/', '\\']).next().unwrap_or(path);
    f.split('.')
        .next()
        .filter(|s| !s.is_empty())
        .unwrap_or("skeleton")
}

/// Joints left over on both sides with the same normalized name become
/// one-joint chains, so an identical rig maps every joint. A match must
/// hang off the same chain on both sides (its nearest chain-covered
/// ancestor): the hierarchy wins over a name, so a rig whose left hand
/// carries a joint named `Thumb.R` (the Quaternius Knight) maps it to the
/// source's left thumb, never across the body.
fn add_name_matches(source: &Skeleton, s: &mut Found, target: &Skeleton, t: &mut Found) {
    // Per joint: the chain covering it (its name), or "" for the pelvis
    // and motion root, or None.
    let owners = |skel: &Skeleton, f: &Found| -> Vec<Option<String>> {
        let mut c = vec![None; skel.joint_count()];
        for ch in &f.spec.chains {
            if let (Some(a), Some(b)) = (skel.find_by_name(&ch.start), skel.find_by_name(&ch.end)) {
                for j in path_down(skel, a, b).unwrap_or_default() {
                    c[j] = Some(ch.name.clone());
                }
            }
        }
        c[f.pelvis] = Some(String::new());
        if let Some(m) = f.motion_root {
            c[m] = Some(String::new());
        }
        c
    };
    let anchor = |skel: &Skeleton, own: &[Option<String>], j: usize| -> Option<String> {
        let mut a = skel.parent(j);
        while let Some(p) = a {
            if let Some(name) = &own[p] {
                return Some(name.clone());
            }
            a = skel.parent(p);
        }
        None
    };
    let (os, ot) = (owners(source, s), owners(target, t));
    let mut used = vec![false; source.joint_count()];
    for k in (0..target.joint_count()).filter(|&k| ot[k].is_none()) {
        let tn = parse(target.name(k));
        let at = anchor(target, &ot, k);
        let free = |j: usize| os[j].is_none() && !used[j] && anchor(source, &os, j) == at;
        let mirrored = match tn.side {
            NSide::Left => NSide::Right,
            NSide::Right => NSide::Left,
            NSide::Center => NSide::Center,
        };
        // Generic names (`node7`, `joint3`) say nothing about the joint.
        let same = |j: usize, side: NSide| {
            let n = parse(source.name(j));
            n.base == tn.base && n.part == tn.part && n.side == side && !is_generic(&n.base)
        };
        let hit = (0..source.joint_count())
            .find(|&j| free(j) && same(j, tn.side))
            .or_else(|| (0..source.joint_count()).find(|&j| free(j) && same(j, mirrored)));
        if let Some(j) = hit {
            used[j] = true;
            let name = format!("match_{}", target.name(k));
            s.spec.chains.push(chain(&name, Role::Custom, source, j, j));
            t.spec.chains.push(chain(&name, Role::Custom, target, k, k));
        }
    }
}

/// Align the source retarget pose to the target's limbs: each upper-arm,
/// forearm, thigh and shin whose direction differs by more than 2 degrees
/// (an A-pose source, CMU's splayed BVH zero pose) is turned, parent first,
/// in component space onto the target's direction.
fn pose_overrides(source: &Skeleton, s: &mut Found, t: &Found) {
    let (Ok(bs), Ok(bt)) = (
        crate::basis::basis(&s.spec.up, &s.spec.forward),
        crate::basis::basis(&t.spec.up, &t.spec.forward),
    ) else {
        return;
    };
    let tfk = PoseFk::new(t.skel_ref, t.skel_ref.rest_pose().to_vec());
    let mut local = source.rest_pose().to_vec();
    // The spine first: a rest that leans (PAB's MotionBuilder rest, 17 deg
    // off CMU's upright one) would otherwise add its lean to every frame,
    // and the arms, aligned in component space, would still read as
    // another A-pose against each side's own spine (43 vs 26 deg).
    let spine = |f: &Found, skel: &Skeleton| -> Option<(usize, usize)> {
        let c = f.spec.chains.iter().find(|c| c.role == Role::Spine)?;
        let start = skel.find_by_name(&c.start)?;
        let top =
            find(skel, Part::Neck, NSide::Center).or(find(skel, Part::Head, NSide::Center))?;
        is_ancestor_or_self(skel, start, top).then_some((start, top))
    };
    if let (Some((a, b)), Some((ta, tb))) = (spine(s, source), spine(t, t.skel_ref)) {
        turn_onto(
            source,
            s,
            &mut local,
            (bs, bt),
            (a, b),
            tfk.position(tb) - tfk.position(ta),
        );
    }
    let bones = [
        (Part::UpperArm, Part::ForeArm),
        (Part::ForeArm, Part::Hand),
        (Part::Thigh, Part::Calf),
        (Part::Calf, Part::Foot),
    ];
    for side in [NSide::Left, NSide::Right] {
        for (from, to) in bones {
            let get = |f: &Found, p: Part| {
                f.parts
                    .iter()
                    .find(|(k, _)| *k == (p, side))
                    .map(|(_, j)| *j)
            };
            // A target limb without its middle joint (the barbarian's
            // `bras` -> `main`, `jambe` -> `pied`, the Quaternius
            // Skeleton's `L.UpperLeg` -> `L.DownLeg`, whose `L.DownLeg.001`
            // is an arm): its one bone runs to the limb's end, which the
            // source's upper bone then takes. A middle joint counts only
            // below its upper one.
            let (upper, end) = match from {
                Part::UpperArm | Part::ForeArm => (Part::UpperArm, Part::Hand),
                _ => (Part::Thigh, Part::Foot),
            };
            let middle = |p: Part| {
                let j = get(t, p)?;
                if matches!(p, Part::ForeArm | Part::Calf) {
                    let u = get(t, upper)?;
                    (u != j && is_ancestor_or_self(t.skel_ref, u, j)).then_some(j)
                } else {
                    Some(j)
                }
            };
            let tb = if matches!(to, Part::ForeArm | Part::Calf) {
                middle(to).or_else(|| get(t, end))
            } else {
                get(t, to)
            };
            let (Some(a), Some(b), Some(ta), Some(tb)) =
                (get(s, from), get(s, to), middle(from), tb)
            else {
                continue;
            };
            turn_onto(
                source,
                s,
                &mut local,
                (bs, bt),
                (a, b),
                tfk.position(tb) - tfk.position(ta),
            );
        }
    }
}

/// Turn source joint `a` (in `local`, recorded as an override) so that the
/// direction from `a` to its descendant `b` matches the target direction
/// `to` (target component space), when they differ by more than 2 degrees.
fn turn_onto(
    source: &Skeleton,
    s: &mut Found,
    local: &mut [ludus_anim_runtime::Transform],
    (bs, bt): (Quat, Quat),
    (a, b): (usize, usize),
    to: Vec3,
) {
    let fk = PoseFk::new(source, local.to_vec());
    let (Some(d_s), Some(d_t)) = (
        (bs * (fk.position(b) - fk.position(a))).try_normalize(),
        (bt * to).try_normalize(),
    ) else {
        return;
    };
    if d_s.dot(d_t).clamp(-1.0, 1.0).acos().to_degrees() <= 2.0 {
        return;
    }
    let comp = bs.conjugate() * Quat::from_rotation_arc(d_s, d_t) * bs;
    let mut f2 = fk;
    f2.set_global_rotation(source, a, comp * f2.rot[a]);
    local[a].rotation = f2.local[a].rotation;
    let (z, y, x) = comp.to_euler(EulerRot::ZYX);
    s.spec.pose.overrides.push(PoseOverride {
        joint: source.name(a).into(),
        rotation: None,
        rotate_deg: Some([x, y, z].map(|v| (v.to_degrees() * 1000.0).round() / 1000.0)),
    });
}

fn contact_joints(source: &Skeleton, s: &Found, target: &Skeleton, t: &Found) -> Vec<ContactJoint> {
    let get = |f: &Found, p: Part, side: NSide| {
        f.parts
            .iter()
            .find(|(k, _)| *k == (p, side))
            .map(|(_, j)| *j)
    };
    let mut out = Vec::new();
    for side in [NSide::Left, NSide::Right] {
        let (Some(sf), Some(tf)) = (get(s, Part::Foot, side), get(t, Part::Foot, side)) else {
            continue;
        };
        // Two-bone IK plants a foot: a target leg without a knee (foot
        // straight under the thigh) has none, and is not planted.
        if target
            .parent(tf)
            .is_some_and(|p| Some(p) == get(t, Part::Thigh, side))
        {
            continue;
        }
        out.push(ContactJoint {
            source: source.name(sf).into(),
            target: target.name(tf).into(),
            upper: get(t, Part::Thigh, side).map(|j| target.name(j).to_string()),
            mid: get(t, Part::Calf, side).map(|j| target.name(j).to_string()),
        });
    }
    out
}

/// Target twist joints under a forearm take the source hand's twist, under
/// an upper arm the forearm's, evenly weighted along the bone.
fn twist_specs(source: &Skeleton, s: &Found, target: &Skeleton, t: &Found) -> Vec<TwistSpec> {
    let get = |f: &Found, p: Part, side: NSide| {
        f.parts
            .iter()
            .find(|(k, _)| *k == (p, side))
            .map(|(_, j)| *j)
    };
    let mut out = Vec::new();
    for side in [NSide::Left, NSide::Right] {
        for (bone, driver) in [(Part::ForeArm, Part::Hand), (Part::UpperArm, Part::ForeArm)] {
            let (Some(tb), Some(sd)) = (get(t, bone, side), get(s, driver, side)) else {
                continue;
            };
            let twists: Vec<usize> = (0..target.joint_count())
                .filter(|&k| {
                    target.parent(k) == Some(tb) && parse(target.name(k)).part == Part::Twist
                })
                .collect();
            let n = twists.len() as f32;
            if twists.is_empty() {
                continue;
            }
            out.push(TwistSpec {
                source: source.name(sd).into(),
                targets: twists
                    .iter()
                    .enumerate()
                    .map(|(i, &k)| TwistTarget {
                        joint: target.name(k).into(),
                        weight: (i as f32 + 1.0) / (n + 1.0),
                    })
                    .collect(),
            });
        }
    }
    out
}
