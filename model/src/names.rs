//! Joint-name normalization: namespace prefixes,
//! side conventions (`Left`, `L_`, `_l`, `.L`, ` L`, `L `) and synonyms
//! across Mixamo, the Unreal mannequin, Blender Rigify-ish, MakeHuman,
//! CMU/MotionBuilder BVH, 3ds Max Biped, Hip/Knee/Ankle and
//! Collar/Shoulder/Elbow/Wrist rigs, Quaternius rigs, and French names
//! (`jambe gauche`, `épaule_d`, `tête`: side words and body-part words
//! are looked up after folding accents to ASCII). Animation
//! controls (`*Ctrl`, `*IK`, `Pole*`, `*Target`) are never body parts:
//! the deforming joint of the same name is the one to drive.
//!
//! Read by the retargeter's mapping suggestions and by the unit check
//! (is this rig a humanoid, how tall is it).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Center,
    Left,
    Right,
}

/// Body parts the suggester looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    Spine,
    Neck,
    Head,
    Clavicle,
    UpperArm,
    ForeArm,
    Hand,
    Thigh,
    Calf,
    Foot,
    Toe,
    Twist,
    Other,
}

/// A normalized name: side, lowercase alphanumeric base without the side
/// marker, and the recognized part.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Name {
    pub side: Side,
    pub base: String,
    pub part: Part,
}

const PREFIXES: [&str; 6] = [
    "mixamorig",
    "bip01",
    "def-",
    "org-",
    "cc_base_",
    "character1_",
];

fn strip_namespace(name: &str) -> &str {
    let n = name.rsplit([':', '|']).next().unwrap_or(name);
    let lower = n.to_ascii_lowercase();
    for p in PREFIXES {
        if lower.starts_with(p) && n.len() > p.len() {
            return n[p.len()..].trim_start_matches(['_', ' ', '-']);
        }
    }
    n
}

/// Side words of other languages, as whole words of a name (French:
/// `gauche`, `droite`/`droit`, `g`/`d` after a separator).
const SIDE_WORDS: [(&str, Side); 5] = [
    ("gauche", Side::Left),
    ("droite", Side::Right),
    ("droit", Side::Right),
    ("g", Side::Left),
    ("d", Side::Right),
];

/// `n` (lowercase) with a whole side word removed: `jambe gauche` ->
/// (Left, `jambe`), `pied_droit.001` -> (Right, `pied.001`). A one-letter
/// word counts only after the first word (`d` alone is no name).
fn side_word(lower: &str) -> Option<(Side, String)> {
    let words: Vec<&str> = lower.split([' ', '_', '.', '-']).collect();
    for (i, w) in words.iter().enumerate() {
        for (word, side) in SIDE_WORDS {
            if *w == word && (word.len() > 1 || i > 0) && words.len() > 1 {
                let rest: Vec<&str> = words
                    .iter()
                    .enumerate()
                    .filter(|&(k, _)| k != i)
                    .map(|(_, w)| *w)
                    .collect();
                return Some((side, rest.join(".")));
            }
        }
    }
    None
}

/// Accented Latin letters folded to ASCII (`tête` -> `tete`, `épaule` ->
/// `epaule`), so non-English names keep their letters in the ASCII base.
fn fold_accents(n: &str) -> String {
    n.chars()
        .map(|c| match c {
            'à' | 'á' | 'â' | 'ä' | 'ã' => 'a',
            'À' | 'Á' | 'Â' | 'Ä' | 'Ã' => 'A',
            'é' | 'è' | 'ê' | 'ë' => 'e',
            'É' | 'È' | 'Ê' | 'Ë' => 'E',
            'î' | 'ï' | 'í' | 'ì' => 'i',
            'Î' | 'Ï' | 'Í' | 'Ì' => 'I',
            'ô' | 'ö' | 'ó' | 'ò' | 'õ' => 'o',
            'Ô' | 'Ö' | 'Ó' | 'Ò' | 'Õ' => 'O',
            'ù' | 'û' | 'ü' | 'ú' => 'u',
            'Ù' | 'Û' | 'Ü' | 'Ú' => 'U',
            'ç' => 'c',
            'Ç' => 'C',
            'ñ' => 'n',
            'Ñ' => 'N',
            other => other,
        })
        .collect()
}

