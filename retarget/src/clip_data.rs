//! One retargeted clip as every metric reads it: the source and result
//! poses per frame, the contact flags and twists (its own module so the
//! metric modules depend on it and not on each other).

use crate::rig::PoseFk;

pub(crate) struct ClipData<'a> {
    pub name: &'a str,
    pub times: &'a [f32],
    pub src: &'a [PoseFk],
    pub tgt: &'a [PoseFk],
    pub flags: &'a [Vec<bool>],
    pub twist: &'a [Vec<f32>],
    pub looping: bool,
    /// First frame the per-frame checks read (1 after a reference frame).
    pub first: usize,
}
