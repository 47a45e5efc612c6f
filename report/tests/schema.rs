//! The schemas in `schemas/` describe exactly what these types write: a
//! fully populated value and a minimal one (every optional field absent)
//! of each output conform, so a field added to a type without the schema
//! (or a required field dropped) fails here.

use ludus_anim_report::*;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

fn schema(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../schemas")
        .join(name);
    serde_json::from_slice(&std::fs::read(path).expect("schema readable")).expect("schema parses")
}

fn clip(full: bool) -> ClipReport {
    ClipReport {
        name: "walk".into(),
        profile: "standard".into(),
        joints: 3,
        samples: 31,
        sample_rate_hz: 30.0,
        duration_s: 1.0,
        loop_mode: "loop".into(),
        loop_seam_error_m: full.then_some(0.0001),
        root_motion: full.then(|| RootMotionReport {
            policy: "planar".into(),
            joint: "Root".into(),
            drift_100_loops_m: Some(0.002),
        }),
        additive_reference: full.then(|| "rest pose".into()),
        events: 1,
        markers: 2,
        codec: "vbr".into(),
        codec_version: 2,
        raw_bytes: 3720,
        compressed_bytes: 400,
        ratio: 9.3,
        resample_error_m: 0.00001,
        max_error_m: 0.00009,
        p99_error_m: 0.00008,
        max_rotation_error_deg: 0.01,
        source_error_m: 0.00009,
        end_to_end: full.then(|| EndToEnd {
            error_m: 0.00009,
            joint: "Hand".into(),
            threshold_m: 0.0001,
            within: true,
            cause: None,
        }),
        velocity: full.then(|| VelocityReport {
            max_error_mps: 0.004,
            joint: "Hand".into(),
            time_s: 0.25,
            threshold_mps: 0.01,
            within: true,
            intervals: 30,
        }),
        bounds: full.then(|| BoundsReport {
            points: "skinned_vertices".into(),
            min: [-0.5, 0.0, -0.4],
            max: [0.5, 1.8, 0.4],
            center: [0.0, 0.9, 0.0],
            radius: 1.0,
            checked_times: 61,
            points_per_time: 240,
            joint_radius_m: Some(0.05),
            applied_on: Some("rest pose, weights [0.0, 0.5, 1.0]".into()),
        }),
        sockets: if full {
            vec![SocketError {
                socket: "grip".into(),
                joint: "Hand".into(),
                max_error_m: 0.00004,
                worst_time_s: 0.5,
            }]
        } else {
            Vec::new()
        },
        threshold_m: 0.0001,
        worst_joint: "Hand".into(),
        worst_time_s: 0.5,
        times_checked: 62,
        checks: full.then(|| TimeChecks {
            codec: TimeCounts {
                samples: 31,
                interior: 90,
                seam: 3,
                keys: 0,
                random: 64,
                refined: 96,
            },
            source: TimeCounts::default(),
            f32_floor_m: 1e-7,
            contract: "curves".into(),
        }),
        selected_joints: vec![JointError {
            joint: "Hand".into(),
            max_error_m: 0.00009,
            threshold_m: 0.0001,
        }],
        curves: CurvesReport {
            count: 1,
            max_error: BTreeMap::from([("grasp".to_string(), 0.0001)]),
        },
        compress_ms: 1.5,
        decode_ns_per_pose: 300.0,
        warnings: if full {
            vec!["a warning".into()]
        } else {
            vec![]
        },
        retarget: full.then(|| RetargetReport {
            profile: "cmu -> knight".into(),
            profile_path: "profiles/cmu_to_knight.toml".into(),
            profile_hash: "22".repeat(32),
            target: "knight.glb".into(),
            target_identity: "cd".repeat(16),
            metrics: serde_json::json!({"clip": "walk", "frames": 31}),
        }),
        sync: if full {
            vec![ludus_anim_report::sync::ClipSync {
                group: "locomotion".into(),
                intervals_s: vec![Some(0.6), None],
            }]
        } else {
            vec![]
        },
    }
}