fn split_side(n: &str) -> (Side, String) {
    let checks: [(&str, Side, bool); 18] = [
        ("left", Side::Left, true),
        ("right", Side::Right, true),
        ("l_", Side::Left, true),
        ("r_", Side::Right, true),
        ("l ", Side::Left, true),
        ("r ", Side::Right, true),
        ("l.", Side::Left, true),
        ("r.", Side::Right, true),
        (".l", Side::Left, false),
        (".r", Side::Right, false),
        ("_l", Side::Left, false),
        ("_r", Side::Right, false),
        (" l", Side::Left, false),
        (" r", Side::Right, false),
        ("-l", Side::Left, false),
        ("-r", Side::Right, false),
        ("left", Side::Left, false),
        ("right", Side::Right, false),
    ];
    let lower = n.to_ascii_lowercase();
    if let Some(found) = side_word(&lower) {
        return found;
    }
    for (m, side, prefix) in checks {
        let rest = if prefix {
            lower.strip_prefix(m)
        } else {
            lower.strip_suffix(m)
        };
        if let Some(r) = rest.filter(|r| !r.is_empty()) {
            return (side, r.to_string());
        }
    }
    // CMU's LHipJoint / RThumb: a capital L or R before another capital.
    let b = n.as_bytes();
    if b.len() > 2 && (b[0] == b'L' || b[0] == b'R') && b[1].is_ascii_uppercase() {
        let side = if b[0] == b'L' {
            Side::Left
        } else {
            Side::Right
        };
        return (side, lower[1..].to_string());
    }
    (Side::Center, lower)
}

fn part_of(base: &str) -> Part {
    let has = |w: &[&str]| w.iter().any(|x| base.contains(x));
    let starts = |w: &[&str]| w.iter().any(|x| base.starts_with(x));
    if has(&["twist", "roll", "torsion"]) {
        return Part::Twist;
    }
    if has(&[
        "thumb",
        "index",
        "middle",
        "ring",
        "pinky",
        "finger",
        "metacarpal",
        "jaw",
        "eye",
        "tongue",
        "toe-",
        "metatarsal",
        "doigt",
        "pouce",
        "orteil",
        "machoire",
        "oeil",
        "langue",
    ]) {
        return if starts(&["toe", "metatarsal", "orteil"]) {
            Part::Toe
        } else {
            Part::Other
        };
    }
    // English, then French (`bassin` pelvis, `colonne`/`torse`/`dos`
    // spine, `cou` neck, `tete` head, `epaule`/`clavicule` clavicle,
    // `bras` upper arm, `avantbras`/`coude` forearm, `main`/`poignet`
    // hand, `cuisse`/`hanche` thigh, `jambe`/`genou`/`tibia` shin,
    // `pied`/`cheville` foot).
    let table: [(&[&str], Part); 11] = [
        (
            &[
                "hipjoint", "pelvis", "root", "hips", "bone", "bassin", "racine",
            ],
            Part::Other,
        ),
        (
            &[
                "spine",
                "abdomen",
                "torso",
                "chest",
                "lowerback",
                "back",
                "waist",
                "colonne",
                "torse",
                "dos",
                "ventre",
                "poitrine",
            ],
            Part::Spine,
        ),
        (&["neck", "cou"], Part::Neck),
        (&["head", "tete"], Part::Head),
        (
            &["shoulder", "clavicle", "collar", "epaule", "clavicule"],
            Part::Clavicle,
        ),
        (
            &["upperarm", "uparm", "arm", "humerus", "bras"],
            Part::UpperArm,
        ),
        (
            &[
                "forearm",
                "lowerarm",
                "loarm",
                "elbow",
                "avantbras",
                "coude",
            ],
            Part::ForeArm,
        ),
        (&["hand", "wrist", "palm", "main", "poignet"], Part::Hand),
        (
            &[
                "upleg", "upperleg", "thigh", "femur", "hip", "cuisse", "hanche",
            ],
            Part::Thigh,
        ),
        (
            &[
                "leg", "lowerleg", "loleg", "downleg", "calf", "shin", "knee", "jambe", "genou",
                "tibia",
            ],
            Part::Calf,
        ),
        (&["foot", "ankle", "pied", "cheville"], Part::Foot),
    ];
    // Longest matching synonym wins ("forearm" before "arm", "upleg" before "leg").
    let mut best: Option<(usize, Part)> = None;
    for (words, part) in table {
        for w in words {
            if starts(&[w]) && best.map(|(l, _)| w.len() > l).unwrap_or(true) {
                best = Some((w.len(), part));
            }
        }
    }
    if let Some((_, p)) = best {
        return p;
    }
    if starts(&["toe", "ball"]) {
        return Part::Toe;
    }
    Part::Other
}

/// An animation control rather than a deforming joint: IK targets and
/// handles, pole vectors, `*Ctrl` / `*Control` / `*Target` helpers.
pub fn is_control(base: &str) -> bool {
    let ends = [
        "ctrl", "ctl", "control", "ik", "target", "tgt", "handle", "locator",
    ];
    let starts = ["ctrl", "ik", "pole", "cnt", "target"];
    ends.iter().any(|e| base.ends_with(e))
        || starts.iter().any(|s| base.starts_with(s))
        || base.contains("pole")
}

/// A generated name that says nothing: `node7`, `joint3`, `bone12`.
pub fn is_generic(base: &str) -> bool {
    let stem = base.trim_end_matches(|c: char| c.is_ascii_digit());
    matches!(
        stem,
        "" | "node" | "joint" | "bone" | "transform" | "object"
    )
}

pub fn parse(name: &str) -> Name {
    let folded = fold_accents(name);
    let (side, rest) = split_side(strip_namespace(&folded));
    let base: String = rest
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
        .collect();
    let base = base.trim_start_matches('_').to_string();
    let part = if is_control(&base) {
        Part::Other
    } else {
        part_of(&base)
    };
    Name { side, part, base }
}

