//! `ludus-anim-retarget`: offline retargeting of normalized clips from one
//! skeleton onto another, through an explicit profile (seed: "Import
//! cooking and decompression", retarget profiles).
//!
//! Owns: the profile format ([`Profile`], TOML, unknown keys rejected with
//! "did you mean"), its validation against two skeletons (errors name the
//! chain and the joint), the retarget itself (chain rotation transfer
//! through the declared retarget poses and bases, translation policy,
//! pelvis and motion-root scaling, twist distribution unwrapped over the
//! whole clip, contact-aware planting with two-bone IK and pelvis
//! correction), quality metrics with budgets, and [`suggest()`], which
//! proposes a profile for a person to check (never applied implicitly).
//!
//! Does not own: importing, normalizing, resampling, root-motion
//! extraction or additive deltas. The output is a normalized asset's clips
//! on the target skeleton; the cooker's later stages (resample, prepare,
//! encode, verify, package) run on it unchanged, so root motion is
//! extracted and additive deltas are computed against the *target*
//! reference after the retarget: prepared deltas are never retargeted.
//!
//! Invariants: pure functions, no I/O; depends only on the model and
//! runtime crates (plus glam, serde, toml, thiserror); no panic on
//! input-derived data; deterministic (same inputs, same bits).
//!
//! Math and metric definitions: `schemas/retarget.md`.

mod annotate;
mod bake;
mod basis;
mod clip_data;
mod contacts;
pub mod error;
pub mod facing;
pub mod feet;
mod ik;
pub mod metrics;
use ludus_anim_model::names;
mod plan;
mod planting;
mod posecheck;
pub mod poses;
pub mod profile;
pub mod quality;
mod rig;
mod root;
mod setup;
mod side;
mod suggest;
pub mod suggestion;
mod topology;
mod transfer;
mod twist;

pub use annotate::annotated_toml;
pub use bake::bake_times;
pub use error::{ProfileError, RetargetError};
pub use facing::FacingMetrics;
pub use feet::{FootSeries, FootTracks};
pub use metrics::{ClipMetrics, ContactMetrics, TwistMetrics, Worst};
pub use posecheck::pose_kind;
pub use poses::RetargetPoses;
pub use profile::Profile;
pub use setup::RootScales;
pub use suggest::{rest_kind, suggest, suggest_with, RigInput, Suggested};

use ludus_anim_format::math::{rotation_angle, Quat};
use ludus_anim_model::{Decision, Diagnostic, Diagnostics, SourceClip};
use ludus_anim_runtime::Skeleton;
use rig::{sample_clip, PoseFk};
use side::Side;
use transfer::Ctx;

/// Bumped whenever the output for the same inputs can change; part of the
/// retarget stage's cache key.
pub const RETARGET_VERSION: u32 = 7;

/// The retargeted clips with their metrics.
#[derive(Clone, Debug)]
pub struct Retargeted {
    /// Clips on the target skeleton (joint indices in its order, meters,
    /// +Y up), baked LINEAR keys at [`bake_times`].
    pub clips: Vec<SourceClip>,
    pub metrics: Vec<ClipMetrics>,
    /// Per clip: the target feet at the bake rate (height, speed, contact
    /// and skate flags), for plots.
    pub feet: Vec<FootTracks>,
    /// Pose-mismatch warnings and budget breaches (errors fail the asset).
    pub diagnostics: Diagnostics,
    pub decisions: Vec<Decision>,
    /// Resolved pelvis and motion-root scales (the motion-root scale is
    /// what the target's root-motion trajectory was scaled by).
    pub scales: RootScales,
}