fn asset(full: bool) -> AssetReport {
    AssetReport {
        source: "walk.glb".into(),
        source_hash: "00".repeat(32),
        format: "glb".into(),
        status: if full {
            AssetStatus::Ok
        } else {
            AssetStatus::Failed
        },
        diagnostics: vec![ReportDiagnostic {
            severity: Severity::Warning,
            code: "units".into(),
            message: "m".into(),
            file: full.then(|| "walk.glb".into()),
            clip: full.then(|| "walk".into()),
            joint: full.then(|| "Hand".into()),
            time_s: full.then_some(0.25),
        }],
        decisions: vec![Decision {
            kind: "units".into(),
            detail: "meters".into(),
        }],
        package: full.then(|| "packages/walk-0011223344556677.ludanim".into()),
        package_bytes: 1000,
        skeleton: full.then(|| SkeletonReport {
            joints: 3,
            identity: "ab".repeat(16),
            unit_scale_m: 1.0,
            source_axes: "+Y up".into(),
            name: Some("hero".into()),
            skins: vec![ludus_anim_report::SkinReport {
                name: "body".into(),
                vertices: 100,
                joints: 3,
                residual_mm: Some(0.0001),
                threshold_mm: 0.01,
                max_weight_sum_error: 0.0,
                unweighted_vertices: 0,
            }],
        }),
        clips: if full {
            vec![clip(true), clip(false)]
        } else {
            vec![]
        },
        joint_sets: full.then(joint_sets),
    }
}

fn joint_sets() -> ludus_anim_report::joint_sets::JointSetsReport {
    use ludus_anim_report::joint_sets::*;
    let cost = DecodeCost {
        clips: 1,
        tracks_decoded: 4,
        bytes_touched_per_pose: Some(120.5),
    };
    JointSetsReport {
        file: "rig.joints.toml".into(),
        joints: 3,
        whole_pose: cost.clone(),
        masks: vec![MaskReport {
            name: "upper".into(),
            joints_weighted: 1,
            joints_sampled: 2,
            ranges: vec![[1, 2]],
            cost: cost.clone(),
            poses_verified: 10,
        }],
        lods: vec![LodReport {
            level: 0,
            joints_retained: 2,
            pinned: vec!["root".into()],
            cost,
            poses_verified: 10,
            skins: vec![LodSkinReport {
                name: "body".into(),
                remapped_entries: 1,
                bind_displacement_mm: Some(0.0),
                clip_displacement_mm: None,
                worst_clip: None,
                worst_time_s: None,
            }],
        }],
    }
}

fn shard() -> ShardInfo {
    ShardInfo {
        index: 2,
        count: 3,
        jobs: vec!["walk.glb".into(), "run.glb".into()],
        source_hashes: vec!["ab".repeat(32), String::new()],
        stage_versions: vec!["import:4".into(), "package:8".into()],
        costs: vec![1200, 300],
        assignment: vec![1, 2],
    }
}

fn report() -> Report {
    let mut r = Report {
        cooker_version: "ludus-anim 0.1.0".into(),
        build: Some(BuildInfo {
            version: "0.1.0".into(),
            revision: "0123456789ab".into(),
        }),
        profile: "standard".into(),
        assets: vec![asset(true), asset(false)],
        totals: Totals::default(),
        stages: BTreeMap::from([(
            "import".to_string(),
            StageStats {
                hits: 1,
                misses: 2,
                ms: 3.0,
                rejected: 1,
            },
        )]),
        cache_notices: vec!["healed".into()],
        remote: Some(RemoteReport {
            url: "http://cache:8080/ludus".into(),
            mode: "read".into(),
            disabled: false,
            pending_uploads: 0,
            stages: BTreeMap::from([(
                "package".to_string(),
                RemoteStageStats {
                    hits: 2,
                    bytes_down: 4000,
                    ..Default::default()
                },
            )]),
        }),
        shard: Some(shard()),
        sync_groups: vec![ludus_anim_report::sync::SyncGroupReport {
            name: "locomotion".into(),
            markers: vec!["left_foot_down".into(), "right_foot_down".into()],
            clips: vec!["walk.glb:walk".into(), "run.glb:run".into()],
            rate_min: 0.5,
            rate_max: 2.0,
            max_rate: 2.0,
        }],
    };
    r.compute_totals(12.0, 20.0);
    r
}