/// Every joint's name parsed in the context of its skeleton: where a rig
/// names clavicles `Collar`, its `Shoulder` is the upper arm
/// (Collar/Shoulder/Elbow/Wrist), not Mixamo's clavicle.
pub fn parse_all<'a>(names: impl Iterator<Item = &'a str>) -> Vec<Name> {
    let mut all: Vec<Name> = names.map(parse).collect();
    if all.iter().any(|n| n.base.starts_with("collar")) {
        for n in all.iter_mut().filter(|n| n.base.starts_with("shoulder")) {
            n.part = Part::UpperArm;
        }
    }
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn side_conventions_and_synonyms() {
        let cases = [
            ("mixamorig:LeftForeArm", Side::Left, Part::ForeArm),
            ("lowerarm_l", Side::Left, Part::ForeArm),
            ("upper_arm.R", Side::Right, Part::UpperArm),
            ("UpArm_L", Side::Left, Part::UpperArm),
            ("LoLeg_R", Side::Right, Part::Calf),
            ("thigh_l", Side::Left, Part::Thigh),
            ("LeftUpLeg", Side::Left, Part::Thigh),
            ("UpperLeg.L", Side::Left, Part::Thigh),
            ("L_Hand", Side::Left, Part::Hand),
            ("Foot.R", Side::Right, Part::Foot),
            ("LHipJoint", Side::Left, Part::Other),
            ("upperleg01.L", Side::Left, Part::Thigh),
            ("lowerarm_twist_01_l", Side::Left, Part::Twist),
            ("Spine1", Side::Center, Part::Spine),
            ("Head", Side::Center, Part::Head),
            ("LeftToeBase", Side::Left, Part::Toe),
            // Hip/Knee/Ankle, 3ds Max Biped, Unreal, controls.
            ("LeftHip", Side::Left, Part::Thigh),
            ("R_Knee", Side::Right, Part::Calf),
            ("L_Ankle", Side::Left, Part::Foot),
            ("Hips", Side::Center, Part::Other),
            ("Bip01 L Thigh", Side::Left, Part::Thigh),
            ("Bip01 R Calf", Side::Right, Part::Calf),
            ("Bip01 L Forearm", Side::Left, Part::ForeArm),
            ("Bip01 R Clavicle", Side::Right, Part::Clavicle),
            ("ball_l", Side::Left, Part::Toe),
            ("LeftFootCtrl", Side::Left, Part::Other),
            ("LeftKneeCtrl", Side::Left, Part::Other),
            ("L_Leg_IK", Side::Left, Part::Other),
            ("PoleKnee.L", Side::Left, Part::Other),
            ("foot_target.R", Side::Right, Part::Other),
            // French (the ufbx Blender barbarian's names and others).
            ("jambe gauche", Side::Left, Part::Calf),
            ("pied droit", Side::Right, Part::Foot),
            ("pied droit.001", Side::Right, Part::Foot),
            ("main droite", Side::Right, Part::Hand),
            ("bras gauche", Side::Left, Part::UpperArm),
            ("tête", Side::Center, Part::Head),
            ("bassin", Side::Center, Part::Other),
            ("torse", Side::Center, Part::Spine),
            ("épaule_g", Side::Left, Part::Clavicle),
            ("avant-bras.D", Side::Right, Part::ForeArm),
            ("coude_droit", Side::Right, Part::ForeArm),
            ("poignet gauche", Side::Left, Part::Hand),
            ("hanche.G", Side::Left, Part::Thigh),
            ("cuisse droite", Side::Right, Part::Thigh),
            ("genou_gauche", Side::Left, Part::Calf),
            ("cheville droite", Side::Right, Part::Foot),
            ("orteil_gauche", Side::Left, Part::Toe),
            ("cou", Side::Center, Part::Neck),
            ("colonne_01", Side::Center, Part::Spine),
            ("pouce_droit_01", Side::Right, Part::Other),
            ("avant-bras torsion gauche", Side::Left, Part::Twist),
            // Quaternius Skeleton: UpperLeg / DownLeg.
            ("L.DownLeg", Side::Left, Part::Calf),
        ];
        for (n, side, part) in cases {
            let p = parse(n);
            assert_eq!((p.side, p.part), (side, part), "{n}: {p:?}");
        }
    }

    #[test]
    fn collar_makes_shoulder_the_upper_arm() {
        let with = parse_all(["LeftCollar", "LeftShoulder", "LeftElbow", "LeftWrist"].into_iter());
        let parts: Vec<Part> = with.iter().map(|n| n.part).collect();
        assert_eq!(
            parts,
            [Part::Clavicle, Part::UpperArm, Part::ForeArm, Part::Hand]
        );
        let mixamo = parse_all(["LeftShoulder", "LeftArm"].into_iter());
        assert_eq!(mixamo[0].part, Part::Clavicle);
        assert_eq!(mixamo[1].part, Part::UpperArm);
    }
}
