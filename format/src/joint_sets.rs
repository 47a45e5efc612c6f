//! Cooked masks and LOD levels as a package stores them (the optional
//! `JSET` section, `schemas/package-format.md`), reached by a game through
//! `Package::bindings().joint_sets`.
//!
//! Three joint sets stay distinct (the seed's subskeletal design): the
//! joints a layer writes (`weights[j] > 0`, [`Mask::write`]), the joints
//! the evaluation must sample ([`Mask::sample`]: the written joints and
//! all their ancestors, which FK needs to place them; an ancestor only
//! read keeps weight 0), and the joints component-space work reads (the
//! same ancestor-closed set). A game decodes with
//! `player.decode(Request::Mask(&mask.sample), pose)` and blends joint
//! `j` by `mask.weights[j]`; an LOD level with
//! `Request::Mask(&level.retained)`, skinning palette entry `i` of skin
//! `s` with `component[remap.joints[i]] * remap.offsets[i] *
//! inverse_bind[i]`.

/// A column-major 3x4 affine matrix, the SKIN section's `Affine34`
/// (spelled out: `skin` names this module's types, so this one does not
/// import it).
pub type Affine34 = [f32; 12];

/// Bytes of the JSET header: joint count u32, mask count u32, LOD level
/// count u32, reserved u32.
pub const JSET_HEADER_SIZE: usize = 16;

/// The identity [`Affine34`].
pub const AFFINE_IDENTITY: Affine34 = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0];

/// One cooked blend mask.
#[derive(Clone, Debug, PartialEq)]
pub struct Mask<'a> {
    pub name: &'a str,
    /// Blend weight per joint, in [0, 1].
    pub weights: Vec<f32>,
    /// Joints with a nonzero weight, as `Request::Mask` bit words.
    pub write: Vec<u64>,
    /// The ancestor-closed sample set (write set and every ancestor).
    pub sample: Vec<u64>,
    /// Maximal runs `[start, end)` of consecutive joints with a nonzero
    /// weight (a subtree is one run in parent-before-child order).
    pub ranges: Vec<[u32; 2]>,
}

/// One LOD level.
#[derive(Clone, Debug, PartialEq)]
pub struct LodLevel {
    /// Retained joints (ancestor-closed), as `Request::Mask` bit words.
    pub retained: Vec<u64>,
    /// Per skin of the package's SKIN section, in its order.
    pub skins: Vec<SkinRemap>,
}

/// A skin's palette at one LOD level: each entry's joint (itself when
/// retained, else its nearest retained ancestor) and the removed joints'
/// rest-pose offset from that ancestor (identity when retained).
#[derive(Clone, Debug, PartialEq)]
pub struct SkinRemap {
    pub joints: Vec<u32>,
    pub offsets: Vec<Affine34>,
}

/// Every mask and LOD level of a package (empty without a JSET section).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointSets<'a> {
    pub masks: Vec<Mask<'a>>,
    pub lods: Vec<LodLevel>,
}

/// Words of a joint bit set over `joints` joints.
pub fn words(joints: usize) -> usize {
    joints.div_ceil(64)
}

/// Whether bit `j` of `set` is set.
pub fn contains(set: &[u64], j: usize) -> bool {
    set.get(j / 64).is_some_and(|w| w >> (j % 64) & 1 == 1)
}

/// The joints of `set` in increasing order.
pub fn members(set: &[u64]) -> impl Iterator<Item = usize> + '_ {
    set.iter().enumerate().flat_map(|(w, &bits)| {
        (0..64)
            .filter(move |b| bits >> b & 1 == 1)
            .map(move |b| w * 64 + b)
    })
}

/// The maximal runs of nonzero weights.
pub fn nonzero_ranges(weights: &[f32]) -> Vec<[u32; 2]> {
    let mut out: Vec<[u32; 2]> = Vec::new();
    for (j, &w) in weights.iter().enumerate() {
        if w > 0.0 {
            match out.last_mut() {
                Some(r) if r[1] == j as u32 => r[1] += 1,
                _ => out.push([j as u32, j as u32 + 1]),
            }
        }
    }
    out
}

/// Serialize a JSET section over `joint_count` joints (`name` gives a
/// mask name's string index). Layout: header; per mask: name u32, range
/// count u32, weights f32 x joints, write and sample words u64 x words
/// each, ranges 2 x u32 each; per level: retained words, skin count u32,
/// per skin: palette count u32, then joint u32 and offset 12 x f32 per
/// entry. Little-endian throughout.
pub fn write_section(
    sets: &JointSets<'_>,
    joint_count: usize,
    mut name: impl FnMut(&str) -> u32,
) -> Vec<u8> {
    let mut b = Vec::new();
    let put = |b: &mut Vec<u8>, v: u32| b.extend_from_slice(&v.to_le_bytes());
    put(&mut b, joint_count as u32);
    put(&mut b, sets.masks.len() as u32);
    put(&mut b, sets.lods.len() as u32);
    put(&mut b, 0);
    for m in &sets.masks {
        put(&mut b, name(m.name));
        put(&mut b, m.ranges.len() as u32);
        m.weights
            .iter()
            .for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
        for w in m.write.iter().chain(&m.sample) {
            b.extend_from_slice(&w.to_le_bytes());
        }
        m.ranges.iter().flatten().for_each(|&v| put(&mut b, v));
    }
    for l in &sets.lods {
        l.retained
            .iter()
            .for_each(|w| b.extend_from_slice(&w.to_le_bytes()));
        put(&mut b, l.skins.len() as u32);
        for s in &l.skins {
            put(&mut b, s.joints.len() as u32);
            for (j, o) in s.joints.iter().zip(&s.offsets) {
                put(&mut b, *j);
                o.iter().for_each(|v| b.extend_from_slice(&v.to_le_bytes()));
            }
        }
    }
    b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bit_sets_and_ranges() {
        let mut set = vec![0u64; words(70)];
        for j in [0, 3, 64, 69] {
            set[j / 64] |= 1 << (j % 64);
        }
        assert_eq!(members(&set).collect::<Vec<_>>(), [0, 3, 64, 69]);
        assert!(contains(&set, 69) && !contains(&set, 70));
        assert_eq!(
            nonzero_ranges(&[0.0, 0.5, 1.0, 0.0, 1.0]),
            vec![[1, 3], [4, 5]]
        );
    }
}