/// Retarget `source_clips` (normalized, on `source`) onto `target`.
pub fn retarget(
    source: &Skeleton,
    source_clips: &[SourceClip],
    target: &Skeleton,
    profile: &Profile,
    poses: &RetargetPoses,
) -> Result<Retargeted, RetargetError> {
    check_inputs(source, source_clips, target, profile, poses)?;
    let bad = |side: &'static str| move |message: String| RetargetError::BadPose { side, message };
    let s = Side::new("source", source, &profile.source, &poses.source).map_err(bad("source"))?;
    let t = Side::new("target", target, &profile.target, &poses.target).map_err(bad("target"))?;
    let setup = setup::setup(profile, &s, &t)?;
    let mut diagnostics = Diagnostics::default();
    for w in posecheck::check(profile, &s, &t, &setup.src_chains, &setup.tgt_chains)? {
        diagnostics.push(w);
    }
    let ctx = Ctx {
        setup: &setup,
        s: &s,
        t: &t,
        lift: 0.0,
    };
    let mut out = Retargeted {
        clips: Vec::with_capacity(source_clips.len()),
        metrics: Vec::with_capacity(source_clips.len()),
        feet: Vec::with_capacity(source_clips.len()),
        diagnostics,
        decisions: decisions(profile, &ctx),
        scales: setup.scales,
    };
    for clip in source_clips {
        let (baked, metrics, feet) = retarget_clip(&ctx, profile, clip);
        for d in metrics.breaches(&profile.budgets) {
            out.diagnostics.push(d);
        }
        out.clips.push(baked);
        out.metrics.push(metrics);
        out.feet.push(feet);
    }
    Ok(out)
}

fn check_inputs(
    source: &Skeleton,
    clips: &[SourceClip],
    target: &Skeleton,
    profile: &Profile,
    poses: &RetargetPoses,
) -> Result<(), RetargetError> {
    for (side, skel, pose, spec) in [
        ("source", source, &poses.source, &profile.source),
        ("target", target, &poses.target, &profile.target),
    ] {
        if pose.len() != skel.joint_count() {
            return Err(RetargetError::BadPose {
                side,
                message: format!(
                    "{} joints in the pose, {} in the skeleton",
                    pose.len(),
                    skel.joint_count()
                ),
            });
        }
        if let Some(id) = &spec.identity {
            let have = skel.identity().to_hex();
            if !id.eq_ignore_ascii_case(&have) {
                return Err(RetargetError::BadPose {
                    side,
                    message: identity_mismatch(side, skel, spec, &have, id),
                });
            }
        }
    }
    if profile.maps.is_empty() {
        return Err(RetargetError::NoMaps);
    }
    for c in clips {
        if let Some(tr) = c.tracks.iter().find(|t| t.joint >= source.joint_count()) {
            return Err(RetargetError::BadTrack {
                clip: c.name.clone(),
                joint: tr.joint,
            });
        }
    }
    Ok(())
}

/// Common length units by their size in meters, for naming a factor.
const UNITS: [(&str, f64); 6] = [
    ("mm", 0.001),
    ("cm", 0.01),
    ("dm", 0.1),
    ("in", 0.0254),
    ("ft", 0.3048),
    ("m", 1.0),
];

/// Why a skeleton's identity is not the profile's. The same rig read in
/// other units has another identity and another size: a size off by the
/// ratio of two common units is named a units mismatch with the factor
/// and the unit pairs it fits; another large size change gives the
/// factor too; otherwise the rig changed.
fn identity_mismatch(
    side: &str,
    skel: &Skeleton,
    spec: &profile::SideSpec,
    have: &str,
    id: &str,
) -> String {
    let ids = format!("skeleton identity {have}, the profile's {id}");
    let changed = || format!("the rig changed: re-check the profile ({ids})");
    let Some(was) = spec.size_m.filter(|s| s.is_finite() && *s > 0.0) else {
        return changed();
    };
    let now = rig::rest_size_m(skel);
    if !(now.is_finite() && now > 0.0) {
        return changed();
    }
    let ratio = f64::from(now) / f64::from(was);
    let factor = if ratio >= 1.0 {
        format!("{}x larger", short(ratio))
    } else {
        format!("{}x smaller", short(1.0 / ratio))
    };
    let sizes = format!("{now:.4} m across now, {was:.4} m then");
    let fix = format!(
        "read the file in the units the profile was suggested with (the asset's `units` / \
         `cook --units` for the source), or re-run `retarget suggest` with the \
         --{side}-units the cook uses ({ids})"
    );
    // Unit pairs whose ratio is within 2% of the size change (the same
    // rig in other units has the same shape: only its size changes).
    let mut pairs = Vec::new();
    for (a, ma) in UNITS {
        for (b, mb) in UNITS {
            if ma > mb
                && ((ratio / (ma / mb)).ln().abs() < 0.02 || (ratio * ma / mb).ln().abs() < 0.02)
            {
                pairs.push(format!("{b} vs {a}"));
            }
        }
    }
    if !pairs.is_empty() {
        return format!(
            "units mismatch: the {side} rig reads {factor} than when the profile was written \
             ({sizes}; likely {}): {fix}",
            pairs.join(" or ")
        );
    }
    if ratio.ln().abs() > 0.05_f64.ln_1p() {
        return format!(
            "the {side} rig reads {factor} than when the profile was written ({sizes}): \
             other units or a changed rig; {fix}"
        );
    }
    changed()
}

