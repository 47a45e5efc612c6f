//! Pelvis and motion-root placement (see `schemas/retarget.md`, "Root").
//!
//! Computed in the canonical frame (+Y up) of both sides:
//! * motion root (when declared on both sides): its displacement from the
//!   retarget pose, scaled by `motion_root_scale` horizontally and by the
//!   vertical scale vertically; its rotation follows the source delta;
//! * pelvis, horizontally: its offset from the motion root (or the
//!   component origin) in the motion root's frame, relative to the
//!   retarget pose, scaled by `horizontal_scale`;
//! * pelvis, vertically: `floor_t + vertical_scale * (y_s - floor_s)`, the
//!   source pelvis height above its floor scaled (the default scale is the
//!   hip-height ratio, so a longer-legged target stands taller), plus the
//!   clip's ground lift when contacts are planted (the source's grounded
//!   feet onto the target's ground, `crate::planting::ground_lift`).

use crate::rig::PoseFk;
use crate::setup::Setup;
use crate::side::Side;
use ludus_anim_format::math::{Quat, Vec3};

/// Target component-space placements for one frame.
pub(crate) struct RootFrame {
    pub motion_root: Option<Vec3>,
    pub pelvis: Vec3,
}

fn hscale(v: Vec3, h: f32, vert: f32) -> Vec3 {
    Vec3::new(v.x * h, v.y * vert, v.z * h)
}

pub(crate) fn root_frame(setup: &Setup, s: &Side, t: &Side, src: &PoseFk, lift: f32) -> RootFrame {
    let (ps, pt) = setup.pelvis;
    let sc = setup.scales;
    let c_s = s.canon(src.position(ps));
    let c_s_ref = s.canon(s.pose.position(ps));
    let c_t_ref = t.canon(t.pose.position(pt));
    let (mut c_t, motion_root) = match setup.motion_root {
        Some((ms, mt)) => {
            let conj = |b: Quat, q: Quat| b * q * b.conjugate();
            let m_s = s.canon(src.position(ms));
            let m_s_ref = s.canon(s.pose.position(ms));
            let rm_s = conj(s.basis, src.rot[ms]);
            let rm_s_ref = conj(s.basis, s.pose.rot[ms]);
            let rm_t_ref = conj(t.basis, t.pose.rot[mt]);
            let m_t_ref = t.canon(t.pose.position(mt));
            let rm_t = (rm_s * rm_s_ref.conjugate() * rm_t_ref).normalize();
            let m_t = m_t_ref + hscale(m_s - m_s_ref, sc.motion_root, sc.vertical);
            let r_s = rm_s.conjugate() * (c_s - m_s);
            let r_s_ref = rm_s_ref.conjugate() * (c_s_ref - m_s_ref);
            let r_t_ref = rm_t_ref.conjugate() * (c_t_ref - m_t_ref);
            let dr = rm_t_ref.conjugate() * (rm_s_ref * (r_s - r_s_ref));
            let r_t = r_t_ref + hscale(dr, sc.horizontal, sc.vertical);
            (m_t + rm_t * r_t, Some(t.basis.conjugate() * m_t))
        }
        None => (
            c_t_ref + hscale(c_s - c_s_ref, sc.horizontal, sc.vertical),
            None,
        ),
    };
    c_t.y = t.floor + sc.vertical * (c_s.y - s.floor) + lift;
    RootFrame {
        motion_root,
        pelvis: t.basis.conjugate() * c_t,
    }
}
