//! The optional JSET section: cooked masks and LOD levels, checked at load
//! so a game can hand a mask's words to `Request::Mask` and index the
//! skeleton with a remap as they are.

use super::bytes::{Bytes, Strings};
use super::{invalid, PackageError};
use crate::skeleton::NO_PARENT;
use ludus_anim_format::joint_sets::{
    contains, words, JointSets, LodLevel, Mask, SkinRemap, JSET_HEADER_SIZE,
};
use ludus_anim_format::skin::SkinBinding;

/// Parse and validate: the joint count is the skeleton's; names unique;
/// weights finite in [0, 1]; the write set is exactly the nonzero weights,
/// the sample set holds it and is ancestor-closed; ranges are the nonzero
/// runs; a level's retained set is ancestor-closed and holds every root;
/// a level remaps every skin of SKIN, each entry to a retained joint that
/// is the palette joint or one of its ancestors, with finite offsets.
pub(super) fn parse_joint_sets<'a>(
    sec: Bytes<'a>,
    strings: &Strings<'a>,
    parents: &[u32],
    skins: &[SkinBinding<'a>],
) -> Result<JointSets<'a>, PackageError> {
    let n = parents.len();
    if sec.u32(0)? as usize != n || sec.u32(12)? != 0 {
        return Err(invalid(
            "JSET joint count is not the skeleton's (or reserved field not zero)",
        ));
    }
    let (masks, levels) = (sec.u32(4)?, sec.u32(8)?);
    let nw = words(n) as u64;
    let mut at = JSET_HEADER_SIZE as u64;
    let bits = |at: &mut u64| -> Result<Vec<u64>, PackageError> {
        // The words must fit before anything is allocated for them.
        sec.range(*at, nw * 8)?;
        let v = (0..nw).map(|k| sec.u64(*at + 8 * k)).collect();
        *at += nw * 8;
        v
    };
    let closed = |set: &[u64]| {
        (0..n).all(|j| {
            !contains(set, j) || parents[j] == NO_PARENT || contains(set, parents[j] as usize)
        })
    };
    let tail_clear =
        |set: &[u64]| n.is_multiple_of(64) || set.last().is_none_or(|w| w >> (n % 64) == 0);
    let mut out = JointSets::default();
    for m in 0..masks {
        let name = strings.read(&sec, at, "mask name")?;
        if name.is_empty() || out.masks.iter().any(|o: &Mask| o.name == name) {
            return Err(invalid(format!(
                "mask {m}: name '{name}' is empty or repeated"
            )));
        }
        let ranges = sec.u32(at + 4)? as u64;
        at += 8;
        sec.range(at, n as u64 * 4)?;
        let weights: Vec<f32> = (0..n as u64)
            .map(|j| sec.f32(at + 4 * j))
            .collect::<Result<_, _>>()?;
        at += n as u64 * 4;
        let write = bits(&mut at)?;
        let sample = bits(&mut at)?;
        sec.range(at, ranges * 8)?;
        let ranges: Vec<[u32; 2]> = (0..ranges)
            .map(|r| Ok([sec.u32(at + 8 * r)?, sec.u32(at + 8 * r + 4)?]))
            .collect::<Result<_, PackageError>>()?;
        at += ranges.len() as u64 * 8;
        let weights_ok = weights.iter().enumerate().all(|(j, w)| {
            w.is_finite() && (0.0..=1.0).contains(w) && (*w > 0.0) == contains(&write, j)
        });
        let sample_ok = (0..n).all(|j| !contains(&write, j) || contains(&sample, j))
            && closed(&sample)
            && tail_clear(&sample)
            && tail_clear(&write);
        if !weights_ok
            || !sample_ok
            || ranges != ludus_anim_format::joint_sets::nonzero_ranges(&weights)
        {
            return Err(invalid(format!(
                "mask '{name}': weights, write set, sample set and ranges disagree"
            )));
        }
        out.masks.push(Mask {
            name,
            weights,
            write,
            sample,
            ranges,
        });
    }
    for l in 0..levels {
        let retained = bits(&mut at)?;
        let roots = (0..n).all(|j| parents[j] != NO_PARENT || contains(&retained, j));
        if !closed(&retained) || !tail_clear(&retained) || !roots {
            return Err(invalid(format!(
                "LOD level {l}: the retained joints are not ancestor-closed"
            )));
        }
        if sec.u32(at)? as usize != skins.len() {
            return Err(invalid(format!(
                "LOD level {l}: remaps a different number of skins than SKIN holds"
            )));
        }
        at += 4;
        let mut remaps = Vec::with_capacity(skins.len());
        for skin in skins {
            let count = sec.u32(at)? as usize;
            if count != skin.joints.len() {
                return Err(invalid(format!(
                    "LOD level {l}: skin '{}' remap has {count} entries, its palette {}",
                    skin.name,
                    skin.joints.len()
                )));
            }
            at += 4;
            sec.range(at, count as u64 * 52)?;
            let mut remap = SkinRemap {
                joints: Vec::with_capacity(count),
                offsets: Vec::with_capacity(count),
            };
            for (i, &from) in skin.joints.iter().enumerate() {
                let to = sec.u32(at)?;
                let mut o = [0.0f32; 12];
                for (k, v) in o.iter_mut().enumerate() {
                    *v = sec.f32(at + 4 + 4 * k as u64)?;
                }
                at += 52;
                let ok = (to as usize) < n
                    && contains(&retained, to as usize)
                    && is_self_or_ancestor(parents, to, from)
                    && o.iter().all(|v| v.is_finite());
                if !ok {
                    return Err(invalid(format!(
                        "LOD level {l}: skin '{}' entry {i} is not remapped to a retained ancestor",
                        skin.name
                    )));
                }
                remap.joints.push(to);
                remap.offsets.push(o);
            }
            remaps.push(remap);
        }
        out.lods.push(LodLevel {
            retained,
            skins: remaps,
        });
    }
    if at != sec.b.len() as u64 {
        return Err(invalid(format!(
            "JSET section holds {} bytes, its sets {at}",
            sec.b.len()
        )));
    }
    Ok(out)
}

/// Whether `a` is `j` or one of its ancestors (parents come first, so the
/// walk ends).
fn is_self_or_ancestor(parents: &[u32], a: u32, mut j: u32) -> bool {
    loop {
        if j == a {
            return true;
        }
        match parents.get(j as usize) {
            Some(&p) if p != NO_PARENT && p < j => j = p,
            _ => return false,
        }
    }
}
