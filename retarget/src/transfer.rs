//! Per-frame rotation and translation transfer onto the target.
//!
//! For a driven target joint `k` fed by source joints `a`, `b` (weight `w`):
//!
//! ```text
//! D_j  = A * (G_j(t) * G_j(pose)^-1) * A^-1          component-space delta of source joint j
//! G_k  = slerp(D_a, D_b, w) * G_k(pose)              target component rotation
//! q_k  = G_parent(k)^-1 * G_k                        target local rotation
//! ```
//!
//! `G` are rotation-only component values (products of local rotations),
//! `A = B_t^-1 * B_s` maps source to target component axes through the
//! declared bases. Because the delta is taken in component space, bone
//! axis conventions (Blender +Y bones, Maya +X bones, any roll) cancel: only
//! the retarget poses must agree. Adapted idea: Unreal's IK Retargeter FK
//! chains copy global rotation offsets from the retarget pose the same
//! way; the math here is written from the formulas above.

use crate::plan::{Delta, Drive};
use crate::profile::TranslationMode;
use crate::rig::PoseFk;
use crate::root::root_frame;
use crate::setup::Setup;
use crate::side::Side;
use ludus_anim_format::math::{slerp_shortest, Quat, Vec3};

#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub setup: &'a Setup,
    pub s: &'a Side<'a>,
    pub t: &'a Side<'a>,
    /// Per clip: vertical offset of the target pelvis (canonical, m) that
    /// stands the source's grounded feet on the target's ground
    /// ([`crate::planting::ground_lift`]); 0 maps the declared floors.
    pub lift: f32,
}

impl Ctx<'_> {
    fn delta(&self, src: &PoseFk, j: usize) -> Quat {
        let a = self.setup.a;
        (a * (src.rot[j] * self.s.pose.rot[j].conjugate()) * a.conjugate()).normalize()
    }

    fn blended(&self, src: &PoseFk, d: Delta) -> Quat {
        let qa = self.delta(src, d.a);
        if d.a == d.b || d.w <= 0.0 {
            return qa;
        }
        slerp_shortest(qa, self.delta(src, d.b), d.w)
    }

    /// Fill `out` with the target pose for one source frame. `twist[i]` is
    /// the unwrapped angle of twist plan `i` at this frame.
    pub fn frame(&self, src: &PoseFk, twist: &[f32], out: &mut PoseFk) {
        let (t, setup) = (self.t, self.setup);
        let root = root_frame(setup, self.s, t, src, self.lift);
        for k in 0..t.skel.joint_count() {
            out.local[k] = t.pose.local[k];
            if let Some(d) = setup.drives[k] {
                if let Some(delta) = d.rot {
                    let g = self.blended(src, delta) * t.pose.rot[k];
                    out.set_global_rotation(t.skel, k, g);
                }
                out.local[k].translation = self.translation(src, out, k, &d);
                let (ss, sp) = (src.local[d.near].scale, self.s.pose.local[d.near].scale);
                out.local[k].scale = t.pose.local[k].scale * ss / sp;
            }
            for (plan, angle) in setup.twists.iter().zip(twist) {
                for &(j, axis, w) in &plan.targets {
                    if j == k {
                        let r = Quat::from_axis_angle(axis, w * angle);
                        out.local[k].rotation = (out.local[k].rotation * r).normalize();
                    }
                }
            }
            if Some(k) == setup.motion_root.map(|m| m.1) {
                if let Some(p) = root.motion_root {
                    out.set_position(t.skel, k, p);
                }
            }
            if k == setup.pelvis.1 {
                out.set_position(t.skel, k, root.pelvis);
            }
            out.fk_joint(t.skel, k);
        }
        self.place_followers(out);
    }

    /// Followers keep their retarget-pose offset from the joint they
    /// follow; their rotation is the driven one, or rigid with the
    /// followed joint.
    pub fn place_followers(&self, out: &mut PoseFk) {
        let t = self.t;
        for f in &self.setup.followers {
            let pos = out.affine[f.follow].transform_point3(f.offset);
            if self.setup.drives[f.joint].and_then(|d| d.rot).is_none() {
                let g = out.rot[f.follow] * f.rot_offset;
                out.set_global_rotation(t.skel, f.joint, g);
            }
            out.set_position(t.skel, f.joint, pos);
            out.fk_subtree(t.skel, f.joint);
        }
    }

    fn translation(&self, src: &PoseFk, out: &PoseFk, k: usize, d: &Drive) -> Vec3 {
        let (s, t) = (self.s, self.t);
        let pose_t = t.pose.local[k].translation;
        let j = d.near;
        let lin_s = s.skel.parent(j).map(|p| s.pose.affine[p].matrix3);
        let lin_t = t.skel.parent(k).map(|p| t.pose.affine[p].matrix3);
        let to_target_local = |v_s: Vec3, scale: f32| {
            let v_t = self.setup.a * v_s * scale;
            match lin_t {
                Some(m) => m.inverse().mul_vec3(v_t),
                None => v_t,
            }
        };
        let to_comp = |v: Vec3| match lin_s {
            Some(m) => m.mul_vec3(v),
            None => v,
        };
        let _ = out;
        match d.trans {
            TranslationMode::None => pose_t,
            TranslationMode::GloballyScaled => {
                let dv = to_comp(src.local[j].translation - s.pose.local[j].translation);
                pose_t + to_target_local(dv, self.setup.scales.vertical)
            }
            TranslationMode::Absolute => to_target_local(to_comp(src.local[j].translation), 1.0),
            TranslationMode::Stretch => pose_t * self.stretch(src, d.src_chain),
        }
    }

    /// Current over retarget-pose length of a source chain.
    fn stretch(&self, src: &PoseFk, chain: usize) -> f32 {
        let Some(c) = self.setup.src_chains.get(chain) else {
            return 1.0;
        };
        let len = |p: &PoseFk| {
            c.joints
                .windows(2)
                .map(|w| (p.position(w[1]) - p.position(w[0])).length())
                .sum::<f32>()
        };
        let r = len(&self.s.pose);
        if r > 1e-9 {
            len(src) / r
        } else {
            1.0
        }
    }
}
