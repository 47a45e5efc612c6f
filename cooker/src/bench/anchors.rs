//! The anchor clips of the decode comparison with ACL
//! (`../shared/anchors/acl-side-by-side`). Their decode figures against
//! ACL come only from a run of both side by side; none is stored here.

/// The anchor clips ACL's decode was run on: ACL's clip name, the label
/// of its row in `acl.md`'s side-by-side table, the label in its
/// whole-pose paragraph.
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
