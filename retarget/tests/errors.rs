//! Incompatible rigs and broken profiles fail with errors naming the chain
//! and the joint, and unknown keys get "did you mean".

mod common;
use common::*;
use ludus_anim_fixture_gen::rigs::{build, RigSpec};
use ludus_anim_retarget::{retarget, suggest, Profile, ProfileError, RetargetError, RetargetPoses};

fn pair() -> (ludus_anim_normalize::Normalized, Profile) {
    let n = norm(&build(&RigSpec::default()));
    let p = suggest(&n.skeleton, "a.glb", &n.skeleton, "b.glb");
    (n, p)
}

fn fail(p: &Profile) -> RetargetError {
    let (n, _) = pair();
    let poses = RetargetPoses::rest(&n.skeleton, &n.skeleton);
    retarget(&n.skeleton, &n.clips, &n.skeleton, p, &poses).expect_err("must fail")
}

#[test]
fn unmapped_required_chain_is_named() {
    let (_, mut p) = pair();
    p.maps.retain(|m| m.target != "arm_l");
    let e = fail(&p);
    println!("{e}");
    assert!(
        matches!(&e, RetargetError::UnmappedRequiredChain { chain, .. } if chain == "arm_l"),
        "{e}"
    );
}

#[test]
fn missing_joint_names_chain_joint_and_suggests() {
    let (_, mut p) = pair();
    let c = p
        .target
        .chains
        .iter_mut()
        .find(|c| c.name == "arm_l")
        .unwrap();
    c.end = "LeftHnad".into();
    let e = fail(&p).to_string();
    println!("{e}");
    assert!(
        e.contains("arm_l") && e.contains("LeftHnad") && e.contains("did you mean 'LeftHand'"),
        "{e}"
    );
}

#[test]
fn degenerate_chain_is_named() {
    let (_, mut p) = pair();
    let c = p
        .source
        .chains
        .iter_mut()
        .find(|c| c.name == "leg_r")
        .unwrap();
    std::mem::swap(&mut c.start, &mut c.end);
    let e = fail(&p).to_string();
    println!("{e}");
    assert!(
        e.contains("leg_r") && e.contains("RightLeg") && e.contains("not an ancestor"),
        "{e}"
    );
    let (_, mut p) = pair();
    p.target
        .chains
        .iter_mut()
        .find(|c| c.name == "arm_r")
        .unwrap()
        .end = "LeftHand".into();
    assert!(matches!(fail(&p), RetargetError::DegenerateChain { .. }));
}

#[test]
fn bad_map_twist_and_contact_are_named() {
    let (_, mut p) = pair();
    p.maps[0].source = "spin".into();
    let e = fail(&p).to_string();
    assert!(
        e.contains("spin") && e.contains("did you mean 'spine'"),
        "{e}"
    );
    let (_, mut p) = pair();
    p.twists.push(ludus_anim_retarget::profile::TwistSpec {
        source: "Root".into(),
        targets: vec![],
    });
    assert!(matches!(fail(&p), RetargetError::BadTwist { joint, .. } if joint == "Root"));
    let (_, mut p) = pair();
    p.target.identity = Some("00".repeat(16));
    assert!(fail(&p).to_string().contains("identity"));
}

#[test]
fn profile_round_trips_through_toml() {
    let (_, p) = pair();
    let mut p = p;
    p.root.vertical_scale = Some(1.1);
    p.target
        .pose
        .overrides
        .push(ludus_anim_retarget::profile::PoseOverride {
            joint: "Root".into(),
            rotation: None,
            rotate_deg: Some([0.3, -7.56, 1e-3]),
        });
    let text = p.to_toml().unwrap();
    let back = Profile::parse(&text, "suggested.toml").unwrap();
    assert_eq!(back, p);
    // f32 values print in their shortest round-trip form, not widened.
    for line in [
        "blend_s = 0.1\n",
        "min_contact_preservation = 0.9\n",
        "max_bone_length_deviation_m = 0.0001\n",
        "vertical_scale = 1.1\n",
        "rotate_deg = [0.3, -7.56, 0.001]\n",
    ] {
        assert!(text.contains(line), "{line:?} missing in:\n{text}");
    }
}

#[test]
fn unknown_keys_and_values_get_suggestions() {
    let (_, p) = pair();
    let text = p.to_toml().unwrap();
    let cases = [
        (
            "rotation = \"one_to_one\"",
            "rotaton = \"one_to_one\"",
            "did you mean `rotation`?",
        ),
        (
            "rotation = \"one_to_one\"",
            "rotation = \"one_to_on\"",
            "did you mean `one_to_one`?",
        ),
        ("[contacts]", "[contact]", "did you mean `contacts`?"),
        (
            "role = \"spine\"",
            "role = \"spin\"",
            "did you mean `spine`?",
        ),
    ];
    for (from, to, want) in cases {
        let e = Profile::parse(&text.replacen(from, to, 1), "p.toml")
            .unwrap_err()
            .to_string();
        println!("{e}");
        assert!(e.contains("p.toml") && e.contains(want), "{to}: {e}");
    }
    let e = Profile::parse(&text.replacen("version = 1", "version = 7", 1), "p.toml").unwrap_err();
    assert!(matches!(
        e,
        ProfileError::Parse { .. } | ProfileError::Invalid { .. }
    ));
    let mut bad = p.clone();
    bad.root.vertical_scale = Some(-1.0);
    let e = Profile::parse(&bad.to_toml().unwrap(), "p.toml")
        .unwrap_err()
        .to_string();
    assert!(e.contains("vertical_scale"), "{e}");
}

#[test]
fn example_profiles_parse() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../profiles/retarget");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("profiles/retarget") {
        let path = e.unwrap().path();
        if path.extension().is_some_and(|x| x == "toml") {
            let text = std::fs::read_to_string(&path).unwrap();
            Profile::parse(&text, &path.display().to_string()).unwrap();
            n += 1;
        }
    }
    assert!(n >= 2);
}