/// A factor as written: `100`, `2.54`, `39.37`.
fn short(f: f64) -> String {
    let s = format!("{f:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

fn decisions(profile: &Profile, ctx: &Ctx) -> Vec<Decision> {
    let (s, t, sc) = (ctx.s, ctx.t, ctx.setup.scales);
    let (ps, pt) = ctx.setup.pelvis;
    vec![Decision::new(
        "retarget",
        format!(
            "profile '{}': pelvis '{}' -> '{}', scales horizontal {:.4}, vertical {:.4}, motion root {:.4}",
            profile.name,
            s.skel.name(ps),
            t.skel.name(pt),
            sc.horizontal,
            sc.vertical,
            sc.motion_root
        ),
    )]
}

fn retarget_clip(
    ctx: &Ctx,
    profile: &Profile,
    clip: &SourceClip,
) -> (SourceClip, ClipMetrics, FootTracks) {
    let (s, t) = (ctx.s, ctx.t);
    let times = bake_times(clip, profile.bake.rate_hz);
    let mut buf = s.skel.rest_pose().to_vec();
    let src: Vec<PoseFk> = times
        .iter()
        .map(|&time| {
            sample_clip(s.skel, clip, time, &mut buf);
            PoseFk::new(s.skel, buf.clone())
        })
        .collect();
    let twist = twist_angles(ctx, &src);
    let looping = is_loop(ctx, &src);
    let mut flags = planting::source_contacts(ctx, &profile.contacts, &times, &src);
    if looping {
        // The last frame of a loop is its first: same contact state.
        for f in &mut flags {
            if let (Some(&first), Some(last)) = (f.first(), f.len().checked_sub(1)) {
                f[last] = first;
            }
        }
    }
    // Planted feet stand on the target's ground: the pelvis moves with
    // them, so that between plants the transferred feet agree with it.
    let plant = profile.contacts.plant && !onto_itself(ctx);
    let lift = if plant {
        planting::ground_lift(ctx, &planting::source_grounds(ctx, &times, &src, &flags))
    } else {
        0.0
    };
    let ctx = &Ctx { lift, ..*ctx };
    let mut tgt: Vec<PoseFk> = Vec::with_capacity(src.len());
    let short = short_limbs(ctx);
    for (f, frame) in src.iter().enumerate() {
        let mut out = t.pose.clone();
        ctx.frame(frame, &twist[f], &mut out);
        aim_short_limbs(ctx, &short, frame, &mut out);
        tgt.push(out);
    }
    if plant {
        planting::plant(
            ctx,
            &profile.contacts,
            &times,
            &src,
            &mut tgt,
            &flags,
            looping,
        );
    }
    if !onto_itself(ctx) {
        planting::keep_above_floor(ctx, &profile.contacts, &times, &src, &mut tgt, looping);
    }
    let data = metrics::ClipData {
        name: &clip.name,
        times: &times,
        src: &src,
        tgt: &tgt,
        flags: &flags,
        twist: &twist,
        looping,
        first: usize::from(quality::reference_first_frame(&src)),
    };
    let m = metrics::measure(ctx, &profile.contacts, &profile.budgets, &data);
    let feet = feet::foot_tracks(ctx, &profile.contacts, profile.bake.rate_hz, &data);
    (
        bake::bake_clip(clip, &times, &tgt, t.skel.rest_pose()),
        m,
        feet,
    )
}

/// Target limbs of one bone whose source limb has a joint in between (a
/// leg without a knee: the barbarian's `jambe` -> `pied`, the Quaternius
/// Skeleton's `L.UpperLeg` -> `L.DownLeg`): (source limb, target limb).
fn short_limbs(ctx: &Ctx) -> Vec<metrics::Limb> {
    metrics::limbs(ctx)
        .into_iter()
        .filter(|(sp, tp)| tp.len() == 2 && sp.len() > 2)
        .collect()
}

/// Turn each short limb's one bone (by the shortest arc, in component
/// space) to point where the source limb points from its root to its end:
/// a bone that took the source's upper bone alone would lose the knee's
/// bend (the foot 1.25 limb lengths from where CMU 12_01's limb puts it).
fn aim_short_limbs(ctx: &Ctx, short: &[metrics::Limb], src: &PoseFk, out: &mut PoseFk) {
    let (s, t) = (ctx.s, ctx.t);
    for (sp, tp) in short {
        let (Some(&s0), Some(&s1), Some(&t0), Some(&t1)) =
            (sp.first(), sp.last(), tp.first(), tp.last())
        else {
            continue;
        };
        let want = s.canon(src.position(s1) - src.position(s0)).try_normalize();
        let have = t.canon(out.position(t1) - out.position(t0)).try_normalize();
        let (Some(want), Some(have)) = (want, have) else {
            continue;
        };
        let turn = t.basis.conjugate() * Quat::from_rotation_arc(have, want) * t.basis;
        let g = (turn * out.rot[t0]).normalize();
        out.set_global_rotation(t.skel, t0, g);
        out.fk_subtree(t.skel, t0);
        ctx.place_followers(out);
    }
}

/// A rig onto itself: same skeleton, same retarget pose, identity axes
/// and unit scales, every joint driven bone for bone by itself. The
/// transfer is then exact (undriven joints, IK followers, keep their
/// pose offsets, also exact), and planting could only replace the source's
/// own contact motion (its few millimetres of slide, an IK knee flip on a
/// jump): the result must reproduce the clip, so nothing is planted.
fn onto_itself(ctx: &Ctx) -> bool {
    let (s, t, setup) = (ctx.s, ctx.t, ctx.setup);
    let sc = setup.scales;
    s.skel.identity() == t.skel.identity()
        && s.pose.local == t.pose.local
        && setup
            .a
            .angle_between(ludus_anim_format::math::Quat::IDENTITY)
            < 1e-6
        && [sc.horizontal, sc.vertical, sc.motion_root]
            .iter()
            .all(|v| (v - 1.0).abs() < 1e-6)
        && setup.drives.iter().enumerate().all(|(k, d)| {
            d.and_then(|d| d.rot)
                .is_none_or(|r| r.a == k && (r.b == k || r.w == 0.0))
        })
}

/// Unwrapped twist angle of every twist plan, per frame.
fn twist_angles(ctx: &Ctx, src: &[PoseFk]) -> Vec<Vec<f32>> {
    let plans = &ctx.setup.twists;
    let mut per_plan: Vec<Vec<f32>> = plans
        .iter()
        .map(|p| {
            let pose = &ctx.s.pose.local[p.source];
            let mut a: Vec<f32> = src
                .iter()
                .map(|f| twist::twist_angle(&f.local[p.source], pose, p.axis_parent))
                .collect();
            twist::unwrap(&mut a);
            a
        })
        .collect();
    (0..src.len())
        .map(|f| per_plan.iter_mut().map(|a| a[f]).collect())
        .collect()
}

/// A clip loops (for planting) when its first and last frames agree on
/// every local rotation and on every translation below the pelvis.
fn is_loop(ctx: &Ctx, src: &[PoseFk]) -> bool {
    let (Some(a), Some(b)) = (src.first(), src.last()) else {
        return false;
    };
    if src.len() < 3 {
        return false;
    }
    let skel = ctx.s.skel;
    let pel = ctx.setup.pelvis.0;
    let tol = 1e-4 * ctx.s.height;
    (0..skel.joint_count()).all(|j| {
        let rot_ok = rotation_angle(a.local[j].rotation, b.local[j].rotation) < 1e-3;
        let moving = rig::is_ancestor_or_self(skel, j, pel);
        let tr_ok = moving || (a.local[j].translation - b.local[j].translation).length() < tol;
        rot_ok && tr_ok
    })
}

/// A diagnostic helper for callers: an error from [`retarget`] as a
/// diagnostic naming the asset file.
pub fn error_diagnostic(file: &str, e: &RetargetError) -> Diagnostic {
    Diagnostic::error("retarget", e.to_string()).file(file)
}
