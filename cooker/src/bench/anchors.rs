//! ACL's decode figures from the anchors' `acl.md`: the side-by-side
//! table (whole pose, one joint middle / last) and, for clips it does not
//! list, the whole-pose figures of the "Decompression of a whole pose"
//! paragraph. Both were measured with ACL's `acl_decompressor` on a
//! machine of this kind (2 vCPU).

use serde::Serialize;
use std::collections::HashMap;
use std::path::Path;

/// ACL's nanoseconds per decode for one clip.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct AclDecode {
    pub pose_ns: f64,
    pub middle_joint_ns: Option<f64>,
    pub last_joint_ns: Option<f64>,
}

/// The anchor clips with decode figures: ACL's clip name, the label of the
/// side-by-side table row, the label in the whole-pose paragraph.
pub const ANCHOR_CLIPS: [(&str, &str, &str); 6] = [
    (
        "quaternius_KnightCharacter__HumanArmature_Idle",
        "Knight Idle (31)",
        "Knight Idle (31 joints, 80 samples)",
    ),
    (
        "khronos_Fox_cm__Survey",
        "Fox Survey as cm (24)",
        "Fox Survey as cm (24 joints)",
    ),
    (
        "makehuman_zombieWalk1",
        "MakeHuman zombieWalk1 (75)",
        "MakeHuman zombieWalk1 (75 joints)",
    ),
    (
        "cmu_12_01_walk_24hz",
        "CMU 12_01 walk 24 Hz (31)",
        "CMU 12_01 walk at 24 Hz (31 joints)",
    ),
    (
        "cmu_01_01_24hz",
        "CMU 01_01 24 Hz (31)",
        "CMU 01_01 at 24 Hz",
    ),
    ("cmu_01_01", "CMU 01_01 120 Hz (31)", "CMU 01_01 at 120 Hz"),
];

/// ACL's decode figures per clip name; empty if the file is missing.
pub fn load_acl_decode(path: &Path) -> HashMap<String, AclDecode> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut out = HashMap::new();
    for (clip, row, para) in ANCHOR_CLIPS {
        if let Some(a) = table_row(&text, row).or_else(|| paragraph(&text, para)) {
            out.insert(clip.to_string(), a);
        }
    }
    out
}

/// `| label | ACL pose | ours | ACL mid / last | ours |`.
fn table_row(text: &str, label: &str) -> Option<AclDecode> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(&format!("| {label} |")))?;
    let cells: Vec<&str> = line.split('|').map(str::trim).collect();
    let pose = cells.get(2)?.parse().ok()?;
    let mut joint = cells.get(4)?.split('/').map(|x| x.trim().parse().ok());
    Some(AclDecode {
        pose_ns: pose,
        middle_joint_ns: joint.next().flatten(),
        last_joint_ns: joint.next().flatten(),
    })
}

/// `label NNN ns` in the whole-pose paragraph.
fn paragraph(text: &str, label: &str) -> Option<AclDecode> {
    let at = text.find(&format!("{label} "))? + label.len() + 1;
    let ns = text.get(at..)?.split_whitespace().next()?.parse().ok()?;
    Some(AclDecode {
        pose_ns: ns,
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_both_forms() {
        let md = "x: Knight Idle (31 joints, 80 samples) 422 ns; CMU 01_01 at 24 Hz 775 ns;\n\
                  | Knight Idle (31) | 441 | 449 | 159 / 149 | 268 / 331 |\n";
        let k = table_row(md, ANCHOR_CLIPS[0].1).unwrap();
        assert_eq!(k.pose_ns, 441.0);
        assert_eq!(k.middle_joint_ns, Some(159.0));
        assert_eq!(k.last_joint_ns, Some(149.0));
        assert_eq!(paragraph(md, "CMU 01_01 at 24 Hz").unwrap().pose_ns, 775.0);
        assert!(table_row(md, "Fox").is_none());
    }
}