#[test]
fn report_types_conform_to_the_report_schema() {
    let v = serde_json::to_value(report()).unwrap();
    let errors = schema::validate(&schema("report.schema.json"), &v);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let minimal = Report {
        remote: None,
        shard: None,
        build: None,
        ..report()
    };
    let v = serde_json::to_value(minimal).unwrap();
    assert!(v.get("remote").is_none() && v.get("shard").is_none());
    let errors = schema::validate(&schema("report.schema.json"), &v);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn manifest_types_conform_to_the_manifest_schema() {
    let m = PackageManifest {
        cooker_version: "ludus-anim 0.1.0".into(),
        package_format_version: 2,
        assets: vec![ManifestAsset {
            source: "walk.glb".into(),
            source_hash: "00".repeat(32),
            package: "packages/walk-0011223344556677.ludanim".into(),
            package_hash: "11".repeat(32),
            package_bytes: 1000,
            skeleton_identity: "ab".repeat(16),
            joints: 3,
            clips: vec![ManifestClip {
                name: "walk".into(),
                codec: "vbr".into(),
                codec_version: 2,
                profile: "standard".into(),
                duration_s: 1.0,
                samples: 31,
                sample_rate_hz: 30.0,
                loop_mode: "loop".into(),
            }],
        }],
        shard: Some(shard()),
    };
    let v = serde_json::to_value(&m).unwrap();
    let errors = schema::validate(&schema("package-manifest.schema.json"), &v);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    let m = PackageManifest { shard: None, ..m };
    let v = serde_json::to_value(m).unwrap();
    let errors = schema::validate(&schema("package-manifest.schema.json"), &v);
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
fn the_checker_catches_what_it_claims_to() {
    let s = schema("report.schema.json");
    let mut v = serde_json::to_value(report()).unwrap();
    v["assets"][0]["clips"][0]["not_a_field"] = 1.into();
    v["assets"][0]["status"] = "maybe".into();
    v.as_object_mut().unwrap().remove("totals");
    let errors = schema::validate(&s, &v).join("\n");
    assert!(errors.contains("not_a_field"), "{errors}");
    assert!(errors.contains("maybe"), "{errors}");
    assert!(errors.contains("missing required 'totals'"), "{errors}");
}

#[test]
fn totals_add_up() {
    let r = report();
    assert_eq!(r.totals.assets, 2);
    assert_eq!(r.totals.assets_failed, 1);
    assert_eq!(r.totals.clips, 2);
    assert_eq!(r.totals.raw_bytes, 7440);
    assert_eq!(r.totals.compressed_bytes, 800);
    assert_eq!(
        r.totals.warnings, 2,
        "warning diagnostics (clip warnings are among them)"
    );
}

fn sidecar(full: bool) -> sidecar::Sidecar {
    use ludus_anim_report::packed::Packed;
    use ludus_anim_report::sidecar::*;
    let mut c = ClipSidecar::new("walk.glb", "walk", "standard", 1.0);
    let names = vec!["Root".to_string(), "Foot".to_string()];
    c.set_joints(&names, &[None, Some(0)], &[1e-4, 5e-5]);
    c.set_errors(&[0.0, 0.5, 1.0], &[0.0; 6]).unwrap();
    if full {
        c.bit_rates = Some(BitRates {
            segment_starts: vec![0, 16],
            samples: 31,
            bits: Packed(vec![BITS_DEFAULT; 12]),
        });
        c.root_motion = Some(TrajectorySidecar {
            joint: "Root".into(),
            policy: "planar".into(),
            rate_hz: 30.0,
            x_m: Packed(vec![0.0, 1.0]),
            z_m: Packed(vec![0.0, 0.0]),
            yaw_rad: Packed(vec![0.0, 0.1]),
            drift_100_loops_m: Some(1e-6),
        });
        c.events = vec![EventMark {
            name: "step".into(),
            time_s: 0.5,
            kind: "sync-marker".into(),
        }];
        c.retarget = Some(RetargetSidecar {
            profile: "biped".into(),
            rate_hz: 30.0,
            axes: None,
            feet: vec![FootTrack {
                joint: "Foot".into(),
                height_m: Packed(vec![0.0]),
                speed_mps: Packed(vec![0.0]),
                contacts: vec![TimeSpan {
                    start_s: 0.0,
                    end_s: 0.5,
                }],
                skates: vec![Skate {
                    start_s: 0.1,
                    end_s: 0.2,
                    slide_m: 0.01,
                }],
            }],
        });
        let pts = [
            [0.0, 1.0, 0.0],
            [0.1, 0.5, 0.2],
            [0.0, 1.1, 0.0],
            [0.1, 0.4, 0.3],
        ];
        c.poses = Some(Poses::quantize(30.0, 2, &pts));
        c.source_poses = Some(SourcePoses {
            joints: names.clone(),
            parents: vec![-1, 0],
            poses: Poses::quantize(30.0, 2, &pts),
        });
        c.poses_left_out = false;
    }
    c.check().unwrap();
    let mut s = Sidecar::new("ludus-anim 0.1.0");
    s.clips.push(c);
    s
}

#[test]
fn sidecar_types_conform_to_the_sidecar_schema() {
    for full in [true, false] {
        let v = serde_json::to_value(sidecar(full)).unwrap();
        let errors = schema::validate(&schema("report-sidecar.schema.json"), &v);
        assert!(errors.is_empty(), "full={full}: {}", errors.join("\n"));
        let back = sidecar::Sidecar::from_json(&serde_json::to_vec(&v).unwrap()).unwrap();
        assert_eq!(back, sidecar(full));
    }
}
